// first_screen_ui_test.cpp - what a class sees first and the room a projector has: the app opens on the
// story, a chapter of one panel is one sidebar entry, the empty inspector takes no width (F2 toggles it),
// and a combo box shortens a long name at its end.
#include "tests/ui/headless.h"
#include "ui/widgets.h"

#include <imgui_internal.h>

using mc::test::assets;
using mc::test::Headless;
using mc::test::NullPlatform;

namespace {

// How often `word` occurs in the text window `name` drew in the last frame.
int occurrences(const std::string& text, const std::string& word) {
  int n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + word.size())) ++n;
  return n;
}

bool window_shown(const char* name) {
  const ImGuiWindow* w = ImGui::FindWindowByName(name);
  return w && w->WasActive;
}

void press(Headless& h, mc::ui::App& app, int key) {
  ImGui::GetIO().KeysDown[key] = true;
  h.frame(app);
  ImGui::GetIO().KeysDown[key] = false;
  h.frame(app);
}

}  // namespace

TEST(FirstScreen, OpensOnTheStoryAndAChapterOfOnePanelIsOneEntry) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  for (int f = 0; f < 3; ++f) h.frame(app);
  EXPECT_EQ(app.state().active_panel, "story");
  // The sidebar's own text: its window is the first one logged.
  const std::string sidebar = h.text.substr(0, h.text.find("1 The story") + 400);
  for (const char* title : {"Capital", "Training lab", "Scenarios"}) EXPECT_EQ(occurrences(sidebar, title), 1) << title;
  // The chapter heading is the entry: it opens its panel.
  mc::test::click_widget(h, app, "sidebar.lab");
  EXPECT_EQ(app.state().active_panel, "lab");
  // A chapter of several panels keeps its heading and its entries.
  EXPECT_TRUE(app.state().probe.widget_rects.count("sidebar.catalog"));
  EXPECT_TRUE(app.state().probe.widget_rects.count("sidebar.perf"));
}

TEST(FirstScreen, TheEmptyInspectorTakesNoWidthAndF2TogglesIt) {
  Headless h(1280, 720);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "catalog"});
  for (int f = 0; f < 3; ++f) h.frame(app);
  EXPECT_FALSE(window_shown("Inspector"));
  const float wide = ImGui::FindWindowByName("###main")->Size.x;
  EXPECT_GT(ImGui::FindWindowByName("###main")->Pos.x + wide, 1280 - 2) << "the main view stops short of the edge";
  // A selection brings it back, with the row's sources.
  app.command({{"select", {"gpus", "v100-32gb"}}});
  for (int f = 0; f < 3; ++f) h.frame(app);
  EXPECT_TRUE(window_shown("Inspector"));
  EXPECT_LT(ImGui::FindWindowByName("###main")->Size.x, wide);
  constexpr int kF2 = 59;  // SDL scancode, as the shells' ImGui backend indexes keys
  press(h, app, kF2);
  EXPECT_FALSE(window_shown("Inspector"));
  press(h, app, kF2);
  EXPECT_TRUE(window_shown("Inspector"));
}

TEST(FirstScreen, AComboShortensANameAtItsEnd) {
  Headless h(1280, 720);
  ImGui::NewFrame();
  ImGui::Begin("t");
  const std::string name = "Azure AI supercomputer built for OpenAI (2020)";
  ImGui::SetNextItemWidth(ImGui::CalcTextSize(name.c_str()).x * 0.6f);
  const std::string shown = mc::ui::combo_preview(name);
  ImGui::SetNextItemWidth(1000);
  const std::string whole = mc::ui::combo_preview(name);
  ImGui::End();
  ImGui::Render();
  EXPECT_EQ(shown.rfind("Azure AI", 0), 0u) << shown;
  EXPECT_EQ(shown.substr(shown.size() - 3), "...") << shown;
  EXPECT_LT(shown.size(), name.size());
  EXPECT_EQ(whole, name);
}

// A shortened name ends at a word where that keeps at least half of what fits, and never in punctuation
// before the "...": the classroom review found "DeepSpeed 0.2-0...." (a version cut in two, four dots).
TEST(FirstScreen, AShortenedNameEndsAtAWordNotInAVersion) {
  Headless h(1280, 720);
  ImGui::NewFrame();
  const std::string name = "DeepSpeed 0.2-0.3 (2020)";
  // Room for "DeepSpeed 0.2-0" and the dots, not for the whole version.
  const float room = ImGui::CalcTextSize("DeepSpeed 0.2-0...").x + 1;
  const std::string shown = mc::ui::shorten_to_width(name, room);
  // One long word has no word end to keep: it is cut between letters.
  const std::string word = "Supercalifragilisticexpialidocious";
  const std::string cut = mc::ui::shorten_to_width(word, ImGui::CalcTextSize("Supercalifrag...").x + 1);
  const float shown_w = ImGui::CalcTextSize(shown.c_str()).x, cut_w = ImGui::CalcTextSize(cut.c_str()).x;
  ImGui::Render();
  EXPECT_EQ(shown, "DeepSpeed...");
  EXPECT_LE(shown_w, room);
  EXPECT_EQ(cut, "Supercalifrag...");
  EXPECT_LE(cut_w, ImGui::CalcTextSize("Supercalifrag...").x + 1);
  EXPECT_EQ(mc::ui::shorten_to_width(name, 1000), name);
}
