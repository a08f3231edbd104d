// animation_actions.cpp - "collective", "pipeline" and "zero": a scenario step opens an animation with its settings
// and a moment (animation_actions.h).
#include "scenario/animation_actions.h"

#include "catalog/catalog.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace mc::scenario {
namespace {

constexpr const char* kCollectiveNames[] = {"all-reduce", "reduce-scatter", "all-gather", "send"};
constexpr const char* kAlgorithmNames[] = {"ring", "tree", "hierarchical"};

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

void validate_collective_settings(const JsonCursor& s) {
  if (!s.is_object()) s.fail("\"settings\" is an object: collective, algorithm, gpus, first_gpu, message_bytes");
  for (const auto& [k, v] : s.items())
    if (k != "collective" && k != "algorithm" && k != "gpus" && k != "first_gpu" && k != "message_bytes" &&
        k != "machine_of")
      v.fail("unknown setting \"" + k +
             "\"; expected collective, algorithm, gpus, first_gpu, message_bytes, machine_of");
  if (s.has("collective")) (void)s["collective"].one_of({"all-reduce", "reduce-scatter", "all-gather", "send"});
  if (s.has("algorithm")) (void)s["algorithm"].one_of({"ring", "tree", "hierarchical"});
  if (s.has("gpus")) (void)s["gpus"].integer_in(2, 16);
  if (s.has("first_gpu")) (void)s["first_gpu"].integer_in(0, 1 << 20);
  if (s.has("message_bytes")) (void)s["message_bytes"].number_in(1, 64.0 * (1LL << 30));
  validate_machine(s);
}

void validate_pipeline_settings(const JsonCursor& s) {
  if (!s.is_object()) s.fail("\"settings\" is an object: schedule, stages, micro_batches, virtual_stages, follow");
  for (const auto& [k, v] : s.items())
    if (k != "schedule" && k != "stages" && k != "micro_batches" && k != "virtual_stages" && k != "follow" &&
        k != "machine_of")
      v.fail("unknown setting \"" + k +
             "\"; expected schedule, stages, micro_batches, virtual_stages, follow, machine_of");
  if (s.has("schedule")) (void)s["schedule"].one_of({"gpipe", "1f1b", "interleaved"});
  if (s.has("stages")) (void)s["stages"].integer_in(1, sim::kMaxAnimatedStages);
  if (s.has("micro_batches")) (void)s["micro_batches"].integer_in(1, sim::kMaxAnimatedMicroBatches);
  if (s.has("virtual_stages")) (void)s["virtual_stages"].integer_in(1, 8);
  if (s.has("follow")) (void)s["follow"].integer_in(0, sim::kMaxAnimatedMicroBatches);
  validate_machine(s);
}

void validate_zero_settings(const JsonCursor& s) {
  if (!s.is_object()) s.fail("\"settings\" is an object: stage, gpus, micro_batches, model, cluster, software");
  for (const auto& [k, v] : s.items())
    if (k != "stage" && k != "gpus" && k != "micro_batches" && k != "model" && k != "cluster" && k != "software")
      v.fail("unknown setting \"" + k + "\"; expected stage, gpus, micro_batches, model, cluster, software");
  if (s.has("stage")) (void)s["stage"].integer_in(0, 3);
  if (s.has("gpus")) (void)s["gpus"].integer_in(2, 64);
  if (s.has("micro_batches")) (void)s["micro_batches"].integer_in(1, 4);
  for (const char* k : {"model", "cluster", "software"})
    if (s.has(k)) (void)s[k].string();
}

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
  ctx.state->engine_calls[kind] = {{"config", std::move(filled)}, {"base", base}};
  ctx.state->focus_panel = kind;
  const std::string name = a.value("as", std::string(kind));
  ctx.state->results[name] = std::move(figures);
  ctx.produced.push_back(name);
}

}  // namespace

const char* collective_kind_name(sim::CollectiveKind k) { return kCollectiveNames[int(k)]; }
const char* algorithm_name(sim::Algorithm a) { return kAlgorithmNames[int(a)]; }

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
  sim::CollectiveAnimationSpec s;
  s.topology = sim::topology_of_config(*ctx.catalog, m);
  const std::string kind = c.value("collective", std::string("all-reduce"));
  for (int k = 0; k < 4; ++k)
    if (kind == kCollectiveNames[k]) s.kind = sim::CollectiveKind(k);
  s.algorithm = sim::algorithm_from_string(c.value("algorithm", std::string("ring")));
  s.gpus = c.value("gpus", 16);
  s.first_gpu = c.value("first_gpu", 0);
  s.message_bytes = c.value("message_bytes", 64.0 * 1024 * 1024);
  const sim::CollectiveAnimation anim = sim::animate_collective(s);
  const double t = moment(a, anim.total_s);
  return {{{"collective", collective_kind_name(s.kind)},
           {"algorithm", algorithm_name(s.algorithm)},
           {"gpus", s.gpus},
           {"first_gpu", s.first_gpu},
           {"message_bytes", s.message_bytes},
           {"t_s", t},
           {"machine", m}},
          collective_figures(anim, t)};
}

Opened animate_pipeline_action(const json& a, const json& c, ActionContext& ctx) {
  const json& m = machine(c, ctx, "pipeline");
  sim::PipelineSettings set;
  if (c.contains("schedule")) set.schedule = int(sim::schedule_from_string(c.at("schedule")));
  set.stages = c.value("stages", 0);
  set.micro_batches = c.value("micro_batches", 0);
  set.virtual_stages = c.value("virtual_stages", 0);
  const sim::PipelineAnimation anim = sim::animate_pipeline(sim::pipeline_spec_of_config(*ctx.catalog, m, set));
  const double t = moment(a, anim.total_s);
  const int follow = c.value("follow", 0);
  if (follow > anim.micro_batches)
    throw std::runtime_error("follow " + std::to_string(follow) + ": the pipeline has only " +
                             std::to_string(anim.micro_batches) + " micro-batches");
  return {{{"schedule", sim::schedule_name(anim.spec.iteration.schedule)},
           {"stages", anim.stages},
           {"micro_batches", anim.micro_batches},
           {"virtual_stages", anim.virtual_stages},
           {"follow", follow},
           {"t_s", t},
           {"machine", m}},
          pipeline_figures(anim, t)};
}

Opened animate_zero_action(const json& a, const json& c, ActionContext& ctx) {
  sim::ZeroAnimationSpec spec;
  spec.stage = c.value("stage", 3);
  spec.gpus = c.value("gpus", 8);
  spec.micro_batches = c.value("micro_batches", 1);
  const std::string model = c.value("model", std::string("gpt3-2.7b"));
  const std::string cluster = c.value("cluster", std::string("azure-openai-2020"));
  const std::string software = c.value("software", std::string("deepspeed-2022"));
  spec.config = {{"model", {{"preset", model}}}, {"cluster", {{"preset", cluster}}}, {"software", software}};
  const sim::ZeroAnimation anim = sim::animate_zero(*ctx.catalog, spec);
  const double t = moment(a, anim.iteration_s);
  return {{{"stage", spec.stage},
           {"gpus", spec.gpus},
           {"micro_batches", spec.micro_batches},
           {"model", model},
           {"cluster", cluster},
           {"software", software},
           {"t_s", t}},
          zero_figures(anim, t)};
}
}  // namespace

void register_animation_actions(ActionRegistry& reg) {
  add_animation(reg, "collective", "Collectives in motion", validate_collective_settings, animate_collective_action);
  add_animation(reg, "pipeline", "Pipeline in motion", validate_pipeline_settings, animate_pipeline_action);
  add_animation(reg, "zero", "ZeRO, layer by layer", validate_zero_settings, animate_zero_action);
}

}  // namespace mc::scenario
