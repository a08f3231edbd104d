// lab_jobs.h - the training lab's long work on the job runner (ui/jobs.h): a run trained step by step and
// the predictable-scaling sweep. Each job owns its trainer (or sweep) while it runs and publishes a copy
// of what the panel draws after every slice, so the panel never reads an object another thread changes:
// natively the steps run on a worker thread at full speed, on the web in slices of each frame.
#pragma once

#include "train/scaling.h"
#include "train/train.h"
#include "ui/jobs.h"
#include "ui/state/lab_state.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mc::ui {

// The trainer as a checkpoint file (the format and name, ckpt-STEP.mcck, that `megacluster train
// --checkpoint DIR --resume` looks for), written through a scratch directory of its own.
LabCheckpoint lab_checkpoint(const train::Trainer& t);

// The trained model as one download: a tar archive (core/tar.h) of lab-model/lab-config.json (`config`, as
// `megacluster train` reads it) and lab-model/checkpoint/<checkpoint>, which
// `megacluster train lab-model/lab-config.json --checkpoint lab-model/checkpoint --resume` continues.
std::string lab_model_archive(const nlohmann::json& config, const LabCheckpoint& checkpoint);

// The values of one field of `config` (dp, tp, pp, micro_batches, batch: `field` says where it is) in [lo, hi]
// with which the lab can run the rest of the config as it is (train::validate: divisibility, memory): the
// layout controls offer only these, so no choice lands on a layout the lab refuses.
std::vector<int> lab_valid_values(const train::TrainConfig& config, int& (*field)(train::TrainConfig&), int lo, int hi);

// Trains up to step `until_step` (the run's end, or one more step for the Step button), or until cancelled
// (Pause, Reset, another layout), between two steps.
class LabTrainJob : public Job {
 public:
  // `start` carries the sample and step times the panel showed, which the job extends.
  LabTrainJob(std::shared_ptr<train::Trainer> trainer, int until_step, int sample_every, LabProgress start);
  bool step(double budget_s) override;
  // Copies the newest progress into `out` when it is newer than out.serial; false otherwise.
  bool latest(LabProgress& out) const;
  // Asks for a checkpoint (an export, or the copy kept for a page reload); the job takes it between two
  // steps and hands it over through take_checkpoint(). Once the job is done, the panel takes its own.
  void request_checkpoint() { want_checkpoint_ = true; }
  std::optional<LabCheckpoint> take_checkpoint();

 private:
  void publish();
  std::shared_ptr<train::Trainer> trainer_;
  int until_step_, sample_every_;
  LabProgress work_;  // the job's own copy
  Published<LabProgress> published_;
  std::atomic<bool> want_checkpoint_{false};
  std::mutex checkpoint_mutex_;
  std::optional<LabCheckpoint> checkpoint_;
};

// Advances a scaling sweep (train::ScalingSweep) until it is done or cancelled.
class LabSweepJob : public Job {
 public:
  // Publishes from serial + 1 on (the panel's last seen serial).
  LabSweepJob(std::shared_ptr<train::ScalingSweep> sweep, uint64_t serial);
  bool step(double budget_s) override;
  bool latest(SweepProgress& out) const;  // as LabTrainJob::latest

 private:
  std::shared_ptr<train::ScalingSweep> sweep_;
  Published<SweepProgress> published_;
};

// What the panel shows of a sweep that no job is running (a new one, or one paused between runs).
SweepProgress sweep_progress(const train::ScalingSweep& sweep, uint64_t serial);

}  // namespace mc::ui
