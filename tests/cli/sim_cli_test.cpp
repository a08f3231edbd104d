// sim_cli_test.cpp - `megacluster simulate` as a user calls it.
#include "cli_runner.h"

#include <nlohmann/json.hpp>

#include <fstream>

using mc_test::run_cli;

namespace {
const char* kSmall = R"({"model": {"preset": "gpt3-2.7b"},
  "cluster": {"preset": "azure-openai-2020", "gpus": 64},
  "parallel": {"tp": 4, "pp": 2, "dp": 8, "micro_batch": 1, "global_batch": 64}})";
}

TEST(SimCli, PrintsTheEstimateKeysForTheSimulatedIteration) {
  auto r = run_cli("simulate -", kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"iteration_time_s", "time_breakdown_s", "mfu", "training_days", "cost_usd", "analytic", "sim"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_FALSE(j.contains("run"));
  EXPECT_TRUE(j["sim"].contains("timeline"));
  EXPECT_GT(j["sim"]["events"].get<double>(), 0);
}

TEST(SimCli, RunIsSeededAndDeterministic) {
  auto a = run_cli("simulate - --run 30 --seed 7 --quiet", kSmall);
  auto b = run_cli("simulate - --run 30 --seed 7 --quiet", kSmall);
  ASSERT_EQ(a.code, 0) << a.err;
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  for (const char* k : {"days", "interruptions", "interruptions_by_cause", "goodput", "effective_mfu", "lost_gpu_hours",
                        "checkpoint_overhead_fraction", "cost_usd"})
    EXPECT_TRUE(ja["run"].contains(k)) << k;
  EXPECT_EQ(ja["run"]["events"], jb["run"]["events"]);
  EXPECT_LE(ja["run"]["days"].get<double>(), 30.0 + 1e-9);
}

TEST(SimCli, TraceIsChromeTraceEventJson) {
  const std::string path = testing::TempDir() + "mc_sim_trace.json";
  auto r = run_cli("simulate - --trace " + path, kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream f(path);
  auto t = nlohmann::json::parse(f);
  ASSERT_TRUE(t["traceEvents"].is_array());
  int complete = 0;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_GE(e["dur"].get<double>(), 0);
    }
  EXPECT_GT(complete, 10);
  std::remove(path.c_str());
}

TEST(SimCli, BadInputExitsOneOrTwoWithAClearMessage) {
  auto r = run_cli("simulate -", R"({"model": {"preset": "gpt3-2.7b"}, "cluster": {"preset": "azure-openai-2020",
    "gpus": 64}, "parallel": {"tp": 4, "pp": 2, "dp": 8, "global_batch": 64},
    "stragglers": [{"gpu": 999, "speed": 0.5}]})");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("stragglers/0/gpu"), std::string::npos) << r.err;
  auto u = run_cli("simulate - --run banana", kSmall);
  EXPECT_EQ(u.code, 2);
  EXPECT_NE(u.err.find("--run"), std::string::npos) << u.err;
  auto k = run_cli("simulate -", R"({"model": {"preset": "gpt3-2.7b"}, "cluster": {"preset": "azure-openai-2020",
    "gpus": 64}, "parallel": {"tp": 4, "pp": 2, "dp": 8, "global_batch": 64}, "failurs": {}})");
  EXPECT_EQ(k.code, 1);
  EXPECT_NE(k.err.find("failurs"), std::string::npos) << k.err;
  // The same GPU twice is ambiguous (which speed?): refused at the second entry.
  auto twice = run_cli("simulate -", R"({"model": {"preset": "gpt3-2.7b"}, "cluster": {"preset": "azure-openai-2020",
    "gpus": 64}, "parallel": {"tp": 4, "pp": 2, "dp": 8, "global_batch": 64},
    "stragglers": [{"gpu": 3, "speed": 0.5}, {"gpu": 3, "speed": 0.9}]})");
  EXPECT_EQ(twice.code, 1);
  EXPECT_NE(twice.err.find("stragglers/1/gpu"), std::string::npos) << twice.err;
  EXPECT_NE(twice.err.find("listed twice"), std::string::npos) << twice.err;
  // A bucket so small it would mean millions of collectives is refused, naming the key.
  auto tiny = run_cli("simulate -", R"({"model": {"preset": "gpt3-2.7b"}, "cluster": {"preset": "azure-openai-2020",
    "gpus": 64}, "parallel": {"tp": 4, "pp": 2, "dp": 8, "global_batch": 64}, "sim": {"bucket_bytes": 1000}})");
  EXPECT_EQ(tiny.code, 1);
  EXPECT_NE(tiny.err.find("sim/bucket_bytes"), std::string::npos) << tiny.err;
}

TEST(SimCli, BenchPrintsWallTimeEventsAndRate) {
  auto r = run_cli("simulate - --bench --repeat 2 --json", kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["repeats"], 2);
  EXPECT_EQ(j["gpus"], 64);
  EXPECT_GT(j["events"].get<double>(), 0);
  EXPECT_GT(j["best_ms"].get<double>(), 0);
  EXPECT_LE(j["best_ms"].get<double>(), j["mean_ms"].get<double>() + 1e-9);
  EXPECT_NEAR(j["events_per_s"].get<double>(), j["events"].get<double>() / (j["best_ms"].get<double>() / 1e3),
              1e-6 * j["events_per_s"].get<double>());
  // The simulated iteration is the one `simulate` prints.
  auto full = nlohmann::json::parse(run_cli("simulate -", kSmall).out);
  EXPECT_DOUBLE_EQ(j["iteration_s"].get<double>(), full["iteration_time_s"].get<double>());
  auto text = run_cli("simulate - --bench --repeat 1", kSmall);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("events/s"), std::string::npos) << text.out;
  EXPECT_EQ(run_cli("simulate - --bench --run 3", kSmall).code, 2);
  EXPECT_EQ(run_cli("simulate - --json", kSmall).code, 2);
}

// --bench prints only timings, so options that change what a simulation prints are refused rather than
// silently dropped (a user passing --seed 7 would otherwise believe the timing depended on it).
TEST(SimCli, BenchRefusesOptionsItWouldIgnore) {
  for (const char* opt : {"--seed 7", "--gpu 3", "--seed=0"}) {
    auto r = run_cli(std::string("simulate - --bench --repeat 1 ") + opt, kSmall);
    EXPECT_EQ(r.code, 2) << opt;
    EXPECT_TRUE(r.out.empty()) << opt;
    const std::string name = std::string(opt).substr(0, std::string(opt).find_first_of(" ="));
    EXPECT_NE(r.err.find("leave out " + name), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("drop --bench"), std::string::npos) << r.err;
  }
  auto both = run_cli("simulate - --bench --gpu 1 --seed 2 --trace t.json", kSmall);
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("leave out --trace, --seed and --gpu"), std::string::npos) << both.err;
  // Without --bench the same options are used, and --repeat alone is refused (it only counts timed runs).
  EXPECT_EQ(run_cli("simulate - --seed 7 --gpu 3", kSmall).code, 0);
  auto repeat = run_cli("simulate - --repeat 2", kSmall);
  EXPECT_EQ(repeat.code, 2);
  EXPECT_NE(repeat.err.find("--repeat goes with --bench"), std::string::npos) << repeat.err;
}

TEST(SimCli, ShippedBenchConfigIsValid) {
  auto r =
      run_cli(std::string("simulate ") + MC_SOURCE_DIR + "/assets/configs/simulate.json --bench --repeat 1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpus"], 9984);
}
