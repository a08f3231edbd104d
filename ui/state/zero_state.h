// zero_state.h - view state of "ZeRO, layer by layer": the stage, the data-parallel group and the
// micro-batches, and the playback clock. The step itself is the engine's (sim/zero_animation.h),
// recomputed when a setting changes, so a scenario sets these fields and the view follows.
#pragma once

#include "sim/animation_settings.h"
#include "sim/zero_animation.h"
#include "ui/state/animation_view.h"

namespace mc::ui {

struct ZeroView : AnimationView<sim::ZeroAnimationKind> {
  static constexpr double kSecondsPerStep = 20;  // one step at speed 1
};

}  // namespace mc::ui
