// sim_animation_settings_test.cpp - the animations' settings (engine/sim/animation_settings.h): each codec
// reads back what it writes, refuses a value outside the one range the views and the scenario checks share
// (naming the key and the range), refuses a key it does not know unless the caller allows it, and a
// scenario's pipeline settings leave to the animated config what they do not set.
#include "core/json_doc.h"
#include "scenario/actions.h"
#include "scenario/scenario.h"
#include "sim/animation_settings.h"
#include "sim/iteration.h"
#include "sim/pipeline_animation.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

namespace {

using mc::json;
using mc::LoadError;
using namespace mc::sim;
using mc::PipeSchedule;

template <class T>
std::string refusal(const json& j, const T& base = {}) {
  try {
    (void)parse_settings_json<T>(j, "settings.json", base);
  } catch (const LoadError& e) {
    return e.what();
  }
  return "";
}

TEST(AnimationSettings, EachCodecReadsBackWhatItWrites) {
  CollectiveSettings c;
  c.kind = CollectiveKind::reduce_scatter;
  c.algorithm = Algorithm::tree;
  c.gpus = 12;
  c.first_gpu = 8;
  c.message_bytes = 80e6;
  EXPECT_EQ(parse_settings_json<CollectiveSettings>(to_json(c), "c", {}), c);
  EXPECT_EQ(parse_settings_json<CollectiveSettings>(to_json(CollectiveSettings{}), "c", c), CollectiveSettings{});

  PipelineSettings p = kPipelineViewStart;
  p.schedule = int(PipeSchedule::interleaved);
  p.virtual_stages = 3;
  p.follow = 5;
  EXPECT_EQ(parse_settings_json<PipelineSettings>(to_json(p), "p", {}), p);
  EXPECT_EQ(parse_settings_json<PipelineSettings>(to_json(kPipelineViewStart), "p", {}), kPipelineViewStart);

  ZeroSettings z;
  z.stage = 1;
  z.gpus = 64;
  z.micro_batches = 4;
  z.model = "gpt3-175b";
  EXPECT_EQ(parse_settings_json<ZeroSettings>(to_json(z), "z", {}), z);
}

// A key left out keeps the base's value; the base is whatever the caller holds (a view's settings).
TEST(AnimationSettings, AKeyLeftOutKeepsTheBase) {
  CollectiveSettings base;
  base.gpus = 4;
  base.message_bytes = 1e6;
  const CollectiveSettings c = parse_settings_json<CollectiveSettings>({{"algorithm", "tree"}}, "c", base);
  EXPECT_EQ(c.gpus, 4);
  EXPECT_EQ(c.message_bytes, 1e6);
  EXPECT_EQ(c.algorithm, Algorithm::tree);
}

// One range per setting, named in the refusal with the key; the engine's own limits are the same numbers.
TEST(AnimationSettings, AValueOutsideItsRangeIsRefusedWithTheRange) {
  EXPECT_EQ(PipelineSettings::kStages.max, kMaxAnimatedStages);
  EXPECT_EQ(PipelineSettings::kMicroBatches.max, kMaxAnimatedMicroBatches);
  struct Case {
    std::string said;
    std::string key;
  };
  const std::pair<std::string, Case> collective[] = {
      {refusal<CollectiveSettings>({{"gpus", 17}}), {"16", "gpus"}},
      {refusal<CollectiveSettings>({{"gpus", 1}}), {"2", "gpus"}},
      {refusal<CollectiveSettings>({{"message_bytes", 10}}), {"1024", "message_bytes"}},
      {refusal<CollectiveSettings>({{"algorithm", "butterfly"}}), {"hierarchical", "algorithm"}},
      {refusal<PipelineSettings>({{"stages", 33}}), {"32", "stages"}},
      {refusal<PipelineSettings>({{"virtual_stages", 9}}), {"8", "virtual_stages"}},
      {refusal<PipelineSettings>({{"schedule", "zb-h1"}}), {"interleaved", "schedule"}},
      {refusal<ZeroSettings>({{"stage", 4}}), {"3", "stage"}},
      {refusal<ZeroSettings>({{"gpus", 65}}), {"64", "gpus"}},
      {refusal<ZeroSettings>({{"micro_batches", 0}}), {"1", "micro_batches"}},
  };
  for (const auto& [said, c] : collective) {
    SCOPED_TRACE(c.key);
    ASSERT_FALSE(said.empty()) << "accepted";
    EXPECT_NE(said.find("settings.json"), std::string::npos) << said;
    EXPECT_NE(said.find(c.key), std::string::npos) << said;
    EXPECT_NE(said.find(c.said), std::string::npos) << said;
  }
  // At the ends of each range: accepted.
  EXPECT_EQ(refusal<PipelineSettings>({{"stages", 1}, {"micro_batches", 64}, {"virtual_stages", 8}}), "");
  EXPECT_EQ(refusal<CollectiveSettings>({{"gpus", 16}, {"message_bytes", 64.0 * (1LL << 30)}}), "");
}

TEST(AnimationSettings, AnUnknownKeyIsRefusedUnlessTheCallerAllowsIt) {
  const std::string said = refusal<ZeroSettings>({{"stages", 2}});
  EXPECT_NE(said.find("stages"), std::string::npos) << said;
  EXPECT_NE(said.find("micro_batches"), std::string::npos) << "the keys it could be: " << said;
  EXPECT_NO_THROW((void)parse_settings_json<CollectiveSettings>({{"machine_of", "estimate"}}, "c", {}, {"machine_of"}));
  EXPECT_THROW((void)parse_settings_json<CollectiveSettings>(json::array(), "c", {}), LoadError);
}

// A scenario's pipeline settings leave to the animated config what they do not set (0 / -1), and write only
// what they set.
TEST(AnimationSettings, AScenarioPipelineLeavesTheRestToItsConfig) {
  const PipelineSettings p = parse_settings_json<PipelineSettings>({{"micro_batches", 6}}, "p", {});
  EXPECT_EQ(p.schedule, -1);
  EXPECT_EQ(p.stages, 0);
  EXPECT_EQ(p.micro_batches, 6);
  EXPECT_EQ(to_json(p), (json{{"micro_batches", 6}, {"follow", 0}}));
}

// The scenario action is checked with the same codec: a range the view refuses, a scenario file cannot ask.
TEST(AnimationSettings, AScenarioIsCheckedWithTheSameRanges) {
  json j = mc::JsonDoc::load(std::string(MC_SOURCE_DIR) + "/scenarios/dgx1-2016.json").value();
  int changed = 0;
  for (json& step : j["steps"])
    for (json& a : step["actions"])
      if (a.value("do", "") == "pipeline") a["settings"]["stages"] = 33, ++changed;
  ASSERT_GT(changed, 0) << "the scenario no longer opens the pipeline view";
  const mc::scenario::ParseResult r =
      mc::scenario::parse_scenario_text(j.dump(2), "dgx1.json", mc::scenario::default_actions(), &mc::test::catalog());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("stages"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("32"), std::string::npos) << r.message();
}

}  // namespace
