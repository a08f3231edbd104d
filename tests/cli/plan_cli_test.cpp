// `megacluster plan` as a user calls it: the required fields, the two rules, both budgets, bad arguments.
#include "cli_runner.h"

#include <nlohmann/json.hpp>

namespace {

using mc_test::run_cli;

TEST(PlanCli, FlopsBudgetPrintsTheRequiredFields) {
  auto r = run_cli("plan --flops 3.14e23");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* k : {"params", "tokens", "flops", "predicted_loss", "gpu_hours", "cost_usd"})
    EXPECT_NE(r.out.find(k), std::string::npos) << k << "\n" << r.out;
}

TEST(PlanCli, ChinchillaRuleReproducesThePapersHeadlineAndShowsAllThreeApproaches) {
  auto r = run_cli("plan --flops 5.76e23 --rule chinchilla --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // Hoffmann et al. 2022, Table 3: Gopher's budget of 5.76e23 FLOPs is best spent on 67B parameters and
  // about 1.4-1.5T tokens (the Chinchilla model itself: 70B on 1.4T).
  EXPECT_NEAR(j["params"].get<double>(), 67e9, 0.02 * 67e9);
  EXPECT_NEAR(j["tokens"].get<double>(), 1.43e12, 0.05 * 1.43e12);
  EXPECT_NEAR(6 * j["params"].get<double>() * j["tokens"].get<double>(), 5.76e23, 1e-6 * 5.76e23);
  for (const char* k : {"params", "tokens", "flops", "predicted_loss", "gpu_hours", "cost_usd"})
    EXPECT_TRUE(j.contains(k)) << k;
  const auto& a = j["chinchilla_approaches"];
  ASSERT_EQ(a.size(), 3u);
  EXPECT_NEAR(a[1]["params"].get<double>(), 70e9, 0.02 * 70e9);  // approach 2: the Chinchilla model
  EXPECT_NEAR(a[1]["tokens"].get<double>(), 1.4e12, 0.03 * 1.4e12);
  // Approach 3, the parametric fit: validation case chinchilla-parametric-loss, N_opt = 3.219e10 (2%).
  EXPECT_NEAR(a[2]["params"].get<double>(), 3.21899e10, 0.02 * 3.21899e10);
  EXPECT_DOUBLE_EQ(a[0]["exponent_a"].get<double>(), 0.50);  // Table 2
  EXPECT_DOUBLE_EQ(a[1]["exponent_a"].get<double>(), 0.49);
  // The exponents show at a 100x larger budget: approach 1 grows N by 10x, approach 3 by 100^0.452.
  auto big = nlohmann::json::parse(run_cli("plan --flops 5.76e25 --json").out)["chinchilla_approaches"];
  EXPECT_NEAR(big[0]["params"].get<double>() / a[0]["params"].get<double>(), 10.0, 1e-9);
  EXPECT_NEAR(big[2]["params"].get<double>() / a[2]["params"].get<double>(), std::pow(100.0, 0.28 / 0.62), 1e-6);
  auto text = run_cli("plan --flops 5.76e23");
  EXPECT_NE(text.out.find("IsoFLOP"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("parametric"), std::string::npos);
}

TEST(PlanCli, DollarsBudgetSpendsTheDollars) {
  auto r = run_cli("plan --dollars 1e9 --rule kaplan --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["cost_usd"].get<double>(), 1e9, 1);
  EXPECT_EQ(j["rule"], "kaplan");
  auto b = nlohmann::json::parse(run_cli("plan --dollars 1e9 --pricing build --json").out);
  EXPECT_GT(b["gpu_hours"].get<double>(), j["gpu_hours"].get<double>());
}

TEST(PlanCli, BadArgumentsExitTwoWithUsage) {
  for (const char* args : {"plan", "plan --flops 1e20 --dollars 5", "plan --flops -3", "plan --flops abc",
                           "plan --flops 1e20 --rule hoffmann", "plan --flops 1e20 --utilisation 2"}) {
    auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_NE(r.err.find("usage:"), std::string::npos) << args << "\n" << r.err;
  }
}

}  // namespace
