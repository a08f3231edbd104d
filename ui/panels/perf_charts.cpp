// perf_charts.cpp - see perf_charts.h.
#include "ui/panels/perf_charts.h"

#include "ui/widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

namespace mc::ui {

unsigned part_color(int i) {
  static const unsigned colors[] = {IM_COL32(86, 156, 214, 255),  IM_COL32(214, 157, 86, 255),
                                    IM_COL32(106, 190, 110, 255), IM_COL32(200, 96, 96, 255),
                                    IM_COL32(160, 120, 210, 255), IM_COL32(120, 120, 120, 255),
                                    IM_COL32(90, 200, 200, 255),  IM_COL32(220, 200, 90, 255)};
  return colors[i % 8];
}

void stacked_bar(const char* id, const std::vector<BarPart>& parts, double scale_max, double limit,
                 const char* limit_label, const char* unit_fmt, float height, const char* title, const char* unit) {
  const float width = std::max(100.0f, ImGui::GetContentRegionAvail().x);
  // The limit's label sits on a line of its own above the bar, not over the text before it ("(fits)").
  const float label_h = limit > 0 && limit_label ? ImGui::GetTextLineHeight() : 0.0f;
  if (label_h > 0) ImGui::Dummy(ImVec2(width, label_h - ImGui::GetStyle().ItemSpacing.y));
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();
  const float mx = ImGui::GetIO().MousePos.x;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p0, ImVec2(p0.x + width, p0.y + height), IM_COL32(40, 40, 46, 255));
  if (title) {  // its parts as a table, the ones drawn (a part of 0 draws nothing)
    ChartData d{.title = title, .x_name = "part", .series = {{title, unit, {}}}};
    for (const auto& part : parts)
      if (part.value > 0) d.x_labels.push_back(part.label), d.series[0].y.push_back(part.value);
    describe_chart(d, p0, ImVec2(p0.x + width, p0.y + height));
  }
  if (scale_max <= 0) return;
  // Where the limit's line crosses the bar: a part's name is never drawn across it (the HBM line ran through
  // "activations").
  const bool has_limit = limit > 0 && limit <= scale_max;
  const float lx = has_limit ? p0.x + float(limit / scale_max) * width : -1e9f;
  float x = p0.x;
  for (const auto& part : parts) {
    const float w = float(part.value / scale_max) * width;
    if (w <= 0) continue;
    const float x1 = std::min(p0.x + width, x + w);
    dl->AddRectFilled(ImVec2(x, p0.y), ImVec2(x1, p0.y + height), part.color);
    // The name inside its part where it fits whole: left of the limit's line, else right of it.
    const float tw = ImGui::CalcTextSize(part.label).x, ty = p0.y + height / 2 - ImGui::GetTextLineHeight() / 2;
    float tx = x + 4;
    if (tx < lx + 4 && tx + tw > lx - 4) tx = lx + 5;  // would cross the line: start after it
    if (tx + tw + 3 <= x1) dl->AddText(ImVec2(tx, ty), IM_COL32(10, 10, 10, 255), part.label);
    if (hovered && mx >= x && mx < x1) {
      char v[64];
      std::snprintf(v, sizeof v, unit_fmt, part.value);
      ImGui::SetTooltip("%s: %s", part.label, v);
    }
    x = x1;
  }
  if (has_limit) {
    dl->AddLine(ImVec2(lx, p0.y - 3), ImVec2(lx, p0.y + height + 3), IM_COL32(255, 60, 60, 255), 2.5f);
    const float lw = ImGui::CalcTextSize(limit_label).x;
    dl->AddText(ImVec2(std::clamp(lx - lw / 2, p0.x, p0.x + width - lw), p0.y - label_h - 1),
                IM_COL32(255, 90, 90, 255), limit_label);
  }
}

void pipeline_gantt(const std::vector<perf::PipelineOp>& ops, int stages, float height) {
  const float width = std::max(100.0f, ImGui::GetContentRegionAvail().x);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##gantt", ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p0, ImVec2(p0.x + width, p0.y + height), IM_COL32(30, 30, 36, 255));
  if (ops.empty() || stages <= 0) return;
  double end = 0;
  for (const auto& op : ops) end = std::max(end, op.end_s);
  const float label_w = 34;
  const float row_h = (height - 4) / float(stages);
  const float plot_w = width - label_w;
  for (int s = 0; s < stages && row_h >= 6; ++s) {
    char lab[16];
    std::snprintf(lab, sizeof lab, "s%d", s);
    if (row_h >= 12)
      dl->AddText(ImVec2(p0.x + 2, p0.y + 2 + s * row_h + row_h / 2 - 7), IM_COL32(200, 200, 200, 255), lab);
  }
  // Ops narrower than 2 px are coalesced per stage into one "busy" run, so a 1,000-micro-batch pipeline
  // still draws a few thousand rectangles.
  std::vector<float> run_x0(size_t(stages), -1), run_x1(size_t(stages), -1);
  auto flush = [&](int st) {
    if (run_x0[size_t(st)] < 0) return;
    const float y0 = p0.y + 2 + st * row_h;
    dl->AddRectFilled(ImVec2(run_x0[size_t(st)], y0), ImVec2(run_x1[size_t(st)], y0 + std::max(1.0f, row_h - 1)),
                      IM_COL32(110, 140, 170, 255));
    run_x0[size_t(st)] = -1;
  };
  for (const auto& op : ops) {
    if (op.stage < 0 || op.stage >= stages) continue;
    const float x0 = p0.x + label_w + float(op.start_s / end) * plot_w;
    const float x1 = p0.x + label_w + float(op.end_s / end) * plot_w;
    const float y0 = p0.y + 2 + op.stage * row_h, y1 = y0 + std::max(1.0f, row_h - 1);
    if (x1 - x0 < 2) {
      float& rx0 = run_x0[size_t(op.stage)];
      float& rx1 = run_x1[size_t(op.stage)];
      if (rx0 >= 0 && x0 > rx1 + 1) flush(op.stage);
      if (rx0 < 0) rx0 = x0;
      rx1 = std::max(rx1, x1);
    } else {
      flush(op.stage);
      unsigned c = part_color(op.chunk);
      if (op.backward) c = (c & 0x00FFFFFFu) | 0x90000000u;  // backward: the same hue, darker
      dl->AddRectFilled(ImVec2(x0, y0), ImVec2(std::max(x0 + 1, x1 - 0.5f), y1), c);
      if (x1 - x0 > 16 && row_h >= 12) {
        char lab[8];
        std::snprintf(lab, sizeof lab, "%d", op.micro_batch);
        dl->AddText(ImVec2(x0 + 2, y0 + row_h / 2 - 7), IM_COL32(10, 10, 10, 255), lab);
      }
    }
    if (hovered && mouse.x >= x0 && mouse.x < std::max(x1, x0 + 1) && mouse.y >= y0 && mouse.y < y1)
      ImGui::SetTooltip("stage %d, micro-batch %d, chunk %d, %s\n%.2f ms .. %.2f ms", op.stage, op.micro_batch,
                        op.chunk, op.backward ? "backward (incl. recompute)" : "forward", op.start_s * 1e3,
                        op.end_s * 1e3);
  }
  for (int st = 0; st < stages; ++st) flush(st);
  // Its data: each stage's forward and backward time and its idle time (the bubble) in the iteration.
  ChartData d{.title = "Pipeline schedule", .x_name = "stage"};
  d.series = {{"forward", "ms", std::vector<double>(size_t(stages))},
              {"backward", "ms", std::vector<double>(size_t(stages))},
              {"idle", "ms", std::vector<double>(size_t(stages))}};
  for (const auto& op : ops)
    if (op.stage >= 0 && op.stage < stages)
      d.series[op.backward ? 1 : 0].y[size_t(op.stage)] += 1e3 * (op.end_s - op.start_s);
  for (int st = 0; st < stages; ++st) {
    char name[16];
    std::snprintf(name, sizeof name, "s%d", st);  // not "s" + to_string: GCC 12 warns falsely (PR 105329)
    d.x_labels.push_back(name);
    d.series[2].y[size_t(st)] = std::max(0.0, 1e3 * end - d.series[0].y[size_t(st)] - d.series[1].y[size_t(st)]);
  }
  describe_chart(d, p0, ImVec2(p0.x + width, p0.y + height));
}

}  // namespace mc::ui
