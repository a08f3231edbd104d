// scenario_bindings.cpp - scenario config kind -> panel state (see scenario_bindings.h).
#include "ui/scenario_bindings.h"

#include "ui/explorer.h"

namespace mc::ui {

using nlohmann::json;

namespace {

bool empty_config(const json& c) { return c.is_null() || (c.is_object() && c.empty()); }

}  // namespace

json without_empty_sections(const json& c) {
  if (!c.is_object()) return c;
  json out = json::object();
  for (const auto& [k, v] : c.items()) {
    json x = without_empty_sections(v);
    if (!(x.is_object() && x.empty())) out[k] = std::move(x);
  }
  return out;
}

json config_for_panel(const std::string& kind, const json& config, const json& call) {
  if (kind == "plan" || kind == "waterfall" || kind == "partnership") return config;  // always complete
  if (empty_config(config)) return nullptr;
  // The engine call was made on this very config: the panel repeats it (with its filled-in steps and seed).
  if (!call.is_object() || !call.contains("config")) return config;
  const json& made_on = call.contains("base") ? call["base"] : call["config"];
  return made_on == config ? call["config"] : config;
}

const std::vector<ConfigBinding>& config_bindings() {
  static const std::vector<ConfigBinding> bindings = {
      {"plan", [](ExplorerState& s, const json& c, const json&) { s.capital.plan = c; },
       [](const ExplorerState& s) { return s.capital.plan; }},
      {"waterfall", [](ExplorerState& s, const json& c, const json&) { s.capital.waterfall = c; },
       [](const ExplorerState& s) { return s.capital.waterfall; }},
      {"partnership", [](ExplorerState& s, const json& c, const json&) { s.capital.partnership = c; },
       [](const ExplorerState& s) { return s.capital.partnership; }},
      {"estimate", [](ExplorerState& s, const json& c, const json&) { s.perf.config = c; },
       [](const ExplorerState& s) { return s.perf.config; }},
      {"simulate",
       [](ExplorerState& s, const json& c, const json& call) {
         SimView& v = s.sim;
         const bool changed = without_empty_sections(v.config) != without_empty_sections(c);
         v.config = c;
         // The same seed and length as the scenario's simulation: the run panel then shows its numbers.
         if (call.is_object() && call.value("config", json()) == c) {
           const unsigned long long seed = call.value("seed", 1ull);
           const double days = call.value("run_days", 0.0);
           if (seed != v.seed || (days > 0 && days != v.run_days) || changed || v.run.is_null()) {
             v.seed = seed;
             if (days > 0) v.run_days = days;
             if (v.run_job) v.run_job->cancel = true;  // a run of an older config is of no use now
             v.run_requested = true;
           }
         }
       },
       [](const ExplorerState& s) { return s.sim.config; }},
      {"train",
       [](ExplorerState& s, const json& c, const json&) {
         if (without_empty_sections(s.lab.config) != without_empty_sections(c)) {
           s.lab.config = c;
           s.lab.running = true;  // the lab trains what the step trained, live, up to its step count
         }
       },
       [](const ExplorerState& s) { return s.lab.config; }},
      {"scaling",
       [](ExplorerState& s, const json& c, const json&) {
         LabView& v = s.lab;
         const std::string corpus = c.value("corpus", std::string("synthetic"));
         if (corpus != v.corpus_id) {  // the sweep runs on the scenario's text, which the lab then shows
           v.corpus_id = corpus;
           v.corpus_text.clear();
           v.corpus_error.clear();
         }
         if (v.sweep_config != c || !v.sweep) {
           v.sweep_config = c;
           v.sweep.reset();
           v.sweep_requested = true;  // the same sweep as the scenario's, run live in the lab
         }
       },
       [](const ExplorerState& s) { return s.lab.sweep_config; }},
  };
  return bindings;
}

const ConfigBinding* find_config_binding(const std::string& kind) {
  for (const auto& b : config_bindings())
    if (b.kind == kind) return &b;
  return nullptr;
}

void apply_configs(ExplorerState& s, const json& configs, const json& engine_calls) {
  for (const auto& [kind, config] : configs.items()) {
    const ConfigBinding* b = find_config_binding(kind);
    if (!b) continue;  // tests assert every kind has a binding (ScenarioBindings.EveryConfigKindHasAPanel)
    const json call = engine_calls.is_object() && engine_calls.contains(kind) ? engine_calls[kind] : json();
    const json shown = config_for_panel(kind, config, call);
    if (!shown.is_null()) b->apply(s, shown, call);
  }
}

}  // namespace mc::ui
