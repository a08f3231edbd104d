// The Capital and Story panels print the catalog's historical facts, not copies typed into the UI
// (review B8, B16, A6): change a fact in the catalog and the panel text follows; each number carries the
// confidence mark of its one catalog copy; GPT-3's compute reads "3,640 PF-days" on every screen.
#include "tests/ui/headless.h"

#include <gtest/gtest.h>

#include <string>

using mc::test::assets;
using mc::test::Headless;
using mc::test::NullPlatform;

namespace {

// The text of the Capital panel's tab `tab` (its registered id, as a link names it: ?panel=capital/waterfall).
std::string capital_tab_text(mc::ui::App& app, Headless& h, const std::string& tab) {
  EXPECT_TRUE(mc::ui::open_panel(app.state(), "capital/" + tab)) << tab;
  for (int i = 0; i < 3; ++i) h.frame(app);
  EXPECT_EQ(app.state().shown_tab, tab);
  return h.text;
}

mc::Sourced& value(mc::ui::App& app, const char* table, const char* record, const char* key) {
  for (auto& t : app.state().catalog->tables)
    if (t.name == table)
      for (auto& r : t.records)
        if (r.id == record) return r.values.at(key);
  throw std::out_of_range(std::string(table) + "/" + record);
}

}  // namespace

TEST(CapitalFacts, HistoricalFactsComeFromTheCatalog) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "capital"});
  ASSERT_TRUE(app.state().catalog.has_value()) << app.state().catalog_error;
  std::string text = capital_tab_text(app, h, "waterfall");
  EXPECT_NE(text.find("OpenAI LP (2019-03-11): first-round returns capped at 100x"), std::string::npos) << text;
  text = capital_tab_text(app, h, "partnership");
  EXPECT_NE(text.find("Microsoft and OpenAI, 2019-07-22: $1B,"), std::string::npos) << text;

  // Edit the catalog: the panel's sentences follow it (a typed "100x" or "$1B" would not).
  value(app, "prices", "openai-lp-2019", "cap_multiple").value = 50;
  value(app, "prices", "microsoft-2019", "investment_usd").value = 2e9;
  text = capital_tab_text(app, h, "waterfall");
  EXPECT_NE(text.find("first-round returns capped at 50x"), std::string::npos) << text;
  text = capital_tab_text(app, h, "partnership");
  EXPECT_NE(text.find("2019-07-22: $2B,"), std::string::npos) << text;
}

TEST(CapitalFacts, PricesShowTheirOneConfidenceAndGpt3ItsPaperCompute) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "capital"});
  ASSERT_TRUE(app.state().catalog.has_value()) << app.state().catalog_error;
  const std::string text = capital_tab_text(app, h, "rent_vs_build");
  // The on-demand V100 price is inferred (NCv3 list price / 4), marked "~" as the Train panel marks it.
  EXPECT_NE(text.find("V100 in the cloud, on demand (Azure NCv3, 2020) $3.06/h ~"), std::string::npos) << text;
  EXPECT_NE(text.find("3.14e+23 FLOPs (3,640 PF-days)"), std::string::npos) << text;
  // The unattributed low estimate is marked assumed, under its own name, not as Lambda's.
  EXPECT_NE(text.find("GPT-3 175B, low end of unattributed estimates $500,000 ?"), std::string::npos) << text;
  // The datacenter row's two values say which is which (it printed "Datacenter power (2020)" twice).
  EXPECT_NE(text.find("Datacenter power (2020): PUE 1.2 ?"), std::string::npos) << text;
  EXPECT_NE(text.find("Datacenter power (2020): Electricity 0.07 USD/kWh ?"), std::string::npos) << text;
}

TEST(CapitalFacts, TimelinePrintsGpt3ComputeAsTheChartDoes) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "story"});
  for (int i = 0; i < 3; ++i) h.frame(app);
  EXPECT_NE(h.text.find("175 billion parameters, 300 billion tokens, 3,640 PF-days, on V100s"), std::string::npos)
      << h.text;
  EXPECT_NE(h.text.find("More than 285,000 CPU cores, 10,000 GPUs, 400 Gb/s per GPU server"), std::string::npos)
      << h.text;
  EXPECT_EQ(h.text.find("{"), std::string::npos) << "an unexpanded fact: " << h.text;
}

// A scenario's capital config is read once by its codec: one the codec refuses is said in the panel, by its
// key, and the panel keeps computing with what it held; the next good one is taken and clears the message.
TEST(CapitalFacts, ARefusedScenarioConfigIsSaidAndTheViewKept) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "capital"});
  for (int i = 0; i < 2; ++i) h.frame(app);
  auto& s = app.state();
  ASSERT_TRUE(s.capital.plan.has_value()) << "the panel holds its plan once drawn";
  const double before = s.capital.plan->utilisation;
  const mc::ui::ConfigBinding* plan = mc::ui::find_config_binding("plan");
  ASSERT_NE(plan, nullptr);
  plan->apply(s, {{"utilisation", "high"}}, nullptr);
  EXPECT_NE(s.capital.error.find("utilisation"), std::string::npos) << s.capital.error;
  EXPECT_EQ(s.capital.plan->utilisation, before);
  h.frame(app);
  EXPECT_NE(h.text.find("config refused"), std::string::npos);
  plan->apply(s, {{"utilisation", 0.45}}, nullptr);
  EXPECT_EQ(s.capital.error, "");
  EXPECT_EQ(s.capital.plan->utilisation, 0.45);
}
