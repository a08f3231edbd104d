// run.h - a whole training run of days to months, seeded and deterministic: failures drawn per
// component, gang-scheduled restarts that lose the work since the last checkpoint, checkpoint writes
// and reads from the shard sizes and the storage bandwidth, and a data pipeline that can starve the GPUs.
//
// Between events the run is closed-form (it trains at one iteration per iteration_s), so a month at
// 10,000 GPUs costs a few hundred events. Failures of all components form one Poisson process of rate
// sum(rate_i * count_i); the cause of each is drawn in proportion (superposition of Poisson processes).
// Any lost rank stops the job (MPI / NCCL jobs are gang-scheduled: OpenAI's Kubernetes scaling posts and
// the Llama 3 paper, Sec. 3.3.4, describe the same), which then pays detection, rescheduling (hardware
// causes only), restart and the checkpoint read, and redoes the work since its last complete checkpoint.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mc::sim {

enum class Cause : uint8_t { gpu, host, nic, switch_, software };
constexpr int kCauses = 5;
const char* to_string(Cause c);

struct FailureRates {  // per component per hour
  double gpu_per_gpu_hour = 0;
  double host_per_node_hour = 0;
  double nic_per_node_hour = 0;
  double switch_per_node_hour = 0;
  double software_per_node_hour = 0;
  double detection_s = 600, reschedule_s = 900, restart_s = 600;
};

struct RunSpec {
  int gpus = 1, nodes = 1;
  double iteration_s = 1;  // from the iteration simulation
  double tokens_per_iteration = 1;
  double iterations_total = 1;           // training tokens / tokens per iteration
  double model_flops_per_iteration = 0;  // for effective MFU
  double peak_flops_per_gpu = 1;
  double usd_per_gpu_hour = 0;
  double max_days = 30;  // wall-clock limit of the simulation
  FailureRates failures;
  // Checkpoints: bytes of the whole job's state, storage bandwidth; interval 0 -> Daly's optimum.
  double checkpoint_bytes = 0;
  double checkpoint_write_Bps = 1e9, checkpoint_read_Bps = 1e9;
  double checkpoint_interval_s = 0;
  // Data pipeline: CPU tokenization and storage streaming overlap training (prefetch), so an iteration
  // takes max(iteration_s, tokens / tokenizer rate, bytes / read bandwidth).
  double cpu_cores = 0;  // 0 -> not modelled
  double tokens_per_s_per_core = 2e5;
  double data_read_Bps = 0;  // 0 -> not modelled
  double bytes_per_token = 4;
  unsigned long long seed = 1;
};

struct RunEvent {
  double t_s;
  enum Kind : uint8_t { failure, restart, checkpoint, done } kind;
  Cause cause;      // failures only
  double lost_s;    // failures: work lost since the last checkpoint
  double progress;  // fraction of the training done (committed) at t_s
};

struct RunResult {
  double days = 0;  // wall-clock days simulated
  bool finished = false, cancelled = false;
  double iterations_done = 0, fraction_done = 0;
  double projected_days = 0;  // to finish, at the simulated pace
  int interruptions = 0;
  std::array<int, kCauses> interruptions_by_cause{};
  std::array<double, kCauses> lost_gpu_hours_by_cause{};  // redone work + downtime
  double lost_gpu_hours = 0;
  double checkpoint_gpu_hours = 0, data_stall_gpu_hours = 0;
  double goodput = 0;  // useful training time / elapsed
  double effective_mfu = 0;
  double checkpoint_overhead_fraction = 0;
  double cost_usd = 0;
  double iteration_s = 0, data_iteration_s = 0;  // GPU-bound and data-bound time per iteration
  double mtbf_s = 0;
  double checkpoint_write_s = 0, checkpoint_read_s = 0;
  double interval_s = 0, young_s = 0, daly_s = 0;
  std::vector<RunEvent> events;  // at most max_events (the counters above count everything)
};

RunResult simulate_run(const RunSpec& s, const std::function<void(double)>& progress = {},
                       const std::atomic<bool>* cancel = nullptr, size_t max_events = 50000);

}  // namespace mc::sim
