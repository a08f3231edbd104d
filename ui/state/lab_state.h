// lab_state.h - view state of the training lab panel. `config` is the JSON `megacluster train` reads
// (train/train.h: parse_config), so a scenario can set e.g. lab.config["tp"] = 2 and press start by
// setting lab.running = true; the panel rebuilds the run when the config changes.
#pragma once

#include "train/storage/corpus.h"
#include "train/scaling.h"
#include "train/train.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace mc::ui {

struct LabCurve {
  std::string label;  // "dp 2 x tp 1 x pp 1, ZeRO-0"
  std::vector<double> losses;
};

struct LabView {
  // The default, a model small enough that a step takes a few milliseconds so training runs inside the
  // frame loop, is assets/configs/train.json (the App loads it).
  nlohmann::json config = nlohmann::json::object();
  bool running = true;         // train a few steps every frame (the lab starts live when opened)
  bool step_once = false;      // one step on the next frame (the Step button; scenarios may set it)
  double frame_budget_ms = 6;  // training time per frame (at least one step when running)

  std::shared_ptr<train::Trainer> trainer;  // rebuilt when config changes
  std::string built_for;                    // config.dump() of trainer
  std::string error;                        // why the config cannot run
  std::vector<LabCurve> curves;             // earlier runs, overlaid on the current one
  std::string sample;                       // generated text, refreshed every sample_every steps
  int sample_every = 50;
  bool log_axis = true;
  std::vector<double> step_seconds;  // wall time of the latest steps (tokens/s and step time on screen)

  // The run kept across page reloads (Platform::persistent, the web build): saved every persist_every_s
  // while it changes, restored once when the lab first draws.
  double persist_every_s = 5;
  double persisted_at_s = -1e9;  // steady-clock seconds of the last save
  int persisted_step = -1;
  bool persisted_running = false;
  bool restore_checked = false;
  std::string resume_note;       // "resumed at step 120 from the browser's storage"

  // The training text: a built-in corpus of assets/corpus/index.json (corpus_id) or a dropped file
  // (corpus_id empty). Loaded on first use, and again when the combo picks another built-in.
  std::string corpus_id = "synthetic";
  std::string corpus_name;
  std::string corpus_text;           // empty: not loaded yet
  double corpus_entropy = 0;         // nats/byte when the text's entropy is known (the synthetic language), else 0
  std::string corpus_error;          // why the corpus could not be loaded
  std::vector<train::CorpusEntry> corpora;  // the built-in list, read once

  // The scaling sweep, advanced in slices per frame.
  std::shared_ptr<train::ScalingSweep> sweep;
  bool sweep_running = false;
  bool sweep_quick = true;
  // The sweep's config (train::scaling_config_from_json) when a scenario set one, else empty (the "quick
  // sweep" checkbox decides); sweep_requested starts it on the next frame the lab draws or ticks.
  nlohmann::json sweep_config = nlohmann::json::object();
  bool sweep_requested = false;
  std::string sweep_error;  // why the sweep's config was refused
};

}  // namespace mc::ui
