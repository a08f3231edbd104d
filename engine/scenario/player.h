// player.h - deterministic playback of a scenario, as plain engine state (no UI): play, pause, next,
// previous, jump, restart. Going back replays the steps from the start, so every step's state depends
// only on the file and its seed; the UI may be explored freely in between and the script resumes from
// its own state.
//
//   Player p(scenario, &catalog);
//   while (!p.finished()) p.next();          // or p.play() and p.tick(dt) once per frame
//   Report r = p.report(answers);            // expectations, answers, digest of all results
#pragma once

#include "scenario/actions.h"
#include "scenario/scenario.h"

#include <map>
#include <string>
#include <vector>

namespace mc::scenario {

struct ExpectationOutcome {
  std::string text;  // Expectation::describe()
  bool passed = false;
  std::string actual;  // the value found, or why none
  std::string pointer;
};

struct StepOutcome {
  int index = -1;
  std::string id, title;
  std::string narration;            // with {{result|format}} filled in from engine results
  std::vector<std::string> errors;  // actions that failed, narration references that did not resolve
  std::vector<ExpectationOutcome> expectations;
  json results = json::object();  // the results this step produced (name -> value)
  bool passed() const;
};

struct AnswerOutcome {
  std::string question, given, expected;
  bool answered = false, correct = false;
};

struct Report {
  std::string scenario_id, title, file;
  std::vector<StepOutcome> steps;
  std::vector<AnswerOutcome> answers;
  int expectations_total = 0, expectations_failed = 0, errors = 0;
  int answered = 0, correct = 0;
  std::string digest;  // FNV-1a 64 (hex) of the canonical JSON of every step's results
  bool passed() const { return expectations_failed == 0 && errors == 0 && correct == answered; }
};
json to_json(const Report& r);

class Player {
 public:
  Player(Scenario s, const Catalog* catalog, const ActionRegistry& actions = default_actions());

  const Scenario& scenario() const { return s_; }
  int step_count() const { return int(s_.steps.size()); }
  int current() const { return current_; }  // -1 before the first step
  bool finished() const { return current_ + 1 >= step_count(); }
  const PlayState& state() const { return state_; }
  PlayState& state() { return state_; }
  const StepOutcome* outcome() const { return current_ >= 0 ? &outcomes_[size_t(current_)] : nullptr; }
  const std::vector<StepOutcome>& outcomes() const { return outcomes_; }

  void restart();       // back before the first step, initial state
  bool next();          // run the next step; false if at the end
  void previous();      // back one step (replays from the start)
  void jump(int step);  // run steps 0..step (replays from the start); clamps
  void play() { playing_ = true; }
  void pause() { playing_ = false; }
  bool playing() const { return playing_; }
  // Advances by `dt_s` when playing: a step with "wait seconds" moves on after that long, a step with
  // "wait for user" pauses; a step with neither moves on after `default_step_s`.
  void tick(double dt_s, double default_step_s = 6.0);
  // tick() without running the step: the time passes, and true means next() is due now (the app runs
  // that step off the frame, on a copy of the player: ui/jobs.h).
  bool advance_time(double dt_s, double default_step_s = 6.0);
  double step_elapsed_s() const { return elapsed_s_; }

  Report report(const std::map<std::string, json>& answers = {}) const;

 private:
  void run_step(int i);
  Scenario s_;
  const Catalog* catalog_;
  const ActionRegistry* actions_;
  PlayState state_;
  std::vector<StepOutcome> outcomes_;
  int current_ = -1;
  bool playing_ = false;
  double elapsed_s_ = 0;
};

// "{{plan.params|si}} parameters" -> "32.2 G parameters". Formats: si (default), usd, pct, pct0 (whole percent), int,
// year, sci, f1, f2, f3, f4, days, x (multiple), s (seconds as the panels write them: "89.03 s"), count (3 digits with
// separators, as PF-days print: "1,040,000"),
// n (1.5 billion), int (300,000 with separators), gib (bytes in GiB). Unresolved references are left visible and listed
// in `missing`.
std::string render_narration(const std::string& text, const json& results, std::vector<std::string>* missing);
// The formats above, for load-time checks ("si, usd, ..."), and whether `how` is one of them.
const std::vector<std::string>& narration_formats();
bool is_narration_format(const std::string& how);

// The digest: numbers rounded to 6 significant digits (so libm differences in the last bits do not
// change it), canonical JSON (sorted keys), FNV-1a 64 in hex.
std::string digest_of(const json& value);

// Answers file: {"QUESTION_ID": value, ...}. Throws LoadError naming the file for bad JSON.
std::map<std::string, json> load_answers(const std::string& path);

}  // namespace mc::scenario
