// jobs.cpp - the job runner (jobs.h): a worker thread through the Platform, or slices per frame.
#include "ui/jobs.h"

#include "ui/platform.h"

#include <chrono>
#include <exception>
#include <thread>

namespace mc::ui {

namespace {

// One slice, with a failure recorded as the job's error rather than thrown into the frame or the thread.
bool guarded_step(Job& job, double budget_s, std::string& error) {
  try {
    return job.step(budget_s);
  } catch (const std::exception& e) {
    error = e.what();
    return true;
  }
}

// A worker thread's slices: long enough to cost little in bookkeeping, short enough that Cancel is
// noticed within a fraction of a second.
constexpr double kWorkerSlice_s = 0.05;

}  // namespace

void JobRunner::finish(Job& job) {
  if (job.error_.empty() && job.cancelled()) job.error_ = "cancelled";
  job.progress_ = 1.0;
  job.done_ = true;  // last: the UI thread reads the job's members once it sees this
}

void JobRunner::run_now(Job& job) {
  while (!guarded_step(job, kWorkerSlice_s, job.error_)) {
  }
  finish(job);
}

void JobRunner::start(std::shared_ptr<Job> job) {
  // Forget the worker jobs that have finished (their results are read through the caller's pointer).
  std::erase_if(on_workers_, [](const std::shared_ptr<Job>& j) { return j->done(); });
  if (platform_ && platform_->run_on_worker([job] { run_now(*job); })) {
    on_workers_.push_back(std::move(job));
    return;
  }
  sliced_.push_back(std::move(job));
}

JobRunner::~JobRunner() {
  for (auto& j : on_workers_) j->cancel();
  for (auto& j : on_workers_)
    while (!j->done()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

bool JobRunner::running() const {
  if (!sliced_.empty()) return true;
  for (const auto& j : on_workers_)
    if (!j->done()) return true;
  return false;
}

void JobRunner::pump(double budget_s) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  for (size_t i = 0; i < sliced_.size();) {
    Job& job = *sliced_[i];
    // Every job gets a slice each frame, however little of the budget is left, so none starves.
    const double left = budget_s - std::chrono::duration<double>(clock::now() - t0).count();
    if (guarded_step(job, std::max(left, budget_s * 0.1), job.error_)) {
      finish(job);
      sliced_.erase(sliced_.begin() + long(i));
    } else {
      ++i;
    }
  }
}

}  // namespace mc::ui
