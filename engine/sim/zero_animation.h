// zero_animation.h - one training step of ZeRO (Rajbhandari et al. 2020) as the iteration simulator runs
// it, layer by layer: what each GPU holds, what it gathers before a layer computes and what it scatters
// after, and its memory rising and falling over the step. The "ZeRO, layer by layer" view draws this.
//
// The timeline is the simulator's own (iteration.h): GPU 0's compute spans and its stage's data-parallel
// collectives (IterationResult::dp_events) for a pure data-parallel layout of `gpus` ranks on the cluster
// the config names. Memory is the analytic model's (perf::memory_per_gpu: the sharded model states of
// Sec. 5.1 eqs. for stages 1-3, and the activations of the layers whose backward is still to come) plus,
// for ZeRO-3, the full weights of each unit from the start of its gather to the end of the compute that
// used them (Sec. 5.3: "the parameters are discarded after use").
//
//   ZeroAnimationSpec s;  s.config = {{"model", {{"preset", "gpt3-1.3b"}}}, {"cluster", ...}};  s.stage = 3;
//   ZeroAnimation a = animate_zero(catalog, s);  // throws LoadError / std::invalid_argument on bad input
//   ZeroFrame f = frame_at(a, 0.4 * a.total_s);
#pragma once

#include "catalog/catalog.h"
#include "sim/animation_kind.h"
#include "sim/animation_settings.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mc::sim {

struct ZeroAnimationSpec {
  // The estimate config (model, cluster, software, training) the step runs; its "parallel" section is
  // replaced: tp = pp = 1, dp = gpus, micro-batch 1, global batch gpus * micro_batches, ZeRO `stage`,
  // recomputation `recompute` ("full": only each layer's input is kept until its backward, as the runs of
  // the time did; "none": every activation is kept, and they dwarf the model states).
  nlohmann::json config;
  std::string recompute = "full";
  int stage = 3;  // 0 (plain data parallelism, for comparison) .. 3
  int gpus = 8;   // data-parallel ranks, 2..64
  int micro_batches = 1;
};

struct ZeroEvent {
  enum Kind : uint8_t { forward, backward, gather, reduce_scatter, gradient_bucket, params_all_gather, optimizer } kind;
  int layer = -1;  // layer (forward/backward/gather/reduce-scatter); -1: the parameters outside the layers
  int micro_batch = -1;
  bool backward_pass = false;  // a gather or reduce-scatter the backward pass issued
  double bytes = 0;            // per GPU, the collective's whole size; 0 for compute
  double start_s = 0, end_s = 0;
};

struct ZeroAnimation {
  ZeroAnimationSpec spec;
  int layers = 0;
  double total_s = 0;             // the step, seconds: the iteration the simulator ran
  std::vector<ZeroEvent> events;  // by start time: GPU 0's compute and its collectives
  // Per GPU at rest (perf::memory_per_gpu), bytes: the model states this stage leaves on each GPU.
  double weights_bytes = 0, gradients_bytes = 0, optimizer_bytes = 0;
  double states_bytes = 0;                 // their sum: the memory before the step starts and after it ends
  double hbm_bytes = 0;                    // the GPU's memory
  double layer_weights_bytes = 0;          // one layer's full fp16 weights (what a ZeRO-3 gather brings)
  double outside_weights_bytes = 0;        // embeddings and final norm, full
  double activations_per_layer_bytes = 0;  // one layer's saved activations for one micro-batch
  // Memory per GPU over the step: piecewise constant, memory_bytes[i] from memory_t_s[i] to the next.
  std::vector<double> memory_t_s, memory_bytes;
  double peak_bytes = 0;
  double bytes_moved_per_gpu = 0;  // sum of the collectives' bytes over the step
  double data_parallel_bytes = 0;  // what plain data parallelism moves for the same model: one all-reduce
                                   // of the gradients, counted as ZeRO Sec. 7.2.2 does (2 Psi)
  std::string software;            // the stack that ran it (software.json id)
};

ZeroAnimation animate_zero(const Catalog& cat, const ZeroAnimationSpec& spec);

// What the view draws at time t.
struct ZeroFrame {
  double t_s = 0;
  int computing_layer = -1;  // -1: none
  bool computing_backward = false;
  std::vector<int> gathered;      // layers whose full weights GPU 0 holds now (ZeRO-3), -1 the rest
  std::vector<int> gathering;     // layers being gathered now
  std::vector<int> reducing;      // layers whose gradients are being reduce-scattered now
  bool bucket_in_flight = false;  // a gradient bucket (stages 0-2) or the post-step all-gather
  bool optimizer = false;
  double memory_bytes = 0;
  int next_event = -1;  // index of the first event starting after t (-1: none)
};
ZeroFrame frame_at(const ZeroAnimation& a, double t_s);

// Every event boundary, sorted and unique (the view's "step one event" stops).
std::vector<double> event_times(const ZeroAnimation& a);

// The animation described once (animation_kind.h), registered by zero_animation.cpp. Its machine is in its
// settings (a model, a cluster and a stack of the catalog), so no scenario config lends it one.
struct ZeroAnimationKind {
  using Settings = ZeroSettings;
  using Animation = ZeroAnimation;
  static constexpr const char* kKind = "zero";
  static constexpr const char* kTitle = "ZeRO, layer by layer";
  static constexpr const char* kSummary = "one ZeRO 0-3 step, layer by layer, from the simulator (sim::animate_zero)";
  static constexpr const char* kNoun = "ZeRO";
  static constexpr int kOrder = 30;
  static constexpr bool kOnMachine = false;
  static Settings view_start() { return {}; }
  static Settings config_base(Settings held) { return held; }
  static Animation make(const Catalog& cat, const Settings& s, const nlohmann::json* machine = nullptr);
  static double total_s(const Animation& a) { return a.total_s; }
  static nlohmann::json figures(const Animation& a, double t_s);
  static nlohmann::json opened(const Settings& s, const Animation&) { return to_json(s); }
};

}  // namespace mc::sim
