// compute_cost.cpp - money -> GPU-hours -> FLOPs -> model (see compute_cost.h).
#include "capital/compute_cost.h"

#include <cmath>
#include <stdexcept>

namespace mc::capital {
namespace {

// 365.25 days: amortisation over calendar years.
constexpr double kHoursPerYear = 24.0 * 365.25;

double field(const Catalog& cat, const char* table, const char* record, const char* key) {
  const Table* t = cat.table(table);
  if (!t) throw std::out_of_range(std::string("catalog has no table \"") + table + "\"");
  const Record* r = t->find(record);
  if (!r) throw std::out_of_range(std::string("catalog table \"") + table + "\" has no record \"" + record + "\"");
  return r->get(key);
}

double num(const json& j, const char* key, double fallback) {
  if (!j.contains(key)) return fallback;
  const json& v = j.at(key);
  if (!v.is_number()) throw std::invalid_argument(std::string("\"") + key + "\" must be a number, got " + v.dump());
  return v.get<double>();
}

}  // namespace

BuildCostBreakdown build_cost(const BuildConfig& b) {
  const auto need = [](double v, const char* key, const char* rule) {
    if (!(v > 0))
      throw std::invalid_argument(std::string("build.") + key + " must be " + rule +
                                  ": set it, or start from default_plan_config (the catalog's prices)");
  };
  need(b.amortisation_years, "amortisation_years", "positive");
  need(b.pue, "pue", "positive (at least 1: facility power over IT power)");
  need(b.gpu_price_usd, "gpu_price_usd", "positive");
  need(b.gpu_power_W, "gpu_power_W", "positive");
  BuildCostBreakdown o;
  const double g = b.gpus_per_server > 0 ? b.gpus_per_server : 1;
  o.capex_per_gpu_usd = b.gpu_price_usd + (b.server_price_usd + b.network_per_server_usd) / g;
  o.capex_usd_per_gpu_hour = o.capex_per_gpu_usd / (b.amortisation_years * kHoursPerYear);
  // Wall power of one GPU and its share of the server, times PUE (The Green Grid's definition:
  // facility energy / IT equipment energy).
  o.power_kW_per_gpu = (b.gpu_power_W + b.server_power_W / g) * b.pue / 1000.0;
  o.power_usd_per_gpu_hour = o.power_kW_per_gpu * b.usd_per_kWh;
  o.usd_per_gpu_hour = o.capex_usd_per_gpu_hour + o.power_usd_per_gpu_hour;
  return o;
}

PlanConfig default_plan_config(const Catalog& cat) {
  PlanConfig c;
  c.gpu_peak_flops_per_s = field(cat, "gpus", "v100-32gb", "peak_fp16_tensor_flops");
  c.build.gpu_power_W = field(cat, "gpus", "v100-32gb", "tdp_W");
  c.rent_usd_per_gpu_hour = field(cat, "prices", "v100-cloud-reserved", "usd_per_gpu_hour");
  c.build.gpu_price_usd = field(cat, "prices", "v100-sxm2-purchase", "price_usd");
  c.build.server_price_usd = field(cat, "prices", "server-8gpu-host", "price_usd");
  c.build.server_power_W = field(cat, "prices", "server-8gpu-host", "power_W");
  c.build.network_per_server_usd = field(cat, "prices", "network-400g-per-server", "price_usd");
  c.build.pue = field(cat, "prices", "datacenter-2020", "pue");
  c.build.usd_per_kWh = field(cat, "prices", "datacenter-2020", "usd_per_kWh");
  c.build.amortisation_years = field(cat, "prices", "datacenter-2020", "amortisation_years");
  c.cluster_gpus = field(cat, "clusters", "azure-openai-2020", "gpus");
  return c;
}

RentOrBuild rent_or_build(const PlanConfig& cfg) {
  if (!(cfg.budget_usd > 0)) throw std::invalid_argument("rent or build compares a dollar budget: set budget_usd");
  PlanConfig rented = cfg, built = cfg;
  rented.pricing = Pricing::rent, built.pricing = Pricing::build;
  RentOrBuild r;
  r.rented_gpu_hours = plan(rented).gpu_hours;
  r.built_gpu_hours = plan(built).gpu_hours;
  r.built_over_rented = r.rented_gpu_hours > 0 ? r.built_gpu_hours / r.rented_gpu_hours : 0;
  return r;
}

PlanResult plan(const PlanConfig& cfg) {
  const bool by_usd = cfg.budget_usd > 0, by_flops = cfg.budget_flops > 0;
  if (by_usd == by_flops) throw std::invalid_argument("give exactly one positive budget: budget_usd or budget_flops");
  if (!(cfg.utilisation > 0 && cfg.utilisation <= 1)) throw std::invalid_argument("utilisation must be in (0, 1]");
  if (!(cfg.gpu_peak_flops_per_s > 0) || !(cfg.rent_usd_per_gpu_hour > 0))
    throw std::invalid_argument(
        "gpu_peak_flops_per_s and rent_usd_per_gpu_hour must be positive: set them, or start "
        "from default_plan_config (the catalog's GPU peak and prices)");
  PlanResult r;
  r.build = build_cost(cfg.build);
  r.usd_per_gpu_hour = cfg.pricing == Pricing::rent ? cfg.rent_usd_per_gpu_hour : r.build.usd_per_gpu_hour;
  r.effective_flops_per_s = cfg.gpu_peak_flops_per_s * cfg.utilisation;
  if (by_usd) {
    r.gpu_hours = cfg.budget_usd / r.usd_per_gpu_hour;
    r.flops = r.gpu_hours * 3600.0 * r.effective_flops_per_s;
  } else {
    r.flops = cfg.budget_flops;
    r.gpu_hours = r.flops / (r.effective_flops_per_s * 3600.0);
  }
  r.pf_days = flops_to_pf_days(r.flops);
  r.cost_usd = r.gpu_hours * r.usd_per_gpu_hour;
  r.rent_cost_usd = r.gpu_hours * cfg.rent_usd_per_gpu_hour;
  r.build_cost_usd = r.gpu_hours * r.build.usd_per_gpu_hour;
  r.days_on_cluster = cfg.cluster_gpus > 0 ? r.gpu_hours / cfg.cluster_gpus / 24.0 : 0;
  r.model = allocate(r.flops, cfg.rule, cfg.kaplan, cfg.chinchilla);
  for (int i = 0; i < 3; ++i) r.chinchilla[i] = allocate_chinchilla(r.flops, ChinchillaApproach(i + 1), cfg.chinchilla);
  return r;
}

json to_json(const PlanConfig& c) {
  const BuildConfig& b = c.build;
  return {{"budget_usd", c.budget_usd},
          {"budget_flops", c.budget_flops},
          {"rule", to_string(c.rule)},
          {"gpu", c.gpu},
          {"gpu_peak_flops_per_s", c.gpu_peak_flops_per_s},
          {"utilisation", c.utilisation},
          {"pricing", c.pricing == Pricing::rent ? "rent" : "build"},
          {"rent_usd_per_gpu_hour", c.rent_usd_per_gpu_hour},
          {"cluster_gpus", c.cluster_gpus},
          {"build",
           {{"gpu_price_usd", b.gpu_price_usd},
            {"server_price_usd", b.server_price_usd},
            {"network_per_server_usd", b.network_per_server_usd},
            {"gpus_per_server", b.gpus_per_server},
            {"gpu_power_W", b.gpu_power_W},
            {"server_power_W", b.server_power_W},
            {"pue", b.pue},
            {"usd_per_kWh", b.usd_per_kWh},
            {"amortisation_years", b.amortisation_years}}}};
}

PlanConfig plan_config_from_json(const json& j, const PlanConfig& base) {
  if (!j.is_object()) throw std::invalid_argument("a plan config must be a JSON object");
  static const char* kKeys[] = {"budget_usd",           "budget_flops", "rule",    "gpu",
                                "gpu_peak_flops_per_s", "utilisation",  "pricing", "rent_usd_per_gpu_hour",
                                "cluster_gpus",         "build"};
  for (const auto& [k, v] : j.items()) {
    bool known = false;
    for (const char* kk : kKeys) known = known || k == kk;
    if (!known) throw std::invalid_argument("unknown plan config key \"" + k + "\"");
  }
  PlanConfig c = base;
  c.budget_usd = num(j, "budget_usd", c.budget_usd);
  c.budget_flops = num(j, "budget_flops", c.budget_flops);
  if (j.contains("rule")) c.rule = parse_scaling_rule(j.at("rule").get<std::string>());
  if (j.contains("gpu")) c.gpu = j.at("gpu").get<std::string>();
  c.gpu_peak_flops_per_s = num(j, "gpu_peak_flops_per_s", c.gpu_peak_flops_per_s);
  c.utilisation = num(j, "utilisation", c.utilisation);
  if (j.contains("pricing")) {
    std::string p = j.at("pricing").get<std::string>();
    if (p != "rent" && p != "build")
      throw std::invalid_argument("pricing must be \"rent\" or \"build\", got \"" + p + "\"");
    c.pricing = p == "rent" ? Pricing::rent : Pricing::build;
  }
  c.rent_usd_per_gpu_hour = num(j, "rent_usd_per_gpu_hour", c.rent_usd_per_gpu_hour);
  c.cluster_gpus = num(j, "cluster_gpus", c.cluster_gpus);
  if (j.contains("build")) {
    const json& b = j.at("build");
    BuildConfig& o = c.build;
    o.gpu_price_usd = num(b, "gpu_price_usd", o.gpu_price_usd);
    o.server_price_usd = num(b, "server_price_usd", o.server_price_usd);
    o.network_per_server_usd = num(b, "network_per_server_usd", o.network_per_server_usd);
    o.gpus_per_server = int(num(b, "gpus_per_server", o.gpus_per_server));
    o.gpu_power_W = num(b, "gpu_power_W", o.gpu_power_W);
    o.server_power_W = num(b, "server_power_W", o.server_power_W);
    o.pue = num(b, "pue", o.pue);
    o.usd_per_kWh = num(b, "usd_per_kWh", o.usd_per_kWh);
    o.amortisation_years = num(b, "amortisation_years", o.amortisation_years);
  }
  return c;
}

json to_json(const PlanResult& r) {
  return {{"rule", to_string(r.model.rule)},
          {"params", r.model.params},
          {"tokens", r.model.tokens},
          {"tokens_per_param", r.model.tokens_per_param},
          {"predicted_loss", r.model.predicted_loss},
          {"flops", r.flops},
          {"pf_days", r.pf_days},
          {"effective_flops_per_s", r.effective_flops_per_s},
          {"gpu_hours", r.gpu_hours},
          {"gpu_years", r.gpu_hours / (24.0 * 365.25)},
          {"usd_per_gpu_hour", r.usd_per_gpu_hour},
          {"cost_usd", r.cost_usd},
          {"rent_cost_usd", r.rent_cost_usd},
          {"build_cost_usd", r.build_cost_usd},
          {"build_usd_per_gpu_hour", r.build.usd_per_gpu_hour},
          {"build_capex_usd_per_gpu_hour", r.build.capex_usd_per_gpu_hour},
          {"build_power_usd_per_gpu_hour", r.build.power_usd_per_gpu_hour},
          {"build_capex_per_gpu_usd", r.build.capex_per_gpu_usd},
          {"days_on_cluster", r.days_on_cluster},
          {"chinchilla_approaches", [&] {
             json a = json::array();
             for (int i = 0; i < 3; ++i) {
               const auto approach = ChinchillaApproach(i + 1);
               a.push_back({{"approach", i + 1},
                            {"method", to_string(approach)},
                            {"exponent_a", chinchilla_fit(approach).a},
                            {"params", r.chinchilla[i].params},
                            {"tokens", r.chinchilla[i].tokens},
                            {"tokens_per_param", r.chinchilla[i].tokens_per_param},
                            {"predicted_loss", r.chinchilla[i].predicted_loss}});
             }
             return a;
           }()}};
}

json plan_json(const Catalog& cat, const json& config) {
  return to_json(plan(plan_config_from_json(config, default_plan_config(cat))));
}

Gpt3Priced gpt3_priced(const Catalog& cat, const PlanConfig& base) {
  PlanConfig c = base;
  c.budget_usd = 0;
  c.budget_flops = field(cat, "runs", "gpt3-2020", "train_flops");
  Gpt3Priced out;
  out.flops = c.budget_flops;
  out.published_usd = field(cat, "prices", "gpt3-lambda-estimate", "cost_usd");
  out.published_low_usd = field(cat, "prices", "gpt3-low-estimate", "cost_usd");
  out.published_flops_per_s = field(cat, "prices", "gpt3-lambda-estimate", "effective_flops_per_s");
  out.cluster_gpus = c.cluster_gpus;
  auto priced = [](const PlanConfig& at) {
    const PlanResult r = plan(at);
    return PricedAt{at.utilisation, r.gpu_hours, r.rent_cost_usd, r.build_cost_usd, r.days_on_cluster};
  };
  // At Lambda's sustained rate per V100: the same assumption as the published $4.6M.
  PlanConfig at_lambda = c;
  at_lambda.utilisation = out.published_flops_per_s / c.gpu_peak_flops_per_s;
  out.at_published_rate = priced(at_lambda);
  out.at_config_rate = priced(c);
  return out;
}

json to_json(const Gpt3Priced& g) {
  auto at = [](const PricedAt& p) {
    return json{{"utilisation", p.utilisation},
                {"gpu_hours", p.gpu_hours},
                {"rent_usd", p.rent_usd},
                {"build_usd", p.build_usd},
                {"days_on_cluster", p.days_on_cluster}};
  };
  return {{"flops", g.flops},
          {"published_usd", g.published_usd},
          {"published_low_usd", g.published_low_usd},
          {"at_published_rate", at(g.at_published_rate)},
          {"at_config_rate", at(g.at_config_rate)}};
}

json gpt3_priced_json(const Catalog& cat, const PlanConfig& cfg) { return to_json(gpt3_priced(cat, cfg)); }

}  // namespace mc::capital
