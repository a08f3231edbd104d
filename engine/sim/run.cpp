// run.cpp - a whole training run (run.h): failures drawn per GPU-hour from the seed, checkpoints every
// Young/Daly interval, lost work and restarts, so a run's days are a distribution, not one number.
#include "sim/run.h"

#include "sim/sim.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace mc::sim {

const char* to_string(Cause c) {
  switch (c) {
    case Cause::gpu:
      return "gpu";
    case Cause::host:
      return "host";
    case Cause::nic:
      return "nic";
    case Cause::switch_:
      return "switch";
    case Cause::software:
      return "software";
  }
  return "?";
}

double young_interval_s(double delta, double M) { return std::sqrt(2 * delta * M); }

double daly_interval_s(double delta, double M) {
  if (delta >= 2 * M) return M;
  const double x = delta / (2 * M);
  return std::sqrt(2 * delta * M) * (1 + std::sqrt(x) / 3 + x / 9) - delta;
}

namespace {
// Uniform (0,1) from the raw 64-bit output: std::mt19937_64's sequence is fixed by the standard, the
// distributions are not (libstdc++ and libc++ differ), so the native and web builds draw alike.
double uniform01(std::mt19937_64& g) { return (double(g() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
}  // namespace

RunResult simulate_run(const RunSpec& s, const std::function<void(double)>& progress, const std::atomic<bool>* cancel,
                       size_t max_events) {
  RunResult r;
  const double G = s.gpus, N = s.nodes;
  // Per-cause rates for the whole job, per second.
  const std::array<double, kCauses> rate{
      s.failures.gpu_per_gpu_hour * G / 3600, s.failures.host_per_node_hour * N / 3600,
      s.failures.nic_per_node_hour * N / 3600, s.failures.switch_per_node_hour * N / 3600,
      s.failures.software_per_node_hour * N / 3600};
  double total_rate = 0;
  for (double x : rate) total_rate += x;
  r.mtbf_s = total_rate > 0 ? 1 / total_rate : INFINITY;

  // Iteration time: the GPUs or the data pipeline, whichever is slower (prefetch overlaps them).
  r.iteration_s = s.iteration_s;
  double data_s = 0;
  if (s.cpu_cores > 0) data_s = std::max(data_s, s.tokens_per_iteration / (s.cpu_cores * s.tokens_per_s_per_core));
  if (s.data_read_Bps > 0) data_s = std::max(data_s, s.tokens_per_iteration * s.bytes_per_token / s.data_read_Bps);
  r.data_iteration_s = data_s;
  const double it = std::max(s.iteration_s, data_s);

  r.checkpoint_write_s = s.checkpoint_bytes / s.checkpoint_write_Bps;
  r.checkpoint_read_s = s.checkpoint_bytes / s.checkpoint_read_Bps;
  r.young_s = std::isfinite(r.mtbf_s) ? young_interval_s(r.checkpoint_write_s, r.mtbf_s) : INFINITY;
  r.daly_s = std::isfinite(r.mtbf_s) ? daly_interval_s(r.checkpoint_write_s, r.mtbf_s) : INFINITY;
  r.interval_s = s.checkpoint_interval_s > 0 ? s.checkpoint_interval_s : r.daly_s;
  // Work between checkpoints, at least one iteration.
  const double seg_work = std::isfinite(r.interval_s) ? std::max(it, r.interval_s) : INFINITY;

  std::mt19937_64 rng(s.seed);
  auto next_failure = [&](double now) {
    return total_rate > 0 ? now - std::log(uniform01(rng)) / total_rate : INFINITY;
  };
  auto draw_cause = [&]() {
    double u = uniform01(rng) * total_rate;
    for (int c = 0; c < kCauses; ++c) {
      if (u < rate[size_t(c)]) return Cause(c);
      u -= rate[size_t(c)];
    }
    return Cause::software;
  };
  auto log = [&](RunEvent e) {
    if (r.events.size() < max_events) r.events.push_back(e);
  };

  const double limit_s = s.max_days * 86400;
  const double total_work_s = s.iterations_total * it;  // compute seconds the whole run needs
  double t = 0, committed = 0;                          // committed: work seconds saved in a checkpoint
  double useful_s = 0, ckpt_s = 0;
  double tf = next_failure(0);
  long long steps = 0;
  while (t < limit_s && committed < total_work_s) {
    if (cancel && cancel->load()) {
      r.cancelled = true;
      break;
    }
    if (progress && (++steps & 63) == 0) progress(std::min(1.0, std::max(t / limit_s, committed / total_work_s)));
    const double work = std::min(seg_work, total_work_s - committed);
    const bool final_seg = committed + work >= total_work_s;
    const double write = final_seg ? 0 : r.checkpoint_write_s;  // the last segment ends the run
    const double seg_end = t + work + write;
    if (tf < seg_end && tf < limit_s) {
      // A failure: the work since the last complete checkpoint is lost; the job stops, is noticed,
      // rescheduled (hardware), restarted and reloads the checkpoint.
      const Cause c = draw_cause();
      const double lost = std::min(tf - t, work);  // time in a checkpoint write is counted below
      const double in_write = std::max(0.0, tf - t - work);
      const double down = s.failures.detection_s + (c == Cause::software ? 0 : s.failures.reschedule_s) +
                          s.failures.restart_s + r.checkpoint_read_s;
      ++r.interruptions;
      ++r.interruptions_by_cause[size_t(c)];
      r.lost_gpu_hours_by_cause[size_t(c)] += (lost + in_write + down) * G / 3600;
      log({tf, RunEvent::failure, c, lost, committed / total_work_s});
      t = tf + down;
      log({t, RunEvent::restart, c, 0, committed / total_work_s});
      tf = next_failure(t);
      continue;
    }
    if (seg_end > limit_s) {  // the window ends mid-segment: count the work done so far, uncommitted
      const double done = std::min(work, limit_s - t);
      useful_s += done;
      t = limit_s;
      committed += 0;
      r.iterations_done = (committed + done) / it;
      break;
    }
    t = seg_end;
    committed += work;
    useful_s += work;
    ckpt_s += write;
    log({t, final_seg ? RunEvent::done : RunEvent::checkpoint, Cause::gpu, 0, committed / total_work_s});
  }
  if (r.iterations_done == 0) r.iterations_done = committed / it;
  r.finished = committed >= total_work_s * (1 - 1e-12);
  r.days = t / 86400;
  r.fraction_done = std::min(1.0, r.iterations_done / s.iterations_total);
  r.projected_days = r.fraction_done > 0 ? r.days / r.fraction_done : INFINITY;
  for (double x : r.lost_gpu_hours_by_cause) r.lost_gpu_hours += x;
  r.checkpoint_gpu_hours = ckpt_s * G / 3600;
  r.data_stall_gpu_hours = r.iterations_done * (it - s.iteration_s) * G / 3600;
  // Goodput: time spent on iterations that count, at the GPU-bound pace, over the elapsed time.
  r.goodput = t > 0 ? r.iterations_done * s.iteration_s / t : 0;
  r.effective_mfu = t > 0 ? r.iterations_done * s.model_flops_per_iteration / (t * G * s.peak_flops_per_gpu) : 0;
  r.checkpoint_overhead_fraction = t > 0 ? ckpt_s / t : 0;
  r.cost_usd = t / 3600 * G * s.usd_per_gpu_hour;
  (void)useful_s;
  if (progress) progress(1.0);
  return r;
}

}  // namespace mc::sim
