// The attention and recompute costs of the flash-attention stacks, by hand.
//  - FlashAttention (Dao et al. 2022, Alg. 1) keeps the scores on chip: HBM carries Q, K, V and the output
//    only. Under the causal mask FlashAttention-2 skips the tiles above the diagonal (Dao 2023, Sec. 3.1.1),
//    n (n + 1) / 2 of n x n tiles of 128, and its backward recomputes the scores: 2.5 x the forward's FLOPs
//    (Sec. 4.1).
//  - torchtitan's per-op selective recompute (parallelize_llama.py, 2024) saves every matmul's output but the
//    second, fourth and sixth of a layer (wk, wo, w3 of Llama's wq, wk, wv, wo, w1, w3, w2) and the attention
//    kernel's, so the backward re-runs those three matmuls and the element-wise ops, not the attention core.
// The shapes are picked so that every GEMM fills whole waves of the A100's 108 SMs with the model's 256 x 128
// tiles, so each product's time is its FLOPs at the stack's GEMM rate times K / (K + 64) (perf_time.cpp).
#include "perf_helpers.h"

#include <gtest/gtest.h>

using mc::json;
using mc::test::config_of;

namespace {

// 27 heads of 128 (h = 3456), s = 2048, one sequence on one A100-80GB.
json one_gpu(const std::string& software, const std::string& recompute, bool gated) {
  json model = {{"layers", 2}, {"hidden", 3456}, {"heads", 27}, {"seq_len", 2048}, {"vocab", 50304}};
  if (gated) model["gated_mlp"] = true, model["ffn_hidden"] = 13824;
  return {{"model", model},
          {"cluster", {{"gpu", "a100-80gb"}, {"gpus", 1}, {"gpus_per_node", 1}}},
          {"parallel",
           {{"tp", 1}, {"pp", 1}, {"dp", 1}, {"micro_batch", 1}, {"global_batch", 1}, {"recompute", recompute}}},
          {"software", software},
          {"training", {{"precision", "bf16"}}}};
}

double gemm_rate(const mc::perf::Config& c) {
  const double frac = c.software.gemm_fraction > 0 ? c.software.gemm_fraction : c.cluster.matmul_peak_fraction;
  return c.cluster.peak_bf16_flops * frac;
}

}  // namespace

TEST(PerfAttention, FlashAttentionSkipsTheMaskedTilesAndKeepsTheScoresOnChip) {
  const mc::perf::Config c = config_of(one_gpu("llm-c-2024", "none", false));
  ASSERT_TRUE(c.software.flash_attention);
  ASSERT_EQ(c.cluster.sm_count, 108);
  const mc::perf::Estimate e = mc::perf::estimate(c);
  // QK^T: 27 heads of [2048 x 128] @ [128 x 2048], 27 x 8 x 16 = 3456 tiles = 32 waves, K = 128.
  // PV: 27 heads of [2048 x 2048] @ [2048 x 128], 27 x 8 x 1 = 216 tiles = 2 waves, K = 2048.
  const double rate = gemm_rate(c);
  const double qk = 2.0 * 27 * 2048 * 2048 * 128 / (rate * 128 / 192);
  const double pv = 2.0 * 27 * 2048 * 128 * 2048 / (rate * 2048 / 2112);
  const double causal = 17.0 / 32;  // 16 x 16 tiles of 128: 16 x 17 / 2 computed
  const double io = 4.0 * 2048 * 128 * 27 * 2 / (c.cluster.hbm_bandwidth_GBps * 1e9);
  ASSERT_GT(causal * (qk + pv), io);  // math-bound: the s x s scores would have made it memory-bound
  const double core = causal * (qk + pv) + c.cluster.kernel_overhead_s;
  // Without recompute the backward is twice the forward plus half the attention core again (2.5 x).
  EXPECT_NEAR(e.layer_backward_s - 2 * e.layer_forward_s, 0.5 * core, 1e-9 * core);

  // The same layer with the scores through HBM (a stack without flash attention) is slower by more than the
  // skipped half: the s x s writes and the softmax and dropout passes over them.
  mc::perf::Config unfused = c;
  unfused.software.flash_attention = false;
  const mc::perf::Estimate u = mc::perf::estimate(unfused);
  EXPECT_GT(u.layer_forward_s - e.layer_forward_s, (1 - causal) * (qk + pv));
}

TEST(PerfAttention, TorchtitanSelectiveRecomputeRerunsEverySecondMatmul) {
  const mc::perf::Config none = config_of(one_gpu("torchtitan-2024", "none", true));
  const mc::perf::Config sel = config_of(one_gpu("torchtitan-2024", "selective", true));
  ASSERT_TRUE(sel.software.selective_every_second_matmul);
  EXPECT_FALSE(config_of(one_gpu("meta-llama3-2024", "selective", true)).software.selective_every_second_matmul);
  // Over the 2048 tokens: wk and wo are [2048 x 3456] @ [3456 x 3456] (8 x 27 = 216 tiles, 2 waves), w3 is
  // [2048 x 3456] @ [3456 x 13824] (8 x 108 = 864 tiles, 8 waves); K = 3456 for all three.
  const double rate = gemm_rate(sel), k = 3456.0 / 3520, o = sel.cluster.kernel_overhead_s;
  const double wk = 2.0 * 2048 * 3456 * 3456 / (rate * k) + o, wo = wk;
  const double w3 = 2.0 * 2048 * 3456 * 13824 / (rate * k) + o;
  // The element-wise ops run again: two norms and two residual adds on s b h (11 elements read or written
  // each), SwiGLU on the two s b f inputs, at the stack's traffic factor, plus their six kernels' tails.
  const double hbm = sel.cluster.hbm_bandwidth_GBps * 1e9 * sel.cluster.elementwise_hbm_fraction;
  const double sbh = 2048.0 * 3456, sbf = 2048.0 * 13824;
  const double elementwise = sel.software.elementwise_factor * 2 * (11 * sbh + 2 * 2 * sbf) / hbm + 6 * o;
  const double expected = wk + wo + w3 + elementwise;
  const double extra = mc::perf::estimate(sel).layer_backward_s - mc::perf::estimate(none).layer_backward_s;
  EXPECT_NEAR(extra, expected, 1e-9 * expected);
  // Korthikanti's policy would have re-run the attention core instead: a different, smaller cost here.
  mc::perf::Config korthikanti = sel;
  korthikanti.software.selective_every_second_matmul = false;
  const double attention_only =
      mc::perf::estimate(korthikanti).layer_backward_s - mc::perf::estimate(none).layer_backward_s;
  EXPECT_LT(attention_only, 0.5 * expected);
}
