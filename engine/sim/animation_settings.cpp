// animation_settings.cpp - the animations' settings: defaults, limits and codecs (animation_settings.h).
#include "sim/animation_settings.h"

#include "core/pipeline_schedule.h"

#include <type_traits>

namespace mc::sim {
namespace {

constexpr const char* kCollectiveNames[] = {"all-reduce", "reduce-scatter", "all-gather", "send"};
constexpr const char* kAlgorithmNames[] = {"ring", "tree", "hierarchical"};

// An object whose keys are `keys` and `also`: anything else is a typo, named with the keys it could be.
void check_keys(const JsonCursor& at, const std::vector<std::string>& keys,
                std::initializer_list<std::string_view> also) {
  if (!at.is_object()) {
    std::string list;
    for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
    at.fail("the settings are an object of " + list);
  }
  std::vector<std::string> allowed = keys;
  for (std::string_view a : also) allowed.emplace_back(a);
  at.only_keys(allowed);
}

int int_in(const JsonCursor& at, const char* key, IntLimits l, int fallback) {
  return at.has(key) ? int(at[key].integer_in(l.min, l.max)) : fallback;
}

}  // namespace

const char* collective_kind_name(CollectiveKind k) { return kCollectiveNames[int(k)]; }
const char* algorithm_name(Algorithm a) { return kAlgorithmNames[int(a)]; }

// ---- collective ----

CollectiveSettings parse_collective_settings(const JsonCursor& at, const CollectiveSettings& base,
                                             std::initializer_list<std::string_view> also) {
  using S = CollectiveSettings;
  check_keys(at, {"collective", "algorithm", "gpus", "first_gpu", "message_bytes"}, also);
  S s = base;
  if (at.has("collective")) {
    const std::string k = at["collective"].one_of({"all-reduce", "reduce-scatter", "all-gather", "send"});
    for (int i = 0; i < 4; ++i)
      if (k == kCollectiveNames[i]) s.kind = CollectiveKind(i);
  }
  if (at.has("algorithm"))
    s.algorithm = algorithm_from_string(at["algorithm"].one_of({"ring", "tree", "hierarchical"}));
  s.gpus = int_in(at, "gpus", S::kGpus, s.gpus);
  s.first_gpu = int_in(at, "first_gpu", S::kFirstGpu, s.first_gpu);
  if (at.has("message_bytes"))
    s.message_bytes = at["message_bytes"].number_in(S::kMinMessageBytes, S::kMaxMessageBytes);
  return s;
}

json to_json(const CollectiveSettings& s) {
  return {{"collective", collective_kind_name(s.kind)},
          {"algorithm", algorithm_name(s.algorithm)},
          {"gpus", s.gpus},
          {"first_gpu", s.first_gpu},
          {"message_bytes", s.message_bytes}};
}

// ---- pipeline ----

PipelineSettings parse_pipeline_settings(const JsonCursor& at, const PipelineSettings& base,
                                         std::initializer_list<std::string_view> also) {
  using S = PipelineSettings;
  check_keys(at, {"schedule", "stages", "micro_batches", "virtual_stages", "follow"}, also);
  S s = base;
  if (at.has("schedule"))
    s.schedule = int(schedule_from_string(at["schedule"].one_of({"gpipe", "1f1b", "interleaved"})));
  s.stages = int_in(at, "stages", S::kStages, s.stages);
  s.micro_batches = int_in(at, "micro_batches", S::kMicroBatches, s.micro_batches);
  s.virtual_stages = int_in(at, "virtual_stages", S::kVirtualStages, s.virtual_stages);
  s.follow = int_in(at, "follow", {0, S::kMicroBatches.max}, s.follow);
  return s;
}

json to_json(const PipelineSettings& s) {
  json j = json::object();
  if (s.schedule >= 0) j["schedule"] = schedule_name(PipeSchedule(s.schedule));
  if (s.stages > 0) j["stages"] = s.stages;
  if (s.micro_batches > 0) j["micro_batches"] = s.micro_batches;
  if (s.virtual_stages > 0) j["virtual_stages"] = s.virtual_stages;
  j["follow"] = s.follow;
  return j;
}

// ---- ZeRO ----

ZeroSettings parse_zero_settings(const JsonCursor& at, const ZeroSettings& base,
                                 std::initializer_list<std::string_view> also) {
  using S = ZeroSettings;
  check_keys(at, {"stage", "gpus", "micro_batches", "model", "cluster", "software"}, also);
  S s = base;
  s.stage = int_in(at, "stage", S::kStage, s.stage);
  s.gpus = int_in(at, "gpus", S::kGpus, s.gpus);
  s.micro_batches = int_in(at, "micro_batches", S::kMicroBatches, s.micro_batches);
  s.model = at.string_or("model", s.model);
  s.cluster = at.string_or("cluster", s.cluster);
  s.software = at.string_or("software", s.software);
  return s;
}

json to_json(const ZeroSettings& s) {
  return {{"stage", s.stage}, {"gpus", s.gpus},       {"micro_batches", s.micro_batches},
          {"model", s.model}, {"cluster", s.cluster}, {"software", s.software}};
}

json zero_config(const ZeroSettings& s) {
  return {{"model", {{"preset", s.model}}}, {"cluster", {{"preset", s.cluster}}}, {"software", s.software}};
}

template <class T>
T parse_settings_json(const json& j, const std::string& what, const T& base,
                      std::initializer_list<std::string_view> also) {
  const JsonDoc doc = JsonDoc::parse(j.dump(2), what);
  if constexpr (std::is_same_v<T, CollectiveSettings>) return parse_collective_settings(doc.root(), base, also);
  if constexpr (std::is_same_v<T, PipelineSettings>) return parse_pipeline_settings(doc.root(), base, also);
  if constexpr (std::is_same_v<T, ZeroSettings>) return parse_zero_settings(doc.root(), base, also);
}
template CollectiveSettings parse_settings_json(const json&, const std::string&, const CollectiveSettings&,
                                                std::initializer_list<std::string_view>);
template PipelineSettings parse_settings_json(const json&, const std::string&, const PipelineSettings&,
                                              std::initializer_list<std::string_view>);
template ZeroSettings parse_settings_json(const json&, const std::string&, const ZeroSettings&,
                                          std::initializer_list<std::string_view>);

AnimationPlacement parse_placement(const json& c, const std::string& what) {
  const JsonDoc doc = JsonDoc::parse(c.dump(2), what);
  const JsonCursor at = doc.root();
  AnimationPlacement p;
  if (auto t = at.get("t_s")) p.t_s = t->number();
  if (at.has("machine")) p.machine = parse_sim_request(at["machine"].value(), what + ", its machine");
  return p;
}

json with_placement(json settings, const AnimationPlacement& p) {
  settings["t_s"] = p.t_s;
  if (p.machine) settings["machine"] = to_json(*p.machine);
  return settings;
}

}  // namespace mc::sim
