// sim_request_test.cpp - the simulate config's codec (sim/sim_request.h): the simulate config the project
// ships survives parse_sim_request -> to_json unchanged, each section's keys land in their fields, and a refused
// key is named where it is, with its range; what needs the machine (a straggler's GPU) is resolve's.
#include "sim/sim_request.h"
#include "core/json_doc.h"
#include "sim/sim_config.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

namespace {

using nlohmann::json;

std::string refusal(const json& config) {
  try {
    (void)mc::sim::parse_sim_request(config, "t.json");
  } catch (const mc::LoadError& e) {
    return e.what();
  }
  return "";
}

const json& full() {
  static const json j = json::parse(R"({
    "model": {"preset": "gpt3-175b"}, "cluster": {"preset": "azure-openai-2020", "gpus": 1024},
    "parallel": {"tp": 8, "pp": 16, "dp": 8, "micro_batch": 1, "global_batch": 1536},
    "stragglers": [{"gpu": 3, "speed": 0.5}], "degraded_links": [{"node": 2, "bandwidth_fraction": 0.25}],
    "sim": {"bucket_bytes": 40e6, "overlap_dp": true, "dp_algorithm": "tree", "blocking_p2p": false, "spines": 4,
            "nics_per_node": 8},
    "failures": {"profile": "opt-175b-2022", "gpu_per_hour": 1e-5, "restart_s": 600},
    "checkpoint": {"interval_s": 3600, "storage_accounts": 4},
    "data": {"cpu_cores": 1000, "bytes_per_token": 4}})");
  return j;
}

}  // namespace

TEST(SimRequest, TheShippedSimulateConfigSurvivesTheCodec) {
  // The shipped default and one with every section (the scenarios change the default key by key, "set").
  const std::vector<json> configs = {
      mc::JsonDoc::load(std::string(MC_SOURCE_DIR) + "/assets/configs/simulate.json").value(), full()};
  for (const json& c : configs) EXPECT_EQ(mc::sim::to_json(mc::sim::parse_sim_request(c, "shipped")), c) << c.dump();
}

TEST(SimRequest, EachSectionLandsInItsFields) {
  const mc::sim::SimRequest r = mc::sim::parse_sim_request(full(), "t.json");
  EXPECT_EQ(r.estimate.cluster.gpus, 1024);
  ASSERT_TRUE(r.stragglers && r.stragglers->size() == 1);
  EXPECT_EQ((*r.stragglers)[0], (mc::sim::StragglerRequest{3, 0.5}));
  ASSERT_TRUE(r.degraded_links);
  EXPECT_EQ((*r.degraded_links)[0].bandwidth_fraction, 0.25);
  ASSERT_TRUE(r.sim);
  EXPECT_EQ(r.sim->dp_algorithm, "tree");
  EXPECT_EQ(r.sim->spines, 4);
  ASSERT_TRUE(r.failures);
  EXPECT_EQ(r.failures->restart_s, 600);
  EXPECT_FALSE(r.failures->host_per_hour) << "a key not written stays unset (the profile's rate applies)";
  EXPECT_EQ(mc::sim::to_json(r), full());
  // resolve reads the request: the sections as the simulator takes them, the profile's rates under the overrides.
  const mc::sim::Resolved res = mc::sim::resolve(mc::test::catalog(), mc::JsonDoc::parse(full().dump(), "t.json"));
  EXPECT_EQ(res.sec.stragglers, (std::vector<std::pair<int, double>>{{3, 0.5}}));
  EXPECT_EQ(res.sec.bucket_bytes, 40e6);
  EXPECT_EQ(res.sec.overlap_dp, 1);
  EXPECT_EQ(res.sec.failures.gpu_per_gpu_hour, 1e-5);
  EXPECT_EQ(res.sec.failures.restart_s, 600);
  const mc::Record* opt = mc::test::catalog().table("failures")->find("opt-175b-2022");
  ASSERT_NE(opt, nullptr);
  EXPECT_EQ(res.sec.failures.host_per_node_hour, opt->get_or("host_per_node_hour", -1));
  EXPECT_EQ(res.sec.data_cpu_cores, 1000);
}

TEST(SimRequest, ARefusedKeyIsNamedWhereItIs) {
  json c = full();
  c["stragglers"][0]["speed"] = 0;
  EXPECT_NE(refusal(c).find("stragglers/0/speed"), std::string::npos) << refusal(c);
  EXPECT_NE(refusal(c).find("between 0.01 and 1"), std::string::npos) << refusal(c);
  c = full();
  c["sim"]["dp_algorithm"] = "butterfly";
  EXPECT_NE(refusal(c).find("expected one of auto, ring, tree, hierarchical"), std::string::npos) << refusal(c);
  c = full();
  c["checkpoint"]["every"] = 1;
  EXPECT_NE(refusal(c).find("every"), std::string::npos) << refusal(c);
  c = full();
  c["stragglers"] = 3;
  EXPECT_NE(refusal(c).find("stragglers"), std::string::npos) << refusal(c);
  c = full();
  c["parallel"]["tp"] = 0;
  EXPECT_NE(refusal(c).find("parallel/tp"), std::string::npos) << "the estimate's keys too: " << refusal(c);
  // A GPU the machine does not have is the machine's to refuse (resolve), located in the file.
  c = full();
  c["stragglers"][0]["gpu"] = 5000;
  EXPECT_EQ(refusal(c), "");
  try {
    (void)mc::sim::resolve(mc::test::catalog(), mc::JsonDoc::parse(c.dump(), "t.json"));
    ADD_FAILURE() << "GPU 5000 of a 1,024-GPU machine was accepted";
  } catch (const mc::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("between 0 and 1023"), std::string::npos) << e.what();
  }
}
