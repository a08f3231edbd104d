// sim_panel.cpp - "One iteration, event by event": the discrete-event simulation of one training
// iteration on every GPU (engine/sim, the same code as `megacluster simulate`). A zoomable Gantt of a
// slice of GPUs (one row each, coloured by what the GPU does), the per-class link utilisation over the
// iteration, the hottest individual links over the iteration, a heat map of every node's NIC, and the knobs that change
// the answer: stragglers, a degraded node, NIC bandwidth, oversubscription, bucket size and overlap. The simulation is
// a job (SimJob, ui/jobs.h): on a worker thread natively, a slice of events per frame in the browser build, under a
// progress bar with Cancel either way, so the page keeps drawing while 10,000 GPUs are simulated.
//
// Index: SimJob (the simulation as a job) | Gantt rows and hot links flattened from the report, poll |
// knobs | the Gantt (draw_spans, draw_gantt) | links (hot links over time, class series, NIC heat map,
// hottest table) | draw and the panel's registration.
#include "catalog/accelerator.h"
#include "core/format.h"
#include "sim/sim.h"
#include "ui/access.h"
#include "ui/explorer.h"
#include "ui/screen_basis.h"
#include "ui/widgets.h"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace mc::ui {

using nlohmann::json;

namespace {

// Events between looks at the clock: well under a millisecond of work (~1e6 events/s natively, less in
// the browser), so a slice ends close to its budget.
constexpr long long kSliceEvents = 2000;

}  // namespace

SimJob::SimJob(const Catalog& cat, const sim::SimRequest& config, std::vector<int> gpus, double run_days,
               unsigned long long seed)
    : cat_(cat), config_(config), gpus_(std::move(gpus)), run_days_(run_days), seed_(seed) {}

SimJob::~SimJob() = default;

bool SimJob::step(double budget_s) {
  if (cancelled()) return true;
  // With a run, the iteration is the first tenth of the bar and the run the rest.
  const double run_share = run_days_ > 0 ? 0.9 : 0.0;
  if (!sim_) {
    sim::SimOptions o;
    o.run_days = run_days_;
    o.seed = seed_;
    o.timeline_gpu = -1;
    o.timeline_gpus = gpus_;
    o.max_timeline_spans = 4000;
    o.include_critical_path_steps = true;
    o.include_link_series = run_days_ <= 0;  // the run panel draws no link series
    o.cancel = cancel_flag();
    o.progress = [this, run_share](double f) { set_progress(1 - run_share + run_share * f); };
    // The engine reads the request's JSON (its located errors then name the panel's key).
    sim_ = std::make_unique<sim::Simulation>(cat_, sim::to_json(config_), std::move(o), "panel config");
  }
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  while (!sim_->step(kSliceEvents)) {
    set_progress((1 - run_share) * sim_->progress());
    if (cancelled()) return true;
    if (std::chrono::duration<double>(clock::now() - t0).count() > budget_s) return false;  // next slice
  }
  result = sim_->report();  // builds the report (and simulates the run, when asked)
  sim_.reset();
  if (result->run && result->run->cancelled) error_ = "cancelled", result.reset();
  return true;
}

namespace {

ImU32 span_color(const std::string& kind) {
  if (kind == "forward") return IM_COL32(80, 150, 230, 255);
  if (kind == "backward") return IM_COL32(40, 90, 180, 255);
  if (kind == "tp_comm") return IM_COL32(240, 170, 50, 255);
  if (kind == "cp_comm") return IM_COL32(230, 110, 160, 255);
  if (kind == "pp_send") return IM_COL32(160, 90, 200, 255);
  if (kind == "pp_wait") return IM_COL32(90, 90, 90, 255);
  if (kind == "dp_comm") return IM_COL32(60, 190, 120, 255);
  if (kind == "dp_wait") return IM_COL32(200, 70, 70, 255);
  if (kind == "optimizer") return IM_COL32(230, 230, 90, 255);
  return IM_COL32(128, 128, 128, 255);
}

// A span kind in a student's words (the engine's ids: "pp_wait", "dp_comm").
const char* span_words(const std::string& kind) {
  if (kind == "tp_comm") return "tensor-parallel comm";
  if (kind == "cp_comm") return "context-parallel comm";
  if (kind == "pp_send") return "pipeline send";
  if (kind == "pp_wait") return "pipeline wait";
  if (kind == "dp_comm") return "data-parallel comm";
  if (kind == "dp_wait") return "data-parallel wait";
  return kind == "forward" ? "forward" : kind == "backward" ? "backward" : kind == "optimizer" ? "optimizer" : "other";
}

// What a Gantt span is, for its tooltip: a pass or transfer names its micro-batch and model chunk; a span
// of no micro-batch is once an iteration (engine/sim/iteration.cpp): a data-parallel bucket or the
// post-step gather, or the first and last stage meeting to sum the tied embedding's gradient.
std::string span_label(const GanttSpan& sp) {
  const std::string kind = kGanttKinds[sp.kind];
  std::string out = span_words(kind);
  if (sp.micro_batch >= 0)
    return out + "  micro-batch " + std::to_string(sp.micro_batch) + "  chunk " + std::to_string(sp.chunk);
  if (kind == "pp_send") return "tied embedding: its gradient summed by the first and the last stage";
  if (kind == "pp_wait") return "pipeline wait: for the other stage, to sum the tied embedding's gradient";
  if (kind == "dp_comm")
    return out + (sp.chunk >= 0 ? "  bucket " + std::to_string(sp.chunk) : "  parameter all-gather");
  return out;
}

// A link class in a student's words (the engine's ids: "nic_up", "leaf_down").
const char* link_words(sim::LinkClass c) {
  switch (c) {
    case sim::LinkClass::nvlink_up:
      return "NVLink, GPU to switch";
    case sim::LinkClass::nvlink_down:
      return "NVLink, switch to GPU";
    case sim::LinkClass::nic_up:
      return "network card, server to leaf switch";
    case sim::LinkClass::nic_down:
      return "network card, leaf switch to server";
    case sim::LinkClass::leaf_up:
      return "leaf switch to spine";
    case sim::LinkClass::leaf_down:
      return "spine to leaf switch";
    case sim::LinkClass::spine:
      return "spine";
  }
  return sim::to_string(c);
}

// Colour swatches with their names, flowing onto the next line when the panel is narrow.
void legend(bool context_parallel) {
  bool first = true;
  for (const char* kind :
       {"forward", "backward", "tp_comm", "cp_comm", "pp_send", "pp_wait", "dp_comm", "dp_wait", "optimizer"}) {
    if (!context_parallel && std::string(kind) == "cp_comm") continue;
    const char* k = span_words(kind);
    if (!first) same_line_if_fits(12 + ImGui::GetStyle().ItemSpacing.x + ImGui::CalcTextSize(k).x);
    first = false;
    ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + 10, p.y + 10), span_color(kind));
    ImGui::Dummy(ImVec2(12, 10));
    ImGui::SameLine();
    ImGui::TextUnformatted(k);
  }
}

std::vector<int> slice_gpus(const SimView& v) {
  std::vector<int> g;
  for (int i = 0; i < v.slice_count; ++i) g.push_back(v.slice_first + i * std::max(1, v.slice_stride));
  return g;
}

// Flattens the report's timelines (and the critical path) into rows, once per result: the Gantt is
// drawn every frame and must not walk the report's per-GPU structures then.
void build_gantt(SimView& v) {
  v.gantt.clear();
  v.gantt_label_w = 0;
  if (!v.iteration || !v.iteration->sim.has_timelines) return;
  const sim::IterationReport& it = v.iteration->sim;
  auto kind_index = [](sim::SpanKind kind) {
    const std::string k = sim::to_string(kind);
    for (size_t i = 0; i < std::size(kGanttKinds); ++i)
      if (k == kGanttKinds[i]) return uint8_t(i);
    return uint8_t(std::size(kGanttKinds) - 1);
  };
  for (const sim::TimelineReport& row : it.timelines) {
    GanttRow r;
    char label[96];
    // The simulator's replicas are data x context parallel ranks (replica = dp rank x cp + cp rank).
    const int cp = std::max(1, v.iteration->config.layout.cp);
    if (cp > 1)
      std::snprintf(label, sizeof label, "GPU %d  stage %d  replica %d  cp %d", row.gpu, row.stage, row.replica / cp,
                    row.replica % cp);
    else
      std::snprintf(label, sizeof label, "GPU %d  stage %d  replica %d", row.gpu, row.stage, row.replica);
    r.label = label;
    r.slow = row.speed < 1;
    for (const sim::SpanReport& sp : row.spans)
      (sp.kind == sim::SpanKind::dp_comm ? r.side : r.spans)
          .push_back({sp.start_s, sp.end_s, kind_index(sp.kind), int16_t(sp.micro_batch), int16_t(sp.chunk)});
    for (const sim::CriticalStepReport& st : it.critical_path.steps)
      if (st.replica_class == row.replica_class && st.stage == row.stage)
        r.critical.push_back({st.start_s, st.end_s, kind_index(st.kind), int16_t(-1), int16_t(-1)});
    auto by_start = [](const GanttSpan& a, const GanttSpan& b) { return a.start_s < b.start_s; };
    std::stable_sort(r.spans.begin(), r.spans.end(), by_start);
    std::stable_sort(r.side.begin(), r.side.end(), by_start);
    std::stable_sort(r.critical.begin(), r.critical.end(), by_start);
    v.gantt.push_back(std::move(r));
  }
}

// The hottest links' series that can be drawn (a point or more, as many times as values).
void build_hot_links(SimView& v) {
  v.hot_links.clear();
  if (!v.iteration || !v.iteration->sim.links.has_series) return;
  for (const sim::LinkSeriesReport& l : v.iteration->sim.links.hottest_series)
    if (!l.t_s.empty() && l.t_s.size() == l.utilisation.size()) v.hot_links.push_back(l);
}

void poll(ExplorerState& s) {
  SimView& v = s.sim;
  const IterationKey key{v.config, v.slice_first, v.slice_count, v.slice_stride};
  if (v.iteration_job && v.iteration_job->done()) {
    if (v.iteration_job->error() == "cancelled") {
      // Keep the last result on screen and do not run this configuration again by itself; another
      // configuration (a knob, a scenario step) or the Simulate button runs again.
      v.iteration_cancelled = true;
      v.cancelled_for = v.iteration_for;
      v.iteration_for.reset();
    } else {
      v.iteration = std::move(v.iteration_job->result);
      v.iteration_error = v.iteration_job->error();
      if (v.iteration_for && !(v.view_for && *v.view_for == v.iteration_for->config)) {
        v.view_start_s = v.view_span_s = 0;  // a new result shows whole
        v.view_for = v.iteration_for->config;
      }
      build_gantt(v);
      build_hot_links(v);
    }
    v.iteration_job.reset();
  }
  if (v.iteration_for != key && !v.iteration_job && !(v.iteration_cancelled && v.cancelled_for == key)) {
    v.iteration_cancelled = false;
    v.iteration_for = key;
    v.iteration_job = std::make_shared<SimJob>(*s.catalog, v.config, slice_gpus(v));
    s.jobs.start(v.iteration_job);
  }
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& sim_controls() {
  // Paths first: "cluster/node_network_Gbps" is replaced whole, before its last part alone.
  static const ControlLabels labels = {{"cluster/node_network_Gbps", "NIC Gb/s per node"},
                                       {"cluster.node_network_Gbps", "NIC Gb/s per node"},
                                       {"node_network_Gbps", "NIC Gb/s per node"},
                                       {"cluster/oversubscription", "oversubscription"},
                                       {"degraded_links", "node 3 NIC"},
                                       {"bandwidth_fraction", "node 3 NIC"},
                                       {"sim/overlap_dp", "overlap gradients with backward"},
                                       {"sim.overlap_dp", "overlap gradients with backward"}};
  return labels;
}

namespace {

// Sets a config value when a widget changed it (keys are created on first use). A value typed with
// Ctrl+click is clamped to the slider's range: "0" Gb/s is not a network the simulator can run.
void knob_float(std::optional<double>& key, const char* label, float& value, float lo, float hi, const char* fmt,
                ExplorerState& s, const std::string& id, bool log = false) {
  if (slider_float(label, value, lo, hi, fmt, ImGuiSliderFlags_AlwaysClamp | (log ? ImGuiSliderFlags_Logarithmic : 0)))
    key = value;
  track(s, id);
}

void draw_knobs(ExplorerState& s) {
  SimView& v = s.sim;
  sim::SimRequest& c = v.config;
  ImGui::PushItemWidth(180);
  // Straggler: GPU 0's speed.
  float speed = c.stragglers && !c.stragglers->empty() ? float(c.stragglers->front().speed) : 1.0f;
  if (slider_float("GPU 0 speed", speed, 0.1f, 1.0f, "%.2f", ImGuiSliderFlags_AlwaysClamp)) {
    if (speed >= 0.999f)
      c.stragglers.reset();
    else
      c.stragglers = {{{.gpu = 0, .speed = speed}}};
  }
  track(s, "sim.straggler");
  same_line_if_fits_item("node 3 NIC");
  float frac =
      c.degraded_links && !c.degraded_links->empty() ? float(c.degraded_links->front().bandwidth_fraction) : 1.0f;
  if (slider_float("node 3 NIC", frac, 0.05f, 1.0f, "%.2f of nominal", ImGuiSliderFlags_AlwaysClamp)) {
    if (frac >= 0.999f)
      c.degraded_links.reset();
    else
      c.degraded_links = {{{.node = 3, .bandwidth_fraction = frac}}};
  }
  track(s, "sim.degraded");
  // The knobs start at the machine the engine simulated (the cluster preset's own figures: Meta's 3,200 Gb/s
  // a node and 1:7 between pods), not at a default of their own, until the class moves them.
  const perf::ClusterSpec* cl = v.iteration ? &v.iteration->config.cluster : nullptr;
  perf::ClusterRequest& cluster = c.estimate.cluster;
  float nic = float(cluster.node_network_Gbps.value_or(cl ? cl->node_network_Gbps : 400.0));
  knob_float(cluster.node_network_Gbps, "NIC Gb/s per node", nic, 25, 6400, "%.0f", s, "sim.nic", true);
  same_line_if_fits_item("oversubscription");
  float over = float(cluster.oversubscription.value_or(cl ? cl->oversubscription : 1.0));
  knob_float(cluster.oversubscription, "oversubscription", over, 1, 8, "%.1f : 1", s, "sim.oversubscription");
  // The simulator's own knobs read without writing: a section appears when one of them moves.
  const sim::SimKnobsRequest knobs = c.sim.value_or(sim::SimKnobsRequest{});
  float bucket_MB = float(knobs.bucket_bytes.value_or(80e6) / 1e6);
  if (slider_float("bucket MB", bucket_MB, 1, 1000, "%.0f",
                   ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp))
    (c.sim ? *c.sim : c.sim.emplace()).bucket_bytes = double(bucket_MB) * 1e6;
  track(s, "sim.bucket");
  same_line_if_fits_checkbox("overlap gradients with backward");
  const bool layout_overlap = c.estimate.parallel && c.estimate.parallel->overlap_dp_comm.value_or(false);
  bool overlap = knobs.overlap_dp.value_or(layout_overlap);
  if (ImGui::Checkbox("overlap gradients with backward", &overlap))
    (c.sim ? *c.sim : c.sim.emplace()).overlap_dp = overlap;
  track(s, "sim.overlap");
  ImGui::PopItemWidth();
}

// Draws one stream of a row: spans under one pixel merge into the pixel (so 10^4 spans cost ~width rects).
void draw_spans(ImDrawList* dl, const std::vector<GanttSpan>& spans, double a, double span, float x0, float width,
                float yt, float yb, bool outline) {
  auto first =
      std::lower_bound(spans.begin(), spans.end(), a, [](const GanttSpan& sp, double t) { return sp.start_s < t; });
  if (first != spans.begin()) --first;
  // Earlier spans may still reach into the window (they are sorted by start, not end): look back a bit.
  for (int back = 0; back < 64 && first != spans.begin() && (first - 1)->end_s > a; ++back) --first;
  float last_px = -1e9f;
  for (auto it = first; it != spans.end() && it->start_s <= a + span; ++it) {
    if (it->end_s < a) continue;
    const float px0 = x0 + float((std::max(it->start_s, a) - a) / span * width);
    const float px1 = x0 + float((std::min(it->end_s, a + span) - a) / span * width);
    if (px1 < last_px + 1 && px0 < last_px + 1 && !outline) continue;  // this pixel is drawn already
    const ImU32 col = span_color(kGanttKinds[it->kind]);
    if (outline)
      dl->AddRectFilled(ImVec2(px0, yt), ImVec2(std::max(px1, px0 + 1), yb), IM_COL32(255, 255, 255, 230));
    else
      dl->AddRectFilled(ImVec2(px0, yt), ImVec2(std::max(px1, px0 + 1), yb), col);
    last_px = std::max(px1, px0 + 1);
  }
}

void draw_gantt(ExplorerState& s, const sim::SimReport& it) {
  SimView& v = s.sim;
  const double T = it.simulated.iteration_time_s;
  if (v.view_span_s <= 0 || v.view_span_s > T) v.view_span_s = T;
  v.view_start_s = std::clamp(v.view_start_s, 0.0, std::max(0.0, T - v.view_span_s));
  ImGui::PushItemWidth(120);
  input_int_clamped("first GPU", v.slice_first, 0, 1 << 30);
  track(s, "sim.slice_first");
  same_line_if_fits_item("rows");
  slider_int("rows", v.slice_count, 1, 64);
  same_line_if_fits_item("stride");
  slider_int("stride", v.slice_stride, 1, 1024, "%d", ImGuiSliderFlags_Logarithmic);
  ImGui::PopItemWidth();
  const int gpus = int(it.config.cluster.gpus());
  v.slice_first = std::clamp(v.slice_first, 0, gpus - 1);
  same_line_if_fits_button("one per stage");
  if (ImGui::Button("one per stage"))
    v.slice_stride = std::max(1, it.config.layout.tp * it.config.layout.cp *
                                     (it.config.software.pipeline_inside_data_parallel ? 1 : it.config.layout.dp));
  track(s, "sim.one_per_stage");
  same_line_if_fits_button("whole iteration");
  if (ImGui::Button("whole iteration")) v.view_start_s = 0, v.view_span_s = T;
  wrapped_text(true, "wheel: zoom at the mouse, drag: pan; %s shown of %s; white: the critical path",
               format_quantity(v.view_span_s, "s").c_str(), format_quantity(T, "s").c_str());
  legend(it.config.layout.cp > 1);
  // Labels: as wide as the widest one (measured with the current font), so none runs under the bars.
  const float pad = ImGui::GetStyle().ItemSpacing.x;
  if (v.gantt_label_w <= 0)
    for (const GanttRow& r : v.gantt)
      v.gantt_label_w = std::max(v.gantt_label_w, ImGui::CalcTextSize((r.label + "  slow").c_str()).x);
  // Where the view is too narrow for both (a phone), the labels give way to the bars' least 100 px and are cut
  // at their column (each row clips its own; the chart's figure, its text alternative, has them whole).
  const float avail = ImGui::GetContentRegionAvail().x;
  const float label_w = std::min(v.gantt_label_w + pad, std::max(avail * 0.45f, avail - 100.0f - pad));
  const float row_h = std::max(14.0f, ImGui::GetTextLineHeight() + 3);
  const float width = std::max(100.0f, avail - label_w - pad);
  const float height = row_h * float(v.gantt.size()) + 4;
  ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("gantt", ImVec2(label_w + width, height));
  track(s, "sim.gantt");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImGuiIO& io = ImGui::GetIO();
  const float x0 = p0.x + label_w;
  if (ImGui::IsItemHovered() && io.MouseWheel != 0) {
    const double at = v.view_start_s + (io.MousePos.x - x0) / width * v.view_span_s;
    v.view_span_s = std::clamp(v.view_span_s * std::pow(0.8, io.MouseWheel), T * 1e-5, T);
    v.view_start_s = at - (io.MousePos.x - x0) / width * v.view_span_s;
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left))
    v.view_start_s -= io.MouseDelta.x / width * v.view_span_s;
  v.view_start_s = std::clamp(v.view_start_s, 0.0, std::max(0.0, T - v.view_span_s));
  const double a = v.view_start_s, span = v.view_span_s;
  for (size_t r = 0; r < v.gantt.size(); ++r) {
    const GanttRow& row = v.gantt[r];
    const float y = p0.y + float(r) * row_h;
    dl->PushClipRect(ImVec2(p0.x, y), ImVec2(x0 - pad * 0.5f, y + row_h), true);
    dl->AddText(ImVec2(p0.x, y + 1), IM_COL32(220, 220, 220, 255), row.label.c_str());
    if (row.slow) {
      const float lx = p0.x + ImGui::CalcTextSize(row.label.c_str()).x;
      dl->AddText(ImVec2(lx, y + 1), IM_COL32(240, 120, 120, 255), "  slow");
    }
    dl->PopClipRect();
    dl->PushClipRect(ImVec2(x0, y), ImVec2(x0 + width, y + row_h), true);
    draw_spans(dl, row.spans, a, span, x0, width, y + 2, y + row_h * 0.62f, false);
    // The gradient stream runs beside the compute stream; the critical path as a white line on top.
    draw_spans(dl, row.side, a, span, x0, width, y + row_h * 0.66f, y + row_h - 1, false);
    draw_spans(dl, row.critical, a, span, x0, width, y, y + 2, true);
    dl->PopClipRect();
  }
  if (ImGui::IsItemHovered()) {
    const double t = a + (io.MousePos.x - x0) / width * span;
    const int r = int((io.MousePos.y - p0.y) / row_h);
    if (r >= 0 && r < int(v.gantt.size()) && t >= 0 && io.MousePos.x >= x0) {
      const auto& spans = v.gantt[size_t(r)].spans;
      auto hit =
          std::upper_bound(spans.begin(), spans.end(), t, [](double x, const GanttSpan& sp) { return x < sp.start_s; });
      if (hit != spans.begin() && (hit - 1)->end_s >= t) {
        const GanttSpan& sp = *(hit - 1);
        ImGui::SetTooltip("%s\n%s .. %s (%s)", span_label(sp).c_str(), format_quantity(sp.start_s, "s").c_str(),
                          format_quantity(sp.end_s, "s").c_str(), format_quantity(sp.end_s - sp.start_s, "s").c_str());
      }
    }
  }
  if (access::collecting()) {  // its data: each row's time by kind over the whole iteration
    ChartData d{.title = "One iteration GPU by GPU, " + format_seconds(T), .x_name = "GPU"};
    d.series = {{"computing", "s", {}}, {"communicating", "s", {}}, {"waiting", "s", {}}, {"optimizer", "s", {}}};
    for (const GanttRow& row : v.gantt) {
      d.x_labels.push_back(row.label);
      double by[4] = {0, 0, 0, 0};
      for (const auto* list : {&row.spans, &row.side})
        for (const GanttSpan& sp : *list) {
          const std::string_view k = kGanttKinds[sp.kind];
          const int i = k == "forward" || k == "backward" ? 0 : k == "optimizer" ? 3 : k.ends_with("_wait") ? 2 : 1;
          by[i] += sp.end_s - sp.start_s;
        }
      for (int i = 0; i < 4; ++i) d.series[size_t(i)].y.push_back(by[i]);
    }
    describe_chart(d, p0, ImVec2(p0.x + label_w + width, p0.y + height));
  }
}

ImU32 hot_link_color(size_t i) {
  static const ImU32 colors[] = {IM_COL32(230, 90, 80, 255),  IM_COL32(80, 150, 230, 255),  IM_COL32(240, 170, 50, 255),
                                 IM_COL32(60, 190, 120, 255), IM_COL32(170, 110, 220, 255), IM_COL32(230, 230, 90, 255),
                                 IM_COL32(90, 210, 220, 255), IM_COL32(230, 130, 190, 255)};
  return colors[i % std::size(colors)];
}

// The highest utilisation of a piecewise-constant series within each of n equal columns of [0, T] (the
// peak, so a burst narrower than a pixel still shows): one pass, every segment starts in one column.
std::vector<float> column_peaks(const sim::LinkSeriesReport& l, double T, int n) {
  std::vector<float> out(size_t(n), 0.0f);
  size_t i = 0;
  for (int c = 0; c < n; ++c) {
    const double a = T * c / n, b = T * (c + 1) / n;
    while (i + 1 < l.t_s.size() && l.t_s[i + 1] <= a) ++i;  // the segment holding a
    float m = float(l.utilisation[i]);
    for (size_t j = i + 1; j < l.t_s.size() && l.t_s[j] < b; ++j) m = std::max(m, float(l.utilisation[j]));
    out[size_t(c)] = m;
  }
  return out;
}

// The hottest links over the iteration: one line each (per-pixel peaks), a legend, and the nearest line's
// link and value under the mouse.
void draw_hot_links(ExplorerState& s, const sim::SimReport& it) {
  const SimView& v = s.sim;
  if (v.hot_links.empty()) return;
  const double T = std::max(1e-12, it.simulated.iteration_time_s);
  wrapped_text(false, "%s", "The busiest links over the iteration (fraction of each link's capacity):");
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled(
      "ranked by mean utilisation; each pixel shows the highest value within it. Spine switches "
      "(and leaf uplinks without oversubscription) never limit a flow, so they are not ranked.");
  ImGui::PopTextWrapPos();
  // Legend, wrapped to the panel's width.
  const float avail = ImGui::GetContentRegionAvail().x;
  float used = 0;
  for (size_t i = 0; i < v.hot_links.size(); ++i) {
    const float w = 16 + ImGui::CalcTextSize(v.hot_links[i].name.c_str()).x + ImGui::GetStyle().ItemSpacing.x * 2;
    if (i > 0 && used + w < avail)
      ImGui::SameLine();
    else
      used = 0;
    used += w;
    ImVec2 p = ImGui::GetCursorScreenPos();
    const float y = p.y + ImGui::GetTextLineHeight() * 0.5f - 5;
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, y), ImVec2(p.x + 10, y + 10), hot_link_color(i));
    ImGui::Dummy(ImVec2(12, 10));
    ImGui::SameLine();
    ImGui::TextUnformatted(v.hot_links[i].name.c_str());
  }
  const float width = std::clamp(avail - 48, 100.0f, 900.0f), height = 130;
  const int cols = std::max(1, int(width));
  double top = 1;
  std::vector<std::vector<float>> peaks;
  for (const sim::LinkSeriesReport& l : v.hot_links) {
    peaks.push_back(column_peaks(l, T, cols));
    for (float x : peaks.back()) top = std::max(top, double(x));
  }
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float x0 = p0.x + 44, y0 = p0.y + 4;  // room for the axis labels
  ImGui::InvisibleButton("hot_links", ImVec2(width + 48, height + 8 + ImGui::GetTextLineHeight()));
  track(s, "sim.hot_links");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  auto y_of = [&](double u) { return y0 + height - float(u / top) * height; };
  dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + width, y0 + height), IM_COL32(30, 30, 34, 255));
  // Passive links can pass 100%: then the top of the plot is their peak, labelled too.
  for (const double g : {0.25, 0.5, 0.75, 1.0, top}) {
    if (g > 1 && top <= 1.0) continue;
    const float y = y_of(g);
    dl->AddLine(ImVec2(x0, y), ImVec2(x0 + width, y), IM_COL32(70, 70, 76, 255));
    char lab[16];
    std::snprintf(lab, sizeof lab, "%.0f%%", g * 100);
    dl->AddText(ImVec2(p0.x, y - ImGui::GetTextLineHeight() * 0.5f), IM_COL32(160, 160, 160, 255), lab);
  }
  dl->AddText(ImVec2(x0, y0 + height + 2), IM_COL32(160, 160, 160, 255), "0 s");
  const std::string end = format_quantity(T, "s");
  dl->AddText(ImVec2(x0 + width - ImGui::CalcTextSize(end.c_str()).x, y0 + height + 2), IM_COL32(160, 160, 160, 255),
              end.c_str());
  std::vector<ImVec2> pts(static_cast<size_t>(cols));
  for (size_t i = 0; i < peaks.size(); ++i) {
    for (int c = 0; c < cols; ++c) pts[size_t(c)] = ImVec2(x0 + float(c) + 0.5f, y_of(peaks[i][size_t(c)]));
    dl->AddPolyline(pts.data(), cols, hot_link_color(i), 0, 1.5f);
  }
  ChartData d{.title = "Busiest links over the iteration", .x_name = "time", .x_unit = "s"};
  for (int c = 0; c < cols; ++c) d.x.push_back(T * (c + 0.5) / cols);
  for (size_t i = 0; i < peaks.size(); ++i) {
    d.series.push_back({v.hot_links[i].name, "%", {}});
    for (float u : peaks[i]) d.series.back().y.push_back(100.0 * u);
  }
  describe_chart(d, ImVec2(x0, y0), ImVec2(x0 + width, y0 + height));
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int c = int(m.x - x0);
    if (c >= 0 && c < cols) {
      size_t best = 0;
      for (size_t i = 1; i < peaks.size(); ++i)
        if (std::abs(y_of(peaks[i][size_t(c)]) - m.y) < std::abs(y_of(peaks[best][size_t(c)]) - m.y)) best = i;
      const sim::LinkSeriesReport& l = v.hot_links[best];
      ImGui::SetTooltip("%s: %.1f%% of %s at %s\nmean over the iteration %.1f%%", l.name.c_str(),
                        peaks[best][size_t(c)] * 100.0, format_quantity(l.capacity_Bps / 1e9, "GB/s").c_str(),
                        format_quantity(T * (c + 0.5) / cols, "s").c_str(), l.mean_utilisation * 100);
    }
  }
}

void draw_links(ExplorerState& s, const sim::SimReport& it) {
  const sim::LinksReport& links = it.sim.links;
  wrapped_text(false, "%s", "Link utilisation over the iteration, by class (fraction of the class's capacity):");
  if (links.has_series) {
    // In the order of the class names (as the panel has always listed them).
    std::vector<int> order(sim::kLinkClasses);
    for (int c = 0; c < sim::kLinkClasses; ++c) order[size_t(c)] = c;
    std::sort(order.begin(), order.end(),
              [](int a, int b) { return std::string(link_words(sim::LinkClass(a))) < link_words(sim::LinkClass(b)); });
    ChartData d{.title = "Link utilisation by class", .x_name = "time", .x_unit = "s"};
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImVec2 p1 = p0;
    for (int c : order) {
      std::vector<float> vals;
      float mx = 0;
      for (double x : links.class_series[size_t(c)]) vals.push_back(float(x)), mx = std::max(mx, float(x));
      if (mx <= 0) continue;
      ImGui::PlotLines(link_words(sim::LinkClass(c)), vals.data(), int(vals.size()), 0, nullptr, 0.0f, 1.0f,
                       ImVec2(360, 36));
      p1 = ImVec2(std::max(p1.x, ImGui::GetItemRectMax().x), ImGui::GetItemRectMax().y);
      d.series.push_back({link_words(sim::LinkClass(c)), "%", {}});
      for (size_t k = 0; k < vals.size(); ++k) {
        if (d.x.size() <= k) d.x.push_back(links.series_bin_s * (double(k) + 0.5));
        d.series.back().y.push_back(100 * links.class_series[size_t(c)][k]);
      }
    }
    if (!d.series.empty()) describe_chart(d, p0, p1);
  }
  track(s, "sim.link_series");
  draw_hot_links(s, it);
  // Heat map: one cell per node, its NIC's utilisation (mean over the iteration).
  const std::vector<double>& nodes = links.node_nic_utilisation;
  const int n = int(nodes.size());
  const int cols = std::max(1, int(std::ceil(std::sqrt(n * 2.5))));
  const float cell = std::clamp(ImGui::GetContentRegionAvail().x / float(cols), 2.0f, 10.0f);
  double mx = 1e-12;
  for (double x : nodes) mx = std::max(mx, x);
  wrapped_text(false, "Node NIC utilisation (each cell a node; brightest = %.1f%% of the NIC)", mx * 100);
  ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (int i = 0; i < n; ++i) {
    const float f = float(nodes[size_t(i)] / mx);
    const float x = p0.x + (i % cols) * cell, y = p0.y + (i / cols) * cell;
    dl->AddRectFilled(ImVec2(x, y), ImVec2(x + cell - 1, y + cell - 1),
                      ImGui::ColorConvertFloat4ToU32(ImVec4(0.1f + 0.9f * f, 0.15f + 0.5f * f, 0.3f * (1 - f), 1)));
  }
  ImGui::Dummy(ImVec2(cols * cell, float((n + cols - 1) / cols) * cell));
  track(s, "sim.heatmap");
  if (n > 0 && access::collecting()) {  // a name a node: a whole machine's thousand are not built every frame
    ChartData heat{.title = "Node NIC utilisation", .x_name = "node", .levels = true};
    heat.series.push_back({"NIC busy, mean over the iteration", "%", {}});
    for (int i = 0; i < n; ++i) {
      heat.x_labels.push_back("node " + std::to_string(i));
      heat.series.back().y.push_back(100 * nodes[size_t(i)]);
    }
    describe_chart(heat, ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
  }
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int i = int((m.y - p0.y) / cell) * cols + int((m.x - p0.x) / cell);
    if (i >= 0 && i < n) ImGui::SetTooltip("node %d: NIC %.1f%% busy", i, nodes[size_t(i)] * 100);
  }
  if (ImGui::BeginTable("hot", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("hottest link");
    ImGui::TableSetupColumn("index");
    ImGui::TableSetupColumn("busy");
    ImGui::TableSetupColumn("capacity");
    ImGui::TableHeadersRow();
    for (const sim::HotLinkReport& h : links.hottest) {
      next_row();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(link_words(h.cls));
      ImGui::TableNextColumn();
      ImGui::Text("%d", h.index);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f%%", h.utilisation * 100);
      ImGui::TableNextColumn();
      ImGui::Text("%.0f GB/s", h.capacity_GBps);
    }
    end_table("Busiest links");
  }
}

void draw(ExplorerState& s) {
  poll(s);
  SimView& v = s.sim;
  wrapped_text(false,
               "Every GPU of the machine through one training iteration: compute in schedule order, "
               "tensor-parallel collectives, pipeline sends and bucketed gradient collectives, with every "
               "transfer sharing the links it crosses. Slow one GPU or one node's NIC and watch everyone wait.");
  draw_knobs(s);
  if (v.iteration_job) {
    if (progress_and_cancel(float(v.iteration_job->progress()))) v.iteration_job->cancel();
    track(s, "sim.cancel");
    char doing[64];
    std::snprintf(doing, sizeof doing, "simulating %lld GPUs...", v.config.estimate.cluster.gpus.value_or(0));
    same_line_if_fits(doing);
    ImGui::TextColored(accent_color(), "%s", doing);
  } else if (v.iteration_cancelled) {
    ImGui::TextColored(accent_color(), "cancelled: the timeline below is the previous configuration's.");
    ImGui::SameLine();
    if (ImGui::Button("Simulate")) v.iteration_cancelled = false;
    track(s, "sim.restart");
  }
  if (!v.iteration_error.empty()) {
    // Here, beside the controls that set what was refused, and named by their labels.
    error_text("%s", in_control_words(v.iteration_error, sim_controls()).c_str());
    track(s, "sim.error");
    return;
  }
  if (!v.iteration) return;
  const sim::SimReport& it = *v.iteration;
  const sim::IterationReport& sim = it.sim;
  const double T = it.simulated.iteration_time_s, A = it.analytic.iteration_time_s;
  {  // What is simulated, named before any number about it: the model, the machine's size and the layout.
    const Record* m = s.catalog->table("models") ? s.catalog->table("models")->find(it.config.model.id) : nullptr;
    const AcceleratorWords w = accelerator_words(&*s.catalog, it.config.cluster.gpu);
    const perf::Layout& L = it.config.layout;
    const std::string cp = L.cp > 1 ? " x context parallel " + std::to_string(L.cp) : "";
    wrapped_text(
        false, "%s on %s %s: tensor parallel %d%s x pipeline %d x data parallel %d, %d sequences per iteration",
        m ? m->name.c_str() : "a custom model", with_thousands(double(it.config.cluster.gpus())).c_str(),
        (it.config.cluster.gpus() == 1 ? w.one : w.many).c_str(), L.tp, cp.c_str(), L.pp, L.dp, L.global_batch);
    track(s, "sim.headline");
  }
  draw_screen_basis(s, "sim");
  // The summary lines are longer than a narrow panel (the side bars leave ~500 px at 1000 px wide):
  // wrapped at the window's edge rather than clipped, so the breakdown's last terms stay readable.
  wrapped_text(false, "Iteration: %s simulated, %s analytic (%+.1f%%)   MFU %.1f%%   %s days for the run",
               format_quantity(T, "s").c_str(), format_quantity(A, "s").c_str(), (T / A - 1) * 100,
               it.simulated.mfu * 100, format_quantity(it.simulated.training_days, "").c_str());
  track(s, "sim.iteration_time");
  const sim::CriticalBreakdownReport& b = sim.critical_gpu_breakdown;
  const std::string cp_part = b.cp_comm_s > 0 ? ", cp " + format_quantity(b.cp_comm_s, "s") : "";
  wrapped_text(true, "critical GPU (stage %d): compute %s, tp %s%s, pp send %s, pp wait %s, dp wait %s, optimizer %s",
               sim.critical_stage, format_quantity(b.compute_s, "s").c_str(), format_quantity(b.tp_comm_s, "s").c_str(),
               cp_part.c_str(), format_quantity(b.pp_send_s, "s").c_str(), format_quantity(b.pp_wait_s, "s").c_str(),
               format_quantity(b.dp_wait_s, "s").c_str(), format_quantity(b.optimizer_s, "s").c_str());
  const size_t n_classes = sim.replica_class_replicas.size();
  const std::string cp_words = it.config.layout.cp > 1
                                   ? " (data x context parallel ranks, dp " + std::to_string(it.config.layout.dp) +
                                         " x cp " + std::to_string(it.config.layout.cp) + ")"
                                   : "";
  wrapped_text(true, "%lld events in %.1f ms (%.2g events/s); %zu replica class%s simulated for %d replicas%s",
               sim.events, sim.wall_s * 1e3, sim.events_per_s, n_classes, n_classes == 1 ? "" : "es",
               it.config.layout.dp_group(), cp_words.c_str());
  {
    // The critical path, and whether it crosses replicas (a straggler elsewhere holds everyone up).
    const sim::CriticalPathReport& cp = sim.critical_path;
    std::string classes;
    for (int c : cp.replica_classes) classes += (classes.empty() ? "" : " > ") + std::to_string(c);
    const char* where = cp.replica_classes.size() > 1 ? "crossing replica classes" : "within replica class";
    wrapped_text(true, "critical path: %zu stage hops, %s %s; compute %s, dp %s", cp.stages.size(), where,
                 classes.c_str(), format_quantity(cp.seconds("forward") + cp.seconds("backward"), "s").c_str(),
                 format_quantity(cp.seconds("dp_wait") + cp.seconds("dp_comm"), "s").c_str());
    track(s, "sim.critical_path");
  }
  if (ImGui::BeginTabBar("simtabs")) {
    const auto want = [&](const char* tab) { return take_tab_request(s, tab) ? ImGuiTabItemFlags_SetSelected : 0; };
    const ImGuiTabItemFlags timeline_flag = want("timeline"), links_flag = want("links");
    if (ImGui::BeginTabItem("Timeline", nullptr, timeline_flag)) {
      s.shown_tab = "timeline";
      draw_gantt(s, it);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Links", nullptr, links_flag)) {
      s.shown_tab = "links";
      draw_links(s, it);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  draw_other_screens(s, "sim");
}

// The simulator panels' results: the iteration (sim panel) and the run (run panel) of the current config.
nlohmann::json shown_simulation(const ExplorerState& s) {
  const SimView& v = s.sim;
  nlohmann::json r = v.iteration && v.iteration_for && v.iteration_for->config == v.config ? sim::to_json(*v.iteration)
                                                                                           : nlohmann::json::object();
  if (v.run && v.run_for == RunKey{v.config, v.run_days, v.seed} && !v.run_job) r["run"] = sim::to_json(*v.run);
  return r.empty() ? nlohmann::json() : r;
}

PanelRegistrar reg{{.id = "sim",
                    .title = "One iteration, event by event",
                    .chapter = Chapter::run,
                    .order = 10,
                    .draw = draw,
                    .summary = "every GPU of the machine through one iteration, with the network shared flow by flow",
                    .tabs = {"timeline", "links"},
                    .tab_of_widget = [](const ExplorerState&, const std::string& w) -> std::string {
                      return w == "sim.hot_links" || w == "sim.link_series" || w == "sim.heatmap" ? "links" : "";
                    },
                    .needs_catalog = true,
                    .busy = [](const ExplorerState& s) { return bool(s.sim.iteration_job); },
                    .progress =
                        [](const ExplorerState& s) {
                          if (!s.sim.iteration_job) return std::string();
                          return "Simulating one iteration: " +
                                 std::to_string(int(std::lround(100 * s.sim.iteration_job->progress()))) + " %";
                        },
                    // The simulated machine and its faults (the run panel shares it).
                    .address = {{"simulate", [](const ExplorerState& s) { return default_config(s, "simulate"); },
                                 [](const ExplorerState& s) { return sim::to_json(s.sim.config); },
                                 [](ExplorerState& s, const nlohmann::json& c) {
                                   s.sim.config = sim::parse_sim_request(c, "edits.simulate");
                                 }}},
                    .configs = {{"simulate",
                                 [](ExplorerState& s, const nlohmann::json& c, const scenario::EngineCall* call) {
                                   SimView& v = s.sim;
                                   const bool changed =
                                       without_empty_sections(sim::to_json(v.config)) != without_empty_sections(c);
                                   v.config = sim::parse_sim_request(c, "the scenario's simulate config");
                                   // The same seed and length as the scenario's simulation: the run panel then shows
                                   // its numbers.
                                   if (call && call->config == c) {
                                     const unsigned long long seed = call->seed;
                                     const double days = call->run_days;
                                     if (seed != v.seed || (days > 0 && days != v.run_days) || changed || !v.run) {
                                       v.seed = seed;
                                       if (days > 0) v.run_days = days;
                                       if (v.run_job) v.run_job->cancel();  // a run of an older config is of no use now
                                       v.run_requested = true;
                                     }
                                   }
                                 },
                                 [](const ExplorerState& s) { return sim::to_json(s.sim.config); }, shown_simulation,
                                 [](ExplorerState& s) {
                                   const sim::SimRequest fresh =
                                       sim::parse_sim_request(default_config(s, "simulate"), "configs/simulate.json");
                                   if (!(s.sim.config == fresh)) s.sim.config = fresh;
                                 }}},
                    .default_config = "simulate",
                    .errors =
                        [](const ExplorerState& s) {
                          std::vector<std::string> out;
                          add_error(out, "sim", s.sim.iteration_error);
                          return out;
                        }}};

}  // namespace
}  // namespace mc::ui
