// What ZeRO-3 holds whole, and when, by hand.
//  - ZeRO-3 gathers each layer's weights whole before it computes and drops them after (Rajbhandari et al.
//    2020, Sec. 5.3); in the backward the unit's gradient is whole until its reduce-scatter. FSDP holds the
//    block computing and the one prefetched under it (PyTorch FSDP docs, limit_all_gathers); DeepSpeed the
//    module computing, those after it that fit stage3_prefetch_bucket_size (5e7 elements), the module's
//    gradient and the reduce bucket (reduce_bucket_size, 5e8 elements).
//  - The logits and their gradient live from the loss until the output layer's backward, before any layer is
//    recomputed: under full recompute the peak holds one of the two, not both.
// Every model here is a GPT block (biases, LayerNorm) with h = 64 a, so a layer's parameters are
// 12 h^2 + 13 h and its recomputed activations s b h (34 + 5 a s / h) bytes (Korthikanti et al. 2022, Table 2).
#include "perf_helpers.h"

#include <gtest/gtest.h>

using mc::json;
using mc::test::config_of;

namespace {

json zero3_run(const std::string& software, int hidden, int vocab, int micro_batch) {
  return {{"model", {{"layers", 32}, {"hidden", hidden}, {"heads", hidden / 64}, {"seq_len", 2048}, {"vocab", vocab}}},
          {"cluster", {{"gpu", "a100-80gb"}, {"gpus", 64}, {"gpus_per_node", 8}, {"node_network_Gbps", 1600}}},
          {"parallel",
           {{"tp", 1},
            {"pp", 1},
            {"dp", 64},
            {"zero", 3},
            {"micro_batch", micro_batch},
            {"global_batch", 64 * micro_batch},
            {"recompute", "full"}}},
          {"software", software},
          {"training", {{"precision", "bf16"}}}};
}

double layer_params(double h) { return 12 * h * h + 13 * h; }

// One layer's activations while it is recomputed, and everything else the first (and only) stage holds under
// full recompute: a checkpoint of 2 s b h bytes per layer and the embedding's output.
double recomputed(double h, double s, double b) { return s * b * h * (34 + 5 * (h / 64) * s / h); }
double checkpoints(double h, double s, double b, int layers) { return (layers + 1) * 2 * s * b * h; }

}  // namespace

TEST(PerfZero3Memory, FsdpHoldsTheRunningBlockThePrefetchedOneAndOneGradientWhole) {
  // h = 4096, vocab 8192: the layer's moment is the peak (the logits are 8 x 2048 x 8192 bytes). PyTorch's
  // FSDP of 2022 (one unit per block, the next one's all-gather prefetched; no flash attention).
  const mc::perf::Config c = config_of(zero3_run("pytorch-fsdp-2022", 4096, 8192, 1));
  ASSERT_EQ(c.software.zero3_gather, mc::perf::Zero3Gather::per_layer);
  ASSERT_TRUE(c.software.zero3_overlap);
  const mc::perf::Estimate e = mc::perf::estimate(c);
  const double unit = layer_params(4096);
  EXPECT_NEAR(e.memory.gathered, 2.0 * (2 * unit + unit), 1.0);  // two blocks and one gradient, bf16
  EXPECT_NEAR(e.memory.activations, checkpoints(4096, 2048, 1, 32) + recomputed(4096, 2048, 1), 1.0);
  EXPECT_NEAR(e.memory.total,
              e.memory.weights + e.memory.gradients + e.memory.optimizer + e.memory.activations + e.memory.gathered,
              1.0);

  // Without the prefetch only the running block is whole.
  mc::perf::Config waits = c;
  waits.software.zero3_overlap = false;
  EXPECT_NEAR(mc::perf::estimate(waits).memory.gathered, 2.0 * 2 * unit, 1.0);

  // ZeRO-2 keeps every weight whole already: nothing is gathered, and the JSON says so only under ZeRO-3.
  json z2 = zero3_run("pytorch-fsdp-2022", 4096, 8192, 1);
  z2["parallel"]["zero"] = 2;
  EXPECT_EQ(mc::perf::estimate(config_of(z2)).memory.gathered, 0.0);
  const json j3 = mc::perf::estimate_json(mc::test::catalog(), zero3_run("pytorch-fsdp-2022", 4096, 8192, 1), "a");
  EXPECT_NEAR(j3.at("memory_per_gpu_bytes").at("gathered").get<double>(), e.memory.gathered, 1.0);
  EXPECT_FALSE(mc::perf::estimate_json(mc::test::catalog(), z2, "b").at("memory_per_gpu_bytes").contains("gathered"));
}

TEST(PerfZero3Memory, DeepSpeedHoldsTheModulesItsPrefetchBudgetReachesAndTheReduceBucket) {
  // h = 2048: QKV 3 h^2 = 12.6 M, projection 4.2 M, fc1 and fc2 16.8 M elements each. All four fit the 5e7
  // budget together, so after any module the rest of the layer's go out: 12 h^2 whole. fc1's gradient (4 h^2)
  // is the largest, and the bucket is full (the stage holds 1.6e9 parameters).
  const mc::perf::Config c = config_of(zero3_run("deepspeed-2022", 2048, 8192, 8));
  ASSERT_EQ(c.software.zero3_prefetch_params, 5e7);
  ASSERT_EQ(c.software.zero3_reduce_bucket_params, 5e8);
  const double h = 2048;
  const mc::perf::Estimate e = mc::perf::estimate(c);
  EXPECT_NEAR(e.memory.gathered, 2.0 * (12 * h * h + 4 * h * h + 5e8), 1.0);
  EXPECT_NEAR(e.memory.activations, checkpoints(h, 2048, 8, 32) + recomputed(h, 2048, 8), 1.0);
  // Waiting for each gather (DeepSpeed before 0.6): the module computing alone, at most fc1's 4 h^2.
  mc::perf::Config waits = c;
  waits.software.zero3_overlap = false;
  EXPECT_NEAR(mc::perf::estimate(waits).memory.gathered, 2.0 * (4 * h * h + 4 * h * h + 5e8), 1.0);

  // h = 8192: every module is over the budget, so nothing is prefetched and fc1 (or fc2), 4 h^2, is the most
  // that is whole, weights and gradient.
  const double H = 8192;
  const mc::perf::Estimate wide = mc::perf::estimate(config_of(zero3_run("deepspeed-2022", 8192, 8192, 1)));
  EXPECT_NEAR(wide.memory.gathered, 2.0 * (4 * H * H + 4 * H * H + 5e8), 1.0);
}

TEST(PerfZero3Memory, TheLogitsAndARecomputedLayerAreNeverHeldAtOnce) {
  // No ZeRO-3: a 64k-token vocabulary's fp32 logits and gradient (8 s b V = 1.07 GB at b = 1) outweigh the
  // recomputed layer of h = 1024 (0.4 GB); with an 8k vocabulary the layer does. The peak takes the larger.
  auto run = [](int vocab) {
    json c = zero3_run("megatron-lm-2021", 1024, vocab, 1);
    c["parallel"]["zero"] = 0;
    c["parallel"]["dp"] = 1, c["parallel"]["global_batch"] = 1;
    c["cluster"]["gpus"] = 1, c["cluster"]["gpus_per_node"] = 1;
    return mc::perf::estimate(config_of(c)).memory;
  };
  const double held = checkpoints(1024, 2048, 1, 32), layer = recomputed(1024, 2048, 1);
  const mc::perf::MemoryBreakdown big = run(65536), small = run(8192);
  ASSERT_GT(8.0 * 2048 * 65536, layer);
  ASSERT_LT(8.0 * 2048 * 8192, layer);
  EXPECT_NEAR(big.activations, held + 8.0 * 2048 * 65536, 1.0);
  EXPECT_NEAR(small.activations, held + layer, 1.0);
  EXPECT_EQ(big.gathered, 0.0);
}

TEST(PerfZero3Memory, TorchtitanKeepsTheOutputsOfEveryOtherMatmulAndOfTheAttentionKernel) {
  // A Llama block (h = 4096, 32 heads, 8 KV heads of 128, SwiGLU of 14336) on one GPU, torchtitan's per-op
  // selective recompute: each layer keeps its input and the outputs of wq, wv, w1, w2 and the attention kernel
  // (2 bytes each) and the kernel's fp32 logsumexp; the first stage adds its embedding's output and, as the last
  // stage too, the fp32 logits and their gradient.
  json c = {{"model",
             {{"layers", 4},
              {"hidden", 4096},
              {"heads", 32},
              {"kv_heads", 8},
              {"ffn_hidden", 14336},
              {"gated_mlp", true},
              {"seq_len", 2048},
              {"vocab", 32000}}},
            {"cluster", {{"gpu", "a100-80gb"}, {"gpus", 1}, {"gpus_per_node", 1}}},
            {"parallel",
             {{"tp", 1}, {"pp", 1}, {"dp", 1}, {"micro_batch", 2}, {"global_batch", 2}, {"recompute", "selective"}}},
            {"software", "torchtitan-2024"},
            {"training", {{"precision", "bf16"}}}};
  const double s = 2048, b = 2, h = 4096;
  const double layer = 2 * s * b * (h + 1024 + 14336 + h + h + h) + 4 * 32 * s * b;
  const mc::perf::MemoryBreakdown mem = mc::perf::estimate(config_of(c)).memory;
  EXPECT_NEAR(mem.activations, 4 * layer + 2 * s * b * h + 8 * s * b * 32000, 1.0);
  // Korthikanti's selective policy (Megatron-LM's) keeps every activation but the attention core's: more.
  mc::perf::Config korthikanti = config_of(c);
  korthikanti.software.selective_every_second_matmul = false;
  EXPECT_GT(mc::perf::estimate(korthikanti).memory.activations, mem.activations + 4 * 0.5 * layer);
}
