// lab_charts.h - the training lab's drawings (ImDrawList): overlaid loss curves, per-worker memory bars,
// the pipeline schedule, the graph of messages between workers, the scaling sweep with its fit.
#pragma once

#include "train/report.h"
#include "train/scaling.h"
#include "train/train.h"
#include "ui/state/lab_state.h"

#include <imgui.h>

#include <vector>

namespace mc::ui {

// The loss chart's axes. The x axis fits the runs drawn (the longest curve, rounded up to 1, 2 or 5 x 10^k
// steps, never past the configured steps once the longest is shorter): a layout change restarts at step 0,
// and an axis of the configured 3,000 steps crowded a new run into its first 3 %.
struct LossAxes {
  size_t steps = 1;       // the x axis spans steps 1..steps
  double lo = 0, hi = 1;  // the y axis (loss, nats/byte)
  bool log_y = true;
};
LossAxes loss_axes(const std::vector<LabCurve>& curves, int configured_steps, double floor, bool log_y);

// Loss against step for several runs; `floor` (if > 0) is drawn as a dashed line (the corpus entropy).
void lab_loss_chart(const char* id, const std::vector<LabCurve>& curves, int steps, double floor, bool log_y,
                    ImVec2 size);
void lab_memory_bars(const std::vector<train::WorkerMemory>& mem, ImVec2 size);
void lab_schedule(const std::vector<train::PipelineOp>& ops, int stages, ImVec2 size);
// Workers on a circle; an arrow per (src, dst, traffic class) with width by bytes, colour by class. With
// `replay` >= 0 only the first floor(replay) messages of the step are counted, the next one moves from its
// sender to its receiver, and each worker shows what it has sent so far.
void lab_message_graph(const train::TrainerReport& t, ImVec2 size, double replay = -1);
void lab_scaling_chart(const train::ScalingResult& r, ImVec2 size);

}  // namespace mc::ui
