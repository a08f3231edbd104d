// step_view_ui_test.cpp - a scenario step's view is a function of the scenario and the step alone: every step
// of every shipped scenario opened by a link (a fresh page at ?scenario=ID&step=N) shows what stepping to it
// with ">" shows, and what going back to it with "<" shows: the panel, its tab, the main view's scroll, the
// outline and where it is drawn, and the config every panel holds.
#include "tests/ui/headless.h"
#include "ui/scenario_bindings.h"

#include <cmath>
#include <memory>

using mc::test::assets;
using mc::test::Headless;
using mc::test::NullPlatform;
using nlohmann::json;

namespace {

// One page (ImGui context, platform, app): a link opens a fresh one.
struct Page {
  Headless h{1440, 900};
  NullPlatform platform;
  mc::ui::App app{{assets(), &platform, ""}};
};

// The whole view once the step's work is done and the frames have settled (a tab selected in one frame is
// drawn from the next; an outline scrolls itself into view a frame after it is first drawn).
json view_of(Page& p) {
  auto& s = p.app.state();
  // A requested scenario is first taken up by a frame, then runs as a job: wait for both.
  // Twice: a panel starts what it computes (a layout search) when it is first drawn after the step, so the
  // first idle frame can come before it started (a view read mid-search differs in its scrollbar and wrapping).
  for (int wait = 0; wait < 2; ++wait) {
    EXPECT_TRUE(mc::test::frames_until(p.h, p.app, [&] {
      return s.scenarios.request_id.empty() && !s.scenarios.job && !mc::ui::panels_busy(s);
    })) << "still computing after two minutes";
    for (int f = 0; f < 6; ++f) p.h.frame(p.app);
  }
  json v;
  v["step"] = s.scenarios.player ? s.scenarios.player->current() + 1 : 0;
  v["panel"] = s.active_panel;
  v["tab"] = s.shown_tab;
  v["highlight"] = s.classroom.highlight_widget;
  if (const auto r = s.probe.widget_rects.find(s.classroom.highlight_widget); r != s.probe.widget_rects.end())
    v["highlight_at"] = {std::lround(r->second.x), std::lround(r->second.y)};
  const ImGuiWindow* main = ImGui::FindWindowByName("###main");
  v["scroll"] = main ? std::lround(main->Scroll.y) : -1;
  for (const auto& b : mc::ui::config_bindings()) v["config"][b.kind] = mc::ui::without_empty_sections(b.current(s));
  v["narration"] = s.classroom.narration_markdown;
  return v;
}

json link_view(const std::string& id, int k) {
  Page p;
  EXPECT_TRUE(mc::test::open_scenario_step(p.h, p.app, id, k));
  return view_of(p);
}

// The differences of two views, one line each ("" when they are the same).
std::string differences(const json& by_link, const json& other) {
  std::string out;
  for (const auto& [key, value] : by_link.items())
    if (!other.contains(key) || other[key] != value)
      out += "\n  " + key + ": by link " + value.dump().substr(0, 300) + ", here " +
             (other.contains(key) ? other[key].dump().substr(0, 300) : std::string("(none)"));
  for (const auto& [key, value] : other.items())
    if (!by_link.contains(key)) out += "\n  " + key + ": not in the link's view, here " + value.dump().substr(0, 300);
  return out;
}

}  // namespace

TEST(StepViews, ALinkShowsWhatNextAndPreviousShow) {
  int compared = 0;
  for (const std::string& id : mc::test::shipped_scenarios()) {
    SCOPED_TRACE(id);
    std::vector<json> by_link;
    for (int k = 0;; ++k) {
      by_link.push_back(link_view(id, k));
      if (by_link.back()["step"] != k + 1) {  // past the last step: a link clamps to it
        by_link.pop_back();
        break;
      }
    }
    ASSERT_FALSE(by_link.empty());
    // One page that opens the scenario at its start and steps through it with ">", then back with "<".
    Page p;
    ASSERT_TRUE(mc::test::open_scenario_step(p.h, p.app, id, 0));
    for (size_t k = 0; k < by_link.size(); ++k) {
      if (k > 0) mc::test::click_widget(p.h, p.app, "narration.next");
      const json v = view_of(p);
      EXPECT_EQ(differences(by_link[k], v), "") << "step " << k + 1 << " by \">\" is not the step by link";
      ++compared;
    }
    for (size_t k = by_link.size() - 1; k-- > 0;) {
      mc::test::click_widget(p.h, p.app, "narration.previous");
      const json v = view_of(p);
      EXPECT_EQ(differences(by_link[k], v), "") << "step " << k + 1 << " by \"<\" is not the step by link";
    }
  }
  EXPECT_GE(compared, 30);
}
