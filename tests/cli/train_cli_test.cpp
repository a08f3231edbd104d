// `megacluster train` and `megacluster scaling` as a user runs them.
#include "cli_runner.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

using mc_test::run_cli;
const std::string kSmall = " --steps 6 --quiet --json ";

TEST(TrainCli, JsonHasLossesThroughputAndBytes) {
  auto r = run_cli("train --dp 2 --tp 2" + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["losses"].size(), 6u);
  EXPECT_LT(j["losses"][5].get<double>(), j["losses"][0].get<double>());
  EXPECT_GT(j["tokens_per_s"].get<double>(), 0);
  EXPECT_GT(j["gflops"].get<double>(), 0);
  // One wall time per step; the median-step throughput is batch x context over the median of steps 2-6
  // (the first step pays for allocation and is left out, as in tokens_per_s).
  ASSERT_EQ(j["step_seconds"].size(), 6u);
  std::vector<double> s;
  for (size_t i = 1; i < 6; ++i) s.push_back(j["step_seconds"][i].get<double>());
  std::sort(s.begin(), s.end());
  const double tokens = j["config"]["batch"].get<double>() * j["config"]["model"]["context"].get<double>();
  EXPECT_DOUBLE_EQ(j["tokens_per_s_median_step"].get<double>(), tokens / s[2]);
  ASSERT_EQ(j["bytes_sent_per_worker"].size(), 4u);
  EXPECT_EQ(j["bytes_sent_per_worker"], j["predicted_bytes_per_worker"]);
  EXPECT_GT(j["bytes_sent_per_worker"][0].get<double>(), 0);
  // The per-link view adds up to the per-worker counts: what each worker sent, over its links.
  std::vector<double> from(4, 0.0);
  for (const auto& l : j["links_last_step"]) from[l["src"].get<size_t>()] += l["bytes"].get<double>();
  for (size_t w = 0; w < 4; ++w) EXPECT_DOUBLE_EQ(from[w], j["bytes_sent_per_worker"][w].get<double>()) << w;
}

TEST(TrainCli, SamplesWhileItTrains) {
  // --sample-every K: text generated every K steps, in the JSON and above the progress bar on stderr.
  auto r = run_cli("train --steps 6 --sample-every 3 --sample 24 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["samples"].size(), 2u);
  EXPECT_EQ(j["samples"][0]["step"], 3);
  EXPECT_EQ(j["samples"][1]["step"], 6);
  EXPECT_FALSE(j["samples"][1]["text"].get<std::string>().empty());
  EXPECT_NE(r.err.find("step 3 sample: "), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("sample: "), std::string::npos) << "samples go to stderr, JSON alone to stdout";
  // The same run writes the same samples.
  auto again = nlohmann::json::parse(run_cli("train --steps 6 --sample-every 3 --sample 24 --json --quiet").out);
  EXPECT_EQ(again["samples"], j["samples"]);
}

TEST(TrainCli, LayoutsGiveTheSameLosses) {
  auto a = nlohmann::json::parse(run_cli("train" + kSmall).out);
  auto b = nlohmann::json::parse(run_cli("train --pp 2 --dp 2 --zero 1" + kSmall).out);
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(a["losses"][i].get<double>(), b["losses"][i].get<double>(), 1e-3);
}

TEST(TrainCli, CheckpointAndResume) {
  const std::string dir = testing::TempDir() + "mc_train_cli_ckpt_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  auto first = run_cli("train --steps 3 --quiet --json --checkpoint " + dir);
  ASSERT_EQ(first.code, 0) << first.err;
  // Resuming with --steps 6 continues from step 3: with the same schedule length the run matches.
  auto part = run_cli("train --steps 6 --quiet --json --checkpoint " + dir + " --checkpoint-every 2 --resume");
  ASSERT_EQ(part.code, 0) << part.err;
  auto j = nlohmann::json::parse(part.out);
  EXPECT_EQ(j["steps_run"], 3);
  ASSERT_EQ(j["losses"].size(), 6u);
  EXPECT_TRUE(std::filesystem::exists(dir + "/ckpt-00000006.mcck"));
  // A corrupt newest checkpoint is refused with a warning naming it (and kept on disk); the run resumes
  // from the previous one (step 4).
  {
    std::ofstream f(dir + "/ckpt-00000006.mcck", std::ios::binary | std::ios::trunc);
    f << "garbage";
  }
  auto bad = run_cli("train --steps 8 --quiet --json --checkpoint " + dir + " --resume");
  ASSERT_EQ(bad.code, 0) << bad.err;
  EXPECT_NE(bad.err.find("warning: skipped " + dir + "/ckpt-00000006.mcck"), std::string::npos) << bad.err;
  auto k = nlohmann::json::parse(bad.out);
  EXPECT_EQ(k["resumed_from"], dir + "/ckpt-00000004.mcck");
  EXPECT_EQ(k["steps_run"], 4);
  // Asking for fewer steps than the newest checkpoint holds is refused with the fix.
  auto past = run_cli("train --steps 5 --quiet --json --checkpoint " + dir + " --resume");
  EXPECT_EQ(past.code, 1);
  EXPECT_NE(past.err.find("--steps 8"), std::string::npos) << past.err;
  std::filesystem::remove_all(dir);
}

TEST(TrainCli, TrainsOnAUserCorpusAndPrintsASample) {
  const std::string path = testing::TempDir() + "mc_train_corpus_" + std::to_string(getpid()) + ".txt";
  {
    std::ofstream f(path, std::ios::binary);
    for (int i = 0; i < 300; ++i) f << "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich. ";
  }
  auto r = run_cli("train --steps 4 --quiet --json --sample 40 --corpus " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["corpus"], path);
  EXPECT_FALSE(j.contains("corpus_entropy_nats_per_byte"));
  EXPECT_FALSE(j["sample"].get<std::string>().empty());
  std::filesystem::remove(path);
  EXPECT_EQ(run_cli("train --quiet --corpus /nonexistent/corpus.txt").code, 1);
}

TEST(TrainCli, BadArgumentsAndTooBigRuns) {
  EXPECT_EQ(run_cli("train --zero 5").code, 2);
  EXPECT_EQ(run_cli("train --resume").code, 2);
  auto r = run_cli("train --tp 3 --quiet");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("multiple of tp"), std::string::npos) << r.err;
  auto big = run_cli("train --memory-limit-GB 0.001 --quiet");
  EXPECT_EQ(big.code, 1);
  EXPECT_NE(big.err.find("over the limit"), std::string::npos) << big.err;
  auto cfg = testing::TempDir() + "mc_train_bad_cfg_" + std::to_string(getpid()) + ".json";
  {
    std::ofstream f(cfg);
    f << "{\n  \"model\": {\"widht\": 32}\n}\n";
  }
  auto located = run_cli("train " + cfg + " --quiet");
  EXPECT_EQ(located.code, 1);
  EXPECT_NE(located.err.find(":2:"), std::string::npos) << located.err;  // file:line:column
  EXPECT_NE(located.err.find("widht"), std::string::npos) << located.err;
  // A layout the file allows but the options break: the message says where the settings came from.
  {
    std::ofstream f(cfg, std::ios::trunc);
    f << "{\"model\": {\"layers\": 2, \"width\": 32, \"heads\": 2, \"context\": 16}, \"batch\": 4}\n";
  }
  auto layout = run_cli("train " + cfg + " --tp 3 --quiet");
  EXPECT_EQ(layout.code, 1);
  EXPECT_NE(layout.err.find(cfg + " with the command-line options"), std::string::npos) << layout.err;
  std::filesystem::remove(cfg);
  EXPECT_EQ(run_cli("train --dp 0 --quiet").code, 2);  // out of range: usage
  auto dir = run_cli("train --corpus " + testing::TempDir() + " --steps 1 --quiet");
  EXPECT_EQ(dir.code, 1);
  EXPECT_NE(dir.err.find("is a directory"), std::string::npos) << dir.err;
}

TEST(TrainCli, ThreadCountChangesSpeedNotResults) {
  // MC_THREADS sets the kernels' thread pool (1 = no helper threads); the pieces of work depend on the
  // shapes only, so the losses are the same bits with any count.
  // The bench's figures on a small model from a file (the --bench shape took 19 s of CPU under the
  // sanitizers; what is checked here, the figures and the thread count, is the same for any shape).
  auto small = testing::TempDir() + "mc_train_bench_cfg_" + std::to_string(getpid()) + ".json";
  {
    std::ofstream f(small);
    f << R"({"model": {"layers": 1, "width": 64, "heads": 2, "context": 64, "vocab": 256}, "batch": 2})";
  }
  setenv("MC_THREADS", "1", 1);
  auto one = run_cli("train --steps 3 --quiet --json");
  auto bench = run_cli("train " + small + " --bench --steps 2 --quiet --json");
  std::filesystem::remove(small);
  setenv("MC_THREADS", "2", 1);
  auto two = run_cli("train --steps 3 --quiet --json");
  setenv("MC_THREADS", "two", 1);
  auto bad = run_cli("train --steps 1 --quiet --json");
  unsetenv("MC_THREADS");
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_EQ(nlohmann::json::parse(one.out)["losses"], nlohmann::json::parse(two.out)["losses"]);
  ASSERT_EQ(bench.code, 0) << bench.err;
  auto j = nlohmann::json::parse(bench.out);
  EXPECT_EQ(j["threads"].get<int>(), 1);
  EXPECT_EQ(j["sgemm_shape"], nlohmann::json::array({2 * 64, 4 * 64, 64}));  // the MLP's first product
  for (const char* k : {"tokens_per_s", "gflops", "sgemm_gflops", "sgemm_shape", "sgemm_path", "flops_per_token"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_GT(j["tokens_per_s"].get<double>(), 0);
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("MC_THREADS"), std::string::npos) << bad.err;
}

TEST(TrainCli, ScalingQuickPredictsTheLargerRun) {
  auto r = run_cli("scaling --quick --quiet --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["points"].size(), 3u);
  EXPECT_TRUE(j["done"].get<bool>());
  const double pred = j["target"]["predicted_loss"], got = j["target"]["loss"];
  EXPECT_NEAR(pred, got, 0.15 * got);  // a power law fitted on 3 small runs lands within 15%
  EXPECT_LT(j["fit_compute"]["b"].get<double>(), 0);
  // On the built-in language the irreducible loss is known and is the fit's c; L(N) predicts too.
  EXPECT_TRUE(j["c_known"].get<bool>());
  EXPECT_DOUBLE_EQ(j["fit_compute"]["c"].get<double>(), j["entropy_floor_nats_per_byte"].get<double>());
  EXPECT_NEAR(j["target"]["predicted_loss_params"].get<double>(), got, 0.15 * got);
}

}  // namespace
