// The run simulator: Young/Daly against the published case, determinism given a seed, failure counts
// against the Poisson mean, and the data pipeline starving the GPUs.
#include "catalog/catalog.h"
#include "sim/run.h"
#include "sim/sim.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <fstream>

using namespace mc::sim;

namespace {

RunSpec month() {
  RunSpec s;
  s.gpus = 10000;
  s.nodes = 1250;
  s.iteration_s = 20;
  s.tokens_per_iteration = 3.2e6;
  s.iterations_total = 1e9;  // never finishes: a fixed 30-day window
  s.max_days = 30;
  s.model_flops_per_iteration = 1e18;
  s.peak_flops_per_gpu = 125e12;
  s.failures.gpu_per_gpu_hour = 1.26e-5;
  s.failures.host_per_node_hour = 1.73e-5;
  s.checkpoint_bytes = 2.45e12;
  s.checkpoint_write_Bps = 3.125e9;
  s.checkpoint_read_Bps = 6.25e9;
  return s;
}
}  // namespace

TEST(SimRun, YoungDalyMatchPublishedCase) {
  const mc::json& c = mc::test::public_case("checkpoint-young-daly");
  const double delta = c["inputs"]["checkpoint_cost_s"], M = c["inputs"]["mtbf_s"];
  for (const auto& e : c["expected"]) {
    const std::string q = e["quantity"];
    const double want = e["value"], tol = e["tolerance"]["value"];
    const double got = q.rfind("young", 0) == 0 ? young_interval_s(delta, M) : daly_interval_s(delta, M);
    EXPECT_NEAR(got / want, 1.0, tol) << q;
  }
}

TEST(SimRun, DeterministicGivenASeedAndDifferentAcrossSeeds) {
  RunSpec s = month();
  const RunResult a = simulate_run(s), b = simulate_run(s);
  EXPECT_EQ(a.interruptions, b.interruptions);
  EXPECT_EQ(a.iterations_done, b.iterations_done);
  s.seed = 2;
  const RunResult c = simulate_run(s);
  EXPECT_TRUE(c.interruptions != a.interruptions || c.iterations_done != a.iterations_done);
}

TEST(SimRun, FailureCountMatchesThePoissonMean) {
  // Expected interruptions over the window ~ rate * up-time; over 20 seeds the mean is within 4 standard
  // errors of the rate times the simulated (up) time.
  RunSpec s = month();
  const double rate_per_s = (s.failures.gpu_per_gpu_hour * s.gpus + s.failures.host_per_node_hour * s.nodes) / 3600;
  double sum = 0, up = 0;
  const int seeds = 20;
  for (int k = 0; k < seeds; ++k) {
    s.seed = 100 + k;
    const RunResult r = simulate_run(s);
    sum += r.interruptions;
    double down = 0;
    for (const auto& e : r.events)
      if (e.kind == RunEvent::failure)
        down += s.failures.detection_s + s.failures.reschedule_s + s.failures.restart_s + r.checkpoint_read_s;
    up += r.days * 86400 - down;
  }
  const double expected = rate_per_s * up / seeds, got = sum / seeds;
  EXPECT_NEAR(got, expected, 4 * std::sqrt(expected / seeds)) << "expected " << expected;
  const RunResult r = simulate_run(month());
  EXPECT_GT(r.lost_gpu_hours, 0);
  EXPECT_LT(r.goodput, 1.0);
  EXPECT_GT(r.goodput, 0.5);
  EXPECT_GT(r.checkpoint_overhead_fraction, 0);
}

TEST(SimRun, NoFailuresMeansGoodputIsOneMinusCheckpoints) {
  RunSpec s = month();
  s.failures = {};
  s.checkpoint_interval_s = 3600;
  const RunResult r = simulate_run(s);
  EXPECT_EQ(r.interruptions, 0);
  const double ck = r.checkpoint_write_s;
  EXPECT_NEAR(r.goodput, 3600 / (3600 + ck), 2e-3);
}

TEST(SimRun, TooFewCoresStarveTheGpus) {
  RunSpec s = month();
  s.failures = {};
  s.cpu_cores = 10;               // 10 cores x 2e5 tokens/s = 2e6 tokens/s < 3.2e6 tokens per 20 s iteration? no: 1.6 s
  s.tokens_per_s_per_core = 2e3;  // 2e4 tokens/s: 160 s per iteration's tokens
  const RunResult r = simulate_run(s);
  EXPECT_NEAR(r.data_iteration_s, 3.2e6 / 2e4, 1e-9);
  EXPECT_NEAR(r.goodput, 20.0 / 160.0 * (1 - r.checkpoint_overhead_fraction), 0.01);
  EXPECT_GT(r.data_stall_gpu_hours, 0);
}

TEST(SimRun, TooLittleReadBandwidthStarvesTheGpus) {
  RunSpec s = month();
  s.failures = {};
  s.data_read_Bps = 1e6;  // 1 MB/s for the whole dataset stream
  s.bytes_per_token = 4;  // 3.2e6 tokens x 4 bytes = 12.8 MB per iteration: 12.8 s of reading
  s.iteration_s = 10;
  const RunResult r = simulate_run(s);
  EXPECT_NEAR(r.data_iteration_s, 3.2e6 * 4 / 1e6, 1e-9);
  EXPECT_GT(r.data_stall_gpu_hours, 0);
  s.data_read_Bps = 1e9;  // plenty: 12.8 ms of reading per iteration, the GPUs set the pace
  const RunResult fed = simulate_run(s);
  EXPECT_NEAR(fed.data_iteration_s, 3.2e6 * 4 / 1e9, 1e-12);
  EXPECT_EQ(fed.data_stall_gpu_hours, 0);
  EXPECT_GT(fed.goodput, r.goodput * 1.2);
}

TEST(SimRun, CancelStopsEarlyAndSaysSo) {
  RunSpec s = month();
  s.max_days = 3650;  // ten years of failures: long enough to be cancelled midway
  std::atomic<bool> cancel{false};
  int calls = 0;
  const RunResult r = simulate_run(
      s,
      [&](double) {
        if (++calls == 2) cancel = true;
      },
      &cancel);
  EXPECT_TRUE(r.cancelled);
  EXPECT_LT(r.days, 3650);
  const RunResult full = simulate_run(s);
  EXPECT_FALSE(full.cancelled);
  EXPECT_GT(full.days, r.days);
}

TEST(SimRun, ShardedCheckpointsWriteFasterWhenStorageIsNotTheBottleneck) {
  // Checkpoint bytes are the same whatever the layout (Psi x bytes per parameter); what ZeRO and the
  // pipeline change is how many nodes write their shard in parallel. With many storage accounts the
  // writers' NICs bound the write, so sharding the optimizer state over dp (ZeRO >= 1) writes faster.
  const mc::Catalog& cat = mc::test::catalog();
  mc::json cfg = {
      {"model", {{"preset", "gpt3-175b"}}},
      {"cluster", {{"preset", "azure-openai-2020"}, {"gpus", 9984}}},
      {"parallel",
       {{"tp", 8}, {"pp", 16}, {"dp", 78}, {"micro_batch", 1}, {"global_batch", 1560}, {"recompute", "full"}}},
      {"checkpoint", {{"storage_accounts", 1000}}}};
  SimOptions o;
  o.timeline_gpu = -1;
  o.include_link_series = false;
  o.run_days = 1;
  const double z0 = simulate_json(cat, cfg, o)["run"]["checkpoint"]["write_s"].get<double>();
  cfg["parallel"]["zero"] = 1;
  const double z1 = simulate_json(cat, cfg, o)["run"]["checkpoint"]["write_s"].get<double>();
  EXPECT_LT(z1, z0 * 0.5);
  // One storage account: storage bandwidth bounds the write whatever the sharding.
  cfg["checkpoint"]["storage_accounts"] = 1;
  const double one = simulate_json(cat, cfg, o)["run"]["checkpoint"]["write_s"].get<double>();
  cfg["parallel"]["zero"] = 0;
  EXPECT_NEAR(simulate_json(cat, cfg, o)["run"]["checkpoint"]["write_s"].get<double>(), one, 1e-6 * one);
}
