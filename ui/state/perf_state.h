// perf_state.h - view state of the performance panel ("Train a transformer on a cluster"). The config is
// the typed request `megacluster estimate` reads (perf/perf_request.h), so a scenario, a link or a test can set
// any key (e.g. perf.config.parallel->tp = 8) and the panel recomputes the estimate on the next frame.
#pragma once

#include "perf/perf.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mc::ui {

class PerfSearchJob;  // perf_panel.cpp

struct PerfView {
  // What the student picks (the `megacluster estimate` format). The default, GPT-3 on 1,024 V100s of
  // the 2020 Azure machine laid out as Megatron would, is assets/configs/estimate.json (the App loads it).
  mc::perf::Request config;

  // The machine the nodes slider offers, in GPUs (0: the config's own cluster.gpus). The layout follows it
  // (perf::fit_layout): config's cluster.gpus is then the GPUs the layout uses, at most this many, as the
  // search estimates a layout on the GPUs it needs. `fitted_gpus` is the cluster.gpus the panel wrote; a
  // config whose count differs was set by someone else (a scenario, a search row) and is its own machine.
  long long machine_gpus = 0;
  long long fitted_gpus = -1;

  // Derived, recomputed whenever `config` changes: the results below belong to `computed_for` (compared as
  // values, so every way of changing the config is seen: a control, a scenario, a link, a test).
  std::optional<mc::perf::Request> computed_for;
  bool valid = false;
  std::string error;  // LoadError message when the config is invalid
  mc::perf::Config parsed;
  mc::perf::Estimate estimate;
  std::vector<mc::perf::PipelineOp> timeline;
  // The same layout run by every training stack of software.json (id, its estimate): why the software
  // makes the same machine faster or slower.
  std::vector<std::pair<std::string, mc::perf::Estimate>> by_stack;

  // Layout search, run as a job (ui/jobs.h) in slices of one (tp, pp) pair: the panel shows what the job
  // published last (ranked so far, and the slices left) and stays at 60 fps.
  bool search_auto = true;                      // re-run when model, cluster or batch change
  std::optional<mc::perf::Request> search_for;  // the search config (no layout) searched
  mc::perf::Config search_config;               // parsed search config of search_for
  std::shared_ptr<PerfSearchJob> search_job;
  size_t search_left = 0;      // (tp, pp) slices still to run
  uint64_t search_serial = 0;  // the job's publication shown
  mc::perf::SearchResult search;
  bool search_done = false;
  std::string search_error;          // the search config was refused (the header then names no stale size)
  int gantt_max_micro_batches = 24;  // above this the Gantt replays the schedule with fewer micro-batches
  int gantt_micro_batches = 0;       // micro-batches in `timeline`
};

}  // namespace mc::ui
