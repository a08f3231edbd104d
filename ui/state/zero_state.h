// zero_state.h - view state of "ZeRO, layer by layer": the stage, the data-parallel group and the
// micro-batches, and the playback clock. The step itself is the engine's (sim/zero_animation.h),
// recomputed when a setting changes, so a scenario sets these fields and the view follows.
#pragma once

#include "sim/zero_animation.h"

#include <optional>
#include <string>

namespace mc::ui {

struct ZeroView {
  int stage = 3;  // 0 = plain data parallelism, for comparison
  int gpus = 8;   // one server of the era's 8-GPU machines
  int micro_batches = 1;
  // The model, cluster and stack the step runs (an estimate config without "parallel"): GPT-3 2.7B, the
  // 2020 machine's V100s, DeepSpeed 0.6 (ZeRO-3 with prefetching and per-module gathers).
  std::string model = "gpt3-2.7b", cluster = "azure-openai-2020", software = "deepspeed-2022";
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
