// lab_png.h - the lab's loss chart as a PNG file for a slide or a report: drawn on the CPU at a size of its
// own (not a screenshot of the 440-pixel widget), with titled axes, tick labels, the legend and the
// corpus-entropy floor, and compressed (engine/core/png.h).
#pragma once

#include "ui/state/lab_state.h"

#include <string>
#include <vector>

namespace mc::ui {

struct LossChartImage {
  int width = 1600, height = 900;
  std::vector<uint8_t> rgba;  // width * height * 4, rows top to bottom
};

// The chart as lab_loss_chart draws it (the same axes: lab_charts.h loss_axes), light on dark ink.
LossChartImage render_loss_chart(const std::vector<LabCurve>& curves, int steps, double floor, bool log_y,
                                 int width = 1600, int height = 900);
// render_loss_chart encoded as a PNG file.
std::string loss_chart_png(const std::vector<LabCurve>& curves, int steps, double floor, bool log_y);

}  // namespace mc::ui
