// The trainer's choice of device (TrainConfig::device, device/registry.h): "cpu" is the reference, "auto"
// picks the GPU only when one answers, "cuda" without one is refused with the reason.
// With a GPU, a whole multi-step run on the CUDA kernels (tp x pp x dp with ZeRO) follows the CPU run's
// losses and weights within fp32 tolerance; without one that comparison skips with the probe's reason.
#include "device/compute.h"
#include "device/registry.h"
#include "train/train.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

using mc::train::TrainConfig;
using mc::train::Trainer;

TrainConfig small(const std::string& device) {
  TrainConfig c;
  c.model.layers = 2;
  c.model.width = 32;
  c.model.heads = 4;
  c.model.context = 16;
  c.batch = 8;
  c.steps = 6;
  c.seed = 3;
  c.device = device;
  return c;
}

// Each registered kind is what its registration says: a device it opens carries its name and its kind of
// memory, the reference opens always, and "auto" is offered before every name.
TEST(TrainDevice, EveryRegisteredKindIsWhatItsRegistrationSays) {
  const auto& kinds = mc::device::device_kinds();
  ASSERT_FALSE(kinds.empty());
  EXPECT_TRUE(kinds.back().reference) << "the reference is tried last by auto";
  EXPECT_EQ(mc::device::reference_device_kind().name, "cpu");
  EXPECT_EQ(mc::device::device_choices().front(), "auto");
  EXPECT_EQ(mc::device::device_choices().size(), kinds.size() + 1);
  for (const mc::device::DeviceKind& k : kinds) {
    EXPECT_EQ(mc::device::find_device_kind(k.name), &k);
    EXPECT_FALSE(k.precisions.empty()) << k.name;
    std::string why;
    const std::unique_ptr<mc::device::Device> d = k.open(&why);
    if (k.reference) ASSERT_TRUE(d) << "the reference must always open: " << why;
    if (!d) {
      EXPECT_FALSE(why.empty()) << k.name << " neither opened nor said why";
      continue;
    }
    EXPECT_EQ(d->name(), k.name);
    EXPECT_EQ(d->host_addressable(), k.host_memory) << k.name;
    EXPECT_TRUE(mc::device::probe_of(k).available) << k.name << " opened though its probe found none";
  }
  EXPECT_EQ(mc::device::find_device_kind("tpu"), nullptr);
  std::string why;
  EXPECT_EQ(mc::device::open_kind("tpu", &why), nullptr);
  EXPECT_NE(why.find("not in this build"), std::string::npos) << why;
}

TEST(TrainDevice, CpuAndAutoWithoutGpuAreTheSameRunBitForBit) {
  std::string why;
  const bool gpu = mc::device::open_kind("cuda", &why) != nullptr;
  Trainer cpu(small("cpu"), mc::train::default_corpus());
  EXPECT_STREQ(cpu.backend_name(), "cpu");
  EXPECT_EQ(cpu.backend_note(), "cpu: requested");
  Trainer automatic(small("auto"), mc::train::default_corpus());
  EXPECT_STREQ(automatic.backend_name(), gpu ? "cuda" : "cpu") << automatic.backend_note();
  EXPECT_FALSE(automatic.backend_note().empty());
  if (gpu) GTEST_SKIP() << "a GPU answered (" << why << "): TrainDevice.CudaRunFollowsTheCpuRun compares them";
  for (int i = 0; i < 4; ++i) EXPECT_EQ(cpu.step().loss, automatic.step().loss) << "step " << i;
  EXPECT_EQ(cpu.full_parameters(), automatic.full_parameters());
}

TEST(TrainDevice, CudaWithoutGpuIsRefusedWithTheReasonAndTheFix) {
  std::string why;
  if (mc::device::open_kind("cuda", &why)) GTEST_SKIP() << "a GPU answered: " << why;
  try {
    Trainer t(small("cuda"), mc::train::default_corpus());
    FAIL() << "device cuda was accepted without a GPU";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    // Why no GPU can be used: the probe's reason, or that this build has no CUDA device at all.
    const std::string reason = mc::device::find_device_kind("cuda") ? why : "not in this build";
    EXPECT_NE(m.find(reason), std::string::npos) << m;
    EXPECT_EQ(m.find("using the CPU"), std::string::npos) << "it does not go on with the CPU: " << m;
    EXPECT_NE(m.find("auto"), std::string::npos) << m;  // what to do instead
  }
}

TEST(TrainDevice, UnknownDeviceIsALocatedConfigError) {
  try {
    mc::train::parse_config(nlohmann::json{{"device", "tpu"}}, "lab.json");
    ADD_FAILURE() << "device \"tpu\" was accepted";
  } catch (const std::exception& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("lab.json"), std::string::npos) << m;          // the file
    EXPECT_NE(m.find("device"), std::string::npos) << m;            // the key
    for (const std::string& choice : mc::device::device_choices())  // the choices: every registered kind
      EXPECT_NE(m.find(choice), std::string::npos) << choice << " missing from: " << m;
  }
  // The run's own keys are checked as strictly: a wrong type is a located error too.
  try {
    mc::train::parse_config(nlohmann::json{{"sample_every", "x"}}, "lab.json");
    ADD_FAILURE() << "sample_every \"x\" was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("sample_every"), std::string::npos) << e.what();
  }
  EXPECT_EQ(mc::train::parse_config(nlohmann::json{{"device", "cpu"}}, "lab.json").device, "cpu");
  EXPECT_EQ(mc::train::parse_config(nlohmann::json::object(), "lab.json").device, "auto");
}

TEST(TrainDevice, CudaRunFollowsTheCpuRun) {
  std::string why;
  if (!mc::device::open_kind("cuda", &why)) GTEST_SKIP() << why;
  for (auto [dp, tp, pp, zero] :
       {std::array<int, 4>{1, 1, 1, 0}, {2, 2, 1, 1}, {1, 2, 2, 0}, {2, 1, 1, 3}, {2, 2, 1, 3}, {2, 1, 1, 2}}) {
    TrainConfig a = small("cpu"), b = small("cuda");
    for (TrainConfig* c : {&a, &b})
      c->parallel.dp = dp, c->parallel.tp = tp, c->parallel.pp = pp, c->parallel.zero = zero;
    Trainer cpu(a, mc::train::default_corpus()), gpu(b, mc::train::default_corpus());
    ASSERT_STREQ(gpu.backend_name(), "cuda");
    for (int i = 0; i < 6; ++i) {
      const double lc = cpu.step().loss, lg = gpu.step().loss;
      EXPECT_NEAR(lc, lg, 2e-4 * std::max(1.0, std::fabs(lc)))
          << "dp " << dp << " tp " << tp << " pp " << pp << " zero " << zero << " step " << i;
    }
    const auto pc = cpu.full_parameters(), pg = gpu.full_parameters();
    ASSERT_EQ(pc.size(), pg.size());
    double worst = 0;
    for (size_t i = 0; i < pc.size(); ++i) worst = std::max(worst, double(std::fabs(pc[i] - pg[i])));
    EXPECT_LT(worst, 1e-3) << "largest weight difference after 6 steps";
    std::printf("    dp %d tp %d pp %d zero %d: largest weight difference %.3g\n", dp, tp, pp, zero, worst);
  }
}

}  // namespace
