// animation_settings.h - what each animation is asked for (one collective call, one pipeline schedule, one
// ZeRO step): its defaults, its limits and one JSON codec. The scenario actions (scenario/animation_actions),
// the views' controls, the scenario bindings and a link's address all read these, so a slider and a
// scenario check can never disagree on a range again (the pipeline view once offered 2..16 stages where a
// scenario could ask 1..32).
//
//   CollectiveSettings c = parse_collective_settings(doc.root());      // errors name the key and the range
//   c.gpus = std::clamp(c.gpus, CollectiveSettings::kGpus.min, CollectiveSettings::kGpus.max);
//   json j = to_json(c);                                               // every key, parse(to_json(c)) == c
//
// A parse reads only its own keys, each over `base` (a key left out keeps the base's value), and rejects
// any other key unless the caller allows it (`also`: "machine_of", "t_s", ...).
#pragma once

#include "core/json_doc.h"
#include "sim/collectives.h"
#include "sim/sim_request.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mc::sim {

struct IntLimits {
  int min, max;
};

// ---- one collective call (collective_animation.h) ----
struct CollectiveSettings {
  CollectiveKind kind = CollectiveKind::all_reduce;
  Algorithm algorithm = Algorithm::ring;  // all-reduce only
  // Two servers of the era's 8-GPU machines: NVLink inside, the NICs between.
  int gpus = 16;
  int first_gpu = 0;                          // where the group starts on the cluster
  double message_bytes = 64.0 * 1024 * 1024;  // the buffer every rank holds (a send: the bytes sent)

  static constexpr IntLimits kGpus{2, 16};  // a ring of 16 is as many as a view can label
  static constexpr IntLimits kFirstGpu{0, 1 << 20};
  // From a latency-bound 1 KiB message to a 64 GiB one (every GPU's whole memory of the time, twice).
  static constexpr double kMinMessageBytes = 1024, kMaxMessageBytes = 64.0 * (1LL << 30);
  bool operator==(const CollectiveSettings&) const = default;
};
CollectiveSettings parse_collective_settings(const JsonCursor& at, const CollectiveSettings& base = {},
                                             std::initializer_list<std::string_view> also = {});
json to_json(const CollectiveSettings& s);
const char* collective_kind_name(CollectiveKind k);  // "all-reduce", "reduce-scatter", "all-gather", "send"
const char* algorithm_name(Algorithm a);             // "ring", "tree", "hierarchical"

// ---- one replica's pipeline schedule (pipeline_animation.h) ----
// For a scenario, a setting left at 0 (-1 for the schedule) is the animated config's own; a view holds
// every setting (kPipelineViewStart).
struct PipelineSettings {
  int schedule = -1;  // a PipeSchedule, -1: the config's
  int stages = 0, micro_batches = 0, virtual_stages = 0;
  int follow = 0;  // the micro-batch followed through every stage, 1-based (0: none)

  static constexpr IntLimits kStages{1, 32};
  static constexpr IntLimits kMicroBatches{1, 64};
  static constexpr IntLimits kVirtualStages{1, 8};
  bool operator==(const PipelineSettings&) const = default;
};
// What the view opens on: 1F1B over 4 stages (a teaching size: every block stays wide enough to read its
// micro-batch), 8 micro-batches, 2 virtual stages when interleaved.
inline constexpr PipelineSettings kPipelineViewStart{1, 4, 8, 2, 0};
PipelineSettings parse_pipeline_settings(const JsonCursor& at, const PipelineSettings& base = {},
                                         std::initializer_list<std::string_view> also = {});
json to_json(const PipelineSettings& s);  // a setting left to the config (0, -1) is left out

// ---- one ZeRO step (zero_animation.h) ----
struct ZeroSettings {
  int stage = 3;  // 0 = plain data parallelism, for comparison
  int gpus = 8;   // one server of the era's 8-GPU machines
  int micro_batches = 1;
  // The model, cluster and stack the step runs: GPT-3 2.7B, the 2020 machine's V100s, DeepSpeed 0.6 (ZeRO-3
  // with prefetching and per-module gathers).
  std::string model = "gpt3-2.7b", cluster = "azure-openai-2020", software = "deepspeed-2022";

  static constexpr IntLimits kStage{0, 3};
  static constexpr IntLimits kGpus{2, 64};
  static constexpr IntLimits kMicroBatches{1, 4};
  bool operator==(const ZeroSettings&) const = default;
};
ZeroSettings parse_zero_settings(const JsonCursor& at, const ZeroSettings& base = {},
                                 std::initializer_list<std::string_view> also = {});
json to_json(const ZeroSettings& s);
// The estimate config the step runs (zero_animation.h ZeroAnimationSpec::config).
json zero_config(const ZeroSettings& s);

// The three parses by the type of their base, for code written once for every animation (animation_kind.h).
inline CollectiveSettings parse_settings(const JsonCursor& at, const CollectiveSettings& base,
                                         std::initializer_list<std::string_view> also) {
  return parse_collective_settings(at, base, also);
}
inline PipelineSettings parse_settings(const JsonCursor& at, const PipelineSettings& base,
                                       std::initializer_list<std::string_view> also) {
  return parse_pipeline_settings(at, base, also);
}
inline ZeroSettings parse_settings(const JsonCursor& at, const ZeroSettings& base,
                                   std::initializer_list<std::string_view> also) {
  return parse_zero_settings(at, base, also);
}

// The same codecs for a value built in memory (a link's settings, a scenario's config): errors name `what`.
template <class T>
T parse_settings_json(const json& j, const std::string& what, const T& base,
                      std::initializer_list<std::string_view> also = {});

// What a scenario's animation config holds beside its settings (scenario/animation_actions.h): the moment
// shown ("t_s", seconds of the animation) and the machine it was made on ("machine": the engine call's
// simulate config; none for the view's own).
struct AnimationPlacement {
  double t_s = 0;
  std::optional<SimRequest> machine;
};
AnimationPlacement parse_placement(const json& c, const std::string& what);
// `settings` (a to_json of them) with the placement's keys: the config the scenario bindings report.
json with_placement(json settings, const AnimationPlacement& p);

}  // namespace mc::sim
