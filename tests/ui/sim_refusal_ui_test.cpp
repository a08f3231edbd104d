// sim_refusal_ui_test.cpp - an engine refusal reaches the simulator panel as its text (issue 15: "the
// browser must never freeze or die on any input: the UI shows the refusal"). The panel runs the same
// sim::Simulation the web page slices per frame; a config past the simulator's work budget is refused by
// the engine before anything is built, and the panel shows that message instead of a result.
#include "tests/ui/headless.h"
#include "ui/app.h"
#include "ui/explorer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

TEST(SimRefusalUi, APastBudgetConfigShowsTheEnginesMessage) {
  mc::test::Headless h(1440, 900);
  mc::test::NullPlatform platform;
  mc::ui::App app({mc::test::assets(), &platform, "sim"});
  auto& v = app.state().sim;
  // 60,032 GPUs of pure data parallelism (issue 15: 58 s in the simulator before its budget).
  v.config = mc::sim::parse_sim_request(nlohmann::json::parse(R"({"model": {"preset": "megatron21-1t"},
      "cluster": {"gpu": "a100-80gb", "gpus_per_node": 8, "nodes": 7504, "node_network_Gbps": 0.001},
      "parallel": {"tp": 1, "pp": 1, "dp": 60032, "micro_batch": 1, "global_batch": 120064}})"),
                                        "test");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (v.iteration_error.empty() && std::chrono::steady_clock::now() < deadline) {
    h.frame(app);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_NE(v.iteration_error.find("gradient all-reduces"), std::string::npos) << v.iteration_error;
  EXPECT_NE(v.iteration_error.find("sim.bucket_bytes"), std::string::npos) << v.iteration_error;
  EXPECT_FALSE(v.iteration.has_value()) << "no result beside the refusal";
  for (int i = 0; i < 3; ++i) h.frame(app);  // the panel keeps drawing with the message shown
}
