// perf_interleaved_test.cpp - interleaved pipelines with uneven model chunks (issue 24, item 1): the split
// of the layers over the p v chunks, the bubble and the memory that follow it, and Llama 3 405B's published
// layout (Dubey et al. 2024, "The Llama 3 Herd of Models", Sec. 3.3.2 and Table 4) in the analytic model and
// the simulator.
#include "catalog/catalog.h"
#include "perf/perf.h"
#include "perf_helpers.h"
#include "sim/iteration.h"
#include "sim/sim.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace {

using mc::test::catalog;
using nlohmann::json;

using mc::test::config_of;

using mc::test::error_of;

// A small custom model on one node of four A100s, pipeline only: `layers` layers on pp 4, interleaved with
// v = 2, four micro-batches of one sequence. hidden 4096 with a 32,000-token vocabulary: one layer (24 s h^2
// + 4 s^2 h forward) outweighs the output layer (2 s h V).
json small_interleaved(int layers) {
  return {{"model", {{"layers", layers}, {"hidden", 4096}, {"heads", 32}, {"seq_len", 2048}, {"vocab", 32000}}},
          {"cluster", {{"gpu", "a100-80gb"}, {"gpus_per_node", 4}, {"nodes", 1}}},
          {"parallel",
           {{"tp", 1},
            {"pp", 4},
            {"dp", 1},
            {"micro_batch", 1},
            {"global_batch", 4},
            {"schedule", "interleaved"},
            {"virtual_stages", 2}}},
          {"software", "megatron-lm-2021"}};
}

// Llama 3 405B as Table 4 of the paper lays it out on 16,384 H100s: tp 8, pp 16, dp 128, 16 sequences of
// 8,192 tokens per data-parallel rank; interleaved, with the embedding and the output layer each in a chunk
// of its own (Sec. 3.3.2: one layer fewer on the first and the last stage). Micro-batches of one sequence
// and v = 8 (one layer per chunk, so that the first chunk holds "only the embedding") are inferred.
json llama3_405b() {
  return {{"model", {{"preset", "llama3-405b"}}},
          {"cluster", {{"preset", "meta-llama3-2024"}, {"gpus", 16384}}},
          {"parallel",
           {{"tp", 8},
            {"pp", 16},
            {"dp", 128},
            {"micro_batch", 1},
            {"global_batch", 2048},
            {"schedule", "interleaved"},
            {"virtual_stages", 8},
            {"embedding_stages", "as-layers"},
            {"sequence_parallel", true}}},
          {"training", {{"precision", "bf16"}}}};
}

}  // namespace

TEST(PerfInterleaved, UnevenSplitEqualsTheEvenOneWhenLayersDivide) {
  // 32 layers on 4 x 2 chunks: 4 a chunk, given or computed; an explicit per-stage list of 8 each is the same
  // layout, and estimates to the same time and memory.
  const json even = small_interleaved(32);
  json listed = even;
  listed["parallel"]["layers_per_stage"] = {8, 8, 8, 8};
  ASSERT_EQ(error_of(listed), "");  // the old model refused an explicit list with the interleaved schedule
  const mc::perf::Config ce = config_of(even), cl = config_of(listed);
  EXPECT_EQ(mc::perf::chunk_layers(ce.model, ce.layout), std::vector<int>(8, 4));
  EXPECT_EQ(mc::perf::chunk_layers(cl.model, cl.layout), std::vector<int>(8, 4));
  const mc::perf::Estimate a = mc::perf::estimate(ce), b = mc::perf::estimate(cl);
  EXPECT_DOUBLE_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_DOUBLE_EQ(a.memory.total, b.memory.total);
  EXPECT_DOUBLE_EQ(a.time.bubble, b.time.bubble);
  // And the even split keeps Narayanan et al. 2021's bubble: (p - 1) chunks of the slowest stage (the last,
  // with the output layer) less the output layer, which only the last chunk runs: 3 chunks of 4 layers.
  EXPECT_NEAR(a.time.bubble, 3 * 4 * (a.layer_forward_s + a.layer_backward_s), 1e-9 * a.time.bubble);
}

TEST(PerfInterleaved, SmallUnevenCaseByHand) {
  // 6 layers, as-layers, on 4 x 2 chunks: 8 units (the layers, the embedding, the output layer), one a
  // chunk, so the first chunk holds only the embedding and the last only the output layer (Llama 3's rule).
  json cfg = small_interleaved(6);
  cfg["parallel"]["embedding_stages"] = "as-layers";
  ASSERT_EQ(error_of(cfg), "");
  const mc::perf::Config c = config_of(cfg);
  // Virtual stage k = chunk * p + rank.
  EXPECT_EQ(mc::perf::chunk_layers(c.model, c.layout), (std::vector<int>{0, 1, 1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(mc::perf::stage_layers(c.model, c.layout), (std::vector<int>{1, 2, 2, 1}));
  const mc::perf::Estimate e = mc::perf::estimate(c);
  const double layer = e.layer_forward_s + e.layer_backward_s;
  ASSERT_GT(layer, e.logits_s);  // so rank 1 (two layers) is the slowest, not rank 3 (one layer + logits)
  EXPECT_EQ(e.slowest_stage, 1);
  // Ideal: m = 4 micro-batches of rank 1's two layers. Bubble, by hand from Megatron-LM's order: with m = p
  // every rank runs all m v = 8 chunk forwards before its first backward (forward_backward_pipelining_with_
  // interleaving's "all warm-up" case). Rank 1 runs its eight back to back (rank 0's first chunk, the embedding
  // only, takes no time) and then waits for micro-batch 0's gradient: rank 3 sends it only after its own
  // forwards, the last of them micro-batch 3 on the output chunk, which follows rank 2's last forward, one
  // layer after rank 1's. So the wait is one layer forward, the output chunk's forward and backward, and rank
  // 2's layer backward: bubble = one layer + the output chunk, where equal chunks give (p - 1) = 3 chunks.
  EXPECT_NEAR(e.time.bubble, layer + e.logits_s, 1e-9 * layer);
  EXPECT_NEAR(e.time.compute + e.time.tp_comm, 4 * 2 * layer, 1e-9 * layer);
  // The literal schedule (Megatron-LM's interleaved order, each chunk at its own time, free transfers) ends
  // at ideal + bubble.
  mc::perf::Estimate free_p2p = e;
  free_p2p.p2p_s = 0;
  double end = 0;
  for (const auto& op : mc::perf::pipeline_timeline(c, free_p2p)) end = std::max(end, op.end_s);
  EXPECT_NEAR(end, 4 * 2 * layer + e.time.bubble, 1e-9 * end);
  // Memory: at its peak rank r holds all m v = 8 chunk forwards (m = p: all warm-up), the k-th of chunk
  // (k mod p v) / p. Rank 1: chunks 0,0,0,0,1,1,1,1 of one layer each: 8 layers' activations,
  // with its two layers' weights the most loaded GPU (rank 0 holds 8 too, 4 of them its layer-less chunk).
  const double per_layer = mc::perf::activation_bytes_per_layer(c.model, 1, 1, false, mc::perf::Recompute::none);
  EXPECT_NEAR(e.memory.activations, 8 * per_layer, 1e-9 * e.memory.activations);
}

TEST(PerfInterleaved, ChunksThatCannotBeFilledAreRefusedAtVirtualStages) {
  json cfg = small_interleaved(6);  // 8 chunks for 6 layers: two would be empty
  const std::string e = error_of(cfg);
  EXPECT_NE(e.find("virtual_stages"), std::string::npos) << e;
  EXPECT_NE(e.find("8 model chunks"), std::string::npos) << e;
  cfg["model"]["layers"] = 7;  // 7 layers for 8 chunks: still one short
  EXPECT_NE(error_of(cfg), "");
  cfg["model"]["layers"] = 10;  // 10 layers on 8 chunks: two chunks of two, in the middle
  EXPECT_EQ(error_of(cfg), "");
  const mc::perf::Config c = config_of(cfg);
  EXPECT_EQ(mc::perf::chunk_layers(c.model, c.layout), (std::vector<int>{1, 2, 2, 1, 1, 1, 1, 1}));
}

TEST(PerfInterleaved, Llama3405bPublishedLayoutEstimates) {
  const json cfg = llama3_405b();
  ASSERT_EQ(error_of(cfg), "");  // refused before: "16 equal chunks, which must divide the 126 layers"
  const mc::perf::Config c = config_of(cfg);
  EXPECT_EQ(c.software.id, "meta-llama3-2024");  // the preset's own stack, not hand-set
  const std::vector<int> chunks = mc::perf::chunk_layers(c.model, c.layout);
  ASSERT_EQ(chunks.size(), 128u);
  EXPECT_EQ(chunks.front(), 0);  // "the first model chunk on the first stage has only the embedding"
  EXPECT_EQ(chunks.back(), 0);   // "the last model chunk on the last stage has only output projection and loss"
  EXPECT_EQ(std::accumulate(chunks.begin(), chunks.end(), 0), 126);
  std::vector<int> stages(16, 8);
  stages.front() = stages.back() = 7;  // one layer fewer on the first and the last stage
  EXPECT_EQ(mc::perf::stage_layers(c.model, c.layout), stages);
  const mc::perf::Estimate e = mc::perf::estimate(c);
  EXPECT_GT(e.slowest_stage, 0);
  EXPECT_LT(e.slowest_stage, 15);
  // The paper's throughput (Table 4) is not among the published numbers this project validates against
  // (../shared/validation leaves the Llama 3 paper out), so it is not asserted here. The pipeline is
  // balanced: the bubble is less than the (p - 1) chunk times of the slowest stage equal chunks would cost.
  EXPECT_LT(e.time.bubble, 15 * (e.stage_forward_s + e.stage_backward_s));
  EXPECT_GT(e.mfu, 0);
  // Memory follows the chunks: rank 1 holds min(m v, 14 x 2 + 7 x 16 + 1) = 128 one-layer chunk forwards at its
  // peak (all of them: m = p), more than rank 0, whose 128 include the 16 of its layer-less first chunk.
  // Per layer as Meta's stack runs it: flash attention keeps no s x s scores (Dao et al. 2022).
  ASSERT_TRUE(c.software.flash_attention);
  const double per_layer =
      mc::perf::activation_bytes_per_layer(c.model, 1, 8, true, mc::perf::Recompute::none, c.software.flash_attention);
  EXPECT_NEAR(e.memory.activations, 128 * per_layer, 1e-9 * e.memory.activations);
}

TEST(PerfInterleaved, Llama3405bPublishedLayoutSimulates) {
  // The simulator runs the same uneven chunks (IterationSpec::chunk_layers); its iteration agrees with the
  // analytic one (both price the same stage times; the simulator shares links between the flows).
  const json cfg = llama3_405b();
  const nlohmann::json out = mc::sim::simulate_json(catalog(), cfg, {});
  const double sim_s = out.at("iteration_time_s").get<double>();
  const double est_s = out.at("analytic").at("iteration_time_s").get<double>();
  EXPECT_GT(sim_s, 0);
  // Both price the same stage times. The simulator's links decide the rest: the stack numbers its ranks as
  // Llama 3 did ([TP, CP, PP, DP], Sec. 3.3.2: software.json pipeline_inside_data_parallel), so each
  // pipeline's sends stay inside a 3,072-GPU pod; placed Megatron's way (tp, dp, pp) every third stage
  // boundary crossed the 1:7 oversubscribed aggregation layer and the simulator came out 23% above the
  // analytic model. The gradients are reduce-scattered and all-gathered as rings (NCCL 2.18 has no tree for
  // either): a tree across pods loaded the spines in the simulator (29% above) where the analytic model,
  // blind to where a tree's edges run, priced it at ring bandwidth. Now within 5%: one fabric, two screens.
  EXPECT_NEAR(sim_s, est_s, 0.05 * est_s) << "simulated " << sim_s << " s, analytic " << est_s << " s";
  json even = cfg;
  even["model"]["layers"] = 128;
  even["parallel"].erase("embedding_stages");
  const nlohmann::json eo = mc::sim::simulate_json(catalog(), even, {});
  EXPECT_LT(sim_s, eo.at("iteration_time_s").get<double>());  // two layers fewer on the slowest path
}

TEST(SimInterleaved, UnevenChunksRunAtTheirOwnLengths) {
  // Compute only (no transfers, no latency), one GPU per stage: p = 4, v = 2, m = 4, a layer 1 s forward and
  // 2 s backward. Chunks {0,1,1,1 | 1,1,1,0} (virtual stage = chunk * p + rank): ranks 1 and 2 hold two
  // layers, 6 s per micro-batch. By hand: m 6 s busy, plus the bubble: into rank 1 through rank 0's first
  // chunk (no layer: 0 s), out through the last chunks of rank 2 (one layer: 3 s) and rank 3 (none): 27 s.
  // Equal chunks of one layer over 8 layers: 4 x 6 + (p - 1) x 3 = 33 s (Narayanan et al. 2021, Sec. 2.2.2).
  mc::sim::TopologySpec ts;
  ts.nodes = 4;
  ts.gpus_per_node = 1;
  const mc::sim::Topology topo(ts);
  mc::sim::IterationSpec it;
  it.pp = 4, it.micro_batches = 4, it.schedule = mc::PipeSchedule::interleaved, it.virtual_stages = 2;
  it.layer_forward_s = 1, it.layer_backward_s = 2, it.latency = {0, 0};
  it.layers = 8;
  EXPECT_NEAR(mc::sim::simulate_iteration(topo, it).iteration_s, 33.0, 1e-9);
  it.layers = 6;
  it.chunk_layers = {0, 1, 1, 1, 1, 1, 1, 0};
  EXPECT_NEAR(mc::sim::simulate_iteration(topo, it).iteration_s, 27.0, 1e-9);
  it.chunk_layers = {0, 1, 1};  // not one count per virtual stage
  EXPECT_THROW(mc::sim::simulate_iteration(topo, it), std::invalid_argument);
}

namespace {

// 1F1B written out independently of engine/perf's replay (Narayanan et al. 2021, Sec. 2.2.1, in the order
// of Megatron-LM's forward_backward_pipelining_without_interleaving): stage i runs min(m, p - i - 1) warm-up
// forwards, then one forward and one backward at a time, then the remaining backwards. A forward waits for
// the stage before it, a backward for the stage after it; transfers are free. Returns the last op's end.
double one_f_one_b_end(int p, int m, const std::vector<double>& f, const std::vector<double>& b) {
  struct Op {
    bool bwd;
    int mb;
  };
  std::vector<std::vector<Op>> order(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) {
    const int warm = std::min(m, p - i - 1);
    for (int k = 0; k < warm; ++k) order[size_t(i)].push_back({false, k});
    for (int k = 0; k < m - warm; ++k)
      order[size_t(i)].push_back({false, warm + k}), order[size_t(i)].push_back({true, k});
    for (int k = m - warm; k < m; ++k) order[size_t(i)].push_back({true, k});
  }
  const double unset = -1;
  std::vector<std::vector<double>> fend(size_t(p), std::vector<double>(size_t(m), unset)), bend = fend;
  std::vector<size_t> next(size_t(p), 0);
  std::vector<double> free_at(size_t(p), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int i = 0; i < p; ++i) {
      while (next[size_t(i)] < order[size_t(i)].size()) {
        const Op op = order[size_t(i)][next[size_t(i)]];
        const double dep = op.bwd ? (i == p - 1 ? fend[size_t(i)][size_t(op.mb)] : bend[size_t(i + 1)][size_t(op.mb)])
                                  : (i == 0 ? 0.0 : fend[size_t(i - 1)][size_t(op.mb)]);
        if (dep == unset) break;
        const double end = std::max(free_at[size_t(i)], dep) + (op.bwd ? b[size_t(i)] : f[size_t(i)]);
        (op.bwd ? bend : fend)[size_t(i)][size_t(op.mb)] = end;
        free_at[size_t(i)] = end;
        ++next[size_t(i)];
        progress = true;
      }
    }
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

}  // namespace

TEST(PerfUnevenStages, AnEarlySlowStageHidesPartOfThePathBehindItsWarmUp) {
  // One chunk per stage, 3 + 2 + 2 + 2 layers (and the embedding on the first): stage 0 paces. Before its
  // first backward it runs p forwards, while micro-batch 0 goes down the pipeline and back; so it does not
  // wait out the whole of the other stages' passes, as the sum over them (the bubble with the last stage
  // pacing) would have it. The bubble is the schedule's own: the end of 1F1B replayed by hand less m times
  // the slowest stage's passes. Megatron-LM's transfers do not hold a stage.
  json cfg = small_interleaved(9);
  cfg["parallel"]["schedule"] = "1f1b";
  cfg["parallel"].erase("virtual_stages");
  cfg["parallel"]["layers_per_stage"] = {3, 2, 2, 2};
  cfg["parallel"]["global_batch"] = 16;
  const mc::perf::Estimate e = mc::perf::estimate(config_of(cfg));
  ASSERT_EQ(e.stage_layers, (std::vector<int>{3, 2, 2, 2}));
  ASSERT_EQ(e.slowest_stage, 0);
  const int p = 4, m = 16;
  const double by_hand =
      one_f_one_b_end(p, m, e.chunk_forward_s, e.chunk_backward_s) - m * (e.chunk_forward_s[0] + e.chunk_backward_s[0]);
  double path = 0;  // every other stage's passes once: what the bubble was before
  for (int i = 1; i < p; ++i) path += e.chunk_forward_s[size_t(i)] + e.chunk_backward_s[size_t(i)];
  EXPECT_NEAR(e.time.bubble, by_hand, 1e-9 * path);
  EXPECT_LT(e.time.bubble, path - e.chunk_forward_s[0]) << "part of the path hides behind the warm-up";
  // The simulator runs the same schedule event by event, transfers included: the same iteration within 1%.
  mc::sim::SimOptions o;
  o.timeline_gpu = -1;
  o.include_link_series = false;
  const json out = mc::sim::simulate_json(catalog(), cfg, o);
  EXPECT_NEAR(out["iteration_time_s"].get<double>() / e.iteration_time_s, 1.0, 0.01);
}
