// The sliced simulation (what the browser build runs a slice per frame) against the one-shot call: the
// same answer to the last bit whatever the slice size, with progress rising monotonically to 1.
#include "catalog/catalog.h"
#include "sim/iteration.h"
#include "sim/sim.h"

#include "sim_test_util.h"

#include <gtest/gtest.h>

using mc::json;
using namespace mc::sim;

namespace {

using mc::sim::test::catalog;

// Host timings differ between any two runs; everything else must match.
void drop_wall_times(json& j) {
  j["sim"].erase("wall_s");
  j["sim"].erase("events_per_s");
  if (j.contains("run")) j["run"].erase("wall_s");
}

const json kConfig = {{"model", {{"preset", "gpt3-2.7b"}}},
                      {"cluster", {{"preset", "azure-openai-2020"}, {"gpus", 64}}},
                      {"parallel",
                       {{"tp", 2},
                        {"pp", 2},
                        {"dp", 16},
                        {"micro_batch", 1},
                        {"global_batch", 128},
                        {"zero", 3},
                        {"schedule", "interleaved"},
                        {"virtual_stages", 2}}},
                      {"stragglers", {{{"gpu", 21}, {"speed", 0.7}}}},
                      {"degraded_links", {{{"node", 5}, {"bandwidth_fraction", 0.3}}}}};

}  // namespace

TEST(SimSliced, SameResultAsTheOneShotCallForAnySliceSize) {
  SimOptions o;
  o.timeline_gpus = {0, 21, 63};
  o.run_days = 2;
  json ref = simulate_json(catalog(), kConfig, o);
  drop_wall_times(ref);
  for (long long slice : {1LL, 7LL, 500LL, 1LL << 40}) {
    Simulation s(catalog(), kConfig, o);
    double last = 0;
    int steps = 0;
    while (!s.step(slice)) {
      const double p = s.progress();
      EXPECT_GE(p, last);
      EXPECT_LT(p, 1.0);
      last = p;
      ++steps;
    }
    EXPECT_TRUE(s.done());
    EXPECT_EQ(s.progress(), 1.0);
    if (slice == 1) {
      EXPECT_GT(steps, 100);
    }
    json out = s.result();
    drop_wall_times(out);
    EXPECT_EQ(out, ref) << "slice " << slice;
  }
}

TEST(SimSliced, IterationSimMatchesSimulateIterationSpanForSpan) {
  const Topology topo = mc::sim::test::nodes_of_4(8);
  IterationSpec it = mc::sim::test::tp2_pp2_dp8(1e-3);
  it.tp_buffer_bytes = 1e7;
  it.pp_bytes = 1e6;
  it.stragglers = {{5, 0.5}};
  const IterationResult ref = simulate_iteration(topo, it);
  IterationSim sim(topo, it);
  EXPECT_THROW(sim.take_result(), std::logic_error);
  while (!sim.step(3)) {
  }
  EXPECT_EQ(sim.events(), ref.events);
  const IterationResult r = sim.take_result();
  EXPECT_EQ(r.iteration_s, ref.iteration_s);
  ASSERT_EQ(r.workers.size(), ref.workers.size());
  for (size_t w = 0; w < r.workers.size(); ++w) {
    ASSERT_EQ(r.workers[w].spans.size(), ref.workers[w].spans.size());
    for (size_t i = 0; i < r.workers[w].spans.size(); ++i) {
      EXPECT_EQ(r.workers[w].spans[i].start_s, ref.workers[w].spans[i].start_s);
      EXPECT_EQ(r.workers[w].spans[i].end_s, ref.workers[w].spans[i].end_s);
    }
  }
  EXPECT_EQ(r.critical_path.size(), ref.critical_path.size());
  EXPECT_EQ(r.link_bytes, ref.link_bytes);
}

TEST(SimSliced, BadConfigThrowsAtConstructionNotMidway) {
  json bad = kConfig;
  bad["stragglers"] = {{{"gpu", 640}, {"speed", 0.5}}};
  EXPECT_THROW(Simulation(catalog(), bad, SimOptions{}), mc::LoadError);
  SimOptions o;
  o.timeline_gpu = 64;  // the layout uses GPUs 0..63
  EXPECT_THROW(Simulation(catalog(), kConfig, o), mc::LoadError);
}
