// The megacluster CLI as a user calls it: exit codes, JSON that parses, usage on bad arguments.
#include "cli_runner.h"

#include <nlohmann/json.hpp>

#include <filesystem>

using mc_test::CliRun;
using mc_test::run_cli;

TEST(Cli, NoArgumentsPrintsUsageAndFails) {
  CliRun r = run_cli("");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("usage: megacluster COMMAND"), std::string::npos) << r.err;
}

TEST(Cli, HelpSucceeds) {
  CliRun r = run_cli("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("catalog"), std::string::npos);
}

TEST(Cli, UnknownCommandFails) {
  CliRun r = run_cli("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown command \"frobnicate\""), std::string::npos);
}

TEST(Cli, CatalogJsonParsesAndHasSourcedValues) {
  CliRun r = run_cli("catalog --json");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const auto& v100 = j["tables"]["gpus"]["records"];
  bool found = false;
  for (const auto& rec : v100) {
    if (rec["id"] != "v100-32gb") continue;
    found = true;
    EXPECT_DOUBLE_EQ(rec["values"]["peak_fp16_tensor_flops"]["value"].get<double>(), 125e12);
    EXPECT_EQ(rec["values"]["peak_fp16_tensor_flops"]["confidence"], "reported");
    EXPECT_FALSE(rec["values"]["peak_fp16_tensor_flops"]["source"].get<std::string>().empty());
  }
  EXPECT_TRUE(found);
  EXPECT_GE(j["sources"].size(), 5u);
}

TEST(Cli, CatalogTextAndTableFilter) {
  CliRun r = run_cli("catalog --table systems");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("DGX-1"), std::string::npos);
  // Only the systems table: not the accelerators' (a system may name its GPU, "8x H100", so look for the
  // accelerators table's own heading and one of its records).
  EXPECT_EQ(r.out.find("== Accelerators"), std::string::npos);
  EXPECT_EQ(r.out.find("NVIDIA Tesla P100 SXM2 16 GB"), std::string::npos);
  CliRun bad = run_cli("catalog --table nosuch");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("no table \"nosuch\""), std::string::npos);
}

// Dates print as the source gives them (Microsoft's $1B: 2019-07-22), in the text table and in JSON.
TEST(Cli, CatalogEventsShowDatesNotRoundedYears) {
  CliRun r = run_cli("catalog --table events");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("2019-07-22"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2016-08"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2022-08"), std::string::npos) << r.out;
  CliRun j = run_cli("catalog --json --table events");
  ASSERT_EQ(j.code, 0) << j.err;
  const nlohmann::json ev = nlohmann::json::parse(j.out)["tables"]["events"];
  bool found = false;
  for (const auto& rec : ev["records"])
    if (rec["id"] == "microsoft-1b") found = rec["values"]["date"]["value"] == "2019-07-22";
  EXPECT_TRUE(found) << ev.dump();
}

TEST(Cli, UnknownOptionPrintsUsage) {
  CliRun r = run_cli("catalog --jsn");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown option --jsn"), std::string::npos);
  EXPECT_NE(r.err.find("usage: megacluster catalog"), std::string::npos);
}

TEST(Cli, BrokenCatalogIsALocatedError) {
  // An assets folder whose gpus table has a syntax error: exit 1, message with file:line:column.
  std::string dir = testing::TempDir() + "mc_bad_assets_" + std::to_string(getpid());
  std::string cmd = "rm -rf " + dir + " && mkdir -p " + dir + "/catalog && cp " + MC_SOURCE_DIR +
                    "/assets/catalog/*.json " + dir + "/catalog/ && cp " + MC_TEST_DATA +
                    "/bad_catalog/wrong_type.json " + dir + "/catalog/gpus.json";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  CliRun r = run_cli("catalog --assets " + dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("gpus.json:9:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("records/0/values/hbm_bytes/value"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

TEST(Cli, DeviceReportsCpuFallback) {
  CliRun r = run_cli("device --json");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["message"].get<std::string>().empty());
  if (!j["gpu_available"].get<bool>()) EXPECT_NE(j["message"].get<std::string>().find("CPU"), std::string::npos);
}

// Without --json it lists every kind the build registered (device/registry.h), the reference among them,
// with what each can do.
TEST(Cli, DeviceListsTheKindsThisBuildHas) {
  CliRun r = run_cli("device");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  cpu    CPU (the reference): 1 found; host memory; products in fp32, tf32, bf16"),
            std::string::npos)
      << r.out;
#if MC_HAVE_CUDA
  EXPECT_NE(r.out.find("  cuda   CUDA GPUs: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device memory, several units per process"), std::string::npos) << r.out;
#else
  EXPECT_EQ(r.out.find("cuda "), std::string::npos) << r.out;
#endif
}

TEST(Cli, LongCommandsDrawOneSharedProgressBarOnStderr) {
  // play and simulate --run both use cli::progress_bar: the bar ends full, on stderr, never on stdout.
  CliRun play = run_cli("play dgx1-2016");
  ASSERT_EQ(play.code, 0) << play.err;
  EXPECT_NE(play.err.find("] 100%"), std::string::npos) << play.err;
  EXPECT_EQ(play.out.find("] 100%"), std::string::npos);
}
