// scenario_bindings.cpp - scenario config kind -> panel state (see scenario_bindings.h).
#include "ui/scenario_bindings.h"

#include "capital/compute_cost.h"
#include "capital/waterfall.h"
#include "perf/perf.h"
#include "train/scaling.h"
#include "train/train.h"
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

json config_for_panel(const std::string& kind, const json& config, const scenario::EngineCall* call) {
  if (kind == "plan" || kind == "waterfall" || kind == "partnership") return config;  // always complete
  if (empty_config(config)) return nullptr;
  // The engine call was made on this very config: the panel repeats it (with its filled-in steps and seed).
  return call && call->made_from == config ? call->config : config;
}

const std::vector<ConfigBinding>& config_bindings() {
  // Gathered once from the panels' registrations (each panel binds the kinds it shows, Panel::configs).
  static const std::vector<ConfigBinding> bindings = [] {
    std::vector<ConfigBinding> all;
    for (const Panel& p : panel_registry()) all.insert(all.end(), p.configs.begin(), p.configs.end());
    return all;
  }();
  return bindings;
}

bool panels_busy(const ExplorerState& s) {
  if (s.scenarios.job) return true;  // a scenario step computing, whatever panel is shown
  // Panels compute while they are shown: only the active one can be waited for. Each says how (Panel::busy).
  const Panel* p = find_panel(s.active_panel);
  return p && p->busy && p->busy(s);
}

const ConfigBinding* find_config_binding(const std::string& kind) {
  for (const auto& b : config_bindings())
    if (b.kind == kind) return &b;
  return nullptr;
}

void apply_configs(ExplorerState& s, const json& configs,
                   const std::map<std::string, scenario::EngineCall>& engine_calls) {
  for (const auto& [kind, config] : configs.items()) {
    const ConfigBinding* b = find_config_binding(kind);
    if (!b) continue;  // tests assert every kind has a binding (ScenarioBindings.EveryConfigKindHasAPanel)
    const auto found = engine_calls.find(kind);
    const scenario::EngineCall* call = found == engine_calls.end() ? nullptr : &found->second;
    const json shown = config_for_panel(kind, config, call);
    if (!shown.is_null())
      b->apply(s, shown, call);
    else if (b->restore)
      b->restore(s);
  }
}

}  // namespace mc::ui
