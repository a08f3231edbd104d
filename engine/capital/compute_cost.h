// compute_cost.h - from money to compute to a model: dollars -> GPU-hours (renting in the cloud, or buying
// and running the 2020 machine) -> FLOPs at a chosen utilisation -> the largest model and token count the
// budget buys under the Kaplan 2020 or Chinchilla 2022 rule -> predicted loss.
//
// Every default price comes from assets/catalog/prices.json (table "prices"), where each value carries its
// source and confidence; most build-side prices are assumed (not public) and the UI says so.
//
//   PlanConfig cfg = default_plan_config(catalog);      // prices from the catalog
//   cfg.budget_usd = 1e9;                                 // or cfg.budget_flops = 3.14e23
//   PlanResult r = plan(cfg);                             // r.params, r.tokens, r.gpu_hours, r.cost_usd ...
#pragma once

#include "capital/scaling_laws.h"
#include "catalog/catalog.h"
#include "core/json_doc.h"

#include <string>

namespace mc::capital {

// Owning the machine: capital cost amortised over its life plus electricity with the facility overhead.
// Building and running the machine instead of renting it. Every price and power is a catalog value
// (prices and gpus tables, each with its source): default_plan_config fills them; 0 means never set, and
// build_cost refuses it rather than price a machine from a number nobody sourced.
struct BuildConfig {
  double gpu_price_usd = 0;           // one GPU (prices: v100-sxm2-purchase)
  double server_price_usd = 0;        // one 8-GPU server without its GPUs (prices: server-8gpu-host)
  double network_per_server_usd = 0;  // its share of the fabric (prices: network-400g-per-server)
  int gpus_per_server = 8;            // the servers the prices above are for
  double gpu_power_W = 0;             // GPU board power (gpus: tdp_W)
  double server_power_W = 0;          // CPUs, memory, fans, NICs (prices: server-8gpu-host)
  double pue = 0;                     // facility power / IT power (prices: datacenter-2020)
  double usd_per_kWh = 0;             // (prices: datacenter-2020)
  double amortisation_years = 0;      // (prices: datacenter-2020)
};

struct BuildCostBreakdown {
  double capex_per_gpu_usd = 0;       // GPU + its share of server and network
  double capex_usd_per_gpu_hour = 0;  // capex / (amortisation_years * hours per year)
  double power_kW_per_gpu = 0;        // at the wall, PUE included
  double power_usd_per_gpu_hour = 0;
  double usd_per_gpu_hour = 0;  // the sum
};
BuildCostBreakdown build_cost(const BuildConfig& b);

enum class Pricing { rent, build };

struct PlanConfig {
  // The budget: exactly one of the two is positive. Dollars are turned into GPU-hours at the chosen
  // pricing, GPU-hours into FLOPs at gpu_peak_flops_per_s * utilisation.
  double budget_usd = 0;
  double budget_flops = 0;
  ScalingRule rule = ScalingRule::chinchilla;
  std::string gpu = "v100-32gb";    // catalog gpus record
  double gpu_peak_flops_per_s = 0;  // the GPU's dense FP16 tensor peak (gpus table)
  double utilisation = 0.3;         // model FLOPs utilisation (assumed; GPT-4 leak: 0.32-0.36)
  Pricing pricing = Pricing::rent;
  double rent_usd_per_gpu_hour = 0;  // prices: v100-cloud-reserved
  BuildConfig build;
  double cluster_gpus = 0;  // for the wall-clock days (clusters: azure-openai-2020)
  KaplanConstants kaplan;
  ChinchillaConstants chinchilla;
};

// Defaults with every price and the GPU peak read from the catalog (prices, gpus tables). Throws
// std::out_of_range naming the record and key if the catalog lacks one.
PlanConfig default_plan_config(const Catalog& cat);

struct PlanResult {
  Allocation model;          // params, tokens, predicted loss under the rule
  Allocation chinchilla[3];  // the same budget under Chinchilla's approaches 1, 2, 3 (side by side)
  double flops = 0, pf_days = 0;
  double effective_flops_per_s = 0;  // per GPU
  double gpu_hours = 0;
  double usd_per_gpu_hour = 0;                   // at the chosen pricing
  double cost_usd = 0;                           // at the chosen pricing
  double rent_cost_usd = 0, build_cost_usd = 0;  // both ways, always
  double days_on_cluster = 0;                    // gpu_hours / cluster_gpus / 24
  BuildCostBreakdown build;
};
// Throws std::invalid_argument if neither or both budgets are positive or a rate is not positive.
PlanResult plan(const PlanConfig& cfg);

// What a dollar budget buys rented and built (the plan run at each pricing), and built over rented.
struct RentOrBuild {
  double rented_gpu_hours = 0, built_gpu_hours = 0, built_over_rented = 0;
};
// Throws as plan() does; cfg.budget_usd must be positive.
RentOrBuild rent_or_build(const PlanConfig& cfg);

// JSON both ways. The config JSON has the keys of PlanConfig (budget_usd, budget_flops, rule, gpu,
// gpu_peak_flops_per_s, utilisation, pricing, rent_usd_per_gpu_hour, build{...}, cluster_gpus);
// a missing key keeps `base`'s value. Errors name the key: LoadError when read from a JsonDoc.
json to_json(const PlanConfig& c);
PlanConfig plan_config_from_json(const json& j, const PlanConfig& base);
json to_json(const PlanResult& r);
// Convenience for scenarios and the CLI: defaults from the catalog, overridden by `config`.
json plan_json(const Catalog& cat, const json& config);

// GPT-3 175B (3.14e23 FLOPs, Brown et al. 2020 Table D.1) priced both ways, at Lambda's sustained rate per
// V100 (prices table: gpt3-lambda-estimate) and at the config's utilisation, beside the published estimates.
struct PricedAt {
  double utilisation = 0;  // of the GPU's peak
  double gpu_hours = 0, rent_usd = 0, build_usd = 0, days_on_cluster = 0;
};
struct Gpt3Priced {
  double flops = 0;  // runs table: gpt3-2020 train_flops
  double published_usd = 0, published_low_usd = 0;
  double published_flops_per_s = 0;  // Lambda's sustained rate per GPU, the published estimate's assumption
  double cluster_gpus = 0;           // the machine days_on_cluster counts on
  PricedAt at_published_rate, at_config_rate;
};
Gpt3Priced gpt3_priced(const Catalog& cat, const PlanConfig& cfg);
json to_json(const Gpt3Priced& g);
json gpt3_priced_json(const Catalog& cat, const PlanConfig& cfg);  // to_json(gpt3_priced(...))

}  // namespace mc::capital
