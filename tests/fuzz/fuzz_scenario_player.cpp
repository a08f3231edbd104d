// fuzz_scenario_player.cpp - libFuzzer harness of the scenario player (engine/scenario/player.cpp): a
// scenario that parses is played headless, step by step, as the explorer and `megacluster play` do: next,
// previous, jump, tick, then the report with an answers map. Bounded so that one execution stays fast:
// at most kMaxSteps steps are run, and the actions that run the engine for long (the training lab's
// "train" and "scaling", "simulate", "search") are replaced by versions that check their config the same
// way, simulate a capped number of events and search fewer micro-batch and schedule choices. The other
// actions (estimate, plan, waterfall, ...) run as shipped. Invariants: a step's failure is reported in its outcome (the
// player never throws), the report counts what the outcomes hold, and replaying gives the same digest (determinism).
#include "fuzz_common.h"
#include "perf/perf.h"
#include "scenario/actions.h"
#include "scenario/player.h"
#include "scenario/scenario.h"
#include "sim/sim.h"
#include "train/scaling.h"
#include "train/train.h"

namespace {

constexpr int kMaxSteps = 8;

const mc::scenario::ActionRegistry& bounded_actions() {
  static const mc::scenario::ActionRegistry reg = [] {
    mc::scenario::ActionRegistry r = mc::scenario::default_actions();
    mc::scenario::ActionDef train = *r.find("train");
    train.run = [](const mc::json& a, mc::scenario::ActionContext& ctx) {
      mc::json c = ctx.state->configs["train"];
      if (a.contains("steps")) c["steps"] = a["steps"];
      mc::train::validate(mc::train::parse_config(c, "scenario config \"train\""));
      ctx.state->results[a.value("as", std::string("train"))] = mc::json{{"checked", true}};
    };
    r.add(train);
    mc::scenario::ActionDef scaling = *r.find("scaling");
    scaling.run = [](const mc::json& a, mc::scenario::ActionContext& ctx) {
      (void)mc::train::scaling_config_from_json(ctx.state->configs["scaling"], "scenario config \"scaling\"");
      ctx.state->results[a.value("as", std::string("scaling"))] = mc::json{{"checked", true}};
    };
    r.add(scaling);
    mc::scenario::ActionDef simulate = *r.find("simulate");
    simulate.run = [](const mc::json& a, mc::scenario::ActionContext& ctx) {
      mc::sim::SimOptions o;
      o.seed = ctx.seed;
      o.include_link_series = false;
      o.timeline_gpu = -1;
      mc::sim::Simulation s(*ctx.catalog, ctx.state->configs["simulate"], o, "scenario config \"simulate\"");
      mc::json r = mc::json{{"done", false}};
      for (int k = 0; k < 5; ++k)
        if (s.step(1000)) {
          r = s.result();
          break;
        }
      ctx.state->results[a.value("as", std::string("simulate"))] = r;
    };
    r.add(simulate);
    mc::scenario::ActionDef search = *r.find("search");
    search.run = [](const mc::json& a, mc::scenario::ActionContext& ctx) {  // a smaller search, same config
      mc::perf::SearchOptions o;
      o.max_results = 3;
      o.max_micro_batch = 2;
      o.max_virtual_stages = 2;
      o.include_zero = false;
      const mc::perf::Config c =
          mc::perf::parse_config(*ctx.catalog, ctx.state->configs["estimate"], "scenario config \"estimate\"", false);
      ctx.state->results[a.value("as", std::string("search"))] = mc::perf::to_json(mc::perf::search(c, o), c);
    };
    r.add(search);
    return r;
  }();
  return reg;
}

mc::scenario::Report play(const mc::scenario::Scenario& s) {
  mc::scenario::Player p(s, &mc::fuzz::catalog(), bounded_actions());
  for (int k = 0; k < kMaxSteps && p.next(); ++k) {
  }
  return p.report({{"q1", mc::json(1)}, {"q2", mc::json("a")}});
}

}  // namespace

MC_FUZZ_TARGET(scenario_player) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const mc::scenario::ParseResult r =
      mc::scenario::parse_scenario_text(text, "fuzz-scenario.json", bounded_actions(), &mc::fuzz::catalog());
  if (!r.ok()) return 0;
  try {
    const mc::scenario::Report a = play(*r.scenario);
    int failed = 0;
    for (const auto& st : a.steps)
      for (const auto& e : st.expectations) failed += !e.passed;
    if (failed != a.expectations_failed) mc::fuzz::finding("the report miscounts failed expectations");
    (void)mc::scenario::to_json(a).dump();
    const mc::scenario::Report b = play(*r.scenario);
    if (a.digest != b.digest) mc::fuzz::finding("playing the same scenario twice gave two digests");
    // Going back and jumping replay from the start; ticking moves a playing scenario on.
    mc::scenario::Player p(*r.scenario, &mc::fuzz::catalog(), bounded_actions());
    p.jump(2);
    p.previous();
    p.play();
    for (int k = 0; k < 4; ++k) p.tick(7.0);
    if (p.current() < -1 || p.current() >= p.step_count()) mc::fuzz::finding("current step out of range");
  } catch (const std::exception& e) {
    mc::fuzz::finding(std::string("the player threw: ") + e.what());
  }
  return 0;
}
