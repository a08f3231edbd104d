// sim_state.h - view state of the simulator panels ("One iteration, event by event" and "A whole run").
// The config is the typed request `megacluster simulate` reads (sim/sim_request.h: the estimate's request plus
// stragglers, degraded_links, sim, failures, checkpoint, data), so a scenario or a test can set any key, e.g.
//   s.sim.config.stragglers = {{{.gpu = 0, .speed = 0.5}}};
// and the panels re-simulate on the next frame, through the job runner (ui/jobs.h: a worker thread
// natively; the browser build, which has no threads, advances it a slice of events per frame).
#pragma once

#include "sim/sim_report.h"
#include "sim/sim_request.h"
#include "ui/jobs.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mc {
struct Catalog;
namespace sim {
class Simulation;
}
}  // namespace mc

namespace mc::ui {

// One simulation in flight (the iteration, and the run when run_days > 0), run by the job runner
// (ui/jobs.h): a worker thread natively, slices of events per frame in the browser build.
class SimJob final : public Job {
 public:
  SimJob(const Catalog& cat, const sim::SimRequest& config, std::vector<int> gpus, double run_days = 0,
         unsigned long long seed = 1);
  ~SimJob() override;
  bool step(double budget_s) override;
  std::optional<sim::SimReport> result;  // set when done() unless it failed or was cancelled

 private:
  const Catalog& cat_;
  sim::SimRequest config_;
  std::vector<int> gpus_;  // Gantt rows
  double run_days_;
  unsigned long long seed_;
  std::unique_ptr<sim::Simulation> sim_;  // made by the first step (a bad config fails there)
};

// One Gantt row, flattened from the report once (drawing walks these each frame, not the JSON).
struct GanttSpan {
  double start_s, end_s;
  uint8_t kind;  // index into kGanttKinds
  int16_t micro_batch, chunk;
};
inline constexpr const char* kGanttKinds[] = {"forward", "backward", "tp_comm",   "pp_send", "pp_wait",
                                              "dp_comm", "dp_wait",  "optimizer", "cp_comm", "critical"};
struct GanttRow {
  std::string label;  // "GPU 624  stage 1  replica 0"
  bool slow = false;
  std::vector<GanttSpan> spans;     // compute stream, sorted by start
  std::vector<GanttSpan> side;      // dp_comm stream, sorted by start
  std::vector<GanttSpan> critical;  // the critical path where it runs on this row's class and stage
};

// The iteration panel's controls and the config keys they set (sim_panel.cpp): an engine error names the
// control ("'NIC Gb/s per node'"), and the run panel, which shares the config but has none of these
// controls, sends the class to the panel that has them.
const std::vector<std::pair<std::string, std::string>>& sim_controls();

// What a simulation shown belongs to: the config and the Gantt's slice of GPUs (the iteration), or the config,
// days and seed (the run).
struct IterationKey {
  sim::SimRequest config;
  int slice_first = 0, slice_count = 0, slice_stride = 0;
  bool operator==(const IterationKey&) const = default;
};
struct RunKey {
  sim::SimRequest config;
  double days = 0;
  unsigned long long seed = 0;
  bool operator==(const RunKey&) const = default;
};

struct SimView {
  // The default, GPT-3 on 9,984 GPUs of the 2020 machine, is assets/configs/simulate.json (the App loads it).
  sim::SimRequest config;
  // Gantt: which GPUs are rows (a slice: first, count, stride) and the visible window.
  int slice_first = 0, slice_count = 16, slice_stride = 624;  // 624 = tp*dp: one GPU per pipeline stage
  double view_start_s = 0, view_span_s = 0;                   // 0 span: the whole iteration
  // The request the window belongs to: a result for another request (a slower network) shows whole, so the
  // wait the change was made to show is never cut off; a new slice of rows keeps the window.
  std::optional<sim::SimRequest> view_for;
  // Run view.
  double run_days = sim::RunSettings{}.days;
  unsigned long long seed = sim::RunSettings{}.seed;

  // Iteration results (recomputed when config or slice changes).
  std::optional<IterationKey> iteration_for;  // what `iteration` belongs to
  std::optional<sim::SimReport> iteration;    // the simulated iteration (no run)
  std::string iteration_error;
  std::shared_ptr<SimJob> iteration_job;
  bool iteration_cancelled = false;              // the user stopped it: keep the last result until asked again
  std::optional<IterationKey> cancelled_for;     // the configuration whose simulation was cancelled
  std::vector<GanttRow> gantt;                   // rows of `iteration`, flattened
  float gantt_label_w = 0;                       // widest row label, pixels (measured when the rows change)
  std::vector<sim::LinkSeriesReport> hot_links;  // the hottest links of `iteration` that can be drawn
  // Run results (computed on request: the Run button, or a scenario setting run_requested).
  bool run_requested = false;
  std::optional<RunKey> run_for;
  std::optional<sim::RunReport> run;
  std::string run_error;
  std::shared_ptr<SimJob> run_job;
};

}  // namespace mc::ui
