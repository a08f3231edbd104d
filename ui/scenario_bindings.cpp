// scenario_bindings.cpp - scenario config kind -> panel state (see scenario_bindings.h).
#include "ui/scenario_bindings.h"

#include "capital/compute_cost.h"
#include "capital/waterfall.h"
#include "perf/perf.h"
#include "scenario/animation_actions.h"
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

json config_for_panel(const std::string& kind, const json& config, const json& call) {
  if (kind == "plan" || kind == "waterfall" || kind == "partnership") return config;  // always complete
  if (empty_config(config)) return nullptr;
  // The engine call was made on this very config: the panel repeats it (with its filled-in steps and seed).
  if (!call.is_object() || !call.contains("config")) return config;
  const json& made_on = call.contains("base") ? call["base"] : call["config"];
  return made_on == config ? call["config"] : config;
}

namespace {

// The capital panel computes on every frame from its configs; what it shows is these engine calls on them
// (capital_state.h: the same configs the panel computes with).
json shown_plan(const ExplorerState& s) {
  if (!s.catalog || !s.capital.error.empty()) return nullptr;
  return capital::to_json(capital::plan(capital_plan(*s.catalog, s.capital)));
}

json shown_waterfall(const ExplorerState& s) {
  if (!s.catalog || !s.capital.error.empty()) return nullptr;
  const capital::WaterfallConfig c = capital_waterfall(*s.catalog, s.capital);
  return capital::to_json(c, capital::run_waterfall(c));
}

json shown_partnership(const ExplorerState& s) {
  if (!s.catalog || !s.capital.error.empty()) return nullptr;
  const capital::PlanConfig plan = capital_plan(*s.catalog, s.capital);
  return capital::to_json(capital::run_partnership(capital_partnership(*s.catalog, s.capital, plan)));
}

// The perf panel's cached estimate, when it belongs to the config shown.
json shown_estimate(const ExplorerState& s) {
  const PerfView& v = s.perf;
  if (!v.valid || v.computed_for != v.config.dump()) return nullptr;
  return perf::to_json(v.estimate, v.parsed);
}

// The simulator panels' results: the iteration (sim panel) and the run (run panel) of the current config.
json shown_simulation(const ExplorerState& s) {
  const SimView& v = s.sim;
  json r =
      v.iteration && v.iteration_for.rfind(v.config.dump() + "|", 0) == 0 ? sim::to_json(*v.iteration) : json::object();
  const std::string run_key = v.config.dump() + "|" + std::to_string(v.run_days) + "|" + std::to_string(v.seed);
  if (v.run && v.run_for == run_key && !v.run_job) r["run"] = sim::to_json(*v.run);
  return r.empty() ? json() : r;
}

json shown_training(const ExplorerState& s) {
  const LabView& v = s.lab;
  if (!v.trainer || v.built_for != v.config.dump()) return nullptr;
  return train::to_json(v.shown.report);  // what the panel draws
}

json shown_sweep(const ExplorerState& s) {
  const LabView& v = s.lab;
  if (!v.sweep || !v.sweep_shown.done) return nullptr;
  return train::sweep_summary_json(v.sweep_shown.result);
}

void set_lab_corpus(LabView& v, const std::string& corpus) {
  if (corpus == v.corpus_id) return;  // the run uses the scenario's text, which the lab then shows
  v.corpus_id = corpus;
  v.corpus_text.clear();
  v.corpus_error.clear();
  v.built_for.clear();
}

// The animations (scenario/animation_actions.h): the action's filled-in config sets every field of the
// view, which then makes the same animation; what it shows is the same figures function at its moment.
// The keys an animation's config holds beside its settings: the moment, the machine it was made on (the
// engine call's filled-in config) or the one it names (a scenario's own config).

void apply_collective(ExplorerState& s, const json& c, const json&) {
  CollectiveView& v = s.collective;
  sim::CollectiveSettings base = v.settings;
  base.kind = sim::CollectiveKind::all_reduce;  // what a config without them means
  base.algorithm = sim::Algorithm::ring;
  v.settings = sim::parse_settings_json(c, "the collective config", base, {"t_s", "machine", "machine_of"});
  v.machine = c.value("machine", json());
  v.pending_t_s = c.value("t_s", 0.0);
  v.playing = false;
}

json current_collective(const ExplorerState& s) {
  const CollectiveView& v = s.collective;
  if (v.machine.is_null()) return json::object();  // the panel's own: nothing a scenario set
  json c = sim::to_json(v.settings);
  c["t_s"] = v.pending_t_s >= 0 ? v.pending_t_s : v.t_s;
  c["machine"] = v.machine;
  return c;
}

json shown_collective(const ExplorerState& s) {
  const CollectiveView& v = s.collective;
  if (!v.anim || v.pending_t_s >= 0) return nullptr;
  return scenario::collective_figures(*v.anim, v.t_s);
}

void apply_pipeline(ExplorerState& s, const json& c, const json&) {
  PipelineView& v = s.pipeline;
  sim::PipelineSettings base = v.settings;
  base.schedule = int(PipeSchedule::one_f_one_b);  // what a config without them means
  base.follow = 0;
  v.settings = sim::parse_settings_json(c, "the pipeline config", base, {"t_s", "machine", "machine_of"});
  v.config = c.value("machine", json());
  v.pending_t_s = c.value("t_s", 0.0);
  v.playing = false;
}

json current_pipeline(const ExplorerState& s) {
  const PipelineView& v = s.pipeline;
  if (v.config.is_null()) return json::object();
  json c = sim::to_json(v.settings);
  c["t_s"] = v.pending_t_s >= 0 ? v.pending_t_s : v.t_s;
  c["machine"] = v.config;
  return c;
}

json shown_pipeline(const ExplorerState& s) {
  const PipelineView& v = s.pipeline;
  if (!v.anim || v.pending_t_s >= 0) return nullptr;
  return scenario::pipeline_figures(*v.anim, v.t_s);
}

void apply_zero(ExplorerState& s, const json& c, const json&) {
  ZeroView& v = s.zero;
  v.settings = sim::parse_settings_json(c, "the zero config", v.settings, {"t_s", "machine", "machine_of"});
  v.pending_t_s = c.value("t_s", 0.0);
  v.playing = false;
}

json current_zero(const ExplorerState& s) {
  const ZeroView& v = s.zero;
  json c = sim::to_json(v.settings);
  c["t_s"] = v.pending_t_s >= 0 ? v.pending_t_s : v.t_s;
  return c;
}

json shown_zero(const ExplorerState& s) {
  const ZeroView& v = s.zero;
  if (!v.anim || v.pending_t_s >= 0) return nullptr;
  return scenario::zero_figures(*v.anim, v.t_s);
}

}  // namespace

const std::vector<ConfigBinding>& config_bindings() {
  static const std::vector<ConfigBinding> bindings = {
      {"plan", [](ExplorerState& s, const json& c, const json&) { s.capital.plan = c; },
       [](const ExplorerState& s) { return s.capital.plan; }, shown_plan},
      {"waterfall", [](ExplorerState& s, const json& c, const json&) { s.capital.waterfall = c; },
       [](const ExplorerState& s) { return s.capital.waterfall; }, shown_waterfall},
      {"partnership", [](ExplorerState& s, const json& c, const json&) { s.capital.partnership = c; },
       [](const ExplorerState& s) { return s.capital.partnership; }, shown_partnership},
      {"estimate", [](ExplorerState& s, const json& c, const json&) { s.perf.config = c; },
       [](const ExplorerState& s) { return s.perf.config; }, shown_estimate,
       [](ExplorerState& s) { s.perf.config = default_config(s, "estimate"); }},
      {"simulate",
       [](ExplorerState& s, const json& c, const json& call) {
         SimView& v = s.sim;
         const bool changed = without_empty_sections(v.config) != without_empty_sections(c);
         v.config = c;
         // The same seed and length as the scenario's simulation: the run panel then shows its numbers.
         if (call.is_object() && call.value("config", json()) == c) {
           const unsigned long long seed = call.value("seed", 1ull);
           const double days = call.value("run_days", 0.0);
           if (seed != v.seed || (days > 0 && days != v.run_days) || changed || !v.run) {
             v.seed = seed;
             if (days > 0) v.run_days = days;
             if (v.run_job) v.run_job->cancel();  // a run of an older config is of no use now
             v.run_requested = true;
           }
         }
       },
       [](const ExplorerState& s) { return s.sim.config; }, shown_simulation,
       [](ExplorerState& s) {
         if (without_empty_sections(s.sim.config) != without_empty_sections(default_config(s, "simulate")))
           s.sim.config = default_config(s, "simulate");
       }},
      {"train",
       [](ExplorerState& s, const json& c, const json&) {
         set_lab_corpus(s.lab, c.value("corpus", std::string("synthetic")) == "default"
                                   ? "synthetic"
                                   : c.value("corpus", std::string("synthetic")));
         if (without_empty_sections(s.lab.config) != without_empty_sections(c)) {
           s.lab.config = c;
           s.lab.running = true;  // the lab trains what the step trained, live, up to its step count
           // Without the curves of runs before it (of an earlier step, or the class's own): a step reached by
           // ">" draws what its link draws (turing-nlg's ZeRO-3 run, its memory figures at the same place).
           s.lab.curves.clear();
           s.lab.shown.report.losses.clear();  // the run this replaces is not kept as a curve either
         }
       },
       [](const ExplorerState& s) { return s.lab.config; }, shown_training,
       [](ExplorerState& s) {
         set_lab_corpus(s.lab, LabView().corpus_id);
         if (without_empty_sections(s.lab.config) != without_empty_sections(default_config(s, "train"))) {
           s.lab.config = default_config(s, "train");
           s.lab.running = true;  // as the lab starts when opened
         }
       }},
      {"scaling",
       [](ExplorerState& s, const json& c, const json&) {
         LabView& v = s.lab;
         set_lab_corpus(v, c.value("corpus", std::string("synthetic")));
         if (v.sweep_config != c || !v.sweep) {
           v.sweep_config = c;
           v.sweep.reset();
           v.sweep_requested = true;  // the same sweep as the scenario's, run live in the lab
         }
       },
       [](const ExplorerState& s) { return s.lab.sweep_config; }, shown_sweep,
       [](ExplorerState& s) {
         LabView& v = s.lab;
         if (v.sweep_config.empty()) return;
         v.sweep_config = json::object();
         v.sweep.reset();
         v.sweep_requested = v.sweep_running = false;
       }},
      {"collective", apply_collective, current_collective, shown_collective,
       [](ExplorerState& s) {
         if (!s.collective.machine.is_null()) s.collective = CollectiveView{};  // a fresh page's view
       }},
      {"pipeline", apply_pipeline, current_pipeline, shown_pipeline,
       [](ExplorerState& s) {
         if (!s.pipeline.config.is_null()) s.pipeline = PipelineView{};
       }},
      {"zero", apply_zero, current_zero, shown_zero,
       [](ExplorerState& s) {
         if (s.zero.key.empty() && s.zero.pending_t_s < 0) return;
         s.zero = ZeroView{};  // a fresh page's view
       }},
  };
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

void apply_configs(ExplorerState& s, const json& configs, const json& engine_calls) {
  for (const auto& [kind, config] : configs.items()) {
    const ConfigBinding* b = find_config_binding(kind);
    if (!b) continue;  // tests assert every kind has a binding (ScenarioBindings.EveryConfigKindHasAPanel)
    const json call = engine_calls.is_object() && engine_calls.contains(kind) ? engine_calls[kind] : json();
    const json shown = config_for_panel(kind, config, call);
    if (!shown.is_null())
      b->apply(s, shown, call);
    else if (b->restore)
      b->restore(s);
  }
}

}  // namespace mc::ui
