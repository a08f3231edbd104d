// highlight_ui_test.cpp - a scenario's outline frames what its narration quotes: a highlight of a group (a
// headline of several lines, a bar with its parts in words) frames the whole group, not its last item
// (network-matters once quoted "0.54 s ... data-parallel communication" and outlined "optimizer 0.06 s").
#include "scenario/actions.h"
#include "scenario/player.h"
#include "tests/ui/headless.h"
#include "ui/scenario_bindings.h"

#include <set>

using mc::test::assets;
using mc::test::Headless;
using mc::test::NullPlatform;

namespace {

std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n' || c == '\r' || c == '\t';
    if (!space)
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  return out;
}

// The values step `k`'s narration quotes, as it writes them ("0.54 s", "$4.68M").
std::vector<std::string> quoted_values(const mc::scenario::Scenario& sc, int k, const nlohmann::json& results) {
  std::vector<std::string> out;
  const std::string& text = sc.steps[size_t(k)].narration;
  for (size_t open = text.find("{{"); open != std::string::npos; open = text.find("{{", open + 2)) {
    const size_t close = text.find("}}", open);
    if (close == std::string::npos) break;
    std::string ref = text.substr(open + 2, close - open - 2), how = "si";
    if (auto bar = ref.find('|'); bar != std::string::npos) how = ref.substr(bar + 1), ref = ref.substr(0, bar);
    if (const nlohmann::json* v = mc::scenario::lookup_result(results, ref))
      out.push_back(mc::scenario::render_narration("{{x|" + how + "}}", {{"x", *v}}, nullptr));
  }
  return out;
}

}  // namespace

// Every step that outlines a group and quotes numbers the panels draw: at least one of them is inside the
// outline (the text the group drew). The two reported cases must be among those checked.
TEST(ScenarioHighlights, AGroupOutlineFramesWhatTheNarrationQuotes) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  auto& s = app.state();
  std::set<std::string> checked;
  for (const std::string& id : mc::test::shipped_scenarios()) {
    ASSERT_TRUE(mc::test::open_scenario_step(h, app, id, 0)) << id;
    ASSERT_TRUE(s.scenarios.player) << id;
    const mc::scenario::Scenario sc = s.scenarios.player->scenario();
    for (int k = 0; k < int(sc.steps.size()); ++k) {
      SCOPED_TRACE(id + " step " + std::to_string(k + 1));
      ASSERT_TRUE(mc::test::open_scenario_step(h, app, id, k));
      ASSERT_TRUE(mc::test::frames_until(h, app, [&] { return !mc::ui::panels_busy(s); }));
      for (int f = 0; f < 4; ++f) h.frame(app);
      const std::string w = s.classroom.highlight_widget;
      if (w.empty() || !s.probe.widget_text.count(w)) continue;  // no outline, or a single item
      std::string panels = h.text;                               // what the class reads outside the narration pane
      if (const size_t at = panels.find(one_line(s.classroom.narration_markdown)); at != std::string::npos)
        panels.erase(at, one_line(s.classroom.narration_markdown).size());
      std::vector<std::string> drawn;
      for (const std::string& v : quoted_values(sc, k, s.scenarios.player->state().results))
        if (panels.find(v) != std::string::npos) drawn.push_back(v);
      if (drawn.empty()) continue;
      const std::string framed = one_line(s.probe.widget_text[w]);
      bool inside = false;
      for (const std::string& v : drawn) inside = inside || framed.find(v) != std::string::npos;
      std::string all;
      for (const std::string& v : drawn) all += " \"" + v + "\"";
      EXPECT_TRUE(inside) << "the narration quotes" << all << "; the outline of " << w << " frames \"" << framed
                          << "\"";
      checked.insert(id + "/" + std::to_string(k + 1));
    }
  }
  EXPECT_TRUE(checked.count("network-matters/1")) << "perf.time is not outlined as a group";
  EXPECT_TRUE(checked.count("gpt3-on-the-machine/3")) << "capital.gpt3 is not outlined as a group";
  EXPECT_GE(checked.size(), 5u);
}
