// plain_words_ui_test.cpp - the simulator's screens say what they assume and speak a student's words:
// "One iteration" names its model, GPU count and layout before any number about them, and neither it nor
// "A whole run" shows the engine's ids (pp_wait, leaf_down, checkpoint_writes) or kiloseconds ("MTBF 18.3 ks").
#include "core/format.h"
#include "tests/ui/headless.h"
#include "ui/scenario_bindings.h"

#include <set>

using mc::test::assets;
using mc::test::Headless;
using mc::test::NullPlatform;

namespace {

void show(Headless& h, mc::ui::App& app, const std::string& panel) {
  auto& s = app.state();
  ASSERT_TRUE(mc::ui::open_panel(s, panel)) << panel;
  for (int f = 0; f < 3; ++f) h.frame(app);
  ASSERT_TRUE(mc::test::frames_until(h, app, [&] { return !mc::ui::panels_busy(s); }));
  for (int f = 0; f < 3; ++f) h.frame(app);
}

void expect_plain(const std::string& text, const std::string& where) {
  for (const char* id : {"pp_wait", "pp_send", "dp_comm", "dp_wait", "tp_comm", "nic_up", "nic_down", "leaf_up",
                         "leaf_down", "nvlink_up", "nvlink_down", "checkpoint_writes", "data_stall", "MTBF", " ks"})
    EXPECT_EQ(text.find(id), std::string::npos) << where << " shows \"" << id << "\"";
}

}  // namespace

TEST(PlainWords, TheSimulatorNamesWhatItRunsInAStudentsWords) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  auto& s = app.state();
  // failures-at-scale: 1,024 GPUs, quick to simulate.
  ASSERT_TRUE(mc::test::open_scenario_step(h, app, "failures-at-scale", 0));
  show(h, app, "sim/timeline");
  ASSERT_TRUE(s.sim.iteration.has_value()) << s.sim.iteration_error;
  const mc::perf::Config& c = s.sim.iteration->config;
  const mc::Record* model = s.catalog->table("models")->find(c.model.id);
  ASSERT_NE(model, nullptr) << c.model.id;
  const std::string headline = model->name + " on " + mc::with_thousands(double(c.cluster.gpus())) +
                               " GPUs: tensor parallel " + std::to_string(c.layout.tp) + " x pipeline " +
                               std::to_string(c.layout.pp) + " x data parallel " + std::to_string(c.layout.dp);
  EXPECT_NE(h.text.find(headline), std::string::npos) << headline << " not in " << h.text.substr(0, 2000);
  ASSERT_TRUE(s.probe.widget_rects.count("sim.headline"));
  ASSERT_TRUE(s.probe.widget_rects.count("sim.iteration_time"));
  EXPECT_LT(s.probe.widget_rects["sim.headline"].y, s.probe.widget_rects["sim.iteration_time"].y)
      << "named before its numbers";
  expect_plain(h.text, "the timeline");
  EXPECT_NE(h.text.find("pipeline wait"), std::string::npos);
  show(h, app, "sim/links");
  expect_plain(h.text, "the links");
  show(h, app, "run");
  ASSERT_TRUE(s.sim.run.has_value()) << s.sim.run_error;
  expect_plain(h.text, "the run");
  EXPECT_NE(h.text.find("(one every " + mc::format_duration(s.sim.run->mtbf_s) + " on average)"), std::string::npos)
      << h.text;
  EXPECT_NE(h.text.find("writing checkpoints (overhead)"), std::string::npos);
  // Money says what it pays for ("$19 M" did not), and the failure rates are named, not an id cut short.
  if (s.sim.run->cost_usd > 0) {
    EXPECT_NE(h.text.find(mc::format_usd(s.sim.run->cost_usd) + " of GPU time"), std::string::npos) << h.text;
  }
  std::string profile = mc::sim::kDefaultFailureProfile;
  if (s.sim.config.failures && s.sim.config.failures->profile) profile = *s.sim.config.failures->profile;
  const mc::Record* rates = s.catalog->table("failures")->find(profile);
  ASSERT_NE(rates, nullptr) << profile;
  EXPECT_EQ(h.text.find("{ " + profile), std::string::npos) << "the rates combo shows the id " << profile;
  EXPECT_NE(h.text.find("{ " + rates->name.substr(0, 8)), std::string::npos)
      << "the rates combo does not show " << rates->name;
}

// The inspector names what a row refers to in words: "GPU: NVIDIA V100 ..." and "Note on the network", not the
// catalog's keys and ids ("gpu: v100-32gb", "fabric_note", "Prices / gpt2-llmc-2024": supercomputer-2020 step
// 1 and gpt2-tpu-2019 step 3 showed them to a class).
TEST(PlainWords, TheInspectorShowsNamesNotKeysOrIds) {
  Headless h(1440, 900, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  auto& s = app.state();
  ASSERT_TRUE(s.catalog);
  ASSERT_TRUE(mc::ui::open_panel(s, "catalog"));
  std::set<std::string> ids;
  for (const mc::Table& t : s.catalog->tables)
    for (const mc::Record& r : t.records) ids.insert(r.id);
  int checked = 0;
  for (const mc::Table& t : s.catalog->tables)
    for (const mc::Record& r : t.records) {
      SCOPED_TRACE(t.name + "/" + r.id);
      s.selection = mc::ui::Selection{t.name, r.id, ""};
      h.frame(app);
      h.frame(app);
      const std::string text = mc::test::drawn_text(mc::test::window_lists("Inspector"));
      ASSERT_NE(text.find(r.name.substr(0, 12)), std::string::npos) << "the inspector is not drawn: " << text;
      for (const auto& [key, value] : r.text) {
        // A line that starts with the key ("fabric_note: ..."); prose may say "a typo:".
        EXPECT_FALSE(text.rfind(key + ":", 0) == 0 || text.find("\n" + key + ":") != std::string::npos ||
                     text.find("\n  " + key + ":") != std::string::npos)
            << "the key \"" << key << "\" is shown";
        if (ids.count(value)) {
          EXPECT_FALSE(mc::ui::contains_word(text, value)) << "the id \"" << value << "\" is shown";
        }
        ++checked;
      }
      EXPECT_FALSE(mc::ui::contains_word(text, t.name + " / " + r.id)) << "the record's id is shown";
      EXPECT_EQ(text.find(" / " + r.id), std::string::npos) << "the record's id is shown";
    }
  EXPECT_GE(checked, 50);
}

// The layout search says why it refused layouts in the controls' words, not the engine's keys
// ("micro_batch*dp does not divide the global batch", "tp*pp*dp is not a whole number of nodes").
TEST(PlainWords, TheSearchRefusesInTheControlsWords) {
  Headless h(1440, 900, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  auto& s = app.state();
  ASSERT_TRUE(mc::test::open_scenario_step(h, app, "gpt3-on-the-machine", 0));
  ASSERT_TRUE(mc::test::frames_until(h, app, [&] { return s.perf.search_done && !mc::ui::panels_busy(s); }));
  for (int f = 0; f < 3; ++f) h.frame(app);
  ASSERT_FALSE(s.perf.search.rejected_by_reason.empty());
  const std::string text = mc::test::drawn_text(mc::test::window_lists("###main"));
  ASSERT_NE(text.find("Rejected:"), std::string::npos);
  for (const char* key : {"micro_batch", "tp*pp*dp", "*dp", "tp does"})
    EXPECT_EQ(text.find(key), std::string::npos) << "the search's refusals show \"" << key << "\"";
}

// The capped-profit waterfall's bars are each one year's profit as 100%: they carry a scale in percent
// (openai-lp-2019 drew them with none).
TEST(PlainWords, TheWaterfallHasAPercentScale) {
  Headless h(1280, 720, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  ASSERT_TRUE(mc::test::open_scenario_step(h, app, "openai-lp-2019", 0));
  for (int f = 0; f < 4; ++f) h.frame(app);
  const std::string text = mc::ui::visible_text(mc::test::window_lists("###main"));
  for (const char* tick : {"0%", "25%", "50%", "75%", "100%"})
    EXPECT_TRUE(mc::ui::contains_word(text, tick)) << tick << " not on the waterfall's scale: " << text;
}

// The collective's message is written in the unit of its source as well: Megatron-LM's 80 MB bucket read
// "76 MiB" only.
TEST(PlainWords, TheBucketIsWrittenInItsSourcesUnit) {
  Headless h(1440, 900, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  ASSERT_TRUE(mc::test::open_scenario_step(h, app, "network-matters", 3));
  ASSERT_TRUE(mc::test::frames_until(h, app, [&] { return !mc::ui::panels_busy(app.state()); }));
  for (int f = 0; f < 3; ++f) h.frame(app);
  EXPECT_NE(h.text.find("80 MB (76 MiB)"), std::string::npos) << h.text.substr(0, 3000);
}

// Every chapter and tab at a projector's width: no markup drawn as text (a command is named in words, not
// between backticks), no "that machine" without its name, and a status message too long for the bar ends in
// "..." inside the window instead of running off its edge.
TEST(PlainWords, NoScreenShowsMarkupAndTheStatusBarFits) {
  Headless h(1024, 768);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  auto& s = app.state();
  int screens = 0;
  for (const mc::ui::Panel& p : mc::ui::panel_registry()) {
    std::vector<std::string> ids;
    for (const std::string& t : p.tabs) ids.push_back(p.id + "/" + t);
    if (ids.empty()) ids.push_back(p.id);
    for (const std::string& id : ids) {
      show(h, app, id);
      ++screens;
      EXPECT_EQ(h.text.find('`'), std::string::npos) << id << ": " << h.text.substr(0, 1500);
      if (p.id == "run") {
        EXPECT_EQ(h.text.find("that machine"), std::string::npos) << "the machine is not named";
      }
    }
  }
  EXPECT_GE(screens, 10);
  const std::string tail = "the last words of a long message";
  s.status = std::string(300, 'x') + " " + tail;
  for (int f = 0; f < 2; ++f) h.frame(app);
  EXPECT_EQ(h.text.find(tail), std::string::npos) << "the whole message was drawn past the window's edge";
  EXPECT_NE(h.text.find("xxx..."), std::string::npos) << h.text.substr(h.text.size() > 400 ? h.text.size() - 400 : 0);
}
