// sim_report.h - the simulator's result as plain structs: what `megacluster simulate` prints, typed.
// The panels hold these (ui/panels/sim_panel.cpp, run_panel.cpp) and read fields, so a renamed field is
// a compile error rather than a panel that silently shows nothing; JSON exists only at the edges, through
// to_json (the CLI's output, the scenario player's engine calls, the app's state export).
//
//   SimReport           the simulated iteration: the analytic estimate's figures for it, the per-GPU
//     .sim              IterationReport: events, critical path, timelines, links, topology
//     .run              RunReport (when SimOptions::run_days > 0): the whole run, failures and goodput
//
// Units are in the field names (_s seconds, _Bps bytes per second, _GBps gigabytes per second); a
// utilisation is a fraction of the capacity, 0..1 (passive links can pass 1). Fields that the JSON only
// carries under some options say so; the to_json functions write exactly the keys they always wrote.
#pragma once

#include "perf/perf.h"
#include "sim/iteration.h"
#include "sim/run.h"
#include "sim/topology.h"

#include <nlohmann/json.hpp>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mc::sim {

// One span of a GPU's timeline ("sim.timeline.spans").
struct SpanReport {
  SpanKind kind = SpanKind::forward;
  double start_s = 0, end_s = 0;
  int micro_batch = -1;  // -1 when not per micro-batch
  int chunk = 0;         // model chunk; for dp_comm the bucket number
};

// One GPU's timeline: the worker (replica class, pipeline stage) that stands for it. At most
// SimOptions::max_timeline_spans spans, in the order the simulator recorded them.
struct TimelineReport {
  int gpu = 0, replica = 0, stage = 0, tp_rank = 0;
  int replica_class = 0;
  double speed = 1;  // compute speed relative to the other GPUs (a straggler < 1)
  double end_s = 0;
  std::vector<SpanReport> spans;
};

// One step of the critical path, on the worker of (replica class, stage).
struct CriticalStepReport {
  int replica_class = 0, stage = 0;
  SpanKind kind = SpanKind::forward;
  double start_s = 0, end_s = 0;
};

struct CriticalPathReport {
  std::map<std::string, double> seconds_by_kind;  // "forward" -> seconds (JSON "forward_s"); kinds present only
  double idle_s = 0;                              // iteration time the path does not cover
  std::vector<int> stages;                        // stages crossed, in order (repeats merged)
  std::vector<int> replica_classes;               // replica classes crossed, in order
  bool has_steps = false;                         // SimOptions::include_critical_path_steps
  std::vector<CriticalStepReport> steps;          // at most SimOptions::max_timeline_spans
  double seconds(const std::string& kind) const {
    const auto it = seconds_by_kind.find(kind);
    return it == seconds_by_kind.end() ? 0.0 : it->second;
  }
};

struct LinkClassReport {
  double bytes = 0;
  double mean_utilisation = 0;  // bytes / (class capacity x iteration time)
};

// One of the ten busiest links over the iteration.
struct HotLinkReport {
  int link = 0;      // link id in the topology
  std::string name;  // "node 12 NIC up"
  LinkClass cls = LinkClass::nvlink_up;
  int index = 0;  // node, GPU, leaf or spine number within its class
  double utilisation = 0;
  double capacity_GBps = 0;
};

// One of the hottest links' utilisation over time: utilisation[i] from t_s[i] until t_s[i + 1], the last
// until the iteration's end; bucket_s > 0 when capped to SimOptions::max_link_series_points bins.
struct LinkSeriesReport {
  int link = 0;
  std::string name;
  LinkClass cls = LinkClass::nvlink_up;
  int index = 0;
  double capacity_Bps = 0, bytes = 0;
  bool passive = false;
  double mean_utilisation = 0;
  double bucket_s = 0;
  std::vector<double> t_s, utilisation;
};

struct LinksReport {
  std::array<LinkClassReport, kLinkClasses> classes{};  // indexed by LinkClass
  std::vector<HotLinkReport> hottest;                   // busiest first
  std::vector<double> node_nic_utilisation;             // per node, mean over the iteration
  // SimOptions::include_link_series: per class, utilisation in equal bins of series_bin_s; the hottest
  // links' exact series.
  bool has_series = false;
  double series_bin_s = 0;
  std::array<std::vector<double>, kLinkClasses> class_series;
  std::vector<LinkSeriesReport> hottest_series;
};

struct TopologyReport {
  int nodes = 1, gpus_per_node = 8, leaves = 1, spines = 8, nodes_per_leaf = 16;
  double oversubscription = 1;
};

// The critical GPU's seconds by what it did (sums to the iteration time).
struct CriticalBreakdownReport {
  double compute_s = 0, tp_comm_s = 0, pp_send_s = 0, pp_wait_s = 0, dp_wait_s = 0, optimizer_s = 0, idle_s = 0;
  double cp_comm_s = 0;  // context-parallel gathers (0 without context parallelism)
};

// The simulation itself (JSON "sim").
struct IterationReport {
  long long events = 0, flow_groups = 0, rate_solves = 0;
  double wall_s = 0;  // host time the simulation took
  double events_per_s = 0;
  std::vector<int> replica_class_replicas;  // per replica class simulated: how many replicas it stands for
  int critical_stage = 0, critical_class = 0;
  CriticalBreakdownReport critical_gpu_breakdown;
  std::string dp_algorithm;  // "ring", "tree", "hierarchical"
  int buckets_per_stage = 0;
  LinksReport links;
  TopologyReport topology;
  CriticalPathReport critical_path;
  std::optional<TimelineReport> timeline;  // SimOptions::timeline_gpu
  bool has_timelines = false;              // SimOptions::timeline_gpus not empty
  std::vector<TimelineReport> timelines;
};

// A whole run (engine/sim/run.h's RunResult) with how it was drawn.
struct RunReport : RunResult {
  double wall_s = 0;  // host time the run simulation took
  unsigned long long seed = 1;
  std::string failure_profile;  // assets/catalog/failures.json record id
};

struct SimReport {
  perf::Config config;      // the resolved config (presets and catalog defaults filled in)
  perf::Estimate analytic;  // the analytic model's estimate (engine/perf)
  // The estimate's figures for the simulated iteration: the analytic estimate with iteration_time_s,
  // time (the critical GPU's breakdown), achieved_tflops_per_gpu, mfu, tokens_per_s, training_days,
  // gpu_hours and cost_usd taken from the simulation.
  perf::Estimate simulated;
  IterationReport sim;
  std::optional<RunReport> run;  // SimOptions::run_days > 0
};

// The JSON `megacluster simulate` prints (without the trace); the key set and number types are those of
// simulate_json since the simulator had one.
nlohmann::json to_json(const SimReport& r);
nlohmann::json to_json(const IterationReport& r);
nlohmann::json to_json(const RunReport& r);

}  // namespace mc::sim
