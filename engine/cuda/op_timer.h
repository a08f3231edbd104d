// op_timer.h - where a training step's GPU time goes, per device operation (MC_CUDA_PROFILE=1). Each call
// of the device interface is bracketed by two CUDA events on the calling thread's default stream; the
// pairs are read back in batches (so a run is not synchronised on every call) and summed per operation.
// What happens before the second step begins (set-up, the weights' upload, the first step's lazy module
// loads and cuBLAS heuristics) is left out, as the run's tokens/s leaves out its first step. At the end
// of the run a table goes to stderr: calls, GPU milliseconds per step, mean microseconds per call and the
// share of all timed GPU time. Off by default: then a scope is one branch. Only for .cu files.
//
// Why events and not a profiler: the lent GPU machines have no Nsight Systems, and a replaying profiler
// (ncu) times each kernel alone; events see the kernels as the step runs them, back to back.
#pragma once

#include "cuda/cuda_check.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace mc::cuda {

class OpTimer {
 public:
  OpTimer() {
    const char* e = std::getenv("MC_CUDA_PROFILE");
    on_ = e && *e && std::string(e) != "0";
  }
  ~OpTimer() {
    if (!on_) return;
    try {
      flush();
      report(stderr);
    } catch (...) {  // a failing GPU at exit must not turn into terminate()
    }
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

  // A training step starts: when the second one does, everything timed so far is dropped.
  void begin_step() {
    if (!on_) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (++steps_begun_ != 2) return;
    flush_locked();
    totals_.clear();
  }

  class Scope {
   public:
    Scope(OpTimer* t, const char* op) : t_(t && t->on_ ? t : nullptr) {
      if (t_) slot_ = t_->begin(op);
    }
    ~Scope() {
      if (t_) t_->end(slot_);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    OpTimer* t_;
    uint64_t slot_ = 0;
  };

 private:
  struct Pair {
    const char* op;
    int device;
    cudaEvent_t a, b;
    bool ended;
  };
  struct Total {
    long long calls = 0;
    double ms = 0;
  };

  uint64_t begin(const char* op) {
    std::lock_guard<std::mutex> lock(mu_);
    if (open_.size() >= 8192) flush_locked();
    Pair p{op, 0, nullptr, nullptr, false};
    check_call("profile", cudaGetDevice(&p.device), "cudaGetDevice");
    check_call("profile", cudaEventCreate(&p.a), "cudaEventCreate");
    check_call("profile", cudaEventCreate(&p.b), "cudaEventCreate");
    check_call("profile", cudaEventRecord(p.a, 0), "cudaEventRecord");
    open_[next_] = p;
    return next_++;
  }
  void end(uint64_t slot) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = open_.find(slot);
    if (it == open_.end()) return;
    check_call("profile", cudaEventRecord(it->second.b, 0), "cudaEventRecord");
    it->second.ended = true;
  }
  void flush() {
    std::lock_guard<std::mutex> lock(mu_);
    flush_locked();
  }
  // Reads every ended pair (waiting for each on its own GPU) and frees their events; a pair another thread
  // has begun but not ended stays.
  void flush_locked() {
    int current = 0;
    cudaGetDevice(&current);
    for (auto it = open_.begin(); it != open_.end();) {
      Pair& p = it->second;
      if (!p.ended) {
        ++it;
        continue;
      }
      cudaSetDevice(p.device);
      float ms = 0;
      check_call("profile", cudaEventSynchronize(p.b), "cudaEventSynchronize");
      check_call("profile", cudaEventElapsedTime(&ms, p.a, p.b), "cudaEventElapsedTime");
      Total& t = totals_[p.op];
      ++t.calls;
      t.ms += ms;
      cudaEventDestroy(p.a);
      cudaEventDestroy(p.b);
      it = open_.erase(it);
    }
    cudaSetDevice(current);
  }
  void report(std::FILE* f) const {
    std::vector<std::pair<std::string, Total>> rows(totals_.begin(), totals_.end());
    std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.second.ms > y.second.ms; });
    double all = 0;
    for (const auto& r : rows) all += r.second.ms;
    // Steps 2..n when there were two or more; otherwise the whole run (set-up and its one step).
    const int steps = steps_begun_ >= 2 ? steps_begun_ - 1 : 1;
    std::fprintf(f, "\nMC_CUDA_PROFILE: GPU time per device operation, %s (%.2f ms per step timed)\n",
                 steps_begun_ >= 2 ? ("steps 2 to " + std::to_string(steps_begun_)).c_str() : "the whole run",
                 all / steps);
    std::fprintf(f, "%-24s %10s %12s %12s %7s\n", "operation", "calls/step", "ms/step", "us/call", "share");
    for (const auto& r : rows)
      std::fprintf(f, "%-24s %10.1f %12.3f %12.1f %6.1f%%\n", r.first.c_str(), double(r.second.calls) / steps,
                   r.second.ms / steps, 1000.0 * r.second.ms / double(std::max(1LL, r.second.calls)),
                   all > 0 ? 100.0 * r.second.ms / all : 0.0);
  }

  bool on_ = false;
  int steps_begun_ = 0;
  std::mutex mu_;
  std::map<uint64_t, Pair> open_;
  uint64_t next_ = 0;
  std::map<std::string, Total> totals_;
};

}  // namespace mc::cuda
