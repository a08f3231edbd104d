// zero_panel.cpp - "ZeRO, layer by layer": one training step of ZeRO stage 0-3 on a data-parallel group,
// as the iteration simulator runs it (sim/zero_animation.h): the layers of GPU 0 (which it is computing,
// whose full weights it holds, which it is gathering or reduce-scattering), what each GPU keeps of the
// model states, and its memory over the step. Play/pause (Space), step one event (Right/Left), scrub,
// speed.
//
// Sections: settings and the cached step; the picture (layers, GPUs, memory curve); controls and
// figures; the panel.
#include "core/format.h"
#include "sim/zero_animation.h"
#include "ui/animation_panel.h"
#include "ui/explorer.h"
#include "ui/widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace mc::ui {
namespace {

// ---- settings and the cached step ---------------------------------------------------------------------

void refresh(ExplorerState& s) {
  ZeroView& v = s.zero;
  v.refresh(v.settings, [&] { return sim::ZeroAnimationKind::make(*s.catalog, v.settings); });
}

// Memory and traffic as the other panels write memory (and the narrations' |gib quotes it).
std::string gib(double bytes) { return format_gib(bytes); }

// ---- the picture ----------------------------------------------------------------------------------------

constexpr ImU32 kForward = IM_COL32(80, 160, 240, 255), kBackward = IM_COL32(240, 150, 60, 255);
constexpr ImU32 kHeld = IM_COL32(90, 190, 110, 255), kGathering = IM_COL32(150, 230, 160, 255);
constexpr ImU32 kReducing = IM_COL32(190, 110, 220, 255), kShard = IM_COL32(60, 70, 90, 255);
constexpr ImU32 kWeights = IM_COL32(90, 190, 110, 255), kGrads = IM_COL32(190, 110, 220, 255);
constexpr ImU32 kOptim = IM_COL32(200, 180, 80, 255), kActs = IM_COL32(80, 160, 240, 255);

// GPU 0's layers in a row: each a box, coloured by what happens to it now.
float draw_layers(const sim::ZeroAnimation& a, const sim::ZeroFrame& f, ImVec2 p0, float w) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const float box = std::max(4.0f, (w - fs * 5) / float(std::max(1, a.layers)));
  dl->AddText(p0, IM_COL32(200, 200, 200, 255), "layers");
  const float x0 = p0.x + fs * 4, y0 = p0.y, h = fs * 1.6f;
  auto has = [](const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); };
  for (int l = 0; l < a.layers; ++l) {
    const ImVec2 b0(x0 + l * box, y0), b1(x0 + (l + 1) * box - 2, y0 + h);
    ImU32 fill = kShard;
    if (has(f.gathered, l)) fill = kHeld;
    if (has(f.gathering, l)) fill = kGathering;
    if (has(f.reducing, l)) fill = kReducing;
    dl->AddRectFilled(b0, b1, fill, 2);
    if (f.computing_layer == l) dl->AddRect(b0, b1, f.computing_backward ? kBackward : kForward, 2, 0, 3);
  }
  for (int l = 0; l < a.layers; l += std::max(1, a.layers / 8)) {
    char n[16];
    std::snprintf(n, sizeof n, "%d", l);
    dl->AddText(ImVec2(x0 + l * box, y0 + h + 2), IM_COL32(150, 150, 150, 255), n);
  }
  return h + fs * 1.4f;
}

// Each GPU's memory now, one bar each: weights, gradients and optimizer state it keeps, then what the
// step adds (activations, gathered weights). Every GPU runs the same step on its own data.
float draw_gpus(const ExplorerState& s, const sim::ZeroAnimation& a, const sim::ZeroFrame& f, ImVec2 p0, float w) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const int shown = std::min(a.spec.gpus, 8);
  // The bars' scale: the GPU's memory when the step's peak comes near it (what must fit under it), else the
  // step's own peak, so what rises and falls with the layers (activations, a layer's gathered weights) is a
  // part of each bar that moves, not a sliver of a 32 GiB GPU (issue 41 item 7: the bars looked the same at
  // every moment). The GPU's memory is then written beside the bars, or under them where the bars would
  // leave it no room (at 1024x768 in presenter mode it ran off the window's edge: turing-nlg-zero-2020 step 7).
  const bool to_hbm = a.hbm_bytes > 0 && a.peak_bytes * 1.5 >= a.hbm_bytes;
  const double top = to_hbm ? std::max({a.peak_bytes, a.hbm_bytes, 1.0}) : std::max(a.peak_bytes * 1.05, 1.0);
  std::vector<std::string> legend;
  if (!to_hbm) {
    legend.push_back("dashed: the step's peak, " + gib(a.peak_bytes));
    if (a.hbm_bytes > 0) legend.push_back("GPU memory " + gib(a.hbm_bytes) + ", above the bars");
  }
  float legend_w = 0;
  for (const std::string& l : legend) legend_w = std::max(legend_w, ImGui::CalcTextSize(l.c_str()).x + fs);
  const auto bar_w = [&](float room) { return std::min(fs * 3.5f, (room - fs * 2) / float(shown) - fs); };
  const bool legend_below = !legend.empty() && bar_w(w - legend_w) < fs * 2;
  const float h = fs * 7, bw = bar_w(legend_below ? w : w - legend_w);
  for (int g = 0; g < shown; ++g) {
    const float x = p0.x + g * (bw + fs);
    float y = p0.y + h;
    auto seg = [&](double bytes, ImU32 c) {
      const float dh = float(bytes / top) * h;
      dl->AddRectFilled(ImVec2(x, y - dh), ImVec2(x + bw, y), c);
      y -= dh;
    };
    seg(a.weights_bytes, kWeights);
    seg(a.gradients_bytes, kGrads);
    seg(a.optimizer_bytes, kOptim);
    seg(std::max(0.0, f.memory_bytes - a.states_bytes), kActs);
    dl->AddRect(ImVec2(x, p0.y), ImVec2(x + bw, p0.y + h), IM_COL32(120, 120, 120, 255));
    if (to_hbm) {  // the GPU's memory: what must fit under it
      const float yh = p0.y + h - float(a.hbm_bytes / top) * h;
      dl->AddLine(ImVec2(x - 2, yh), ImVec2(x + bw + 2, yh), IM_COL32(230, 70, 70, 255), 2);
    } else {  // the step's peak, which the moving part reaches once
      const float yp = p0.y + h - float(a.peak_bytes / top) * h;
      for (float xd = x; xd < x + bw; xd += 6)
        dl->AddLine(ImVec2(xd, yp), ImVec2(std::min(xd + 3, x + bw), yp), IM_COL32(230, 230, 230, 200), 1.5f);
    }
    char n[16];  // "GPU 3", or "3" where that would run into the next bar's label (a 320 px page)
    std::snprintf(n, sizeof n, "GPU %d", g);
    if (ImGui::CalcTextSize(n).x > bw + fs * 0.7f) std::snprintf(n, sizeof n, "%d", g);
    dl->AddText(ImVec2(x, p0.y + h + 2), IM_COL32(200, 200, 200, 255), n);
  }
  if (shown < a.spec.gpus)
    dl->AddText(ImVec2(p0.x + shown * (bw + fs), p0.y + h / 2), IM_COL32(160, 160, 160, 255),
                ("... " + std::to_string(a.spec.gpus - shown) + " more").c_str());
  {  // its data: what each GPU holds now (every GPU runs the same step on its own data)
    ChartData d{.title = "Memory of each GPU now", .x_name = "GPU"};
    d.series = {{"weights", "GiB", {}},
                {"gradients", "GiB", {}},
                {"optimizer state", "GiB", {}},
                {"activations and gathered weights", "GiB", {}}};
    const double g = double(1ull << 30);
    for (int i = 0; i < a.spec.gpus; ++i) {
      char name[24];
      std::snprintf(name, sizeof name, "GPU %d", i);
      d.x_labels.push_back(name);
      d.series[0].y.push_back(a.weights_bytes / g), d.series[1].y.push_back(a.gradients_bytes / g);
      d.series[2].y.push_back(a.optimizer_bytes / g);
      d.series[3].y.push_back(std::max(0.0, f.memory_bytes - a.states_bytes) / g);
    }
    describe_chart(d, p0, ImVec2(p0.x + shown * (bw + fs), p0.y + h));
  }
  // What the scale is, beside the bars or under their labels.
  const ImVec2 at = legend_below ? ImVec2(p0.x, p0.y + h + fs * 1.5f) : ImVec2(p0.x + shown * (bw + fs), p0.y);
  for (size_t i = 0; i < legend.size(); ++i)
    dl->AddText(ImVec2(at.x, at.y + fs * 1.3f * float(i)),
                i == 0 ? IM_COL32(220, 220, 220, 255) : IM_COL32(230, 110, 110, 255), legend[i].c_str());
  (void)s;
  return h + fs * 1.6f + (legend_below ? fs * 1.3f * float(legend.size()) : 0.0f);
}

// Memory of one GPU over the step, with the cursor at t. The axis spans the step's own range (what rises
// and falls is a layer's gathered weights and its activations, a few percent of a 32 GiB GPU: on an axis
// from 0 to the GPU's memory it would be a flat line); the GPU's memory is drawn when it is in that range
// (the peak does not fit) and written above the chart when it is not.
float draw_memory(const sim::ZeroAnimation& a, double t, ImVec2 p0, float w) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize(), h = fs * 6;
  double lo = a.peak_bytes, hi = a.peak_bytes;
  for (double b : a.memory_bytes) lo = std::min(lo, b), hi = std::max(hi, b);
  const bool hbm_in_range = a.hbm_bytes > 0 && a.hbm_bytes <= hi * 1.05;
  if (hbm_in_range) hi = std::max(hi, a.hbm_bytes);
  const double pad = std::max(0.08 * (hi - lo), 0.02 * hi);
  lo = std::max(0.0, lo - pad), hi = std::max(hi + pad, lo + 1.0);
  const double T = std::max(a.total_s, 1e-12);
  const float x0 = p0.x + fs * 5, pw = w - fs * 6;
  // The GPU's memory is written inside the chart, at its right; where the chart is too narrow for the words
  // (a 320 px page, where they ran over the axis' labels), on a line of their own above it.
  const std::string hbm_label = "GPU memory " + gib(a.hbm_bytes) + (hbm_in_range ? "" : ", above the chart");
  const bool label_above = a.hbm_bytes > 0 && ImGui::CalcTextSize(hbm_label.c_str()).x > pw - fs;
  const float above = label_above ? fs * 1.3f : 0;
  if (label_above) dl->AddText(p0, IM_COL32(230, 110, 110, 255), hbm_label.c_str());
  p0.y += above;
  dl->AddRect(ImVec2(x0, p0.y), ImVec2(x0 + pw, p0.y + h), IM_COL32(90, 90, 90, 255));
  auto X = [&](double ts) { return x0 + float(ts / T) * pw; };
  auto Y = [&](double b) { return p0.y + h - float((b - lo) / (hi - lo)) * h; };
  for (size_t i = 0; i < a.memory_t_s.size(); ++i) {
    const double t1 = i + 1 < a.memory_t_s.size() ? a.memory_t_s[i + 1] : a.total_s;
    dl->AddLine(ImVec2(X(a.memory_t_s[i]), Y(a.memory_bytes[i])), ImVec2(X(t1), Y(a.memory_bytes[i])), kActs, 2);
    if (i + 1 < a.memory_t_s.size())
      dl->AddLine(ImVec2(X(t1), Y(a.memory_bytes[i])), ImVec2(X(t1), Y(a.memory_bytes[i + 1])), kActs, 2);
  }
  dl->AddLine(ImVec2(X(t), p0.y), ImVec2(X(t), p0.y + h), IM_COL32(240, 240, 240, 200), 1.5f);
  const float label_x = x0 + pw - ImGui::CalcTextSize(hbm_label.c_str()).x - fs * 0.5f;
  if (hbm_in_range) {
    dl->AddLine(ImVec2(x0, Y(a.hbm_bytes)), ImVec2(x0 + pw, Y(a.hbm_bytes)), IM_COL32(230, 70, 70, 255), 1.5f);
    if (!label_above) dl->AddText(ImVec2(label_x, Y(a.hbm_bytes) + 2), IM_COL32(230, 110, 110, 255), hbm_label.c_str());
  } else if (a.hbm_bytes > 0 && !label_above) {
    dl->AddText(ImVec2(label_x, p0.y + 2), IM_COL32(230, 110, 110, 255), hbm_label.c_str());
  }
  dl->AddText(ImVec2(p0.x, p0.y), IM_COL32(200, 200, 200, 255), gib(hi).c_str());
  dl->AddText(ImVec2(p0.x, p0.y + h - fs), IM_COL32(200, 200, 200, 255), gib(lo).c_str());
  // The caption under the chart, wrapped to its width.
  const char* caption = "memory of one GPU over the step (the axis spans the step's own range)";
  const float wrap = std::max(pw, fs * 8);
  dl->AddText(ImGui::GetFont(), fs, ImVec2(x0, p0.y + h + 2), IM_COL32(150, 150, 150, 255), caption, nullptr, wrap);
  return above + h + 2 + ImGui::CalcTextSize(caption, nullptr, false, wrap).y + fs * 0.6f;
}

// ---- controls and figures -------------------------------------------------------------------------------

void draw_controls(ExplorerState& s) {
  using S = sim::ZeroSettings;
  S& v = s.zero.settings;
  for (int k = S::kStage.min; k <= S::kStage.max; ++k) {
    const std::string label = k == 0 ? "no ZeRO" : "ZeRO-" + std::to_string(k);
    // A radio is its circle, a gap and its label; the next stage wraps where it would run past the edge.
    if (k)
      same_line_if_fits(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                        ImGui::CalcTextSize(label.c_str()).x);
    if (radio(label.c_str(), v.stage == k)) v.stage = k;
  }
  track(s, "zero.stage");
  same_line_if_fits_item("GPUs");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  slider_int_clamped("GPUs", v.gpus, S::kGpus.min, S::kGpus.max);
  track(s, "zero.gpus");
  same_line_if_fits_item("micro-batches");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  slider_int_clamped("micro-batches", v.micro_batches, S::kMicroBatches.min, S::kMicroBatches.max);
  track(s, "zero.micro_batches");
}

void draw_transport(ExplorerState& s, const sim::ZeroAnimation& a) {
  ZeroView& v = s.zero;
  playback_controls(s, "zero", {v.t_s, v.playing, v.speed}, sim::event_times(a), a.total_s, ZeroView::kSecondsPerStep);
}

void draw_figures(ExplorerState& s, const sim::ZeroAnimation& a, const sim::ZeroFrame& f) {
  const int n = a.spec.gpus;
  std::string now = "idle";
  if (f.optimizer)
    now = "optimizer step on its own shard";
  else if (f.computing_layer >= 0)
    now = std::string(f.computing_backward ? "backward" : "forward") + " of layer " + std::to_string(f.computing_layer);
  if (!f.gathering.empty()) now += ", gathering " + std::to_string(f.gathering.size()) + " unit(s)";
  if (!f.reducing.empty()) now += ", reduce-scattering " + std::to_string(f.reducing.size()) + " unit(s)";
  if (f.bucket_in_flight) now += a.spec.stage == 0 ? ", all-reducing gradients" : ", moving a gradient bucket";
  begin_tracked(s);
  wrapped_text(false, "Now (%s): %s; memory %s", format_seconds(f.t_s).c_str(), now.c_str(),
               gib(f.memory_bytes).c_str());
  wrapped_text(false, "Each GPU keeps %s of weights, %s of gradients and %s of optimizer state (%s); peak %s",
               gib(a.weights_bytes).c_str(), gib(a.gradients_bytes).c_str(), gib(a.optimizer_bytes).c_str(),
               gib(a.states_bytes).c_str(), gib(a.peak_bytes).c_str());
  if (a.hbm_bytes > 0 && a.peak_bytes > a.hbm_bytes)
    error_text("The peak does not fit in the GPU's %s: choose a higher ZeRO stage or more GPUs.",
               gib(a.hbm_bytes).c_str());
  else if (a.hbm_bytes > 0)
    wrapped_text(false, "The peak fits in the GPU's %s.", gib(a.hbm_bytes).c_str());
  wrapped_text(false, "Moved per GPU in this step: %s, %.2fx data parallelism's one all-reduce (%s); step %s",
               gib(a.bytes_moved_per_gpu).c_str(), a.bytes_moved_per_gpu / std::max(1.0, a.data_parallel_bytes),
               gib(a.data_parallel_bytes).c_str(), format_seconds(a.total_s).c_str());
  end_tracked(s, "zero.figures");
  const char* rule[] = {"2 + 2 + 12 bytes per parameter on every GPU",
                        "optimizer state (12 bytes per parameter) split over the GPUs: 2 + 2 + 12/N",
                        "gradients split too: 2 + (2 + 12)/N",
                        "weights split too: (2 + 2 + 12)/N; each layer is gathered before it runs and dropped after"};
  // Catalog names, not ids, for a class to read.
  auto name_of = [&](const char* table, const std::string& id) {
    const Table* t = s.catalog->table(table);
    const Record* r = t ? t->find(id) : nullptr;
    return r ? r->name : id;
  };
  wrapped_text(true, "ZeRO-%d (Rajbhandari et al. 2020, Sec. 5): %s, N = %d. %s on %s, run by %s.", a.spec.stage,
               rule[a.spec.stage], n, name_of("models", s.zero.settings.model).c_str(),
               name_of("clusters", s.zero.settings.cluster).c_str(), name_of("software", a.software).c_str());
  wrapped_text(true,
               "Layers: green = GPU 0 holds the full weights, light green = being gathered, purple = gradients "
               "being reduce-scattered, outlined = computing (blue forward, orange backward). Bars: weights, "
               "gradients, optimizer state, then activations and gathered weights.");
}

// ---- the panel ------------------------------------------------------------------------------------------

void draw(ExplorerState& s) {
  wrapped_text(false,
               "What ZeRO keeps on each GPU and what it moves, one layer at a time, as the simulator runs one "
               "training step: with stage 3 a layer's weights are gathered just before it computes and dropped "
               "after, so memory rises and falls with the layers.");
  draw_controls(s);
  refresh(s);
  ZeroView& v = s.zero;
  if (!v.error.empty()) {
    error_text("Cannot run this step: %s.", v.error.c_str());
    return;
  }
  if (!v.anim) return;
  const sim::ZeroAnimation& a = *v.anim;
  draw_transport(s, a);
  const sim::ZeroFrame f = sim::frame_at(a, v.t_s);
  const float w = ImGui::GetContentRegionAvail().x;
  ImVec2 p = ImGui::GetCursorScreenPos();
  float used = draw_layers(a, f, p, w);
  used += draw_gpus(s, a, f, ImVec2(p.x, p.y + used), w);
  used += draw_memory(a, v.t_s, ImVec2(p.x, p.y + used), w);
  ImGui::Dummy(ImVec2(w, used));
  track(s, "zero.picture");
  draw_figures(s, a, f);
}

PanelRegistrar reg{Panel{.id = sim::ZeroAnimationKind::kKind,
                         .title = sim::ZeroAnimationKind::kTitle,
                         .chapter = Chapter::parallelism,
                         .order = 30,
                         .draw = draw,
                         .summary = "One ZeRO step: what each GPU holds, gathers and scatters, and its memory",
                         .tabs = {},
                         .tab_of_widget = nullptr,
                         .needs_catalog = true,
                         .address = {animation_address(&ExplorerState::zero)},
                         .configs = {animation_binding(&ExplorerState::zero)}}};

}  // namespace
}  // namespace mc::ui
