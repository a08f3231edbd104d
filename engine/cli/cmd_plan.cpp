// `megacluster plan`: from a budget (FLOPs or dollars) to GPU-hours, cost, and the model it buys under the
// Kaplan 2020 or Chinchilla 2022 rule with its predicted loss (engine/capital/compute_cost.h).
#include "capital/compute_cost.h"
#include "catalog/catalog.h"
#include "cli/cli.h"
#include "core/format.h"
#include "core/paths.h"

#include <cstdio>

namespace {

int run_plan(mc::cli::Args& a) {
  const bool as_json = a.flag("--json");
  auto flops = a.option("--flops");
  auto dollars = a.option("--dollars");
  auto rule = a.option("--rule");
  auto pricing = a.option("--pricing");
  auto assets = a.option("--assets");
  const double util = a.option_double("--utilisation", -1);
  const double price = a.option_double("--price", -1);
  const double gpus = a.option_double("--gpus", -1);
  a.finish();
  if (bool(flops) == bool(dollars)) throw mc::cli::UsageError("give exactly one of --flops F and --dollars D");
  auto positive = [](const std::string& name, const std::string& v) {
    try {
      size_t used = 0;
      double x = std::stod(v, &used);
      if (used != v.size() || !(x > 0)) throw std::invalid_argument("");
      return x;
    } catch (const std::exception&) {
      throw mc::cli::UsageError(name + " expects a positive number (e.g. 3.14e23), got \"" + v + "\"");
    }
  };
  mc::Catalog cat = mc::load_catalog(assets ? *assets : mc::find_assets_dir(a.exe_path()));
  mc::capital::PlanConfig c = mc::capital::default_plan_config(cat);
  if (flops) c.budget_flops = positive("--flops", *flops);
  if (dollars) c.budget_usd = positive("--dollars", *dollars);
  if (rule) {
    if (*rule != "kaplan" && *rule != "chinchilla") throw mc::cli::UsageError("--rule is kaplan or chinchilla");
    c.rule = mc::capital::parse_scaling_rule(*rule);
  }
  if (pricing) {
    if (*pricing != "rent" && *pricing != "build") throw mc::cli::UsageError("--pricing is rent or build");
    c.pricing = *pricing == "rent" ? mc::capital::Pricing::rent : mc::capital::Pricing::build;
  }
  if (util != -1) {
    if (!(util > 0 && util <= 1)) throw mc::cli::UsageError("--utilisation must be in (0, 1]");
    c.utilisation = util;
  }
  if (price != -1) {
    if (!(price > 0)) throw mc::cli::UsageError("--price must be positive (USD per GPU-hour)");
    c.rent_usd_per_gpu_hour = price;
  }
  if (gpus != -1) {
    if (!(gpus >= 1)) throw mc::cli::UsageError("--gpus must be at least 1");
    c.cluster_gpus = gpus;
  }
  mc::json r = mc::capital::to_json(mc::capital::plan(c));
  if (as_json) {
    r["config"] = mc::capital::to_json(c);
    std::printf("%s\n", r.dump(2).c_str());
    return 0;
  }
  auto row = [&](const char* key, const std::string& v, const char* note) {
    std::printf("%-16s %-22s %s\n", key, v.c_str(), note);
  };
  std::printf("Plan (%s rule, %s at $%.2f per GPU-hour, %.0f%% of %s peak)\n", r["rule"].get<std::string>().c_str(),
              c.pricing == mc::capital::Pricing::rent ? "renting" : "building", r["usd_per_gpu_hour"].get<double>(),
              100 * c.utilisation, mc::format_quantity(c.gpu_peak_flops_per_s, "FLOP/s").c_str());
  auto sci = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", x);
    return std::string(b);
  };
  row("params", sci(r["params"].get<double>()), "parameters");
  row("tokens", sci(r["tokens"].get<double>()), "training tokens");
  row("flops", sci(r["flops"].get<double>()), ("FLOPs (" + sci(r["pf_days"].get<double>()) + " PF-days)").c_str());
  row("predicted_loss", std::to_string(r["predicted_loss"].get<double>()), "nats/token (the rule's own data set)");
  row("gpu_hours", sci(r["gpu_hours"].get<double>()), "GPU-hours");
  row("cost_usd", mc::format_quantity(r["cost_usd"].get<double>(), "USD"), "at the chosen pricing");
  row("rent_cost_usd", mc::format_quantity(r["rent_cost_usd"].get<double>(), "USD"), "renting");
  row("build_cost_usd", mc::format_quantity(r["build_cost_usd"].get<double>(), "USD"),
      "owning (amortised hardware + power x PUE; prices mostly assumed)");
  row("days_on_cluster", std::to_string(r["days_on_cluster"].get<double>()),
      ("days on " + mc::format_si(c.cluster_gpus) + " GPUs").c_str());
  std::printf("\nChinchilla's three estimates for this budget (Hoffmann et al. 2022, Sec. 3 and Table 2):\n");
  std::printf("  %-26s %8s %12s %12s %10s\n", "approach", "N ~ C^a", "params", "tokens", "tok/param");
  const char* names[] = {"1 envelope of curves", "2 IsoFLOP profiles", "3 parametric L(N, D)"};
  for (const auto& x : r["chinchilla_approaches"])
    std::printf("  %-26s %8.3f %12s %12s %10.1f\n", names[x["approach"].get<int>() - 1], x["exponent_a"].get<double>(),
                sci(x["params"].get<double>()).c_str(), sci(x["tokens"].get<double>()).c_str(),
                x["tokens_per_param"].get<double>());
  std::printf(
      "  They differ in how the optimum is read off the same training runs: 1 and 2 follow the best runs\n"
      "  directly; 3 fits a loss surface whose published constants are rounded, and its optimum is very\n"
      "  sensitive to them (a = 0.452 from the rounded alpha and beta, 0.46 in the paper).\n");
  std::printf("(prices and their sources: `megacluster catalog --table prices`; --json for every field)\n");
  return 0;
}

mc::cli::Registrar reg{{"plan",
                        "from a budget to GPU-hours, dollars and the model it buys (Kaplan 2020 / Chinchilla 2022)",
                        "megacluster plan --flops F | --dollars D [--rule kaplan|chinchilla] [--pricing rent|build] "
                        "[--utilisation U] [--price USD_PER_GPU_HOUR] [--gpus N] [--json] [--assets DIR]",
                        run_plan}};

}  // namespace
