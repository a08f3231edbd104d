// The web build's CLI (WebAssembly under node, SIMD128 kernels of engine/train/kernels/gemm_wasm.cpp) against this
// native CLI as the reference: the same training run must give the same losses. Training covers the GEMM's
// four transpose cases (forward x W, backward dy W^T and x^T dy, attention's q k^T and P^T dy), and the
// odd-shaped model below puts every product on the kernel's edge paths (sizes not multiples of 4 or 8).
// Skipped, with the reason, when node or the web build (MC_WEB_BUILD_DIR) is absent.
#include "cli_runner.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace {

using mc_test::run_cli;

// The native and wasm kernels sum in different orders (AVX2 FMA vs SIMD128 multiply-then-add) and their
// exp/tanh differ by a few ulp; three steps of a small model move losses by ~1e-8 relative. 1e-4 is far
// above that and far below what a wrong product, transpose or tail would do (those change losses at 1e-2).
constexpr double kRelTol = 1e-4;

std::string skip_reason() {
  const std::string node = MC_NODE_EXE, cli = MC_WEB_CLI;
  if (node.empty() || node.find("NOTFOUND") != std::string::npos)
    return "node not found (install nodejs, then re-run cmake)";
  if (cli.empty()) return "MC_WEB_BUILD_DIR is not set (configure with -DMC_WEB_BUILD_DIR=<web build folder>)";
  if (!std::filesystem::exists(cli))
    return cli + " does not exist: build the web CLI first (cmake --build <web build> --target megacluster)";
  return "";
}

mc_test::CliRun run_web(const std::string& args) {
  const std::string errfile = testing::TempDir() + "mc_wasm_err_" + std::to_string(getpid()) + ".txt";
  const std::string cmd = std::string(MC_NODE_EXE) + " " + MC_WEB_CLI + " " + args + " 2>" + errfile;
  mc_test::CliRun r{0, "", ""};
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (FILE* e = std::fopen(errfile.c_str(), "r")) {
    while ((n = std::fread(buf.data(), 1, buf.size(), e)) > 0) r.err.append(buf.data(), n);
    std::fclose(e);
  }
  std::remove(errfile.c_str());
  return r;
}

void expect_same_losses(const std::string& args) {
  const auto web = run_web(args), native = run_cli(args);
  ASSERT_EQ(web.code, 0) << web.err;
  ASSERT_EQ(native.code, 0) << native.err;
  const auto w = nlohmann::json::parse(web.out), c = nlohmann::json::parse(native.out);
  EXPECT_EQ(w["sgemm_path"], "wasm-simd128")
      << MC_WEB_CLI << " does not use the SIMD128 kernels: it predates them or was built without -msimd128; rebuild it";
  ASSERT_EQ(w["losses"].size(), c["losses"].size());
  ASSERT_FALSE(w["losses"].empty());
  for (size_t i = 0; i < w["losses"].size(); ++i) {
    const double lw = w["losses"][i].get<double>(), lc = c["losses"][i].get<double>();
    EXPECT_TRUE(std::isfinite(lw)) << "step " << i;
    EXPECT_LE(std::fabs(lw - lc), kRelTol * std::fabs(lc)) << "step " << i << ": wasm " << lw << ", native " << lc;
  }
  // Runs repeat bit for bit: the kernels' summation order depends on the shapes alone.
  const auto again = run_web(args);
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["losses"], w["losses"]);
}

TEST(WasmCli, DefaultModelMatchesNative) {
  if (auto why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  expect_same_losses("train --steps 3 --quiet --json");
}

TEST(WasmCli, OddShapesAndModelParallelMatchNative) {
  if (auto why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  // Width 44 over 4 heads (head size 11), vocabulary 97, context 37, batch 3: no dimension is a multiple
  // of the kernel's 4 x 8 block. tp 2 splits the MLP and heads further (column widths 88, 66, 22).
  const std::string cfg = testing::TempDir() + "mc_wasm_odd_" + std::to_string(getpid()) + ".json";
  std::ofstream(cfg) << R"({"model": {"vocab": 97, "context": 37, "layers": 2, "width": 44, "heads": 4},
                           "batch": 3, "steps": 3})";
  expect_same_losses("train " + cfg + " --tp 2 --quiet --json");
  std::filesystem::remove(cfg);
}

}  // namespace
