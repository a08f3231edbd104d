// perf_time.cpp - the physics of one training iteration's parts: GEMMs against a tile/wave-quantized roofline,
// a transformer layer's kernels (memory-bound ones against HBM bandwidth), ZeRO-3's collectives and copies,
// host links. perf_estimate.cpp composes them (with the collectives, the pipeline and the optimizer) into
// estimate().
#include "perf/collectives.h"
#include "perf/perf.h"
#include "perf/perf_time_parts.h"

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

namespace detail {

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

}  // namespace detail

using detail::modules_per_layer;
using detail::tensors_per_layer;

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

}  // namespace mc::perf
