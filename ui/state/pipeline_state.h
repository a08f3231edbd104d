// pipeline_state.h - view state of "Pipeline in motion": the schedule, stages, micro-batches and virtual
// stages, the micro-batch followed, and the playback clock. The animation itself is the engine's
// (sim/pipeline_animation.h), recomputed when a setting changes, so a scenario sets these fields and the
// view follows.
#pragma once

#include "sim/pipeline_animation.h"
#include "ui/state/animation_view.h"

#include <nlohmann/json.hpp>

namespace mc::ui {

// Its settings hold every setting (sim::kPipelineViewStart); settings.follow is the micro-batch clicked,
// highlighted through every stage.
struct PipelineView : AnimationView<sim::PipelineSettings, sim::PipelineAnimation> {
  PipelineView() { settings = sim::kPipelineViewStart; }
  static constexpr double kSecondsPerIteration = 16;  // one iteration at speed 1
  // The simulate config a scenario animates (null: the Run chapter's, as for the collective view).
  nlohmann::json config;
};

}  // namespace mc::ui
