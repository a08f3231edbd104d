// The scaling sweep's power-law fits (engine/train/scaling.h) against exact synthetic data, and where the
// sweep's irreducible loss comes from.
#include "train/scaling.h"
#include "train/storage/corpus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

// The scaling sweep's fits recover a known power law (the data are exact, so the fit must be too).
TEST(TrainScalingFit, RecoversAKnownPowerLawWithAndWithoutC) {
  const double a = 3e4, b = -0.45, c = 0.3;
  std::vector<double> x, l;
  for (double v : {1e9, 3e9, 1e10, 3e10, 1e11}) {
    x.push_back(v);
    l.push_back(a * std::pow(v, b) + c);
  }
  const mc::train::PowerLawFit given = mc::train::fit_power_law_given_c(x, l, c);
  EXPECT_NEAR(given.a / a, 1.0, 1e-9);
  EXPECT_NEAR(given.b, b, 1e-12);
  EXPECT_LT(given.rms_error, 1e-12);
  const mc::train::PowerLawFit free = mc::train::fit_power_law(x, l);  // c on a grid of 400 steps
  EXPECT_NEAR(free.c, c, l.back() / 400 * 1.01);
  EXPECT_NEAR(free(1e12), a * std::pow(1e12, b) + c, 0.01);
  EXPECT_THROW(mc::train::fit_power_law_given_c(x, l, l.back()), std::invalid_argument);
  // Equal x values: no slope to fit (n*sxx - sx*sx is rounding noise there, not 0): refused.
  const std::vector<double> same = {1e9, 1e9, 1e9};
  EXPECT_THROW(mc::train::fit_power_law_given_c(same, {3.0, 2.0, 1.0}, 0.5), std::invalid_argument);
  EXPECT_THROW(mc::train::fit_power_law(same, {3.0, 2.0, 1.0}), std::invalid_argument);
}

// The irreducible loss is what the caller says it knows about its corpus, not a guess from the bytes: a
// user's text that happens to equal the built-in one has no known floor, and another text drawn from the
// built-in language (a different seed, so different bytes) has that language's entropy as its floor.
TEST(TrainScalingSweep, EntropyFloorComesFromTheCaller) {
  using namespace mc::train;
  const Corpus builtin = resolve_corpus("synthetic", std::string(MC_SOURCE_DIR) + "/assets");
  ASSERT_GT(builtin.entropy_nats_per_byte, 0);
  ScalingConfig unknown = ScalingConfig::quick();  // corpus_entropy_nats_per_byte = 0: not known
  EXPECT_EQ(ScalingSweep(unknown, builtin.text).result().entropy_floor, 0.0);

  const std::string other = generate_text(load_synthetic_language(builtin.path), 16 * 1024, 12);
  ASSERT_NE(other, builtin.text);
  ScalingConfig known = ScalingConfig::quick();
  known.corpus_entropy_nats_per_byte = builtin.entropy_nats_per_byte;
  ScalingSweep sweep(known, other);
  EXPECT_EQ(sweep.result().entropy_floor, builtin.entropy_nats_per_byte);
  while (!sweep.done()) sweep.advance(1000);
  EXPECT_TRUE(sweep.result().c_known);  // the floor is below every loss, so the fits use it as c
  EXPECT_EQ(sweep.result().fit_compute.c, builtin.entropy_nats_per_byte);

  known.corpus_entropy_nats_per_byte = -1;
  EXPECT_THROW(ScalingSweep(known, other), std::invalid_argument);
}
