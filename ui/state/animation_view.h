// animation_view.h - what the three animated views (collectives, pipeline, ZeRO) hold alike: their settings
// (sim/animation_settings.h), the animation the engine made for them, the machine a scenario made it on, and
// the playback clock a scenario can set a moment on. Each view is this for its animation's description `D`
// (sim/animation_kind.h), with what is its own beside it.
#pragma once

#include "sim/animation_kind.h"
#include "sim/animation_settings.h"
#include "sim/sim_request.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>

namespace mc::ui {

// `Key` is what the animation is made from (the settings, and the machine where it draws one): a new key
// makes it again.
template <class D, class Key = typename D::Settings>
struct AnimationView {
  using Kind = D;
  using Settings = typename D::Settings;
  using Animation = typename D::Animation;
  Settings settings = D::view_start();
  // The simulate config a scenario animates (none: the view's own machine, the Run chapter's; never for an
  // animation whose machine is in its settings).
  std::optional<sim::SimRequest> machine;
  // Playback: the animation's simulated time t_s, advanced by wall time x speed x (total / the view's seconds
  // per run-through), so one run-through takes that long at speed 1 however long it lasts on the machine.
  double t_s = 0;
  bool playing = true;
  float speed = 1;
  // A scenario's moment (the action's "t_s" / "at"): applied once the animation it refers to is made.
  double pending_t_s = -1;
  // Cache: the animation for `key` (the settings and what they run on), or why it could not be made.
  std::optional<Key> key;
  std::optional<Animation> anim;
  std::string error;

  // Makes the animation again when `k` is not the key it was made for, from the start of the clock (make()
  // returns it or throws: the message is kept in `error`); then applies a pending moment, clamped to the
  // animation's length, and stops there. True when it was made again.
  template <class Make>
  bool refresh(const Key& k, Make make) {
    const bool remake = !key || !(*key == k);
    if (remake) {
      key = k;
      anim.reset();
      error.clear();
      t_s = 0;
      try {
        anim = make();
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    if (anim && pending_t_s >= 0) {
      t_s = std::min(pending_t_s, D::total_s(*anim));
      playing = false;
      pending_t_s = -1;
    }
    return remake;
  }

  // The settings with the moment shown (a pending one until it is applied) and the machine a scenario set,
  // as the scenario bindings write the view's config.
  nlohmann::json with_moment(nlohmann::json settings_json) const {
    return sim::with_placement(std::move(settings_json), {pending_t_s >= 0 ? pending_t_s : t_s, machine});
  }
};

}  // namespace mc::ui
