// pipeline_panel.cpp - "Pipeline in motion": one replica's pipeline over one iteration, stages as rows and
// time across, each forward, backward and send appearing when the iteration simulator ran it
// (sim/pipeline_animation.h) and the idle time, the bubble, filling in as it forms. GPipe, 1F1B and
// interleaved, on the per-layer times of the Run chapter's config. Beside it, the iteration time, the
// bubble measured from the timeline and the analytic rule with these numbers. Play/pause (Space), step to
// the next or previous event (Right/Left), scrub, speed; a click on a block follows its micro-batch.
//
// Sections: settings and the cached animation; the picture; the controls and figures; the panel.
#include "core/format.h"
#include "sim/pipeline_animation.h"
#include "ui/animation_panel.h"
#include "ui/explorer.h"
#include "ui/widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace mc::ui {
namespace {

// ---- settings and the cached animation --------------------------------------------------------------

constexpr const char* kSchedules[] = {"GPipe", "1F1B", "interleaved 1F1B"};
constexpr PipeSchedule kScheduleValues[] = {PipeSchedule::gpipe, PipeSchedule::one_f_one_b, PipeSchedule::interleaved};

// The simulate config to animate: a scenario's, else the Run chapter's (its panel's, else the shipped
// default), as "Collectives in motion" picks its cluster.
const sim::SimRequest& pipeline_config(const ExplorerState& s) {
  return s.pipeline.machine ? *s.pipeline.machine : s.sim.config;
}

void refresh(ExplorerState& s) {
  PipelineView& v = s.pipeline;
  const sim::SimRequest& cfg = pipeline_config(s);
  sim::PipelineSettings shape = v.settings;
  shape.follow = 0;  // following a micro-batch does not change the animation (nor restart it)
  const bool remade = v.refresh({shape, cfg}, [&] {
    const nlohmann::json machine = sim::to_json(cfg);
    return sim::PipelineAnimationKind::make(*s.catalog, shape, &machine);
  });
  if (remade && v.anim && v.settings.follow > v.anim->micro_batches) v.settings.follow = 0;
}

// ---- the picture ------------------------------------------------------------------------------------

ImU32 block_colour(const sim::PipeBlock& b, bool dim) {
  const int alpha = dim ? 70 : 255;
  if (b.kind == sim::PipeBlockKind::idle) return IM_COL32(70, 30, 36, 255);  // the bubble (hatched in red)
  if (b.kind == sim::PipeBlockKind::send) return IM_COL32(190, 190, 200, alpha);
  // One hue per micro-batch, from blue (red is the bubble's); its backward the same hue, darker
  // (Narayanan et al. 2021 Fig. 4 draws the forward and backward of one micro-batch in one colour family).
  const float h = std::fmod(0.55f + float(b.micro_batch % 10) / 10.0f * 0.8f, 1.0f);
  ImVec4 c;
  ImGui::ColorConvertHSVtoRGB(h, 0.5f, b.kind == sim::PipeBlockKind::forward ? 0.95f : 0.62f, c.x, c.y, c.z);
  return IM_COL32(int(c.x * 255), int(c.y * 255), int(c.z * 255), alpha);
}

// Idle time: a dark fill hatched in red, so the bubble reads as "nothing here", not as one more block.
void draw_idle(ImDrawList* dl, ImVec2 a, ImVec2 b, bool dim) {
  dl->AddRectFilled(a, b, block_colour({sim::PipeBlockKind::idle, -1, 0, 0, 0}, dim));
  dl->PushClipRect(a, b, true);
  const float step = 7, hgt = b.y - a.y;
  for (float x = a.x - hgt; x < b.x; x += step)
    dl->AddLine(ImVec2(x, b.y), ImVec2(x + hgt, a.y), IM_COL32(220, 70, 70, dim ? 60 : 150), 1.5f);
  dl->PopClipRect();
}

struct Geometry {
  ImVec2 p0;
  float label_w = 0, row_h = 0, plot_w = 0;
  double total_s = 1;
  float x(double t) const { return p0.x + label_w + float(t / total_s) * plot_w; }
};

void draw_picture(ExplorerState& s, const sim::PipelineAnimation& a, ImVec2 size) {
  PipelineView& v = s.pipeline;
  ImGui::InvisibleButton("##pipeline_picture", size);
  const bool clicked = ImGui::IsItemClicked();
  track(s, "pipeline.picture");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  Geometry g;
  g.p0 = ImGui::GetItemRectMin();
  g.label_w = ImGui::CalcTextSize("stage 00 ").x + 8;
  const float axis_h = ImGui::GetTextLineHeightWithSpacing() + 4;
  g.row_h = (size.y - axis_h - 8) / float(a.stages);
  g.plot_w = size.x - g.label_w - 12;
  g.total_s = std::max(a.total_s, 1e-30);
  dl->AddRectFilled(g.p0, ImVec2(g.p0.x + size.x, g.p0.y + size.y), ImGui::GetColorU32(ImGuiCol_FrameBg));
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const double t = v.t_s;

  // A click follows the micro-batch under the mouse (again: stops following).
  if (clicked) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int stage = int((m.y - g.p0.y - 4) / g.row_h);
    const double at = (m.x - g.p0.x - g.label_w) / g.plot_w * g.total_s;
    if (stage >= 0 && stage < a.stages)
      for (const sim::PipeBlock& b : a.rows[size_t(stage)])
        if (b.micro_batch >= 0 && b.t_start_s <= at && at < b.t_end_s)
          v.settings.follow = v.settings.follow == b.micro_batch + 1 ? 0 : b.micro_batch + 1;
  }

  const int followed = v.settings.follow - 1;
  for (int st = 0; st < a.stages; ++st) {
    const float y0 = g.p0.y + 4 + g.row_h * float(st), y1 = y0 + g.row_h - 2;
    const std::string label = "stage " + std::to_string(st);
    dl->AddText(ImVec2(g.p0.x + 6, 0.5f * (y0 + y1) - ImGui::GetFontSize() * 0.5f), text, label.c_str());
    dl->AddLine(ImVec2(g.x(0), y1 + 1), ImVec2(g.x(g.total_s), y1 + 1), dim);
    for (const sim::PipeBlock& b : a.rows[size_t(st)]) {
      if (b.t_start_s >= t) break;  // blocks appear as time reaches them
      const bool other = followed >= 0 && b.micro_batch != followed;
      const float x0 = g.x(b.t_start_s), x1 = g.x(std::min(b.t_end_s, t));
      if (b.kind == sim::PipeBlockKind::send) {  // a thin band: the stage's stream is busy sending
        const float ym = 0.5f * (y0 + y1), hh = std::max(2.0f, g.row_h * 0.12f);
        dl->AddRectFilled(ImVec2(x0, ym - hh), ImVec2(std::max(x1, x0 + 1), ym + hh), block_colour(b, other));
        continue;
      }
      if (b.kind == sim::PipeBlockKind::idle) {
        draw_idle(dl, ImVec2(x0, y0), ImVec2(x1, y1), followed >= 0);
        continue;
      }
      dl->AddRectFilled(ImVec2(x0, y0), ImVec2(std::max(x1, x0 + 1), y1), block_colour(b, other));
      if (followed == b.micro_batch) dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), text, 0, 0, 2);
      // Micro-batches are numbered from 1 as in the papers' figures; a second chunk gets a prime per chunk.
      // The direction is a letter too where the block has room ("F3", "B3"): forward and backward differ by
      // shade alone otherwise, which a projector washes out (issue 41 item 7).
      const std::string number = std::to_string(b.micro_batch + 1) + std::string(size_t(b.chunk), '\'');
      std::string name = (b.kind == sim::PipeBlockKind::backward ? "B" : "F") + number;
      if (x1 - x0 <= ImGui::CalcTextSize(name.c_str()).x + 4) name = number;
      const ImVec2 ts = ImGui::CalcTextSize(name.c_str());
      if (x1 - x0 > ts.x + 4 && g.row_h > ts.y)
        dl->AddText(ImVec2(0.5f * (x0 + x1) - ts.x * 0.5f, 0.5f * (y0 + y1) - ts.y * 0.5f),
                    other ? IM_COL32(20, 20, 20, 110) : IM_COL32(20, 20, 20, 255), name.c_str());
    }
  }
  // Time axis: the iteration in five ticks (fewer where their labels would overlap: a phone's 320 px drew
  // "0 s4.488 s8.975 s"), and the playhead.
  const float ya = g.p0.y + 4 + g.row_h * float(a.stages) + 2;
  const float widest = ImGui::CalcTextSize(format_seconds(g.total_s).c_str()).x + ImGui::GetFontSize();
  const float room = size.x - g.label_w - 4;
  const int parts = room >= 5 * widest ? 4 : room >= 3 * widest ? 2 : 1;
  for (int k = 0; k <= parts; ++k) {
    const double tk = g.total_s * k / parts;
    const std::string lab = format_seconds(tk);
    const float w = ImGui::CalcTextSize(lab.c_str()).x;
    const float x = std::clamp(g.x(tk) - w * 0.5f, g.p0.x + g.label_w, g.p0.x + size.x - w - 4);
    dl->AddText(ImVec2(x, ya), dim, lab.c_str());
  }
  const float xt = g.x(std::min(t, a.total_s));
  dl->AddLine(ImVec2(xt, g.p0.y + 2), ImVec2(xt, ya), IM_COL32(255, 255, 255, 200), 2);
  // Its data: each stage's time by kind of block over the whole iteration (the idle time is the bubble).
  ChartData d{.title = "Pipeline timeline, " + format_seconds(a.total_s), .x_name = "stage"};
  d.series = {{"forward", "ms", {}}, {"backward", "ms", {}}, {"send", "ms", {}}, {"idle", "ms", {}}};
  for (size_t st = 0; st < a.rows.size(); ++st) {
    char name[32];
    std::snprintf(name, sizeof name, "stage %zu", st);
    d.x_labels.push_back(name);
    double by[4] = {0, 0, 0, 0};
    static_assert(int(sim::PipeBlockKind::idle) == 3, "the series above are in PipeBlockKind order");
    for (const sim::PipeBlock& b : a.rows[st]) by[int(b.kind)] += 1e3 * (b.t_end_s - b.t_start_s);
    for (int k = 0; k < 4; ++k) d.series[size_t(k)].y.push_back(by[k]);
  }
  describe_chart(d, g.p0, ImVec2(g.p0.x + size.x, g.p0.y + size.y));
}

// ---- the controls and figures ------------------------------------------------------------------------

void draw_controls(ExplorerState& s) {
  using S = sim::PipelineSettings;
  S& v = s.pipeline.settings;
  PipeSchedule schedule = PipeSchedule(v.schedule);
  int sch =
      int(std::find(std::begin(kScheduleValues), std::end(kScheduleValues), schedule) - std::begin(kScheduleValues));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (combo("schedule", &sch, kSchedules, IM_ARRAYSIZE(kSchedules))) v.schedule = int(kScheduleValues[sch]);
  glossary_tooltip("1F1B");
  track(s, "pipeline.schedule");
  same_line_if_fits_item("stages");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  slider_int_clamped("stages", v.stages, S::kStages.min, S::kStages.max);
  track(s, "pipeline.stages");
  same_line_if_fits_item("micro-batches");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  slider_int_clamped("micro-batches", v.micro_batches, S::kMicroBatches.min, S::kMicroBatches.max);
  track(s, "pipeline.micro_batches");
  if (v.schedule == int(PipeSchedule::interleaved)) {
    same_line_if_fits_item("virtual stages");
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    slider_int_clamped("virtual stages", v.virtual_stages, S::kVirtualStages.min, S::kVirtualStages.max);
    track(s, "pipeline.virtual_stages");
  }
}

void draw_transport(ExplorerState& s, const sim::PipelineAnimation& a) {
  PipelineView& v = s.pipeline;
  playback_controls(s, "pipeline", {v.t_s, v.playing, v.speed}, sim::event_times(a), a.total_s,
                    PipelineView::kSecondsPerIteration);
}

void legend_swatch(const sim::PipeBlock& b, const char* label) {
  const float h = ImGui::GetFontSize();
  same_line_if_fits(h + ImGui::CalcTextSize(label).x + 16);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const ImVec2 a(p.x, p.y + 2), z(p.x + h * 1.4f, p.y + h - 2);
  if (b.kind == sim::PipeBlockKind::idle)
    draw_idle(ImGui::GetWindowDrawList(), a, z, false);
  else
    ImGui::GetWindowDrawList()->AddRectFilled(a, z, block_colour(b, false));
  ImGui::Dummy(ImVec2(h * 1.4f + 2, h));
  ImGui::SameLine();
  ImGui::TextDisabled("%s", label);
}

void draw_figures(ExplorerState& s, const sim::PipelineAnimation& a) {
  const PipelineView& v = s.pipeline;
  const sim::PipelineFrame f = sim::frame_at(a, v.t_s);
  wrapped_text(true, "Blocks: F forward, B backward, then the micro-batch (' for each later model chunk).");
  legend_swatch({sim::PipeBlockKind::forward, 0, 0, 0, 0}, "forward");
  legend_swatch({sim::PipeBlockKind::backward, 0, 0, 0, 0}, "backward");
  legend_swatch({sim::PipeBlockKind::send, 0, 0, 0, 0}, "send");
  legend_swatch({sim::PipeBlockKind::idle, -1, 0, 0, 0}, "idle: the bubble");
  begin_tracked(s);
  wrapped_text(false, "Iteration %s (%d stages, %d micro-batches%s); at %s the bubble so far is %s.",
               format_seconds(a.total_s).c_str(), a.stages, a.micro_batches,
               a.virtual_stages > 1 ? (", " + std::to_string(a.virtual_stages) + " chunks per stage").c_str() : "",
               format_seconds(f.t_s).c_str(), format_percent(f.bubble_so_far).c_str());
  wrapped_text(false, "Bubble measured from the timeline: %s of the stages' time is idle.",
               format_percent(a.bubble_fraction).c_str());
  end_tracked(s, "pipeline.figures");
  begin_tracked(s);
  wrapped_text(false, "Analytic rule: %s", a.rule.c_str());
  wrapped_text(true,
               "The rule counts only the fill and drain with equal stages and free sends (GPipe: Huang et al. 2019; "
               "1F1B: Narayanan et al. 2021; interleaved: Narayanan et al. SC21 Sec. 2.2); the timeline also "
               "has the sends, the output layer on the last stage and uneven stages.");
  end_tracked(s, "pipeline.rule");
  const int followed = v.settings.follow - 1;
  if (followed >= 0) {
    double first = a.total_s, last = 0;
    for (const auto& row : a.rows)
      for (const sim::PipeBlock& b : row)
        if (b.micro_batch == followed && b.kind != sim::PipeBlockKind::idle) {
          first = std::min(first, b.t_start_s);
          last = std::max(last, b.t_end_s);
        }
    wrapped_text(false, "Following micro-batch %d: from %s to %s through every stage (click it again to stop).",
                 followed + 1, format_seconds(first).c_str(), format_seconds(last).c_str());
  } else {
    wrapped_text(true, "Click a block to follow its micro-batch through every stage.");
  }
}

// ---- the panel ----------------------------------------------------------------------------------------

void draw(ExplorerState& s) {
  wrapped_text(false,
               "How a pipeline fills and drains: every block below appears when the iteration simulator runs it, "
               "on the per-layer times of the model and cluster in use (the Run chapter's, or a scenario's), one "
               "replica. The red that "
               "fills in while stages wait is the bubble.");
  draw_controls(s);
  refresh(s);
  PipelineView& v = s.pipeline;
  if (!v.error.empty()) {
    error_text("Cannot animate this: %s. Change the stages, micro-batches or virtual stages above.", v.error.c_str());
    return;
  }
  if (!v.anim) return;
  const sim::PipelineAnimation& a = *v.anim;
  draw_transport(s, a);
  const float lines = ImGui::GetTextLineHeightWithSpacing();
  // Rows up to three lines tall; the figures below keep their seven lines on screen.
  const float h = std::clamp(ImGui::GetContentRegionAvail().y - lines * 7, ImGui::GetFontSize() * 8,
                             std::max(ImGui::GetFontSize() * 8, lines * 3 * float(a.stages) + lines * 2));
  draw_picture(s, a, ImVec2(ImGui::GetContentRegionAvail().x, h));
  draw_figures(s, a);
}

PanelRegistrar reg{Panel{.id = sim::PipelineAnimationKind::kKind,
                         .title = sim::PipelineAnimationKind::kTitle,
                         .chapter = Chapter::parallelism,
                         .order = 25,
                         .draw = draw,
                         .summary = "GPipe, 1F1B or interleaved, micro-batch by micro-batch; the bubble as it forms",
                         .tabs = {},
                         .tab_of_widget = nullptr,
                         .needs_catalog = true,
                         .address = {animation_address(&ExplorerState::pipeline)},
                         .configs = {animation_binding(&ExplorerState::pipeline)}}};

}  // namespace
}  // namespace mc::ui
