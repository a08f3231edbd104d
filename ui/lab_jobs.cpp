// lab_jobs.cpp - the training lab's jobs (lab_jobs.h).
#include "ui/lab_jobs.h"

#include "core/tar.h"
#include "train/report.h"

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mc::ui {

LabCheckpoint lab_checkpoint(const train::Trainer& t) {
  namespace fs = std::filesystem;
  // A directory per call: an export on the UI thread and a job's copy for the page never share one.
  static std::atomic<int> calls{0};
  const fs::path dir = fs::temp_directory_path() / ("megacluster-lab-export-" + std::to_string(calls++));
  fs::remove_all(dir);
  const std::string path = t.save_checkpoint(dir.string());
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  in.close();
  fs::remove_all(dir);
  return {t.step_index(), fs::path(path).filename().string(), bytes.str()};
}

std::string lab_model_archive(const nlohmann::json& config, const LabCheckpoint& checkpoint) {
  return tar_archive({{"lab-model/lab-config.json", config.dump(2) + "\n"},
                      {"lab-model/checkpoint/" + checkpoint.name, checkpoint.bytes}},
                     int64_t(std::time(nullptr)));
}

std::vector<int> lab_valid_values(const train::TrainConfig& config, int& (*field)(train::TrainConfig&), int lo,
                                  int hi) {
  std::vector<int> out;
  for (int v = lo; v <= hi; ++v) {
    train::TrainConfig c = config;
    field(c) = v;
    try {
      train::validate(c);
      out.push_back(v);
    } catch (const std::exception&) {
      // refused: not offered
    }
  }
  return out;
}

LabTrainJob::LabTrainJob(std::shared_ptr<train::Trainer> trainer, int until_step, int sample_every, LabProgress start)
    : trainer_(std::move(trainer)),
      until_step_(until_step),
      sample_every_(sample_every),
      work_(std::move(start)),
      published_({}, work_.serial) {  // nothing new until the first slice publishes
  work_.report = train::report(*trainer_);
}

void LabTrainJob::publish() {
  work_.report = train::report(*trainer_);
  published_.publish(work_);
}

// The progress's own serial is the publication's (the panel keeps its last one in LabProgress::serial).
bool LabTrainJob::latest(LabProgress& out) const {
  uint64_t seen = out.serial;
  if (!published_.latest(out, seen)) return false;
  out.serial = seen;
  return true;
}

std::optional<LabCheckpoint> LabTrainJob::take_checkpoint() {
  std::lock_guard<std::mutex> lock(checkpoint_mutex_);
  std::optional<LabCheckpoint> out = std::move(checkpoint_);
  checkpoint_.reset();
  return out;
}

bool LabTrainJob::step(double budget_s) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  if (want_checkpoint_.exchange(false)) {
    LabCheckpoint ck = lab_checkpoint(*trainer_);  // a failure ends the job with its message (JobRunner)
    std::lock_guard<std::mutex> lock(checkpoint_mutex_);
    checkpoint_ = std::move(ck);
  }
  const int total = trainer_->config().steps;
  bool stepped = false;
  // At least one step per slice, then as many as fit in the budget.
  while (!cancelled() && trainer_->step_index() < std::min(until_step_, total) &&
         (!stepped || std::chrono::duration<double>(clock::now() - t0).count() < budget_s)) {
    const train::StepResult r = trainer_->step();
    stepped = true;
    work_.step_seconds.push_back(r.seconds);
    if (work_.step_seconds.size() > 32) work_.step_seconds.erase(work_.step_seconds.begin());
    const int k = trainer_->step_index();
    if (k % sample_every_ == 0 || k == total) work_.sample = trainer_->sample(64, 0.8, uint64_t(k));
  }
  if (stepped) publish();
  set_progress(double(trainer_->step_index()) / std::max(1, std::min(until_step_, total)));
  return cancelled() || trainer_->step_index() >= std::min(until_step_, total);
}

SweepProgress sweep_progress(const train::ScalingSweep& sweep, uint64_t serial) {
  return {sweep.result(), sweep.progress(), sweep.current_label(), sweep.done(), serial};
}

LabSweepJob::LabSweepJob(std::shared_ptr<train::ScalingSweep> sweep, uint64_t serial)
    : sweep_(std::move(sweep)), published_(sweep_progress(*sweep_, serial), serial) {}

bool LabSweepJob::step(double budget_s) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  bool advanced = false;
  while (!cancelled() && !sweep_->done() &&
         (!advanced || std::chrono::duration<double>(clock::now() - t0).count() < budget_s)) {
    sweep_->advance(1);
    advanced = true;
  }
  if (advanced) published_.publish(sweep_progress(*sweep_, 0));
  set_progress(sweep_->progress());
  return cancelled() || sweep_->done();
}

bool LabSweepJob::latest(SweepProgress& out) const {
  uint64_t seen = out.serial;
  if (!published_.latest(out, seen)) return false;
  out.serial = seen;
  return true;
}

}  // namespace mc::ui
