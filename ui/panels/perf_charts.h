// perf_charts.h - the charts of the performance panel, drawn with ImDrawList: stacked memory bar with
// the HBM line, stacked iteration-time bar, and the pipeline Gantt of one iteration.
#pragma once

#include "perf/perf.h"
#include "ui/explorer.h"

#include <vector>

namespace mc::ui {

// One horizontal stacked bar; `limit` (> 0) draws a vertical line labelled `limit_label` at that value.
struct BarPart {
  const char* label;
  double value;
  unsigned color;  // IM_COL32
};
// `title` (and the parts' `unit`) names the bar for its text alternative (widgets.h describe_chart).
void stacked_bar(const char* id, const std::vector<BarPart>& parts, double scale_max, double limit,
                 const char* limit_label, const char* unit_fmt, float height, const char* title = nullptr,
                 const char* unit = "");

// Gantt of a pipeline timeline: one row per stage, forward passes light, backward dark, chunk by hue.
// Only micro-batches < max_micro_batches are labelled; the time axis spans the whole iteration.
void pipeline_gantt(const std::vector<perf::PipelineOp>& ops, int stages, float height);

unsigned part_color(int i);

}  // namespace mc::ui
