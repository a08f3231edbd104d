// chart_data.h - a chart as data: what a reader who cannot see the drawing gets in its place (WCAG 2.1
// success criterion 1.1.1, "non-text content": a text alternative that serves the same purpose). The panels
// draw their charts from these numbers; the engine says in one sentence what the chart shows and gives its
// data as a table with header cells, so the summary and the table are the figures the drawing was made from,
// not words typed beside it.
//
//   ChartData d{.title = "Training loss", .x_name = "step", .x = steps};
//   d.series.push_back({"dp 2", "nats/byte", losses});
//   chart_summary(d);   // "dp 2 falls from 5.55 nats/byte at step 1 to 2.31 nats/byte at step 300."
//   chart_table(d, 24); // header "step" | "dp 2 (nats/byte)", at most 24 rows (first, last and extremes kept)
#pragma once

#include <string>
#include <vector>

namespace mc {

struct ChartSeries {
  std::string name{};       // "dp 2", "weights"
  std::string unit{};       // "nats/byte", "GiB", "s" ("" for a pure number)
  std::vector<double> y{};  // y[i] belongs to x[i] (or x_labels[i]); shorter than x: the rest has no value
};

struct ChartData {
  std::string title{};                  // what the chart is of: "Training loss"
  std::string x_name{};                 // the first column: "step", "part", "GPUs"
  std::string x_unit{};                 // "" when x_name says it
  std::vector<double> x{};              // numeric positions (a line chart) ...
  std::vector<std::string> x_labels{};  // ... or categories (a bar chart): one of the two is used
  std::vector<ChartSeries> series{};
  // A bar chart whose bars are levels, each of its own thing (a link's load, a node's NIC), not parts of one
  // whole: its sentence gives the highest and the lowest, never a total.
  bool levels = false;
  bool categorical() const { return !x_labels.empty(); }
  size_t rows() const { return categorical() ? x_labels.size() : x.size(); }
};

// One sentence. A line chart: for each series (the first three), where it starts and ends and, when they lie
// between, its lowest and highest points. A bar chart of one series: the parts' total, the largest and the
// smallest with their shares (levels: the highest, the lowest and how many are zero, no total); of several
// series: each series' highest and lowest. "No data." when there is none.
std::string chart_summary(const ChartData& d);

struct ChartTable {
  std::vector<std::string> header{};             // x_name (x_unit), then each series' "name (unit)"
  std::vector<std::vector<std::string>> rows{};  // formatted cells; "-" where a series has no value
};
// The data as rows, at most `max_rows` (a bar chart's categories are all kept): a longer line chart keeps
// evenly spaced rows, its first and last, and each series' lowest and highest, in order of x.
ChartTable chart_table(const ChartData& d, size_t max_rows = 24);

// A table as one text: the header line, then a line a row, cells separated by tabs (tabs and line breaks
// in a cell become spaces). What the page's mirror turns into an HTML table.
std::string to_tsv(const ChartTable& t);

}  // namespace mc
