// `megacluster play` as a course would call it: a shipped scenario passes with its digest, a broken one
// names file:line:column, a failed expectation or a wrong answer exits 1, the report file is written.
#include "cli_runner.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace {

using mc_test::run_cli;
const std::string kData = std::string(MC_TEST_DATA) + "/scenarios/";
const std::string kShipped = std::string(MC_SOURCE_DIR) + "/scenarios/";

TEST(PlayCli, ShippedScenarioPassesWithProgressAndDigest) {
  auto r = run_cli("play " + kShipped + "openai-lp-2019.json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("digest: "), std::string::npos);
  EXPECT_NE(r.err.find("4/4"), std::string::npos) << r.err;  // the progress bar reached the end
  // By id, from the shipped folder, same result.
  auto by_id = run_cli("play --quiet openai-lp-2019");
  EXPECT_EQ(by_id.code, 0) << by_id.err;
}

TEST(PlayCli, ReportFileHoldsEveryStep) {
  const std::string out = testing::TempDir() + "mc_play_report.json";
  auto r = run_cli("play --quiet --report " + out + " " + kShipped + "azure-partnership-2019.json");
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(out);
  ASSERT_TRUE(in.good());
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["steps"].size(), 4u);
  EXPECT_EQ(j["passed"], true);
  EXPECT_EQ(j["digest"].get<std::string>().size(), 16u);
  std::remove(out.c_str());
}

TEST(PlayCli, BrokenScenarioExitsOneNamingTheLocation) {
  auto r = run_cli("play " + kData + "unknown_action.json");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("unknown_action.json:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("steps/1/actions/0/do"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown action"), std::string::npos) << r.err;
}

TEST(PlayCli, FailedExpectationExitsOne) {
  auto r = run_cli("play --quiet " + kData + "failing_expectation.json");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("FAIL expect plan.params"), std::string::npos) << r.out;
}

TEST(PlayCli, AnswersAreMarked) {
  const std::string right = testing::TempDir() + "mc_answers_right.json",
                    wrong = testing::TempDir() + "mc_answers_wrong.json";
  std::ofstream(right) << R"({"q-mc": 1})";
  std::ofstream(wrong) << R"({"q-mc": 0, "q-num": 1})";
  EXPECT_EQ(run_cli("play --quiet --answers " + right + " " + kData + "quiz.json").code, 0);
  auto w = run_cli("play --quiet --answers " + wrong + " " + kData + "quiz.json");
  EXPECT_EQ(w.code, 1);
  EXPECT_NE(w.out.find("WRONG"), std::string::npos) << w.out;
  std::remove(right.c_str());
  std::remove(wrong.c_str());
}

TEST(PlayCli, UsageErrors) {
  EXPECT_EQ(run_cli("play").code, 2);
  EXPECT_EQ(run_cli("play a.json b.json").code, 2);
  auto missing = run_cli("play /no/such/scenario.json");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("/no/such/scenario.json"), std::string::npos) << missing.err;
}

}  // namespace
