// fuzz_sim_config.cpp - libFuzzer harness of the simulator's config (engine/sim/sim_config.cpp) and one
// simulated iteration (engine/sim/sim.cpp), stepped in slices as the browser does. The events simulated
// per input are capped (kMaxEvents) so that one execution stays fast; an iteration that finishes within
// it is also turned into its JSON report. Invariants: progress stays in [0, 1] and never goes back.
#include "fuzz_common.h"
#include "sim/sim.h"

#include <cmath>

namespace {
constexpr long long kSlice = 2000, kMaxEvents = 60000;
}

MC_FUZZ_TARGET(sim_config) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mc::fuzz::expect_refusal_or_success("simulate", [&] {
    const mc::JsonDoc doc = mc::JsonDoc::parse(text, "fuzz-sim.json");
    mc::sim::SimOptions o;
    o.timeline_gpu = 0;
    o.max_timeline_spans = 500;
    o.max_link_series_points = 200;
    o.include_critical_path_steps = true;
    mc::sim::Simulation s(mc::fuzz::catalog(), doc, o);
    double last = 0;
    for (long long run = 0; run < kMaxEvents; run += kSlice) {
      if (s.step(kSlice)) {
        (void)s.result().dump();
        return;
      }
      const double p = s.progress();
      if (!(p >= 0 && p <= 1) || p < last - 1e-12) mc::fuzz::finding("progress out of [0, 1] or going back");
      last = p;
    }
  });
  return 0;
}
