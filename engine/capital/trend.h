// trend.h - the "AI and Compute" trend (Amodei & Hernandez, OpenAI, May 2018): the compute of the largest
// training runs doubled every 3.4 months from 2012, a 300,000x increase, against Moore's law's ~2 years.
#pragma once

#include "catalog/catalog.h"

#include <string>
#include <vector>

namespace mc::capital {

struct ComputeTrend {
  double doubling_months = 3.4;  // reported
  double growth = 300000;        // reported, over the period
  double start_year = 2012;      // reported
  // The line passes through (anchor_year, anchor_flops); we anchor it on a run from the runs table.
  double anchor_year = 2018.9, anchor_flops = 6.65e22;
  double flops_at(double year) const;  // anchor * 2^((year - anchor_year) * 12 / doubling_months)
  double period_years() const;         // log2(growth) * doubling_months / 12: how long 300,000x takes
  double factor_per_year() const;      // 2^(12 / doubling_months)
};

// The trend from the runs table ("ai-and-compute-trend"), anchored on the run `anchor_run`.
ComputeTrend load_trend(const Catalog& cat, const std::string& anchor_run = "openai-five-2019");

struct RunPoint {
  std::string id, name, kind;
  std::string date;                      // as the catalog gives it ("2020-05")
  double year = 0, flops = 0;            // year: the middle of that date, decimal, for the chart's x axis
  const Sourced* flops_value = nullptr;  // into the catalog, for its source and confidence
};
// Every record of the runs table with a train_flops value, in year order.
std::vector<RunPoint> run_points(const Catalog& cat);

}  // namespace mc::capital
