// animation_actions.cpp - "collective", "pipeline" and "zero": a scenario step opens an animation with its settings
// and a moment (animation_actions.h).
#include "scenario/animation_actions.h"

#include "catalog/catalog.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace mc::scenario {
namespace {

void validate_as(const JsonCursor& a) {
  if (auto as = a.get("as")) {
    std::string n = as->string();
    if (n.empty() || n.find('.') != std::string::npos) as->fail("a result name is non-empty and has no '.'");
  }
}

// The moment: "at" (a fraction of the whole) or "t_s" (seconds), at most one.
void validate_moment(const JsonCursor& a) {
  if (a.has("at") && a.has("t_s")) a.fail("give the moment once: \"at\" (a fraction, 0-1) or \"t_s\" (seconds)");
  if (a.has("at")) (void)a["at"].number_in(0, 1);
  if (a.has("t_s")) (void)a["t_s"].number_in(0, 1e6);
}

double moment(const json& a, double total_s) {
  if (a.contains("t_s")) return std::min(a.at("t_s").get<double>(), total_s);
  return a.value("at", 1.0) * total_s;
}

void validate_machine(const JsonCursor& s) {
  if (s.has("machine_of")) (void)s["machine_of"].one_of({"simulate", "estimate"});
}

// The settings an action may give: each animation's own (sim/animation_settings.h: their limits are the
// views' too), and for the two that animate a config's machine, which one.
void validate_collective_settings(const JsonCursor& s) {
  (void)sim::parse_collective_settings(s, {}, {"machine_of"});
  validate_machine(s);
}

void validate_pipeline_settings(const JsonCursor& s) {
  (void)sim::parse_pipeline_settings(s, {}, {"machine_of"});
  validate_machine(s);
}

void validate_zero_settings(const JsonCursor& s) { (void)sim::parse_zero_settings(s); }

// The scenario's config with the action's settings merged in, and the machine's config it names.
json& merged(const json& a, ActionContext& ctx, const char* kind) {
  json& c = ctx.state->configs[kind];
  if (!c.is_object()) c = json::object();
  if (a.contains("settings")) c.merge_patch(a.at("settings"));
  return c;
}

const json& machine(const json& c, ActionContext& ctx, const char* kind) {
  const std::string of = c.value("machine_of", std::string("simulate"));
  const json& m = ctx.state->configs[of];
  if (!m.is_object() || !m.contains("cluster"))
    throw std::runtime_error(std::string("the ") + kind + " animation runs on the \"" + of +
                             "\" config's machine, which this scenario has not set: set it first, or name "
                             "another with \"machine_of\"");
  return m;
}

void open(ActionContext& ctx, const json& a, const char* kind, json filled, const json& base, json figures) {
  ctx.state->engine_calls[kind] = EngineCall{.config = std::move(filled), .made_from = base};
  ctx.state->focus_panel = kind;
  const std::string name = a.value("as", std::string(kind));
  ctx.state->results[name] = std::move(figures);
  ctx.produced.push_back(name);
}

}  // namespace

json collective_figures(const sim::CollectiveAnimation& a, double t) {
  const sim::AnimationFrame f = sim::frame_at(a, t);
  return {{"gpus", a.spec.gpus},
          {"message_bytes", a.spec.message_bytes},
          {"steps", a.steps},
          {"step", std::clamp(f.step + 1, 0, a.steps)},  // as the view writes "Step k of n"
          {"time_s", a.total_s},
          {"time_ms", a.total_s * 1e3},
          {"time_us", a.total_s * 1e6},
          {"bytes_sent_per_gpu", a.bytes_sent_per_gpu},
          {"algbw_Bps", a.algbw_GBps * 1e9},
          {"busbw_Bps", a.busbw_GBps * 1e9},
          {"bus_factor", a.bus_factor},
          {"network_bps", a.spec.topology.node_network_Gbps * 1e9},  // per server, achievable (as the view writes)
          {"t_s", t}};
}

json pipeline_figures(const sim::PipelineAnimation& a, double t) {
  const sim::PipelineFrame f = sim::pipeline_frame_at(a, t);
  return {{"stages", a.stages},
          {"micro_batches", a.micro_batches},
          {"virtual_stages", a.virtual_stages},
          {"iteration_s", a.total_s},
          {"bubble_fraction", a.bubble_fraction},
          {"analytic_bubble", a.analytic_bubble},
          {"bubble_so_far", f.bubble_so_far},
          {"t_s", t}};
}

json zero_figures(const sim::ZeroAnimation& a, double t) {
  const sim::ZeroFrame f = sim::zero_frame_at(a, t);
  return {{"stage", a.spec.stage},
          {"gpus", a.spec.gpus},
          {"layers", a.layers},
          {"iteration_s", a.iteration_s},
          {"weights_bytes", a.weights_bytes},
          {"gradients_bytes", a.gradients_bytes},
          {"optimizer_bytes", a.optimizer_bytes},
          {"states_bytes", a.states_bytes},
          {"peak_bytes", a.peak_bytes},
          {"hbm_bytes", a.hbm_bytes},
          {"fits", a.peak_bytes <= a.hbm_bytes},
          {"bytes_moved_per_gpu", a.bytes_moved_per_gpu},
          {"data_parallel_bytes", a.data_parallel_bytes},
          {"traffic_ratio", a.bytes_moved_per_gpu / std::max(1.0, a.data_parallel_bytes)},
          {"memory_now_bytes", f.memory_bytes},
          {"computing_layer", f.computing_layer},
          {"t_s", t}};
}

namespace {
// What an animation action computes from its merged config: the settings it ran with (the view's
// config) and the figures it stores as its result.
struct Opened {
  json filled, figures;
};
using Animate = std::function<Opened(const json& action, const json& config, ActionContext& ctx)>;

// One animation action: "as", "settings" and a moment are checked the same way for each; `animate`
// runs the engine on the scenario's config with the settings merged in and the view opens on it.
void add_animation(ActionRegistry& reg, const char* kind, const char* title, void (*check_settings)(const JsonCursor&),
                   Animate animate) {
  reg.add(
      {kind,
       std::string("open \"") + title + "\" on the \"" + kind + "\" config (with \"settings\" merged in) at a moment",
       {"as", "settings", "at", "t_s"},
       [check_settings](const JsonCursor& a, const Catalog*) {
         validate_as(a);
         validate_moment(a);
         if (a.has("settings")) check_settings(a["settings"]);
       },
       [kind, animate](const json& a, ActionContext& ctx) {
         if (!ctx.catalog) throw std::runtime_error(std::string(kind) + " needs the catalog");
         const json& c = merged(a, ctx, kind);
         Opened o = animate(a, c, ctx);
         open(ctx, a, kind, std::move(o.filled), c, std::move(o.figures));
       }});
}

Opened animate_collective_action(const json& a, const json& c, ActionContext& ctx) {
  const json& m = machine(c, ctx, "collective");
  const sim::CollectiveSettings set =
      sim::parse_settings_json<sim::CollectiveSettings>(c, "the collective config", {}, {"machine_of"});
  const sim::CollectiveAnimation anim =
      sim::animate_collective(sim::collective_spec(set, sim::topology_of_config(*ctx.catalog, m)));
  const double t = moment(a, anim.total_s);
  json filled = sim::to_json(set);
  filled["t_s"] = t;
  filled["machine"] = m;
  return {std::move(filled), collective_figures(anim, t)};
}

Opened animate_pipeline_action(const json& a, const json& c, ActionContext& ctx) {
  const json& m = machine(c, ctx, "pipeline");
  const sim::PipelineSettings set =
      sim::parse_settings_json<sim::PipelineSettings>(c, "the pipeline config", {}, {"machine_of"});
  const sim::PipelineAnimation anim = sim::animate_pipeline(sim::pipeline_spec_of_config(*ctx.catalog, m, set));
  const double t = moment(a, anim.total_s);
  const int follow = set.follow;
  if (follow > anim.micro_batches)
    throw std::runtime_error("follow " + std::to_string(follow) + ": the pipeline has only " +
                             std::to_string(anim.micro_batches) + " micro-batches");
  return {{{"schedule", schedule_name(anim.spec.iteration.schedule)},
           {"stages", anim.stages},
           {"micro_batches", anim.micro_batches},
           {"virtual_stages", anim.virtual_stages},
           {"follow", follow},
           {"t_s", t},
           {"machine", m}},
          pipeline_figures(anim, t)};
}

Opened animate_zero_action(const json& a, const json& c, ActionContext& ctx) {
  const sim::ZeroSettings set = sim::parse_settings_json<sim::ZeroSettings>(c, "the zero config", {});
  sim::ZeroAnimationSpec spec;
  spec.stage = set.stage;
  spec.gpus = set.gpus;
  spec.micro_batches = set.micro_batches;
  spec.config = sim::zero_config(set);
  const sim::ZeroAnimation anim = sim::animate_zero(*ctx.catalog, spec);
  const double t = moment(a, anim.iteration_s);
  json filled = sim::to_json(set);
  filled["t_s"] = t;
  return {std::move(filled), zero_figures(anim, t)};
}
}  // namespace

void register_animation_actions(ActionRegistry& reg) {
  add_animation(reg, "collective", "Collectives in motion", validate_collective_settings, animate_collective_action);
  add_animation(reg, "pipeline", "Pipeline in motion", validate_pipeline_settings, animate_pipeline_action);
  add_animation(reg, "zero", "ZeRO, layer by layer", validate_zero_settings, animate_zero_action);
}

}  // namespace mc::scenario
