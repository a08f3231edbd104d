// animation_kind_test.cpp - each animation described once (engine/sim/animation_kind.h): every registered
// animation is a scenario action and a config kind of its name, its action's checks are its settings' codec
// (the view's ranges) with "machine_of" only where it runs on a machine, and what an action opens, read back
// as the view reads it, makes the very animation the action quoted (the same figures at the same moment).
#include "core/json_doc.h"
#include "scenario/actions.h"
#include "sim/collective_animation.h"
#include "sim/pipeline_animation.h"
#include "sim/zero_animation.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using mc::json;
using namespace mc::sim;

TEST(AnimationKinds, EachIsAnActionAndAConfigKindOfItsName) {
  std::vector<std::string> names;
  for (const AnimationKind& k : animation_kinds()) names.push_back(k.kind);
  EXPECT_EQ(names, (std::vector<std::string>{"collective", "pipeline", "zero"})) << "by order";
  for (const AnimationKind& k : animation_kinds()) {
    SCOPED_TRACE(k.kind);
    const mc::scenario::ActionDef* a = mc::scenario::default_actions().find(k.kind);
    ASSERT_NE(a, nullptr);
    EXPECT_NE(a->summary.find(k.title), std::string::npos) << a->summary;
    const mc::scenario::ConfigKind* c = mc::scenario::find_config_kind(k.kind);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(std::string(c->panel), k.kind);
    EXPECT_EQ(mc::scenario::config_kind_of_action(k.kind), c);
    EXPECT_EQ(find_animation_kind(k.kind), &k);
  }
  EXPECT_EQ(find_animation_kind("zero-bubble"), nullptr);
}

// The check of an action's "settings" is the settings' codec: the view's ranges, and "machine_of" (simulate or
// estimate) only for an animation made on a scenario config's machine.
TEST(AnimationKinds, AnActionIsCheckedWithTheViewsRanges) {
  auto refusal = [](const char* kind, const json& settings) -> std::string {
    const mc::JsonDoc doc = mc::JsonDoc::parse(settings.dump(), "step.json");
    try {
      find_animation_kind(kind)->check(doc.root());
    } catch (const mc::LoadError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(refusal("collective", {{"gpus", 17}}).find("16"), std::string::npos);
  EXPECT_NE(refusal("pipeline", {{"virtual_stages", 9}}).find("8"), std::string::npos);
  EXPECT_NE(refusal("zero", {{"stage", 4}}).find("3"), std::string::npos);
  EXPECT_EQ(refusal("collective", {{"machine_of", "estimate"}}), "");
  EXPECT_NE(refusal("pipeline", {{"machine_of", "train"}}).find("simulate"), std::string::npos);
  EXPECT_NE(refusal("zero", {{"machine_of", "simulate"}}).find("machine_of"), std::string::npos)
      << "ZeRO's machine is in its settings";
  EXPECT_EQ(refusal("zero", {{"gpus", 64}, {"micro_batches", 4}}), "");
}

// What the action opens (its config: every setting, the moment, the machine) makes, read as the view's
// binding reads it (ui/animation_panel.h), the same animation: the figures the action stored are the ones
// the view shows at that moment.
template <class D>
void opens_what_it_quotes(const json& config, const json* machine) {
  SCOPED_TRACE(D::kKind);
  const AnimationKind* k = find_animation_kind(D::kKind);
  ASSERT_NE(k, nullptr);
  double total = -1;
  const OpenedAnimation o = k->open(mc::test::catalog(), config, machine, [&](double t) { return 0.4 * (total = t); });
  ASSERT_GT(total, 0);
  EXPECT_DOUBLE_EQ(o.config.at("t_s").get<double>(), 0.4 * total);
  EXPECT_EQ(o.config.contains("machine"), machine != nullptr);
  const typename D::Settings view = parse_settings_json<typename D::Settings>(
      o.config, "opened", D::config_base(D::view_start()), {"t_s", "machine", "machine_of"});
  const json* view_machine = o.config.contains("machine") ? &o.config.at("machine") : nullptr;
  const typename D::Animation again = D::make(mc::test::catalog(), view, view_machine);
  EXPECT_DOUBLE_EQ(D::total_s(again), total);
  EXPECT_EQ(D::figures(again, o.config.at("t_s").get<double>()), o.figures);
}

TEST(AnimationKinds, WhatAnActionOpensMakesTheAnimationItQuoted) {
  const json machine = mc::JsonDoc::load(std::string(MC_SOURCE_DIR) + "/assets/configs/simulate.json").value();
  opens_what_it_quotes<CollectiveAnimationKind>({{"collective", "reduce-scatter"}, {"gpus", 8}}, &machine);
  opens_what_it_quotes<PipelineAnimationKind>({{"schedule", "gpipe"}, {"stages", 4}, {"micro_batches", 6}}, &machine);
  opens_what_it_quotes<ZeroAnimationKind>({{"stage", 2}, {"gpus", 4}}, nullptr);
}

// The one follow check a scenario's pipeline cannot pass at load time (the micro-batches may be the config's):
// refused when the animation is made, naming both numbers.
TEST(AnimationKinds, APipelineCannotFollowAMicroBatchItDoesNotHave) {
  const json machine = mc::JsonDoc::load(std::string(MC_SOURCE_DIR) + "/assets/configs/simulate.json").value();
  try {
    (void)find_animation_kind("pipeline")
        ->open(mc::test::catalog(), {{"micro_batches", 4}, {"follow", 5}}, &machine, [](double t) { return t; });
    FAIL() << "followed micro-batch 5 of 4";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("follow 5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("only 4"), std::string::npos) << e.what();
  }
}

}  // namespace
