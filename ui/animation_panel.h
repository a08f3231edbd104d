// animation_panel.h - what an animated view's panel registers, made from its animation's description
// (sim/animation_kind.h) and its view (ui/state/animation_view.h), so the three animated panels write none of
// it by hand: the scenario binding of its config kind and the address part of its settings.
//
//   .address = {animation_address(&ExplorerState::zero)},
//   .configs = {animation_binding(&ExplorerState::zero)},
#pragma once

#include "ui/explorer.h"

#include <string>

namespace mc::ui {

// The binding of the animation's config kind (scenario_bindings.h). A step's config (the action's filled-in
// one: every setting, the moment and the machine it was made on) sets every field of the view, which then
// makes the same animation and stops at the moment; what it shows is the description's figures there.
template <class View>
ConfigBinding animation_binding(View ExplorerState::*member) {
  using D = typename View::Kind;
  using Settings = typename View::Settings;
  const std::string what = std::string("the ") + D::kKind + " config";
  ConfigBinding b;
  b.kind = D::kKind;
  b.apply = [member, what](ExplorerState& s, const nlohmann::json& c, const scenario::EngineCall*) {
    View& v = s.*member;
    v.settings =
        sim::parse_settings_json<Settings>(c, what, D::config_base(v.settings), {"t_s", "machine", "machine_of"});
    const sim::AnimationPlacement at = sim::parse_placement(c, what);
    if constexpr (D::kOnMachine) v.machine = at.machine;
    v.pending_t_s = at.t_s;
    v.playing = false;
  };
  b.current = [member](const ExplorerState& s) {
    const View& v = s.*member;
    // An animation on a machine holds nothing a scenario set until one gives it a machine.
    if (D::kOnMachine && !v.machine) return nlohmann::json::object();
    return v.with_moment(sim::to_json(v.settings));
  };
  b.shown = [member](const ExplorerState& s) -> nlohmann::json {
    const View& v = s.*member;
    if (!v.anim || v.pending_t_s >= 0) return nullptr;
    return D::figures(*v.anim, v.t_s);
  };
  b.restore = [member](ExplorerState& s) {
    View& v = s.*member;
    // What a scenario touched goes back to a fresh page's view: a machine it set, or (for an animation whose
    // machine is in its settings) anything made or pending.
    const bool touched = D::kOnMachine ? bool(v.machine) : (v.key || v.pending_t_s >= 0);
    if (touched) v = View{};
  };
  return b;
}

// The address part of the view's settings (AddressPart): a link carries what differs from the view's start.
template <class View>
AddressPart animation_address(View ExplorerState::*member) {
  using D = typename View::Kind;
  using Settings = typename View::Settings;
  return {D::kKind, [](const ExplorerState&) { return sim::to_json(D::view_start()); },
          [member](const ExplorerState& s) { return sim::to_json((s.*member).settings); },
          [member](ExplorerState& s, const nlohmann::json& c) {
            (s.*member).settings = sim::parse_settings_json<Settings>(
                c, std::string("the link's ") + D::kNoun + " settings", D::view_start());
          }};
}

}  // namespace mc::ui
