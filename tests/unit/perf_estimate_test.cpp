// perf_estimate_test.cpp - the timing model: Megatron-LM 2021 Table 1 predicted from physics (printed),
// config errors, the layout search and the pipeline timeline.
#include "catalog/catalog.h"
#include "perf/collectives.h"
#include "perf/perf.h"
#include "perf/validate.h"
#include "perf_helpers.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace {

using mc::test::catalog;

nlohmann::json gpt3_on_selene() {
  return nlohmann::json::parse(R"({"model": {"preset": "gpt3-175b"},
    "cluster": {"preset": "selene-2021", "gpus": 1024},
    "parallel": {"tp": 8, "pp": 8, "dp": 16, "micro_batch": 1, "global_batch": 1536,
                 "schedule": "interleaved", "virtual_stages": 2, "recompute": "full"},
    "training": {"tokens": 300e9}})");
}

using mc::test::error_of;

}  // namespace

TEST(PerfValidation, MegatronTable1WithinTenPercentEveryRowFiveMedian) {
  const auto rows = mc::perf::validate_cases(catalog(), mc::test::public_cases_path());
  std::printf("%-28s %10s %10s %8s\n", "Table 1 row", "published", "predicted", "error");
  for (const auto& r : rows)
    if (r.quantity == "achieved_tflops_per_gpu") {
      std::printf("%-28s %10.1f %10.1f %+7.2f%%\n", r.case_id.c_str(), r.published, r.predicted, 100 * r.error);
      EXPECT_LE(std::fabs(r.error), 0.10) << r.case_id;
    }
  const auto s = mc::perf::throughput_summary(rows);
  std::printf("median |error| %.2f%%, max %.2f%%\n", 100 * s.median_abs_error, 100 * s.max_abs_error);
  EXPECT_EQ(s.rows, 10);
  EXPECT_LE(s.median_abs_error, 0.05);
  for (const auto& r : rows) EXPECT_TRUE(r.within) << r.case_id << " " << r.quantity << " " << r.predicted;
}

TEST(PerfEstimate, BreakdownAddsUpAndUnitsAreConsistent) {
  const mc::perf::Config c = mc::perf::parse_config(catalog(), gpt3_on_selene(), "cfg");
  const mc::perf::Estimate e = mc::perf::estimate(c);
  const auto& T = e.time;
  // Every exposed part of the iteration is accounted for once.
  EXPECT_NEAR(T.total, T.compute + T.tp_comm + T.pp_comm + T.dp_comm + T.bubble + T.optimizer, 1e-9 * T.total);
  EXPECT_NEAR(e.achieved_tflops_per_gpu * 1e12 * 1024 * e.iteration_time_s, e.hardware_flops_per_iteration,
              1e-9 * e.hardware_flops_per_iteration);
  EXPECT_NEAR(e.training_days * 86400, e.iterations * e.iteration_time_s, 1e-6 * e.training_days * 86400);
  EXPECT_NEAR(e.cost_usd, e.gpu_hours * c.cluster.price_per_gpu_hour_usd, 1e-6 * e.cost_usd);
  EXPECT_GT(e.mfu, 0.2);
  EXPECT_LT(e.mfu, 0.75);  // below the large-GEMM ceiling
  EXPECT_TRUE(e.fits);
  // Narayanan et al. 2021 Sec. 5.1 estimate 34 days for this run at 140 TFLOP/s per GPU.
  EXPECT_NEAR(e.training_days, 34 * 140 / e.achieved_tflops_per_gpu, 0.05 * 34);
}

TEST(PerfEstimate, PhysicsMovesTheRightWay) {
  auto est = [](const nlohmann::json& cfg) { return mc::perf::estimate_json(catalog(), cfg); };
  nlohmann::json base = gpt3_on_selene();
  const auto e0 = est(base);
  nlohmann::json slow_net = base;
  slow_net["cluster"]["node_network_Gbps"] = 100;  // one EDR port per node instead of 8 HDR
  EXPECT_GT(est(slow_net)["iteration_time_s"].get<double>(), e0["iteration_time_s"].get<double>());
  nlohmann::json no_recompute = base;
  no_recompute["parallel"]["recompute"] = "none";
  const auto e1 = est(no_recompute);
  EXPECT_LT(e1["iteration_time_s"].get<double>(), e0["iteration_time_s"].get<double>());
  EXPECT_GT(e1["memory_per_gpu_bytes"]["activations"].get<double>(),
            e0["memory_per_gpu_bytes"]["activations"].get<double>());
  EXPECT_EQ(e1["model_flops_per_iteration"], e0["model_flops_per_iteration"]);
  nlohmann::json gpipe = base;
  gpipe["parallel"]["schedule"] = "gpipe";
  const auto e2 = est(gpipe);
  EXPECT_GT(e2["time_breakdown_s"]["bubble"].get<double>(), e0["time_breakdown_s"]["bubble"].get<double>());
  EXPECT_GT(e2["memory_per_gpu_bytes"]["activations"].get<double>(),
            e0["memory_per_gpu_bytes"]["activations"].get<double>());
  nlohmann::json zero3 = base;
  zero3["parallel"]["zero"] = 3;
  EXPECT_LT(est(zero3)["memory_per_gpu_bytes"]["weights"].get<double>(),
            e0["memory_per_gpu_bytes"]["weights"].get<double>());
}

TEST(PerfEstimate, UnfitLayoutIsReportedNotRejected) {
  nlohmann::json cfg = gpt3_on_selene();
  cfg["parallel"] = {{"tp", 1}, {"pp", 1}, {"dp", 1024}, {"micro_batch", 1}, {"global_batch", 1024}};
  const auto j = mc::perf::estimate_json(catalog(), cfg);
  EXPECT_FALSE(j["fits"].get<bool>());
  EXPECT_GT(j["memory_per_gpu_bytes"]["total"].get<double>(), 2e12);  // 175B x 16 bytes of model state
}

TEST(PerfConfig, ErrorsNameKeyAndRule) {
  nlohmann::json c = gpt3_on_selene();
  c["parallel"]["dp"] = 15;
  std::string e = error_of(c);
  EXPECT_NE(e.find("cfg.json:"), std::string::npos) << e;
  EXPECT_NE(e.find("parallel/dp"), std::string::npos) << e;
  EXPECT_NE(e.find("must equal"), std::string::npos) << e;

  c = gpt3_on_selene();
  c["parallel"]["global_batch"] = 1000;
  e = error_of(c);
  EXPECT_NE(e.find("global_batch"), std::string::npos) << e;
  EXPECT_NE(e.find("divisible"), std::string::npos) << e;

  c = gpt3_on_selene();
  c["model"]["preset"] = "gpt5";
  e = error_of(c);
  EXPECT_NE(e.find("model/preset"), std::string::npos) << e;
  EXPECT_NE(e.find("gpt3-175b"), std::string::npos) << e;  // lists the known ids

  c = gpt3_on_selene();
  c["parallel"]["tensor"] = 8;
  EXPECT_NE(error_of(c).find("tensor"), std::string::npos);

  c = gpt3_on_selene();
  c["parallel"]["tp"] = "8";
  EXPECT_NE(error_of(c).find("parallel/tp"), std::string::npos);

  c = gpt3_on_selene();
  c["cluster"] = {{"gpu", "v100-32gb"}, {"gpus_per_node", 8}, {"nodes", 128}};
  EXPECT_NE(error_of(c).find("node_network_Gbps"), std::string::npos);

  c = gpt3_on_selene();
  c["cluster"]["preset"] = "azure-openai-2020";
  c["training"]["precision"] = "bf16";  // V100 has no bf16
  EXPECT_NE(error_of(c).find("bf16"), std::string::npos);
}

// tf32 as the training lab means it (device/compute.h): fp32 storage (the memory of an fp32 run) and
// products at the TF32 tensor-core peak (A100: 156 TFLOP/s dense against 19.5 fp32; gpus.json).
TEST(PerfConfig, Tf32StoresFp32AndMultipliesAtTheTensorCorePeak) {
  nlohmann::json c = nlohmann::json::parse(R"({"model": {"layers": 24, "hidden": 2048, "heads": 16, "seq_len": 2048,
    "vocab": 50257}, "cluster": {"gpu": "a100-80gb", "gpus_per_node": 8, "nodes": 4, "node_network_Gbps": 1600},
    "parallel": {"tp": 2, "pp": 2, "dp": 8, "global_batch": 512}})");
  c["training"]["precision"] = "fp32";
  const mc::perf::Config f = mc::perf::parse_config(catalog(), c, "c");
  c["training"]["precision"] = "tf32";
  const mc::perf::Config t = mc::perf::parse_config(catalog(), c, "c");
  EXPECT_DOUBLE_EQ(mc::perf::peak_flops(t.cluster, t.training.precision), 156e12);
  const mc::perf::Estimate ef = mc::perf::estimate(f), et = mc::perf::estimate(t);
  EXPECT_DOUBLE_EQ(et.memory.total, ef.memory.total) << "tf32 keeps every tensor in 4 bytes, as fp32 does";
  EXPECT_LT(et.time.compute, ef.time.compute / 3) << "products on tensor cores: several times faster";
  EXPECT_GT(et.time.compute, ef.time.compute / 8) << "but no faster than the 8x ratio of the peaks";
  c["cluster"]["gpu"] = "v100-32gb";  // Volta has no TF32
  EXPECT_NE(error_of(c).find("tf32"), std::string::npos);
}

TEST(PerfConfig, CustomClusterAndOverrides) {
  nlohmann::json c = nlohmann::json::parse(R"({"model": {"layers": 24, "hidden": 2048, "heads": 16, "seq_len": 2048,
    "vocab": 50257}, "cluster": {"gpu": "a100-80gb", "gpus_per_node": 8, "nodes": 4, "node_network_Gbps": 1600,
    "price_per_gpu_hour_usd": 2.0}, "parallel": {"tp": 2, "pp": 2, "dp": 8, "global_batch": 512}})");
  const mc::perf::Config cfg = mc::perf::parse_config(catalog(), c, "c");
  EXPECT_EQ(cfg.cluster.gpus(), 32);
  EXPECT_DOUBLE_EQ(cfg.cluster.peak_fp16_flops, 312e12);
  EXPECT_EQ(cfg.model.ffn(), 4 * 2048);
  EXPECT_EQ(cfg.layout.micro_batch, 1);
  const auto j = mc::perf::to_json(mc::perf::estimate(cfg), cfg);
  EXPECT_NEAR(j["cost_usd"].get<double>(), 2.0 * j["gpu_hours"].get<double>(), 1e-6 * j["cost_usd"].get<double>());
}

TEST(PerfCollectives, AlphaBetaLimits) {
  mc::perf::ClusterSpec c;
  const mc::perf::Topology t = mc::perf::topology_of(c);
  // Large messages inside a node: ring time -> 2 (p-1)/p N / bus bandwidth (nccl-tests PERFORMANCE.md).
  const double n = 1e9;
  const auto big = mc::perf::all_reduce(t, n, 8, 8, 1);
  EXPECT_NEAR(big.time_s, 2 * 7.0 / 8 * n / t.intra_Bps, 0.01 * big.time_s);
  // Tiny messages are latency bound, where the tree's log depth wins.
  EXPECT_STREQ(mc::perf::all_reduce(t, 8, 8, 8, 1).algorithm, "tree");
  // Across nodes, sharing the NICs with 8 groups costs 8x the bandwidth term of one group alone.
  const auto shared = mc::perf::all_reduce(t, n, 16, 1, 8), alone = mc::perf::all_reduce(t, n, 16, 1, 1);
  EXPECT_NEAR(shared.time_s / alone.time_s, 8.0, 0.1);
  // Oversubscription slows groups that leave their leaf switch.
  mc::perf::ClusterSpec o = c;
  o.oversubscription = 2;
  o.leaf_nodes = 4;
  EXPECT_GT(mc::perf::all_reduce(mc::perf::topology_of(o), n, 64, 8, 1).time_s,
            1.9 * mc::perf::all_reduce(t, n, 64, 8, 1).time_s - 1e-3);
}

TEST(PerfSearch, Gpt3On2020AzureRanksFittingLayoutsFast) {
  nlohmann::json cfg = {{"model", {{"preset", "gpt3-175b"}}}, {"cluster", {{"preset", "azure-openai-2020"}}}};
  mc::perf::SearchOptions o;
  o.max_results = 10;
  const mc::perf::Config c = mc::perf::parse_config(catalog(), cfg, "cfg", false);
  const auto r = mc::perf::search(c, o);
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_GT(r.considered, 10000);
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    const auto& L = r.ranked[i].layout;
    EXPECT_TRUE(r.ranked[i].estimate.fits);
    EXPECT_EQ(1536 % (L.micro_batch * L.dp), 0);
    EXPECT_EQ(96 % L.tp, 0);
    EXPECT_LE((long long)L.tp * L.pp * L.dp, 10000);
    if (i) {
      EXPECT_GE(r.ranked[i].estimate.training_days, r.ranked[i - 1].estimate.training_days);
    }
  }
  // A 175B model cannot be trained by data parallelism alone on 32 GB GPUs: those are rejected for memory.
  bool memory_reason = false;
  for (const auto& [reason, count] : r.rejected_by_reason)
    memory_reason |= reason.find("memory") != std::string::npos && count > 0;
  EXPECT_TRUE(memory_reason);
  // The best layout's estimate equals a direct estimate of it.
  mc::perf::Config best = c;
  best.layout = r.ranked[0].layout;
  const long long n = (long long)best.layout.tp * best.layout.pp * best.layout.dp;
  best.cluster.nodes = int(n / best.cluster.gpus_per_node);
  EXPECT_DOUBLE_EQ(mc::perf::estimate(best).iteration_time_s, r.ranked[0].estimate.iteration_time_s);
#ifdef NDEBUG
  EXPECT_LT(r.elapsed_s, 1.0);
#endif
}

TEST(PerfTimeline, ScheduleLengthsMatchTheBubbleFormula) {
  nlohmann::json cfg = gpt3_on_selene();
  for (const char* sched : {"gpipe", "1f1b", "interleaved"}) {
    cfg["parallel"]["schedule"] = sched;
    const mc::perf::Config c = mc::perf::parse_config(catalog(), cfg, "cfg");
    mc::perf::Estimate e = mc::perf::estimate(c);
    e.p2p_s = 0;  // the formula assumes free communication
    const int p = c.layout.pp, m = c.layout.micro_batches();
    const int v = std::string(sched) == "interleaved" ? c.layout.virtual_stages : 1;
    auto end_of = [](const std::vector<mc::perf::PipelineOp>& ops) {
      double end = 0;
      for (const auto& op : ops) end = std::max(end, op.end_s);
      return end;
    };
    // Each chunk at its own time (the last one carries the output layer): the replay ends at the estimate's
    // own ideal time plus bubble, the slowest stage busy m times and the others' chunks on its fill and drain.
    const auto ops = mc::perf::pipeline_timeline(c, e);
    ASSERT_EQ(ops.size(), size_t(2) * p * m * v) << sched;
    const double end = end_of(ops);
    EXPECT_NEAR(end, e.time.compute + e.time.tp_comm + e.time.bubble, 1e-6 * end) << sched;
    // Every chunk at the slowest stage's mean chunk time: Narayanan et al. 2021's (m + (p-1)/v) (t_f + t_b).
    mc::perf::Estimate uniform = e;
    uniform.chunk_forward_s.clear(), uniform.chunk_backward_s.clear();
    const double ideal = m * v * (e.stage_forward_s + e.stage_backward_s);
    EXPECT_NEAR(end_of(mc::perf::pipeline_timeline(c, uniform)),
                ideal * (1 + mc::perf::bubble_over_ideal(c.layout.schedule, p, m, v)), 1e-6 * end)
        << sched;
    // No stage runs two ops at once.
    for (int s = 0; s < p; ++s) {
      std::vector<std::pair<double, double>> iv;
      for (const auto& op : ops)
        if (op.stage == s) iv.push_back({op.start_s, op.end_s});
      std::sort(iv.begin(), iv.end());
      for (size_t i = 1; i < iv.size(); ++i) EXPECT_GE(iv[i].first, iv[i - 1].second - 1e-12);
    }
  }
}
