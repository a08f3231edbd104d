// perf_llama3_test.cpp - Llama 3 405B as its paper describes it (Dubey et al. 2024, "The Llama 3 Herd of
// Models": Table 3 architecture, Sec. 3.3 layout): activation memory under flash attention, and the layout
// of record fitting the 80 GB of an H100. Only the architecture and the layout are used here; the paper's
// throughput figures are a kept-apart validation source and are neither stored nor tested.
#include "catalog/catalog.h"
#include "perf/perf.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

namespace {

using mc::perf::Recompute;
using mc::test::catalog;
using nlohmann::json;

}  // namespace

TEST(PerfLlama3, FlashAttentionDropsTheScoreTermOfKorthikantiEq2) {
  // Korthikanti et al. 2022, eq. (2)/Table 2 for a small shape, by hand: s = 8, h = 16, a = 4, b = 2 (GPT
  // block: f = 4h, one K/V head per head). s b h = 256.
  mc::perf::ModelSpec m;
  m.seq_len = 8, m.hidden = 16, m.heads = 4, m.layers = 1, m.vocab = 32;
  const double b = 2;
  // No parallelism: s b h (34 + 5 a s / h) = 256 (34 + 10) = 11,264 bytes.
  EXPECT_DOUBLE_EQ(mc::perf::activation_bytes_per_layer(m, b, 1, false, Recompute::none), 11264.0);
  // Flash attention (Dao et al. 2022): the 5 a s^2 b bytes of scores, their dropout mask and dropout output
  // are never stored; the kernel keeps one fp32 logsumexp per query and head, 4 a s b = 256 bytes:
  // 256 x 34 + 256 = 8,960.
  EXPECT_DOUBLE_EQ(mc::perf::activation_bytes_per_layer(m, b, 1, false, Recompute::none, true), 8960.0);
  // Tensor parallel t = 2: s b h (10 + 24/t + 5 a s/(h t)) = 256 (10 + 12 + 5) = 6,912; flash: 256 x 22 +
  // 256/2 = 5,760.
  EXPECT_DOUBLE_EQ(mc::perf::activation_bytes_per_layer(m, b, 2, false, Recompute::none), 6912.0);
  EXPECT_DOUBLE_EQ(mc::perf::activation_bytes_per_layer(m, b, 2, false, Recompute::none, true), 5760.0);
  // Selective recompute already drops the term; flash attention changes nothing there: s b h (10 + 24/t).
  EXPECT_DOUBLE_EQ(mc::perf::activation_bytes_per_layer(m, b, 2, false, Recompute::selective, true), 256.0 * 22);
}

TEST(PerfLlama3, LayoutOfRecordFitsAnH100) {
  // "Llama 3 405B on its cluster": tp 8, pp 16, dp 128, interleaved with 8 chunks per rank, one sequence per
  // micro-batch, no activation checkpointing (Sec. 3.3.2), FSDP sharding gradients and optimizer state (ZeRO-2
  // in memory), sequence parallel, on Meta's stack with flash attention. Before flash attention's activations
  // were modelled the first stage held the s x s scores of 8,192-token sequences: 128 heads x 8192^2 x 5 bytes
  // / 8 = 5.4 GB per layer and micro-batch, 961 GB in all. Now: 6.4 GB of bf16 weights, 0.35 GB of sharded
  // gradients and Adam state, 72.5 GB of activations on the second stage (16 micro-batches = 16 stages: its
  // warm-up runs all 16 x 8 = 128 chunk forwards of one layer each, 0.57 GB each, s b h 33.75 / 8 with GQA and
  // the SwiGLU width): 79.3 GB, under the H100's 80 GiB.
  const json e = mc::perf::estimate_json(
      catalog(), {{"model", {{"preset", "llama3-405b"}}}, {"cluster", {{"preset", "meta-llama3-2024"}}}});
  EXPECT_EQ(e["software"], "meta-llama3-2024");
  EXPECT_EQ(e["layout"]["recompute"], "none");
  EXPECT_EQ(e["layout"]["zero"], 2);
  EXPECT_TRUE(e["layout"]["sequence_parallel"].get<bool>());
  EXPECT_TRUE(e["fits"].get<bool>()) << e["memory_per_gpu_bytes"].dump();
  const json& mem = e["memory_per_gpu_bytes"];
  EXPECT_LT(mem["total"].get<double>(), mem["hbm"].get<double>());
  // The activations by hand: s b h = 8192 x 16384; per layer (Korthikanti Table 2 with sequence parallelism,
  // f = 1.5 x 53,248 for SwiGLU, K/V of 8 x 128): (7h + 4 x 1024) + (3h + 4f) + 4h = 33.75 h per token, / 8.
  const double per_layer = 8192.0 * 16384 * 33.75 / 8 + 4.0 * 128 * 8192 / 8;  // + the logsumexp
  EXPECT_NEAR(mem["activations"].get<double>(), 128 * per_layer, 1e6);
}

TEST(PerfLlama3, ParameterCountFromTable3) {
  // Table 3 of the Llama 3 paper: 126 layers, model dimension h = 16,384, 128 heads of 128 (d = 128), 8
  // key/value heads, SwiGLU FFN of 53,248, vocabulary 128,000, RoPE. By hand, per layer:
  //   attention  Q and output h^2 each, K and V h x 8 x 128 each: 2 x 268,435,456 + 2 x 16,777,216 = 570,425,344
  //   SwiGLU     gate, up and down, h x 53,248 each: 3 x 872,415,232                             = 2,617,245,696
  //   RMSNorm    two gains of h                                                                 = 32,768
  //   one layer (no biases)                                                                      = 3,187,703,808
  // 126 layers = 401,650,679,808; the token embedding and the (untied) output matrix, 128,000 x 16,384 each,
  // add 4,194,304,000; the final RMSNorm 16,384; RoPE has no table: 405,845,000,192, the "405B" of the name.
  const json e = mc::perf::estimate_json(
      catalog(), {{"model", {{"preset", "llama3-405b"}}}, {"cluster", {{"preset", "meta-llama3-2024"}}}});
  EXPECT_DOUBLE_EQ(e["params"].get<double>(), 405845000192.0);
  // Each convention on its own, on a GPT-style config (learned positions, tied output, biases, LayerNorm):
  // RoPE removes the s x h table, an untied output adds V x h, no biases remove (h + 2h) + h + (4h + h) per
  // layer, RMSNorm removes 2h per layer and h at the end.
  json gpt = {{"model", {{"layers", 2}, {"hidden", 64}, {"heads", 4}, {"seq_len", 128}, {"vocab", 1000}}},
              {"cluster", {{"preset", "selene-2021"}, {"gpus", 8}}},
              {"parallel", {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"global_batch", 8}}}};
  const double base = mc::perf::estimate_json(catalog(), gpt)["params"].get<double>();
  // GPT block by hand: per layer 12 h^2 + 13 h = 49,152 + 832; embeddings (V + s) h = 72,192; final 2h.
  EXPECT_DOUBLE_EQ(base, 2 * (12.0 * 64 * 64 + 13 * 64) + (1000 + 128) * 64 + 2 * 64);
  auto with = [&](const char* key, const json& v) {
    json c = gpt;
    c["model"][key] = v;
    return mc::perf::estimate_json(catalog(), c)["params"].get<double>();
  };
  EXPECT_DOUBLE_EQ(with("position_embedding", "rope"), base - 128 * 64);
  EXPECT_DOUBLE_EQ(with("tied_output", false), base + 1000 * 64);
  EXPECT_DOUBLE_EQ(with("linear_biases", false), base - 2 * (9 * 64));
  EXPECT_DOUBLE_EQ(with("norm", "rmsnorm"), base - 2 * (2 * 64) - 64);
}

TEST(PerfLlama3, TensorParallelMustDivideTheKeyValueHeads) {
  // Llama 3 405B has 8 key/value heads (Table 3): tp 16 divides its 128 query heads and its FFN, but a rank
  // cannot hold half a K/V head.
  try {
    mc::perf::estimate_json(catalog(), {{"model", {{"preset", "llama3-405b"}}},
                                        {"cluster", {{"preset", "meta-llama3-2024"}}},
                                        {"parallel", {{"tp", 16}, {"pp", 16}, {"dp", 64}, {"micro_batch", 1}}}});
    ADD_FAILURE() << "tp 16 over 8 key/value heads was accepted";
  } catch (const mc::LoadError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kv_heads"), std::string::npos) << what;
    EXPECT_NE(what.find("use tp 8"), std::string::npos) << what;
  }
  // tp 8, as the paper ran it, is accepted.
  EXPECT_NO_THROW(mc::perf::estimate_json(catalog(), {{"model", {{"preset", "llama3-405b"}}},
                                                      {"cluster", {{"preset", "meta-llama3-2024"}}},
                                                      {"parallel", {{"tp", 8}, {"pp", 16}, {"dp", 128}}}}));
}
