// chart_data.cpp - a chart's summary sentence and its data table (see chart_data.h).
#include "core/chart_data.h"

#include "core/format.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace mc {

namespace {

bool has(const ChartSeries& s, size_t i) { return i < s.y.size() && std::isfinite(s.y[i]); }

// "2.31 nats/byte", "61.2 GiB", "0.5" (three significant digits in a sentence).
std::string amount(double v, const std::string& unit) {
  return unit.empty() ? format_count(v, 3) : format_count(v, 3) + " " + unit;
}

// "step 300", "GPUs 1,024", "2019"; a category as it is named.
std::string where(const ChartData& d, size_t i) {
  if (d.categorical()) return d.x_labels[i];
  const std::string x = format_count(d.x[i], 4);
  const std::string at = d.x_unit.empty() ? x : x + " " + d.x_unit;
  return d.x_name.empty() ? at : d.x_name + " " + at;
}

struct Extent {
  size_t first = 0, last = 0, lo = 0, hi = 0;
  double total = 0;
  int count = 0;
};

Extent extent_of(const ChartSeries& s, size_t n) {
  Extent e;
  for (size_t i = 0; i < n; ++i) {
    if (!has(s, i)) continue;
    if (e.count == 0) e.first = e.lo = e.hi = i;
    e.last = i;
    if (s.y[i] < s.y[e.lo]) e.lo = i;
    if (s.y[i] > s.y[e.hi]) e.hi = i;
    e.total += s.y[i];
    ++e.count;
  }
  return e;
}

// A line: "dp 2 falls from 5.55 nats/byte at step 1 to 2.31 nats/byte at step 300, lowest 2.29 at step 290".
// "Falls" and "rises" name a change of more than 1 % of the larger end; a smaller one "stays near".
std::string line_words(const ChartData& d, const ChartSeries& s, const Extent& e) {
  const double a = s.y[e.first], b = s.y[e.last];
  std::string out = s.name.empty() ? std::string("It") : s.name;
  if (e.count == 1) return out + " is " + amount(a, s.unit) + " at " + where(d, e.first);
  const double scale = std::max(std::fabs(a), std::fabs(b));
  if (std::fabs(b - a) <= 0.01 * scale)
    out += " stays near " + amount(a, s.unit) + " from " + where(d, e.first) + " to " + where(d, e.last);
  else
    out += (b < a ? " falls from " : " rises from ") + amount(a, s.unit) + " at " + where(d, e.first) + " to " +
           amount(b, s.unit) + " at " + where(d, e.last);
  const double lo = s.y[e.lo], hi = s.y[e.hi];
  if (lo < std::min(a, b) && format_count(lo, 3) != format_count(std::min(a, b), 3))
    out += ", lowest " + amount(lo, s.unit) + " at " + where(d, e.lo);
  if (hi > std::max(a, b) && format_count(hi, 3) != format_count(std::max(a, b), 3))
    out += ", highest " + amount(hi, s.unit) + " at " + where(d, e.hi);
  return out;
}

std::string share(double part, double total) {
  return total > 0 ? " (" + format_count(100 * part / total, 3) + " %)" : std::string();
}

std::string cell(double v) { return std::isfinite(v) ? format_count(v, 4) : std::string("-"); }

std::string header_of(const std::string& name, const std::string& unit) {
  return unit.empty() ? name : name + " (" + unit + ")";
}

}  // namespace

std::string chart_summary(const ChartData& d) {
  const size_t n = d.rows();
  std::vector<std::pair<const ChartSeries*, Extent>> drawn;
  for (const ChartSeries& s : d.series) {
    const Extent e = extent_of(s, n);
    if (e.count > 0) drawn.push_back({&s, e});
  }
  if (drawn.empty()) return "No data.";
  std::string out;
  if (d.categorical() && drawn.size() == 1 && !d.levels) {
    // The parts of one whole (a memory or time budget): its total and the largest and smallest parts.
    const auto& [s, e] = drawn.front();
    out = std::to_string(e.count) + (e.count == 1 ? " part" : " parts") + ", " + amount(e.total, s->unit) +
          " in all; the largest is " + where(d, e.hi) + ", " + amount(s->y[e.hi], s->unit) + share(s->y[e.hi], e.total);
    if (e.count > 1)
      out += ", the smallest " + where(d, e.lo) + ", " + amount(s->y[e.lo], s->unit) + share(s->y[e.lo], e.total);
    return out + ".";
  }
  const size_t said = std::min<size_t>(drawn.size(), 3);
  for (size_t k = 0; k < said; ++k) {
    const auto& [s, e] = drawn[k];
    if (k > 0) out += "; ";
    const std::string name = s->name.empty() ? std::string("It") : s->name;
    if (d.categorical() && format_count(s->y[e.hi], 3) == format_count(s->y[e.lo], 3))
      out += name + " is " + amount(s->y[e.hi], s->unit) +
             (e.count > 1 ? " at every " + d.x_name : " at " + where(d, e.hi));
    else if (d.categorical() && d.levels && s->y[e.lo] == 0) {
      // Levels with several at zero (links idle at this moment): how many, not an arbitrary one of them.
      int zeros = 0;
      for (size_t i = 0; i < n; ++i) zeros += has(*s, i) && s->y[i] == 0;
      out += name + " is highest at " + where(d, e.hi) + ", " + amount(s->y[e.hi], s->unit) + "; " +
             (zeros == 1 ? "it is 0 at " + where(d, e.lo)
                         : std::to_string(zeros) + " of " + std::to_string(e.count) + " are at 0");
    } else if (d.categorical())
      out += name + " is highest at " + where(d, e.hi) + ", " + amount(s->y[e.hi], s->unit) + ", and lowest at " +
             where(d, e.lo) + ", " + amount(s->y[e.lo], s->unit);
    else
      out += line_words(d, *s, e);
  }
  if (drawn.size() > said) {
    const size_t more = drawn.size() - said;
    out += "; " + std::to_string(more) + " more series in the table";
  }
  return out + ".";
}

ChartTable chart_table(const ChartData& d, size_t max_rows) {
  ChartTable t;
  t.header.push_back(header_of(d.x_name.empty() ? std::string("x") : d.x_name, d.x_unit));
  for (const ChartSeries& s : d.series) t.header.push_back(header_of(s.name, s.unit));
  const size_t n = d.rows();
  std::set<size_t> keep;
  if (d.categorical() || n <= max_rows || max_rows < 2) {
    for (size_t i = 0; i < n; ++i) keep.insert(i);
  } else {
    // The extremes first (they are what a reader asks after), then evenly spaced rows up to max_rows.
    keep.insert(0), keep.insert(n - 1);
    for (const ChartSeries& s : d.series) {
      const Extent e = extent_of(s, n);
      if (e.count > 0) keep.insert(e.lo), keep.insert(e.hi);
    }
    const size_t spaced = max_rows > keep.size() ? max_rows - keep.size() : 0;
    for (size_t k = 1; k <= spaced; ++k) {
      keep.insert(size_t(std::llround(double(k) * double(n - 1) / double(spaced + 1))));
      if (keep.size() >= max_rows) break;
    }
  }
  for (size_t i : keep) {
    std::vector<std::string> row;
    row.push_back(d.categorical() ? d.x_labels[i] : cell(d.x[i]));
    for (const ChartSeries& s : d.series) row.push_back(has(s, i) ? cell(s.y[i]) : std::string("-"));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string to_tsv(const ChartTable& t) {
  auto line = [](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) out += '\t';
      for (char ch : cells[i]) out += (ch == '\t' || ch == '\n' || ch == '\r') ? ' ' : ch;
    }
    return out;
  };
  std::string out = line(t.header);
  for (const auto& r : t.rows) out += '\n' + line(r);
  return out;
}

}  // namespace mc
