// fuzz_scenario.cpp - libFuzzer harness of the scenario parser (engine/scenario/scenario.cpp), with the
// catalog so that presets and source ids are checked. parse_scenario_text promises never to throw for bad
// input: any exception escaping is a finding. Invariants: a result has a scenario exactly when it has no
// errors; every error says something.
#include "fuzz_common.h"
#include "scenario/actions.h"
#include "scenario/scenario.h"

MC_FUZZ_TARGET(scenario) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const mc::scenario::ParseResult r = mc::scenario::parse_scenario_text(
        text, "fuzz-scenario.json", mc::scenario::default_actions(), &mc::fuzz::catalog());
    if (r.ok() != r.scenario.has_value()) mc::fuzz::finding("ok() and the scenario disagree");
    for (const mc::LoadError& e : r.errors)
      if (e.message.empty()) mc::fuzz::finding("a scenario error without a message");
    if (!r.ok() && r.message().empty()) mc::fuzz::finding("errors but an empty message()");
  } catch (const std::exception& e) {
    mc::fuzz::finding(std::string("parse_scenario_text threw: ") + e.what());
  }
  return 0;
}
