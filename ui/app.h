// app.h - the explorer's frame function, shared by the native and web shells. It issues ImGui calls only
// (no SDL, no GL): a shell calls App::frame() between ImGui::NewFrame() and ImGui::Render().
#pragma once

#include "core/url_state.h"
#include "ui/access.h"
#include "ui/explorer.h"

#include <nlohmann/json.hpp>

#include <chrono>

namespace mc::ui {

struct AppConfig {
  std::string assets_dir;  // where catalog/index.json lives
  Platform* platform = nullptr;
  std::string start_panel;  // "" = the story; one that does not open is named on screen (ExplorerState::notice)
};

class App {
 public:
  explicit App(AppConfig cfg);
  void frame();  // draws one frame of the whole explorer
  ExplorerState& state() { return s_; }
  // A compact JSON view of the state, for tests (web: exported to JavaScript) and debugging.
  nlohmann::json state_json() const;
  // What a page waiting on the app polls (its chapter, whether it computes, the scenario step shown), without
  // state_json's results, which hold a whole simulation's report once one has run (100s of ms to write).
  nlohmann::json view_json() const;
  // The status bar's text: platform, what computes (in plain words), frame rate, the last message.
  std::string status_line() const;
  // The frames a shell drew in the last second, for the status bar (before a shell reports one, ImGui's
  // own estimate of the loop's rate is shown). Under 2, the status bar says "idle": nothing moves.
  void set_drawn_rate(float fps) { drawn_rate_ = fps; }
  // Applies a small command (for tests/scenarios): {"panel": id} | {"select": [table, record]} |
  // {"sort": [key, ascending]} | {"scenario": [id, step]} (step 1-based, as in a link). Returns "" or an
  // error message.
  std::string command(const nlohmann::json& cmd);
  // Offers a file the user opened to the registered FileHandlers; returns false (and sets the status line)
  // if none took it. `name` is for messages and the type (extension); `content` is the whole file.
  bool open_file(const std::string& name, const std::string& content);
  // Opens what an address asks for (the web page's ?panel=&scenario=&step=, parsed by core/url_state.h):
  // what it cannot open is named at the top of the main view with the real ids nearest it.
  void open_address(const UrlState& url);
  // The address of what is on screen now (panel and tab; scenario and step): the shells write it as the
  // class moves (Platform::set_address), and it opens this screen again.
  UrlState address() const;
  // The last frame's accessibility tree (ui/access.h): what the page's mirror shows.
  const access::Tree& access_tree() const { return access_; }

 private:
  ExplorerState s_;
  void draw_sidebar(float x, float y, float w, float h);
  void draw_main(float x, float y, float w, float h);
  void draw_inspector(float x, float y, float w, float h);
  void draw_help();
  void draw_terms();
  void draw_presenter_bar();
  void handle_keys();
  void write_address();
  void publish_access();
  access::Tree access_;
  std::string access_panel_;
  bool access_on_ = true;  // this frame builds the accessibility tree (Platform::mirrors_access)
  double access_us_mean_ = 0, access_us_max_ = 0, access_us_frame_ = 0;
  long access_reads_ = 0;
  std::chrono::steady_clock::time_point access_at_{};
  uint64_t access_shape_ = 0;
  uint32_t access_nav_ = 0;  // ImGui's keyboard focus at that reading (access::keyboard_focus): a move is read at once
  std::string access_narration_, access_status_;
  // The progress announced last (Panel::progress) and when, by ImGui's clock: the same kind of news is said at
  // most every kProgressEveryS, so a screen reader is not read a running lab's every step.
  static constexpr double kProgressEveryS = 10;
  std::string progress_said_;
  double progress_at_ = -1e9;
  float font_scale_base_ = -1;  // the shell's FontGlobalScale (HiDPI), before presenter mode enlarges it
  bool folded_ = false;         // the view is too narrow for the sidebar: the chapters are a menu atop the panel
  float drawn_rate_ = -1;       // set_drawn_rate's; -1: none reported
};

void apply_theme(float scale);

}  // namespace mc::ui
