// A chart's text alternative (WCAG 2.1 1.1.1): the sentence names where each series starts, ends and turns,
// with the values worked out by hand below, and the table keeps the rows a reader asks after (the first,
// the last, the extremes) however long the series.
#include "core/chart_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

mc::ChartData loss_chart() {
  mc::ChartData d{.title = "Training loss", .x_name = "step", .x = {1, 2, 3, 4, 5}};
  d.series.push_back({"dp 2", "nats/byte", {5, 4, 2, 2.5, 3}});
  return d;
}

}  // namespace

TEST(ChartSummary, ALineSaysWhereItStartsEndsAndTurns) {
  EXPECT_EQ(mc::chart_summary(loss_chart()),
            "dp 2 falls from 5 nats/byte at step 1 to 3 nats/byte at step 5, lowest 2 nats/byte at step 3.");
  mc::ChartData up{.title = "Throughput", .x_name = "GPUs", .x = {1, 2, 4, 8}};
  up.series.push_back({"tokens/s", "", {100, 190, 370, 700}});
  EXPECT_EQ(mc::chart_summary(up), "tokens/s rises from 100 at GPUs 1 to 700 at GPUs 8.");
  mc::ChartData flat{.title = "Flat", .x_name = "t", .x_unit = "s", .x = {0, 10}};
  flat.series.push_back({"load", "%", {50, 50.2}});  // 0.4 % apart: not a rise
  EXPECT_EQ(mc::chart_summary(flat), "load stays near 50 % from t 0 s to t 10 s.");
}

TEST(ChartSummary, PartsOfAWholeGiveTheTotalAndTheLargestAndSmallestShares) {
  // 24 + 12 + 48 = 84 GiB; 48/84 = 57.14 %, 12/84 = 14.29 %.
  mc::ChartData d{.title = "Memory per GPU", .x_name = "part", .x_labels = {"weights", "gradients", "optimizer"}};
  d.series.push_back({"memory", "GiB", {24, 12, 48}});
  EXPECT_EQ(mc::chart_summary(d),
            "3 parts, 84 GiB in all; the largest is optimizer, 48 GiB (57.1 %), the smallest gradients, 12 GiB "
            "(14.3 %).");
}

TEST(ChartSummary, SeveralSeriesAreEachDescribedAndMissingValuesSkipped) {
  mc::ChartData d = loss_chart();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  d.series.push_back({"dp 4", "nats/byte", {5, nan, 4}});  // a shorter run, one value not drawn
  EXPECT_EQ(mc::chart_summary(d),
            "dp 2 falls from 5 nats/byte at step 1 to 3 nats/byte at step 5, lowest 2 nats/byte at step 3; dp 4 falls "
            "from 5 nats/byte at step 1 to 4 nats/byte at step 3.");
  const mc::ChartTable t = mc::chart_table(d);
  ASSERT_EQ(t.header, (std::vector<std::string>{"step", "dp 2 (nats/byte)", "dp 4 (nats/byte)"}));
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(t.rows[1], (std::vector<std::string>{"2", "4", "-"}));
  EXPECT_EQ(t.rows[4], (std::vector<std::string>{"5", "3", "-"}));
  EXPECT_EQ(mc::chart_summary(mc::ChartData{.title = "Nothing yet"}), "No data.");
}

TEST(ChartSummary, BarsOfSeveralSeriesNameEachOnesHighestAndLowest) {
  mc::ChartData d{.title = "Memory per worker", .x_name = "worker", .x_labels = {"w0", "w1", "w2"}};
  d.series.push_back({"weights", "kB", {340, 340, 340}});  // data parallelism: every worker holds them all
  d.series.push_back({"activations", "kB", {90, 60, 30}});
  EXPECT_EQ(mc::chart_summary(d),
            "weights is 340 kB at every worker; activations is highest at w0, 90 kB, and "
            "lowest at w2, 30 kB.");
}

TEST(ChartSummary, LevelsGiveTheHighestAndLowestNeverATotal) {
  // Links' loads are not parts of one whole: 100 % + 40 % is no quantity a reader wants.
  mc::ChartData d{
      .title = "Links", .x_name = "link", .x_labels = {"GPU 0 up", "GPU 1 up", "leaf 0 up"}, .levels = true};
  d.series.push_back({"load", "%", {100, 40, 25}});
  EXPECT_EQ(mc::chart_summary(d), "load is highest at GPU 0 up, 100 %, and lowest at leaf 0 up, 25 %.");
  // Idle links are counted, not one of them named as if it stood out.
  d.x_labels.push_back("leaf 1 up");
  d.series[0].y = {100, 0, 0, 60};
  EXPECT_EQ(mc::chart_summary(d), "load is highest at GPU 0 up, 100 %; 2 of 4 are at 0.");
  d.series[0].y = {100, 0, 30, 60};
  EXPECT_EQ(mc::chart_summary(d), "load is highest at GPU 0 up, 100 %; it is 0 at GPU 1 up.");
  d.series[0].y = {0, 0, 0, 0};
  EXPECT_EQ(mc::chart_summary(d), "load is 0 % at every link.");
}

TEST(ChartTable, ALongSeriesKeepsItsEndsAndExtremesInOrder) {
  // 1,000 steps of a noisy fall with its minimum at step 700 and a spike at step 333.
  mc::ChartData d{.title = "Loss", .x_name = "step"};
  mc::ChartSeries s{"run", "nats/byte", {}};
  for (int i = 0; i < 1000; ++i) {
    d.x.push_back(i + 1);
    s.y.push_back(i == 699 ? 0.5 : i == 332 ? 9.0 : 5.0 - 3.0 * i / 999.0);
  }
  d.series.push_back(s);
  const mc::ChartTable t = mc::chart_table(d, 24);
  ASSERT_LE(t.rows.size(), 24u);
  ASSERT_GE(t.rows.size(), 20u);
  EXPECT_EQ(t.rows.front()[0], "1");
  EXPECT_EQ(t.rows.back()[0], "1,000");
  bool low = false, high = false;
  double last = 0;
  for (const auto& r : t.rows) {
    low = low || (r[0] == "700" && r[1] == "0.5");
    high = high || (r[0] == "333" && r[1] == "9");
    std::string digits;
    for (char c : r[0])
      if (c != ',') digits += c;
    EXPECT_GT(std::stod(digits), last) << "rows in order of x";
    last = std::stod(digits);
  }
  EXPECT_TRUE(low) << "the lowest point is a row";
  EXPECT_TRUE(high) << "the highest point is a row";
  EXPECT_EQ(mc::chart_summary(d),
            "run falls from 5 nats/byte at step 1 to 2 nats/byte at step 1,000, lowest 0.5 nats/byte at step 700, "
            "highest 9 nats/byte at step 333.");
}

TEST(ChartTable, ATabSeparatedTextHasAHeaderLineAndALineARow) {
  mc::ChartData d{.title = "Memory", .x_name = "part", .x_labels = {"weights\tfp16", "optimizer"}};
  d.series.push_back({"memory", "GiB", {1.5, 12345.6}});
  EXPECT_EQ(mc::to_tsv(mc::chart_table(d)), "part\tmemory (GiB)\nweights fp16\t1.5\noptimizer\t12,350");
}
