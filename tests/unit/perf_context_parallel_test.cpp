// perf_context_parallel_test.cpp - context parallelism (Dubey et al. 2024, "The Llama 3 Herd of Models",
// Sec. 3.3.2 and Table 4): each sequence split over cp GPUs along its length, keys and values all-gathered
// before every attention. Checked against arithmetic by hand (memory, collective times), against the same
// tokens run data parallel (the work is split, not added), in the simulator, and on the long-context layout
// of record (tp 8, cp 16, pp 16, dp 8 on 16,384 H100s at 131,072 tokens), which was refused before. The
// paper's throughput for that stage is a kept-apart validation source: neither stored nor tested here.
#include "catalog/catalog.h"
#include "perf/collectives.h"
#include "perf/perf.h"
#include "perf_helpers.h"
#include "sim/sim.h"
#include "sim/sim_config.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

namespace {

using mc::test::catalog;
using mc::test::error_of;
using nlohmann::json;

// A Llama-shaped model on one 8-GPU A100 node, on the one catalog stack with context parallelism.
json node_config(int cp, int dp, int seq_len, int global_batch) {
  return {
      {"model",
       {{"layers", 4},
        {"hidden", 4096},
        {"heads", 32},
        {"kv_heads", 8},
        {"seq_len", seq_len},
        {"vocab", 32000},
        {"position_embedding", "rope"},
        {"tied_output", false},
        {"linear_biases", false},
        {"norm", "rmsnorm"}}},
      {"cluster", {{"preset", "selene-2021"}, {"gpus", 8}}},
      {"software", "meta-llama3-2024"},
      {"training", {{"precision", "bf16"}}},
      {"parallel", {{"tp", 1}, {"cp", cp}, {"pp", 1}, {"dp", dp}, {"micro_batch", 1}, {"global_batch", global_batch}}}};
}

mc::perf::Config parse(const json& j) { return mc::perf::parse_config(catalog(), j, "test.json", true); }

json llama3_long_context() {
  // Table 4's last row: 16,384 GPUs, TP 8, CP 16, PP 16, DP 8, sequences of 131,072 tokens, 16 a replica
  // (16M tokens a step); the interleaved pipeline and stage split of the 8K stage (Sec. 3.3.2).
  return {{"model", {{"preset", "llama3-405b"}, {"seq_len", 131072}}},
          {"cluster", {{"preset", "meta-llama3-2024"}, {"gpus", 16384}}},
          {"parallel",
           {{"tp", 8},
            {"cp", 16},
            {"pp", 16},
            {"dp", 8},
            {"micro_batch", 1},
            {"global_batch", 128},
            {"schedule", "interleaved"},
            {"virtual_stages", 8},
            {"embedding_stages", "as-layers"},
            {"zero", 2},
            {"sequence_parallel", true}}}};
}

}  // namespace

TEST(PerfContextParallel, SplitsEachSequencesActivationsAndShardsOverDpTimesCp) {
  // cp 8 on one node: every GPU holds 1/8 of each sequence. Same model, tokens and GPUs as dp 8.
  const mc::perf::Config c8 = parse(node_config(8, 1, 32768, 8)), d8 = parse(node_config(1, 8, 32768, 8));
  const mc::perf::Estimate e = mc::perf::estimate(c8), d = mc::perf::estimate(d8);
  EXPECT_DOUBLE_EQ(e.model_flops_per_iteration, d.model_flops_per_iteration);
  EXPECT_DOUBLE_EQ(e.tokens_per_s * e.iteration_time_s, 8.0 * 32768);
  EXPECT_DOUBLE_EQ(e.memory.weights, d.memory.weights);
  // Activations by hand (Korthikanti et al. 2022 Table 2, no tensor parallelism, flash attention: no
  // scores). Per layer and token: attention 2h (input) + 2h (Q) + 2 x 2 kv d (K, V) + 2h (output) + 2h
  // (its projection's input) + h (dropout mask) ... as perf::activation_bytes_per_layer counts them; here
  // only its split: cp 8 keeps 1/8 of each layer's, and on top, while a layer's attention runs its backward,
  // the whole sequence's K and V and their gradients: 4 x s x kv_heads x d x 2 bytes = 4 x 32768 x 8 x 128
  // x 2 = 268,435,456 bytes. The embedding's output (2 s h bytes a micro-batch) is split too.
  const double per_layer = mc::perf::activation_bytes_per_layer(c8.model, 1, 1, false, mc::perf::Recompute::none, true);
  const double held = 4 * per_layer + 2.0 * 32768 * 4096;  // 4 layers and the embedding output, one micro-batch
  // The data-parallel run holds one micro-batch in flight as well; the last stage adds the logits there.
  const double logits_cp = 8.0 * 32768 / 8 * 32000, logits_dp = 8.0 * 32768 * 32000;
  EXPECT_NEAR(e.memory.activations, held / 8 + std::max(logits_cp, 268435456.0), 1.0);
  EXPECT_NEAR(d.memory.activations, held + logits_dp, 1.0);
  // ZeRO shards over the 8 ranks that hold the same parameters, whether they split the batch or the
  // sequence (Megatron-Core's data-parallel group with cp, torchtitan's dp_shard_cp mesh).
  json z8 = node_config(8, 1, 32768, 8), zd = node_config(1, 8, 32768, 8);
  z8["parallel"]["zero"] = 1, zd["parallel"]["zero"] = 1;
  const mc::perf::Estimate ez = mc::perf::estimate(parse(z8)), dz = mc::perf::estimate(parse(zd));
  EXPECT_DOUBLE_EQ(ez.memory.optimizer, dz.memory.optimizer);
  EXPECT_DOUBLE_EQ(ez.memory.optimizer * 8, mc::perf::estimate(parse(node_config(8, 1, 32768, 8))).memory.optimizer);
}

TEST(PerfContextParallel, TheWorkIsSplitNotAdded) {
  // Two sequences on each pair of GPUs split along their length, against one sequence on each GPU: every GPU does
  // the FLOPs of one sequence either way (the cp rank's s/2 queries attend to all s keys, half as many
  // queries as the whole). Both GEMM shapes fill their SMs (16,384 tokens: 64 x 32 tiles of 256 x 128 over
  // 108 SMs, 19 waves at 99.8%), so the compute agrees to the kernel launches: within 1%.
  json a = node_config(2, 4, 32768, 8), b = node_config(1, 8, 32768, 8);
  const mc::perf::Estimate ea = mc::perf::estimate(parse(a)), eb = mc::perf::estimate(parse(b));
  EXPECT_NEAR(ea.time.compute / eb.time.compute, 1.0, 0.01) << ea.time.compute << " s vs " << eb.time.compute;
  EXPECT_DOUBLE_EQ(eb.time.cp_comm, 0.0);
  EXPECT_GT(ea.time.cp_comm, 0.0);
}

TEST(PerfContextParallel, KeyValueGathersPricedByHand) {
  // cp 8 on one node (ring only: NCCL 2.18 has no tree for all-gather): each all-gather moves 7/8 of the
  // gathered K (or V), b s kv d bytes = 32768 x 8 x 128 x 2 = 67,108,864, over one direction of NVLink at the
  // bus efficiency, plus 7 steps' latency. Forward: K and V gathered; backward: gathered again and their
  // gradients reduce-scattered (TransformerEngine's AttnFuncWithCPAndKVAllGather): 6 collectives a layer.
  const mc::perf::Config c = parse(node_config(8, 1, 32768, 8));
  const mc::perf::ClusterSpec& cl = c.cluster;
  const double bw = cl.intra_node_GBps_per_gpu * 1e9 / 2 * cl.intra_bus_efficiency;
  const double one = 7.0 / 8 * 67108864 / bw + 7 * cl.intra_latency_s;
  const mc::perf::Estimate e = mc::perf::estimate(c);
  EXPECT_NEAR(e.time.cp_comm, 8 * 4 * 6 * one, 1e-9 * e.time.cp_comm);  // 8 micro-batches x 4 layers
  // Full recomputation re-runs the forward, and its gathers.
  json full = node_config(8, 1, 32768, 8);
  full["parallel"]["recompute"] = "full";
  EXPECT_NEAR(mc::perf::estimate(parse(full)).time.cp_comm, 8 * 4 * 8 * one, 1e-9 * e.time.cp_comm);
}

TEST(PerfContextParallel, LlamaThreeLongContextLayoutRuns) {
  const json cfg = llama3_long_context();
  const json e = mc::perf::estimate_json(catalog(), cfg);
  EXPECT_EQ(e["software"], "meta-llama3-2024");  // the preset's stack, which has context parallelism
  EXPECT_EQ(e["layout"]["cp"], 16);
  EXPECT_EQ(e["gpus"], 16384);
  // Without context parallelism a 131,072-token sequence's activations are 16 times the 8K stage's per
  // micro-batch (one sequence each): far past 80 GB. Split 16 ways they fit, as the paper ran them.
  EXPECT_TRUE(e["fits"].get<bool>()) << e["memory_per_gpu_bytes"].dump();
  // The gathers are exposed (Sec. 3.3.2) but smaller than the attention they feed: O(S) against O(S^2).
  const double cp = e["time_breakdown_s"]["cp_comm"], compute = e["time_breakdown_s"]["compute"];
  EXPECT_GT(cp, 0.0);
  EXPECT_LT(cp, compute);
  // At 131,072 tokens the attention scores are most of the model FLOPs of record (which count the whole s x s
  // matrix): by hand, 3 x 126 layers x 4 s^2 h per sequence against the count, and flash attention skips
  // about half of them under the causal mask. The estimate says so beside its MFU.
  const double scores = 3.0 * 126 * 4 * 131072.0 * 131072 * 16384 * 128;
  const double share = scores / e["model_flops_per_iteration"].get<double>();
  EXPECT_NEAR(share, 0.57, 0.01);
  bool said = false;
  for (const auto& n : e["notes"]) said = said || n.get<std::string>().find("skips about half") != std::string::npos;
  EXPECT_TRUE(said) << e["notes"].dump();
  json no_cp = cfg;
  no_cp["parallel"]["cp"] = 1, no_cp["parallel"]["dp"] = 128, no_cp["parallel"]["global_batch"] = 2048;
  EXPECT_FALSE(mc::perf::estimate_json(catalog(), no_cp)["fits"].get<bool>());
  // The simulator runs it too (it was refused with the estimate), on the same stage times.
  const json out = mc::sim::simulate_json(catalog(), cfg, {});
  const double sim_s = out.at("iteration_time_s"), ana_s = out.at("analytic").at("iteration_time_s");
  // Within 5%, as the 8K layout (PerfInterleaved.Llama3405bPublishedLayoutSimulates).
  EXPECT_NEAR(sim_s, ana_s, 0.05 * ana_s) << "simulated " << sim_s << " s, analytic " << ana_s << " s";
}

TEST(PerfContextParallel, SimulatorAgreesOnAOneFOneBLayout) {
  // tp 8 x cp 4 x pp 4 x dp 2 on 256 H100s, 1F1B: the simulator's replicas are the 8 dp x cp ranks of each
  // shard (gradients reduced over all of them), each carrying s / 4 tokens of its sequences.
  const json cfg = {{"model",
                     {{"layers", 16},
                      {"hidden", 8192},
                      {"heads", 64},
                      {"kv_heads", 8},
                      {"seq_len", 65536},
                      {"vocab", 128000},
                      {"position_embedding", "rope"},
                      {"tied_output", false}}},
                    {"cluster", {{"preset", "meta-llama3-2024"}, {"gpus", 256}}},
                    {"parallel",
                     {{"tp", 8},
                      {"cp", 4},
                      {"pp", 4},
                      {"dp", 2},
                      {"micro_batch", 1},
                      {"global_batch", 16},
                      {"sequence_parallel", true}}}};
  const json out = mc::sim::simulate_json(catalog(), cfg, {});
  const double sim_s = out.at("iteration_time_s"), ana_s = out.at("analytic").at("iteration_time_s");
  EXPECT_NEAR(sim_s / ana_s, 1.0, 0.05) << "simulated " << sim_s << " s, analytic " << ana_s << " s";
  // The context-parallel gathers run as flows over the links, each cp group's ring for every tensor rank:
  // the simulator's own seconds of them on the critical GPU are the analytic model's (no other traffic
  // shares those NICs in this layout's forward and backward).
  EXPECT_NEAR(out["sim"]["critical_gpu_breakdown_s"]["cp_comm"].get<double>(),
              out["analytic"]["time_breakdown_s"]["cp_comm"].get<double>(), 0.05 * sim_s);
  // A straggler slows its whole cp group, which waits for it in every layer's gather: the group (replicas 0-3
  // of the 8 = dp 2 x cp 4) is one replica class of its own, the other group the second.
  json slow = cfg;
  slow["stragglers"] = json::array({{{"gpu", 0}, {"speed", 0.5}}});
  const json so = mc::sim::simulate_json(catalog(), slow, {});
  EXPECT_EQ(so["sim"]["replica_classes"], json::parse(R"([{"replicas": 4}, {"replicas": 4}])"));
  EXPECT_GT(so.at("iteration_time_s").get<double>(), 1.2 * sim_s);
  // One slow GPU in the group costs what the whole group slowed would: its peers (tp rank 0 of cp ranks 1-3,
  // 8 GPUs apart in Llama 3's order) wait for it in every layer.
  json all = cfg;
  all["stragglers"] = json::array();
  for (int g : {0, 8, 16, 24}) all["stragglers"].push_back({{"gpu", g}, {"speed", 0.5}});
  EXPECT_DOUBLE_EQ(mc::sim::simulate_json(catalog(), all, {}).at("iteration_time_s").get<double>(),
                   so.at("iteration_time_s").get<double>());
}

TEST(PerfContextParallel, RefusedWhereItCannotRun) {
  // On a stack without it: the message names the key and the stacks that have it.
  json cfg = llama3_long_context();
  cfg["software"] = "megatron-lm-2022";
  cfg["parallel"]["schedule"] = "1f1b";
  const std::string stack = error_of(cfg);
  EXPECT_NE(stack.find("cp: "), std::string::npos) << stack;
  EXPECT_NE(stack.find("context parallelism"), std::string::npos) << stack;
  EXPECT_NE(stack.find("meta-llama3-2024"), std::string::npos) << stack;
  // A sequence that does not cut into 2 cp equal chunks.
  const std::string odd = error_of(node_config(8, 1, 32760, 8));
  EXPECT_NE(odd.find("2*cp = 16"), std::string::npos) << odd;
  EXPECT_NE(odd.find("seq_len 32760"), std::string::npos) << odd;
  // The degrees must multiply to the GPUs, cp included.
  const std::string wrong = error_of(node_config(8, 2, 32768, 8));
  EXPECT_NE(wrong.find("tp*cp*pp*dp = 1*8*1*2 = 16"), std::string::npos) << wrong;
}

TEST(PerfContextParallel, TheSearchProposesItWhereTheStackHasIt) {
  // 128 sequences of 131,072 tokens on Llama 3's 16,384 GPUs: without context parallelism the only layouts
  // that fit run one micro-batch a replica (dp 128), a pipeline of one micro-batch at a time; split over cp
  // ranks the sequences fill a pipeline of 8 or 16 micro-batches, as the paper ran them (Table 4: cp 16).
  json cfg = {{"model", {{"preset", "llama3-405b"}, {"seq_len", 131072}}},
              {"cluster", {{"preset", "meta-llama3-2024"}, {"gpus", 16384}}},
              {"parallel", {{"global_batch", 128}}}};
  mc::perf::SearchOptions o;
  o.max_results = 200;
  const mc::perf::SearchResult r = mc::perf::search(mc::perf::parse_config(catalog(), cfg, "search.json", false), o);
  ASSERT_FALSE(r.ranked.empty());
  const mc::perf::Layout& best = r.ranked.front().layout;
  EXPECT_GT(best.cp, 1);
  EXPECT_EQ(best.ranks(), 16384);
  // The same stack with context parallelism switched off: its best is a one-micro-batch pipeline, many
  // times slower.
  mc::perf::Config off = mc::perf::parse_config(catalog(), cfg, "search.json", false);
  off.software.context_parallel = false;
  const mc::perf::SearchResult without = mc::perf::search(off, o);
  ASSERT_FALSE(without.ranked.empty());
  EXPECT_EQ(without.ranked.front().layout.cp, 1);
  EXPECT_LT(r.ranked.front().estimate.iteration_time_s, 0.5 * without.ranked.front().estimate.iteration_time_s);
  // A stack without it is never offered it.
  cfg["software"] = "megatron-lm-2022";
  const mc::perf::SearchResult m = mc::perf::search(mc::perf::parse_config(catalog(), cfg, "search.json", false), o);
  for (const auto& c : m.ranked) EXPECT_EQ(c.layout.cp, 1);
}
