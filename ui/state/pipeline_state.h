// pipeline_state.h - view state of "Pipeline in motion": the schedule, stages, micro-batches and virtual
// stages, the micro-batch followed, and the playback clock. The animation itself is the engine's
// (sim/pipeline_animation.h), recomputed when a setting changes, so a scenario sets these fields and the
// view follows.
#pragma once

#include "sim/pipeline_animation.h"
#include "ui/state/animation_view.h"

#include <optional>

namespace mc::ui {

// Its settings hold every setting (sim::kPipelineViewStart); settings.follow is the micro-batch clicked,
// highlighted through every stage.
// A schedule is drawn again when its shape or the machine it runs on change.
struct PipelineKey {
  sim::PipelineSettings shape;
  sim::SimRequest machine;
  bool operator==(const PipelineKey&) const = default;
};

struct PipelineView : AnimationView<sim::PipelineAnimationKind, PipelineKey> {
  static constexpr double kSecondsPerIteration = 16;  // one iteration at speed 1
};

}  // namespace mc::ui
