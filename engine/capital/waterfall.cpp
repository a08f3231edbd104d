// waterfall.cpp - the capped-profit waterfall and the partnership schedule (see waterfall.h).
#include "capital/waterfall.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mc::capital {
namespace {

const Record& record(const Catalog& cat, const char* table, const char* id) {
  const Table* t = cat.table(table);
  if (!t) throw std::out_of_range(std::string("catalog has no table \"") + table + "\"");
  const Record* r = t->find(id);
  if (!r) throw std::out_of_range(std::string("catalog table \"") + table + "\" has no record \"" + id + "\"");
  return *r;
}

double num(const json& j, const char* key, double fallback) {
  if (!j.contains(key)) return fallback;
  const json& v = j.at(key);
  if (!v.is_number()) throw std::invalid_argument(std::string("\"") + key + "\" must be a number, got " + v.dump());
  return v.get<double>();
}

void only(const json& j, std::initializer_list<const char*> keys, const char* what) {
  if (!j.is_object()) throw std::invalid_argument(std::string(what) + " must be a JSON object");
  for (const auto& [k, v] : j.items()) {
    bool ok = false;
    for (const char* kk : keys) ok = ok || k == kk;
    if (!ok) throw std::invalid_argument(std::string("unknown ") + what + " key \"" + k + "\"");
  }
}

}  // namespace

WaterfallResult run_waterfall(const WaterfallConfig& cfg) {
  double share_sum = 0;
  for (const Holder& h : cfg.holders) {
    if (h.share < 0 || h.basis_usd < 0 || h.cap_multiple < 0)
      throw std::invalid_argument("holder \"" + h.name + "\": share, basis_usd and cap_multiple must be >= 0");
    share_sum += h.share;
  }
  if (share_sum > 1 + 1e-9) throw std::invalid_argument("holder shares sum to more than 1");

  std::vector<double> stream = cfg.profit_usd;
  if (stream.empty()) {
    double p = cfg.first_year_profit_usd;
    for (int y = 0; y < cfg.years; ++y, p *= cfg.profit_growth) stream.push_back(p);
  }
  const size_t n = cfg.holders.size();
  WaterfallResult r;
  r.holder_total_usd.assign(n, 0);
  r.holder_capped_year.assign(n, 0);
  for (size_t y = 0; y < stream.size(); ++y) {
    WaterfallYear wy;
    wy.year = cfg.start_year + int(y);
    wy.profit_usd = stream[y];
    wy.to_holder_usd.assign(n, 0);
    double paid = 0;
    // Losses are not clawed back: a negative year distributes nothing and is kept by the LP.
    const double distributable = std::max(0.0, stream[y]);
    for (size_t i = 0; i < n; ++i) {
      const Holder& h = cfg.holders[i];
      const double room = std::max(0.0, h.cap_multiple * h.basis_usd - r.holder_total_usd[i]);
      const double take = std::min(room, h.share * distributable);
      wy.to_holder_usd[i] = take;
      r.holder_total_usd[i] += take;
      paid += take;
      if (r.holder_capped_year[i] == 0 && h.share > 0 && take >= room && distributable > 0)
        r.holder_capped_year[i] = wy.year;
    }
    wy.to_nonprofit_usd = distributable - paid;
    r.nonprofit_total_usd += wy.to_nonprofit_usd;
    r.profit_total_usd += distributable;
    r.years.push_back(std::move(wy));
  }
  return r;
}

std::vector<PartnershipYear> run_partnership(const PartnershipConfig& cfg) {
  if (cfg.installment_years < 1) throw std::invalid_argument("installment_years must be >= 1");
  if (cfg.cloud_credit_fraction < 0 || cfg.cloud_credit_fraction > 1)
    throw std::invalid_argument("cloud_credit_fraction must be in [0, 1]");
  if (!(cfg.usd_per_gpu_hour > 0)) throw std::invalid_argument("usd_per_gpu_hour must be positive");
  std::vector<PartnershipYear> out;
  const double each = cfg.total_usd / cfg.installment_years;
  for (int i = 0; i < cfg.installment_years; ++i) {
    PartnershipYear y;
    y.year = cfg.start_year + i;
    y.credit_usd = each * cfg.cloud_credit_fraction;
    y.cash_usd = each - y.credit_usd;
    y.gpu_hours = y.credit_usd / cfg.usd_per_gpu_hour;
    y.flops = y.gpu_hours * 3600.0 * cfg.gpu_flops_per_s;
    out.push_back(y);
  }
  return out;
}

WaterfallConfig default_waterfall_config(const Catalog& cat) {
  WaterfallConfig c;
  const Table* t = cat.table("capital");
  if (!t) throw std::out_of_range("catalog has no table \"capital\"");
  // The holders are the table's records with a holder_kind, in file order. The facts that were
  // published come from the prices table, once: the first round's cap and Microsoft's $1B.
  for (const Record& r : t->records) {
    const std::string kind = r.text_or("holder_kind", "");
    if (kind.empty()) continue;
    Holder h;
    h.name = r.name;
    h.kind = kind;
    h.share = r.get("share");
    h.basis_usd = r.id == "lp-microsoft-2019" ? record(cat, "prices", "microsoft-2019").get("investment_usd")
                                              : r.get("basis_usd");
    h.cap_multiple = r.id == "lp-first-round-investors" ? record(cat, "prices", "openai-lp-2019").get("cap_multiple")
                                                        : r.get("cap_multiple");
    c.holders.push_back(h);
  }
  const Record& stream = record(cat, "capital", "lp-profit-stream");
  c.first_year_profit_usd = stream.get("first_year_profit_usd");
  c.profit_growth = stream.get("profit_growth");
  c.years = int(stream.get("years"));
  c.start_year = int(stream.get("start_year"));
  return c;
}

PartnershipConfig default_partnership_config(const Catalog& cat, double usd_per_gpu_hour, double gpu_flops_per_s) {
  PartnershipConfig c;
  const Record& invest = record(cat, "prices", "microsoft-2019");
  const Record& terms = record(cat, "capital", "microsoft-2019-terms");
  c.total_usd = invest.get("investment_usd");
  c.start_year = int(invest.get("year"));
  c.installment_years = int(terms.get("installment_years"));
  c.cloud_credit_fraction = terms.get("cloud_credit_fraction");
  c.usd_per_gpu_hour = usd_per_gpu_hour;
  c.gpu_flops_per_s = gpu_flops_per_s;
  return c;
}

json to_json(const WaterfallConfig& c) {
  json hs = json::array();
  for (const Holder& h : c.holders)
    hs.push_back({{"name", h.name},
                  {"kind", h.kind},
                  {"basis_usd", h.basis_usd},
                  {"share", h.share},
                  {"cap_multiple", h.cap_multiple}});
  return {{"holders", hs},
          {"profit_usd", c.profit_usd},
          {"first_year_profit_usd", c.first_year_profit_usd},
          {"profit_growth", c.profit_growth},
          {"years", c.years},
          {"start_year", c.start_year}};
}

WaterfallConfig waterfall_config_from_json(const json& j, const WaterfallConfig& base) {
  only(j, {"holders", "profit_usd", "first_year_profit_usd", "profit_growth", "years", "start_year"}, "waterfall");
  WaterfallConfig c = base;
  if (j.contains("holders")) {
    if (!j["holders"].is_array()) throw std::invalid_argument("\"holders\" must be an array");
    c.holders.clear();
    for (const json& h : j["holders"]) {
      only(h, {"name", "kind", "basis_usd", "share", "cap_multiple"}, "holder");
      Holder o;
      o.name = h.value("name", std::string("holder"));
      o.kind = h.value("kind", std::string("investor"));
      o.basis_usd = num(h, "basis_usd", 0);
      o.share = num(h, "share", 0);
      o.cap_multiple = num(h, "cap_multiple", 100);
      c.holders.push_back(o);
    }
  }
  if (j.contains("profit_usd")) c.profit_usd = j["profit_usd"].get<std::vector<double>>();
  c.first_year_profit_usd = num(j, "first_year_profit_usd", c.first_year_profit_usd);
  c.profit_growth = num(j, "profit_growth", c.profit_growth);
  c.years = int(num(j, "years", c.years));
  c.start_year = int(num(j, "start_year", c.start_year));
  if (c.years < 0 || c.years > 200) throw std::invalid_argument("\"years\" must be in [0, 200]");
  return c;
}

json to_json(const WaterfallConfig& c, const WaterfallResult& r) {
  json years = json::array();
  for (const WaterfallYear& y : r.years)
    years.push_back({{"year", y.year},
                     {"profit_usd", y.profit_usd},
                     {"to_holders_usd", y.to_holder_usd},
                     {"to_nonprofit_usd", y.to_nonprofit_usd}});
  json holders = json::array();
  for (size_t i = 0; i < c.holders.size(); ++i) {
    const Holder& h = c.holders[i];
    holders.push_back({{"name", h.name},
                       {"total_usd", r.holder_total_usd[i]},
                       {"cap_usd", h.cap_multiple * h.basis_usd},
                       {"cap_multiple", h.cap_multiple},
                       {"share", h.share},
                       {"multiple", h.basis_usd > 0 ? r.holder_total_usd[i] / h.basis_usd : 0.0},
                       {"capped_year", r.holder_capped_year[i]}});
  }
  return {{"years", years},
          {"holders", holders},
          {"nonprofit_total_usd", r.nonprofit_total_usd},
          {"profit_total_usd", r.profit_total_usd},
          {"nonprofit_fraction", r.profit_total_usd > 0 ? r.nonprofit_total_usd / r.profit_total_usd : 0.0}};
}

json to_json(const PartnershipConfig& c) {
  return {{"total_usd", c.total_usd},
          {"start_year", c.start_year},
          {"installment_years", c.installment_years},
          {"cloud_credit_fraction", c.cloud_credit_fraction},
          {"usd_per_gpu_hour", c.usd_per_gpu_hour},
          {"gpu_flops_per_s", c.gpu_flops_per_s}};
}

PartnershipConfig partnership_config_from_json(const json& j, const PartnershipConfig& base) {
  only(j,
       {"total_usd", "start_year", "installment_years", "cloud_credit_fraction", "usd_per_gpu_hour", "gpu_flops_per_s"},
       "partnership");
  PartnershipConfig c = base;
  c.total_usd = num(j, "total_usd", c.total_usd);
  c.start_year = int(num(j, "start_year", c.start_year));
  c.installment_years = int(num(j, "installment_years", c.installment_years));
  c.cloud_credit_fraction = num(j, "cloud_credit_fraction", c.cloud_credit_fraction);
  c.usd_per_gpu_hour = num(j, "usd_per_gpu_hour", c.usd_per_gpu_hour);
  c.gpu_flops_per_s = num(j, "gpu_flops_per_s", c.gpu_flops_per_s);
  return c;
}

PartnershipTotals partnership_totals(const std::vector<PartnershipYear>& years) {
  PartnershipTotals t;
  for (const auto& y : years) {
    t.cash_usd += y.cash_usd;
    t.credit_usd += y.credit_usd;
    t.gpu_hours += y.gpu_hours;
    t.flops += y.flops;
  }
  t.gpu_years = t.gpu_hours / (24.0 * 365.25);
  return t;
}

json to_json(const std::vector<PartnershipYear>& years) {
  json ys = json::array();
  for (const auto& y : years)
    ys.push_back({{"year", y.year},
                  {"cash_usd", y.cash_usd},
                  {"credit_usd", y.credit_usd},
                  {"gpu_hours", y.gpu_hours},
                  {"flops", y.flops}});
  const PartnershipTotals t = partnership_totals(years);
  return {{"years", ys},      {"cash_usd", t.cash_usd},  {"credit_usd", t.credit_usd}, {"gpu_hours", t.gpu_hours},
          {"flops", t.flops}, {"gpu_years", t.gpu_years}};
}

}  // namespace mc::capital
