// sim.h - the discrete-event simulator: one training iteration on every GPU of a cluster (flow-level
// bandwidth sharing over the real topology) and a seeded whole training run (failures, checkpoints,
// restarts, stragglers, storage, the data pipeline).
//
// Input is the `megacluster estimate` config (engine/perf/perf.h parses it; this module never parses
// the model, cluster or layout itself) plus optional sections of its own:
//
//   "stragglers":     [{"gpu": 0, "speed": 0.5}]           speed relative to the other GPUs
//   "degraded_links": [{"node": 3, "bandwidth_fraction": 0.25}]   that node's NICs run at a fraction
//   "sim":            {"bucket_bytes", "overlap_dp", "dp_algorithm": "auto|ring|tree|hierarchical",
//                      "blocking_p2p", "spines", "nics_per_node"}
//   (NIC bandwidth, oversubscription and GPUs per leaf are the analytic config's cluster keys
//    node_network_Gbps, oversubscription and leaf_nodes; a measured collective bus bandwidth,
//    inter_busbw_GBps, limits collectives between nodes but not pipeline sends, as in engine/perf.)
//   "failures":       {"profile": "llama3-405b-2024", "gpu_per_hour": 1.3e-5, "host_per_hour": ...,
//                      "nic_per_hour", "switch_per_hour", "software_per_hour",
//                      "detection_s", "reschedule_s", "restart_s"}      (defaults: assets/catalog/failures.json)
//   "checkpoint":     {"interval_s" (0 = Daly's optimum), "write_GBps", "read_GBps", "bytes_per_param",
//                      "storage_accounts"}              (defaults: assets/catalog/storage.json)
//   "data":           {"cpu_cores", "tokens_per_s_per_core", "read_GBps", "bytes_per_token"}
//
// Usage:
//   mc::sim::SimOptions o{.run_days = 30, .seed = 1};
//   mc::sim::SimReport r = mc::sim::simulate(catalog, config, o);     // throws LoadError on bad input
//   // r.simulated: the estimate's figures for the simulated iteration; r.sim: per-GPU timelines, link
//   // use, critical path, events/s; r.run, when o.run_days > 0: days, interruptions, goodput, ...
//   nlohmann::json out = mc::sim::to_json(r);   // what `megacluster simulate` prints (= simulate_json)
//
// Lower-level pieces: topology.h (links of the fat-tree), flow_net.h (max-min fair sharing),
// collectives.h (ring/tree/hierarchical as transfers), iteration.h (the per-GPU schedule), run.h.
#pragma once

#include "catalog/catalog.h"
#include "core/json_doc.h"
#include "sim/sim_report.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mc::sim {

// The longest run simulated (the run panel's slider and a scenario's "run_days" alike): more than a year of
// wall-clock time, beyond any run the catalog holds.
constexpr double kMaxRunDays = 400;

struct SimOptions {
  double run_days = 0;  // > 0: also simulate a run of at most this many wall-clock days (kMaxRunDays)
  unsigned long long seed = 1;
  int timeline_gpu = 0;            // GPU whose timeline is returned in "sim.timeline" (any GPU; -1 = none)
  std::vector<int> timeline_gpus;  // more GPUs, returned in "sim.timelines" (the panel's Gantt rows)
  int max_timeline_spans = 20000;
  bool include_link_series = true;  // utilisation over time per link class and of the hottest links
  // "sim.links.hottest_series": utilisation over time of this many links, the busiest (mean utilisation
  // descending, passive links left out: IterationSpec::hottest_include_passive; needs include_link_series). Each series
  // is exact and piecewise constant (a point where the link's load changes, equal consecutive values merged) unless it
  // has more than max_link_series_points points: then it is the time-average over that many equal bins of the iteration
  // ("bucket_s" > 0), which keeps its integral, the link's bytes, and caps the JSON at ~10^5 numbers.
  int hottest_links = 8;
  int max_link_series_points = 4000;
  // "sim.critical_path.steps": every step of the critical path (class, stage, kind, start, end), at most
  // max_timeline_spans of them (the panel draws them on its Gantt rows).
  bool include_critical_path_steps = false;
  // Called now and then during a run simulation with the fraction done (0..1); may be empty.
  std::function<void(double)> progress;
  // Set to true from elsewhere to stop a run simulation early (the result says "cancelled").
  const std::atomic<bool>* cancel = nullptr;
};

// The whole result (sim_report.h). Throws LoadError for invalid configs, naming the key and the rule.
SimReport simulate(const Catalog& cat, const nlohmann::json& config, const SimOptions& o,
                   const std::string& file_for_errors = "<config>");
SimReport simulate(const Catalog& cat, const JsonDoc& doc, const SimOptions& o);

// The whole result as JSON, to_json(simulate(...)) (what `megacluster simulate` prints, without the trace). Throws
// LoadError for invalid configs, naming the key and the rule; `file_for_errors` names the config in messages.
nlohmann::json simulate_json(const Catalog& cat, const nlohmann::json& config, const SimOptions& o,
                             const std::string& file_for_errors = "<config>");

// The same from a loaded document, so that errors point at the file's own lines and columns.
nlohmann::json simulate_json(const Catalog& cat, const JsonDoc& doc, const SimOptions& o);

// The same simulation advanced in bounded slices, for the single-threaded browser build (a slice per
// frame, a progress bar, Cancel = destroy the object):
//   mc::sim::Simulation s(catalog, config, options);     // resolves the config: throws LoadError
//   if (s.step(20000)) { SimReport r = s.report(); }      // else draw s.progress() and step next frame
// step() runs at most that many events of the iteration; report() (once, after step() returned true)
// builds exactly simulate's report (which is this object stepped to the end; result() is its JSON,
// simulate_json's output), so the answer does not depend on the slicing; the run (o.run_days > 0) is
// simulated inside report(). The catalog must
// outlive the object.
class Simulation {
 public:
  Simulation(const Catalog& cat, const JsonDoc& doc, SimOptions o);
  Simulation(const Catalog& cat, const nlohmann::json& config, SimOptions o,
             const std::string& file_for_errors = "<config>");
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;
  bool step(long long max_events);
  bool done() const;
  double progress() const;  // 0..1: the fraction of every GPU's ops done
  SimReport report();
  nlohmann::json result();  // to_json(report())

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Chrome trace-event JSON (chrome://tracing, Perfetto) of the simulated iteration: one process per
// simulated GPU class, one thread per pipeline stage's compute and communication streams.
nlohmann::json simulate_trace_json(const Catalog& cat, const nlohmann::json& config, const SimOptions& o,
                                   const std::string& file_for_errors = "<config>");
nlohmann::json simulate_trace_json(const Catalog& cat, const JsonDoc& doc, const SimOptions& o);

// Timing of the iteration simulation (`megacluster simulate --bench`): the config is resolved once
// (config checks + analytic estimate, `setup_wall_s`), then the topology is built and the iteration simulated
// `repeats` times; best-of is the figure to quote (other processes share the cores).
struct IterationBench {
  int repeats = 0;
  int gpus = 0;               // tp * pp * dp
  int replica_classes = 0;    // classes simulated (symmetric replicas once)
  long long events = 0;       // events of one iteration (the same every repeat)
  long long work = 0;         // the bandwidth solver's link visits (the work budget's measure)
  double estimated_work = 0;  // the same estimated from the layout before the first event (iteration.h)
  double iteration_s = 0;     // simulated time of one training iteration
  double setup_wall_s = 0;    // resolve (config checks + analytic estimate), once
  double best_wall_s = 0, mean_wall_s = 0, worst_wall_s = 0;  // topology + simulate_iteration, per repeat
  double events_per_s = 0;                                    // events / best_wall_s
};
IterationBench bench_iteration(const Catalog& cat, const JsonDoc& doc, int repeats);

// Young (1974): tau = sqrt(2 delta M); Daly (2006) higher-order estimate:
// tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta/(2M)) + (1/9) (delta/(2M))] - delta  for delta < 2M, else M.
double young_interval_s(double checkpoint_cost_s, double mtbf_s);
double daly_interval_s(double checkpoint_cost_s, double mtbf_s);

}  // namespace mc::sim
