// sim_panel.cpp - "One iteration, event by event": the discrete-event simulation of one training
// iteration on every GPU (engine/sim, the same code as `megacluster simulate`). A zoomable Gantt of a
// slice of GPUs (one row each, coloured by what the GPU does), the per-class link utilisation over the
// iteration, a heat map of every node's NIC, and the knobs that change the answer: stragglers, a
// degraded node, NIC bandwidth, oversubscription, bucket size and overlap.
// The simulation runs on a worker thread natively (the browser build runs it within the frame), so the
// UI keeps drawing while 10,000 GPUs are simulated.
#include "core/format.h"
#include "sim/sim.h"
#include "ui/explorer.h"
#include "ui/widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#ifndef __EMSCRIPTEN__
#include <thread>
#endif

namespace mc::ui {

using nlohmann::json;

// Runs a job (iteration, plus the run when run_days > 0) on a worker thread natively, at once on the web.
void start_sim_job(const Catalog& cat, std::shared_ptr<SimJob> job) {
  auto work = [job, cat]() {
    try {
      sim::SimOptions o;
      o.run_days = job->run_days;
      o.seed = job->seed;
      o.timeline_gpu = -1;
      o.timeline_gpus = job->gpus;
      o.max_timeline_spans = 4000;
      o.cancel = &job->cancel;
      SimJob* raw = job.get();
      o.progress = [raw](double f) { raw->progress = f; };
      job->result = sim::simulate_json(cat, job->config, o, "panel config");
    } catch (const std::exception& e) {
      job->error = e.what();
    }
    job->progress = 1.0;
    job->done = true;
  };
#ifndef __EMSCRIPTEN__
  std::thread(work).detach();
#else
  work();
#endif
}

namespace {

ImU32 span_color(const std::string& kind) {
  if (kind == "forward") return IM_COL32(80, 150, 230, 255);
  if (kind == "backward") return IM_COL32(40, 90, 180, 255);
  if (kind == "tp_comm") return IM_COL32(240, 170, 50, 255);
  if (kind == "pp_send") return IM_COL32(160, 90, 200, 255);
  if (kind == "pp_wait") return IM_COL32(90, 90, 90, 255);
  if (kind == "dp_comm") return IM_COL32(60, 190, 120, 255);
  if (kind == "dp_wait") return IM_COL32(200, 70, 70, 255);
  if (kind == "optimizer") return IM_COL32(230, 230, 90, 255);
  return IM_COL32(128, 128, 128, 255);
}

void legend() {
  for (const char* k : {"forward", "backward", "tp_comm", "pp_send", "pp_wait", "dp_comm", "dp_wait", "optimizer"}) {
    ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + 10, p.y + 10), span_color(k));
    ImGui::Dummy(ImVec2(12, 10));
    ImGui::SameLine();
    ImGui::TextUnformatted(k);
    ImGui::SameLine();
  }
  ImGui::NewLine();
}

std::vector<int> slice_gpus(const SimView& v) {
  std::vector<int> g;
  for (int i = 0; i < v.slice_count; ++i) g.push_back(v.slice_first + i * std::max(1, v.slice_stride));
  return g;
}

void poll(ExplorerState& s) {
  SimView& v = s.sim;
  const std::string key = v.config.dump() + "|" + std::to_string(v.slice_first) + "," +
                          std::to_string(v.slice_count) + "," + std::to_string(v.slice_stride);
  if (v.iteration_job && v.iteration_job->done) {
    v.iteration = std::move(v.iteration_job->result);
    v.iteration_error = v.iteration_job->error;
    v.iteration_job.reset();
  }
  if (key != v.iteration_for && !v.iteration_job) {
    v.iteration_for = key;
    auto job = std::make_shared<SimJob>();
    job->config = v.config;
    job->gpus = slice_gpus(v);
    v.iteration_job = job;
    start_sim_job(*s.catalog, job);
  }
}

// Sets a config value when a widget changed it (keys are created on first use).
void knob_float(json& parent, const char* key, const char* label, float& value, float lo, float hi, const char* fmt,
                ExplorerState& s, const std::string& id, bool log = false) {
  if (ImGui::SliderFloat(label, &value, lo, hi, fmt, log ? ImGuiSliderFlags_Logarithmic : 0)) parent[key] = value;
  track(s, id);
}

void draw_knobs(ExplorerState& s) {
  SimView& v = s.sim;
  json& c = v.config;
  ImGui::PushItemWidth(180);
  // Straggler: GPU 0's speed.
  float speed = 1.0f;
  if (c.contains("stragglers") && c["stragglers"].is_array() && !c["stragglers"].empty())
    speed = c["stragglers"][0].value("speed", 1.0f);
  if (ImGui::SliderFloat("GPU 0 speed", &speed, 0.1f, 1.0f, "%.2f")) {
    if (speed >= 0.999f) c.erase("stragglers");
    else c["stragglers"] = json::array({{{"gpu", 0}, {"speed", speed}}});
  }
  track(s, "sim.straggler");
  ImGui::SameLine();
  float frac = 1.0f;
  if (c.contains("degraded_links") && c["degraded_links"].is_array() && !c["degraded_links"].empty())
    frac = c["degraded_links"][0].value("bandwidth_fraction", 1.0f);
  if (ImGui::SliderFloat("node 3 NIC", &frac, 0.05f, 1.0f, "%.2f of nominal")) {
    if (frac >= 0.999f) c.erase("degraded_links");
    else c["degraded_links"] = json::array({{{"node", 3}, {"bandwidth_fraction", frac}}});
  }
  track(s, "sim.degraded");
  float nic = c["cluster"].value("node_network_Gbps", 400.0f);
  knob_float(c["cluster"], "node_network_Gbps", "NIC Gb/s per node", nic, 25, 1600, "%.0f", s, "sim.nic", true);
  ImGui::SameLine();
  float over = c["cluster"].value("oversubscription", 1.0f);
  knob_float(c["cluster"], "oversubscription", "oversubscription", over, 1, 8, "%.1f : 1", s, "sim.oversubscription");
  if (!c.contains("sim")) c["sim"] = json::object();
  float bucket_MB = float(c["sim"].value("bucket_bytes", 80e6) / 1e6);
  if (ImGui::SliderFloat("bucket MB", &bucket_MB, 1, 1000, "%.0f", ImGuiSliderFlags_Logarithmic))
    c["sim"]["bucket_bytes"] = double(bucket_MB) * 1e6;
  track(s, "sim.bucket");
  ImGui::SameLine();
  bool overlap = c["sim"].value("overlap_dp", c["parallel"].value("overlap_dp_comm", false));
  if (ImGui::Checkbox("overlap gradients with backward", &overlap)) c["sim"]["overlap_dp"] = overlap;
  track(s, "sim.overlap");
  ImGui::PopItemWidth();
}

void draw_gantt(ExplorerState& s, const json& it) {
  SimView& v = s.sim;
  const json& rows = it["sim"]["timelines"];
  const double T = it["iteration_time_s"].get<double>();
  if (v.view_span_s <= 0 || v.view_span_s > T) v.view_span_s = T;
  v.view_start_s = std::clamp(v.view_start_s, 0.0, std::max(0.0, T - v.view_span_s));
  ImGui::PushItemWidth(120);
  ImGui::InputInt("first GPU", &v.slice_first);
  track(s, "sim.slice_first");
  ImGui::SameLine();
  ImGui::SliderInt("rows", &v.slice_count, 1, 64);
  ImGui::SameLine();
  ImGui::SliderInt("stride", &v.slice_stride, 1, 1024, "%d", ImGuiSliderFlags_Logarithmic);
  ImGui::PopItemWidth();
  const int gpus = it.value("gpus", 1);
  v.slice_first = std::clamp(v.slice_first, 0, gpus - 1);
  ImGui::SameLine();
  if (ImGui::Button("one per stage")) v.slice_stride = std::max(1, it["layout"]["tp"].get<int>() * it["layout"]["dp"].get<int>());
  track(s, "sim.one_per_stage");
  ImGui::SameLine();
  if (ImGui::Button("whole iteration")) v.view_start_s = 0, v.view_span_s = T;
  ImGui::TextDisabled("wheel: zoom at the mouse, drag: pan; %s shown of %s",
                      format_quantity(v.view_span_s, "s").c_str(), format_quantity(T, "s").c_str());
  legend();
  const float label_w = 150, row_h = 14;
  const float width = std::max(200.0f, ImGui::GetContentRegionAvail().x - label_w);
  const float height = row_h * float(rows.size()) + 4;
  ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("gantt", ImVec2(label_w + width, height));
  track(s, "sim.gantt");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsItemHovered() && io.MouseWheel != 0) {
    const double at = v.view_start_s + (io.MousePos.x - p0.x - label_w) / width * v.view_span_s;
    v.view_span_s = std::clamp(v.view_span_s * std::pow(0.8, io.MouseWheel), T * 1e-5, T);
    v.view_start_s = at - (io.MousePos.x - p0.x - label_w) / width * v.view_span_s;
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left))
    v.view_start_s -= io.MouseDelta.x / width * v.view_span_s;
  const double a = v.view_start_s, span = v.view_span_s;
  int r = 0;
  for (const json& row : rows) {
    const float y = p0.y + r * row_h;
    char label[96];
    std::snprintf(label, sizeof label, "GPU %d  st %d rep %d%s", row["gpu"].get<int>(), row["stage"].get<int>(),
                  row["replica"].get<int>(), row["speed"].get<double>() < 1 ? " slow" : "");
    dl->AddText(ImVec2(p0.x, y), IM_COL32(220, 220, 220, 255), label);
    for (const json& sp : row["spans"]) {
      const double s0 = sp["start_s"], s1 = sp["end_s"];
      if (s1 < a || s0 > a + span) continue;
      const float x0 = p0.x + label_w + float((std::max(s0, a) - a) / span * width);
      const float x1 = p0.x + label_w + float((std::min(s1, a + span) - a) / span * width);
      const std::string kind = sp["kind"];
      const bool side = kind == "dp_comm";  // the gradient stream runs beside the compute stream
      const float yt = side ? y + row_h * 0.65f : y + 1, yb = side ? y + row_h - 1 : y + row_h * 0.62f;
      dl->AddRectFilled(ImVec2(x0, yt), ImVec2(std::max(x1, x0 + 1), yb), span_color(kind));
    }
    ++r;
  }
  if (ImGui::IsItemHovered()) {
    const double t = a + (io.MousePos.x - p0.x - label_w) / width * span;
    const int row = int((io.MousePos.y - p0.y) / row_h);
    if (row >= 0 && row < int(rows.size()) && t >= 0)
      for (const json& sp : rows[size_t(row)]["spans"])
        if (sp["start_s"].get<double>() <= t && t <= sp["end_s"].get<double>()) {
          ImGui::SetTooltip("%s  mb %d  chunk %d\n%s .. %s (%s)", sp["kind"].get<std::string>().c_str(),
                            sp["micro_batch"].get<int>(), sp["chunk"].get<int>(),
                            format_quantity(sp["start_s"], "s").c_str(), format_quantity(sp["end_s"], "s").c_str(),
                            format_quantity(sp["end_s"].get<double>() - sp["start_s"].get<double>(), "s").c_str());
          break;
        }
  }
}

void draw_links(ExplorerState& s, const json& it) {
  const json& links = it["sim"]["links"];
  ImGui::TextUnformatted("Link utilisation over the iteration, by class (fraction of the class's capacity):");
  if (links.contains("utilisation_series"))
    for (auto& [cls, series] : links["utilisation_series"]["classes"].items()) {
      std::vector<float> vals;
      float mx = 0;
      for (double x : series) vals.push_back(float(x)), mx = std::max(mx, float(x));
      if (mx <= 0) continue;
      ImGui::PlotLines(cls.c_str(), vals.data(), int(vals.size()), 0, nullptr, 0.0f, 1.0f, ImVec2(360, 36));
    }
  track(s, "sim.link_series");
  // Heat map: one cell per node, its NIC's utilisation (mean over the iteration).
  const json& nodes = links["node_nic_utilisation"];
  const int n = int(nodes.size());
  const int cols = std::max(1, int(std::ceil(std::sqrt(n * 2.5))));
  const float cell = std::clamp(ImGui::GetContentRegionAvail().x / float(cols), 2.0f, 10.0f);
  double mx = 1e-12;
  for (double x : nodes) mx = std::max(mx, x);
  ImGui::Text("Node NIC utilisation (each cell a node; brightest = %.1f%% of the NIC)", mx * 100);
  ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (int i = 0; i < n; ++i) {
    const float f = float(nodes[size_t(i)].get<double>() / mx);
    const float x = p0.x + (i % cols) * cell, y = p0.y + (i / cols) * cell;
    dl->AddRectFilled(ImVec2(x, y), ImVec2(x + cell - 1, y + cell - 1),
                      ImGui::ColorConvertFloat4ToU32(ImVec4(0.1f + 0.9f * f, 0.15f + 0.5f * f, 0.3f * (1 - f), 1)));
  }
  ImGui::Dummy(ImVec2(cols * cell, float((n + cols - 1) / cols) * cell));
  track(s, "sim.heatmap");
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int i = int((m.y - p0.y) / cell) * cols + int((m.x - p0.x) / cell);
    if (i >= 0 && i < n) ImGui::SetTooltip("node %d: NIC %.1f%% busy", i, nodes[size_t(i)].get<double>() * 100);
  }
  if (ImGui::BeginTable("hot", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("hottest link");
    ImGui::TableSetupColumn("index");
    ImGui::TableSetupColumn("busy");
    ImGui::TableSetupColumn("capacity");
    ImGui::TableHeadersRow();
    for (const json& h : links["hottest"]) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(h["class"].get<std::string>().c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%d", h["index"].get<int>());
      ImGui::TableNextColumn();
      ImGui::Text("%.1f%%", h["utilisation"].get<double>() * 100);
      ImGui::TableNextColumn();
      ImGui::Text("%.0f GB/s", h["capacity_GBps"].get<double>());
    }
    ImGui::EndTable();
  }
}

void draw(ExplorerState& s) {
  if (!s.catalog) {
    ImGui::TextWrapped("The catalog could not be loaded: %s", s.catalog_error.c_str());
    return;
  }
  poll(s);
  SimView& v = s.sim;
  ImGui::TextWrapped("Every GPU of the machine through one training iteration: compute in schedule order, "
                     "tensor-parallel collectives, pipeline sends and bucketed gradient collectives, with every "
                     "transfer sharing the links it crosses. Slow one GPU or one node's NIC and watch everyone wait.");
  draw_knobs(s);
  if (v.iteration_job) {
    ImGui::TextColored(accent_color(), "simulating %d GPUs...", v.config["cluster"].value("gpus", 0));
  }
  if (!v.iteration_error.empty()) {
    ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", v.iteration_error.c_str());
    return;
  }
  if (v.iteration.is_null() || !v.iteration.contains("sim")) return;
  const json& it = v.iteration;
  const json& sim = it["sim"];
  const double T = it["iteration_time_s"], A = it["analytic"]["iteration_time_s"];
  ImGui::Text("Iteration: %s simulated, %s analytic (%+.1f%%)   MFU %.1f%%   %s days for the run",
              format_quantity(T, "s").c_str(), format_quantity(A, "s").c_str(), (T / A - 1) * 100,
              it["mfu"].get<double>() * 100, format_quantity(it["training_days"], "").c_str());
  track(s, "sim.iteration_time");
  const json& b = sim["critical_gpu_breakdown_s"];
  ImGui::TextDisabled("critical GPU (stage %d): compute %s, tp %s, pp send %s, pp wait %s, dp wait %s, optimizer %s",
                      sim["critical"]["stage"].get<int>(), format_quantity(b["compute"], "s").c_str(),
                      format_quantity(b["tp_comm"], "s").c_str(), format_quantity(b["pp_send"], "s").c_str(),
                      format_quantity(b["pp_wait"], "s").c_str(), format_quantity(b["dp_wait"], "s").c_str(),
                      format_quantity(b["optimizer"], "s").c_str());
  ImGui::TextDisabled("%lld events in %.1f ms (%.2g events/s); %zu replica classes simulated for %d replicas",
                      sim["events"].get<long long>(), sim["wall_s"].get<double>() * 1e3,
                      sim["events_per_s"].get<double>(), sim["replica_classes"].size(), it["layout"]["dp"].get<int>());
  if (ImGui::BeginTabBar("simtabs")) {
    if (ImGui::BeginTabItem("Timeline")) {
      draw_gantt(s, it);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Links")) {
      draw_links(s, it);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
}

PanelRegistrar reg{{.id = "sim",
                    .title = "One iteration, event by event",
                    .chapter = Chapter::run,
                    .order = 10,
                    .draw = draw,
                    .summary = "every GPU of the machine through one iteration, with the network shared flow by flow"}};

}  // namespace
}  // namespace mc::ui
