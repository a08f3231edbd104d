// The scaling laws against the published constants and their worked values (validation cases
// kaplan-power-laws, chinchilla-parametric-loss, gpt3-175b-config-and-compute, gpt3-pf-day-unit), and the
// compute-optimal allocation against a finite-difference check of its own loss curve.
#include "capital/scaling_laws.h"
#include "core/json_doc.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace {

using namespace mc::capital;

TEST(CapitalScaling, PetaflopDay) { EXPECT_PUBLISHED(kFlopsPerPfDay, "gpt3-pf-day-unit", "pf_day"); }

TEST(CapitalScaling, Gpt3Compute) {
  // C = 6 N D with Table D.1's parameter count and 300B tokens.
  const double n = mc::test::published_value("gpt3-175b-config-and-compute", "n_params (Table D.1)");
  const double c = training_flops(n, 300e9);
  EXPECT_PUBLISHED(c, "gpt3-175b-config-and-compute", "total_training_compute");
  EXPECT_PUBLISHED(flops_to_pf_days(c), "gpt3-175b-config-and-compute", "total_training_compute_pf_days");
}

TEST(CapitalScaling, KaplanPowerLaws) {
  EXPECT_PUBLISHED(kaplan_loss_N(1e9), "kaplan-power-laws", "L(N=1e9)");
  EXPECT_PUBLISHED(kaplan_loss_D(3e11), "kaplan-power-laws", "L(D=3e11)");
  EXPECT_PUBLISHED(kaplan_loss_C(pf_days_to_flops(3640)), "kaplan-power-laws", "L(C_min=3640 PF-days)");
  EXPECT_PUBLISHED(kaplan_critical_batch_tokens(2.0), "kaplan-power-laws", "B_crit(L=2.0)");
  // Doubling N multiplies L(N) by 2^-alpha_N (~0.95, Sec. 1.2).
  EXPECT_PUBLISHED(kaplan_loss_N(2e9) / kaplan_loss_N(1e9), "kaplan-power-laws",
                   "loss factor for doubling N (2^-alpha_N)");
  // eq. (1.5) reduces to eq. (1.1) when data is unlimited.
  EXPECT_NEAR(kaplan_loss_ND(1e9, 1e30), kaplan_loss_N(1e9), 1e-9);
}

TEST(CapitalScaling, ChinchillaParametricLoss) {
  EXPECT_PUBLISHED(chinchilla_loss(70e9, 1.4e12), "chinchilla-parametric-loss", "L(70e9, 1.4e12) Chinchilla");
  EXPECT_PUBLISHED(chinchilla_loss(280e9, 300e9), "chinchilla-parametric-loss", "L(280e9, 300e9) Gopher");
  EXPECT_PUBLISHED(chinchilla_a(), "chinchilla-parametric-loss", "a = beta/(alpha+beta) from rounded constants");
  EXPECT_PUBLISHED(chinchilla_G(), "chinchilla-parametric-loss", "G = (alpha A/(beta B))^(1/(alpha+beta))");
  Allocation a = allocate_chinchilla(5.76e23, ChinchillaApproach::parametric);
  EXPECT_PUBLISHED(a.params, "chinchilla-parametric-loss", "N_opt(C=5.76e23) via Approach-3 closed form");
}

TEST(CapitalScaling, AllocationSpendsTheBudget) {
  for (ScalingRule r : {ScalingRule::kaplan, ScalingRule::chinchilla})
    for (double c : {1e20, 3.14e23, 1e25}) {
      Allocation a = allocate(c, r);
      EXPECT_NEAR(training_flops(a.params, a.tokens), c, 1e-9 * c) << to_string(r);
      EXPECT_GT(a.predicted_loss, 0);
    }
}

TEST(CapitalScaling, ChinchillaOptimumIsTheMinimumOfItsIsoFlopCurve) {
  // Finite differences: moving N by +-2% at fixed C = 6ND raises the parametric loss.
  const double c = 3.14e23;
  Allocation a = allocate_chinchilla(c, ChinchillaApproach::parametric);
  for (double f : {0.98, 1.02}) {
    const double n = a.params * f, d = c / (6 * n);
    EXPECT_GT(chinchilla_loss(n, d), a.predicted_loss) << f;
  }
}

TEST(CapitalScaling, KaplanPrefersBiggerModelsThanChinchilla) {
  // The disagreement Hoffmann et al. 2022 is about: at GPT-3's budget Kaplan's rule buys a larger model
  // trained on fewer tokens per parameter.
  Allocation k = allocate(3.14e23, ScalingRule::kaplan), h = allocate(3.14e23, ScalingRule::chinchilla);
  EXPECT_GT(k.params, h.params);
  EXPECT_LT(k.tokens_per_param, h.tokens_per_param);
}

TEST(CapitalScaling, RuleNames) {
  EXPECT_EQ(parse_scaling_rule("kaplan"), ScalingRule::kaplan);
  EXPECT_THROW(parse_scaling_rule("hoffmann"), std::invalid_argument);
}

}  // namespace
