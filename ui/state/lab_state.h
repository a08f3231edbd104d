// lab_state.h - view state of the training lab panel. `config` is the typed config `megacluster train` reads
// (train/train.h: TrainConfig, parsed once by the codec), so a scenario can set e.g. lab.config.parallel.tp = 2
// and press start by setting lab.running = true; the panel rebuilds the run when the config changes. Training and the
// sweep run as jobs (ui/lab_jobs.h); the panel draws the copies they publish (shown, sweep_shown).
#pragma once

#include "train/report.h"
#include "train/scaling.h"
#include "train/storage/corpus.h"
#include "train/train.h"

#include <nlohmann/json.hpp>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mc::ui {

struct LabCurve {
  std::string label;  // "dp 2 x tp 1 x pp 1, ZeRO-0"
  std::vector<double> losses;
};

// A checkpoint as a file: {step, name (ckpt-STEP.mcck), bytes}.
struct LabCheckpoint {
  int step = 0;
  std::string name, bytes;
};

// What a training job publishes after each slice (ui/lab_jobs.h), and what the panel draws.
struct LabProgress {
  train::TrainerReport report;       // the trainer's state
  std::string sample;                // generated text, refreshed every sample_every steps
  std::vector<double> step_seconds;  // wall time of the latest steps (tokens/s and step time on screen)
  uint64_t serial = 0;               // which publication this is
};

// What a sweep job publishes, and what the Predictable-scaling tab draws.
struct SweepProgress {
  train::ScalingResult result;
  double progress = 0;  // 0..1
  std::string label;    // the run in progress
  bool done = false;
  uint64_t serial = 0;
};

class LabTrainJob;
class LabSweepJob;

// Steps trained against the wall clock, as the class sees them: (seconds, step) pairs of the last kWindow_s
// while the run trains. In the browser a step's compute is a part of each frame (the page draws itself in
// the rest), so the clock's rate is what a class should be told, not the compute's alone.
struct WallClockRate {
  static constexpr double kWindow_s = 3;
  std::deque<std::pair<double, int>> samples;
  void add(double now_s, int step) {
    if (!samples.empty() && step < samples.back().second) samples.clear();              // a new run
    if (!samples.empty() && now_s - samples.back().first > kWindow_s) samples.clear();  // resumed after a pause
    if (samples.empty() || step != samples.back().second) samples.emplace_back(now_s, step);
    while (samples.size() > 2 && now_s - samples[1].first >= kWindow_s) samples.pop_front();
  }
  // Steps a second over the window; 0 until a second of it has passed.
  double steps_per_s() const {
    if (samples.size() < 2) return 0;
    const double dt = samples.back().first - samples.front().first;
    return dt < 1 ? 0 : double(samples.back().second - samples.front().second) / dt;
  }
};

struct LabView {
  // The default, a model small enough that a step takes a few milliseconds so training runs inside the
  // frame loop, is assets/configs/train.json (the App loads it).
  train::TrainConfig config;
  bool running = true;           // train a few steps every frame (the lab starts live when opened)
  WallClockRate wall;            // the run's steps against the clock while it trains (kept when it stops)
  double wall_tokens_per_s = 0;  // what the panel shows of it (0: not yet a second of training)
  bool step_once = false;        // one step on the next frame (the Step button; scenarios may set it)
  // Replay of the last step's messages (report.messages, in the order they were sent): the position in
  // messages (the integer part the message in flight, the fraction how far it has gone), -1 = not
  // replaying (the graph shows the step's totals). Training pauses while it replays, so the step stays.
  double replay = -1;
  bool replay_playing = false;
  static constexpr double kReplaySeconds = 12;  // one step's messages at speed 1

  // The run. While train_job runs, the job owns the trainer and the panel draws `shown`, the copy the job
  // published last; otherwise the panel owns it and `shown` is refreshed from it.
  std::shared_ptr<train::Trainer> trainer;      // rebuilt when config changes
  std::shared_ptr<LabTrainJob> train_job;       // trains it (ui/lab_jobs.h), on a worker or in frame slices
  bool stepping_once = false;                   // train_job is the Step button's single step
  LabProgress shown;                            // valid when trainer is set
  std::optional<train::TrainConfig> built_for;  // the config of trainer (built or refused)
  std::string error;                            // why the config cannot run
  // The values each layout control offers (lab_valid_values), computed for the config choices_for.
  std::optional<train::TrainConfig> choices_for;
  std::map<std::string, std::vector<int>> choices;
  std::vector<LabCurve> curves;  // earlier runs, overlaid on the current one
  int sample_every = 50;
  bool log_axis = true;
  bool export_requested = false;  // Export trained model, waiting for the job's checkpoint

  // The run kept across page reloads (Platform::persistent, the web build): saved every persist_every_s
  // while it changes and at once when it pauses, restored once when the lab first draws. A second: a
  // reload loses at most that much training (every 5 s lost 218 steps of a fast run), for a checkpoint of
  // a few hundred kilobytes written to the browser's storage once a second.
  double persist_every_s = 1;
  double persisted_at_s = -1e9;  // steady-clock seconds of the last save
  int persisted_step = -1;
  bool persisted_running = false;
  bool restore_checked = false;
  bool config_from_link = false;  // the page's address set `config`: a kept run of another config stays kept
  // The config a scenario step set, while the lab holds it: that run is the step's, not the student's. It is
  // never kept for a reload, and the student's kept run never resumes over it, so a step shows what a fresh
  // browser shows and the student's own run stays theirs (issue 41). Unset once the student changes the
  // config or leaves the scenario.
  std::optional<train::TrainConfig> scenario_config;
  std::string resume_note;  // "resumed at step 120 from the browser's storage"

  // The training text: a built-in corpus of assets/corpus/index.json (corpus_id) or a dropped file
  // (corpus_id empty). Loaded on first use, and again when the combo picks another built-in.
  std::string corpus_id = "synthetic";
  std::string corpus_name;
  std::string corpus_text;    // empty: not loaded yet
  double corpus_entropy = 0;  // nats/byte when the text's entropy is known (the synthetic language), else 0
  std::string corpus_error;   // why the corpus could not be loaded
  std::vector<train::CorpusEntry> corpora;  // the built-in list, read once

  // The scaling sweep, advanced by sweep_job while sweep_running (the user's wish: Pause clears it).
  std::shared_ptr<train::ScalingSweep> sweep;
  std::shared_ptr<LabSweepJob> sweep_job;
  SweepProgress sweep_shown;  // what the tab draws: the job's last publication, or the paused sweep's
  bool sweep_running = false;
  bool sweep_quick = true;
  // The sweep's config (train::scaling_config_from_json) when a scenario set one, else none (the "quick
  // sweep" checkbox decides); sweep_requested starts it on the next frame the lab draws or ticks.
  std::optional<train::ScalingConfig> sweep_config;
  bool sweep_requested = false;
  std::string sweep_error;  // why the sweep's config was refused
};

}  // namespace mc::ui
