// collective_state.h - view state of "Collectives in motion": the collective, its group and message, and
// the playback clock. The animation itself is the engine's (sim/collective_animation.h), recomputed when
// a setting changes, so a scenario sets these fields and the view follows.
#pragma once

#include "sim/animation_settings.h"
#include "sim/collective_animation.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace mc::ui {

struct CollectiveView {
  // What the view animates (its defaults and limits are the engine's, shared with the scenario action).
  sim::CollectiveSettings settings;
  // Playback: the call's simulated time `t_s`, advanced by wall time x speed x (total / kSecondsPerCall),
  // so one call takes kSecondsPerCall seconds at speed 1 however long it lasts on the machine.
  double t_s = 0;
  bool playing = true;
  float speed = 1;
  static constexpr double kSecondsPerCall = 12;
  // A scenario's moment (collective action "t_s" / "at"): applied once the animation it refers to is made.
  double pending_t_s = -1;
  // The simulate config whose cluster a scenario animates (null: the Run chapter's).
  nlohmann::json machine;
  // Cache: the animation for `key` (the settings and the cluster's config), or why it could not be made.
  std::string key;
  std::optional<sim::CollectiveAnimation> anim;
  std::string error;
};

}  // namespace mc::ui
