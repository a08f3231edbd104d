// waterfall.h - OpenAI LP's capped-profit structure (announced 2019-03-11) and the Microsoft partnership
// (2019-07-22), as models a class can play with.
//
// What is public: the LP is controlled by the OpenAI Nonprofit; first-round investors' returns are capped
// at 100x their investment, later rounds lower; everything above the caps goes to the nonprofit
// (openai-lp-2019). Microsoft invested $1B, possibly in installments over years, with Azure as exclusive
// cloud and Microsoft as preferred commercialisation partner (microsoft-openai-2019). Not public: the
// ownership shares, the employees' basis, later caps, and the split of the $1B between cash and cloud
// credit. Those are parameters here, and the defaults are marked assumed wherever they are shown.
//
// The waterfall (our model): every year's profit is split pro rata by each holder's share of the LP; a
// holder whose cumulative distributions reach cap_multiple * basis_usd receives no more, and what it
// would have received flows to the nonprofit, which also holds the unassigned share.
#pragma once

#include "catalog/catalog.h"
#include "core/json_doc.h"

#include <string>
#include <vector>

namespace mc::capital {

struct Holder {
  std::string name;
  std::string kind = "investor";  // "investor" or "employee"
  double basis_usd = 0;           // invested (or, for employees, the value their units were granted at)
  double share = 0;               // fraction of LP profit distributions, 0..1
  double cap_multiple = 100;      // returns capped at cap_multiple * basis_usd
};

// The defaults (default_waterfall_config) are catalog rows: the holders of assets/catalog/capital.json
// (first-round investors at the reported 100x cap of prices/openai-lp-2019; employees, same cap assumed;
// Microsoft's 2019 round, its $1B from prices/microsoft-2019, at an assumed lower cap) and its profit
// stream. A value-initialised config is empty: no holders, no stream.
struct WaterfallConfig {
  std::vector<Holder> holders;
  // The hypothetical profit stream: explicit values per year, or (if empty) a geometric stream.
  std::vector<double> profit_usd;
  double first_year_profit_usd = 0;
  double profit_growth = 1;  // x per year
  int years = 0;
  int start_year = 0;
};
// Throws std::out_of_range naming the table, record and key the catalog lacks.
WaterfallConfig default_waterfall_config(const Catalog& cat);

struct WaterfallYear {
  int year = 0;
  double profit_usd = 0;
  std::vector<double> to_holder_usd;  // same order as holders
  double to_nonprofit_usd = 0;
};

struct WaterfallResult {
  std::vector<WaterfallYear> years;
  std::vector<double> holder_total_usd;  // cumulative
  std::vector<int> holder_capped_year;   // first year a holder reached its cap; 0 if never
  double nonprofit_total_usd = 0;
  double profit_total_usd = 0;
};

// Throws std::invalid_argument if shares are negative or sum above 1, or a basis/cap is negative.
WaterfallResult run_waterfall(const WaterfallConfig& cfg);

// The $1B: installments over `installment_years`, each split into cash and cloud credit; the credit buys
// GPU-hours at `usd_per_gpu_hour` (the Azure rental price). default_partnership_config fills it from the
// catalog: the reported $1B and its year (prices/microsoft-2019), the assumed installments and cash/credit
// split (capital/microsoft-2019-terms), the V100 rent and peak x the plan's utilisation.
struct PartnershipConfig {
  double total_usd = 0;
  int start_year = 0;
  int installment_years = 1;
  double cloud_credit_fraction = 0;
  double usd_per_gpu_hour = 1;  // price the credit is spent at
  double gpu_flops_per_s = 0;   // sustained per GPU (peak x utilisation)
};
// `usd_per_gpu_hour` and `gpu_flops_per_s` are the plan's (compute_cost.h): rent, and peak x utilisation.
PartnershipConfig default_partnership_config(const Catalog& cat, double usd_per_gpu_hour, double gpu_flops_per_s);

struct PartnershipYear {
  int year = 0;
  double cash_usd = 0, credit_usd = 0, gpu_hours = 0, flops = 0;
};
std::vector<PartnershipYear> run_partnership(const PartnershipConfig& cfg);

json to_json(const WaterfallConfig& c);
WaterfallConfig waterfall_config_from_json(const json& j, const WaterfallConfig& base);
json to_json(const WaterfallConfig& c, const WaterfallResult& r);
json to_json(const PartnershipConfig& c);
PartnershipConfig partnership_config_from_json(const json& j, const PartnershipConfig& base);
// The installments added up (to_json(years) carries these beside the years).
struct PartnershipTotals {
  double cash_usd = 0, credit_usd = 0, gpu_hours = 0, flops = 0;
  double gpu_years = 0;  // gpu_hours / (24 x 365.25)
};
PartnershipTotals partnership_totals(const std::vector<PartnershipYear>& years);
json to_json(const std::vector<PartnershipYear>& years);

}  // namespace mc::capital
