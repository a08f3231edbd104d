// perf_tied_embedding_test.cpp - the tied embedding split over a pipeline (perf.h tied_grad_bytes): the
// first and the last stage sum their two gradients of it once an iteration, in the open, as DeepSpeed's
// pipeline engine (ReduceTiedGrads) and Megatron-LM (its embedding group) do. Checked against the
// two-rank all-reduce's volume (one whole gradient each way: 2 (n - 1) / n = 1, nccl-tests PERFORMANCE.md)
// at the fabric's measured rate, in both the analytic model and the simulator.
#include "catalog/catalog.h"
#include "perf/collectives.h"
#include "perf/perf.h"
#include "sim/iteration.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

using mc::test::catalog;
using nlohmann::json;
using namespace mc::sim;

namespace {

// BigScience's tr1-13B layout on Jean Zay's V100 partition (more-public-cases.json bsc-tr1-13b-v100-256):
// 4 GPUs a node, whose Omni-Path ports reached 7.27 GB/s of all-reduce bus bandwidth together.
json tr1(int tp, int pp, int dp) {
  return {
      {"model", {{"layers", 40}, {"hidden", 5120}, {"heads", 32}, {"seq_len", 2048}, {"vocab", 50257}}},
      {"cluster",
       {{"gpu", "v100-32gb"},
        {"gpus", tp * pp * dp},
        {"gpus_per_node", 4},
        {"node_network_Gbps", 400},
        {"fabric", "opa-100"},
        {"inter_busbw_GBps", 7.27}}},
      {"parallel", {{"tp", tp}, {"pp", pp}, {"dp", dp}, {"zero", 1}, {"micro_batch", 1}, {"global_batch", 32 * dp}}},
      {"software", "megatron-deepspeed-2021"}};
}

mc::perf::Estimate estimate_of(const json& cfg) {
  return mc::perf::estimate(mc::perf::parse_config(catalog(), cfg, "cfg.json"));
}

}  // namespace

TEST(PerfTiedEmbedding, TheTwoStagesSumTheWholeGradientAtTheNodesRate) {
  const json cfg = tr1(2, 4, 32);
  const mc::perf::Estimate e = estimate_of(cfg);
  // vocab x h / tp fp16 gradients, each of a node's 4 first-stage GPUs paired with its peer on another node.
  const double bytes = 50257.0 * 5120 / 2 * 2;
  const double expect = bytes / (7.27e9 / 4);  // 0.14 s: what a helper's reading of tr1 predicted
  EXPECT_NEAR(e.tied_grad_s, expect, 0.01 * expect);
  const auto& T = e.time;
  EXPECT_NEAR(T.total, T.compute + T.tp_comm + T.pp_comm + T.dp_comm + T.bubble + T.optimizer + T.offload,
              1e-9 * T.total);

  // An output layer of its own has no twin to sum with: the pipeline's transfers alone, to the bit.
  json untied = cfg;
  untied["model"]["tied_output"] = false;
  const mc::perf::Estimate u = estimate_of(untied);
  EXPECT_EQ(u.tied_grad_s, 0.0);
  EXPECT_NEAR(T.pp_comm - u.time.pp_comm, e.tied_grad_s, 1e-12);

  // No pipeline: embedding and output layer share one GPU, nothing to sum across stages.
  EXPECT_EQ(estimate_of(tr1(2, 1, 32)).tied_grad_s, 0.0);

  // The whole pipeline inside one node: over NVLink, much faster than over Omni-Path.
  const mc::perf::Config small = mc::perf::parse_config(catalog(), tr1(1, 4, 1), "cfg.json");
  const double nvlink = estimate_of(tr1(1, 4, 1)).tied_grad_s;
  const double bytes1 = 50257.0 * 5120 * 2;
  const mc::perf::Topology t = mc::perf::topology_of(small.cluster);
  EXPECT_NEAR(nvlink, bytes1 / t.intra_Bps, 0.02 * nvlink);
  EXPECT_LT(nvlink, 0.2 * bytes1 / (7.27e9 / 4));

  // The CLI's figure is the same number, named.
  const json out = mc::perf::estimate_json(catalog(), cfg, "cfg.json");
  EXPECT_DOUBLE_EQ(out.at("tied_embedding_allreduce_s").get<double>(), e.tied_grad_s);
  EXPECT_FALSE(mc::perf::estimate_json(catalog(), untied, "cfg.json").contains("tied_embedding_allreduce_s"));
}

namespace {

// Compute only, one GPU a node, stage s on node s: the schedule's closed form plus what the tied gradient
// adds. 1 s forward and 2 s backward per layer, 2 layers a stage.
IterationSpec pipeline(int p, int m, bool paired, double tied_bytes) {
  IterationSpec it;
  it.pp = p;
  it.micro_batches = m;
  it.layers = 2 * p;
  it.layer_forward_s = 1.0;
  it.layer_backward_s = 2.0;
  it.latency = {0, 0};
  it.paired_p2p = paired;
  it.tied_grad_bytes = tied_bytes;
  return it;
}

}  // namespace

TEST(SimTiedEmbedding, TheFirstStageEndsLateAndTheLastWaitsForIt) {
  const int p = 4, m = 8;
  TopologySpec ts;
  ts.nodes = p;
  ts.gpus_per_node = 1;
  ts.node_network_Gbps = 400;  // 50 GB/s each way
  const Topology topo(ts);
  const double bytes = 1e9, transfer = bytes / 50e9;  // the whole gradient each way at the NIC's rate
  for (bool paired : {false, true}) {
    const IterationResult r = simulate_iteration(topo, pipeline(p, m, paired, bytes));
    // 1F1B: (m + p - 1)(t_f + t_b), the first stage ending last; then the all-reduce.
    EXPECT_NEAR(r.iteration_s, (m + p - 1) * 6.0 + transfer, 1e-6) << (paired ? "paired" : "megatron");
    EXPECT_EQ(r.critical_stage, 0);
    // The last stage, whose work ends first, waits for the first stage at the all-reduce.
    const WorkerTimeline& last = r.workers[size_t(p - 1)];
    double waited = 0, moved = 0;
    for (const Span& sp : last.spans)
      if (sp.micro_batch < 0 && sp.kind == SpanKind::pp_wait)
        waited += sp.end_s - sp.start_s;
      else if (sp.micro_batch < 0 && sp.kind == SpanKind::pp_send)
        moved += sp.end_s - sp.start_s;
    EXPECT_NEAR(moved, transfer, 1e-9);
    // Its last backward pass ends (p - 1) stage backward passes (4 s each) before the first stage's does.
    EXPECT_NEAR(waited, (p - 1) * 4.0, 1e-6);
    // The middle stages take no part.
    for (int s = 1; s < p - 1; ++s)
      for (const Span& sp : r.workers[size_t(s)].spans) EXPECT_GE(sp.micro_batch, 0) << "stage " << s;
    // The critical path still covers the whole iteration, the transfer included, with no gap.
    double covered = 0;
    for (const auto& st : r.critical_path) covered += st.end_s - st.start_s;
    EXPECT_NEAR(covered, r.iteration_s, 1e-6);
  }
  // Without the tied gradient: the closed form alone.
  EXPECT_NEAR(simulate_iteration(topo, pipeline(p, m, false, 0)).iteration_s, (m + p - 1) * 6.0, 1e-9);
}
