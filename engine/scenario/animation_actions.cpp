// animation_actions.cpp - one scenario action per registered animation (animation_actions.h): a step opens
// the animation with its settings at a moment, as the animation's description (sim/animation_kind.h) makes it.
#include "scenario/animation_actions.h"

#include "catalog/catalog.h"
#include "sim/animation_kind.h"

#include <algorithm>
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

// The scenario's config with the action's settings merged in.
json& merged(const json& a, ActionContext& ctx, const char* kind) {
  json& c = ctx.state->configs[kind];
  if (!c.is_object()) c = json::object();
  if (a.contains("settings")) c.merge_patch(a.at("settings"));
  return c;
}

// The config whose machine an animation runs on ("machine_of", the simulate config by default).
const json& machine(const json& c, ActionContext& ctx, const char* kind) {
  const std::string of = c.value("machine_of", std::string("simulate"));
  const json& m = ctx.state->configs[of];
  if (!m.is_object() || !m.contains("cluster"))
    throw std::runtime_error(std::string("the ") + kind + " animation runs on the \"" + of +
                             "\" config's machine, which this scenario has not set: set it first, or name "
                             "another with \"machine_of\"");
  return m;
}

// One animation's action: "as", "settings" and a moment are checked the same way for each; the run makes the
// animation of the scenario's config with the settings merged in, and the view opens on what it was made of.
void add_animation(ActionRegistry& reg, const sim::AnimationKind& k) {
  reg.add({k.kind,
           std::string("open \"") + k.title + "\" on the \"" + k.kind +
               "\" config (with \"settings\" merged in) at a moment",
           {"as", "settings", "at", "t_s"},
           [k](const JsonCursor& a, const Catalog*) {
             validate_as(a);
             validate_moment(a);
             if (a.has("settings")) k.check(a["settings"]);
           },
           [k](const json& a, ActionContext& ctx) {
             if (!ctx.catalog) throw std::runtime_error(std::string(k.kind) + " needs the catalog");
             const json& c = merged(a, ctx, k.kind);
             const json* m = k.on_machine ? &machine(c, ctx, k.kind) : nullptr;
             sim::OpenedAnimation o = k.open(*ctx.catalog, c, m, [&a](double total_s) { return moment(a, total_s); });
             ctx.state->engine_calls[k.kind] = EngineCall{.config = std::move(o.config), .made_from = c};
             ctx.state->focus_panel = k.kind;
             const std::string name = a.value("as", std::string(k.kind));
             ctx.state->results[name] = std::move(o.figures);
             ctx.produced.push_back(name);
           }});
}

}  // namespace

void register_animation_actions(ActionRegistry& reg) {
  for (const sim::AnimationKind& k : sim::animation_kinds()) add_animation(reg, k);
}

}  // namespace mc::scenario
