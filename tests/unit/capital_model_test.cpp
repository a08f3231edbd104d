// Money -> compute -> model, the capped-profit waterfall, the 2019 partnership and the compute trend,
// against published figures (Lambda's $4.6M for GPT-3, the 100x cap, the $1B, 3.4-month doubling).
#include "capital/compute_cost.h"
#include "capital/trend.h"
#include "capital/waterfall.h"
#include "catalog/catalog.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace {

using namespace mc::capital;
using mc::test::catalog;

TEST(CapitalCost, Gpt3AtLambdasAssumptionsReproducesTheirEstimate) {
  // Lambda: 3.14e23 FLOPs at 28 TFLOP/s per V100 at the lowest 3-year reserved price -> about $4.6M.
  mc::json g = gpt3_priced_json(catalog(), default_plan_config(catalog()));
  const double published_usd = g["published_usd"].get<double>();
  EXPECT_NEAR(g["at_published_rate"]["rent_usd"].get<double>(), published_usd, 0.02 * published_usd);
  // GPU-hours: 3.14e23 / 28e12 / 3600 = 3.1e6 (355 GPU-years, as Lambda wrote).
  EXPECT_NEAR(g["at_published_rate"]["gpu_hours"].get<double>() / (24 * 365.25), 355, 2);
  // Owning is cheaper per hour at the assumed prices, and the low published estimate is below both.
  EXPECT_LT(g["at_published_rate"]["build_usd"].get<double>(), g["at_published_rate"]["rent_usd"].get<double>());
  EXPECT_LT(g["published_low_usd"].get<double>(), g["at_published_rate"]["build_usd"].get<double>());
}

TEST(CapitalCost, DollarsAndFlopsRoundTrip) {
  PlanConfig c = default_plan_config(catalog());
  c.budget_usd = 1e9;
  PlanResult by_usd = plan(c);
  c.budget_usd = 0;
  c.budget_flops = by_usd.flops;
  PlanResult by_flops = plan(c);
  EXPECT_NEAR(by_flops.cost_usd, 1e9, 1e-6 * 1e9);
  EXPECT_NEAR(by_flops.gpu_hours, by_usd.gpu_hours, 1e-9 * by_usd.gpu_hours);
  // GPU-hours -> FLOPs: hours * 3600 * peak * utilisation.
  EXPECT_NEAR(by_usd.flops, by_usd.gpu_hours * 3600 * c.gpu_peak_flops_per_s * c.utilisation, 1e-9 * by_usd.flops);
}

TEST(CapitalCost, BuildCostScalesAsItsParts) {
  // The inputs stated here (the arithmetic is under test, not the catalog's prices).
  const BuildConfig given{.gpu_price_usd = 10000,
                          .server_price_usd = 50000,
                          .network_per_server_usd = 20000,
                          .gpus_per_server = 8,
                          .gpu_power_W = 300,
                          .server_power_W = 1500,
                          .pue = 1.2,
                          .usd_per_kWh = 0.07,
                          .amortisation_years = 4};
  BuildConfig b = given;
  BuildCostBreakdown base = build_cost(b);
  b.pue *= 2;
  EXPECT_NEAR(build_cost(b).power_usd_per_gpu_hour, 2 * base.power_usd_per_gpu_hour, 1e-12);
  b = given;
  b.amortisation_years *= 2;
  EXPECT_NEAR(build_cost(b).capex_usd_per_gpu_hour, base.capex_usd_per_gpu_hour / 2, 1e-12);
  // One V100 at 300 W with 1.5 kW of server over 8 GPUs, PUE 1.2: 0.585 kW at the wall.
  EXPECT_NEAR(base.power_kW_per_gpu, (300 + 1500.0 / 8) * 1.2 / 1000, 1e-12);
}

TEST(CapitalCost, UnsetPricesAreRefusedNotAssumed) {
  // A config that never read the catalog carries no prices: refused, naming the field and the fix.
  try {
    build_cost(BuildConfig{});
    ADD_FAILURE() << "an unset build config was priced";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("build.amortisation_years"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("default_plan_config"), std::string::npos) << e.what();
  }
  PlanConfig c;
  c.budget_usd = 1e6;
  EXPECT_THROW(plan(c), std::invalid_argument);
  // From the catalog, every one is set.
  const PlanConfig d = default_plan_config(catalog());
  EXPECT_GT(d.gpu_peak_flops_per_s, 0);
  EXPECT_GT(d.rent_usd_per_gpu_hour, 0);
  EXPECT_GT(d.cluster_gpus, 0);
  EXPECT_GT(build_cost(d.build).usd_per_gpu_hour, 0);
}

// Dollars buy budget / price GPU-hours each way; building is cheaper per hour, so it buys more.
TEST(CapitalCost, RentOrBuildDividesTheBudgetByEachPrice) {
  mc::capital::PlanConfig c = mc::capital::default_plan_config(catalog());
  c.budget_usd = 1e9;
  const mc::capital::RentOrBuild r = mc::capital::rent_or_build(c);
  const double build_price = mc::capital::build_cost(c.build).usd_per_gpu_hour;
  EXPECT_NEAR(r.rented_gpu_hours, 1e9 / c.rent_usd_per_gpu_hour, 1e-6 * r.rented_gpu_hours);
  EXPECT_NEAR(r.built_gpu_hours, 1e9 / build_price, 1e-6 * r.built_gpu_hours);
  EXPECT_NEAR(r.built_over_rented, c.rent_usd_per_gpu_hour / build_price, 1e-9);
  c.budget_usd = 0, c.budget_flops = 1e23;
  EXPECT_THROW(mc::capital::rent_or_build(c), std::invalid_argument);
}

TEST(CapitalCost, PlanRejectsBadBudgets) {
  PlanConfig c;
  EXPECT_THROW(plan(c), std::invalid_argument);  // no budget
  c.budget_usd = 1, c.budget_flops = 1;
  EXPECT_THROW(plan(c), std::invalid_argument);  // both
  c.budget_flops = 0, c.utilisation = 1.5;
  EXPECT_THROW(plan(c), std::invalid_argument);
  EXPECT_THROW(plan_config_from_json({{"utilisaton", 0.3}}, PlanConfig{}), std::invalid_argument);
}

TEST(CapitalWaterfall, FirstRoundCapIsThePublishedOne) {
  const double cap = mc::test::published_value("openai-lp-cap", "first_round_return_cap");
  EXPECT_EQ(default_waterfall_config(catalog()).holders.front().cap_multiple, cap);
  EXPECT_EQ(catalog().table("prices")->find("openai-lp-2019")->get("cap_multiple"), cap);
}

TEST(CapitalWaterfall, ConservesMoneyAndNeverExceedsACap) {
  WaterfallConfig c = default_waterfall_config(catalog());
  ASSERT_EQ(c.holders.size(), 3u) << "assets/catalog/capital.json: first round, employees, Microsoft";
  c.profit_growth = 2.5;  // a stream large enough to hit every cap
  WaterfallResult r = run_waterfall(c);
  double paid = r.nonprofit_total_usd;
  for (size_t i = 0; i < c.holders.size(); ++i) {
    paid += r.holder_total_usd[i];
    EXPECT_LE(r.holder_total_usd[i], c.holders[i].cap_multiple * c.holders[i].basis_usd * (1 + 1e-12));
    EXPECT_GT(r.holder_capped_year[i], 0) << c.holders[i].name;
  }
  EXPECT_NEAR(paid, r.profit_total_usd, 1e-9 * r.profit_total_usd);
  for (const auto& y : r.years) {
    double s = y.to_nonprofit_usd;
    for (double h : y.to_holder_usd) s += h;
    EXPECT_NEAR(s, std::max(0.0, y.profit_usd), 1e-6);
  }
}

TEST(CapitalWaterfall, BelowTheCapsEveryoneGetsTheirShare) {
  WaterfallConfig c = default_waterfall_config(catalog());
  c.profit_usd = {1e6, -5e5, 2e6};  // small, with a loss year
  WaterfallResult r = run_waterfall(c);
  for (size_t i = 0; i < c.holders.size(); ++i) EXPECT_NEAR(r.holder_total_usd[i], c.holders[i].share * 3e6, 1e-6);
  EXPECT_EQ(r.years[1].to_nonprofit_usd, 0);
  c.holders[0].share = 0.9;  // shares above 1 are refused
  EXPECT_THROW(run_waterfall(c), std::invalid_argument);
}

TEST(CapitalPartnership, InstallmentsAddUpToTheInvestment) {
  const double total = mc::test::published_value("microsoft-openai-2019", "investment");
  PartnershipConfig c = default_partnership_config(catalog(), 1.5, 125e12 * 0.3);
  EXPECT_EQ(c.total_usd, total) << "the default is the published $1B";
  EXPECT_EQ(default_waterfall_config(catalog()).holders.back().basis_usd, total) << "Microsoft's basis is the same $1B";
  c.installment_years = 7;
  c.cloud_credit_fraction = 0.25;
  double cash = 0, credit = 0;
  for (const auto& y : run_partnership(c)) cash += y.cash_usd, credit += y.credit_usd;
  EXPECT_NEAR(cash + credit, total, 1e-3);
  EXPECT_NEAR(credit, 0.25 * total, 1e-3);
  c.cloud_credit_fraction = 2;
  EXPECT_THROW(run_partnership(c), std::invalid_argument);
}

TEST(CapitalTrend, ThreePointFourMonthDoublingIs300000xInAboutFiveYears) {
  ComputeTrend t = load_trend(catalog());
  EXPECT_EQ(t.doubling_months, 3.4);
  EXPECT_EQ(t.growth, 300000);
  // 2^(years * 12 / 3.4) = 300,000: about 5.2 years, i.e. 2012 to 2017-2018 as the post covers.
  EXPECT_NEAR(std::exp2(t.period_years() * 12 / t.doubling_months), t.growth, 1e-6 * t.growth);
  EXPECT_GT(t.start_year + t.period_years(), 2017);
  EXPECT_LT(t.start_year + t.period_years(), 2018.5);
  EXPECT_NEAR(t.flops_at(t.anchor_year + 1) / t.flops_at(t.anchor_year), t.factor_per_year(), 1e-9);
  // The runs are in year order and include GPT-3's published compute.
  auto runs = run_points(catalog());
  ASSERT_GE(runs.size(), 5u);
  for (size_t i = 1; i < runs.size(); ++i) EXPECT_LE(runs[i - 1].year, runs[i].year);
  bool gpt3 = false;
  for (const auto& r : runs)
    if (r.id == "gpt3-2020") {
      gpt3 = true;
      mc::test::expect_published(r.flops, "gpt3-175b-config-and-compute", "total_training_compute");
    }
  EXPECT_TRUE(gpt3);
}

}  // namespace
