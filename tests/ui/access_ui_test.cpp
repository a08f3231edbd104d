// access_ui_test.cpp - the accessibility mirror (ui/access.h, issue 42): every control of every chapter has a
// role and a name a screen reader can say, sliders their value and range; the chapters, the narration and
// the status message are there; a press or a new value from the mirror reaches the app as a click or a
// confirmed entry would; and a still frame changes nothing in the page's DOM.
#include "core/format.h"
#include "tests/ui/headless.h"
#include "ui/access.h"
#include "ui/drawn_text.h"
#include "ui/widgets.h"

#include <imgui_internal.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>

using mc::test::assets;
using mc::test::Headless;
using mc::test::NullPlatform;
using mc::ui::access::Node;
using mc::ui::access::Role;

namespace {

bool is_control(const Node& n) {
  return n.role != Role::region && n.role != Role::tablist && n.role != Role::listbox && n.role != Role::text &&
         n.role != Role::live && n.role != Role::status && n.role != Role::figure && n.role != Role::table;
}

// A table node's tab-separated text split back into its rows' cells, the header first.
std::vector<std::vector<std::string>> cells_of(const Node& table) {
  std::vector<std::vector<std::string>> rows;
  std::string line;
  for (std::istringstream in(table.value); std::getline(in, line);) {
    rows.emplace_back();
    std::string cell;
    for (std::istringstream l(line); std::getline(l, cell, '\t');) rows.back().push_back(cell);
  }
  return rows;
}

// The controls of the last frame, as "role 'name'" for a failure message.
std::string describe(const Node& n) {
  return std::string(mc::ui::access::role_name(n.role)) + " '" + n.name + "' (value '" + n.value + "')";
}

}  // namespace

// Each chapter's controls (the sidebar, the panel, its tabs, the status bar's) have a role and a name; a
// slider or a field says its value, a slider its range with the value inside it. A control drawn without a
// label ImGui can give ("##id" alone) fails here, naming the chapter.
TEST(Access, EveryControlOfEveryChapterHasARoleANameAndAValue) {
  Headless h(1440, 900, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  h.frame(app);
  int controls = 0, sliders = 0, tabs = 0;
  for (const auto& p : mc::ui::panel_registry()) {
    app.state().active_panel = p.id;
    for (int f = 0; f < 4; ++f) h.frame(app);
    std::this_thread::sleep_for(std::chrono::milliseconds(110));  // the page reads a tree every 100 ms
    h.frame(app);
    const auto& t = app.access_tree();
    const Node* main = nullptr;
    for (const Node& n : t.nodes) {
      if (n.role == Role::region && n.main) main = &n;
      if (!is_control(n)) continue;
      ++controls;
      EXPECT_FALSE(n.name.empty()) << p.id << ": a control without a name: " << describe(n) << " at " << n.x << ","
                                   << n.y;
      EXPECT_GT(n.w, 0) << p.id << ": " << describe(n);
      if (n.role == Role::slider) {
        ++sliders;
        EXPECT_LT(n.lo, n.hi) << p.id << ": " << describe(n);
        EXPECT_TRUE(n.now >= n.lo && n.now <= n.hi) << p.id << ": " << describe(n);
        EXPECT_FALSE(n.value.empty()) << p.id << ": " << describe(n);
      }
      if (n.role == Role::combo) {
        EXPECT_FALSE(n.value.empty()) << p.id << ": " << describe(n);
      }
      if (n.role == Role::tab) {
        ++tabs;  // ARIA: a tab's parent is a tablist (axe-core's aria-required-parent)
        const auto bar = std::find_if(t.nodes.begin(), t.nodes.end(), [&](const Node& m) { return m.id == n.parent; });
        EXPECT_TRUE(bar != t.nodes.end() && bar->role == Role::tablist) << p.id << ": " << describe(n);
      }
    }
    ASSERT_NE(main, nullptr) << p.id << ": no region holds the chapter's content";
    EXPECT_EQ(main->name, p.title) << p.id;
    // The sidebar lists every panel, the one shown as current.
    int current = 0;
    for (const Node& n : t.nodes)
      if (n.role == Role::nav && n.checked == 1) {
        ++current;
        EXPECT_NE(n.name.find(p.title), std::string::npos) << p.id << ": the current chapter reads " << n.name;
      }
    EXPECT_EQ(current, 1) << p.id;
  }
  EXPECT_GT(controls, 200);
  EXPECT_GT(sliders, 10);
  EXPECT_GT(tabs, 3);
}

// The text each chapter draws is in the tree, in reading order, and a scenario step's narration is the live
// region's text (announced politely when the step changes).
TEST(Access, TheNarrationAndTheTextDrawnAreThere) {
  Headless h(1440, 900, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  ASSERT_TRUE(mc::test::open_scenario_step(h, app, "dgx1-2016", 1));
  for (int f = 0; f < 3; ++f) h.frame(app);
  const auto& t = app.access_tree();
  const Node* live = t.find("Narration", Role::live);
  ASSERT_NE(live, nullptr);
  EXPECT_EQ(live->value, app.state().classroom.narration_markdown);
  EXPECT_FALSE(live->value.empty());
  // The text lines lie in their region, top to bottom within it, a column at a time: a line above the one
  // before it begins a column to the right of it.
  int lines = 0;
  std::map<uint32_t, const Node*> last;
  for (const Node& n : t.nodes) {
    if (n.role != Role::text) continue;
    ++lines;
    EXPECT_NE(n.parent, 0u);
    if (const Node* b = last[n.parent]; b && n.y + 4 < b->y) {
      EXPECT_GT(n.x, b->x) << "'" << n.name << "' is out of reading order after '" << b->name << "'";
    }
    last[n.parent] = &n;
  }
  EXPECT_GT(lines, 20);

  // A line that uses a glossary term carries its definition (hover-only before).
  app.state().active_panel = "perf";
  for (int f = 0; f < 3; ++f) h.frame(app);
  std::this_thread::sleep_for(std::chrono::milliseconds(110));
  h.frame(app);
  const Node* mfu = nullptr;
  for (const Node& n : app.access_tree().nodes)
    if (n.role == Role::text && n.name.find("MFU") != std::string::npos && !mfu) mfu = &n;
  ASSERT_NE(mfu, nullptr) << "no line of the perf panel says MFU";
  EXPECT_NE(mfu->value.find("MFU: "), std::string::npos) << mfu->name << " -> " << mfu->value;
}

// A press from the mirror opens a chapter and a value set from it is the slider's, as a click and a confirmed
// entry are: the next frames show the app changed.
TEST(Access, APressAndAValueFromTheMirrorReachTheApp) {
  Headless h(1440, 900, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  for (int f = 0; f < 3; ++f) h.frame(app);
  const mc::ui::Panel* perf = mc::ui::find_panel("perf");
  ASSERT_NE(perf, nullptr);
  const Node* entry = nullptr;
  for (const Node& n : app.access_tree().nodes)
    if (n.role == Role::nav && n.name == perf->title) entry = &n;
  ASSERT_NE(entry, nullptr) << "no sidebar entry named '" << perf->title << "'";
  ASSERT_NE(app.state().active_panel, "perf");
  mc::ui::access::press(entry->id);
  for (int f = 0; f < 3; ++f) h.frame(app);
  EXPECT_EQ(app.state().active_panel, "perf");

  for (int f = 0; f < 3; ++f) h.frame(app);
  const Node* nodes = app.access_tree().find("nodes", Role::slider);
  ASSERT_NE(nodes, nullptr);
  const double target = nodes->now == 100 ? 50 : 100;
  mc::ui::access::set_value(nodes->id, target);
  for (int f = 0; f < 3; ++f) h.frame(app);
  nodes = app.access_tree().find("nodes", Role::slider);
  ASSERT_NE(nodes, nullptr);
  EXPECT_EQ(nodes->now, target);
  EXPECT_EQ(nodes->value, std::to_string(int(target)) + " nodes");
  // Out of range is held to the slider's range, as typed entries are.
  mc::ui::access::set_value(nodes->id, 1e9);
  for (int f = 0; f < 3; ++f) h.frame(app);
  nodes = app.access_tree().find("nodes", Role::slider);
  ASSERT_NE(nodes, nullptr);
  EXPECT_EQ(nodes->now, nodes->hi);

  // A combo box: a press opens its list, whose entries are options; pressing one chooses it.
  const Node* model = app.access_tree().find("model", Role::combo);
  ASSERT_NE(model, nullptr);
  const std::string was = model->value;
  EXPECT_EQ(model->expanded, 0);
  EXPECT_EQ(model->controls, 0u);
  mc::ui::access::press(model->id);
  for (int f = 0; f < 3; ++f) h.frame(app);
  std::vector<Node> options;
  std::set<uint32_t> lists;
  for (const Node& n : app.access_tree().nodes) {
    if (n.role == Role::option) options.push_back(n);
    if (n.role == Role::listbox) lists.insert(n.id);
  }
  ASSERT_GT(options.size(), 3u) << "the model list did not open";
  model = app.access_tree().find("model", Role::combo);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->expanded, 1) << "the open combo box is not expanded";
  EXPECT_EQ(lists.count(model->controls), 1u) << "the combo box does not point at its list";
  for (const Node& n : options) EXPECT_EQ(lists.count(n.parent), 1u) << "an option outside a listbox: " << n.name;
  const Node* other = nullptr;
  for (const Node& n : options)
    if (n.name != was && !other) other = &n;
  ASSERT_NE(other, nullptr);
  const std::string chosen = other->name;
  mc::ui::access::press(other->id);
  for (int f = 0; f < 4; ++f) h.frame(app);
  model = app.access_tree().find("model", Role::combo);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->value, chosen) << "the value is the whole name, however the box shortens it";
  EXPECT_NE(model->value, was);
  EXPECT_EQ(model->expanded, 0);
  for (const Node& n : app.access_tree().nodes) EXPECT_NE(n.role, Role::option) << "the list stayed open";
}

// Focus both ways (issue 42, item 2). The DOM's focus on a mirrored control (Tab, a screen reader's cursor)
// moves ImGui's keyboard navigation there with its highlight; ImGui's own navigation (arrows on the canvas)
// moves the tree's focus, and the page is told to follow with a "focus" operation, sent after the node is in
// place. The mouse taking over hides the highlight and leaves the DOM's focus alone.
TEST(Access, FocusFollowsBothWays) {
  Headless h(1440, 900, true);
  ImGuiIO& io = ImGui::GetIO();
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;  // as the shells set it (ui/shell/sdl_gl_shell.cpp)
  const int down = 81;                                   // any free index of KeysDown
  io.KeyMap[ImGuiKey_DownArrow] = down;
  io.KeyMap[ImGuiKey_Space] = 82;  // ImGui asserts that keyboard navigation has it
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  app.state().active_panel = "perf";
  for (int f = 0; f < 4; ++f) h.frame(app);
  EXPECT_EQ(app.access_tree().focus, 0u) << "keyboard focus shown before any key or mirror focus";
  const Node* slider = app.access_tree().find("nodes", Role::slider);
  ASSERT_NE(slider, nullptr);
  const uint32_t id = slider->id;
  const int slider_y = slider->y;
  const mc::ui::access::Tree before = app.access_tree();

  // The mirror's focus -> ImGui.
  mc::ui::access::focus(id);
  for (int f = 0; f < 3; ++f) h.frame(app);
  EXPECT_EQ(GImGui->NavId, id) << "ImGui's navigation did not move to the focused mirror node";
  EXPECT_FALSE(GImGui->NavDisableHighlight) << "ImGui's navigation moved without showing where";
  EXPECT_EQ(app.access_tree().focus, id);
  const auto ops = nlohmann::json::parse(mc::ui::access::diff(before, app.access_tree(), 1440, 900));
  ASSERT_FALSE(ops.empty());
  EXPECT_EQ(ops.back(), (nlohmann::json{{"op", "focus"}, {"id", id}})) << ops.dump();

  // ImGui's navigation -> the mirror: Down moves to the next control below, and the page is told.
  const mc::ui::access::Tree on_slider = app.access_tree();
  io.KeysDown[down] = true;
  h.frame(app);
  io.KeysDown[down] = false;
  for (int f = 0; f < 3; ++f) h.frame(app);
  const uint32_t moved = app.access_tree().focus;
  ASSERT_NE(moved, 0u) << "arrow navigation left no focus in the tree";
  EXPECT_NE(moved, id) << "Down did not move ImGui's navigation";
  EXPECT_EQ(moved, GImGui->NavId);
  const Node* to = nullptr;
  for (const Node& n : app.access_tree().nodes)
    if (n.id == moved) to = &n;
  ASSERT_NE(to, nullptr);
  EXPECT_TRUE(is_control(*to)) << describe(*to);
  EXPECT_GT(to->y, slider_y) << "Down went to " << describe(*to) << ", not below the slider";
  const auto ops2 = nlohmann::json::parse(mc::ui::access::diff(on_slider, app.access_tree(), 1440, 900));
  EXPECT_EQ(ops2.back(), (nlohmann::json{{"op", "focus"}, {"id", moved}})) << ops2.dump();

  // The mouse takes over: no keyboard focus to follow, and no operation moves the DOM's focus.
  const mc::ui::access::Tree by_keys = app.access_tree();
  mc::test::click_widget(h, app, "perf.nodes");
  for (int f = 0; f < 3; ++f) h.frame(app);
  EXPECT_EQ(app.access_tree().focus, 0u) << "a mouse click left the keyboard's highlight on";
  const std::string ops3 = mc::ui::access::diff(by_keys, app.access_tree(), 1440, 900);
  EXPECT_EQ(ops3.find("\"focus\""), std::string::npos) << ops3;
}

// The page's DOM changes only where the frame did: a still frame sends nothing, a chapter switch removes the
// old chapter's nodes and adds the new one's, and every operation is one the page's mirror knows.
TEST(Access, TheMirrorChangesOnlyWhereTheFrameDid) {
  Headless h(1440, 900, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  app.state().active_panel = "catalog";
  for (int f = 0; f < 4; ++f) h.frame(app);
  const mc::ui::access::Tree before = app.access_tree();
  const long reads = app.state_json()["access_us"]["reads"];
  h.frame(app);
  EXPECT_EQ(app.state_json()["access_us"]["reads"], reads) << "a still frame within 100 ms was read";
  // Past the 100 ms the page waits between readings of a frame that changed nothing it was told of.
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  h.frame(app);
  EXPECT_EQ(app.state_json()["access_us"]["reads"], reads + 1) << "the tree was not read again";
  EXPECT_EQ(mc::ui::access::diff(before, app.access_tree(), 1440, 900), "");

  app.state().active_panel = "capital";
  for (int f = 0; f < 3; ++f) h.frame(app);
  const std::string ops = mc::ui::access::diff(before, app.access_tree(), 1440, 900);
  ASSERT_FALSE(ops.empty());
  const auto j = nlohmann::json::parse(ops);
  const std::set<std::string> known = {"add", "set", "del", "order", "focus"};
  int adds = 0, dels = 0;
  for (const auto& op : j) {
    EXPECT_TRUE(known.count(op.at("op").get<std::string>())) << op.dump();
    adds += op["op"] == "add";
    dels += op["op"] == "del";
    if (op["op"] == "add") {
      EXPECT_TRUE(op.contains("role") && op.contains("name") && op.contains("parent")) << op.dump();
    }
  }
  EXPECT_GT(adds, 5);
  EXPECT_GT(dels, 5);
  // Fewer operations than a rebuild: the sidebar, the status bar and the narration are untouched.
  EXPECT_LT(j.size(), before.nodes.size() + app.access_tree().nodes.size());
}

// A reader who asked for less motion finds the three animations paused at their start (WCAG 2.3.3), and Play
// starts one; without the request they play as before.
TEST(Access, LessMotionStartsTheAnimationsPaused) {
  Headless h(1440, 900, true);
  NullPlatform still;
  still.reduce_motion = true;
  {
    mc::ui::App app({assets(), &still, "pipeline"});
    for (int f = 0; f < 5; ++f) h.frame(app);
    EXPECT_FALSE(app.state().collective.playing || app.state().pipeline.playing || app.state().zero.playing);
    EXPECT_EQ(app.state().pipeline.t_s, 0.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(110));
    h.frame(app);
    const Node* play = app.access_tree().find("Play", Role::button);
    ASSERT_NE(play, nullptr) << "no Play button while paused";
    mc::ui::access::press(play->id);
    for (int f = 0; f < 4; ++f) h.frame(app);
    EXPECT_TRUE(app.state().pipeline.playing);
  }
  NullPlatform moving;
  mc::ui::App app({assets(), &moving, "pipeline"});
  h.frame(app);
  EXPECT_TRUE(app.state().collective.playing && app.state().pipeline.playing && app.state().zero.playing);
}

// Reflow (WCAG 1.4.10): a page zoomed to 200 % (1440x900 becomes 720x450 CSS pixels) or a phone's width leaves
// no room for the sidebar beside a panel's 40 em; the sidebar folds into a chapter menu atop the panel, which
// then has the whole width, and a chapter is chosen from the menu (here through the mirror, as a screen
// reader's user would). The desktop keeps its sidebar.
TEST(Access, ANarrowPageFoldsTheSidebarIntoAChapterMenu) {
  for (const auto& [w, h_px] : {std::pair{1440.0f, 900.0f}, {720.0f, 450.0f}, {390.0f, 700.0f}}) {
    SCOPED_TRACE(std::to_string(int(w)) + "x" + std::to_string(int(h_px)));
    Headless h(w, h_px, true);
    NullPlatform platform;
    mc::ui::App app({assets(), &platform, ""});
    for (int f = 0; f < 3; ++f) h.frame(app);
    const auto& rects = app.state().probe.widget_rects;
    const bool wide = w >= 1024;
    EXPECT_EQ(rects.count("sidebar.catalog"), wide ? 1u : 0u);
    EXPECT_EQ(rects.count("main.presenter.panel"), wide ? 0u : 1u);
    const Node* main = nullptr;
    for (const Node& n : app.access_tree().nodes)
      if (n.role == Role::region && n.main) main = &n;
    ASSERT_NE(main, nullptr);
    if (wide) {
      EXPECT_GT(main->x, 0) << "the sidebar is left of the panel";
      continue;
    }
    EXPECT_EQ(main->x, 0);
    EXPECT_EQ(main->w, int(w)) << "the panel has the whole width";
    const Node* menu = app.access_tree().find("Panel", Role::combo);
    ASSERT_NE(menu, nullptr);
    mc::ui::access::press(menu->id);
    for (int f = 0; f < 3; ++f) h.frame(app);
    const Node* catalog = nullptr;
    for (const Node& n : app.access_tree().nodes)
      if (n.role == Role::option && n.name.find("Hardware catalog") != std::string::npos) catalog = &n;
    ASSERT_NE(catalog, nullptr) << "the chapter menu did not open";
    mc::ui::access::press(catalog->id);
    for (int f = 0; f < 3; ++f) h.frame(app);
    EXPECT_EQ(app.state().active_panel, "catalog");
  }
}

// At 320 pixels, the width WCAG 1.4.10 (Reflow) asks for, the catalog's table buttons and the status bar fit
// their windows: a table's name longer than a line is shortened with "..." and says its whole name to a screen
// reader; the status bar keeps "F1: keys". (Both ran off the right edge: issue 42.)
TEST(Access, AtThreeHundredTwentyPixelsTheCatalogAndTheStatusBarFit) {
  Headless h(320, 640, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  app.state().active_panel = "catalog";
  for (int f = 0; f < 4; ++f) h.frame(app);
  for (const std::string& o : mc::test::overflowing_windows())
    EXPECT_TRUE(o.rfind("##status", 0) != 0 && o.find("###main") == std::string::npos) << o;
  EXPECT_NE(h.text.find("F1: keys"), std::string::npos) << h.text;
  std::set<std::string> buttons;
  for (const Node& n : app.access_tree().nodes)
    if (n.role == Role::button) buttons.insert(n.name);
  for (const auto& t : app.state().catalog->tables)
    EXPECT_TRUE(buttons.count(t.title)) << "no button says '" << t.title << "' whole";
  EXPECT_NE(h.text.find("[ Checkpoint storage"), std::string::npos) << h.text;
  EXPECT_EQ(h.text.find("Checkpoint storage and the data pipeline ]"), std::string::npos)
      << "the longest name is whole";
}

// At 320 px (WCAG 1.4.10) no chapter's view runs past the window's right edge: a slider, field or combo box
// whose label does not fit beside it has the label on its own line above ("NIC Gb/s per node" was cut to "NIC
// Gb/s per no") and keeps its name for a screen reader; ZeRO's stages wrap; the run's failure profile fits its
// line; long notes wrap (capital's "Losses are on each paper's own data..." ran 335 px past, the pipeline's
// legend 321 px); the simulation's timeline labels give way to its bars; the analytic model's "The same layout
// on every training stack" is shortened with "..." (39 px past), whole to a screen reader.
TEST(Access, AtThreeHundredTwentyPixelsNoChapterRunsPastTheWindow) {
  Headless h(320, 640, true);
  h.capture = false;  // the tests' capture opens every tree node (ImGui's log does): the page's view is wanted
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  for (const auto& p : mc::ui::panel_registry()) {
    app.state().active_panel = p.id;
    for (int f = 0; f < 400 && (f < 4 || mc::ui::panels_busy(app.state())); ++f) h.frame(app);
    for (const std::string& o : mc::test::overflowing_windows()) ADD_FAILURE() << p.id << ": " << o;
  }
  app.state().active_panel = "sim";
  for (int f = 0; f < 3; ++f) h.frame(app);
  for (const char* name : {"NIC Gb/s per node", "oversubscription"}) {
    const Node* n = app.access_tree().find(name, Role::slider);
    ASSERT_NE(n, nullptr) << "the slider whose label went above it lost its name: " << name;
    EXPECT_LE(n->x + n->w, 320) << name;
    EXPECT_NE(app.access_tree().find(name, Role::text), nullptr) << name << " is not drawn whole on its own line";
  }
}

// A control scrolled out of its window's view is mirrored all the same (a screen reader's cursor and Tab go
// through the whole page, not only what is on screen), marked not visible; focusing it from the page scrolls
// it into view and gives it ImGui's keyboard focus. At 320 px the catalog's export buttons lie below the fold.
TEST(Access, AControlScrolledOutOfViewIsMirroredAndFocusBringsItIntoView) {
  Headless h(320, 640, true);
  h.capture = false;  // the tests' text capture lays out clipped items too: this is the page's case
  ImGuiIO& io = ImGui::GetIO();
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  io.KeyMap[ImGuiKey_Space] = 82;  // ImGui asserts that keyboard navigation has it
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  app.state().active_panel = "catalog";
  for (int f = 0; f < 4; ++f) h.frame(app);
  for (const char* name : {"Export CSV", "Export JSON"}) {
    const Node* b = app.access_tree().find(name, Role::button);
    ASSERT_NE(b, nullptr) << "'" << name << "' is below the fold and not in the tree";
    EXPECT_FALSE(b->visible) << name << " at y " << b->y;
  }
  const uint32_t id = app.access_tree().find("Export CSV", Role::button)->id;
  mc::ui::access::focus(id);
  for (int f = 0; f < 3; ++f) h.frame(app);
  std::this_thread::sleep_for(std::chrono::milliseconds(110));  // the page reads a tree every 100 ms
  h.frame(app);
  const Node* b = app.access_tree().find("Export CSV", Role::button);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->visible) << "focus did not scroll it into view: y " << b->y;
  EXPECT_LE(b->y + b->h, 640);
  EXPECT_EQ(GImGui->NavId, id);
  // Nothing the log mode could change is shown: no tree node opened, and ImGui's log is left off.
  EXPECT_FALSE(GImGui->LogEnabled);
}

// Long work is announced as a status message (WCAG 4.1.3) now and then, not at every step: the lab says its step
// and loss at most every 10 s of the app's clock while it trains, and at once that it finished.
TEST(Access, TrainingProgressIsAnnouncedNowAndThen) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  app.state().active_panel = "lab";
  h.frame(app);
  // A small model (the lab's default took 20 s under the sanitizers) and slow frames, a second of the app's
  // clock each, so that the run spans several 10 s throttle windows however fast the machine trains it.
  auto& lab = app.state().lab.config;
  lab.model.layers = 1, lab.model.width = 32, lab.model.context = 32, lab.batch = 4;
  lab.steps = 100;  // more than one 20 ms slice can train, however fast the machine
  ImGui::GetIO().DeltaTime = 1.0f;
  app.state().lab.running = true;                    // Start
  std::vector<std::pair<double, std::string>> said;  // (the app's clock, what the Progress status says)
  const auto finished = [&] { return !said.empty() && said.back().second.rfind("Training finished:", 0) == 0; };
  for (int f = 0; f < 200000 && !finished(); ++f) {
    h.frame(app);
    const Node* n = app.access_tree().find("Progress", Role::status);
    const std::string now = n ? n->value : "";
    if (said.empty() ? !now.empty() : now != said.back().second) said.push_back({ImGui::GetTime(), now});
  }
  ASSERT_TRUE(finished()) << (said.empty() ? "nothing said" : said.back().second);
  EXPECT_NE(said.back().second.find("step 100 of 100, loss "), std::string::npos) << said.back().second;
  int running = 0;
  for (size_t i = 0; i + 1 < said.size(); ++i) {
    EXPECT_EQ(said[i].second.rfind("Training: step ", 0), 0u) << said[i].second;
    if (i > 0) {
      EXPECT_GE(said[i].first - said[i - 1].first, 10.0 - 1e-9) << "said again too soon: " << said[i].second;
    }
    ++running;
  }
  EXPECT_GE(running, 2) << "the run's progress was said once: the throttle was not exercised";
  std::printf("[ progress ] %d announcements while training, then the result\n", running);
}

// A chart's text alternative (WCAG 1.1.1): every chart drawn is a figure named by its title whose value is the
// engine's one-sentence summary, followed by its data as a table (header line first) over the drawing. The
// perf panel's memory bar sums to the estimate's total; the lab's loss curve ends at the run's last loss.
TEST(Access, EveryChartIsAFigureWithASummaryAndItsData) {
  Headless h(1440, 900, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  h.frame(app);
  std::set<std::string> seen;
  // Each figure is followed by its table, a child of it, with a header and at least one row.
  auto check_figures = [&](const std::string& chapter) {
    const auto& nodes = app.access_tree().nodes;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      if (n.role != Role::figure) continue;
      seen.insert(n.name);
      EXPECT_FALSE(n.name.empty()) << chapter;
      EXPECT_FALSE(n.value.empty()) << chapter << ": " << n.name;
      EXPECT_EQ(n.value.back(), '.') << chapter << ": " << n.name << ": " << n.value;
      ASSERT_LT(i + 1, nodes.size()) << chapter << ": " << n.name;
      const Node& t = nodes[i + 1];
      EXPECT_EQ(t.role, Role::table) << chapter << ": " << n.name;
      EXPECT_EQ(t.parent, n.id) << chapter << ": " << n.name;
      if (n.value != "No data.") {
        EXPECT_NE(t.value.find('\n'), std::string::npos) << chapter << ": " << n.name;
      }
      EXPECT_GT(t.w, 0) << chapter << ": " << n.name;
    }
  };
  for (const auto& p : mc::ui::panel_registry()) {
    app.state().active_panel = p.id;
    for (int f = 0; f < 400 && (f < 4 || mc::ui::panels_busy(app.state())); ++f) h.frame(app);
    h.frame(app);
    check_figures(p.id);
    if (p.id != "sim") continue;
    app.state().tab_request = "links";  // the simulation's other tab: its link charts
    for (int f = 0; f < 3; ++f) h.frame(app);
    check_figures("sim/links");
  }
  for (const char* expected :
       {"Memory per GPU", "Time of one iteration", "Pipeline schedule", "Links of the collective",
        "Link utilisation by class", "Busiest links over the iteration", "Node NIC utilisation"})
    EXPECT_TRUE(seen.count(expected)) << "no figure '" << expected << "'";

  // The memory bar: its parts sum to the estimate's total, in GiB as the panel writes it.
  app.state().active_panel = "perf";
  for (int f = 0; f < 4; ++f) h.frame(app);
  const Node* mem = app.access_tree().find("Memory per GPU", Role::figure);
  ASSERT_NE(mem, nullptr);
  const double total_gib = app.state().perf.estimate.memory.total / double(1ull << 30);
  EXPECT_NE(mem->value.find(", " + mc::format_count(total_gib, 3) + " GiB in all"), std::string::npos) << mem->value;

  // The loss curve after a short run: it starts at step 1 and ends at the run's last loss.
  app.state().active_panel = "lab";
  h.frame(app);
  app.state().lab.config.steps = 30;
  app.state().lab.running = true;
  for (int f = 0; f < 20000 && mc::ui::panels_busy(app.state()); ++f) h.frame(app);
  for (int f = 0; f < 3; ++f) h.frame(app);
  const auto& losses = app.state().lab.shown.report.losses;
  ASSERT_EQ(losses.size(), 30u);
  const Node* loss = app.access_tree().find("Training loss", Role::figure);
  ASSERT_NE(loss, nullptr);
  EXPECT_NE(loss->value.find(" at step 1 to " + mc::format_count(losses.back(), 3) + " nats/byte at step 30"),
            std::string::npos)
      << loss->value;
  check_figures("lab");
}

// The other long work is announced too: a scenario's step while it computes (it trains the lab before its
// narration is shown: "Computing step 9 of 12: 40 %") and the iteration simulation of the whole machine.
TEST(Access, AScenarioStepAndASimulationAnnounceTheirProgress) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  h.frame(app);
  std::vector<std::string> said;
  const auto watch = [&](int frames, const std::function<bool()>& done) {
    for (int f = 0; f < frames && !done(); ++f) {
      h.frame(app);
      const Node* n = app.access_tree().find("Progress", Role::status);
      const std::string now = n ? n->value : "";
      if (said.empty() || now != said.back()) said.push_back(now);
    }
  };
  app.state().scenarios.request_id = "turing-nlg-zero-2020";
  app.state().scenarios.request_step = 8;  // 0-based: the link's step=9, which trains the lab
  watch(200000, [&] {
    return app.state().scenarios.player && !app.state().scenarios.job && !mc::ui::panels_busy(app.state());
  });
  ASSERT_TRUE(app.state().scenarios.player);
  const int steps = app.state().scenarios.player->step_count();
  const std::string step = "Computing step 9 of " + std::to_string(steps) + ": ";
  EXPECT_TRUE(std::any_of(said.begin(), said.end(), [&](const std::string& s) { return s.rfind(step, 0) == 0; }))
      << "never said '" << step << "...'; said " << testing::PrintToString(said);

  said.clear();
  app.state().active_panel = "sim";
  watch(200000, [&] { return said.size() > 1 && !mc::ui::panels_busy(app.state()); });
  EXPECT_TRUE(std::any_of(said.begin(), said.end(), [](const std::string& s) {
    return s.rfind("Simulating one iteration: ", 0) == 0;
  })) << testing::PrintToString(said);
}

// A table whose cells wrap or hold two items is one row per row ImGui drew, not one per line: the scenario
// gallery's title (wrapped at a narrow width) and its audience below it are one row with the minutes, the topics
// and the Open button (issue 42: each line was read as a row of its own).
TEST(Access, AWrappedCellIsOneRowOfItsTable) {
  for (const float w : {1440.0f, 1024.0f}) {
    SCOPED_TRACE(std::to_string(int(w)) + " wide");
    Headless h(w, 900, true);
    NullPlatform platform;
    mc::ui::App app({assets(), &platform, ""});
    app.state().active_panel = "scenarios";
    for (int f = 0; f < 4; ++f) h.frame(app);
    const Node* table = app.access_tree().find("Scenarios", Role::table);
    ASSERT_NE(table, nullptr);
    const std::vector<std::vector<std::string>> rows = cells_of(*table);
    const auto& gallery = app.state().scenarios.gallery;
    ASSERT_GT(gallery.size(), 5u);
    ASSERT_EQ(rows.size(), gallery.size() + 1) << table->value;  // the header, then a row each
    EXPECT_EQ(rows[0][0], "Scenario");
    for (size_t r = 1; r < rows.size(); ++r) {
      const auto& e = gallery[r - 1];
      ASSERT_EQ(rows[r].size(), 4u) << table->value;
      EXPECT_EQ(rows[r][0], e.audience.empty() ? e.title : e.title + " " + e.audience);
      EXPECT_EQ(rows[r][3], "Open");
    }
  }
}

// Tables are tables (WCAG 1.3.1): the catalog's is read as a table whose header cells are its columns' names
// and whose rows hold what each record's row shows, a value under its field's name.
TEST(Access, TheCatalogIsATableWithHeaderCells) {
  // At 1440x900 with the tests' text capture on; at a projector's 1280x720 as the page has it, where columns
  // lie right of the table's view and rows below it: those are in the mirror too (ImGui's log gives them).
  for (const auto& [w, hgt, capture] : {std::tuple{1440, 900, true}, std::tuple{1280, 720, false}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(hgt));
    Headless h(w, hgt, true);
    h.capture = capture;
    NullPlatform platform;
    mc::ui::App app({assets(), &platform, ""});
    app.state().active_panel = "catalog";
    app.state().catalog_view.table = "models";  // the widest and longest: 21 fields, 28 records
    for (int f = 0; f < 4; ++f) h.frame(app);
    const Node* table = nullptr;
    for (const Node& n : app.access_tree().nodes)
      if (n.role == Role::table && !table) table = &n;
    ASSERT_NE(table, nullptr) << "the catalog's table is not a table";
    const mc::Table* t = app.state().catalog->table(app.state().shown_tab);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(table->name, t->title);
    const std::vector<std::vector<std::string>> rows = cells_of(*table);
    ASSERT_EQ(rows.size(), t->records.size() + 1) << "a row a record, and the header\n" << table->value;
    const auto& header = rows.front();
    EXPECT_EQ(header[0], "Name");
    size_t fields = 0;  // the columns the panel draws: the fields some record has
    for (const mc::FieldDef& f : t->fields)
      fields += std::any_of(t->records.begin(), t->records.end(), [&](const mc::Record& r) { return r.find(f.key); });
    ASSERT_EQ(header.size(), fields + 1) << table->value;
    int checked = 0;
    for (size_t r = 1; r < rows.size(); ++r) {
      ASSERT_EQ(rows[r].size(), header.size()) << table->value;
      const mc::Record* rec = nullptr;  // a long name is shortened to its column ("GPT-2 1.5B reproduced...")
      for (const mc::Record& x : t->records) {
        const std::string& cell = rows[r][0];
        const bool cut = cell.size() > 3 && cell.compare(cell.size() - 3, 3, "...") == 0;
        if (x.name == cell || (cut && x.name.rfind(cell.substr(0, cell.size() - 3), 0) == 0)) rec = &x;
      }
      ASSERT_NE(rec, nullptr) << "row " << r << " is no record's: " << rows[r][0];
      for (size_t k = 1; k < header.size(); ++k) {
        const mc::FieldDef* f = nullptr;
        for (const mc::FieldDef& x : t->fields)
          if (x.label == header[k]) f = &x;
        ASSERT_NE(f, nullptr) << "a header cell that is no field's: " << header[k];
        const mc::Sourced* v = rec->find(f->key);
        const std::string drawn =
            v ? mc::display_value(*v, f->unit) + mc::ui::confidence_mark(v->confidence) : std::string("n/a");
        EXPECT_EQ(rows[r][k], drawn) << rec->name << ", " << f->label;
        ++checked;
      }
    }
    EXPECT_EQ(checked, int(t->records.size() * fields));
    // The header row ImGui drew is the header, not a row again; no text line repeats a cell.
    for (size_t r = 1; r < rows.size(); ++r) EXPECT_NE(rows[r][0], "Name");
    for (const Node& n : app.access_tree().nodes)
      EXPECT_FALSE(n.role == Role::text && n.name.find(t->records.front().name) != std::string::npos) << n.name;
  }
}

// Definitions without a mouse (WCAG 1.4.13, 2.1.1): F3 opens a window with every glossary term the screen
// uses and its definition, the glossary's own words; F3 again closes it.
TEST(Access, F3ListsTheTermsOnTheScreenWithTheirDefinitions) {
  Headless h(1440, 900, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  app.state().active_panel = "perf";
  for (int f = 0; f < 4; ++f) h.frame(app);
  constexpr int kF3 = 60;  // SDL scancode, as the shells' ImGui backend indexes keys
  const auto press = [&] {
    ImGui::GetIO().KeysDown[kF3] = true;
    h.frame(app);
    ImGui::GetIO().KeysDown[kF3] = false;
    for (int f = 0; f < 3; ++f) h.frame(app);
  };
  press();
  ASSERT_TRUE(app.state().show_terms);
  const auto& terms = app.state().screen_terms;
  ASSERT_FALSE(terms.empty());
  EXPECT_NE(std::find(terms.begin(), terms.end(), "MFU"), terms.end()) << "the perf panel reports MFU";
  const Node* window = app.access_tree().find("Terms on this screen (F3)", Role::region);
  ASSERT_NE(window, nullptr);
  // Each term is a heading the keyboard reaches (a disclosure, listed however far the list is scrolled);
  // the first one's definition is read below it.
  std::set<std::string> headings;
  std::string said;
  for (const Node& n : app.access_tree().nodes) {
    if (n.parent != window->id) continue;
    if (n.role == Role::disclosure) headings.insert(n.name);
    if (n.role == Role::text) said += n.name + " ";
  }
  for (const std::string& t : terms) EXPECT_EQ(headings.count(t), 1u) << t;
  for (const mc::GlossaryTerm& t : app.state().glossary)
    if (t.term == terms.front()) {
      const std::string start = t.definition.substr(0, t.definition.find(' ', 20));  // the first line's words
      EXPECT_NE(said.find(start), std::string::npos) << t.term << ": " << start << "\n" << said;
    }
  press();
  EXPECT_FALSE(app.state().show_terms);
  EXPECT_EQ(app.access_tree().find("Terms on this screen (F3)", Role::region), nullptr);
  // Escape closes it too: it has the keyboard once open.
  press();
  ASSERT_TRUE(app.state().show_terms);
  const int esc = 41;  // SDL_SCANCODE_ESCAPE, as the shells' backend maps ImGuiKey_Escape
  ImGui::GetIO().KeyMap[ImGuiKey_Escape] = esc;
  ImGui::GetIO().KeysDown[esc] = true;
  h.frame(app);
  ImGui::GetIO().KeysDown[esc] = false;
  h.frame(app);
  EXPECT_FALSE(app.state().show_terms);
}

// Text scrolled out of its window's view is in the tree (a screen reader's cursor reads a whole chapter, not
// what the window shows): the font draws no glyphs there, so the words come from ImGui's log, each text item
// (a wrapped paragraph whole) marked not visible and placed where it is laid out, below the view. Scrolled
// into view, each is what the glyphs on screen then say (drawn_text.h: the words the GPU draws, an
// independent reading).
TEST(Access, TextScrolledOutOfViewIsMirroredAndReadsAsDrawnOnceInView) {
  Headless h(320, 640, true);
  h.capture = false;  // the tests' text capture lays out clipped items too: this is the page's case
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  const auto collapse = [](const std::string& s) {  // whitespace runs as one space
    std::string out;
    for (char ch : s)
      if (!std::isspace(static_cast<unsigned char>(ch)))
        out += ch;
      else if (!out.empty() && out.back() != ' ')
        out += ' ';
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  };
  int chapters = 0;
  for (const char* panel : {"capital", "run"}) {
    app.state().active_panel = panel;
    for (int f = 0; f < 400 && (f < 4 || mc::ui::panels_busy(app.state())); ++f) h.frame(app);
    std::this_thread::sleep_for(std::chrono::milliseconds(110));  // the page reads a tree every 100 ms
    h.frame(app);
    const Node* main = nullptr;
    std::vector<Node> hidden;
    for (const Node& n : app.access_tree().nodes) {
      if (n.role == Role::region && n.main) main = &n;
      if (n.role == Role::text && !n.visible && main && n.parent == main->id) hidden.push_back(n);
    }
    ASSERT_NE(main, nullptr) << panel;
    const Node region = *main;  // the next frames replace the tree
    EXPECT_GE(hidden.size(), 3u) << panel << ": the chapter runs past the window, yet little of it is in the tree";
    for (const Node& n : hidden)
      EXPECT_GE(n.y, region.y + region.h - n.h) << panel << ": '" << n.name << "' is in view";
    // Reading order: each hidden line after the one above it.
    for (size_t i = 1; i < hidden.size(); ++i)
      EXPECT_GE(hidden[i].y, hidden[i - 1].y) << panel << ": '" << hidden[i].name << "'";

    // Scrolled to each in turn, it is what the window's glyphs then say: the log's words were theirs.
    ImGuiWindow* w = ImGui::FindWindowByID(region.id);
    ASSERT_NE(w, nullptr);
    int checked = 0;
    for (size_t i = 0; i < hidden.size() && checked < 8; ++i) {
      const Node& n = hidden[i];
      if (n.h > w->InnerRect.GetHeight() - 60) continue;  // taller than the view: never wholly in it
      ImGui::SetScrollY(w, float(n.y) - w->InnerRect.Min.y - 20);
      for (int f = 0; f < 2; ++f) h.frame(app);
      const float y = float(n.y) - w->Scroll.y;
      if (y < w->InnerRect.Min.y || y + float(n.h) > w->InnerRect.Max.y) continue;  // the scroll could not bring it
      ++checked;
      const std::string drawn = collapse(mc::ui::visible_text(mc::ui::window_draw_lists(w)));
      EXPECT_NE(drawn.find(collapse(n.name)), std::string::npos)
          << panel << ": '" << n.name << "' (from the log) is not what the screen shows once scrolled in";
    }
    EXPECT_GE(checked, 3) << panel;
    ImGui::SetScrollY(w, 0);
    ++chapters;
  }
  EXPECT_EQ(chapters, 2);
}

// At a phone's 320 px no chapter draws a word over another (WCAG 1.4.10: the page reflows, nothing is lost to
// overlap): the story's run labels and years, ZeRO's GPU names and its memory chart's labels, the collective's
// GPU numbers all ran together there. Read from the glyphs each window draws (ui/drawn_text.h), a window tall
// enough that each chapter's charts are in view. ImGui's "..." of a shortened name overlaps its own dots by
// design and is not counted.
TEST(Access, AtThreeHundredTwentyPixelsNoWordIsDrawnOverAnother) {
  Headless h(320, 1400, true);
  h.capture = false;  // the page's view
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  int chapters = 0;
  for (const auto& p : mc::ui::panel_registry()) {
    app.state().active_panel = p.id;
    for (int f = 0; f < 400 && (f < 6 || mc::ui::panels_busy(app.state())); ++f) h.frame(app);
    std::vector<ImDrawList*> lists;
    for (ImGuiWindow* w : GImGui->Windows)
      if (w->WasActive && !w->Hidden && w->RootWindow == w)
        for (ImDrawList* l : mc::ui::window_draw_lists(w)) lists.push_back(l);
    EXPECT_GT(mc::test::visible_glyphs(lists), 300u) << p.id;
    for (const std::string& o : mc::test::glyphs_over_each_other(lists))
      ADD_FAILURE() << p.id << ": " << o << " are drawn over each other";
    ++chapters;
  }
  EXPECT_GE(chapters, 11);
}

// What Orca (a screen reader, scripts/screen-reader.sh) found read twice or not at all, per chapter at 1440x900:
// a slider's label beside its frame came again as a line ("tensor (tp) slider 8", then "8 tensor (tp)"), a
// chart's axis labels came again as lines after its table, the ranking's buttons were named "1" ... "15", and
// the first letter of each line in a borderless child window was lost ("his screen assumes"): ImGui clips such
// a window 1 px inside where its text starts.
TEST(Access, NothingIsReadTwiceNoNameIsANumberAloneAndNoLetterIsLost) {
  Headless h(1440, 900, true);
  h.capture = false;  // the page's view
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  bool assumption_read = false;
  for (const auto& p : mc::ui::panel_registry()) {
    app.state().active_panel = p.id;
    for (int f = 0; f < 400 && (f < 6 || mc::ui::panels_busy(app.state())); ++f) h.frame(app);
    std::this_thread::sleep_for(std::chrono::milliseconds(110));  // the page reads a tree every 100 ms
    h.frame(app);
    const auto& nodes = app.access_tree().nodes;
    for (const Node& c : nodes) {
      if (is_control(c))
        EXPECT_NE(c.name.find_first_not_of("0123456789 "), std::string::npos) << p.id << ": " << describe(c);
      if (c.role == Role::figure)
        for (const Node& t : nodes)
          if (t.role == Role::text && t.parent == c.parent && t.visible && t.x + t.w / 2 > c.x &&
              t.x + t.w / 2 < c.x + c.w && t.y + t.h / 2 > c.y && t.y + t.h / 2 < c.y + c.h)
            ADD_FAILURE() << p.id << ": '" << t.name << "' is drawn in the chart '" << c.name
                          << "' (its table has it) and read again as a line";
      if (c.role == Role::slider)
        for (const Node& t : nodes)
          if (t.role == Role::text && t.parent == c.parent && std::abs(t.y - c.y) <= 4 && t.x < c.x + c.w + 40 &&
              t.x + t.w > c.x && t.name.size() >= c.name.size() &&
              t.name.compare(t.name.size() - c.name.size(), c.name.size(), c.name) == 0)
            ADD_FAILURE() << p.id << ": the slider '" << c.name << "' is read again as the line '" << t.name << "'";
    }
    for (const Node& t : nodes) {
      if (t.role != Role::text) continue;
      EXPECT_NE(t.name.rfind("his screen", 0), 0u) << p.id << ": '" << t.name << "' lost its first letter";
      assumption_read = assumption_read || t.name.rfind("This screen assumes", 0) == 0;
    }
  }
  EXPECT_TRUE(assumption_read) << "no chapter's line reads 'This screen assumes ...'";
}
