// address_ui_test.cpp - the address is the state: moving around writes the page address (panel, tab,
// scenario, step) through the platform, the address written opens the same screen, and an address that
// cannot be opened is named on screen with the real ids nearest it.
#include "core/url_state.h"
#include "tests/ui/headless.h"
#include "ui/address.h"
#include "ui/scenario_bindings.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <regex>

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
  // request was still pending made the test depend on the job thread's timing). A frame first: a panel starts
  // its work when it draws, so before that nothing is busy yet.
  h.frame(app);
  ASSERT_TRUE(mc::test::frames_until(
      h, app, [&] { return s.scenarios.request_id.empty() && !s.scenarios.job && !mc::ui::panels_busy(s); }));
  for (int f = 0; f < 4; ++f) h.frame(app);
}

// A browser that keeps what the page stores (Platform::persistent), for the lab's kept run.
struct KeepingBar : AddressBar {
  bool persistent() const override { return true; }
  void store(const std::string& k, const std::string& v) override { kept[k] = v; }
  std::string stored(const std::string& k) const override { return kept.count(k) ? kept.at(k) : ""; }
  std::map<std::string, std::string> kept;
};

// A student's own run in the lab (seed 3, 40 steps), trained past step 5 and paused, so the browser keeps it:
// the step it was kept at (0 if it was not), and the page's address then in `address`.
int keep_a_students_run(KeepingBar& bar, std::string* address = nullptr) {
  Headless h(1440, 900);
  mc::ui::App app({assets(), &bar, "lab"});
  auto& lab = app.state().lab;
  lab.persist_every_s = 0;
  lab.config.steps = 40;
  lab.config.seed = 3;
  if (!mc::test::frames_until(h, app, [&] { return lab.shown.report.step >= 5; })) return 0;
  lab.running = false;  // paused: the kept run is this step
  if (!mc::test::frames_until(h, app, [&] { return !lab.train_job && bar.kept.count("lab.checkpoint"); })) return 0;
  for (int i = 0; i < 3; ++i) h.frame(app);
  if (address) *address = bar.now();
  return lab.trainer->step_index();
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
    ASSERT_TRUE(app.state().probe.widget_rects.count("main.notice")) << "the problem is not drawn";
    const mc::ui::Rect r = app.state().probe.widget_rects["main.notice"];
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
    const std::string said = app.state().notice + "\n" + app.state().classroom.narration_markdown;
    EXPECT_NE(said.find("did you mean \"openai-lp-2019\""), std::string::npos) << said;
    EXPECT_EQ(said.find("gpt3-2020"), std::string::npos) << said;
    EXPECT_FALSE(app.state().scenarios.player);
    EXPECT_NE(h.text.find("did you mean \"openai-lp-2019\""), std::string::npos) << "not on screen";
  }
}

// The address carries the edited "Train a transformer" config (issue 23: it did not, so a shared link lost
// the layout on screen; a link of before, ?edits=, still opens it): as its differences from the panel's default, and a
// fresh page opened from it shows the same config. A malformed edits list is refused on screen and the panel keeps its
// default.
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
    cfg.parallel.value().zero = 1;  // as the ZeRO slider and the precision combo set them
    cfg.training.value().precision = "fp32";
    settle(h, app);
    ASSERT_TRUE(app.state().perf.valid) << app.state().perf.error;
    EXPECT_EQ(bar.now(), "?panel=perf&edits.estimate=parallel.zero:1,training.precision:fp32");
    copied = bar.now();
    edited = mc::ui::without_empty_sections(mc::perf::to_json(cfg));
  }
  {
    Headless h(1440, 900);
    AddressBar bar;
    mc::ui::App app({assets(), &bar, ""});
    app.open_address(mc::parse_url_state(copied));
    settle(h, app);
    EXPECT_EQ(app.state().notice, "");
    EXPECT_EQ(app.state().active_panel, "perf");
    EXPECT_EQ(mc::ui::without_empty_sections(mc::perf::to_json(app.state().perf.config)), edited);
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
  EXPECT_EQ(mc::ui::without_empty_sections(mc::perf::to_json(app.state().perf.config)),
            app.state().default_configs.at("estimate"));
  EXPECT_EQ(bar.now(), "?panel=perf");
}

// Every chapter travels with the link (issue 39: only "Train a transformer" did, so a slower network set in
// the Run chapter was lost when the link was reopened). Per chapter: a control's value is changed, and a fresh
// page opened from the address written then shows the same figure the engine computed for it, which differs
// from a fresh page's own; the address it writes back is the one it was opened with.
TEST(Address, EveryChapterTravelsWithTheLink) {
  using mc::ui::ExplorerState;
  using nlohmann::json;
  struct Case {
    const char* panel;
    const char* part;                                  // the parameter that must carry it
    std::function<void(ExplorerState&)> change;        // as the control sets it
    std::function<json(const ExplorerState&)> figure;  // what the panel shows of it, from the engine
  };
  const auto shown = [](const char* kind) {
    return [kind](const ExplorerState& s) { return mc::ui::find_config_binding(kind)->shown(s); };
  };
  const Case cases[] = {
      {"capital/plan", "edits.plan=",
       [](ExplorerState& s) {
         s.capital.plan = mc::ui::capital_plan(*s.catalog, s.capital);
         s.capital.plan->budget_usd = 5e8;
       },
       shown("plan")},
      {"capital/waterfall", "edits.waterfall=",
       [](ExplorerState& s) {
         s.capital.waterfall = mc::ui::capital_waterfall(*s.catalog, s.capital);
         s.capital.waterfall->first_year_profit_usd = 2e9;
       },
       shown("waterfall")},
      {"perf", "edits.estimate=", [](ExplorerState& s) { s.perf.config.parallel.value().zero = 1; }, shown("estimate")},
      {"sim", "edits.simulate=", [](ExplorerState& s) { s.sim.config.estimate.cluster.node_network_Gbps = 100; },
       [](const ExplorerState& s) {
         return s.sim.iteration ? json(s.sim.iteration->simulated.iteration_time_s) : json();
       }},
      {"run", "edits.run=", [](ExplorerState& s) { s.sim.run_days = 60, s.sim.seed = 7; },
       [](const ExplorerState& s) {
         return json{s.sim.run_days, s.sim.seed};
       }},
      {"collective", "edits.collective=",
       [](ExplorerState& s) {
         s.collective.settings.algorithm = mc::sim::Algorithm::tree;
         s.collective.settings.gpus = 8;
       },
       [](const ExplorerState& s) { return s.collective.anim ? json(s.collective.anim->total_s) : json(); }},
      {"pipeline",
       "edits.pipeline=", [](ExplorerState& s) { s.pipeline.settings.schedule = int(mc::PipeSchedule::gpipe); },
       [](const ExplorerState& s) { return s.pipeline.anim ? json(s.pipeline.anim->bubble_fraction) : json(); }},
      {"zero", "edits.zero=", [](ExplorerState& s) { s.zero.settings.stage = 1; },
       [](const ExplorerState& s) { return s.zero.anim ? json(s.zero.anim->peak_bytes) : json(); }},
      {"lab", "edits.train=",
       [](ExplorerState& s) {
         s.lab.config.steps = 12;
         s.lab.config.seed = 5;
         s.lab.running = true;  // and Start
       },
       [](const ExplorerState& s) { return json(s.lab.shown.report.losses); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.panel);
    std::string copied;
    json fresh, changed;
    {
      Headless h(1440, 900);
      AddressBar bar;
      mc::ui::App app({assets(), &bar, ""});
      app.open_address(mc::parse_url_state(std::string("?panel=") + c.panel));
      settle(h, app);
      fresh = c.figure(app.state());
      c.change(app.state());
      settle(h, app);
      changed = c.figure(app.state());
      copied = bar.now();
      EXPECT_NE(copied.find(c.part), std::string::npos) << copied;
    }
    ASSERT_FALSE(changed.is_null());
    EXPECT_NE(changed, fresh) << "the change shows nothing: the test could not fail";
    Headless h(1440, 900);
    AddressBar bar;
    mc::ui::App app({assets(), &bar, ""});
    app.open_address(mc::parse_url_state(copied));
    settle(h, app);
    EXPECT_EQ(app.state().notice, "");
    std::string errors;
    for (const std::string& e : mc::ui::explorer_errors(app.state())) errors += e + "\n";
    EXPECT_EQ(c.figure(app.state()), changed) << errors << app.state().status << h.text.substr(0, 1500);
    EXPECT_EQ(bar.now(), copied) << "the link opened writes itself back";
  }
}

// A link's part that names no part, or that a panel refuses, is named on screen with the fix; the rest opens.
TEST(Address, ARefusedPartIsNamedAndTheRestOpens) {
  Headless h(1280, 720);
  AddressBar bar;
  mc::ui::App app({assets(), &bar, ""});
  app.open_address(mc::parse_url_state("?panel=zero&edits.zero=gpus:1000&edits.zeor=stage:1&edits.pipeline=stages:6"));
  settle(h, app);
  const std::string notice = app.state().notice;
  EXPECT_NE(notice.find("edits.zero= was ignored"), std::string::npos) << notice;
  EXPECT_NE(notice.find("gpus"), std::string::npos) << notice;
  EXPECT_NE(notice.find("edits.zero= was ignored: gpus: value 1000"), std::string::npos) << notice;
  EXPECT_NE(notice.find("64"), std::string::npos) << "the range is named: " << notice;
  EXPECT_EQ(notice.find(":3:"), std::string::npos) << "a link has no lines: " << notice;
  EXPECT_NE(notice.find("did you mean edits.zero="), std::string::npos) << notice;
  EXPECT_EQ(app.state().zero.settings, mc::sim::ZeroSettings{}) << "a refused part changes nothing";
  EXPECT_EQ(app.state().pipeline.settings.stages, 6) << "the other parts open";
  EXPECT_NE(h.text.find("was ignored"), std::string::npos) << "the refusal is on screen";
}

// The README lists the parts a link can carry: every registered part, by its id.
TEST(Address, TheReadmeNamesEveryPart) {
  std::ifstream f(std::string(MC_SOURCE_DIR) + "/README.md");
  const std::string readme((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(readme.empty());
  const std::vector<std::string> ids = mc::ui::address_part_ids();
  EXPECT_GE(ids.size(), 10u);
  for (const std::string& id : ids) EXPECT_NE(readme.find("`" + id + "`"), std::string::npos) << id;
}

// Every example link in the README opens without a notice (issue 41: its sub-path example named a scenario id
// that does not exist, "gpt3-2020", and opened an error). Placeholders (ID, N, TAB) are skipped.
TEST(Address, TheReadmesExampleLinksOpen) {
  std::ifstream f(std::string(MC_SOURCE_DIR) + "/README.md");
  std::string readme((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (size_t at = readme.find("=\n"); at != std::string::npos; at = readme.find("=\n", at))
    readme.erase(at + 1, 1);  // a link the README wraps after "scenario="
  const std::regex link(R"(\?(panel|scenario|present)=[^\s`)]+)");
  int opened = 0;
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), link); it != std::sregex_iterator(); ++it) {
    const std::string query = it->str();
    if (std::regex_search(query, std::regex("=(ID|N|TAB)\\b|/TAB"))) continue;
    SCOPED_TRACE(query);
    Headless h(1280, 720);
    AddressBar bar;
    mc::ui::App app({assets(), &bar, ""});
    app.open_address(mc::parse_url_state(query));
    settle(h, app);
    EXPECT_EQ(app.state().notice, "");
    if (query.find("scenario=") != std::string::npos) {
      EXPECT_TRUE(app.state().scenarios.player) << h.text;
    }
    ++opened;
  }
  EXPECT_GE(opened, 3);
}

// Timing of the address written every frame (not asserted: printed for the record).
TEST(Address, DISABLED_WritingTheAddressCost) {
  Headless h(1440, 900);
  AddressBar bar;
  mc::ui::App app({assets(), &bar, "perf"});
  settle(h, app);
  const auto t0 = std::chrono::steady_clock::now();
  size_t n = 0;
  for (int i = 0; i < 2000; ++i) n += mc::ui::address_edits(app.state()).size();
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 2000;
  std::printf("address_edits: %.1f us a frame (%zu parts)\n", us, n / 2000);
  for (const auto& p : mc::ui::panel_registry())
    for (const auto& a : p.address) {
      const auto t1 = std::chrono::steady_clock::now();
      for (int i = 0; i < 2000; ++i)
        if (const auto held = a.held(app.state()); !held.is_null())
          (void)mc::encode_config_edits(app.state().fresh_parts.at(a.id), held);
      std::printf("  %s: %.1f us\n", a.id.c_str(),
                  std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t1).count() / 2000);
    }
}

// The lab's run kept by the browser resumes on a reload of the same address, but a link that says what the lab
// trains is obeyed: another config's kept run is not shown in its place (it was, whatever the link said).
TEST(Address, ALinkToTheLabIsObeyedOverAnotherKeptRun) {
  KeepingBar bar;
  std::string copied;
  const int kept_step = keep_a_students_run(bar, &copied);
  ASSERT_GT(kept_step, 0);
  EXPECT_NE(copied.find("edits.train=seed:3,steps:40"), std::string::npos) << copied;
  {  // A reload of the same address resumes the kept run.
    Headless h(1440, 900);
    mc::ui::App app({assets(), &bar, ""});
    app.open_address(mc::parse_url_state(copied));
    for (int i = 0; i < 3; ++i) h.frame(app);
    const auto& lab = app.state().lab;
    ASSERT_TRUE(lab.trainer) << lab.error;
    EXPECT_EQ(lab.trainer->step_index(), kept_step);
    EXPECT_NE(lab.resume_note.find("resumed at step"), std::string::npos);
  }
  // Another link's lab starts its own run, and says nothing of the kept one.
  Headless h(1440, 900);
  mc::ui::App app({assets(), &bar, ""});
  app.open_address(mc::parse_url_state("?panel=lab&edits.train=seed:4,steps:40"));
  h.frame(app);
  const auto& lab = app.state().lab;
  ASSERT_TRUE(lab.trainer) << lab.error;
  EXPECT_EQ(lab.config.seed, 4u);
  EXPECT_LT(lab.trainer->step_index(), kept_step);
  EXPECT_EQ(lab.resume_note, "");
}

// A scenario's lab runs and the student's own run do not leak into each other (issue 41, item 1): step 8 of
// turing-nlg-zero-2020 (4 workers without ZeRO) opened by link shows what it shows in a fresh browser, after
// step 9 (ZeRO-3) was visited and after the student's own run; and the student's lab is never a scenario's
// finished run. Before, the browser kept step 9's run and resumed it in place of step 8's.
TEST(Address, AScenariosLabRunsAndTheStudentsOwnStayApart) {
  struct Seen {
    mc::train::TrainConfig config;
    std::string resume_note;
    int step = 0;
    std::vector<double> losses;
  };
  const auto step_of = [](KeepingBar& bar, int k) {
    Headless h(1440, 900);
    mc::ui::App app({assets(), &bar, ""});
    app.state().lab.persist_every_s = 0;
    EXPECT_TRUE(mc::test::open_scenario_step(h, app, "turing-nlg-zero-2020", k));
    settle(h, app);  // the lab trains the step's run to its end
    const auto& lab = app.state().lab;
    EXPECT_EQ(lab.error, "");
    return Seen{lab.config, lab.resume_note, lab.shown.report.step, lab.shown.report.losses};
  };
  const auto same = [](const Seen& a, const Seen& b) {
    EXPECT_TRUE(a.config == b.config) << mc::train::to_json(a.config).dump() << "\n"
                                      << mc::train::to_json(b.config).dump();
    EXPECT_EQ(a.resume_note, b.resume_note);
    EXPECT_EQ(a.step, b.step);
    EXPECT_EQ(a.losses, b.losses);
  };
  KeepingBar fresh_browser;
  const Seen fresh = step_of(fresh_browser, 7);
  ASSERT_EQ(fresh.config.parallel.zero, 0);
  ASSERT_EQ(fresh.step, fresh.config.steps);
  EXPECT_EQ(fresh_browser.kept.count("lab.checkpoint"), 0u) << "a step's run is not the student's to keep";

  KeepingBar bar;
  EXPECT_EQ(step_of(bar, 8).config.parallel.zero, 3);
  {
    SCOPED_TRACE("step 8 after step 9");
    same(step_of(bar, 7), fresh);
  }
  {  // The lab without a scenario is the student's: a fresh run, not the scenario's finished one.
    Headless h(1440, 900);
    mc::ui::App app({assets(), &bar, "lab"});
    for (int i = 0; i < 3; ++i) h.frame(app);
    const auto& lab = app.state().lab;
    EXPECT_EQ(lab.resume_note, "");
    EXPECT_NE(lab.config.parallel.zero, 3);
    EXPECT_FALSE(lab.scenario_config.has_value());
  }
  const int kept_step = keep_a_students_run(bar);  // the student's own run, kept by the browser
  ASSERT_GT(kept_step, 0);
  {
    SCOPED_TRACE("step 8 after the student's run");
    same(step_of(bar, 7), fresh);
  }
  {  // ... which the student's lab still resumes: the scenario's steps did not replace it.
    Headless h(1440, 900);
    mc::ui::App app({assets(), &bar, "lab"});
    for (int i = 0; i < 3; ++i) h.frame(app);
    const auto& lab = app.state().lab;
    ASSERT_TRUE(lab.trainer) << lab.error;
    EXPECT_EQ(lab.config.seed, 3u);
    EXPECT_EQ(lab.trainer->step_index(), kept_step);
    EXPECT_NE(lab.resume_note.find("resumed at step"), std::string::npos);
  }
}
