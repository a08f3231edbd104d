// scenario_bindings.h - the one map from a scenario's configs (scenario::config_kinds(), engine side) to the
// panels that show them. The scenario player pushes every config through it after each step, and tests read
// back what each panel holds through it, so a config kind without a panel fails a test instead of being
// silently ignored by the UI (the way "simulate" once was).
//
// Adding a config kind: one entry in engine/scenario/actions.cpp (config_kinds) and a ConfigBinding in the
// registration of the panel that shows it (Panel::configs).
#pragma once

#include "scenario/actions.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace mc::ui {

struct ExplorerState;

struct ConfigBinding {
  std::string kind;  // a scenario::ConfigKind name: "plan", "simulate", ...
  // Pushes the scenario's config into the panel's state. `call` is PlayState::engine_calls[kind] (null when
  // no engine call was made on this kind yet): its seed, run length and filled-in config, so that the
  // panel makes the same engine call the narration quotes.
  std::function<void(ExplorerState&, const nlohmann::json& config, const scenario::EngineCall* call)> apply;
  // The config the panel holds now (for tests: after a step it equals what apply() was given).
  std::function<nlohmann::json(const ExplorerState&)> current;
  // What the panel shows now, in the shape of the result of this kind's scenario action (so a narration's
  // "{{run.run.goodput}}" is looked up as "run.goodput" here); null while it is still computing.
  std::function<nlohmann::json(const ExplorerState&)> shown;
  // Gives the panel back the config a fresh page starts with, when a step leaves this kind as the scenario
  // found it (config_for_panel is null): a step reached by "previous" must show what its link shows, not
  // what a later step set. Null for kinds a scenario always sets.
  std::function<void(ExplorerState&)> restore = nullptr;
  // The config in its codec's form, where the panel holds a form of its own (the lab holds every key of a
  // run): two configs that run the same are equal in it. Null: the JSON as written (without empty sections).
  std::function<nlohmann::json(const nlohmann::json&)> canonical = nullptr;
};

const std::vector<ConfigBinding>& config_bindings();  // every panel's, in registry order
const ConfigBinding* find_config_binding(const std::string& kind);

// The config a panel should hold for `kind` after a step: the engine call's filled-in config when that call
// was made on the scenario's current config, else the config itself; null when the scenario leaves the
// panel's own default (an empty object for "estimate", "simulate" and "train").
nlohmann::json config_for_panel(const std::string& kind, const nlohmann::json& config,
                                const scenario::EngineCall* call);

// `c` without its empty sections, recursively: a panel's widgets may add an empty "sim" or "training"
// object while reading a config, which means the same as the section being absent.
nlohmann::json without_empty_sections(const nlohmann::json& c);

// True while the active panel is still computing what it will show (a simulation, a training run up to its
// step count, a sweep): tests wait for this before comparing numbers. Panels compute only while shown.
bool panels_busy(const ExplorerState& s);

// Pushes every config of the player's state into its panel (scenarios_panel.cpp calls this per step).
void apply_configs(ExplorerState& s, const nlohmann::json& configs,
                   const std::map<std::string, scenario::EngineCall>& engine_calls);

}  // namespace mc::ui
