// jobs.h - the one way the app runs long work (a simulation, a whole run, a scenario jump): a Job that
// advances in slices, and a JobRunner that either hands it to a worker thread (when the Platform has
// one: the native shell) or advances it a time budget per frame (the browser build, which has no threads,
// and the headless tests). Panels only start jobs, draw job_progress(), and read the result once done();
// they never know which way it ran.
//
//   auto job = std::make_shared<MyJob>(...);      // MyJob : Job, overrides step()
//   s.jobs.start(job);                            // worker thread, or sliced in JobRunner::pump
//   if (job->done()) use(job->result);            // each frame; job->cancel() stops it between slices
//
// A job's state belongs to the runner until done() is true (then the UI thread owns it again): a job
// works on its own copy of what it changes (a scenario player) and keeps its result in its own members.
// It may read what the app owns and never changes (the catalog): the runner, destroyed before the
// rest of ExplorerState, cancels its worker jobs and waits for them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace mc::ui {

class Platform;

class Job {
 public:
  virtual ~Job() = default;
  // Advances the work by about `budget_s` of host time; returns true when there is nothing left to do
  // (finished, failed: set error_; or cancelled: step() sees cancelled() and returns true).
  virtual bool step(double budget_s) = 0;

  double progress() const { return progress_.load(); }  // 0..1, for the progress bar
  bool done() const { return done_.load(); }
  void cancel() { cancel_ = true; }
  bool cancelled() const { return cancel_.load(); }
  const std::string& error() const { return error_; }  // read after done(); "cancelled" when stopped

 protected:
  void set_progress(double f) { progress_ = f; }
  const std::atomic<bool>* cancel_flag() const { return &cancel_; }  // for engine calls that poll one
  std::string error_;

 private:
  friend class JobRunner;
  std::atomic<double> progress_{0};
  std::atomic<bool> cancel_{false}, done_{false};
};

// What a running job shows the UI thread: the newest copy of its progress and a serial counting the copies,
// under one mutex. The job publishes after a slice (its own working copy stays its own); the panel takes
// the copy only when it is newer than the one it holds, so it never reads what the job is changing.
//
//   Published<Ranking> out_;                      // a member of the job
//   out_.publish(work_);                          // in step(), after a slice
//   job->out().latest(shown, shown_serial);       // each frame on the UI thread
template <class T>
class Published {
 public:
  explicit Published(T first = T{}, uint64_t serial = 0) : value_(std::move(first)), serial_(serial) {}
  void publish(T value) {
    std::lock_guard<std::mutex> lock(mutex_);
    value_ = std::move(value);
    ++serial_;
  }
  // Copies the newest value into `out` when its serial is past `seen`, and sets `seen` to it; false when
  // there is nothing newer.
  bool latest(T& out, uint64_t& seen) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (serial_ <= seen) return false;
    out = value_;
    seen = serial_;
    return true;
  }

 private:
  mutable std::mutex mutex_;
  T value_;
  uint64_t serial_;
};

class JobRunner {
 public:
  JobRunner() = default;
  ~JobRunner();  // cancels the worker jobs still running and waits for them to stop
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;
  void set_platform(Platform* platform) { platform_ = platform; }
  // Runs `job` on a worker thread when the platform offers one, else in slices from pump().
  void start(std::shared_ptr<Job> job);
  // Advances the sliced jobs by about `budget_s` in all (the app calls this once per frame: kSliceS, or what
  // the panel on screen asks for, Panel::slice_s).
  static constexpr double kSliceS = 0.008;
  void pump(double budget_s = kSliceS);
  // Whether any job is still running (sliced or on a worker): the page is working, not idle.
  bool running() const;
  // Runs `job` to the end here and now (the CLI-like paths and tests that must not wait on frames).
  static void run_now(Job& job);

 private:
  static void finish(Job& job);
  Platform* platform_ = nullptr;
  std::vector<std::shared_ptr<Job>> sliced_, on_workers_;
};

}  // namespace mc::ui
