// presenter_ui_test.cpp - issue 23, "presenter mode and projector layout": F5, the sidebar's button and the
// address (?present=1) turn on a mode with larger type, the narration first (left of the panel) and no
// inspector; its own bar picks panels and leaves it. (Nothing cut off in it at 1280x720 and 1024x768:
// UiSmoke.NothingIsCutOffAtProjectorAndDesktopSizes.)
#include "tests/ui/headless.h"

#include "core/url_state.h"

#include <gtest/gtest.h>

using mc::test::assets;
using mc::test::click_widget;
using mc::test::Headless;
using mc::test::NullPlatform;

namespace {

constexpr int kF5 = 62;  // SDL scancode, as the shells' ImGui backend indexes keys

void press(Headless& h, mc::ui::App& app, int key) {
  ImGui::GetIO().KeysDown[key] = true;
  h.frame(app);
  ImGui::GetIO().KeysDown[key] = false;
  h.frame(app);
}

bool window_drawn(const char* name) {
  for (ImGuiWindow* w : GImGui->Windows)
    if (std::string(w->Name).rfind(name, 0) == 0 && w->Active && !w->Hidden) return true;
  return false;
}

}  // namespace

TEST(Presenter, F5LargerTypeNarrationFirstNoInspector) {
  Headless h(1280, 720, /*app_look=*/true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "catalog"});
  auto& s = app.state();
  s.scenarios.request_id = "failures-at-scale";
  s.scenarios.request_step = 1;
  ASSERT_TRUE(mc::test::frames_until(h, app, [&] { return !s.classroom.narration_markdown.empty(); }));
  s.selection = {"gpus", "v100-32gb", ""};  // something for the inspector to show
  h.frame(app);
  ASSERT_TRUE(window_drawn("Inspector"));
  const float font_before = ImGui::GetIO().FontGlobalScale;
  const float narration_x_before = s.probe.widget_rects["narration.text"].x;
  ASSERT_GT(narration_x_before, 640) << "the narration starts on the right";
  press(h, app, kF5);
  h.frame(app);
  ASSERT_TRUE(s.classroom.presenter);
  EXPECT_GT(ImGui::GetIO().FontGlobalScale, font_before * 1.2f) << "larger type";
  EXPECT_FALSE(window_drawn("Inspector")) << "the inspector is hidden";
  ASSERT_TRUE(s.probe.widget_rects.count("narration.text"));
  EXPECT_LT(s.probe.widget_rects["narration.text"].x, 50) << "the narration comes first, at the left";
  EXPECT_GT(s.probe.widget_rects["main.presenter"].x, s.probe.widget_rects["narration.text"].x);
  EXPECT_FALSE(s.probe.widget_rects.count("sidebar.catalog")) << "the sidebar is folded into the presenter bar";
  EXPECT_EQ(app.address().present, true);
  EXPECT_NE(mc::to_query(app.address()).find("present=1"), std::string::npos);
  // Its bar leaves it; the sidebar's button brings it back.
  click_widget(h, app, "main.presenter");
  EXPECT_FALSE(s.classroom.presenter);
  h.frame(app);
  EXPECT_EQ(ImGui::GetIO().FontGlobalScale, font_before);
  EXPECT_TRUE(window_drawn("Inspector"));
  click_widget(h, app, "sidebar.presenter");
  EXPECT_TRUE(s.classroom.presenter);
  press(h, app, kF5);
  EXPECT_FALSE(s.classroom.presenter);
}

TEST(Presenter, AddressOpensIt) {
  const mc::UrlState u = mc::parse_url_state("?panel=perf&present=1");
  EXPECT_TRUE(u.present);
  EXPECT_TRUE(u.problems.empty());
  EXPECT_FALSE(mc::parse_url_state("?present=0").present);
  EXPECT_FALSE(mc::parse_url_state("?present=maybe").problems.empty()) << "an unusable value is named";
  EXPECT_EQ(mc::parse_url_state(mc::to_query(u)), u);
  Headless h(1024, 768, /*app_look=*/true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  app.open_address(u);
  h.frame(app);
  h.frame(app);
  EXPECT_TRUE(app.state().classroom.presenter);
  EXPECT_EQ(app.state().active_panel, "perf");
  EXPECT_EQ(app.state_json()["presenter"], true);
}
