// run.h - a whole training run as plain data. RunOptions is what a run is asked to do: the TrainConfig
// plus what surrounds the model (corpus, checkpoints, samples, resume, bench), with one codec to and from
// JSON, parsed once. RunResult is what it did: `megacluster train` prints from it, `train --json` is
// to_json(RunResult), and the scenario player's "train" action stores the same JSON.
//
//   RunOptions o = parse_run_options(doc.root());   // a config file: located errors
//   o.train.parallel.dp = 2;                        // overrides are fields, not JSON keys
//   validate(o.train);
//   RunResult r = run(o);                           // throws like validate() and the checkpoint loader
//
// Sections: RunOptions and its codec; RunResult and its JSON; run().
#pragma once

#include "train/train.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mc {
class JsonCursor;
}

namespace mc::train {

// ---- RunOptions ----
struct RunOptions {
  TrainConfig train;
  std::string corpus = "default";  // an id of assets/corpus/index.json, a text file's path, or "default"
  std::string checkpoint;          // directory the run saves to and resumes from; "" = none
  int checkpoint_every = 0;        // save every K steps too (0: only at the end)
  bool resume = false;             // continue from the newest sound checkpoint in `checkpoint`
  bool bench = false;              // also measure the SGEMM rate of the model's largest product
  int sample_bytes = 0;            // bytes of text generated after the run (0: none)
  int sample_every = 0;            // generate text every K steps as well (0: never)
  friend bool operator==(const RunOptions&, const RunOptions&) = default;
};

// The keys of a config over `base`: a key left out keeps base's value, as a preset's keys are overridden
// key by key. Each key is checked where it is read (train/config.cpp): a wrong key, type or range is an
// error naming the file, line, column and key. Not validate()d: a layout may still not fit the batch.
RunOptions parse_run_options(const JsonCursor& at, const RunOptions& base);
RunOptions parse_run_options(const JsonCursor& at);  // over the defaults
// The same for a config built in memory; errors name `file`. (Overloads, not a default argument: a
// temporary RunOptions{} at every call made GCC 12 warn -Wmaybe-uninitialized about its strings.)
RunOptions parse_run_options(const nlohmann::json& j, const std::string& file, const RunOptions& base);
RunOptions parse_run_options(const nlohmann::json& j, const std::string& file = "config");
// Every key, so that parse_run_options(to_json(o)) == o ("device" included; a run key at its default too).
nlohmann::json to_json(const RunOptions& o);

// The run a page keeps across a reload (the browser's storage, beside its checkpoint): the run's config as
// `megacluster train` reads it and whether it was training. One codec, so the record the page writes is
// the record it reads back; a broken record is a LoadError naming `what`, line and key.
struct KeptRun {
  RunOptions options;
  bool running = false;
};
KeptRun parse_kept_run(const std::string& text, const std::string& what);
std::string kept_run_text(const nlohmann::json& config, bool running);

// ---- RunResult ----
// One directed link's data traffic in the last step, in total and by class ("dp", "tp", "pp", ...).
struct RunLink {
  int src = 0, dst = 0;
  double bytes = 0, messages = 0;
  std::vector<std::pair<std::string, std::pair<double, double>>> by_traffic;  // class -> (bytes, messages)
};

// One worker in the last step, counted by the process that holds it (across processes, gathered).
struct RunWorker {
  double bytes_sent = 0, messages_sent = 0;  // data classes (control excluded)
  double control_bytes = 0;                  // the scalars the workers agree on (loss, norm)
  double wire_bytes = 0;                     // what its MPI transport carried (0 in one process)
  WorkerMemory memory;
  std::vector<RunLink> links;  // the links it sends on
};

struct RunSample {
  int step = 0;
  std::string text;  // valid UTF-8 (bytes that are not are written '?')
};

// The achieved rate against the device's sourced peak (cli adds it on a device whose probe names catalog
// hardware): either mfu/peak_flops/peak_of, or a note saying why there is none.
struct RunMfu {
  double mfu = 0, peak_flops = 0;
  std::string peak_of;  // "gpus/<id>/<field> x <GPUs>"
  std::string note;     // set instead when the peak is not known
};

struct RunResult {
  RunOptions options;
  // Resuming: the checkpoint continued from, and newer ones that could not be read (path, error).
  std::string resumed_from;
  std::vector<std::pair<std::string, std::string>> skipped_checkpoints;
  double corpus_entropy_nats_per_byte = 0;  // the lowest loss possible on the corpus; 0 = unknown
  std::string device, device_note;          // the device kind that ran it, and what it is or why it was chosen
  double host_to_device_bytes_last_step = 0, device_to_host_bytes_last_step = 0;
  int64_t parameters = 0;
  double flops_per_token = 0;
  int steps_run = 0;           // in this call (after a resume, the steps past the checkpoint)
  int step = 0;                // the optimizer steps taken in all
  std::vector<double> losses;  // nats per byte, one per step since step 1
  double wall_s = 0;
  std::vector<double> step_seconds;
  double tokens_per_s = 0;              // the steps after the first (the first pays for warm-up)
  double tokens_per_s_median_step = 0;  // from the median of the same steps
  double gflops = 0;
  std::string sgemm_path;
  std::vector<RunWorker> workers;
  std::vector<double> predicted_bytes_per_worker, predicted_messages_per_worker;
  int mpi_ranks = 0;  // > 0: the run spanned this many MPI processes
  std::vector<std::string> checkpoints;
  std::vector<RunSample> samples;  // every sample_every steps
  std::string sample;              // sample_bytes after the run
  // bench: the SGEMM of the model's largest product, (M, N, K) and its rate.
  std::optional<std::array<int, 3>> sgemm_shape;
  int threads = 0;
  double sgemm_gflops = 0;
  std::optional<RunMfu> mfu;
  // Across MPI ranks: which collectives ran, and NCCL's bootstrap note (the CLI fills both).
  std::string mpi_collectives, nccl;
};

// What `megacluster train --json` prints: every field under its historical key (README's table).
nlohmann::json to_json(const RunResult& r);

// ---- run ----
// Trains `o` to o.train.steps (see run_json in train.h for resume's rules), calling `progress` after every
// step and `on_sample` with each periodic sample. Throws like validate() and the checkpoint loader.
RunResult run(const RunOptions& o, const std::function<void(const StepResult&)>& progress = nullptr,
              const std::function<void(int step, const std::string& text)>& on_sample = nullptr,
              Transport* transport = nullptr);

}  // namespace mc::train
