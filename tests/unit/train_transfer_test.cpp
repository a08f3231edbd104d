// What a training step moves across the host/device edge (device/compute.h). The trainer keeps every
// worker's parameters, gradients, optimizer moments, activations and scratch on its device for the whole
// run; a step sends only its batch's token ids in and brings only the loss and gradient-norm partials out.
// The CPU reference device counts every copy exactly as the GPU's would be made (the trainer's code is the
// same for both), so this is the test of the CUDA path's traffic on a machine without a GPU.
//
// Also here: the precisions (fp32 / tf32 / bf16) as the CPU reference emulates them, against their
// definitions and against an fp32 run's loss curve.
#include "device/compute.h"
#include "train/train.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace {

using mc::device::Precision;
using mc::train::TrainConfig;
using mc::train::Trainer;

TrainConfig small(int dp, int tp, int pp, int zero) {
  TrainConfig c;
  c.model.layers = 4;  // divisible by every pp below
  c.model.width = 32;
  c.model.heads = 4;
  c.model.context = 16;
  c.batch = 8;
  c.steps = 10;
  c.seed = 7;
  c.device = "cpu";
  c.parallel.dp = dp, c.parallel.tp = tp, c.parallel.pp = pp, c.parallel.zero = zero;
  return c;
}

// Every layout trains on the device; steps after the first (which also allocate) and the first alike
// move exactly the token rows of each worker that reads them (the embedding's stage and the loss's) in,
// and the two double partials of each worker out.
TEST(TrainTransfer, AStepMovesOnlyTokenIdsInAndScalarsOut) {
  const std::array<std::array<int, 4>, 12> layouts = {{{1, 1, 1, 0},
                                                       {2, 1, 1, 0},
                                                       {1, 2, 1, 0},
                                                       {1, 1, 2, 0},
                                                       {2, 2, 2, 0},
                                                       {4, 1, 1, 1},
                                                       {2, 2, 1, 1},
                                                       {2, 1, 2, 1},
                                                       {2, 1, 1, 2},
                                                       {2, 2, 1, 2},
                                                       {2, 1, 1, 3},
                                                       {4, 2, 1, 3}}};
  for (const auto& [dp, tp, pp, zero] : layouts) {
    const TrainConfig c = small(dp, tp, pp, zero);
    Trainer t(c, mc::train::default_corpus());
    const std::string where = "dp " + std::to_string(dp) + " tp " + std::to_string(tp) + " pp " + std::to_string(pp) +
                              " zero " + std::to_string(zero);
    EXPECT_EQ(t.transfers().h2d_bytes, 0.0) << where << ": setting up is not a step";
    const int workers = dp * tp * pp;
    // Workers on the first or the last stage read their dp rank's rows (pp = 1: every worker).
    const int readers = dp * tp * (pp == 1 ? 1 : 2);
    const double rows = double(c.batch / dp) * (c.model.context + 1);
    for (int step = 0; step < 3; ++step) {
      t.reset_transfers();
      t.step();
      const mc::device::Transfers& x = t.transfers();
      EXPECT_EQ(x.h2d_bytes, readers * rows * sizeof(int32_t)) << where << " step " << step;
      EXPECT_EQ(x.h2d_copies, double(readers)) << where << " step " << step;
      EXPECT_EQ(x.d2h_bytes, workers * 2.0 * sizeof(double)) << where << " step " << step;
      EXPECT_EQ(x.d2h_copies, double(workers)) << where << " step " << step;
      if (workers > 1) {
        EXPECT_GT(x.d2d_bytes, 0.0) << where << ": the collectives move on the device";
      }
    }
  }
}

// The edges are where the host sees the run: a checkpoint, the gathered model, a sample. Each is counted.
TEST(TrainTransfer, EdgesCrossOnlyWhenAsked) {
  Trainer t(small(2, 1, 1, 1), mc::train::default_corpus());
  t.step();
  t.reset_transfers();
  const std::vector<float> p = t.full_parameters();
  EXPECT_GE(t.transfers().d2h_bytes, double(p.size()) * sizeof(float)) << "the whole model came to the host";
  EXPECT_EQ(t.transfers().h2d_bytes, 0.0);
}

// The precisions against their definitions: tf32 keeps 10 mantissa bits, bf16 7, round to nearest even.
TEST(TrainPrecision, RoundingFollowsTheFormats) {
  using mc::device::round_to;
  const float one_plus = 1.0f + std::ldexp(1.0f, -12);  // representable in fp32, not in tf32 or bf16
  EXPECT_EQ(round_to(Precision::fp32, one_plus), one_plus);
  EXPECT_EQ(round_to(Precision::tf32, one_plus), 1.0f);  // 2^-12 < half an ulp of tf32 (2^-11)
  EXPECT_EQ(round_to(Precision::tf32, 1.0f + std::ldexp(1.0f, -10)), 1.0f + std::ldexp(1.0f, -10));  // kept
  EXPECT_EQ(round_to(Precision::bf16, 1.0f + std::ldexp(1.0f, -7)), 1.0f + std::ldexp(1.0f, -7));    // kept
  EXPECT_EQ(round_to(Precision::bf16, 1.0f + std::ldexp(1.0f, -9)), 1.0f);                           // dropped
  // Ties go to even: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7 (bf16); 1 + 3 * 2^-8 between 1 + 2^-7
  // and 1 + 2^-6, whose last kept bit is 0.
  EXPECT_EQ(round_to(Precision::bf16, 1.0f + std::ldexp(1.0f, -8)), 1.0f);
  EXPECT_EQ(round_to(Precision::bf16, 1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(round_to(Precision::bf16, -2.5f), -2.5f);
  // bf16 is the top half of an fp32 word, as Kalamkar et al. 2019 define it.
  const float r = round_to(Precision::bf16, 3.14159265f);
  uint32_t u;
  std::memcpy(&u, &r, sizeof u);
  EXPECT_EQ(u & 0xFFFFu, 0u);
  EXPECT_TRUE(std::isnan(round_to(Precision::bf16, std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(round_to(Precision::tf32, std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  Precision p;
  EXPECT_TRUE(mc::device::parse_precision("bf16", &p));
  EXPECT_EQ(p, Precision::bf16);
  EXPECT_FALSE(mc::device::parse_precision("fp16", &p));
}

// A bf16 (and a tf32) run follows the fp32 run's loss curve closely, as mixed precision does (fp32 master
// weights and reductions), yet is not the same run: the products really are rounded.
TEST(TrainPrecision, ReducedPrecisionRunsFollowTheFp32Curve) {
  TrainConfig c = small(2, 2, 1, 0);
  c.steps = 20;
  Trainer fp32(c, mc::train::default_corpus());
  c.precision = Precision::tf32;
  Trainer tf32(c, mc::train::default_corpus());
  c.precision = Precision::bf16;
  Trainer bf16(c, mc::train::default_corpus());
  double worst_tf32 = 0, worst_bf16 = 0;
  bool differs = false;
  for (int i = 0; i < c.steps; ++i) {
    const double a = fp32.step().loss, b = tf32.step().loss, d = bf16.step().loss;
    worst_tf32 = std::max(worst_tf32, std::fabs(b - a) / a);
    worst_bf16 = std::max(worst_bf16, std::fabs(d - a) / a);
    differs = differs || d != a;
  }
  EXPECT_TRUE(differs) << "bf16 gave the fp32 run bit for bit: nothing was rounded";
  EXPECT_LT(worst_tf32, 1e-4) << "tf32 strays from fp32";
  EXPECT_LT(worst_bf16, 2e-3) << "bf16 strays from fp32";
  EXPECT_LE(worst_tf32, worst_bf16) << "tf32 keeps more bits than bf16";
  std::printf("    20 steps, largest relative loss difference from fp32: tf32 %.2e, bf16 %.2e\n", worst_tf32,
              worst_bf16);
  EXPECT_GT(fp32.losses().front() - fp32.losses().back(), 0.3) << "the runs learn";
}

TEST(TrainPrecision, ConfigKeyIsLocatedAndChecked) {
  EXPECT_EQ(mc::train::parse_config(nlohmann::json{{"precision", "bf16"}}, "lab.json").precision, Precision::bf16);
  EXPECT_EQ(mc::train::parse_config(nlohmann::json::object(), "lab.json").precision, Precision::fp32);
  try {
    mc::train::parse_config(nlohmann::json{{"precision", "fp8"}}, "lab.json");
    ADD_FAILURE() << "precision fp8 was accepted";
  } catch (const std::exception& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("lab.json"), std::string::npos) << m;
    EXPECT_NE(m.find("precision"), std::string::npos) << m;
    EXPECT_NE(m.find("bf16"), std::string::npos) << m;
  }
}

}  // namespace
