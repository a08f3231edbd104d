// actions.h - what a scenario step can do, as a registry of named actions (Box2D-samples style, but with an
// explicit registration function: static initialisers in a static library may be dropped by the linker).
//
//   ActionRegistry reg;
//   register_builtin_actions(reg);        // set, plan, waterfall, partnership, gpt3_priced, estimate,
//                                          // search, simulate, train, focus_panel, highlight, wait
//   const ActionRegistry& r = default_actions();   // the same, built once
//
// Every action validates its own keys at load time (located LoadError) and runs against PlayState, the
// plain engine state of a scenario being played: the configs it edits and the results it produced.
#pragma once

#include "core/json_doc.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mc {
struct Catalog;
}

namespace mc::scenario {

// The configs a scenario edits: each is the JSON input of one engine entry point and is shown by one
// panel of the explorer (`panel`, an id of ui/ panels; the UI binds every kind to its panel in
// ui/scenario_bindings.cpp, and a test fails when a kind has no binding). Adding a kind is one entry here
// and one binding there.
struct ConfigKind {
  const char* name;                  // "plan": the key in PlayState::configs and a "set" action's "config"
  const char* panel;                 // "capital": the panel (optionally "panel/tab") that shows this config
  const char* summary;               // what the config drives
  std::vector<std::string> actions;  // the actions that run the engine on it; their results are what the
                                     // panel shows (the last one's, when a step runs several)
};
const std::vector<ConfigKind>& config_kinds();
const ConfigKind* find_config_kind(const std::string& name);
// The config kind an action runs the engine on ("search" -> "estimate"); null for the others (facts, fit...).
const ConfigKind* config_kind_of_action(const std::string& action);

// What the last engine call on a config kind received beyond the scenario's config. A panel shown beside
// the narration repeats that very call, so its numbers are the narration's.
struct EngineCall {
  json config;     // exactly what the engine ran: "train" with its steps, seed and device filled in
  json made_from;  // the scenario's config it was made from (equal to `config` where nothing was filled in)
  unsigned long long seed = 1;  // "simulate": the run's seed (the scenario's, for common random numbers)
  double run_days = 0;          // "simulate": the run's length in days; 0 where the call ran none
};

// The state a scenario drives. Configs are the JSON inputs of each engine entry point (config_kinds());
// results are their outputs by name.
struct PlayState {
  json configs = json::object();
  json results = json::object();
  std::map<std::string, EngineCall> engine_calls;  // by config kind
  std::string focus_panel;                         // panel id the UI should show
  std::string highlight_widget;                    // tracked widget id to outline
  double wait_s = 0;                               // the step asks to stay this long before auto-advance
  bool wait_user = false;                          // the step waits for the user (Next) when playing
};

// Initial configs: capital defaults with prices from the catalog (null catalog: built-in defaults).
PlayState initial_state(const Catalog* catalog);

struct ActionContext {
  const Catalog* catalog = nullptr;
  PlayState* state = nullptr;
  unsigned long long seed = 1;           // scenario seed mixed with the step and action index
  unsigned long long scenario_seed = 1;  // the scenario's own seed (for runs that must be comparable)
  std::vector<std::string> produced;     // result names written by this step
};

struct ActionDef {
  std::string name, summary;
  std::vector<std::string> keys;  // allowed keys besides "do"
  // Checks the action's values; throws LoadError through the cursor. `catalog` may be null.
  std::function<void(const JsonCursor& action, const Catalog* catalog)> validate;
  // Runs it; throws std::exception (message reported with the step) on failure.
  std::function<void(const json& action, ActionContext& ctx)> run;
  // The result an action with an "as" key stores when it has none: `result`, or else the action's name.
  // Load-time checks (checks.h) follow these names so that a reference to a result no earlier action
  // produces is refused when the file is opened, not shown as raw braces in class.
  std::string result = "";
  std::vector<std::string> result_keys = {};  // keys whose values are result paths (or lists of result names)
};

// The name of the result `action` (a "do" of `def`) stores; "" when it stores none.
std::string produced_result(const ActionDef& def, const json& action);

class ActionRegistry {
 public:
  void add(ActionDef def);  // replaces an action of the same name
  const ActionDef* find(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::vector<ActionDef>& all() const { return defs_; }

 private:
  std::vector<ActionDef> defs_;
};

void register_builtin_actions(ActionRegistry& reg);
// The analytic model, the simulator and the training lab (engine_actions.cpp).
void register_engine_actions(ActionRegistry& reg);
const ActionRegistry& default_actions();

// Dotted path into results: "estimate.time.total", "waterfall.holders.0.total_usd". Null if absent.
const json* lookup_result(const json& results, const std::string& path);

}  // namespace mc::scenario
