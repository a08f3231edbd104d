// input_limits_cli_test.cpp - the size limits of the command line's inputs (docs/CONTRIBUTING "Errors"):
// a 200 MB config is refused naming its size and the limit, before it is read (issue 15: `estimate` took
// 190 s and 8.8 GB on one); the simulator refuses a past-budget config at the key to change.
#include "cli_runner.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

using mc_test::run_cli;

TEST(InputLimitsCli, A200MegabyteConfigIsRefusedBySize) {
  // Sparse: nothing is written to the disk; the per-process name keeps parallel ctest runs apart.
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mc-200mb-" + std::to_string(getpid()) + ".json")).string();
  { std::ofstream(path) << "{\"model\": "; }
  std::filesystem::resize_file(path, 200u << 20);
  for (const char* cmd : {"estimate", "search", "simulate"}) {
    auto r = run_cli(std::string(cmd) + " " + path, "");
    EXPECT_EQ(r.code, 1) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("209715200 bytes"), std::string::npos) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("at most 4194304 bytes"), std::string::npos) << cmd << ": " << r.err;
  }
  std::filesystem::remove(path);
}

TEST(InputLimitsCli, SimulateRefusesAPastBudgetConfigAtTheKey) {
  auto r = run_cli("simulate -", R"({"model": {"preset": "megatron21-1t"},
      "cluster": {"gpu": "a100-80gb", "gpus_per_node": 8, "nodes": 7504, "node_network_Gbps": 0.001},
      "parallel": {"tp": 1, "pp": 1, "dp": 60032, "micro_batch": 1, "global_batch": 120064}})");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("parallel/dp"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("work"), std::string::npos) << r.err;
}
