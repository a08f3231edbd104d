// readme_commands_test.cpp - every `megacluster` command README.md shows in a code block runs: exit 0 and
// the output its comment promises. The commands are read from README.md itself, so a README edit that
// breaks an example (as the GPT-3 estimate once did: exit 1) fails here.
#include "cli_runner.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using mc_test::run_cli;

namespace {

struct Example {
  std::string args;   // after "megacluster "
  std::string stdin;  // the JSON an `echo '...' | megacluster ... -` pipes in
  int line = 0;
};

std::vector<std::string> readme_lines() {
  std::ifstream in(std::string(MC_SOURCE_DIR) + "/README.md");
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(' '));
  s.erase(s.find_last_not_of(' ') + 1);
  return s;
}

// Indented code-block lines (4 spaces) that run megacluster: "megacluster ARGS  # comment" and the
// "echo 'JSON' \ | megacluster ARGS" pipeline.
std::vector<Example> readme_examples() {
  const std::vector<std::string> lines = readme_lines();
  std::vector<Example> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("    ", 0) != 0) continue;
    std::string l = trim(lines[i]);
    if (l.rfind("echo '", 0) == 0) {  // a pipeline: JSON up to the closing quote, then "| megacluster ..."
      std::string json = l.substr(6);
      size_t j = i;
      while (json.find("}'") == std::string::npos && ++j < lines.size()) json += "\n" + lines[j];
      json = json.substr(0, json.rfind("}'") + 1);
      while (++j < lines.size() && trim(lines[j]).rfind("| megacluster ", 0) != 0) {
      }
      if (j < lines.size()) out.push_back({trim(trim(lines[j]).substr(14)), json, int(i + 1)});
      i = j;
      continue;
    }
    if (l.rfind("megacluster ", 0) != 0) continue;
    std::string args = l.substr(12);
    if (size_t hash = args.find("  #"); hash != std::string::npos) args = args.substr(0, hash);
    out.push_back({trim(args), "", int(i + 1)});
  }
  return out;
}

// Paths in the examples are relative to the repository root.
std::string rooted(std::string args) {
  for (size_t at = 0; (at = args.find("assets/", at)) != std::string::npos;
       at += 7 + std::string(MC_SOURCE_DIR).size() + 1)
    if (at == 0 || args[at - 1] == ' ') args.insert(at, std::string(MC_SOURCE_DIR) + "/");
  return args;
}

}  // namespace

TEST(ReadmeCommands, EveryCommandShownRunsAndPrintsWhatItsCommentSays) {
  const std::vector<Example> examples = readme_examples();
  // What each command's output must contain (its JSON keys, or the text a reader is told to expect).
  const std::map<std::string, std::vector<std::string>> promised = {
      {"catalog", {"Training stacks", "megatron-lm-2021", "reported"}},
      {"estimate", {"memory_per_gpu_bytes", "iteration_time_s", "mfu", "training_days", "cost_usd", "software"}},
      {"search", {"ranked", "rejected_by_reason", "iteration_time_s"}},
      {"validate", {"Table 1 achieved TFLOP/s", "All throughput rows"}},
      {"simulate", {"iteration_time_s", "analytic", "critical_path"}},
      {"train", {"losses", "tokens_per_s", "predicted_bytes_per_worker"}},
      {"scaling", {"predict"}},
      {"plan", {"params", "tokens", "IsoFLOP profiles", "parametric"}},
      {"play", {"digest:"}},
      {"device", {"cuda_compiled", "gpu_available"}},
  };
  std::map<std::string, int> ran;
  for (const Example& ex : examples) {
    const std::string cmd = ex.args.substr(0, ex.args.find(' '));
    const auto r = run_cli(rooted(ex.args), ex.stdin);
    EXPECT_EQ(r.code, 0) << "README.md:" << ex.line << ": megacluster " << ex.args << "\n" << r.err;
    auto it = promised.find(cmd);
    ASSERT_NE(it, promised.end()) << "README.md:" << ex.line << ": no expectation for `megacluster " << cmd
                                  << "`: add what its output promises to this test";
    for (const std::string& key : it->second)
      EXPECT_NE(r.out.find(key), std::string::npos)
          << "README.md:" << ex.line << ": `megacluster " << ex.args << "` printed no \"" << key << "\"";
    if (!r.out.empty() && r.out[0] == '{') EXPECT_NO_THROW((void)nlohmann::json::parse(r.out)) << ex.args;
    ++ran[cmd];
  }
  // The ten commands of the synopsis and the GPT-3 pipeline (a second estimate) were all found.
  EXPECT_EQ(ran.size(), 10u);
  EXPECT_EQ(ran["estimate"], 2);
  EXPECT_GE(examples.size(), 11u);
}

TEST(ReadmeCommands, TheGpt3ExampleIsTheExampleFile) {
  // The pipeline's JSON and assets/examples/gpt3-azure-2020.json describe the same run (one estimate).
  std::string piped;
  for (const Example& ex : readme_examples())
    if (!ex.stdin.empty()) piped = ex.stdin;
  ASSERT_FALSE(piped.empty());
  const auto a = nlohmann::json::parse(run_cli("estimate -", piped).out);
  const auto b = nlohmann::json::parse(run_cli(rooted("estimate assets/examples/gpt3-azure-2020.json")).out);
  EXPECT_DOUBLE_EQ(a["iteration_time_s"].get<double>(), b["iteration_time_s"].get<double>());
  EXPECT_DOUBLE_EQ(a["training_days"].get<double>(), b["training_days"].get<double>());
}
