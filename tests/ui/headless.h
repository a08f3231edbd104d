// headless.h - Dear ImGui with no renderer (as in its example_null) driving the whole explorer, for the
// headless UI tests: frames, a user's clicks, and playing a shipped scenario step by step.
#pragma once

#include "ui/app.h"
#include "ui/drawn_text.h"
#include "ui/explorer.h"

#include <imgui.h>
#include <imgui_internal.h>  // ImGuiWindow: content extents for overflowing_windows()

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace mc::test {

class NullPlatform : public mc::ui::Platform {
 public:
  const char* name() const override { return "test"; }
  std::string save_file(const std::string& name, const std::string& content, std::string&) override {
    saved[name] = content;
    return name;
  }
  void open_url(const std::string&) override {}
  // Long work on a thread, as the native shell does (a test that wants the browser build's per-frame
  // slices sets threads = false).
  bool run_on_worker(std::function<void()> work) override {
    if (!threads) return false;
    std::thread(std::move(work)).detach();
    return true;
  }
  bool reduced_motion() const override { return reduce_motion; }
  bool mirrors_access() const override { return true; }  // the tests read the tree
  bool threads = true;
  bool reduce_motion = false;
  std::map<std::string, std::string> saved;
};

struct Headless {
  // app_look: the app's own font (DejaVu Sans at 17 px, as the shells load it) and theme, for layout tests;
  // otherwise ImGui's built-in 13 px font.
  Headless(float w, float h, bool app_look = false) {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    if (app_look) {
      mc::ui::apply_theme(1.0f);
      const char* ttf = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
      if (std::ifstream(ttf).good()) io.Fonts->AddFontFromFileTTF(ttf, 17.0f);
    }
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(w, h);
    io.DeltaTime = 1.0f / 60.0f;
    io.SetClipboardTextFn = set_clipboard;
    io.GetClipboardTextFn = get_clipboard;
    unsigned char* px;
    int tw, th;
    io.Fonts->GetTexDataAsRGBA32(&px, &tw, &th);
  }
  ~Headless() { ImGui::DestroyContext(); }
  Headless(const Headless&) = delete;
  Headless& operator=(const Headless&) = delete;
  // One frame; `text` then holds every piece of text the frame drew (ImGui's log, which sees what Text,
  // buttons, labels and tables render), so tests can read what the class would read.
  void frame(mc::ui::App& app) {
    ImGui::NewFrame();
    app.state().probe.capture_text = capture;  // each window's End() hands its text to set_clipboard below
    logged().clear();
    app.frame();
    ImGui::Render();
    // Whitespace runs as one space: wrapped text is logged with its line breaks.
    text.clear();
    for (const char* c = logged().c_str(); *c; ++c) {
      const bool space = *c == ' ' || *c == '\n' || *c == '\r' || *c == '\t';
      if (!space)
        text += *c;
      else if (!text.empty() && text.back() != ' ')
        text += ' ';
    }
  }
  static std::string& logged() {
    static std::string s;
    return s;
  }
  static void set_clipboard(void*, const char* t) { logged() += std::string(t) + "\n"; }
  static const char* get_clipboard(void*) { return logged().c_str(); }
  std::string text;
  bool capture = true;  // false: no text capture, whose log lays out every item as a test of clipping cannot
};

inline std::string assets() { return std::string(MC_SOURCE_DIR) + "/assets"; }

// A user's click at `at`: hover for a frame, press for a frame, release (ImGui acts on release), settle.
inline void click_at(Headless& h, mc::ui::App& app, ImVec2 at) {
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = at;
  h.frame(app);
  io.MouseDown[0] = true;
  h.frame(app);
  io.MouseDown[0] = false;
  h.frame(app);
  h.frame(app);
}

// Clicks the middle of the tracked widget `id` (ExplorerState::widget_rects of the last frame).
inline void click_widget(Headless& h, mc::ui::App& app, const std::string& id) {
  const auto rects = app.state().probe.widget_rects;
  auto it = rects.find(id);
  ASSERT_NE(it, rects.end()) << "widget " << id << " is not on screen";
  click_at(h, app, ImVec2(it->second.x + it->second.w / 2, it->second.y + it->second.h / 2));
}

// Windows (and child windows) whose content reached past their right edge in the last frame: some text
// or widget there is cut off instead of wrapped. Windows with a horizontal scrollbar, tooltips and popups
// are exempt. Each entry: "window name: N px too wide".
inline std::vector<std::string> overflowing_windows() {
  std::vector<std::string> out;
  for (ImGuiWindow* w : GImGui->Windows) {
    if (!w->WasActive || w->Hidden || w->ScrollbarX) continue;
    if (w->Flags & (ImGuiWindowFlags_Tooltip | ImGuiWindowFlags_Popup | ImGuiWindowFlags_HorizontalScrollbar)) continue;
    const float over = w->DC.CursorMaxPos.x - w->ContentRegionRect.Max.x;
    if (over > 1.0f) out.push_back(std::string(w->Name) + ": " + std::to_string(int(over)) + " px too wide");
  }
  return out;
}

// The first "nan" or "inf" drawn as a word (what printf makes of a non-finite number), or "".
inline std::string non_finite_word(const std::string& text) {
  std::string word;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ' ';
    if (std::isalpha(static_cast<unsigned char>(c))) {
      word += char(std::tolower(static_cast<unsigned char>(c)));
      continue;
    }
    if (word == "nan" || word == "inf" || word == "infinity") return text.substr(i >= 40 ? i - 40 : 0, 60);
    word.clear();
  }
  return "";
}

// The draw lists of the top-level window `name` ("###main", "###narration") and its child windows, as the
// last frame drew them (empty when it was not drawn).
inline std::vector<ImDrawList*> window_lists(const char* name) {
  return mc::ui::window_draw_lists(ImGui::FindWindowByName(name));
}

// What a class can read on screen after the last frame: the glyphs that lie inside their window's clip rect
// and the display (not text laid out below the fold or right of a table's edge, which the log still sees),
// in every window but the narration pane, one drawn line per line.
inline std::string visible_panels_text() {
  const auto narration = window_lists("###narration");
  std::vector<ImDrawList*> lists;
  for (ImGuiWindow* w : GImGui->Windows)
    if (w->WasActive && !w->Hidden && std::find(narration.begin(), narration.end(), w->DrawList) == narration.end())
      lists.push_back(w->DrawList);
  return mc::ui::visible_text(lists);
}

// Every glyph a window's lists drew in the last frame, visible or not, as lines of text.
inline std::string drawn_text(const std::vector<ImDrawList*>& lists) {
  std::string out;
  for (const auto& l : mc::ui::drawn_lines(lists)) out += l.text + "\n";
  return out;
}

// Glyphs drawn over one another in the last frame: among the visible glyphs of `lists` whose centre lies in
// `area`, each pair whose cells overlap by more than 1 px both ways, as "'a' of 'its line' and 'b' of 'its
// line' at x,y" (at most `most`). Spaces and ImGui's "..." (its dots overlap by design) are not counted.
inline std::vector<std::string> glyphs_over_each_other(const std::vector<ImDrawList*>& lists,
                                                       ImRect area = ImRect(-1e9f, -1e9f, 1e9f, 1e9f),
                                                       size_t most = 3) {
  struct Glyph {
    float x0, x1, y0, y1;
    std::string text, line;
  };
  std::vector<Glyph> glyphs;
  for (const mc::ui::DrawnLine& line : mc::ui::drawn_lines(lists))
    for (size_t i = 0; i < line.glyphs.size(); ++i) {
      const mc::ui::DrawnGlyph& g = line.glyphs[i];
      const size_t end = i + 1 < line.glyphs.size() ? line.glyphs[i + 1].at : line.text.size();
      const std::string text = line.text.substr(g.at, end - g.at);
      if (g.visible && text != " " && text != "." && area.Contains(ImVec2((g.x0 + g.x1) / 2, (g.y0 + g.y1) / 2)))
        glyphs.push_back({g.x0, g.x1, g.y0, g.y1, text, line.text});
    }
  std::vector<std::string> out;
  for (size_t i = 0; i < glyphs.size() && out.size() < most; ++i)
    for (size_t j = i + 1; j < glyphs.size() && out.size() < most; ++j) {
      const Glyph &a = glyphs[i], &b = glyphs[j];
      if (std::min(a.x1, b.x1) - std::max(a.x0, b.x0) > 1 && std::min(a.y1, b.y1) - std::max(a.y0, b.y0) > 1)
        out.push_back("'" + a.text + "' of '" + a.line + "' and '" + b.text + "' of '" + b.line + "' at " +
                      std::to_string(int(a.x0)) + "," + std::to_string(int(a.y0)));
    }
  return out;
}

// How many glyphs `lists` drew visibly in the last frame with their centre in `area`.
inline size_t visible_glyphs(const std::vector<ImDrawList*>& lists, ImRect area = ImRect(-1e9f, -1e9f, 1e9f, 1e9f)) {
  size_t n = 0;
  for (const mc::ui::DrawnLine& line : mc::ui::drawn_lines(lists))
    for (const mc::ui::DrawnGlyph& g : line.glyphs)
      n += g.visible && area.Contains(ImVec2((g.x0 + g.x1) / 2, (g.y0 + g.y1) / 2));
  return n;
}

// The ids of scenarios/index.json, in gallery order.
inline std::vector<std::string> shipped_scenarios() {
  std::ifstream idx(std::string(MC_SOURCE_DIR) + "/scenarios/index.json");
  std::vector<std::string> ids;
  if (!idx.good()) return ids;
  nlohmann::json index = nlohmann::json::parse(idx);
  for (const auto& e : index["scenarios"]) {
    std::string id = e.is_string() ? e.get<std::string>() : e.value("file", e.value("id", ""));
    if (id.size() > 5 && id.substr(id.size() - 5) == ".json") id.resize(id.size() - 5);
    ids.push_back(id);
  }
  return ids;
}

// Frames until `done()` or the deadline: native panels compute on worker threads, so wait by the clock
// (a loaded CI machine may take a while), not by a count of frames.
template <class F>
bool frames_until(Headless& h, mc::ui::App& app, F done, double seconds = 120) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    h.frame(app);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Opens scenario `id` at step `k` (0-based) the way a ?scenario=ID&step=N link does and waits (by the
// clock) for its steps, which run as a job (ui/jobs.h); false if they are still computing after two minutes.
inline bool open_scenario_step(Headless& h, mc::ui::App& app, const std::string& id, int k) {
  auto& sv = app.state().scenarios;
  sv.request_id = id;
  sv.request_step = k;
  h.frame(app);
  return frames_until(h, app, [&] { return !sv.job; });
}

}  // namespace mc::test
