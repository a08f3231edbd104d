// sdl_gl_shell.h - the SDL2 + OpenGL3 loop body shared by the native and web shells: event polling,
// ImGui backends, App::frame(), rendering, and (native) a framebuffer dump for tests and screenshots.
// native/main.cpp calls Shell::frame() in a while loop; web/main.cpp hands it to emscripten_set_main_loop.
#pragma once

#include "ui/app.h"

#include <memory>
#include <string>

struct SDL_Window;

namespace mc::ui {

struct ShellOptions {
  int width = 1440, height = 900;  // logical window size
  bool vsync = true;
  int frames = 0;               // > 0: quit after this many frames
  std::string screenshot_path;  // with frames: dump the last frame to this PNG
  std::string font_path;        // a TTF; "" = ImGui's built-in font
  float font_px = 17.0f;        // before HiDPI scaling
  std::string start_panel;
};

class Shell {
 public:
  // Creates the window and GL context; returns false and sets `error` on failure (e.g. no WebGL2).
  bool init(const ShellOptions& opt, const std::string& assets_dir, Platform* platform, std::string& error);
  // One frame. Returns false when the app should quit (window closed, Ctrl+Q, or the frame count reached).
  bool frame();
  void shutdown();
  void set_size(int w, int h);  // web: follow the browser window
  App& app() { return *app_; }
  unsigned long long frame_count() const { return frames_; }
  const std::string& last_error() const { return error_; }

 private:
  ShellOptions opt_;
  SDL_Window* window_ = nullptr;
  void* gl_ = nullptr;
  std::unique_ptr<App> app_;
  unsigned long long frames_ = 0;
  bool quit_ = false;
  std::string error_;
  float dpi_scale_ = 1.0f;
  bool dump_png(const std::string& path, std::string& err);
  void save_capture();
};

}  // namespace mc::ui
