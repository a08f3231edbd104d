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

TEST(PlanCli, JsonAgreesWithTheChinchillaClosedForm) {
  auto r = run_cli("plan --flops 5.76e23 --rule chinchilla --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // Validation case chinchilla-parametric-loss: N_opt(C = 5.76e23) = 3.219e10 (2%).
  EXPECT_NEAR(j["params"].get<double>(), 3.21899e10, 0.02 * 3.21899e10);
  EXPECT_NEAR(6 * j["params"].get<double>() * j["tokens"].get<double>(), 5.76e23, 1e-6 * 5.76e23);
  for (const char* k : {"params", "tokens", "flops", "predicted_loss", "gpu_hours", "cost_usd"}) EXPECT_TRUE(j.contains(k)) << k;
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
