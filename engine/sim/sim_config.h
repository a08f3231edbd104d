// sim_config.h - the simulator's own config sections (see sim.h) and how the analytic model's config
// becomes an IterationSpec and a RunSpec. Internal to engine/sim; the panel and the CLI use sim.h.
#pragma once

#include "catalog/catalog.h"
#include "core/json_doc.h"
#include "perf/perf.h"
#include "sim/iteration.h"
#include "sim/run.h"
#include "sim/sim_request.h"
#include "sim/topology.h"

#include <string>
#include <vector>

namespace mc::sim {

struct SimSections {
  std::vector<std::pair<int, double>> stragglers;      // (gpu, speed)
  std::vector<std::pair<int, double>> degraded_nodes;  // (node, bandwidth fraction)
  double bucket_bytes = 80e6;                          // Megatron-LM DDP: 40M fp16 elements per bucket
  int overlap_dp = -1;                                 // -1: as the analytic config says (parallel.overlap_dp_comm)
  std::string dp_algorithm = "auto";                   // auto: the analytic model's choice
  bool blocking_p2p = true;
  int spines = 8;
  int nics_per_node = 1;
  // Run
  std::string failure_profile = kDefaultFailureProfile;
  FailureRates failures;
  double checkpoint_interval_s = 0, checkpoint_write_GBps = 0, checkpoint_read_GBps = 0;
  double checkpoint_bytes_per_param = 14;  // fp16 weights 2 + fp32 master 4 + Adam moments 8 (ZeRO Sec. 3.1)
  double storage_accounts = 1;
  double data_cpu_cores = -1, data_tokens_per_s_per_core = 0, data_read_GBps = 0, data_bytes_per_token = 0;
};

// Everything the simulator needs, resolved: the analytic config and estimate, and the sim sections with
// catalog defaults filled in.
struct Resolved {
  perf::Config cfg;
  perf::Estimate est;
  SimSections sec;
  TopologySpec topo;
  IterationSpec iter;
};

// The simulator's work budget (iteration.h's measure; see sim_config.cpp for the calibration): a config
// whose least possible work is over it is refused before anything is built, and a simulation that passes
// it while running stops with WorkBudgetExceeded.
constexpr long long kMaxSimWork = 500000000;

// The least work (iteration.h's measure) an iteration can take, from its spec alone: every micro-batch's
// forward and backward of every chunk and (tp > 1) each layer's tp collective is at least one event; each
// gradient bucket is an all-reduce whose flow group crosses at least dp * tp links and is solved at least
// twice. A lower bound (tested against the measured work), so the check before building refuses nothing
// that would have run within the budget.
struct LeastWork {
  double work = 0, dp_work = 0, compute_events = 0, buckets = 0, steps_per_chunk = 0;
};
LeastWork least_work(const IterationSpec& it);

// Reads and checks the whole config (the analytic part through perf::parse_config). Throws LoadError.
Resolved resolve(const Catalog& cat, const JsonDoc& doc);

// The run spec for a simulated iteration time.
RunSpec run_spec(const Catalog& cat, const Resolved& r, double iteration_s, double max_days, unsigned long long seed);

}  // namespace mc::sim
