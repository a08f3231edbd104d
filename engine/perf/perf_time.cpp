// perf_time.cpp - time of one training iteration from physics: GEMMs against a tile/wave-quantized
// roofline, memory-bound kernels against HBM bandwidth, collectives as latency + bandwidth over NVLink,
// NICs and the fat-tree, the pipeline bubble, and the optimizer step.
#include "perf/collectives.h"
#include "perf/perf.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

namespace mc::perf {

double peak_flops(const ClusterSpec& c, Precision p) {
  switch (p) {
    case Precision::fp16:
      return c.peak_fp16_flops;
    case Precision::bf16:
      return c.peak_bf16_flops;
    case Precision::fp32:
      return c.peak_fp32_flops;
    case Precision::tf32:
      return c.peak_tf32_flops;
  }
  return c.peak_fp16_flops;
}

namespace {

double peak_for(const ClusterSpec& c, Precision p) { return peak_flops(c, p); }

// One GEMM (batch x [M x K] @ [K x N]). cuBLAS splits the output into tiles (we take 256 x 128, its
// large-tile shape on Volta/Ampere) that run in waves over the SMs; a partly filled last wave wastes the
// rest (NVIDIA, "Matrix Multiplication Background User's Guide": tile and wave quantization). The
// kernel is bounded below by the HBM traffic of reading A and B and writing C (roofline).
double gemm_time_s(const ClusterSpec& c, double peak, double batch, double M, double N, double K, double bytes) {
  const double flops = 2 * batch * M * N * K;
  double wave_eff = 1;
  if (c.sm_count > 0) {
    const double tiles = batch * std::ceil(M / 256.0) * std::ceil(N / 128.0);
    const double waves = std::ceil(tiles / c.sm_count);
    wave_eff = tiles / (waves * c.sm_count);
    // Small K: the tile's main loop is short relative to its prologue/epilogue.
    wave_eff *= K / (K + 64.0);
  }
  const double t_math = flops / (peak * c.matmul_peak_fraction * wave_eff);
  const double t_mem = batch * bytes * (M * K + K * N + M * N) / (c.hbm_bandwidth_GBps * 1e9);
  return std::max(t_math, t_mem) + c.kernel_overhead_s;
}

struct LayerTimes {
  double gemm_fwd = 0, attn_core_fwd = 0, elementwise_fwd = 0, attn_elementwise_fwd = 0;
  double every_second_matmul_fwd = 0;  // the 2nd, 4th, ... of q, k, v, out, fc1 (gate), fc2 in call order
  double flops_fwd = 0, gemm_efficiency = 0;
};

// One transformer layer on one GPU for one micro-batch of b sequences, tensor-parallel over t
// (Megatron-LM: QKV and fc1 column-split, proj and fc2 row-split; Shoeybi et al. 2019, Sec. 3), and
// context-parallel over c: the rank's s / c tokens through every matrix, its s / c queries against all s
// keys in the attention (Llama 3, Sec. 3.3.2: K and V all-gathered first).
LayerTimes layer_times(const Config& cfg, const ClusterSpec& c) {
  const ModelSpec& m = cfg.model;
  const Software& sw = cfg.software;
  const Layout& L = cfg.layout;
  const double peak = peak_for(c, cfg.training.precision);
  const double bytes = full_width(cfg.training.precision) ? 4 : 2;
  const double b = L.micro_batch, s = m.seq_len, h = m.hidden, t = L.tp, a = m.heads;
  const double dh = h / a, kvd = m.kv() * dh, f = m.ffn();
  const double cp = std::max(1, L.cp), sq = s / cp;  // the rank's queries (and tokens) of each sequence
  const double tokens = b * sq;
  LayerTimes lt;
  const double mlp_in = m.gated_mlp ? 2 * f : f;
  lt.gemm_fwd = gemm_time_s(c, peak, 1, tokens, (h + 2 * kvd) / t, h, bytes) +  // QKV
                gemm_time_s(c, peak, 1, tokens, h, h / t, bytes) +              // attention output proj
                gemm_time_s(c, peak, 1, tokens, mlp_in / t, h, bytes) +         // fc1 (and gate)
                gemm_time_s(c, peak, 1, tokens, h, f / t, bytes);               // fc2
  // torchtitan's per-op recompute policy saves every matmul's output but the second, fourth and sixth of a
  // layer's calls: of wq, wk, wv, wo, w1, w3, w2 (Llama's order) wk, wo and w3; without a gate wk, wo, w2.
  {
    const double kv = gemm_time_s(c, peak, 1, tokens, kvd / t, h, bytes);
    const double out = gemm_time_s(c, peak, 1, tokens, h, h / t, bytes);
    const double up = gemm_time_s(c, peak, 1, tokens, f / t, h, bytes),
                 down = gemm_time_s(c, peak, 1, tokens, h, f / t, bytes);
    lt.every_second_matmul_fwd = kv + out + (m.gated_mlp ? up : down);
  }
  // Attention core: (b a/t) batched [s x d] @ [d x s] and [s x s] @ [s x d] (s / c query rows under
  // context parallelism).
  // A causal mask lets flash attention skip the tiles above the diagonal (Dao 2023, Sec. 3.1.1): of n x n
  // tiles of 128 (its block size, Sec. 3.3) it computes n (n + 1) / 2. Under context parallelism a rank's
  // two chunks (the i-th and the (2c - 1 - i)-th of 2c, Llama 3 Sec. 3.3.2) see keys up to their own ends:
  // with k = n / 2c tiles a chunk, k^2 (2c - 1) + k (k + 1) of its 2k x 2ck tiles, the same (n + 1) / 2n.
  const double n_tiles = std::max(1.0, std::ceil(s / 128.0)), causal = (n_tiles + 1) / (2 * n_tiles);
  lt.attn_core_fwd =
      gemm_time_s(c, peak, b * a / t, sq, s, dh, bytes) + gemm_time_s(c, peak, b * a / t, sq, dh, s, bytes);
  if (sw.flash_attention) {
    // FlashAttention (Dao et al. 2022, Alg. 1): both products in one kernel per head, the scores in on-chip
    // memory, so HBM carries only Q, K, V and the output (4 s d a b / t elements; Q and the output of the
    // rank's s / c queries, K and V of all s keys), not the s x s matrix.
    const double math = gemm_time_s(c, peak, b * a / t, sq, s, dh, 0) + gemm_time_s(c, peak, b * a / t, sq, dh, s, 0) -
                        2 * c.kernel_overhead_s;
    const double io = 2 * (sq + s) * dh * b * a / t * bytes / (c.hbm_bandwidth_GBps * 1e9);
    lt.attn_core_fwd = std::max(causal * math, io) + c.kernel_overhead_s;
  }
  // Memory-bound kernels, counted in elements read + written (Megatron's fused kernels): two LayerNorms
  // (2 + 2), two bias-dropout-residual adds (3.5 each incl. the 1-byte mask) on s b h, replicated over
  // the t ranks unless sequence parallel; bias-GeLU on the MLP activation (2 f/t); scaled-masked softmax
  // (2) and attention dropout (2.5) on the a s^2 b / t scores.
  const double sbh = sq * b * h;
  const double repl = 11 * sbh / (L.sequence_parallel ? t : 1.0);
  const double split = 2 * sq * b * mlp_in / t;
  const double scores = 4.5 * a * sq * s * b / t;
  const double hbm = c.hbm_bandwidth_GBps * 1e9 * c.elementwise_hbm_fraction;
  // A stack without Megatron's fused kernels moves each intermediate through HBM once per unfused op
  // (software.json elementwise_factor). Flash attention keeps the scores in on-chip memory: no s^2 traffic.
  lt.elementwise_fwd = sw.elementwise_factor * bytes * (repl + split) / hbm + 6 * c.kernel_overhead_s;
  lt.attn_elementwise_fwd =
      sw.flash_attention ? 0.0 : sw.elementwise_factor * bytes * scores / hbm + 2 * c.kernel_overhead_s;
  // The FLOPs the kernels do: flash attention under the causal mask computes only the tiles it keeps.
  lt.flops_fwd = 2 * tokens * (h * (h + 2 * kvd) + h * h + (m.gated_mlp ? 3 : 2) * h * f) / t +
                 (sw.flash_attention ? causal : 1.0) * 4 * b * sq * s * h / t;
  lt.gemm_efficiency = lt.flops_fwd / ((lt.gemm_fwd + lt.attn_core_fwd) * peak);
  return lt;
}

// Parameter tensors of one transformer layer as a framework holds them: the Q/K/V, output, fc1 (and
// gate) and fc2 matrices with their biases, and two LayerNorms' gain and bias.
int tensors_per_layer(const ModelSpec& m) { return (m.gated_mlp ? 5 : 4) * 2 + 4; }
// Modules of one layer (the linears and the two norms): DeepSpeed >= 0.5 gathers one module's tensors
// together.
int modules_per_layer(const ModelSpec& m) { return (m.gated_mlp ? 5 : 4) + 2; }

}  // namespace

int zero3_collectives_per_layer(const ModelSpec& m, Zero3Gather g) {
  return g == Zero3Gather::per_tensor ? tensors_per_layer(m) : g == Zero3Gather::per_module ? modules_per_layer(m) : 1;
}

// The layer's big matrices (QKV, output projection, fc1 (and gate), fc2), each a module of its own.
double zero3_share_above(const ModelSpec& m, int tp, double limit) {
  if (limit <= 0) return 0.0;
  const double hh = m.hidden, ff = m.ffn(), kv = double(m.kv()) * (hh / m.heads);
  const double mats[] = {hh * (hh + 2 * kv) / tp, hh * hh / tp, (m.gated_mlp ? 2 : 1) * hh * ff / tp, hh * ff / tp};
  double big = 0, all = 0;
  for (double n : mats) all += n, big += n > limit ? n : 0;
  return all > 0 ? big / all : 0.0;
}

// torch.distributed's list-form all_gather and reduce_scatter (PyTorch 1.8, torch/lib/c10d/ProcessGroupNCCL.cpp:
// flatten_for_scatter_gather, then one `copy_` per output or input tensor on the NCCL stream), as DeepSpeed's
// ZeRO-3 called them until 0.5.5 (partition_parameters.py `dist.all_gather(partitions, ...)`, `reduce_scatter(
// input_list[rank], input_list)`): each of the p pieces is its own copy kernel, at least the kernel's ramp and
// tail (kernel_overhead_s; the CPU's dispatch of each copy_ is not counted, so this is a lower bound), and
// together they read and write the collective's bytes once more at the memory-bound kernels' HBM rate.
ListCopyCost list_collective_copies(const ClusterSpec& c, int ranks) {
  ListCopyCost k;
  if (ranks <= 1) return k;
  k.per_collective_s = ranks * c.kernel_overhead_s;
  k.per_byte_s = 2.0 / (c.hbm_bandwidth_GBps * 1e9 * c.elementwise_hbm_fraction);
  return k;
}

// The same DeepSpeed versions gather each tensor into a buffer made by torch.zeros (partition_parameters.py
// _allgather_param, 0.3.13-0.5.4; 0.5.5 gathers whole modules through _allgather_params_coalesced instead):
// a fill kernel writes the gathered bytes once before NCCL does.
static ListCopyCost zero3_list_copies(const ClusterSpec& c, int ranks) {
  ListCopyCost k = list_collective_copies(c, ranks);
  if (ranks > 1) k.gather_fill_per_byte_s = 1.0 / (c.hbm_bandwidth_GBps * 1e9 * c.elementwise_hbm_fraction);
  return k;
}

// One GPU's copies to or from host memory: its own link (gpus.json host_link), or its share of the node's
// DRAM bandwidth when all its GPUs copy at once, whichever is less. 0 when the link is not known.
double host_rate_Bps(const ClusterSpec& c) {
  double r = c.host_link_GBps * 1e9;
  if (c.host_memory_GBps > 0)
    r = std::min(r, c.host_memory_GBps * 1e9 * c.host_memory_fraction / std::max(1, c.gpus_per_node));
  return r;
}

ListCopyCost zero3_copies(const Config& cfg) {
  const Layout& L = cfg.layout;
  ListCopyCost k = cfg.software.zero3_list_collectives ? zero3_list_copies(cfg.cluster, L.dp_group()) : ListCopyCost{};
  // Shards kept on the host (FSDP's CPUOffload(offload_params=True), ZeRO-Infinity's offload_param): each
  // gather first copies this rank's 1/dp of the bytes in, each reduce-scatter copies its 1/dp out.
  const double host = host_rate_Bps(cfg.cluster);
  if (L.offload_params && host > 0) k.per_byte_s += 1.0 / (std::max(1, L.dp_group()) * host);
  return k;
}

Zero1Gather zero1_step_gather(const Config& cfg, double shard_bytes) {
  Zero1Gather g;
  const Layout& L = cfg.layout;
  if (!cfg.software.zero1_full_allreduce || L.zero != 1 || L.dp_group() < 2 || shard_bytes <= 0) return g;
  // stage2.py step: num_shards = max(1, partition numel x dp // allgather_bucket_size), the bucket's default
  // 5e8 elements (zero/constants.py, 0.4-0.6).
  const double elements = shard_bytes / (full_width(cfg.training.precision) ? 4 : 2);
  g.bytes = shard_bytes;
  g.collectives = std::max(1.0, std::floor(elements / 5e8));
  g.copies = list_collective_copies(cfg.cluster, L.dp_group());
  return g;
}

double tied_grad_bytes(const Config& cfg) {
  const ModelSpec& m = cfg.model;
  const Layout& L = cfg.layout;
  if (L.pp < 2 || !m.tied_output) return 0;
  return double(m.vocab) * m.hidden / L.tp * (full_width(cfg.training.precision) ? 4 : 2);
}

Estimate estimate(const Config& cfg) {
  const ModelSpec& m = cfg.model;
  const Layout& L = cfg.layout;
  const Software& sw = cfg.software;
  // The stack's achieved large-GEMM fraction replaces the GPU's (same silicon, other kernels and clocks).
  ClusterSpec c = cfg.cluster;
  if (sw.gemm_fraction > 0) c.matmul_peak_fraction = sw.gemm_fraction;
  Estimate e;
  const double bytes = full_width(cfg.training.precision) ? 4 : 2;
  const double peak = peak_for(c, cfg.training.precision);
  const double b = L.micro_batch, s = m.seq_len, h = m.hidden;
  // Context parallelism: each rank carries s / cp tokens of each sequence through the layers, the output
  // layer and the pipeline (sq below); only the attention sees all s keys (layer_times).
  const double cp = std::max(1, L.cp), sq = s / cp;
  const int micro = L.micro_batches();
  const int v = L.schedule == PipeSchedule::interleaved ? std::max(1, L.virtual_stages) : 1;
  e.stage_layers = stage_layers(m, L);
  const int p = int(e.stage_layers.size());

  e.params = param_count(m);
  e.model_flops_per_iteration = model_flops_per_iteration(m, L.global_batch);
  e.hardware_flops_per_iteration = hardware_flops_per_iteration(m, L.global_batch, L.recompute);
  e.six_nd_flops_per_iteration = six_nd_flops(e.params, double(L.global_batch) * s);
  e.memory = memory_per_gpu(cfg);
  e.hbm_bytes = c.hbm_bytes;
  // What the node's GPUs offload together must fit in its DRAM too (when the catalog knows how much).
  e.host_bytes_per_node = e.memory.host * c.gpus_per_node;
  e.fits = e.memory.total <= c.hbm_bytes && (c.host_memory_bytes <= 0 || e.host_bytes_per_node <= c.host_memory_bytes);

  // ---- per layer, per micro-batch ----
  const LayerTimes lt = layer_times(cfg, c);
  e.gemm_efficiency = lt.gemm_efficiency;
  const double fwd_compute = lt.gemm_fwd + lt.attn_core_fwd + lt.elementwise_fwd + lt.attn_elementwise_fwd;
  // Backward: two GEMMs per forward GEMM (input and weight gradients) and about twice the element-wise
  // traffic (Narayanan et al. 2021, Sec. 5.1: backward = 2 x forward).
  double bwd_compute = 2 * fwd_compute;
  // FlashAttention's backward recomputes the scores from Q and K: five products where the forward has two,
  // 2.5 x its FLOPs (Dao 2023, Sec. 4.1), not 2 x.
  if (cfg.software.flash_attention) bwd_compute += 0.5 * lt.attn_core_fwd;
  if (L.recompute == Recompute::full) bwd_compute += fwd_compute;
  if (L.recompute == Recompute::selective)
    bwd_compute += cfg.software.selective_every_second_matmul ? lt.every_second_matmul_fwd + lt.elementwise_fwd
                                                              : lt.attn_core_fwd + lt.attn_elementwise_fwd;

  // Tensor-parallel communication: 2 all-reduces of b s h in the forward pass, 2 in the backward, 2 more
  // when the forward is recomputed (comm_volume.h); with sequence parallelism each all-reduce becomes a
  // reduce-scatter + all-gather of the same total volume (Korthikanti et al. 2022, Sec. 4.2.2).
  Topology topo = topology_of(c);
  topo.gather_trees = sw.nccl_version >= 22300;
  const int tp_per_node = std::min(L.tp, c.gpus_per_node);
  const Collective tp_ar = all_reduce(topo, b * sq * h * bytes, L.tp, tp_per_node, 1);
  e.tp_algorithm = L.tp > 1 ? tp_ar.algorithm : "none";
  const double tp_fwd = 2 * tp_ar.time_s;
  double tp_bwd = 2 * tp_ar.time_s + (L.recompute == Recompute::full ? tp_fwd : 0);

  // Context-parallel communication (Llama 3, Sec. 3.3.2): before each layer's attention the cp ranks
  // all-gather the keys and the values, b s kv_heads d / t elements each whole, "exposed in the critical
  // path" (not overlapped). The backward gathers them again and reduce-scatters their gradients
  // (TransformerEngine's AttnFuncWithCPAndKVAllGather, which cites that section: its backward calls
  // gather_along_first_dim on k and v, then reduce-scatters dk and dv); a recomputed forward gathers once
  // more. Ranks go tp, cp, ...: a cp group's ranks are tp apart, cp_per_node of them on one node.
  double cp_fwd = 0, cp_bwd = 0;
  if (L.cp > 1) {
    const double kv_bytes = b * s * m.kv() * (h / m.heads) / L.tp * bytes;
    const int cp_per_node = std::max(1, std::min(L.cp, c.gpus_per_node / std::min(c.gpus_per_node, L.tp)));
    const int cp_groups_per_node = std::max(1, c.gpus_per_node / cp_per_node);
    const double ag = all_gather(topo, kv_bytes, L.cp, cp_per_node, cp_groups_per_node).time_s;
    const double rs = reduce_scatter(topo, kv_bytes, L.cp, cp_per_node, cp_groups_per_node).time_s;
    cp_fwd = 2 * ag;
    cp_bwd = 2 * ag + 2 * rs + (L.recompute == Recompute::full ? cp_fwd : 0);
  }

  // Adding each micro-batch's weight gradient into the ones accumulated over the iteration: a memory-bound
  // pass over the layer's parameters (autograd's param.grad += g, or Megatron-LM's main_grad hook of 2021,
  // software.json grad_accumulation_bytes) in every micro-batch but the first, charged to the backward
  // as its average over the m micro-batches. Stacks that fuse it into the weight-gradient GEMM pay nothing.
  // Megatron-LM 2021's hook adds the first one too, into the buffer zero_grad_buffer cleared
  // (megatron/model/distributed.py at aed2f75: grad_accumulation_every_microbatch): all m.
  const double accumulate_share = sw.grad_accumulation_every_microbatch ? 1.0
                                  : micro > 1                           ? double(micro - 1) / micro
                                                                        : 0.0;
  const double hbm_rate = c.hbm_bandwidth_GBps * 1e9 * c.elementwise_hbm_fraction;
  const double grad_add_per_param_s = accumulate_share * sw.grad_accumulation_bytes / hbm_rate;
  bwd_compute += grad_add_per_param_s * layer_params_bytes(m, L.tp, 1.0);
  // The layer's own collectives, tensor and context parallel, both blocking.
  const double coll_fwd = tp_fwd + cp_fwd, coll_bwd = tp_bwd + cp_bwd;

  // Activation checkpoints moved off the GPU (full recompute only; layout_problems): DeepSpeed's
  // checkpointing copies each layer's input to the host with a blocking `.to(device)` in the forward and
  // back before the recompute (deepspeed/runtime/activation_checkpointing/checkpointing.py, copy_to_device),
  // so the GPU waits out both copies; with partition-activations each tensor rank moves 1/t of it and the
  // ranks all-gather the whole before the recompute (Rajbhandari et al. 2020, Sec. 6.1, Pa and Pa+cpu).
  // A copy runs at the GPU's host link, or at its share of the node's memory bandwidth if that is less.
  double ckpt_fwd = 0, ckpt_bwd = 0;
  const double host_Bps = host_rate_Bps(c);
  if (L.recompute == Recompute::full && (L.offload_activations || L.partition_activations)) {
    const double act_scale = full_width(cfg.training.precision) ? 2.0 : 1.0;
    const double whole = act_scale * activation_bytes_per_layer(m, b, L.tp, L.sequence_parallel, Recompute::full) / cp;
    const bool split = L.partition_activations && !L.sequence_parallel && L.tp > 1;
    const double kept = split ? whole / L.tp : whole;
    if (L.offload_activations && host_Bps > 0) ckpt_fwd = kept / host_Bps, ckpt_bwd = kept / host_Bps;
    if (split) ckpt_bwd += all_gather(topology_of(c), whole, L.tp, std::min(L.tp, c.gpus_per_node), 1).time_s;
  }

  // ---- per stage, per micro-batch: its layers; the last stage also runs the logits ----
  // The loss over the vocabulary: memory-bound passes over the b s V / t logits, a third of them charged to
  // the forward and two to the backward. Fused, three passes in the training precision (read + write, 9 x
  // its bytes an element); Megatron-LM casts the logits to fp32 and runs mpu/cross_entropy.py's max,
  // subtract, exp, sum and divide, then multiplies and casts back in the backward (software.json
  // loss_bytes_per_logit: 52 bytes an element).
  const double loss_bytes = sw.loss_bytes_per_logit > 0 ? sw.loss_bytes_per_logit : 9 * bytes;
  const double logits_fwd =
      gemm_time_s(c, peak, 1, b * sq, double(m.vocab) / L.tp, h, bytes) +
      loss_bytes / 3 * b * sq * double(m.vocab) / L.tp / (c.hbm_bandwidth_GBps * 1e9 * c.elementwise_hbm_fraction);
  // The output layer's weight gradient (vocab x h / tp) is accumulated the same way on the last stage.
  const double logits_grad_add = grad_add_per_param_s * double(m.vocab) * h / L.tp;
  // Each virtual stage (model chunk) by its own layers; the output layer rides on the last one. A rank's
  // work per micro-batch is the sum of its chunks.
  e.chunk_layers = chunk_layers(m, L);
  const int vp = int(e.chunk_layers.size());
  e.chunk_forward_s.assign(size_t(vp), 0.0);
  e.chunk_backward_s.assign(size_t(vp), 0.0);
  std::vector<double> stage_f(static_cast<size_t>(p)), stage_b(static_cast<size_t>(p));
  for (int k = 0; k < vp; ++k) {
    const double n = e.chunk_layers[size_t(k)];
    const bool last = k == vp - 1;
    e.chunk_forward_s[size_t(k)] = n * (fwd_compute + coll_fwd + ckpt_fwd) + (last ? logits_fwd : 0);
    e.chunk_backward_s[size_t(k)] =
        n * (bwd_compute + coll_bwd + ckpt_bwd) + (last ? 2 * logits_fwd + logits_grad_add : 0);
    stage_f[size_t(k % p)] += e.chunk_forward_s[size_t(k)];
    stage_b[size_t(k % p)] += e.chunk_backward_s[size_t(k)];
  }
  // Pipeline point-to-point: b s h per boundary (s b h / t each over t NICs with scatter/gather,
  // Narayanan et al. 2021 Sec. 4.1), over the InfiniBand when the next stage lives on another node.
  // The backward sends the activations' gradients the same way, or whole from every tensor rank
  // (DeepSpeed's engine); a blocking send and a blocking receive make both stages wait out the transfer.
  double p2p = 0, p2p_back = 0;
  if (L.pp > 1) {
    const bool sg = L.scatter_gather && sw.pipeline_scatter_gather && L.tp > 1;
    const double whole = pp_boundary_bytes(b, sq, h, bytes);
    // Neighbouring stages are tp cp dp GPUs apart in Megatron-LM's order, tp cp in Llama 3's.
    const long long apart = (long long)L.tp * L.cp * (sw.pipeline_inside_data_parallel ? 1 : L.dp);
    const bool cross_node = apart >= c.gpus_per_node || c.gpus_per_node == 1;
    const bool bc = sw.pipeline_p2p_broadcast;
    // Across an oversubscribed fat-tree: once the job spans more than one leaf, the sends of a stage whose
    // partners are `apart` GPUs on leave their leaf from as many of its nodes as that span covers (all of a
    // leaf's when a stage fills whole leaves, Megatron-LM's order on a large machine; one pipeline's stage,
    // one node or so, in Llama 3's), through uplinks worth leaf_nodes / oversubscription nodes: each sends
    // at that share of its line rate. The simulator's flows meet the same uplinks (engine/sim topology).
    Topology send_topo = topo;
    if (cross_node && topo.oversubscription > 1 && c.nodes > topo.leaf_nodes) {
      const double out = std::min(std::max(1.0, double(apart) / c.gpus_per_node), double(topo.leaf_nodes));
      const double slow = std::max(1.0, topo.oversubscription * out / topo.leaf_nodes);
      send_topo.node_p2p_Bps /= slow, send_topo.node_inter_Bps /= slow;
    }
    p2p = point_to_point(send_topo, whole / (sg ? L.tp : 1), cross_node, bc).time_s;
    if (sg) p2p += all_gather(topo, whole, L.tp, tp_per_node, 1).time_s;
    p2p_back = sw.pipeline_full_gradients ? point_to_point(send_topo, whole, cross_node, bc).time_s : p2p;
    if (sw.pipeline_blocking_p2p) p2p *= 2, p2p_back *= 2;
  }
  e.p2p_s = p2p;

  // With blocking, paired transfers (DeepSpeed's pipeline engine) each stage waits out its own: a middle
  // stage receives and sends both ways (four per micro-batch), the first and the last stage two (the
  // first has no previous stage, the last no next one). The stage that sets the pace is then the one whose
  // compute plus its own transfers is longest: with the logits on it, often the last, at two transfers
  // (DeepSpeed's TrainSchedule, deepspeed/runtime/pipe/schedule.py; the simulator runs it the same way).
  // Non-blocking sends (Megatron-LM) overlap one direction and are charged the same on every stage.
  const bool paired = sw.pipeline_blocking_p2p && L.pp > 1 && v == 1;
  auto own_p2p = [&](int i) {
    if (!paired) return 0.0;
    return i == 0 || i == p - 1 ? 0.5 * (p2p + p2p_back) : p2p + p2p_back;
  };
  int slow = 0;
  for (int i = 1; i < p; ++i)
    if (stage_f[size_t(i)] + stage_b[size_t(i)] + own_p2p(i) >
        stage_f[size_t(slow)] + stage_b[size_t(slow)] + own_p2p(slow))
      slow = i;
  e.slowest_stage = slow;
  e.layer_forward_s = fwd_compute + coll_fwd + ckpt_fwd;
  e.layer_backward_s = bwd_compute + coll_bwd + ckpt_bwd;
  e.logits_s = 3 * logits_fwd + logits_grad_add;
  const double slow_layers = e.stage_layers[size_t(slow)];
  const bool slow_is_last = slow == p - 1;
  e.stage_forward_s = stage_f[size_t(slow)] / v;  // one chunk of the slowest stage
  e.stage_backward_s = stage_b[size_t(slow)] / v;

  // ---- data parallel: gradients of the stage shard (fp16, or fp32 in fp32 training) ----
  Layout shard_layout = L;
  shard_layout.dp = 1, shard_layout.cp = 1, shard_layout.zero = 0;
  const double shard_params = memory_per_gpu(Config{m, cfg.cluster, shard_layout, cfg.training, sw}).weights / bytes;
  double dp_time = 0, dp_exposed = 0;
  e.dp_algorithm = "none";
  const bool overlap = L.overlap_dp_comm || sw.dp_overlap;
  // The gradient group is the dp x cp ranks of one shard (Layout::dp_group), consecutive after tp.
  // How many of them share a node: after tp in Megatron-LM's order (cp, then dp ranks tp apart); in Llama
  // 3's the cp ranks tp apart, the dp ranks a whole pipeline (tp cp pp) apart.
  const int G = L.dp_group();
  if (G > 1) {
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
    dp_time = g.time_s;
    e.dp_algorithm = g.algorithm;
    dp_exposed = overlap ? std::max(0.0, dp_time - stage_b[size_t(slow)] / v) : dp_time;
    // DeepSpeed's ZeRO-1 (software.json zero1_full_allreduce): the reduction above is a whole all-reduce,
    // not a reduce-scatter, and after the step each rank all-gathers the others' updated weights before the
    // next forward can start: one more pass of the bytes, in the open.
    const Zero1Gather z1 = zero1_step_gather(cfg, shard_params * bytes);
    if (z1.bytes > 0) {
      const double gather =
          z1.collectives * all_gather(topo, z1.bytes / z1.collectives, G, dp_per_node, groups_per_node, span).time_s +
          z1.copies.seconds(z1.bytes, z1.collectives);
      dp_time += gather;
      dp_exposed += gather;
      e.notes.push_back(
          "ZeRO-1 as DeepSpeed runs it: the gradients all-reduced whole, the updated weights all-gathered after "
          "the step");
    }
    if (L.zero >= 3) {
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
      e.dp_algorithm = ag.algorithm;
      // A stack that calls the list forms adds each collective's copies (list_collective_copies).
      const ListCopyCost copies = zero3_copies(cfg);
      const double gather_layer = per_layer * ag.time_s + copies.gather_seconds(layer_bytes, per_layer);
      const double reduce_layer = per_layer * rs.time_s + copies.seconds(layer_bytes, per_layer);
      // The embedding (and the untied or tied output layer) is one more tensor of each kind.
      const double embed_bytes = double(m.vocab) * h / L.tp * bytes;
      const double gather_embed = all_gather(topo, embed_bytes, G, dp_per_node, groups_per_node, span).time_s +
                                  copies.gather_seconds(embed_bytes);
      const double reduce_embed =
          reduce_scatter(topo, embed_bytes, G, dp_per_node, groups_per_node, span).time_s + copies.seconds(embed_bytes);
      const bool regather = L.recompute == Recompute::full && sw.zero3_gather != Zero3Gather::per_layer;
      // Without resharding after the forward (OPT's metaseq runs: --no-reshard-after-forward) each unit stays
      // whole until its backward, recomputed forward included: the backward gathers nothing.
      const bool reshard = sw.zero3_reshard_after_forward;
      const double fwd_gathers = slow_layers * gather_layer + gather_embed;
      const double bwd_gathers = reshard ? (regather ? 2 : 1) * slow_layers * gather_layer + gather_embed : 0.0;
      // Reduce-scatters after each micro-batch's backward, or of the accumulated gradients once at the end
      // (the textbook ZeRO-3 of Rajbhandari et al. Sec. 7.2.2, and the default stack's).
      const double bwd_reduces = sw.zero3_reduce_each_microbatch ? slow_layers * reduce_layer + reduce_embed : 0.0;
      const double end_reduce = sw.zero3_reduce_each_microbatch ? 0.0 : slow_layers * reduce_layer + reduce_embed;
      const double f_compute = stage_f[size_t(slow)], b_compute = stage_b[size_t(slow)];
      // A prefetch budget smaller than a module leaves that module's gather in the open, and a gradient
      // bucket smaller than a module makes its reduce-scatter hold up the backward: the share of the
      // layer's parameters in modules above each limit (the big matrices of a wide model).
      auto share_above = [&](double limit) { return zero3_share_above(m, L.tp, limit); };
      const double open_share = sw.zero3_overlap ? share_above(sw.zero3_prefetch_params) : 1.0;
      const double open_reduce = sw.zero3_overlap ? share_above(sw.zero3_reduce_bucket_params) : 1.0;
      const double hidden_f = (1 - open_share) * fwd_gathers, hidden_b = (1 - open_share) * bwd_gathers;
      const double per_mb = open_share * (fwd_gathers + bwd_gathers) + open_reduce * bwd_reduces +
                            std::max(0.0, hidden_f - f_compute) +
                            std::max(0.0, hidden_b + (1 - open_reduce) * bwd_reduces - b_compute) +
                            (sw.zero3_overlap ? (reshard ? 2 : 1) * (1 - open_share) * gather_layer : 0.0);
      dp_time = micro * (fwd_gathers + bwd_gathers + bwd_reduces) + end_reduce;
      dp_exposed = micro * per_mb + end_reduce;
      const double reduces_per_mb = sw.zero3_reduce_each_microbatch ? slow_layers * per_layer + 1 : 0;
      // The embedding is gathered for the forward and the backward (it is not recomputed).
      const int gathers_per_mb = !reshard ? 1 : regather ? 3 : 2;
      e.zero3_collectives = micro * (slow_layers * per_layer * gathers_per_mb + (reshard ? 2 : 1) + reduces_per_mb) +
                            (sw.zero3_reduce_each_microbatch ? 0 : slow_layers * per_layer + 1);
      e.notes.push_back(reshard ? "ZeRO-3 gathers each layer's weights in every micro-batch's forward and backward pass"
                                : "ZeRO-3 without resharding after the forward: each layer's weights gathered once a "
                                  "micro-batch and kept whole until its backward");
    }
  }

  // ---- the tied embedding's two gradients summed between the first and the last stage (tied_grad_bytes):
  // a two-rank all-reduce per replica and tensor rank, every pair at once, in the open after the flush.
  // Ranks are ordered tp, dp, pp (Megatron-LM's initialize_model_parallel; DeepSpeed's topology the
  // same), so the two stages share a node only when the whole job does; across nodes each of the first
  // stage's GPUs on a node (tp dp of them, at most the node) drives its own pair through the node's NICs.
  if (const double tied = tied_grad_bytes(cfg); tied > 0) {
    // The two stages are (pp - 1) stage strides apart: the whole job in Megatron-LM's order, one pipeline
    // (tp cp pp GPUs) in Llama 3's; a node holds tp cp dp or tp cp of the first stage's GPUs.
    const bool inside = sw.pipeline_inside_data_parallel;
    const bool apart = double(inside ? (long long)L.tp * L.cp * L.pp : L.ranks()) > c.gpus_per_node;
    const int first_stage = int(std::min<long long>(c.gpus_per_node, (long long)L.tp * L.cp * (inside ? 1 : L.dp)));
    e.tied_grad_s = all_reduce(topo, tied, 2, apart ? 1 : 2, apart ? first_stage : 1).time_s;
  }

  // Adam step: reads and writes fp32 master weights, momentum, variance (24 bytes), reads the gradient
  // and writes the fp16 weights (4 bytes): memory bound, on the optimizer shard this GPU owns. A stack
  // moves more around it (software.json optimizer_bytes_per_param: Megatron-LM 2019-2020 flattened the
  // gradients for the all-reduce, checked them for overflow, copied them to fp32, unscaled and measured
  // them in passes of their own). Where it checks each tensor in a loop that waits for the GPU, the GPU
  // idles while the host dispatches the next tensor's operations (optimizer_host_ops_per_tensor): the
  // stage that holds the most layers, plus the embeddings and the final LayerNorm (4 tensors), sets it.
  const double opt_params = shard_params / (L.zero >= 1 ? G : 1);
  const double step_tensors =
      sw.optimizer_host_ops_per_tensor > 0
          ? double(tensors_per_layer(m)) * *std::max_element(e.stage_layers.begin(), e.stage_layers.end()) + 4
          : 0.0;
  double optimizer_s = sw.optimizer_bytes_per_param * opt_params / hbm_rate +
                       step_tensors * sw.optimizer_host_ops_per_tensor * sw.host_op_dispatch_s;
  // ZeRO-Offload (Ren et al. 2021, Sec. 4-5): the step runs on the CPU, bound by the node's memory, which
  // all its GPUs' processes share (the same bytes a parameter, now through DRAM); the gradients reach the
  // host while the backward runs (copied per bucket on a side stream: hidden unless longer than the
  // backward), and the updated fp16 weights go back over the host link before the next forward. With the
  // parameters kept on the host (FSDP CPUOffload) they stay there: each gather fetches its shard instead.
  if ((L.offload_optimizer || L.offload_params) && c.host_memory_GBps > 0 && host_Bps > 0) {
    const double cpu_step = sw.optimizer_bytes_per_param * opt_params * c.gpus_per_node /
                            (c.host_memory_GBps * 1e9 * c.host_memory_fraction);
    const double grads_out = opt_params * bytes / host_Bps;
    const double weights_in = L.offload_params ? 0.0 : opt_params * bytes / host_Bps;
    optimizer_s = cpu_step + weights_in + std::max(0.0, grads_out - stage_b[size_t(slow)] / v);
  }

  // ---- assemble: the slowest rank sets the pace, busy m t_max; the others add the fill and the drain.
  // Narayanan et al. 2021, Sec. 2.2: with equal stages the bubble is (p-1)/m of the ideal time, (p-1)/(v m)
  // interleaved, i.e. (p - 1) chunk times (t_f + t_b)/v. With unequal stages (v = 1) the slowest stage s
  // waits for the others once each, filling and draining: sum_{i != s} (t_f + t_b)_i. With equal chunks
  // that generalises to the chunks on the path into and out of s: chunk 0 of the ranks before it (the first
  // forward and the last backward pass them) and the last chunk of the ranks after it, which stand between
  // its forward rounds and its first backward: sum_{i<s} (t_f + t_b)(i, 0) + sum_{i>s} (t_f + t_b)(i, v-1)
  // (exact, the output layer on the last chunk included). With uneven chunks the slowest rank's own warm-up
  // forwards may hide part of that path (Megatron-LM runs (p - s - 1) 2 + (v - 1) p of them first), so the
  // schedule itself is replayed with each chunk's times and free transfers (pipeline_end_s, the Gantt's
  // replay): bubble = its end - m t_max. ----
  const double t_max = stage_f[size_t(slow)] + stage_b[size_t(slow)];
  const double ideal = micro * t_max;
  double bubble = 0;
  if (L.pp > 1) {
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
      if (stage_f[size_t(i)] + stage_b[size_t(i)] > stage_f[size_t(slow_compute)] + stage_b[size_t(slow_compute)])
        slow_compute = i;
    const bool hidden_path = v == 1 && slow < p - 1 && slow_compute == slow;
    // A bound on the replay's cost (2 p m v ops); past it the path sum above stands (never below the replay
    // in the cases checked: it assumes nothing is hidden).
    if ((uneven || hidden_path) && 2.0 * p * micro * v <= 1e6)
      bubble = std::max(0.0, pipeline_end_s(L.schedule, p, micro, v, e.chunk_forward_s, e.chunk_backward_s) - ideal);
  }
  // Every micro-batch's transfers on the pacing stage (its own when paired), plus the fill and the drain:
  // the first forward and the last backward cross the p - 1 boundaries once each.
  const double pp_comm =
      L.pp > 1 ? (paired ? micro * own_p2p(slow) : micro * v * (p2p + p2p_back)) + (L.pp - 1) * (p2p + p2p_back) : 0;
  TimeBreakdown& T = e.time;
  T.compute =
      micro * (slow_layers * (fwd_compute + bwd_compute) + (slow_is_last ? 3 * logits_fwd + logits_grad_add : 0));
  T.tp_comm = micro * slow_layers * (tp_fwd + tp_bwd);
  T.cp_comm = micro * slow_layers * (cp_fwd + cp_bwd);
  T.offload = micro * slow_layers * (ckpt_fwd + ckpt_bwd);
  T.pp_comm = pp_comm + e.tied_grad_s;
  T.dp_comm = dp_exposed;
  T.bubble = bubble;
  T.optimizer = optimizer_s;
  T.total = ideal + bubble + T.pp_comm + dp_exposed + optimizer_s;
  e.iteration_time_s = T.total;

  const double gpus = double(L.ranks());
  e.achieved_tflops_per_gpu = e.hardware_flops_per_iteration / (T.total * gpus) / 1e12;
  e.model_tflops_per_gpu = e.model_flops_per_iteration / (T.total * gpus) / 1e12;
  e.mfu = e.model_flops_per_iteration / (T.total * gpus * peak);
  e.hfu = e.hardware_flops_per_iteration / (T.total * gpus * peak);  // PaLM App. B: recompute counted
  e.tokens_per_s = L.global_batch * s / T.total;
  e.iterations = cfg.training.tokens / (double(L.global_batch) * s);
  const double seconds = e.iterations * T.total;
  e.training_days = seconds / 86400.0;
  e.gpu_hours = seconds / 3600.0 * gpus;
  e.cost_usd = e.gpu_hours * c.price_per_gpu_hour_usd;
  // A layout the config's (default) stack could not run: a what-if, and said so (stack_problems).
  for (const std::string& p : stack_problems(cfg))
    e.notes.push_back("what-if: " + p.substr(p.find(':') + 2, p.find(" (software.json") - p.find(':') - 2) +
                      "; name a stack that has it with \"software\"");
  if (L.pp > 1 && L.zero >= 2)
    e.notes.push_back("ZeRO-2/3 with pipeline parallelism: gradients are reduced once per iteration here");
  // The FLOP counts follow the convention of record (Narayanan et al. 2021 eq. 3; PaLM App. B), which counts
  // the whole s x s attention; flash attention under a causal mask computes (n + 1) / 2n of its tiles
  // (layer_times). Where the scores are a large part of the count (long sequences) the utilisations above
  // then credit the GPUs with FLOPs they skip: said, with how many.
  if (sw.flash_attention && e.model_flops_per_iteration > 0) {
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
  (void)dp_time;
  return e;
}

}  // namespace mc::perf
