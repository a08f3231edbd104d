// animation_view.h - what the three animated views (collectives, pipeline, ZeRO) hold alike: their settings
// (sim/animation_settings.h), the animation the engine made for them, and the playback clock a scenario can
// set a moment on. Each view is this with its own settings, animation and seconds per run-through.
#pragma once

#include "sim/animation_settings.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>

namespace mc::ui {

// `Key` is what the animation is made from (the settings, and the machine where it draws one): a new key
// makes it again.
template <class Settings, class Animation, class Key = Settings>
struct AnimationView {
  Settings settings;
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
  // animation's length `total(anim)`, and stops there. True when it was made again.
  template <class Make, class Total>
  bool refresh(const Key& k, Make make, Total total) {
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
      t_s = std::min(pending_t_s, total(*anim));
      playing = false;
      pending_t_s = -1;
    }
    return remake;
  }

  // The settings with the moment shown (a pending one until it is applied) and the machine a scenario set,
  // as the scenario bindings write the view's config.
  nlohmann::json with_moment(nlohmann::json settings_json, std::optional<sim::SimRequest> machine = {}) const {
    return sim::with_placement(std::move(settings_json), {pending_t_s >= 0 ? pending_t_s : t_s, std::move(machine)});
  }
};

}  // namespace mc::ui
