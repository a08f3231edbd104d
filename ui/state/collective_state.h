// collective_state.h - view state of "Collectives in motion": the collective, its group and message, and
// the playback clock. The animation itself is the engine's (sim/collective_animation.h), recomputed when
// a setting changes, so a scenario sets these fields and the view follows.
#pragma once

#include "sim/animation_settings.h"
#include "sim/collective_animation.h"
#include "ui/state/animation_view.h"

#include <nlohmann/json.hpp>

namespace mc::ui {

struct CollectiveView : AnimationView<sim::CollectiveSettings, sim::CollectiveAnimation> {
  static constexpr double kSecondsPerCall = 12;  // one call at speed 1
  // The simulate config whose cluster a scenario animates (null: the Run chapter's).
  nlohmann::json machine;
};

}  // namespace mc::ui
