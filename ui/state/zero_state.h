// zero_state.h - view state of "ZeRO, layer by layer": the stage, the data-parallel group and the
// micro-batches, and the playback clock. The step itself is the engine's (sim/zero_animation.h),
// recomputed when a setting changes, so a scenario sets these fields and the view follows.
#pragma once

#include "sim/animation_settings.h"
#include "sim/zero_animation.h"

#include <optional>
#include <string>

namespace mc::ui {

struct ZeroView {
  // What the step runs (its defaults and limits are the engine's, shared with the scenario action).
  sim::ZeroSettings settings;
  // Playback: simulated time t_s, advanced so that one step takes kSecondsPerStep at speed 1.
  double t_s = 0;
  double pending_t_s = -1;  // a scenario's moment, applied once the step for its settings is made
  bool playing = true;
  float speed = 1;
  static constexpr double kSecondsPerStep = 20;
  std::string key;
  std::optional<sim::ZeroAnimation> anim;
  std::string error;
};

}  // namespace mc::ui
