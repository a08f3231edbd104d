// address_ui_test.cpp - the address is the state: moving around writes the page address (panel, tab,
// scenario, step) through the platform, the address written opens the same screen, and an address that
// cannot be opened is named on screen with the real ids nearest it.
#include "core/url_state.h"
#include "tests/ui/headless.h"
#include "ui/scenario_bindings.h"

using mc::test::assets;
using mc::test::Headless;
using mc::test::NullPlatform;

namespace {

// The web platform's part that matters here: the addresses it was handed (history.replaceState).
struct AddressBar : NullPlatform {
  void set_address(const std::string& query) override { written.push_back(query); }
  std::string now() const { return written.empty() ? std::string() : written.back(); }
  std::vector<std::string> written;
};

void settle(Headless& h, mc::ui::App& app) {
  auto& s = app.state();
  // A requested scenario is taken up by a frame and then runs as a job: wait for both (returning while the
  // request was still pending made the test depend on the job thread's timing).
  ASSERT_TRUE(mc::test::frames_until(
      h, app, [&] { return s.scenarios.request_id.empty() && !s.scenarios.job && !mc::ui::panels_busy(s); }));
  for (int f = 0; f < 4; ++f) h.frame(app);
}

}  // namespace

TEST(Address, MovingAroundWritesTheAddressAndItOpensTheSameScreen) {
  std::string copied;
  {
    Headless h(1440, 900);
    AddressBar bar;
    mc::ui::App app({assets(), &bar, ""});
    settle(h, app);
    EXPECT_EQ(bar.now(), "?panel=story");
    EXPECT_EQ(app.command({{"panel", "catalog/systems"}}), "");
    settle(h, app);
    EXPECT_EQ(bar.now(), "?panel=catalog/systems");
    mc::test::click_widget(h, app, "sidebar.capital");
    settle(h, app);
    EXPECT_EQ(bar.now(), "?panel=capital/plan");
    ASSERT_TRUE(mc::test::open_scenario_step(h, app, "openai-lp-2019", 1));
    settle(h, app);
    EXPECT_EQ(bar.now(), "?panel=capital/waterfall&scenario=openai-lp-2019&step=2");
    mc::test::click_widget(h, app, "narration.next");
    settle(h, app);
    EXPECT_EQ(bar.now(), "?panel=capital/waterfall&scenario=openai-lp-2019&step=3");
    // While a link opens, the address stays as given (a reload then opens the same step).
    const size_t before = bar.written.size();
    app.state().scenarios.request_id = "dgx1-2016";
    app.state().scenarios.request_step = 2;
    h.frame(app);
    EXPECT_TRUE(bar.written.size() == before || bar.now().find("dgx1-2016") != std::string::npos) << bar.now();
    settle(h, app);
    EXPECT_EQ(bar.now().find("?panel=perf&scenario=dgx1-2016&step=3"), 0u) << bar.now();
    EXPECT_EQ(app.state_json()["address"], bar.now());
    copied = bar.now();
  }
  // The copied link, opened in a fresh page, writes itself back: the same screen.
  Headless h(1440, 900);
  AddressBar bar;
  mc::ui::App app({assets(), &bar, ""});
  app.open_address(mc::parse_url_state(copied));
  settle(h, app);
  EXPECT_EQ(bar.now(), copied);
  EXPECT_EQ(app.state().notice, "");
}

// ?panel=bogus, ?panel=sim/bogus and ?panel=Story once opened the catalog silently.
TEST(Address, ABadPanelIsNamedOnScreenWithRealIds) {
  struct Case {
    const char* query;
    std::vector<std::string> said;  // all in the notice
  };
  const Case cases[] = {
      {"?panel=bogus", {"panel=bogus", "no panel has the id", "story", "catalog", "perf", "lab"}},
      {"?panel=sim/bogus", {"panel=sim/bogus", "no tab \"bogus\"", "timeline", "links"}},
      {"?panel=Story", {"did you mean \"story\""}},
      {"?panel=catalog/gpuz", {"did you mean \"gpus\"", "systems"}},
      {"?panel=capital/waterfal", {"did you mean \"waterfall\""}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.query);
    Headless h(1280, 720);
    AddressBar bar;
    mc::ui::App app({assets(), &bar, ""});
    app.open_address(mc::parse_url_state(c.query));
    settle(h, app);
    const std::string notice = app.state().notice;
    for (const std::string& s : c.said) EXPECT_NE(notice.find(s), std::string::npos) << s << " not in: " << notice;
    ASSERT_TRUE(app.state().widget_rects.count("main.notice")) << "the problem is not drawn";
    const mc::ui::Rect r = app.state().widget_rects["main.notice"];
    EXPECT_TRUE(r.y >= 0 && r.y + r.h <= 720 && r.x >= 0 && r.x + r.w <= 1280) << "the notice is off screen";
    EXPECT_NE(h.text.find(notice.substr(0, 30)), std::string::npos);
    EXPECT_EQ(app.state().active_panel, "story") << "the first screen stays the story";
    mc::test::click_widget(h, app, "main.notice.dismiss");
    EXPECT_EQ(app.state().notice, "");
  }
  // The native --panel goes the same way.
  Headless h(1280, 720);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "Capital"});
  EXPECT_NE(app.state().notice.find("did you mean \"capital\""), std::string::npos) << app.state().notice;
}

// A malformed scenario id is told the real ids nearest it (it was told to try "scenario=gpt3-2020", which
// does not exist); so is a well-formed one that names no scenario.
TEST(Address, ABadScenarioIdSuggestsRealOnes) {
  for (const char* query : {"?scenario=openai+lp+2019&step=2", "?scenario=openai-lp-2020"}) {
    SCOPED_TRACE(query);
    Headless h(1280, 720);
    AddressBar bar;
    mc::ui::App app({assets(), &bar, ""});
    app.open_address(mc::parse_url_state(query));
    settle(h, app);
    const std::string said = app.state().notice + "\n" + app.state().narration_markdown;
    EXPECT_NE(said.find("did you mean \"openai-lp-2019\""), std::string::npos) << said;
    EXPECT_EQ(said.find("gpt3-2020"), std::string::npos) << said;
    EXPECT_FALSE(app.state().scenarios.player);
    EXPECT_NE(h.text.find("did you mean \"openai-lp-2019\""), std::string::npos) << "not on screen";
  }
}

// The address carries the edited "Train a transformer" config (issue 23: it did not, so a shared link lost
// the layout on screen): as its differences from the panel's default, and a fresh page opened from it shows
// the same config. A malformed edits list is refused on screen and the panel keeps its default.
TEST(Address, AnEditedConfigTravelsWithTheLink) {
  std::string copied;
  nlohmann::json edited;
  {
    Headless h(1440, 900);
    AddressBar bar;
    mc::ui::App app({assets(), &bar, "perf"});
    settle(h, app);
    EXPECT_EQ(bar.now(), "?panel=perf") << "drawing the panel is not an edit";
    auto& cfg = app.state().perf.config;
    cfg["parallel"]["zero"] = 1;  // as the ZeRO slider and the precision combo set them
    cfg["training"]["precision"] = "fp32";
    settle(h, app);
    ASSERT_TRUE(app.state().perf.valid) << app.state().perf.error;
    EXPECT_EQ(bar.now(), "?panel=perf&edits=parallel.zero:1,training.precision:fp32");
    copied = bar.now();
    edited = mc::ui::without_empty_sections(cfg);
  }
  {
    Headless h(1440, 900);
    AddressBar bar;
    mc::ui::App app({assets(), &bar, ""});
    app.open_address(mc::parse_url_state(copied));
    settle(h, app);
    EXPECT_EQ(app.state().notice, "");
    EXPECT_EQ(app.state().active_panel, "perf");
    EXPECT_EQ(mc::ui::without_empty_sections(app.state().perf.config), edited);
    EXPECT_EQ(bar.now(), copied) << "the link opened writes itself back";
    EXPECT_NE(h.text.find("fp32"), std::string::npos) << "the precision shown is the link's";
  }
  Headless h(1440, 900);
  AddressBar bar;
  mc::ui::App app({assets(), &bar, ""});
  app.open_address(mc::parse_url_state("?panel=perf&edits=parallel.zero"));
  settle(h, app);
  const std::string notice = app.state().notice;
  EXPECT_NE(notice.find("edits=\"parallel.zero\" was ignored"), std::string::npos) << notice;
  EXPECT_NE(notice.find("has no value"), std::string::npos) << notice;
  EXPECT_NE(h.text.find("was ignored"), std::string::npos) << "the refusal is on screen";
  EXPECT_EQ(app.state().perf.config, app.state().default_configs.at("estimate"));
  EXPECT_EQ(bar.now(), "?panel=perf");
}
