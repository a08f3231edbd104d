// scenario.h - the scenario format: a short guided story that drives the real engine.
//
// A scenario is a versioned JSON file (scenarios/*.json, listed in scenarios/index.json):
//
//   {"format": "megacluster-scenario", "version": 1, "id": "azure-partnership-2019",
//    "title": "...", "audience": "...", "minutes": 8, "summary": "...", "topics": ["capital"],
//    "sources": ["microsoft-openai-2019"],            // ids in assets/catalog/sources.json
//    "seed": 1,                                        // every seeded action derives its seed from this
//    "steps": [{
//      "id": "credit", "title": "...",
//      "narration": "The credit buys {{plan.gpu_hours|si}} GPU-hours.",  // numbers come from results
//      "sources": ["..."],
//      "actions": [{"do": "set", "config": "plan", "path": "/budget_usd", "value": 1e9}, {"do": "plan"},
//                  {"do": "focus_panel", "panel": "capital"}, {"do": "wait", "seconds": 3}],
//      "questions": [{"id": "q1", "prompt": "...", "choices": ["a", "b"], "answer": 1},
//                    {"id": "q2", "prompt": "...", "answer_result": "plan.params", "tolerance": 0.1}],
//      "expect": [{"result": "plan.params", "between": [1e10, 1e11]}]}]}
//
// Actions are looked up in an ActionRegistry (actions.h); each action validates its own keys, so an
// unknown action, a wrong type, a value out of range or a missing preset is reported with the file, line,
// column, step and key before anything runs. Checks across steps follow (checks.h): every result a
// narration, expectation, question or action refers to is produced by an earlier action, and the configs
// the engine actions will read are accepted by the engine's own parsers (a "set" to gpus -8 is named there).
#pragma once

#include "core/json_doc.h"

#include <optional>
#include <string>
#include <vector>

namespace mc {
struct Catalog;
}

namespace mc::scenario {

constexpr int kFormatVersion = 1;
constexpr const char* kFormatName = "megacluster-scenario";

class ActionRegistry;

struct Action {
  std::string name;     // the "do" value
  json params;          // the whole action object
  std::string pointer;  // JSON pointer of the action in the file (for run-time messages)
};
// The widget a "highlight" action outlines ("perf.memory"); empty for every other action.
std::string highlighted_widget(const Action& a);

struct Question {
  std::string id, prompt;
  std::vector<std::string> choices;  // multiple choice when not empty; `answer` is the index
  int answer_index = -1;
  // Number questions: the right answer is `answer_value`, or the engine result `answer_result`.
  std::optional<double> answer_value;
  std::string answer_result;
  double tolerance = 0.05;  // relative
  std::string explanation;
  // What on screen gives the answer away, as narration references ("{{estimate.training_days|days}}"): the
  // panels draw these values masked until the class reveals the answer, so a question is not answered by the
  // number beside it. Written as the panel writes them (the same formats as the narration).
  std::vector<std::string> hides;
  std::string pointer;  // where in the file
};

struct Expectation {
  std::string result;  // dotted path into the results ("estimate.iteration_time_s")
  std::string op;  // "between", "equals", "less_than", "greater_than", "less_than_result", "greater_than_result", "is"
  double lo = 0, hi = 0;  // between; equals uses lo with tolerance hi (relative)
  std::string other;      // *_result ops
  json value;             // "is": exact JSON value (bool or string)
  std::string pointer;    // where in the file
  std::string describe() const;
};

struct Step {
  std::string id, title, narration;
  std::vector<std::string> sources;
  std::vector<Action> actions;
  std::vector<Question> questions;
  std::vector<Expectation> expectations;
  std::string pointer;  // where in the file
};

struct Scenario {
  int version = kFormatVersion;
  std::string id, title, audience, summary, file;
  double minutes = 0;
  std::vector<std::string> topics, sources;
  unsigned long long seed = 1;
  std::vector<Step> steps;
};

struct ParseResult {
  std::optional<Scenario> scenario;  // set when there were no errors
  std::vector<LoadError> errors;     // every problem found, each located
  bool ok() const { return errors.empty(); }
  std::string message() const;  // all errors, one per line
};

// Parses and validates. `catalog` (may be null) checks source ids and presets. Never throws for bad input.
ParseResult parse_scenario(const JsonDoc& doc, const ActionRegistry& actions, const Catalog* catalog);
ParseResult load_scenario(const std::string& path, const ActionRegistry& actions, const Catalog* catalog);
ParseResult parse_scenario_text(const std::string& text, const std::string& file, const ActionRegistry& actions,
                                const Catalog* catalog);

// Whether a file someone opened is meant as a scenario: it names the format, or it is a .json object with
// "steps" (a scenario whose "format" is missing or misspelt), so that the explorer lists its problems
// ("missing required key \"format\"", ...) instead of saying nothing opens it.
bool looks_like_scenario(const std::string& name, const std::string& text);

// scenarios/index.json: {"version": 1, "scenarios": ["dgx1-2016.json", ...]} in gallery order.
struct IndexEntry {
  std::string file, path, id, title, audience, summary;
  double minutes = 0;
  std::vector<std::string> topics;
  std::string error;  // non-empty when the file does not validate
};
std::vector<IndexEntry> load_index(const std::string& scenarios_dir, const ActionRegistry& actions,
                                   const Catalog* catalog);

}  // namespace mc::scenario
