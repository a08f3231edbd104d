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

struct WaterfallConfig {
  // Default holders: first-round investors at the reported 100x cap; employees (same cap: assumed);
  // Microsoft's 2019 round at a lower cap (assumed 20x). Shares and bases are assumed.
  std::vector<Holder> holders = {
      {"First-round investors", "investor", 1.0e8, 0.25, 100},
      {"Employees", "employee", 1.0e8, 0.25, 100},
      {"Microsoft (2019 round)", "investor", 1.0e9, 0.30, 20},
  };
  // The hypothetical profit stream: explicit values per year, or (if empty) a geometric stream.
  std::vector<double> profit_usd;
  double first_year_profit_usd = 1e8;
  double profit_growth = 1.8;  // x per year
  int years = 15;
  int start_year = 2020;
};

struct WaterfallYear {
  int year = 0;
  double profit_usd = 0;
  std::vector<double> to_holder_usd;  // same order as holders
  double to_nonprofit_usd = 0;
};

struct WaterfallResult {
  std::vector<WaterfallYear> years;
  std::vector<double> holder_total_usd;   // cumulative
  std::vector<int> holder_capped_year;    // first year a holder reached its cap; 0 if never
  double nonprofit_total_usd = 0;
  double profit_total_usd = 0;
};

// Throws std::invalid_argument if shares are negative or sum above 1, or a basis/cap is negative.
WaterfallResult run_waterfall(const WaterfallConfig& cfg);

// The $1B: installments over `installment_years`, each split into cash and cloud credit; the credit buys
// GPU-hours at `usd_per_gpu_hour` (the Azure rental price).
struct PartnershipConfig {
  double total_usd = 1e9;              // reported
  int start_year = 2019;               // reported (2019-07-22)
  int installment_years = 5;           // "could arrive over years": assumed 5 equal installments
  double cloud_credit_fraction = 0.5;  // not public: assumed
  double usd_per_gpu_hour = 1.5;       // price the credit is spent at (prices table)
  double gpu_flops_per_s = 125e12 * 0.3;  // sustained per GPU (peak x utilisation)
};

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
