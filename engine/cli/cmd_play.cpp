// `megacluster play`: replays a scenario headless, step by step with a progress bar on stderr, checks its
// expectations (and a student's answers), prints a report with the digest of all results, and exits 1 if
// an expectation failed, an action failed or an answer was wrong.
#include "catalog/catalog.h"
#include "cli/cli.h"
#include "core/paths.h"
#include "scenario/player.h"

#include <cstdio>
#include <fstream>

namespace {

void progress(int done, int total, const std::string& label) {
  mc::cli::progress_bar(total > 0 ? double(done) / total : 1.0,
                        "step " + std::to_string(done) + "/" + std::to_string(total) + " " + label);
}

int run_play(mc::cli::Args& a) {
  const bool as_json = a.flag("--json");
  const bool validate_only = a.flag("--validate");
  const bool quiet = a.flag("--quiet");
  auto report_path = a.option("--report");
  auto answers_path = a.option("--answers");
  auto assets = a.option("--assets");
  auto pos = a.positionals();
  a.finish();
  if (pos.size() != 1) throw mc::cli::UsageError("give one scenario file (or the id of a shipped scenario)");
  std::string path = pos[0];
  if (!mc::file_exists(path)) {
    std::string shipped = mc::find_scenarios_dir(a.exe_path()) + "/" + path + ".json";
    if (mc::file_exists(shipped)) path = shipped;
  }
  mc::Catalog cat = mc::load_catalog(assets ? *assets : mc::find_assets_dir(a.exe_path()));
  mc::scenario::ParseResult parsed = mc::scenario::load_scenario(path, mc::scenario::default_actions(), &cat);
  if (!parsed.ok()) {
    std::fprintf(stderr, "megacluster play: %zu problem(s) in the scenario:\n%s", parsed.errors.size(),
                 parsed.message().c_str());
    return 1;
  }
  if (validate_only) {
    std::printf("%s: valid (%zu steps)\n", path.c_str(), parsed.scenario->steps.size());
    return 0;
  }
  std::map<std::string, mc::json> answers;
  if (answers_path) answers = mc::scenario::load_answers(*answers_path);

  mc::scenario::Player player(*parsed.scenario, &cat);
  const int n = player.step_count();
  if (!quiet) progress(0, n, "starting");
  while (player.next()) {
    if (!quiet) progress(player.current() + 1, n, player.outcome()->id);
  }
  mc::scenario::Report rep = player.report(answers);
  for (const auto& [qid, v] : answers) {
    bool known = false;
    for (const auto& ans : rep.answers) known = known || ans.question == qid;
    if (!known)
      std::fprintf(stderr, "warning: the answers name a question \"%s\" the scenario does not have\n", qid.c_str());
  }
  mc::json j = mc::scenario::to_json(rep);
  if (report_path) {
    std::ofstream out(*report_path);
    if (!out) throw std::runtime_error("cannot write the report to " + *report_path);
    out << j.dump(2) << "\n";
  }
  if (as_json) {
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s (%s)\n", rep.title.c_str(), rep.scenario_id.c_str());
    for (const auto& s : rep.steps) {
      std::printf("%s %s: %s\n", s.passed() ? "ok  " : "FAIL", s.id.c_str(), s.title.c_str());
      std::printf("     %s\n", s.narration.c_str());
      for (const auto& e : s.expectations)
        std::printf("     %s expect %s (got %s)\n", e.passed ? "pass" : "FAIL", e.text.c_str(), e.actual.c_str());
      for (const auto& e : s.errors) std::printf("     error: %s\n", e.c_str());
    }
    for (const auto& ans : rep.answers)
      if (ans.answered)
        std::printf("answer %s: %s (given %s, expected %s)\n", ans.question.c_str(), ans.correct ? "right" : "WRONG",
                    ans.given.c_str(), ans.expected.c_str());
    std::printf("expectations: %d, failed: %d, errors: %d, answers right: %d/%d\n", rep.expectations_total,
                rep.expectations_failed, rep.errors, rep.correct, rep.answered);
    std::printf("digest: %s\n", rep.digest.c_str());
  }
  return rep.passed() ? 0 : 1;
}

mc::cli::Registrar reg{{"play",
                        "replay a scenario headless: check its expectations and answers, print a report and digest",
                        "megacluster play SCENARIO.json|ID [--report out.json] [--answers answers.json] [--json] "
                        "[--validate] [--quiet] [--assets DIR]",
                        run_play}};

}  // namespace
