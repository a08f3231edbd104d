// pipeline_animation.h - one replica's pipeline over one iteration, as the iteration simulator runs it:
// per stage, what it does when (forward or backward of which micro-batch and model chunk, a send, or
// nothing), and the bubble as it forms. The "Pipeline in motion" view draws this; nothing in it is
// hand-made motion.
//
// The blocks are read from the simulator's own spans (iteration.h WorkerTimeline), not recomputed: the
// spec is an IterationSpec run through simulate_iteration with one data-parallel replica, and
//   - a forward or backward block is the hull of the spans of that (stage, micro-batch, chunk, direction):
//     its layers' compute and the tensor-parallel collectives between them (Megatron blocks on those);
//   - a send block is a pp_send span, where no compute runs;
//   - idle is every other moment from 0 to the end of the pipeline (waiting for a micro-batch: the bubble).
// The schedules are the simulator's (schedule.cpp): GPipe (Huang et al. 2019), 1F1B / PipeDream-Flush
// (Narayanan et al. 2021) and interleaved 1F1B (Narayanan et al. SC21, Sec. 2.2), uneven stages included
// (IterationSpec::stage_layers / chunk_layers).
//
//   PipelineAnimationSpec s = pipeline_spec_of_config(cat, simulate_config);   // or fill one by hand
//   s.iteration.schedule = PipeSchedule::interleaved; s.iteration.pp = 4; ...
//   PipelineAnimation a = animate_pipeline(s);            // throws std::invalid_argument on bad input
//   PipelineFrame f = frame_at(a, 0.5 * a.total_s);   // blocks in progress, idle so far
//
// Bubble: the measured fraction is idle / (p x total) over the timeline. With equal stages and free
// communication it equals the analytic rule (p-1)/(v m + p-1): the fill and drain of p-1 stages' work
// (Huang et al. 2019 Sec. 2.2 for GPipe; the same for 1F1B, Narayanan et al. 2021 Sec. 2.2.1; divided by
// v, the model chunks per stage, for interleaved, Sec. 2.2.2) over the total, (p-1)/v + m passes.
#pragma once

#include "catalog/catalog.h"
#include "sim/animation_kind.h"
#include "sim/animation_settings.h"
#include "sim/iteration.h"
#include "sim/topology.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mc::sim {

struct PipelineAnimationSpec {
  TopologySpec topology;    // nodes raised to hold tp * pp GPUs
  IterationSpec iteration;  // dp is forced to 1 and the optimizer to 0: one replica's pipeline
};
constexpr int kMaxAnimatedStages = PipelineSettings::kStages.max;
constexpr int kMaxAnimatedMicroBatches = PipelineSettings::kMicroBatches.max;

enum class PipeBlockKind : uint8_t { forward, backward, send, idle };
const char* to_string(PipeBlockKind k);

struct PipeBlock {
  PipeBlockKind kind = PipeBlockKind::idle;
  int micro_batch = -1;  // -1 for idle
  int chunk = 0;         // model chunk (interleaved: 0..v-1); a send: the chunk it feeds (the receiver's)
  double t_start_s = 0, t_end_s = 0;
};

struct PipelineAnimation {
  PipelineAnimationSpec spec;
  int stages = 1, micro_batches = 1, virtual_stages = 1;
  // Per stage, the blocks in time order; together they tile [0, total_s] exactly.
  std::vector<std::vector<PipeBlock>> rows;
  double total_s = 0;          // the pipeline: first forward to the last stage's last block
  std::vector<double> idle_s;  // per stage, over [0, total_s]
  double bubble_fraction = 0;  // measured: sum idle_s / (stages x total_s)
  double analytic_bubble = 0;  // (p-1)/(v m + p-1)
  std::string rule;            // the analytic rule with these numbers written out
};

PipelineAnimation animate_pipeline(const PipelineAnimationSpec& spec);

// The pipeline of the config a `megacluster simulate` run reads (sim_config.h resolve: per-layer times,
// activation bytes, latencies and links as the Run chapter simulates them), one replica, with the
// schedule, stages, micro-batches and virtual stages of `settings` where they are set (0: the config's).
// The layers are split over the stages or chunks as engine/perf splits them for that layout (perf.h
// stage_layers / chunk_layers: uneven when they do not divide, the config's layers_per_stage when it has
// one per stage). Throws LoadError for a config the simulator refuses.
PipelineAnimationSpec pipeline_spec_of_config(const Catalog& cat, const nlohmann::json& simulate_config,
                                              const PipelineSettings& settings = {});

// What the view draws at time t: per stage the block in progress (index into rows[stage], -1 at the end)
// and idle so far; the bubble so far = sum idle / (stages x t).
struct PipelineFrame {
  double t_s = 0;
  std::vector<int> block;
  std::vector<double> idle_s;
  double bubble_so_far = 0;
};
PipelineFrame frame_at(const PipelineAnimation& a, double t_s);

// Idle time of one stage from 0 to t.
double idle_until(const PipelineAnimation& a, int stage, double t_s);

// Every block's start and end, sorted and unique: what "step to next event" walks through.
std::vector<double> event_times(const PipelineAnimation& a);

// The animation described once (animation_kind.h), registered by pipeline_animation.cpp.
struct PipelineAnimationKind {
  using Settings = PipelineSettings;
  using Animation = PipelineAnimation;
  static constexpr const char* kKind = "pipeline";
  static constexpr const char* kTitle = "Pipeline in motion";
  static constexpr const char* kSummary =
      "one replica's pipeline schedule over an iteration, on the simulate (or estimate) config "
      "(sim::animate_pipeline)";
  static constexpr const char* kNoun = "pipeline";
  static constexpr int kOrder = 20;
  static constexpr bool kOnMachine = true;
  static Settings view_start() { return kPipelineViewStart; }
  static Settings config_base(Settings held);  // 1F1B, no micro-batch followed, unless the config says
  // The pipeline of `machine`, a simulate config (pipeline_spec_of_config), reshaped by the settings.
  static Animation make(const Catalog& cat, const Settings& s, const nlohmann::json* machine);
  static double total_s(const Animation& a) { return a.total_s; }
  static nlohmann::json figures(const Animation& a, double t_s);
  // Every setting as the pipeline resolved it (the config's own where left at 0). Throws when the
  // micro-batch followed is not in it.
  static nlohmann::json opened(const Settings& s, const Animation& a);
};

}  // namespace mc::sim
