// perf_estimate.cpp - estimate(): one training iteration's memory, time, utilisation and cost, composed from its
// parts, each a function that returns what it found: a layer's cost, each pipeline stage's, the pipeline's
// transfers, data parallelism, the tied embedding, the optimizer step and the pipeline bubble. The physics of a
// layer's kernels is perf_time.cpp's; collectives are collectives.h's.
//
// Sections: the iteration's shape; per layer; per stage; pipeline transfers; data parallel; tied embedding and
// optimizer; the bubble; estimate().
#include "perf/collectives.h"
#include "perf/perf.h"
#include "perf/perf_time_parts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace mc::perf {
namespace {

// ---- the iteration's shape ----

// What every part reads: the config, the cluster as the stack runs it (its achieved large-GEMM fraction
// replaces the GPU's: same silicon, other kernels and clocks), its network, and the sizes of one micro-batch.
struct Shape {
  const Config& cfg;
  ClusterSpec c;
  Topology topo;
  double bytes = 2, peak = 0;  // bytes of an element in the training precision; the GPU's peak FLOP/s in it
  double b = 1, s = 1, h = 1;  // micro-batch, sequence, hidden
  // Context parallelism: each rank carries s / cp tokens of each sequence through the layers, the output
  // layer and the pipeline (sq); only the attention sees all s keys (layer_times).
  double cp = 1, sq = 1;
  int micro = 1, v = 1, p = 1;  // micro-batches, model chunks per stage, stages
  int tp_per_node = 1;
};

ClusterSpec as_the_stack_runs_it(const Config& cfg) {
  ClusterSpec c = cfg.cluster;
  if (cfg.software.gemm_fraction > 0) c.matmul_peak_fraction = cfg.software.gemm_fraction;
  return c;
}

Shape shape_of(const Config& cfg, int stages) {
  const ModelSpec& m = cfg.model;
  const Layout& L = cfg.layout;
  Shape x{cfg, as_the_stack_runs_it(cfg), Topology{}};
  x.bytes = full_width(cfg.training.precision) ? 4 : 2;
  x.peak = detail::peak_for(x.c, cfg.training.precision);
  x.b = L.micro_batch, x.s = m.seq_len, x.h = m.hidden;
  x.cp = std::max(1, L.cp), x.sq = x.s / x.cp;
  x.micro = L.micro_batches();
  x.v = L.schedule == PipeSchedule::interleaved ? std::max(1, L.virtual_stages) : 1;
  x.p = stages;
  x.topo = topology_of(x.c);
  x.topo.gather_trees = cfg.software.nccl_version >= 22300;
  x.tp_per_node = std::min(L.tp, x.c.gpus_per_node);
  return x;
}

// ---- per layer, per micro-batch ----

struct LayerCost {
  double gemm_efficiency = 0;
  double fwd_compute = 0, bwd_compute = 0;                // the backward's with recompute and gradient accumulation
  double tp_fwd = 0, tp_bwd = 0, cp_fwd = 0, cp_bwd = 0;  // the layer's own collectives, both blocking
  double ckpt_fwd = 0, ckpt_bwd = 0;                      // activation checkpoints to the host and back
  double grad_add_per_param_s = 0;                        // accumulating one parameter's gradient
  double hbm_rate = 0, host_Bps = 0;                      // memory-bound kernels' HBM rate; the host link's
  std::string tp_algorithm = "none";
  double coll_fwd() const { return tp_fwd + cp_fwd; }
  double coll_bwd() const { return tp_bwd + cp_bwd; }
  double forward() const { return fwd_compute + coll_fwd() + ckpt_fwd; }
  double backward() const { return bwd_compute + coll_bwd() + ckpt_bwd; }
};

LayerCost layer_cost(const Shape& x) {
  const Config& cfg = x.cfg;
  const ModelSpec& m = cfg.model;
  const Layout& L = cfg.layout;
  const Software& sw = cfg.software;
  const ClusterSpec& c = x.c;
  const double b = x.b, s = x.s, h = x.h, bytes = x.bytes;
  LayerCost l;
  const detail::LayerTimes lt = detail::layer_times(cfg, c);
  l.gemm_efficiency = lt.gemm_efficiency;
  l.fwd_compute = lt.gemm_fwd + lt.attn_core_fwd + lt.elementwise_fwd + lt.attn_elementwise_fwd;
  // Backward: two GEMMs per forward GEMM (input and weight gradients) and about twice the element-wise
  // traffic (Narayanan et al. 2021, Sec. 5.1: backward = 2 x forward).
  l.bwd_compute = 2 * l.fwd_compute;
  // FlashAttention's backward recomputes the scores from Q and K: five products where the forward has two,
  // 2.5 x its FLOPs (Dao 2023, Sec. 4.1), not 2 x.
  if (cfg.software.flash_attention) l.bwd_compute += 0.5 * lt.attn_core_fwd;
  if (L.recompute == Recompute::full) l.bwd_compute += l.fwd_compute;
  if (L.recompute == Recompute::selective)
    l.bwd_compute += cfg.software.selective_every_second_matmul ? lt.every_second_matmul_fwd + lt.elementwise_fwd
                                                                : lt.attn_core_fwd + lt.attn_elementwise_fwd;

  // Tensor-parallel communication: 2 all-reduces of b s h in the forward pass, 2 in the backward, 2 more
  // when the forward is recomputed (comm_volume.h); with sequence parallelism each all-reduce becomes a
  // reduce-scatter + all-gather of the same total volume (Korthikanti et al. 2022, Sec. 4.2.2).
  const Collective tp_ar = all_reduce(x.topo, b * x.sq * h * bytes, L.tp, x.tp_per_node, 1);
  l.tp_algorithm = L.tp > 1 ? tp_ar.algorithm : "none";
  l.tp_fwd = 2 * tp_ar.time_s;
  l.tp_bwd = 2 * tp_ar.time_s + (L.recompute == Recompute::full ? l.tp_fwd : 0);

  // Context-parallel communication (Llama 3, Sec. 3.3.2): before each layer's attention the cp ranks
  // all-gather the keys and the values, b s kv_heads d / t elements each whole, "exposed in the critical
  // path" (not overlapped). The backward gathers them again and reduce-scatters their gradients
  // (TransformerEngine's AttnFuncWithCPAndKVAllGather, which cites that section: its backward calls
  // gather_along_first_dim on k and v, then reduce-scatters dk and dv); a recomputed forward gathers once
  // more. Ranks go tp, cp, ...: a cp group's ranks are tp apart, cp_per_node of them on one node.
  if (L.cp > 1) {
    const double kv_bytes = b * s * m.kv() * (h / m.heads) / L.tp * bytes;
    const int cp_per_node = std::max(1, std::min(L.cp, c.gpus_per_node / std::min(c.gpus_per_node, L.tp)));
    const int cp_groups_per_node = std::max(1, c.gpus_per_node / cp_per_node);
    const double ag = all_gather(x.topo, kv_bytes, L.cp, cp_per_node, cp_groups_per_node).time_s;
    const double rs = reduce_scatter(x.topo, kv_bytes, L.cp, cp_per_node, cp_groups_per_node).time_s;
    l.cp_fwd = 2 * ag;
    l.cp_bwd = 2 * ag + 2 * rs + (L.recompute == Recompute::full ? l.cp_fwd : 0);
  }

  // Adding each micro-batch's weight gradient into the ones accumulated over the iteration: a memory-bound
  // pass over the layer's parameters (autograd's param.grad += g, or Megatron-LM's main_grad hook of 2021,
  // software.json grad_accumulation_bytes) in every micro-batch but the first, charged to the backward
  // as its average over the m micro-batches. Stacks that fuse it into the weight-gradient GEMM pay nothing.
  // Megatron-LM 2021's hook adds the first one too, into the buffer zero_grad_buffer cleared
  // (megatron/model/distributed.py at aed2f75: grad_accumulation_every_microbatch): all m.
  const int micro = x.micro;
  const double accumulate_share = sw.grad_accumulation_every_microbatch ? 1.0
                                  : micro > 1                           ? double(micro - 1) / micro
                                                                        : 0.0;
  l.hbm_rate = c.hbm_bandwidth_GBps * 1e9 * c.elementwise_hbm_fraction;
  l.grad_add_per_param_s = accumulate_share * sw.grad_accumulation_bytes / l.hbm_rate;
  l.bwd_compute += l.grad_add_per_param_s * layer_params_bytes(m, L.tp, 1.0);

  // Activation checkpoints moved off the GPU (full recompute only; layout_problems): DeepSpeed's
  // checkpointing copies each layer's input to the host with a blocking `.to(device)` in the forward and
  // back before the recompute (deepspeed/runtime/activation_checkpointing/checkpointing.py, copy_to_device),
  // so the GPU waits out both copies; with partition-activations each tensor rank moves 1/t of it and the
  // ranks all-gather the whole before the recompute (Rajbhandari et al. 2020, Sec. 6.1, Pa and Pa+cpu).
  // A copy runs at the GPU's host link, or at its share of the node's memory bandwidth if that is less.
  l.host_Bps = host_rate_Bps(c);
  if (L.recompute == Recompute::full && (L.offload_activations || L.partition_activations)) {
    const double act_scale = full_width(cfg.training.precision) ? 2.0 : 1.0;
    const double whole =
        act_scale * activation_bytes_per_layer(m, b, L.tp, L.sequence_parallel, Recompute::full) / x.cp;
    const bool split = L.partition_activations && !L.sequence_parallel && L.tp > 1;
    const double kept = split ? whole / L.tp : whole;
    if (L.offload_activations && l.host_Bps > 0) l.ckpt_fwd = kept / l.host_Bps, l.ckpt_bwd = kept / l.host_Bps;
    if (split) l.ckpt_bwd += all_gather(topology_of(c), whole, L.tp, std::min(L.tp, c.gpus_per_node), 1).time_s;
  }
  return l;
}

// ---- per stage, per micro-batch: its layers; the last stage also runs the logits ----

struct StageCost {
  double logits_fwd = 0, logits_grad_add = 0;  // the output layer and its loss; its weight gradient's accumulation
  std::vector<double> f, b;                    // per rank, one micro-batch: the sum of its chunks
  double logits() const { return 3 * logits_fwd + logits_grad_add; }
};

// Each virtual stage (model chunk) by its own layers (e.chunk_layers, chunk_forward_s, chunk_backward_s); the
// output layer rides on the last one. A rank's work per micro-batch is the sum of its chunks.
StageCost stage_cost(const Shape& x, const LayerCost& l, Estimate& e) {
  const Config& cfg = x.cfg;
  const ModelSpec& m = cfg.model;
  const Layout& L = cfg.layout;
  const Software& sw = cfg.software;
  const ClusterSpec& c = x.c;
  StageCost st;
  // The loss over the vocabulary: memory-bound passes over the b s V / t logits, a third of them charged to
  // the forward and two to the backward. Fused, three passes in the training precision (read + write, 9 x
  // its bytes an element); Megatron-LM casts the logits to fp32 and runs mpu/cross_entropy.py's max,
  // subtract, exp, sum and divide, then multiplies and casts back in the backward (software.json
  // loss_bytes_per_logit: 52 bytes an element).
  const double loss_bytes = sw.loss_bytes_per_logit > 0 ? sw.loss_bytes_per_logit : 9 * x.bytes;
  st.logits_fwd =
      detail::gemm_time_s(c, x.peak, 1, x.b * x.sq, double(m.vocab) / L.tp, x.h, x.bytes) +
      loss_bytes / 3 * x.b * x.sq * double(m.vocab) / L.tp / (c.hbm_bandwidth_GBps * 1e9 * c.elementwise_hbm_fraction);
  // The output layer's weight gradient (vocab x h / tp) is accumulated the same way on the last stage.
  st.logits_grad_add = l.grad_add_per_param_s * double(m.vocab) * x.h / L.tp;
  e.chunk_layers = chunk_layers(m, L);
  const int vp = int(e.chunk_layers.size());
  e.chunk_forward_s.assign(size_t(vp), 0.0);
  e.chunk_backward_s.assign(size_t(vp), 0.0);
  st.f.assign(size_t(x.p), 0.0);
  st.b.assign(size_t(x.p), 0.0);
  for (int k = 0; k < vp; ++k) {
    const double n = e.chunk_layers[size_t(k)];
    const bool last = k == vp - 1;
    e.chunk_forward_s[size_t(k)] = n * l.forward() + (last ? st.logits_fwd : 0);
    e.chunk_backward_s[size_t(k)] = n * l.backward() + (last ? 2 * st.logits_fwd + st.logits_grad_add : 0);
    st.f[size_t(k % x.p)] += e.chunk_forward_s[size_t(k)];
    st.b[size_t(k % x.p)] += e.chunk_backward_s[size_t(k)];
  }
  return st;
}

// ---- pipeline transfers ----

struct PipeTransfers {
  double p2p = 0, back = 0;  // one boundary's forward and backward transfer, each micro-batch
  // With blocking, paired transfers (DeepSpeed's pipeline engine) each stage waits out its own: a middle
  // stage receives and sends both ways (four per micro-batch), the first and the last stage two (the
  // first has no previous stage, the last no next one). The stage that sets the pace is then the one whose
  // compute plus its own transfers is longest: with the logits on it, often the last, at two transfers
  // (DeepSpeed's TrainSchedule, deepspeed/runtime/pipe/schedule.py; the simulator runs it the same way).
  // Non-blocking sends (Megatron-LM) overlap one direction and are charged the same on every stage.
  bool paired = false;
  double own(int i, int p) const {
    if (!paired) return 0.0;
    return i == 0 || i == p - 1 ? 0.5 * (p2p + back) : p2p + back;
  }
};

// Pipeline point-to-point: b s h per boundary (s b h / t each over t NICs with scatter/gather,
// Narayanan et al. 2021 Sec. 4.1), over the InfiniBand when the next stage lives on another node.
// The backward sends the activations' gradients the same way, or whole from every tensor rank
// (DeepSpeed's engine); a blocking send and a blocking receive make both stages wait out the transfer.
PipeTransfers pipeline_transfers(const Shape& x) {
  const Layout& L = x.cfg.layout;
  const Software& sw = x.cfg.software;
  const ClusterSpec& c = x.c;
  PipeTransfers t;
  t.paired = sw.pipeline_blocking_p2p && L.pp > 1 && x.v == 1;
  if (L.pp <= 1) return t;
  const bool sg = L.scatter_gather && sw.pipeline_scatter_gather && L.tp > 1;
  const double whole = pp_boundary_bytes(x.b, x.sq, x.h, x.bytes);
  // Neighbouring stages are tp cp dp GPUs apart in Megatron-LM's order, tp cp in Llama 3's.
  const long long apart = (long long)L.tp * L.cp * (sw.pipeline_inside_data_parallel ? 1 : L.dp);
  const bool cross_node = apart >= c.gpus_per_node || c.gpus_per_node == 1;
  const bool bc = sw.pipeline_p2p_broadcast;
  // Across an oversubscribed fat-tree: once the job spans more than one leaf, the sends of a stage whose
  // partners are `apart` GPUs on leave their leaf from as many of its nodes as that span covers (all of a
  // leaf's when a stage fills whole leaves, Megatron-LM's order on a large machine; one pipeline's stage,
  // one node or so, in Llama 3's), through uplinks worth leaf_nodes / oversubscription nodes: each sends
  // at that share of its line rate. The simulator's flows meet the same uplinks (engine/sim topology).
  Topology send_topo = x.topo;
  if (cross_node && x.topo.oversubscription > 1 && c.nodes > x.topo.leaf_nodes) {
    const double out = std::min(std::max(1.0, double(apart) / c.gpus_per_node), double(x.topo.leaf_nodes));
    const double slow = std::max(1.0, x.topo.oversubscription * out / x.topo.leaf_nodes);
    send_topo.node_p2p_Bps /= slow, send_topo.node_inter_Bps /= slow;
  }
  t.p2p = point_to_point(send_topo, whole / (sg ? L.tp : 1), cross_node, bc).time_s;
  if (sg) t.p2p += all_gather(x.topo, whole, L.tp, x.tp_per_node, 1).time_s;
  t.back = sw.pipeline_full_gradients ? point_to_point(send_topo, whole, cross_node, bc).time_s : t.p2p;
  if (sw.pipeline_blocking_p2p) t.p2p *= 2, t.back *= 2;
  return t;
}

// The stage that sets the pace: the longest compute, with its own transfers when they are paired.
int pacing_stage(const StageCost& st, const PipeTransfers& t, int p) {
  int slow = 0;
  for (int i = 1; i < p; ++i)
    if (st.f[size_t(i)] + st.b[size_t(i)] + t.own(i, p) > st.f[size_t(slow)] + st.b[size_t(slow)] + t.own(slow, p))
      slow = i;
  return slow;
}

// ---- data parallel: gradients of the stage shard (fp16, or fp32 in fp32 training) ----

struct DataParallel {
  double time = 0, exposed = 0;  // the collectives' time, and what of it is not hidden under the backward
  std::string algorithm = "none";
  double zero3_collectives = 0;  // ZeRO-3's gathers and reduce-scatters a step
  std::vector<std::string> notes;
};

// The pacing stage's gradients over the dp x cp ranks of its shard (`shard_params` parameters), and under
// ZeRO-3 every micro-batch's gathers: `f`, `b` its forward and backward of one micro-batch, `layers` its
// layers.
DataParallel data_parallel(const Shape& x, double shard_params, double f, double b, double layers) {
  const Config& cfg = x.cfg;
  const ModelSpec& m = cfg.model;
  const Layout& L = cfg.layout;
  const Software& sw = cfg.software;
  const ClusterSpec& c = x.c;
  const Topology& topo = x.topo;
  const double bytes = x.bytes;
  const int micro = x.micro;
  DataParallel d;
  const bool overlap = L.overlap_dp_comm || sw.dp_overlap;
  // The gradient group is the dp x cp ranks of one shard (Layout::dp_group), consecutive after tp.
  // How many of them share a node: after tp in Megatron-LM's order (cp, then dp ranks tp apart); in Llama
  // 3's the cp ranks tp apart, the dp ranks a whole pipeline (tp cp pp) apart.
  const int G = L.dp_group();
  if (G <= 1) return d;
  const int gpn = c.gpus_per_node;
  int dp_per_node = std::max(1, std::min(G, gpn / std::min(gpn, L.tp)));
  if (sw.pipeline_inside_data_parallel) {
    const long long pipe = (long long)L.tp * L.cp * L.pp;
    dp_per_node = std::max(1, std::min(L.cp, gpn / std::min(gpn, L.tp))) *
                  (pipe < gpn ? std::max(1, int(std::min<long long>(L.dp, gpn / pipe))) : 1);
  }
  const int groups_per_node = std::max(1, c.gpus_per_node / (dp_per_node));
  // Llama 3's order spreads the group: consecutive dp ranks a pipeline apart, over this many nodes.
  long long span = 0;
  if (sw.pipeline_inside_data_parallel) {
    const long long pipe = (long long)L.tp * L.cp * L.pp;
    if (pipe >= gpn) span = (L.dp - 1) * (pipe / gpn) + (L.tp * (long long)L.cp + gpn - 1) / gpn;
  }
  Collective g = all_reduce(topo, shard_params * bytes, G, dp_per_node, groups_per_node, span);
  // Sharded (ZeRO-1/2, Megatron's distributed optimizer, FSDP's SHARD_GRAD_OP): the gradients are
  // reduce-scattered and the updated weights all-gathered (Rajbhandari et al. 2020, Sec. 7.2.1), the
  // volume of one all-reduce; but NCCL runs those two as rings only before 2.23 (its trees serve
  // all-reduce), so a tree's shorter latency is not theirs. DeepSpeed's ZeRO-1 of 2021-2022 all-reduces
  // whole (zero1_full_allreduce, below).
  if ((L.zero == 1 || L.zero == 2) && !(sw.zero1_full_allreduce && L.zero == 1)) {
    const Collective rs = reduce_scatter(topo, shard_params * bytes, G, dp_per_node, groups_per_node, span);
    g = {rs.time_s + all_gather(topo, shard_params * bytes, G, dp_per_node, groups_per_node, span).time_s,
         rs.algorithm};
  }
  d.time = g.time_s;
  d.algorithm = g.algorithm;
  d.exposed = overlap ? std::max(0.0, d.time - b / x.v) : d.time;
  // DeepSpeed's ZeRO-1 (software.json zero1_full_allreduce): the reduction above is a whole all-reduce,
  // not a reduce-scatter, and after the step each rank all-gathers the others' updated weights before the
  // next forward can start: one more pass of the bytes, in the open.
  const Zero1Gather z1 = zero1_step_gather(cfg, shard_params * bytes);
  if (z1.bytes > 0) {
    const double gather =
        z1.collectives * all_gather(topo, z1.bytes / z1.collectives, G, dp_per_node, groups_per_node, span).time_s +
        z1.copies.seconds(z1.bytes, z1.collectives);
    d.time += gather;
    d.exposed += gather;
    d.notes.push_back(
        "ZeRO-1 as DeepSpeed runs it: the gradients all-reduced whole, the updated weights all-gathered after "
        "the step");
  }
  if (L.zero < 3) return d;
  // ZeRO-3 / fully sharded data parallelism (Rajbhandari et al. 2020, Sec. 7.2.2): every micro-batch
  // gathers each layer's weights before its forward and its backward (and again for the recomputed
  // forward when the gathers hang on module hooks, as DeepSpeed's do), and reduce-scatters the layer's
  // gradients after its backward. How many collectives that is, and whether they hide under compute,
  // is the stack's (software.json): one per tensor with a device sync before each (DeepSpeed 2021),
  // one per module, or one per layer prefetched (FSDP). Each is a ring over the dp ranks: N - 1
  // latency steps plus its bytes at the ring's bandwidth.
  const int per_layer = zero3_collectives_per_layer(m, sw.zero3_gather);
  const double layer_bytes = layer_params_bytes(m, L.tp, bytes);
  const Collective ag = all_gather(topo, layer_bytes / per_layer, G, dp_per_node, groups_per_node, span);
  const Collective rs = reduce_scatter(topo, layer_bytes / per_layer, G, dp_per_node, groups_per_node, span);
  d.algorithm = ag.algorithm;
  // A stack that calls the list forms adds each collective's copies (list_collective_copies).
  const ListCopyCost copies = zero3_copies(cfg);
  const double gather_layer = per_layer * ag.time_s + copies.gather_seconds(layer_bytes, per_layer);
  const double reduce_layer = per_layer * rs.time_s + copies.seconds(layer_bytes, per_layer);
  // The embedding (and the untied or tied output layer) is one more tensor of each kind.
  const double embed_bytes = double(m.vocab) * x.h / L.tp * bytes;
  const double gather_embed =
      all_gather(topo, embed_bytes, G, dp_per_node, groups_per_node, span).time_s + copies.gather_seconds(embed_bytes);
  const double reduce_embed =
      reduce_scatter(topo, embed_bytes, G, dp_per_node, groups_per_node, span).time_s + copies.seconds(embed_bytes);
  const bool regather = L.recompute == Recompute::full && sw.zero3_gather != Zero3Gather::per_layer;
  // Without resharding after the forward (OPT's metaseq runs: --no-reshard-after-forward) each unit stays
  // whole until its backward, recomputed forward included: the backward gathers nothing.
  const bool reshard = sw.zero3_reshard_after_forward;
  const double fwd_gathers = layers * gather_layer + gather_embed;
  const double bwd_gathers = reshard ? (regather ? 2 : 1) * layers * gather_layer + gather_embed : 0.0;
  // Reduce-scatters after each micro-batch's backward, or of the accumulated gradients once at the end
  // (the textbook ZeRO-3 of Rajbhandari et al. Sec. 7.2.2, and the default stack's).
  const double bwd_reduces = sw.zero3_reduce_each_microbatch ? layers * reduce_layer + reduce_embed : 0.0;
  const double end_reduce = sw.zero3_reduce_each_microbatch ? 0.0 : layers * reduce_layer + reduce_embed;
  // A prefetch budget smaller than a module leaves that module's gather in the open, and a gradient
  // bucket smaller than a module makes its reduce-scatter hold up the backward: the share of the
  // layer's parameters in modules above each limit (the big matrices of a wide model).
  auto share_above = [&](double limit) { return zero3_share_above(m, L.tp, limit); };
  const double open_share = sw.zero3_overlap ? share_above(sw.zero3_prefetch_params) : 1.0;
  const double open_reduce = sw.zero3_overlap ? share_above(sw.zero3_reduce_bucket_params) : 1.0;
  const double hidden_f = (1 - open_share) * fwd_gathers, hidden_b = (1 - open_share) * bwd_gathers;
  const double per_mb = open_share * (fwd_gathers + bwd_gathers) + open_reduce * bwd_reduces +
                        std::max(0.0, hidden_f - f) + std::max(0.0, hidden_b + (1 - open_reduce) * bwd_reduces - b) +
                        (sw.zero3_overlap ? (reshard ? 2 : 1) * (1 - open_share) * gather_layer : 0.0);
  d.time = micro * (fwd_gathers + bwd_gathers + bwd_reduces) + end_reduce;
  d.exposed = micro * per_mb + end_reduce;
  const double reduces_per_mb = sw.zero3_reduce_each_microbatch ? layers * per_layer + 1 : 0;
  // The embedding is gathered for the forward and the backward (it is not recomputed).
  const int gathers_per_mb = !reshard ? 1 : regather ? 3 : 2;
  d.zero3_collectives = micro * (layers * per_layer * gathers_per_mb + (reshard ? 2 : 1) + reduces_per_mb) +
                        (sw.zero3_reduce_each_microbatch ? 0 : layers * per_layer + 1);
  d.notes.push_back(reshard ? "ZeRO-3 gathers each layer's weights in every micro-batch's forward and backward pass"
                            : "ZeRO-3 without resharding after the forward: each layer's weights gathered once a "
                              "micro-batch and kept whole until its backward");
  return d;
}

// ---- the tied embedding and the optimizer step ----

// The tied embedding's two gradients summed between the first and the last stage (tied_grad_bytes): a
// two-rank all-reduce per replica and tensor rank, every pair at once, in the open after the flush. Ranks
// are ordered tp, dp, pp (Megatron-LM's initialize_model_parallel; DeepSpeed's topology the same), so the
// two stages share a node only when the whole job does; across nodes each of the first stage's GPUs on a
// node (tp dp of them, at most the node) drives its own pair through the node's NICs.
double tied_embedding_time(const Shape& x) {
  const double tied = tied_grad_bytes(x.cfg);
  if (tied <= 0) return 0;
  const Layout& L = x.cfg.layout;
  // The two stages are (pp - 1) stage strides apart: the whole job in Megatron-LM's order, one pipeline
  // (tp cp pp GPUs) in Llama 3's; a node holds tp cp dp or tp cp of the first stage's GPUs.
  const bool inside = x.cfg.software.pipeline_inside_data_parallel;
  const bool apart = double(inside ? (long long)L.tp * L.cp * L.pp : L.ranks()) > x.c.gpus_per_node;
  const int first_stage = int(std::min<long long>(x.c.gpus_per_node, (long long)L.tp * L.cp * (inside ? 1 : L.dp)));
  return all_reduce(x.topo, tied, 2, apart ? 1 : 2, apart ? first_stage : 1).time_s;
}

// Adam step: reads and writes fp32 master weights, momentum, variance (24 bytes), reads the gradient
// and writes the fp16 weights (4 bytes): memory bound, on the optimizer shard this GPU owns. A stack
// moves more around it (software.json optimizer_bytes_per_param: Megatron-LM 2019-2020 flattened the
// gradients for the all-reduce, checked them for overflow, copied them to fp32, unscaled and measured
// them in passes of their own). Where it checks each tensor in a loop that waits for the GPU, the GPU
// idles while the host dispatches the next tensor's operations (optimizer_host_ops_per_tensor): the
// stage that holds the most layers, plus the embeddings and the final LayerNorm (4 tensors), sets it.
// `backward_chunk`: the pacing stage's backward of one chunk and micro-batch, which hides the gradients'
// copies to the host.
double optimizer_time(const Shape& x, const LayerCost& l, double shard_params, const std::vector<int>& stage_layers,
                      double backward_chunk) {
  const Layout& L = x.cfg.layout;
  const Software& sw = x.cfg.software;
  const ClusterSpec& c = x.c;
  const double opt_params = shard_params / (L.zero >= 1 ? L.dp_group() : 1);
  const double step_tensors = sw.optimizer_host_ops_per_tensor > 0
                                  ? double(detail::tensors_per_layer(x.cfg.model)) *
                                            *std::max_element(stage_layers.begin(), stage_layers.end()) +
                                        4
                                  : 0.0;
  double optimizer_s = sw.optimizer_bytes_per_param * opt_params / l.hbm_rate +
                       step_tensors * sw.optimizer_host_ops_per_tensor * sw.host_op_dispatch_s;
  // ZeRO-Offload (Ren et al. 2021, Sec. 4-5): the step runs on the CPU, bound by the node's memory, which
  // all its GPUs' processes share (the same bytes a parameter, now through DRAM); the gradients reach the
  // host while the backward runs (copied per bucket on a side stream: hidden unless longer than the
  // backward), and the updated fp16 weights go back over the host link before the next forward. With the
  // parameters kept on the host (FSDP CPUOffload) they stay there: each gather fetches its shard instead.
  if ((L.offload_optimizer || L.offload_params) && c.host_memory_GBps > 0 && l.host_Bps > 0) {
    const double cpu_step = sw.optimizer_bytes_per_param * opt_params * c.gpus_per_node /
                            (c.host_memory_GBps * 1e9 * c.host_memory_fraction);
    const double grads_out = opt_params * x.bytes / l.host_Bps;
    const double weights_in = L.offload_params ? 0.0 : opt_params * x.bytes / l.host_Bps;
    optimizer_s = cpu_step + weights_in + std::max(0.0, grads_out - backward_chunk);
  }
  return optimizer_s;
}

// ---- the bubble ----

// Narayanan et al. 2021, Sec. 2.2: with equal stages the bubble is (p-1)/m of the ideal time, (p-1)/(v m)
// interleaved, i.e. (p - 1) chunk times (t_f + t_b)/v. With unequal stages (v = 1) the slowest stage s
// waits for the others once each, filling and draining: sum_{i != s} (t_f + t_b)_i. With equal chunks
// that generalises to the chunks on the path into and out of s: chunk 0 of the ranks before it (the first
// forward and the last backward pass them) and the last chunk of the ranks after it, which stand between
// its forward rounds and its first backward: sum_{i<s} (t_f + t_b)(i, 0) + sum_{i>s} (t_f + t_b)(i, v-1)
// (exact, the output layer on the last chunk included). With uneven chunks the slowest rank's own warm-up
// forwards may hide part of that path (core/pipeline_schedule.h: Megatron-LM runs (p - s - 1) 2 + (v - 1) p
// of them first), so the schedule itself is replayed with each chunk's times and free transfers
// (pipeline_end_s, the Gantt's replay): bubble = its end - m t_max (`ideal`).
double pipeline_bubble(const Shape& x, const Estimate& e, const StageCost& st, int slow, double ideal) {
  const Layout& L = x.cfg.layout;
  const int p = x.p, v = x.v;
  double bubble = 0;
  if (L.pp <= 1) return bubble;
  for (int i = 0; i < p; ++i) {
    if (i == slow) continue;
    const size_t k = size_t(i < slow ? 0 : v - 1) * size_t(p) + size_t(i);
    bubble += e.chunk_forward_s[k] + e.chunk_backward_s[k];
  }
  const bool uneven = v > 1 && std::adjacent_find(e.chunk_layers.begin(), e.chunk_layers.end(),
                                                  std::not_equal_to<>()) != e.chunk_layers.end();
  // One chunk per rank: the sum is exact when the last stage paces. When an earlier one does, the first
  // micro-batch's trip through the stages after it and back overlaps that stage's own warm-up forwards
  // (1F1B runs p - s - 1 of them before its first backward), which only the replay sees: BLOOM's
  // embedding-as-layer splits, whose fuller stages come first.
  // (Only when compute alone makes it the slowest: where its own paired transfers do, the replay, which
  // moves nothing, would pace at another stage's compute and count both.)
  int slow_compute = 0;
  for (int i = 1; i < p; ++i)
    if (st.f[size_t(i)] + st.b[size_t(i)] > st.f[size_t(slow_compute)] + st.b[size_t(slow_compute)]) slow_compute = i;
  const bool hidden_path = v == 1 && slow < p - 1 && slow_compute == slow;
  // A bound on the replay's cost (2 p m v ops); past it the path sum above stands (never below the replay
  // in the cases checked: it assumes nothing is hidden).
  if ((uneven || hidden_path) && 2.0 * p * x.micro * v <= 1e6)
    bubble = std::max(0.0, pipeline_end_s(L.schedule, p, x.micro, v, e.chunk_forward_s, e.chunk_backward_s) - ideal);
  return bubble;
}

// What the utilisation figures cannot say by themselves: a layout the config's (default) stack could not run
// (a what-if, stack_problems), ZeRO-2/3 under a pipeline, and the attention tiles flash attention skips.
void add_caveats(const Config& cfg, Estimate& e) {
  const ModelSpec& m = cfg.model;
  const Layout& L = cfg.layout;
  const double s = m.seq_len, h = m.hidden;
  if (!cfg.layout_from.empty()) e.notes.push_back(cfg.layout_from);
  for (const std::string& p : stack_problems(cfg))
    e.notes.push_back("what-if: " + p.substr(p.find(':') + 2, p.find(" (software.json") - p.find(':') - 2) +
                      "; name a stack that has it with \"software\"");
  if (L.pp > 1 && L.zero >= 2)
    e.notes.push_back("ZeRO-2/3 with pipeline parallelism: gradients are reduced once per iteration here");
  // The FLOP counts follow the convention of record (Narayanan et al. 2021 eq. 3; PaLM App. B), which counts
  // the whole s x s attention; flash attention under a causal mask computes (n + 1) / 2n of its tiles
  // (layer_times). Where the scores are a large part of the count (long sequences) the utilisations above
  // then credit the GPUs with FLOPs they skip: said, with how many.
  if (cfg.software.flash_attention && e.model_flops_per_iteration > 0) {
    const double scores = 3.0 * m.layers * 4.0 * s * s * h * L.global_batch;  // forward + backward
    const double share = scores / e.model_flops_per_iteration;
    const double n_tiles = std::max(1.0, std::ceil(s / 128.0)), skipped = 1 - (n_tiles + 1) / (2 * n_tiles);
    if (share * skipped > 0.05) {
      char buf[400];
      std::snprintf(buf, sizeof buf,
                    "The model FLOPs count the whole attention matrix, as Megatron-LM and PaLM count them: %.0f%% of "
                    "them are attention scores here, of which flash attention under the causal mask skips about "
                    "half, so the GPUs execute %.0f%% fewer FLOPs than MFU credits",
                    100 * share, 100 * share * skipped);
      e.notes.push_back(buf);
    }
  }
}

}  // namespace

// ---- estimate() ----

Estimate estimate(const Config& cfg) {
  const ModelSpec& m = cfg.model;
  const Layout& L = cfg.layout;
  Estimate e;
  e.stage_layers = stage_layers(m, L);
  const Shape x = shape_of(cfg, int(e.stage_layers.size()));
  const ClusterSpec& c = x.c;
  const int micro = x.micro, v = x.v, p = x.p;

  e.params = param_count(m);
  e.model_flops_per_iteration = model_flops_per_iteration(m, L.global_batch);
  e.hardware_flops_per_iteration = hardware_flops_per_iteration(m, L.global_batch, L.recompute);
  e.six_nd_flops_per_iteration = six_nd_flops(e.params, double(L.global_batch) * x.s);
  e.memory = memory_per_gpu(cfg);
  e.hbm_bytes = c.hbm_bytes;
  // What the node's GPUs offload together must fit in its DRAM too (when the catalog knows how much).
  e.host_bytes_per_node = e.memory.host * c.gpus_per_node;
  e.fits = e.memory.total <= c.hbm_bytes && (c.host_memory_bytes <= 0 || e.host_bytes_per_node <= c.host_memory_bytes);

  const LayerCost l = layer_cost(x);
  e.gemm_efficiency = l.gemm_efficiency;
  e.tp_algorithm = l.tp_algorithm;
  const StageCost st = stage_cost(x, l, e);
  const PipeTransfers pt = pipeline_transfers(x);
  e.p2p_s = pt.p2p;
  const int slow = pacing_stage(st, pt, p);
  e.slowest_stage = slow;
  e.layer_forward_s = l.forward();
  e.layer_backward_s = l.backward();
  e.logits_s = st.logits();
  const double slow_layers = e.stage_layers[size_t(slow)];
  const bool slow_is_last = slow == p - 1;
  e.stage_forward_s = st.f[size_t(slow)] / v;  // one chunk of the slowest stage
  e.stage_backward_s = st.b[size_t(slow)] / v;

  // The stage shard's parameters: what one GPU of the pacing stage holds without data parallelism.
  Layout shard_layout = L;
  shard_layout.dp = 1, shard_layout.cp = 1, shard_layout.zero = 0;
  const double shard_params =
      memory_per_gpu(Config{m, cfg.cluster, shard_layout, cfg.training, cfg.software, {}}).weights / x.bytes;
  DataParallel dp = data_parallel(x, shard_params, st.f[size_t(slow)], st.b[size_t(slow)], slow_layers);
  e.dp_algorithm = dp.algorithm;
  if (L.zero >= 3 && L.dp_group() > 1) e.zero3_collectives = dp.zero3_collectives;
  for (std::string& n : dp.notes) e.notes.push_back(std::move(n));
  e.tied_grad_s = tied_embedding_time(x);
  const double optimizer_s = optimizer_time(x, l, shard_params, e.stage_layers, st.b[size_t(slow)] / v);

  // ---- assemble: the slowest rank sets the pace, busy m t_max; the others add the fill and the drain ----
  const double t_max = st.f[size_t(slow)] + st.b[size_t(slow)];
  const double ideal = micro * t_max;
  const double bubble = pipeline_bubble(x, e, st, slow, ideal);
  // Every micro-batch's transfers on the pacing stage (its own when paired), plus the fill and the drain:
  // the first forward and the last backward cross the p - 1 boundaries once each.
  const double pp_comm = L.pp > 1 ? (pt.paired ? micro * pt.own(slow, p) : micro * v * (pt.p2p + pt.back)) +
                                        (L.pp - 1) * (pt.p2p + pt.back)
                                  : 0;
  TimeBreakdown& T = e.time;
  T.compute = micro * (slow_layers * (l.fwd_compute + l.bwd_compute) + (slow_is_last ? st.logits() : 0));
  T.tp_comm = micro * slow_layers * (l.tp_fwd + l.tp_bwd);
  T.cp_comm = micro * slow_layers * (l.cp_fwd + l.cp_bwd);
  T.offload = micro * slow_layers * (l.ckpt_fwd + l.ckpt_bwd);
  T.pp_comm = pp_comm + e.tied_grad_s;
  T.dp_comm = dp.exposed;
  T.bubble = bubble;
  T.optimizer = optimizer_s;
  T.total = ideal + bubble + T.pp_comm + dp.exposed + optimizer_s;
  e.iteration_time_s = T.total;

  const double gpus = double(L.ranks());
  e.achieved_tflops_per_gpu = e.hardware_flops_per_iteration / (T.total * gpus) / 1e12;
  e.model_tflops_per_gpu = e.model_flops_per_iteration / (T.total * gpus) / 1e12;
  e.mfu = e.model_flops_per_iteration / (T.total * gpus * x.peak);
  e.hfu = e.hardware_flops_per_iteration / (T.total * gpus * x.peak);  // PaLM App. B: recompute counted
  e.tokens_per_s = L.global_batch * x.s / T.total;
  e.iterations = cfg.training.tokens / (double(L.global_batch) * x.s);
  const double seconds = e.iterations * T.total;
  e.training_days = seconds / 86400.0;
  e.gpu_hours = seconds / 3600.0 * gpus;
  e.cost_usd = e.gpu_hours * c.price_per_gpu_hour_usd;
  add_caveats(cfg, e);
  return e;
}

}  // namespace mc::perf
