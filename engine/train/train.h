// train.h - the training lab: a small GPT trained for real on the CPU, with data, tensor and pipeline
// parallelism and ZeRO executed across virtual workers that talk only through counted collectives.
//
// Conventions (llm.c style): B = sequences in a batch, T = context (time), C = width (channels),
// H = heads, V = vocabulary (256 bytes), L = layers. Tensors are row-major float32.
//
//   mc::train::TrainConfig cfg;                   // defaults: the small lab model on the built-in corpus
//   cfg.parallel = {.dp = 2, .tp = 2, .pp = 1};
//   mc::train::Trainer t(cfg, mc::train::default_corpus());
//   while (t.step_index() < cfg.steps) t.step();
//   nlohmann::json out = mc::train::run_json({{"dp", 2}, {"steps", 20}});  // what `train --json` prints
//
// Workers are coordinates (dp, pp, tp) in a grid; worker id = (d * pp + p) * tp + t (tensor parallel
// ranks are neighbours, as Megatron-LM places them inside one server).
#pragma once

#include "core/pipeline_schedule.h"
#include "device/compute.h"
#include "train/parallel/comm.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mc {
class JsonDoc;
class JsonCursor;
}  // namespace mc

namespace mc::train {

// The ranges of a config's integer keys: parse_config refuses values outside them, and the lab's controls
// offer values inside them (those the layout can run).
struct IntRange {
  int lo, hi;
};
namespace limits {
inline constexpr IntRange degree{1, 64};  // dp, tp, pp: 64 workers each, a lab's scale
inline constexpr IntRange zero{0, 3};
inline constexpr IntRange micro_batches{0, 4096};  // 0: pp (or 1 without a pipeline)
inline constexpr IntRange batch{1, 65536};
inline constexpr IntRange steps{0, 10000000};
}  // namespace limits

struct ModelConfig {
  int vocab = 256;   // byte tokenizer
  int context = 64;  // T
  int layers = 2;    // L
  int width = 64;    // C
  int heads = 4;     // H
  friend bool operator==(const ModelConfig&, const ModelConfig&) = default;
};

// AdamW (Loshchilov & Hutter 2019) with linear warm-up then cosine decay to min_lr_fraction * lr
// (the GPT-3 recipe, Brown et al. 2020, Sec. B), and clipping of the global gradient norm.
struct OptimConfig {
  double lr = 3e-3;
  double min_lr_fraction = 0.1;
  int warmup_steps = 10;
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double weight_decay = 0.1;  // on matrices only (not LayerNorm gains, biases)
  double clip_norm = 1.0;     // <= 0: no clipping
  friend bool operator==(const OptimConfig&, const OptimConfig&) = default;
};

struct ParallelConfig {
  int dp = 1, tp = 1, pp = 1;
  int zero = 0;                                       // ZeRO stage 0-3 over the dp ranks (Rajbhandari et al. 2020)
  int micro_batches = 0;                              // per dp rank per step; 0 = pp (or 1 without pipeline)
  PipeSchedule schedule = PipeSchedule::one_f_one_b;  // gpipe or 1f1b (the lab runs no interleaving)
  int workers() const { return dp * tp * pp; }
  friend bool operator==(const ParallelConfig&, const ParallelConfig&) = default;
};

struct TrainConfig {
  ModelConfig model;
  OptimConfig optim;
  ParallelConfig parallel;
  int batch = 8;   // global batch in sequences; the same whatever the layout
  int steps = 50;  // total optimizer steps (also the length of the cosine schedule)
  uint64_t seed = 1;
  double memory_limit_bytes = 2.0 * (1ull << 30);  // per worker; larger runs are refused
  // Where the workers' state lives and the kernels run: "auto" = the registered device of the highest
  // preference that answers (a CUDA GPU), else the CPU reference; or a registered kind's name
  // (device/registry.h; a kind that cannot open is refused with the reason). Not part of to_json(): it
  // changes where the arithmetic runs, not the run (a checkpoint resumes on any).
  std::string device = "auto";
  // The matrix products' arithmetic (device/compute.h: fp32, tf32 or bf16 inputs, fp32 accumulation and
  // master weights). Part of to_json(); a checkpoint resumes in any precision (its weights are fp32).
  device::Precision precision = device::Precision::fp32;
  friend bool operator==(const TrainConfig&, const TrainConfig&) = default;
};

// Reads a config object (keys as in TrainConfig: "model": {...}, "optim": {...}, "dp", "tp", "pp",
// "zero", "micro_batches", "schedule": "gpipe"|"1f1b", "batch", "steps", "seed", "memory_limit_bytes").
// Throws LoadError naming the key for a bad value. `file` is used in messages.
TrainConfig parse_config(const nlohmann::json& j, const std::string& file = "config");
TrainConfig parse_config(const JsonDoc& doc);    // errors carry the file's line and column
TrainConfig parse_config(const JsonCursor& at);  // a config inside a larger document (a checkpoint header)
// Bytes one worker needs (weights, gradients, optimizer, activations of the micro-batches in flight).
double estimate_worker_bytes(const TrainConfig& c);
nlohmann::json to_json(const TrainConfig& c);
// Refuses layouts that cannot run (divisibility, ZeRO-2/3 with pipelines) and runs over the memory limit;
// the message names the rule and how to fix it. Throws std::invalid_argument.
// workers_in_this_process: how many of the layout's workers this process holds (0 = all of them, the
// in-process lab; 1 = one MPI rank), for the check against the machine's memory.
void validate(const TrainConfig& c, int workers_in_this_process = 0);
// Physical memory of this machine in bytes (0 when unknown); validate() refuses runs whose workers in
// this process together would need more than 90% of it.
double machine_memory_bytes();

// The built-in corpus (see corpus.h): a synthetic language whose entropy per byte is known.
std::string default_corpus();

// Memory one worker holds, measured from its buffers (bytes).
struct WorkerMemory {
  double params_bytes = 0, grads_bytes = 0, optimizer_bytes = 0, activations_peak_bytes = 0;
  // ZeRO-2/3: the most bytes of whole units (ZeRO-3's gathered parameters, the gradients awaiting their
  // reduce-scatter) held at once during the last step, on top of the persistent shards.
  double transient_peak_bytes = 0;
  double persistent_bytes() const { return params_bytes + grads_bytes + optimizer_bytes; }
};

struct StepResult {
  int step = 0;     // 1-based index of the step just taken
  double loss = 0;  // mean cross-entropy (nats per byte) over the global batch
  double lr = 0;
  double grad_norm = 0;  // before clipping
  double seconds = 0;    // wall time of the step
};

// One executed pipeline op, for the schedule view: stage, micro-batch, forward or backward, clock tick.
struct PipelineOp {
  int stage = 0, micro_batch = 0, tick = 0;
  bool backward = false;
};

class Trainer {
 public:
  // With a transport (engine/mpi), this process runs worker transport->rank() of the layout and talks to
  // the others through it (dp x tp x pp must equal transport->size()); every process makes the same calls
  // in the same order (step, checkpoints, samples, full_parameters), as on one machine.
  Trainer(TrainConfig cfg, std::string corpus_text, Transport* transport = nullptr);
  ~Trainer();
  Trainer(Trainer&&) noexcept;
  Trainer& operator=(Trainer&&) noexcept;

  StepResult step();  // one optimizer step of the global batch on every worker
  int step_index() const;
  const TrainConfig& config() const;
  const std::vector<double>& losses() const;

  // The whole model as one worker would hold it (gathered from the shards; reads, does not communicate).
  std::vector<float> full_parameters() const;
  int64_t parameter_count() const;  // full model
  double flops_per_token() const;   // 6N + attention (Kaplan et al. 2020, Table 1)
  std::string sample(int n_bytes, double temperature, uint64_t seed, const std::string& prompt = "") const;
  double eval_loss(int batches = 4) const;  // on fixed held-out windows

  const Comm& comm() const;
  // Runs the ring collectives' arithmetic on `b` from now on (nullptr: the engine's own rings). The
  // trainer picks NCCL itself on a machine with 2+ GPUs; this is for other transports and for tests.
  void use_collective_backend(std::unique_ptr<CollectiveBackend> b);
  // The kernels in use: "cpu" or "cuda", and why (e.g. "cuda: NVIDIA H200" or why the CPU is used).
  const char* backend_name() const;
  const std::string& backend_note() const;
  // What crossed between the host and the device since the trainer was built or reset_transfers(): a
  // step sends only the token ids in and brings only the loss and norm partials out.
  const device::Transfers& transfers() const;
  void reset_transfers();
  std::vector<WorkerMemory> memory() const;
  std::vector<double> predicted_bytes_per_worker() const;     // per step, from engine/perf/comm_volume.h
  std::vector<double> predicted_messages_per_worker() const;  // per step
  const std::vector<PipelineOp>& last_schedule() const;       // ops of dp replica 0 in the last step

  // Checkpoints (checkpoint.cpp): versioned, checksummed, written atomically. save returns the path.
  std::string save_checkpoint(const std::string& dir) const;
  void load_checkpoint(const std::string& path);  // throws std::runtime_error naming the file and fault
  // Across processes: the last step's counters, memory and predictions of every worker, gathered from
  // their processes (what run_json reports; in one process, what comm() and memory() say).
  nlohmann::json gathered_worker_stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Thrown by Trainer::load_checkpoint when a sound checkpoint belongs to another run configuration (as
// opposed to a truncated or corrupt file, std::runtime_error): resuming must not skip past it, since the
// resumed run would then write its own checkpoints among the other run's.
struct CheckpointMismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Newest checkpoint file in dir ("" if none). Files are named ckpt-NNNNNNNN.mcck (the step).
std::string latest_checkpoint(const std::string& dir);
// Every checkpoint file in dir, newest first (empty if none or no such directory).
std::vector<std::string> list_checkpoints(const std::string& dir);

// What `megacluster train --json` prints for this config (same keys as TrainConfig plus "corpus": "path"
// or "default", "checkpoint", "checkpoint_every", "resume", "bench"): to_json(run(parse_run_options(config)))
// (train/run.h, where the run's options and result are plain data). Throws like parse_config/validate.
// With "resume" it loads the newest checkpoint that is sound; newer truncated or corrupt files are left on
// disk (a later save at the same step replaces them) and listed in "skipped_checkpoints" (path, error), so
// nothing is skipped silently. A sound checkpoint of another configuration, or one already past "steps",
// is refused with the fix (CheckpointMismatch / std::invalid_argument).
nlohmann::json run_json(const nlohmann::json& config);
// The same, calling `progress` after every step (the CLI's progress bar). With "sample_every": K > 0 it
// also generates "sample_bytes" (default 80) of text every K steps, passes each to `on_sample` and lists
// them in "samples" ([{step, text}]): what the model writes as it learns.
nlohmann::json run_json(const nlohmann::json& config, const std::function<void(const StepResult&)>& progress,
                        const std::function<void(int step, const std::string& text)>& on_sample = nullptr,
                        Transport* transport = nullptr);  // across processes: see Trainer's constructor
// run_json's "parameters", "losses", "memory_per_worker", ... are to_json(report(trainer)) (train/report.h),
// the same report the training lab draws, so both tell the same numbers.

// The corpus at `path` ("default" or "": the built-in synthetic language). Throws naming the file.
std::string load_corpus(const std::string& path);

}  // namespace mc::train
