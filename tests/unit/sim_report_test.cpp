// sim_report_test.cpp - the typed report (engine/sim/sim_report.h) and its JSON say the same thing: the
// panels read fields, the CLI prints to_json, and a field wired to the wrong key would show a class one
// number in the app and another in `megacluster simulate`.
#include "sim/sim.h"
#include "sim_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

using nlohmann::json;

namespace {

const json kConfig = json::parse(R"({"model": {"preset": "gpt3-2.7b"},
  "cluster": {"preset": "azure-openai-2020", "gpus": 64},
  "parallel": {"tp": 4, "pp": 2, "dp": 8, "micro_batch": 1, "global_batch": 64},
  "stragglers": [{"gpu": 5, "speed": 0.5}]})");

}  // namespace

TEST(SimReport, FieldsAreTheNumbersTheJsonPrints) {
  mc::sim::SimOptions o;
  o.run_days = 10;
  o.seed = 3;
  o.timeline_gpu = 5;
  o.timeline_gpus = {0, 5, 63};
  o.include_critical_path_steps = true;
  const mc::sim::SimReport r = mc::sim::simulate(mc::sim::test::catalog(), kConfig, o);
  const json j = mc::sim::to_json(r);
  EXPECT_EQ(j["iteration_time_s"].get<double>(), r.simulated.iteration_time_s);
  EXPECT_EQ(j["analytic"]["iteration_time_s"].get<double>(), r.analytic.iteration_time_s);
  EXPECT_EQ(j["mfu"].get<double>(), r.simulated.mfu);
  EXPECT_EQ(j["training_days"].get<double>(), r.simulated.training_days);
  EXPECT_EQ(j["time_breakdown_s"]["bubble"].get<double>(), r.simulated.time.bubble);
  EXPECT_EQ(j["layout"]["dp"].get<int>(), r.config.layout.dp);
  const json& sim = j["sim"];
  EXPECT_EQ(sim["events"].get<long long>(), r.sim.events);
  EXPECT_EQ(sim["critical"]["stage"].get<int>(), r.sim.critical_stage);
  EXPECT_EQ(sim["critical_gpu_breakdown_s"]["dp_wait"].get<double>(), r.sim.critical_gpu_breakdown.dp_wait_s);
  EXPECT_EQ(sim["replica_classes"].size(), r.sim.replica_class_replicas.size());
  EXPECT_EQ(sim["critical_path"]["forward_s"].get<double>(), r.sim.critical_path.seconds("forward"));
  EXPECT_EQ(sim["critical_path"]["steps"].size(), r.sim.critical_path.steps.size());
  ASSERT_TRUE(r.sim.timeline);
  EXPECT_EQ(sim["timeline"]["speed"].get<double>(), r.sim.timeline->speed);
  EXPECT_LT(r.sim.timeline->speed, 1.0) << "GPU 5 is the straggler";
  ASSERT_EQ(r.sim.timelines.size(), 3u);
  EXPECT_EQ(sim["timelines"][2]["gpu"].get<int>(), 63);
  EXPECT_EQ(sim["timelines"][1]["spans"][0]["kind"].get<std::string>(),
            mc::sim::to_string(r.sim.timelines[1].spans[0].kind));
  EXPECT_EQ(sim["links"]["node_nic_utilisation"].get<std::vector<double>>(), r.sim.links.node_nic_utilisation);
  EXPECT_EQ(sim["links"]["hottest"][0]["name"].get<std::string>(), r.sim.links.hottest[0].name);
  ASSERT_TRUE(r.sim.links.has_series);
  EXPECT_EQ(sim["links"]["utilisation_series"]["classes"]["nic_up"].get<std::vector<double>>(),
            r.sim.links.class_series[size_t(mc::sim::LinkClass::nic_up)]);
  ASSERT_TRUE(r.run);
  EXPECT_EQ(j["run"]["interruptions"].get<int>(), r.run->interruptions);
  EXPECT_EQ(j["run"]["goodput"].get<double>(), r.run->goodput);
  EXPECT_EQ(j["run"]["interruptions_by_cause"]["switch"].get<int>(),
            r.run->interruptions_by_cause[size_t(mc::sim::Cause::switch_)]);
  EXPECT_EQ(j["run"]["events"].size(), r.run->events.size());
  EXPECT_EQ(j["run"]["seed"].get<unsigned long long>(), 3u);
}

TEST(SimReport, SlicedReportIsTheOneShotReport) {
  // The panels take Simulation::report() after stepping in slices; the CLI calls simulate(). Same numbers.
  mc::sim::SimOptions o;
  o.timeline_gpus = {0, 1};
  const mc::sim::SimReport one = mc::sim::simulate(mc::sim::test::catalog(), kConfig, o);
  mc::sim::Simulation s(mc::sim::test::catalog(), kConfig, o);
  while (!s.step(97)) {
  }
  const mc::sim::SimReport sliced = s.report();
  EXPECT_EQ(sliced.simulated.iteration_time_s, one.simulated.iteration_time_s);
  EXPECT_EQ(sliced.sim.events, one.sim.events);
  ASSERT_EQ(sliced.sim.timelines.size(), one.sim.timelines.size());
  EXPECT_EQ(sliced.sim.timelines[1].spans.size(), one.sim.timelines[1].spans.size());
  EXPECT_FALSE(sliced.run) << "no run asked";
}
