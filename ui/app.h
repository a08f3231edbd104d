// app.h - the explorer's frame function, shared by the native and web shells. It issues ImGui calls only
// (no SDL, no GL): a shell calls App::frame() between ImGui::NewFrame() and ImGui::Render().
#pragma once

#include "ui/explorer.h"

#include <nlohmann/json.hpp>

namespace mc::ui {

struct AppConfig {
  std::string assets_dir;  // where catalog/index.json lives
  Platform* platform = nullptr;
  std::string start_panel;  // "" = catalog
};

class App {
 public:
  explicit App(AppConfig cfg);
  void frame();  // draws one frame of the whole explorer
  ExplorerState& state() { return s_; }
  // A compact JSON view of the state, for tests (web: exported to JavaScript) and debugging.
  nlohmann::json state_json() const;
  // Applies a small command (for tests/scenarios): {"panel": id} | {"select": [table, record]} |
  // {"sort": [key, ascending]}. Returns "" or an error message.
  std::string command(const nlohmann::json& cmd);

 private:
  ExplorerState s_;
  void draw_sidebar(float x, float y, float w, float h);
  void draw_main(float x, float y, float w, float h);
  void draw_inspector(float x, float y, float w, float h);
  void draw_help();
  void handle_keys();
};

void apply_theme(float scale);

}  // namespace mc::ui
