// The scaling sweep's power-law fits (engine/train/scaling.h) against exact synthetic data.
#include "train/scaling.h"

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
