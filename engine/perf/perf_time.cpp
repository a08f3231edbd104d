// perf_time.cpp - time of one training iteration from physics: GEMMs against a tile/wave-quantized
// roofline, memory-bound kernels against HBM bandwidth, collectives as latency + bandwidth over NVLink,
// NICs and the fat-tree, the pipeline bubble, and the optimizer step.
#include "perf/collectives.h"
#include "perf/perf.h"

#include <algorithm>
#include <cmath>

namespace mc::perf {

namespace {

double peak_for(const ClusterSpec& c, Precision p) {
  switch (p) {
    case Precision::fp16: return c.peak_fp16_flops;
    case Precision::bf16: return c.peak_bf16_flops;
    case Precision::fp32: return c.peak_fp32_flops;
  }
  return c.peak_fp16_flops;
}

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
  double flops_fwd = 0, gemm_efficiency = 0;
};

// One transformer layer on one GPU for one micro-batch of b sequences, tensor-parallel over t
// (Megatron-LM: QKV and fc1 column-split, proj and fc2 row-split; Shoeybi et al. 2019, Sec. 3).
LayerTimes layer_times(const Config& cfg) {
  const ModelSpec& m = cfg.model;
  const ClusterSpec& c = cfg.cluster;
  const Layout& L = cfg.layout;
  const double peak = peak_for(c, cfg.training.precision);
  const double bytes = cfg.training.precision == Precision::fp32 ? 4 : 2;
  const double b = L.micro_batch, s = m.seq_len, h = m.hidden, t = L.tp, a = m.heads;
  const double dh = h / a, kvd = m.kv() * dh, f = m.ffn();
  const double tokens = b * s;
  LayerTimes lt;
  const double mlp_in = m.gated_mlp ? 2 * f : f;
  lt.gemm_fwd = gemm_time_s(c, peak, 1, tokens, (h + 2 * kvd) / t, h, bytes) +  // QKV
                gemm_time_s(c, peak, 1, tokens, h, h / t, bytes) +              // attention output proj
                gemm_time_s(c, peak, 1, tokens, mlp_in / t, h, bytes) +         // fc1 (and gate)
                gemm_time_s(c, peak, 1, tokens, h, f / t, bytes);               // fc2
  // Attention core: (b a/t) batched [s x d] @ [d x s] and [s x s] @ [s x d].
  lt.attn_core_fwd = gemm_time_s(c, peak, b * a / t, s, s, dh, bytes) + gemm_time_s(c, peak, b * a / t, s, dh, s, bytes);
  // Memory-bound kernels, counted in elements read + written (Megatron's fused kernels): two LayerNorms
  // (2 + 2), two bias-dropout-residual adds (3.5 each incl. the 1-byte mask) on s b h, replicated over
  // the t ranks unless sequence parallel; bias-GeLU on the MLP activation (2 f/t); scaled-masked softmax
  // (2) and attention dropout (2.5) on the a s^2 b / t scores.
  const double sbh = s * b * h;
  const double repl = 11 * sbh / (L.sequence_parallel ? t : 1.0);
  const double split = 2 * s * b * mlp_in / t;
  const double scores = 4.5 * a * s * s * b / t;
  const double hbm = c.hbm_bandwidth_GBps * 1e9 * c.elementwise_hbm_fraction;
  lt.elementwise_fwd = bytes * (repl + split) / hbm + 6 * c.kernel_overhead_s;
  lt.attn_elementwise_fwd = bytes * scores / hbm + 2 * c.kernel_overhead_s;
  lt.flops_fwd = 2 * tokens * (h * (h + 2 * kvd) + h * h + (m.gated_mlp ? 3 : 2) * h * f) / t + 4 * b * s * s * h / t;
  lt.gemm_efficiency = lt.flops_fwd / ((lt.gemm_fwd + lt.attn_core_fwd) * peak);
  return lt;
}

}  // namespace

Estimate estimate(const Config& cfg) {
  const ModelSpec& m = cfg.model;
  const ClusterSpec& c = cfg.cluster;
  const Layout& L = cfg.layout;
  Estimate e;
  const double bytes = cfg.training.precision == Precision::fp32 ? 4 : 2;
  const double peak = peak_for(c, cfg.training.precision);
  const double b = L.micro_batch, s = m.seq_len, h = m.hidden;
  const int micro = L.micro_batches();
  const int v = L.schedule == Schedule::interleaved ? std::max(1, L.virtual_stages) : 1;
  const double layers_per_stage = double(m.layers) / L.pp;

  e.params = param_count(m);
  e.model_flops_per_iteration = model_flops_per_iteration(m, L.global_batch);
  e.hardware_flops_per_iteration = hardware_flops_per_iteration(m, L.global_batch, L.recompute);
  e.six_nd_flops_per_iteration = six_nd_flops(e.params, double(L.global_batch) * s);
  e.memory = memory_per_gpu(cfg);
  e.hbm_bytes = c.hbm_bytes;
  e.fits = e.memory.total <= c.hbm_bytes;

  // ---- per layer, per micro-batch ----
  const LayerTimes lt = layer_times(cfg);
  e.gemm_efficiency = lt.gemm_efficiency;
  const double fwd_compute = lt.gemm_fwd + lt.attn_core_fwd + lt.elementwise_fwd + lt.attn_elementwise_fwd;
  // Backward: two GEMMs per forward GEMM (input and weight gradients) and about twice the element-wise
  // traffic (Narayanan et al. 2021, Sec. 5.1: backward = 2 x forward).
  double bwd_compute = 2 * fwd_compute;
  if (L.recompute == Recompute::full) bwd_compute += fwd_compute;
  if (L.recompute == Recompute::selective) bwd_compute += lt.attn_core_fwd + lt.attn_elementwise_fwd;

  // Tensor-parallel communication: 2 all-reduces of b s h in the forward pass, 2 in the backward, 2 more
  // when the forward is recomputed (comm_volume.h); with sequence parallelism each all-reduce becomes a
  // reduce-scatter + all-gather of the same total volume (Korthikanti et al. 2022, Sec. 4.2.2).
  const Topology topo = topology_of(c);
  const int tp_per_node = std::min(L.tp, c.gpus_per_node);
  const Collective tp_ar = all_reduce(topo, b * s * h * bytes, L.tp, tp_per_node, 1);
  e.tp_algorithm = L.tp > 1 ? tp_ar.algorithm : "none";
  const double tp_fwd = 2 * tp_ar.time_s;
  double tp_bwd = 2 * tp_ar.time_s + (L.recompute == Recompute::full ? tp_fwd : 0);

  // ---- per stage, per micro-batch: chunks of l/(p v) layers; the last stage also runs the logits ----
  const double logits_fwd = gemm_time_s(c, peak, 1, b * s, double(m.vocab) / L.tp, h, bytes) +
                            bytes * 3 * b * s * double(m.vocab) / L.tp / (c.hbm_bandwidth_GBps * 1e9 * c.elementwise_hbm_fraction);
  const double stage_f = layers_per_stage * (fwd_compute + tp_fwd) + logits_fwd;
  const double stage_b = layers_per_stage * (bwd_compute + tp_bwd) + 2 * logits_fwd;
  e.stage_forward_s = stage_f / v;  // one chunk
  e.stage_backward_s = stage_b / v;

  // Pipeline point-to-point: b s h per boundary (s b h / t each over t NICs with scatter/gather,
  // Narayanan et al. 2021 Sec. 4.1), over the InfiniBand when the next stage lives on another node.
  double p2p = 0;
  if (L.pp > 1) {
    const bool sg = L.scatter_gather && L.tp > 1;
    const double msg = pp_boundary_bytes(b, s, h, bytes) / (sg ? L.tp : 1);
    const bool cross_node = L.tp * L.dp >= c.gpus_per_node || c.gpus_per_node == 1;
    p2p = point_to_point(topo, msg, cross_node).time_s;
    if (sg) p2p += all_gather(topo, pp_boundary_bytes(b, s, h, bytes), L.tp, tp_per_node, 1).time_s;
  }
  e.p2p_s = p2p;

  // ---- data parallel: gradients of the stage shard (fp16, or fp32 in fp32 training) ----
  const double shard_params = memory_per_gpu(Config{m, c, Layout{L.tp, L.pp, 1, L.micro_batch, L.global_batch,
                                                                 L.schedule, L.virtual_stages, 0}, cfg.training})
                                  .weights / bytes;
  double dp_time = 0;
  e.dp_algorithm = "none";
  if (L.dp > 1) {
    const int dp_per_node = std::max(1, std::min(L.dp, c.gpus_per_node / std::min(c.gpus_per_node, L.tp)));
    const int groups_per_node = std::max(1, c.gpus_per_node / (dp_per_node));
    const Collective g = all_reduce(topo, shard_params * bytes, L.dp, dp_per_node, groups_per_node);
    dp_time = g.time_s;
    e.dp_algorithm = g.algorithm;
    if (L.zero >= 3) {
      // ZeRO-3 (Rajbhandari et al. 2020, Sec. 7.2.2): a reduce-scatter of the gradients plus an all-gather
      // of the weights in every micro-batch's forward and backward (3 Psi per step at m = 1); no
      // all-gather after the step, so the gradient term is the reduce-scatter alone, not an all-reduce.
      const Collective ag = all_gather(topo, shard_params * bytes, L.dp, dp_per_node, groups_per_node);
      dp_time = reduce_scatter(topo, shard_params * bytes, L.dp, dp_per_node, groups_per_node).time_s +
                2.0 * micro * ag.time_s;
      e.notes.push_back("ZeRO-3 re-gathers the weights in each micro-batch's forward and backward pass");
    }
  }
  double dp_exposed = dp_time;
  if (L.overlap_dp_comm) dp_exposed = std::max(0.0, dp_time - stage_b / v);

  // Adam step: reads and writes fp32 master weights, momentum, variance (24 bytes), reads the gradient
  // and writes the fp16 weights (4 bytes): memory bound, on the optimizer shard this GPU owns.
  const double opt_params = shard_params / (L.zero >= 1 ? L.dp : 1);
  const double optimizer_s = 28.0 * opt_params / (c.hbm_bandwidth_GBps * 1e9 * c.elementwise_hbm_fraction);

  // ---- assemble (Narayanan et al. 2021 eq. (1): batch time = (m + (p-1)/v) (t_f + t_b)) ----
  const double per_mb = stage_f + stage_b;
  const double ideal = micro * per_mb;
  const double bubble = bubble_over_ideal(L.schedule, L.pp, micro, v) * ideal;
  const double pp_comm = L.pp > 1 ? 2.0 * (micro * v + L.pp - 1) * p2p : 0;
  TimeBreakdown& T = e.time;
  const double stage_compute = micro * (layers_per_stage * (fwd_compute + bwd_compute) + 3 * logits_fwd);
  T.compute = stage_compute;
  T.tp_comm = micro * layers_per_stage * (tp_fwd + tp_bwd);
  T.pp_comm = pp_comm;
  T.dp_comm = dp_exposed;
  T.bubble = bubble;
  T.optimizer = optimizer_s;
  T.total = ideal + bubble + pp_comm + dp_exposed + optimizer_s;
  e.iteration_time_s = T.total;

  const double gpus = double(L.tp) * L.pp * L.dp;
  e.achieved_tflops_per_gpu = e.hardware_flops_per_iteration / (T.total * gpus) / 1e12;
  e.mfu = e.model_flops_per_iteration / (T.total * gpus * peak);
  e.tokens_per_s = L.global_batch * s / T.total;
  e.iterations = cfg.training.tokens / (double(L.global_batch) * s);
  const double seconds = e.iterations * T.total;
  e.training_days = seconds / 86400.0;
  e.gpu_hours = seconds / 3600.0 * gpus;
  e.cost_usd = e.gpu_hours * c.price_per_gpu_hour_usd;
  if (L.pp > 1 && L.zero >= 2)
    e.notes.push_back("ZeRO-2/3 with pipeline parallelism: gradients are reduced once per iteration here");
  return e;
}

}  // namespace mc::perf
