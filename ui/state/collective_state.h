// collective_state.h - view state of "Collectives in motion": the collective, its group and message, and
// the playback clock. The animation itself is the engine's (sim/collective_animation.h), recomputed when
// a setting changes, so a scenario sets these fields and the view follows.
#pragma once

#include "sim/animation_settings.h"
#include "sim/collective_animation.h"
#include "ui/state/animation_view.h"

#include <optional>

namespace mc::ui {

// A call is drawn again when its settings or the cluster it runs on change.
struct CollectiveKey {
  sim::CollectiveSettings settings;
  perf::ClusterRequest cluster;
  bool operator==(const CollectiveKey&) const = default;
};

struct CollectiveView : AnimationView<sim::CollectiveAnimationKind, CollectiveKey> {
  static constexpr double kSecondsPerCall = 12;  // one call at speed 1
};

}  // namespace mc::ui
