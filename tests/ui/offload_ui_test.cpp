// offload_ui_test.cpp - the Parallelism chapter's offloading control: a GPT-3 175B layout that does not fit in
// a Selene A100's 80 GB with ZeRO-3 and micro-batch 16 fits once the optimizer and the checkpoints go to the
// hosts' memory, and the panel shows what went there and what the copies cost, from the estimate it holds.
#include "tests/ui/headless.h"

#include "core/format.h"

#include <gtest/gtest.h>

using mc::test::assets;
using mc::test::Headless;
using mc::test::NullPlatform;

namespace {

// The Parallelism chapter on a headless screen of w x h, settled: set its config, then call settle().
struct PerfScreen {
  Headless h;
  NullPlatform platform;
  mc::ui::App app{{assets(), &platform, "perf"}};
  mc::ui::PerfView& v = app.state().perf;
  PerfScreen(int w, int ht) : h(w, ht) { settle(); }
  void settle() {
    for (int i = 0; i < 3; ++i) h.frame(app);
  }
};

}  // namespace

TEST(PerfOffloadControl, TheOffloadedStateAndItsCopiesAreShownFromTheEstimate) {
  PerfScreen p(1280, 720);
  auto& v = p.v;
  auto& h = p.h;
  v.config = mc::perf::parse_request(nlohmann::json::parse(R"({
      "model": {"preset": "gpt3-175b"}, "cluster": {"preset": "selene-2021", "gpus": 1024},
      "parallel": {"tp": 1, "pp": 1, "dp": 1024, "micro_batch": 16, "global_batch": 16384, "zero": 3,
                   "recompute": "full"}})"),
                                     "test");
  p.settle();
  ASSERT_TRUE(v.valid) << v.error;
  EXPECT_FALSE(v.estimate.fits);
  EXPECT_EQ(h.text.find("On the host"), std::string::npos);
  ASSERT_TRUE(p.app.state().probe.widget_rects.count("perf.offload")) << "the offload control is not on screen";

  v.config.parallel.value().offload_optimizer = true;
  v.config.parallel.value().offload_activations = true;
  p.settle();
  ASSERT_TRUE(v.valid) << v.error;
  EXPECT_TRUE(v.estimate.fits);
  EXPECT_GT(v.estimate.memory.host, 0);
  // The control shows the state the config holds; the panel's figures are the estimate's.
  EXPECT_NE(h.text.find("optimizer + checkpoints"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("On the host: " + mc::format_gib(v.estimate.memory.host)), std::string::npos) << h.text;
  char copies[64];
  std::snprintf(copies, sizeof copies, "host copies %.2f s", v.estimate.time.offload);
  EXPECT_NE(h.text.find(copies), std::string::npos) << h.text;
}

// On a machine whose servers' CPUs were never published (the 2020 Azure supercomputer) the control's choice is
// refused in the panel by the control's name, with a way out a student can take there: another cluster.
TEST(PerfOffloadControl, AClusterWithoutHostFiguresSaysSoByTheControl) {
  PerfScreen p(1440, 900);
  auto& v = p.v;
  auto& h = p.h;
  v.config.parallel.value().zero = 1;
  v.config.parallel.value().offload_optimizer = true;
  p.settle();
  EXPECT_FALSE(v.valid);
  EXPECT_EQ(v.error.rfind("'offload'", 0), 0u) << v.error;
  EXPECT_NE(v.error.find("pick another cluster"), std::string::npos) << v.error;
  EXPECT_NE(h.text.find("pick another cluster"), std::string::npos) << h.text;
}
