// trend.cpp - the AI-and-Compute exponential and the plotted runs (see trend.h).
#include "capital/trend.h"

#include <algorithm>
#include <cmath>

namespace mc::capital {

double ComputeTrend::flops_at(double year) const {
  return anchor_flops * std::exp2((year - anchor_year) * 12.0 / doubling_months);
}
double ComputeTrend::period_years() const { return std::log2(growth) * doubling_months / 12.0; }
double ComputeTrend::factor_per_year() const { return std::exp2(12.0 / doubling_months); }

ComputeTrend load_trend(const Catalog& cat, const std::string& anchor_run) {
  ComputeTrend t;
  const Table* runs = cat.table("runs");
  if (!runs) return t;
  if (const Record* r = runs->find("ai-and-compute-trend")) {
    t.doubling_months = r->get_or("doubling_months", t.doubling_months);
    t.growth = r->get_or("growth", t.growth);
    t.start_year = r->get_or("start_year", t.start_year);
  }
  if (const Record* a = runs->find(anchor_run)) {
    t.anchor_year = a->get_or("date", t.anchor_year);  // the decimal middle of the run's date
    t.anchor_flops = a->get_or("train_flops", t.anchor_flops);
  }
  return t;
}

std::vector<RunPoint> run_points(const Catalog& cat) {
  std::vector<RunPoint> out;
  const Table* runs = cat.table("runs");
  if (!runs) return out;
  for (const Record& r : runs->records) {
    const Sourced* f = r.find("train_flops");
    if (!f) continue;
    const Sourced* d = r.find("date");
    out.push_back({r.id, r.name, r.text_or("kind", "run"), d ? d->date : "", d ? d->value : 0, f->value, f});
  }
  std::sort(out.begin(), out.end(), [](const RunPoint& a, const RunPoint& b) { return a.year < b.year; });
  return out;
}

}  // namespace mc::capital
