// run_panel.cpp - "A whole run": the seeded simulation of a training run of days to months on the
// machine (engine/sim/run.h): failures drawn per component from published large runs, gang-scheduled
// restarts that lose the work since the last checkpoint, checkpoint writes to blob storage, and a data
// pipeline that can starve the GPUs. Elapsed time on one axis with failures and checkpoints marked,
// goodput and the dollars. Uses the iteration panel's config (s.sim.config) and its simulated iteration.
#include "core/format.h"
#include "core/json_doc.h"
#include "sim/sim.h"
#include "ui/explorer.h"
#include "ui/screen_basis.h"
#include "ui/widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mc::ui {
namespace {

using nlohmann::json;

// What interrupted the run, in a student's words (the engine's ids: "gpu", "nic", "software").
const char* cause_words(sim::Cause c) {
  switch (c) {
    case sim::Cause::gpu:
      return "a GPU failed";
    case sim::Cause::host:
      return "a host (server) failed";
    case sim::Cause::nic:
      return "a network card failed";
    case sim::Cause::switch_:
      return "a network switch failed";
    case sim::Cause::software:
      return "software crashed";
  }
  return sim::to_string(c);
}

void poll(ExplorerState& s) {
  SimView& v = s.sim;
  if (v.run_job && v.run_job->done()) {
    const bool cancelled = v.run_job->cancelled();
    if (!v.run_job->error().empty())
      v.run_error = v.run_job->error();
    else if (v.run_job->result && v.run_job->result->run)
      v.run = std::move(v.run_job->result->run), v.run_error.clear();
    if (cancelled) v.run_error = "cancelled";
    v.run_job.reset();
  }
  if (v.run_requested && !v.run_job) {
    v.run_requested = false;
    v.run_for = RunKey{v.config, v.run_days, v.seed};
    v.run_job = std::make_shared<SimJob>(*s.catalog, v.config, std::vector<int>{}, v.run_days, v.seed);
    s.jobs.start(v.run_job);
  }
}

// The run's length and seed in the page's address (the machine is the "simulate" part, the iteration panel's).
json run_settings(const SimView& v) { return sim::to_json(sim::RunSettings{v.run_days, v.seed}); }

void open_run_settings(ExplorerState& s, const json& c) {
  const sim::RunSettings r = sim::parse_run_settings(c, "the link's run settings");
  s.sim.run_days = r.days, s.sim.seed = r.seed;
}

void knobs(ExplorerState& s) {
  SimView& v = s.sim;
  sim::SimRequest& c = v.config;
  ImGui::PushItemWidth(160);
  float days = float(v.run_days);
  if (slider_float("days at most", days, 1, float(sim::kMaxRunDays), "%.0f", ImGuiSliderFlags_Logarithmic))
    v.run_days = days;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The run stops when the model has seen its training tokens, or after this many days of\n"
        "wall-clock time, whichever comes first.");
  track(s, "run.days");
  same_line_if_fits(160 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize("seed").x);
  int seed = int(v.seed);
  if (input_int_clamped("seed", seed, 0, int(sim::kMaxRunSeed))) v.seed = (unsigned long long)seed;
  track(s, "run.seed");
  // Read without writing: an empty section added here would change the iteration's cache key and make
  // the iteration panel simulate again for nothing. Sections are written only when a knob moves.
  const sim::CheckpointRequest ck = c.checkpoint.value_or(sim::CheckpointRequest{});
  const sim::DataRequest data = c.data.value_or(sim::DataRequest{});
  const sim::FailuresRequest fail = c.failures.value_or(sim::FailuresRequest{});
  auto written = [](auto& section) -> auto& { return section ? *section : section.emplace(); };
  float interval_h = float(ck.interval_s.value_or(0.0) / 3600);
  if (slider_float("checkpoint every (h, 0 = Daly)", interval_h, 0, 24, "%.2f"))
    written(c.checkpoint).interval_s = double(interval_h) * 3600;
  track(s, "run.interval");
  same_line_if_fits(160 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize("storage accounts").x);
  float accounts = float(ck.storage_accounts.value_or(1.0));
  if (slider_float("storage accounts", accounts, 1, 64, "%.0f", ImGuiSliderFlags_Logarithmic))
    written(c.checkpoint).storage_accounts = std::round(accounts);
  track(s, "run.accounts");
  float cores = float(data.cpu_cores.value_or(0.0));
  if (slider_float("CPU cores for tokenizing (0 = the machine's)", cores, 0, 300000, "%.0f",
                   ImGuiSliderFlags_Logarithmic)) {
    if (cores < 1) {
      if (c.data) c.data->cpu_cores.reset();
    } else {
      written(c.data).cpu_cores = std::round(cores);
    }
  }
  track(s, "run.cores");
  const std::string profile = fail.profile.value_or(sim::kDefaultFailureProfile);
  if (const Table* t = s.catalog->table("failures")) {
    // The profile by its name ("Llama 3 405B ..."), wide enough to read, not its id cut at 160 px.
    const Record* chosen = t->find(profile);
    const std::string name = chosen ? chosen->name : profile;
    const ImGuiStyle& st = ImGui::GetStyle();
    const float w = std::min(ImGui::GetFontSize() * 20,
                             ImGui::CalcTextSize(name.c_str()).x + ImGui::GetFrameHeight() + 2 * st.FramePadding.x);
    const float label_w = st.ItemInnerSpacing.x + ImGui::CalcTextSize("failure rates").x;
    same_line_if_fits(std::max(160.0f, w) + label_w);
    // No wider than the line leaves beside its label (a phone's 320 px: the box ran 40 px past the edge).
    ImGui::SetNextItemWidth(
        std::max(ImGui::GetFontSize() * 6, std::min(std::max(160.0f, w), ImGui::GetContentRegionAvail().x - label_w)));
    if (begin_combo("failure rates", combo_preview(name).c_str(), 0, nullptr, name.c_str())) {
      for (const Record& r : t->records)
        if (ImGui::Selectable(r.name.c_str(), r.id == profile)) written(c.failures).profile = r.id;
      ImGui::EndCombo();
    }
    track(s, "run.profile");
  }
  ImGui::PopItemWidth();
}

// Elapsed time on x, training progress on y; failures red, checkpoints as ticks, restarts grey.
void timeline(ExplorerState& s, const sim::RunReport& r) {
  const double days = std::max(1e-9, r.days);
  const float w = std::max(300.0f, ImGui::GetContentRegionAvail().x), h = 160;
  ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("runaxis", ImVec2(w, h + 20));
  track(s, "run.timeline");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRect(p0, ImVec2(p0.x + w, p0.y + h), IM_COL32(90, 90, 90, 255));
  double last_t = 0, last_p = 0;
  const double max_p = std::max(1e-9, r.fraction_done);
  auto X = [&](double t_s) { return p0.x + float(t_s / 86400 / days) * w; };
  auto Y = [&](double prog) { return p0.y + h - float(prog / max_p) * (h - 4); };
  for (const sim::RunEvent& e : r.events) {
    const double t = e.t_s, p = e.progress;
    if (e.kind == sim::RunEvent::failure) {
      dl->AddLine(ImVec2(X(t), p0.y), ImVec2(X(t), p0.y + h), IM_COL32(220, 60, 60, 160));
    } else if (e.kind == sim::RunEvent::checkpoint || e.kind == sim::RunEvent::done) {
      dl->AddLine(ImVec2(X(last_t), Y(last_p)), ImVec2(X(t), Y(p)), IM_COL32(80, 180, 240, 255), 2);
      dl->AddLine(ImVec2(X(t), p0.y + h), ImVec2(X(t), p0.y + h + 5), IM_COL32(200, 200, 200, 200));
    } else if (e.kind == sim::RunEvent::restart) {
      dl->AddRectFilled(ImVec2(X(last_t), p0.y + h - 3), ImVec2(std::max(X(t), X(last_t) + 1), p0.y + h),
                        IM_COL32(140, 140, 140, 200));
    }
    last_t = t;
    if (e.kind != sim::RunEvent::failure) last_p = p;
  }
  // The axes say what they measure: y is the share of the training done (the top is where the run got to),
  // x the days elapsed; the legend names each mark.
  char label[96];
  std::snprintf(label, sizeof label, "training done: %.1f%% at the top, 0 at the bottom", 100 * r.fraction_done);
  dl->AddText(ImVec2(p0.x + 4, p0.y + 2), IM_COL32(80, 180, 240, 255), label);
  std::snprintf(label, sizeof label, "0 .. %.1f days elapsed", days);
  dl->AddText(ImVec2(p0.x + 2, p0.y + h + 6), IM_COL32(200, 200, 200, 255), label);
  const char* legend = "red: interruption   ticks: checkpoint   grey: restarting";
  const float lw = ImGui::CalcTextSize(legend).x;
  if (lw + ImGui::CalcTextSize(label).x + 24 < w)
    dl->AddText(ImVec2(p0.x + w - lw - 2, p0.y + h + 6), IM_COL32(200, 200, 200, 255), legend);
  if (ImGui::IsItemHovered()) {
    const double t = (ImGui::GetIO().MousePos.x - p0.x) / w * days;
    ImGui::SetTooltip("day %.2f", t);
  }
  // Its data: the share done at each checkpoint (what a restart goes back to); the interruptions counted in
  // the title.
  int failures = 0;
  ChartData d{.title = "", .x_name = "day", .series = {{"training done", "%", {}}}};
  for (const sim::RunEvent& e : r.events) {
    failures += e.kind == sim::RunEvent::failure;
    if (e.kind != sim::RunEvent::checkpoint && e.kind != sim::RunEvent::done) continue;
    d.x.push_back(e.t_s / 86400);
    d.series[0].y.push_back(100 * e.progress);
  }
  d.title = "Training progress over " + format_count(days, 3) + " days, " + std::to_string(failures) +
            (failures == 1 ? " interruption" : " interruptions");
  describe_chart(d, p0, ImVec2(p0.x + w, p0.y + h + 20));
}

// A refusal of what "One iteration, event by event" sets (the machine, the layout, the NIC, a straggler) is
// that panel's to show, beside its controls: this panel has none of them, so it names the control and sends
// the class there. A refusal of this panel's own knobs (checkpoints, failures, data) is shown here.
void draw_run_error(ExplorerState& s) {
  const SimView& v = s.sim;
  const std::string named = in_control_words(v.run_error, sim_controls());
  const bool iteration_refuses =
      !v.iteration_error.empty() && !v.iteration_job && v.iteration_for && v.iteration_for->config == v.config;
  if (named == v.run_error && !iteration_refuses) {
    error_text("%s", v.run_error.c_str());
    return;
  }
  const Panel* sim = find_panel("sim");
  const std::string where = sim ? sim->title : "sim";
  std::string control;  // the first control the message names, in quotes
  if (const size_t a = named.find('\''); a != std::string::npos && named != v.run_error)
    if (const size_t b = named.find('\'', a + 1); b != std::string::npos) control = named.substr(a, b - a + 1);
  error_text("The run cannot start: %s%s is refused in \"%s\", which shows why.",
             control.empty() ? "the machine or layout" : "the value of ", control.c_str(), where.c_str());
  if (ImGui::Button(("Open \"" + where + "\"").c_str())) open_panel(s, "sim");
  track(s, "run.refused");
}

void draw(ExplorerState& s) {
  poll(s);
  SimView& v = s.sim;
  wrapped_text(false,
               "A month on the machine: any lost GPU, host, NIC, switch or software crash stops the whole "
               "job, which is noticed, rescheduled, restarted and redoes the work since its last checkpoint. "
               "Rates come from published large runs (hover the table in the catalog: failures).");
  knobs(s);
  if (v.run_job) {
    if (progress_and_cancel(float(v.run_job->progress()))) v.run_job->cancel();
    track(s, "run.cancel");
  } else {
    if (ImGui::Button("Simulate the run")) v.run_requested = true;
    track(s, "run.start");
    if (!v.run && v.run_error.empty()) v.run_requested = true;  // first visit: run once
  }
  if (!v.run_error.empty()) draw_run_error(s);
  if (!v.run) return;
  const sim::RunReport& r = *v.run;
  wrapped_text(false, "%.1f days elapsed, %.1f%% of the training done%s; goodput %.1f%%, effective MFU %.1f%%", r.days,
               r.fraction_done * 100, r.finished ? " (finished)" : "", r.goodput * 100, r.effective_mfu * 100);
  track(s, "run.summary");
  draw_screen_basis(s, "run");
  // Infinite figures (no failures drawn: no MTBF, no interval) show as "none" and "-".
  const bool have_mtbf = std::isfinite(r.mtbf_s);
  wrapped_text(
      false,
      "%d interruptions (one every %s on average), %s GPU-hours lost to them, checkpoints %.1f%% of the time, %s",
      r.interruptions, have_mtbf ? format_duration(r.mtbf_s).c_str() : "none",
      format_quantity(r.lost_gpu_hours, "").c_str(), r.checkpoint_overhead_fraction * 100,
      r.cost_usd > 0 ? (format_usd(r.cost_usd) + " of GPU time at the cluster's price").c_str() : "no price");
  auto q = [](double x) { return format_duration(x); };
  wrapped_text(false, "Checkpoint: write %s, read %s; interval %s (Young %s, Daly %s)", q(r.checkpoint_write_s).c_str(),
               q(r.checkpoint_read_s).c_str(), q(r.interval_s).c_str(), q(r.young_s).c_str(), q(r.daly_s).c_str());
  track(s, "run.checkpoint");
  if (r.data_iteration_s > r.iteration_s)
    ImGui::TextColored(ImVec4(1, 0.6f, 0.3f, 1), "The data pipeline starves the GPUs: %s per iteration instead of %s",
                       format_quantity(r.data_iteration_s, "s").c_str(), format_quantity(r.iteration_s, "s").c_str());
  timeline(s, r);
  if (ImGui::BeginTable("causes", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("cause");
    ImGui::TableSetupColumn("interruptions");
    ImGui::TableSetupColumn("GPU-hours (redone work + downtime)");
    ImGui::TableHeadersRow();
    // Causes in the order of their names (as the table has always listed them).
    std::vector<int> causes(sim::kCauses);
    for (int c = 0; c < sim::kCauses; ++c) causes[size_t(c)] = c;
    std::sort(causes.begin(), causes.end(),
              [](int a, int b) { return std::string(cause_words(sim::Cause(a))) < cause_words(sim::Cause(b)); });
    for (int c : causes) {
      next_row();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(cause_words(sim::Cause(c)));
      ImGui::TableNextColumn();
      ImGui::Text("%d", r.interruptions_by_cause[size_t(c)]);
      ImGui::TableNextColumn();
      ImGui::Text("%s", format_quantity(r.lost_gpu_hours_by_cause[size_t(c)], "").c_str());
    }
    // Overheads that are not interruptions: GPU time writing checkpoints and waiting for data.
    const std::pair<const char*, double> overheads[] = {{"writing checkpoints", r.checkpoint_gpu_hours},
                                                        {"waiting for data", r.data_stall_gpu_hours}};
    for (const auto& [what, hours] : overheads) {
      next_row();
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s (overhead)", what);
      ImGui::TableNextColumn();
      ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", format_quantity(hours, "").c_str());
    }
    end_table("Interruptions by cause");
  }
  draw_other_screens(s, "run");
}

PanelRegistrar reg{{.id = "run",
                    .title = "A whole run",
                    .chapter = Chapter::run,
                    .order = 20,
                    .draw = draw,
                    .summary = "a month of training with failures, restarts, checkpoints and the data pipeline",
                    .tabs = {},
                    .tab_of_widget = nullptr,
                    .needs_catalog = true,
                    .busy = [](const ExplorerState& s) { return s.sim.run_job || s.sim.run_requested; },
                    .progress =
                        [](const ExplorerState& s) {
                          if (!s.sim.run_job) return std::string();
                          return "Simulating the whole run: " +
                                 std::to_string(int(std::lround(100 * s.sim.run_job->progress()))) + " %";
                        },
                    .address = {{"run", [](const ExplorerState&) { return run_settings(SimView{}); },
                                 [](const ExplorerState& s) { return run_settings(s.sim); }, open_run_settings}},
                    .default_config = "simulate",
                    .errors =
                        [](const ExplorerState& s) {
                          std::vector<std::string> out;
                          add_error(out, "run", s.sim.run_error);
                          return out;
                        }}};

}  // namespace
}  // namespace mc::ui
