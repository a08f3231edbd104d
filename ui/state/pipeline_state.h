// pipeline_state.h - view state of "Pipeline in motion": the schedule, stages, micro-batches and virtual
// stages, the micro-batch followed, and the playback clock. The animation itself is the engine's
// (sim/pipeline_animation.h), recomputed when a setting changes, so a scenario sets these fields and the
// view follows.
#pragma once

#include "sim/pipeline_animation.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace mc::ui {

struct PipelineView {
  // What the view animates, every setting given (its defaults and limits are the engine's, shared with the
  // scenario action); settings.follow is the micro-batch clicked, highlighted through every stage.
  sim::PipelineSettings settings = sim::kPipelineViewStart;
  // Playback: the iteration's simulated time `t_s`, advanced by wall time x speed x (total /
  // kSecondsPerIteration), so one iteration takes that long at speed 1 however long it lasts.
  double t_s = 0;
  bool playing = true;
  float speed = 1;
  static constexpr double kSecondsPerIteration = 16;
  // A scenario's moment (pipeline action "t_s" / "at"): applied once the animation it refers to is made.
  double pending_t_s = -1;
  // The simulate config a scenario animates (null: the Run chapter's, as for the collective view).
  nlohmann::json config;
  // Cache: the animation for `key` (the settings and the config), or why it could not be made.
  std::string key;
  std::optional<sim::PipelineAnimation> anim;
  std::string error;
};

}  // namespace mc::ui
