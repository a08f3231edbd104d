// perf_cli_test.cpp - `megacluster estimate`, `search` and `validate` as a user calls them.
#include "cli_runner.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

using mc_test::run_cli;

namespace {
const char* kGpt3Selene = R"({"model": {"preset": "gpt3-175b"},
  "cluster": {"preset": "selene-2021", "gpus": 1024},
  "parallel": {"tp": 8, "pp": 8, "dp": 16, "micro_batch": 1, "global_batch": 1536,
               "schedule": "interleaved", "virtual_stages": 2, "recompute": "full"}})";
}

TEST(PerfCli, EstimatePrintsTheContractKeys) {
  auto r = run_cli("estimate -", kGpt3Selene);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k :
       {"params", "model_flops_per_iteration", "hardware_flops_per_iteration", "memory_per_gpu_bytes", "fits",
        "iteration_time_s", "time_breakdown_s", "achieved_tflops_per_gpu", "mfu", "model_tflops_per_gpu",
        "hardware_tflops_per_gpu", "hfu", "training_days", "gpu_hours", "cost_usd"})
    EXPECT_TRUE(j.contains(k)) << k;
  for (const char* k : {"weights", "gradients", "optimizer", "activations", "total"})
    EXPECT_TRUE(j["memory_per_gpu_bytes"].contains(k)) << k;
  for (const char* k : {"compute", "tp_comm", "pp_comm", "dp_comm", "bubble"})
    EXPECT_TRUE(j["time_breakdown_s"].contains(k)) << k;
  // GPT-3 Table D.1: 174.6B parameters; Narayanan et al. eq. (3) with recompute is 4/3 of the model FLOPs
  // up to the logit term.
  EXPECT_NEAR(j["params"].get<double>(), 174.6e9, 0.02 * 174.6e9);
  const double ratio = j["hardware_flops_per_iteration"].get<double>() / j["model_flops_per_iteration"].get<double>();
  EXPECT_GT(ratio, 1.3);
  EXPECT_LT(ratio, 4.0 / 3.0);
}

// A layout the training stack could not run (Megatron-LM v1.0 had no pipeline: tag v1.0, April 2020; OpenAI's
// 2020 code no interleaved schedule) exits 1 naming the key, the stack and the feature.
TEST(PerfCli, LayoutTheStackLacksIsRefused) {
  auto r = run_cli("estimate -", R"({"model": {"preset": "gpt3-175b"}, "software": "megatron-lm-2020",
    "cluster": {"preset": "selene-2021", "gpus": 1024},
    "parallel": {"tp": 8, "pp": 8, "dp": 16, "global_batch": 1536, "schedule": "interleaved", "virtual_stages": 2}})");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("parallel/pp"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Megatron-LM v1.0 (2020) has no pipeline parallelism"), std::string::npos) << r.err;
  r = run_cli("estimate -", R"({"model": {"preset": "gpt3-175b"}, "software": "openai-gpt3-2020",
    "cluster": {"preset": "selene-2021", "gpus": 1024},
    "parallel": {"tp": 8, "pp": 8, "dp": 16, "global_batch": 1536, "schedule": "interleaved", "virtual_stages": 2}})");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("parallel/schedule"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("OpenAI GPT-3 code (2020) has no interleaved pipeline schedule"), std::string::npos) << r.err;
}

TEST(PerfCli, InvalidConfigsExitOneNamingKeyAndRule) {
  auto r = run_cli("estimate -", R"({"model": {"preset": "gpt3-175b"}, "cluster": {"preset": "selene-2021",
    "gpus": 1024}, "parallel": {"tp": 8, "pp": 8, "dp": 8, "global_batch": 1536}})");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("parallel/dp"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tp*pp*dp"), std::string::npos) << r.err;
  r = run_cli("estimate -", R"({"model": {"preset": "gpt3-175b"}, "cluster": {"preset": "nowhere"}, "parallel": {}})");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cluster/preset"), std::string::npos) << r.err;
  r = run_cli("estimate -", R"({"model": {"preset": "gpt3-175b"}, "cluster": {"preset": "selene-2021", "gpus": 64},
    "parallel": {"tp": 8, "pp": 8, "dp": 1, "micro_batch": 5, "global_batch": 1536}})");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("global_batch"), std::string::npos) << r.err;
  r = run_cli("estimate -", "{\"model\": ");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("<stdin>:1"), std::string::npos) << r.err;
  r = run_cli("estimate");
  EXPECT_EQ(r.code, 2);
}

TEST(PerfCli, UnfitLayoutPrintsFitsFalse) {
  auto r = run_cli("estimate -", R"({"model": {"preset": "gpt3-175b"}, "cluster": {"preset": "azure-openai-2020",
    "gpus": 512}, "parallel": {"tp": 1, "pp": 1, "dp": 512, "micro_batch": 1, "global_batch": 1536}})");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["fits"].get<bool>());
  EXPECT_GT(j["memory_per_gpu_bytes"]["total"].get<double>(), j["memory_per_gpu_bytes"]["hbm"].get<double>());
}

TEST(PerfCli, SearchRanksLayoutsAndExplainsRejections) {
  auto r =
      run_cli("search - --top 3", R"({"model": {"preset": "gpt3-175b"}, "cluster": {"preset": "azure-openai-2020"}})");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["ranked"].size(), 3u);
  EXPECT_TRUE(j["ranked"][0]["fits"].get<bool>());
  EXPECT_LE(j["ranked"][0]["training_days"].get<double>(), j["ranked"][2]["training_days"].get<double>());
  EXPECT_FALSE(j["rejected_by_reason"].empty());
  EXPECT_FALSE(j["rejected_examples"].empty());
  EXPECT_TRUE(j["rejected_examples"][0].contains("reason"));
}

TEST(PerfCli, ValidatePrintsTheErrorTable) {
  auto r = run_cli("validate --markdown --cases " MC_TEST_DATA "/validation/public-cases.json");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("| megatron21-table1-1008p0b | achieved_tflops_per_gpu |"), std::string::npos);
  EXPECT_NE(r.out.find("median |error|"), std::string::npos);
}

// docs/validation.md is what `megacluster validate --markdown` writes today: a change to the model or to
// the cases that moves a row must regenerate it (the command is in the file's first paragraph).
TEST(PerfCli, ValidationDocIsCurrent) {
  auto r = run_cli("validate --markdown");
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(MC_TEST_DATA "/../../docs/validation.md", std::ios::binary);
  ASSERT_TRUE(in) << "docs/validation.md is missing";
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(doc == r.out) << "docs/validation.md is stale: run `build/native/engine/megacluster validate --markdown "
                               "> docs/validation.md`";
}

TEST(PerfCli, HugeDegreesAndClustersAreRefusedNotWrapped) {
  // tp x pp = 2^32 used to wrap an int to 0 and divide by it (SIGFPE in estimate, search, simulate).
  const std::string wrap = R"({"model": {"preset": "gpt3-175b"}, "cluster": {"preset": "azure-openai-2020",
    "gpus": 8}, "parallel": {"tp": 65536, "pp": 65536}})";
  for (const char* cmd : {"estimate -", "simulate -"}) {
    auto r = run_cli(cmd, wrap);
    EXPECT_EQ(r.code, 1) << cmd << r.err;
    EXPECT_NE(r.err.find("4294967296"), std::string::npos) << cmd << r.err;
  }
  // 4,194,304 nodes x 1,024 GPUs passed the node cap and wrapped to 0 GPUs.
  const std::string big = R"({"model": {"preset": "gpt3-175b"}, "cluster": {"gpu": "v100-32gb",
    "gpus_per_node": 1024, "nodes": 4194304, "node_network_Gbps": 100}, "parallel": {"tp": 8}})";
  for (const char* cmd : {"estimate -", "search -", "simulate -"}) {
    auto r = run_cli(cmd, big);
    EXPECT_EQ(r.code, 1) << cmd;
    EXPECT_NE(r.err.find("cluster/nodes"), std::string::npos) << cmd << r.err;
    EXPECT_NE(r.err.find("2^30"), std::string::npos) << cmd << r.err;
  }
  // 2,097,152 single-GPU nodes: the search header says so (it printed -2147483648).
  auto r = run_cli("search - --top 1", R"({"model": {"preset": "gpt3-175b"}, "cluster": {"gpu": "v100-32gb",
    "gpus_per_node": 1, "nodes": 2097152, "node_network_Gbps": 100}})");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["cluster_gpus"].get<long long>(), 2097152LL);
}

TEST(PerfCli, SimulatorRefusesMoreGpusThanItsBudgetAtOnce) {
  // 2^30 GPUs is a valid analytic config; the simulator used to try to allocate 39 GB for it.
  const std::string cfg = R"({"model": {"preset": "gpt3-175b"}, "cluster": {"gpu": "v100-32gb", "gpus_per_node": 1024,
    "nodes": 1048576, "node_network_Gbps": 100}, "parallel": {"tp": 8, "pp": 16, "micro_batch": 1,
    "global_batch": 8388608, "schedule": "1f1b"}})";
  EXPECT_EQ(run_cli("estimate -", cfg).code, 0);
  auto r = run_cli("simulate -", cfg);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("at most 131072 GPUs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cluster/nodes"), std::string::npos) << r.err;
}
