// sdl_gl_shell.h - the SDL2 + OpenGL3 loop body shared by the native and web shells: event polling,
// ImGui backends, App::frame(), rendering, and a framebuffer dump for tests and screenshots. What differs
// between the platforms comes in as data (ShellOptions: the GL context, Ctrl+Q) and through the Platform
// interface; native/main.cpp calls Shell::frame() in a while loop, web/main.cpp hands it to
// emscripten_set_main_loop.
#pragma once

#include "ui/app.h"

#include <memory>
#include <string>

struct SDL_Window;

namespace mc::ui {

// The GL context a shell asks for: the desktop's OpenGL 3.0 (native/main.cpp) or WebGL2, which is
// OpenGL ES 3.0 (web/main.cpp). Data, so the one frame loop below has no per-platform branches.
struct GlContextOptions {
  bool es = false;  // an OpenGL ES profile (WebGL2) instead of a core one
  int major = 3, minor = 0;
  // An alpha channel in the default framebuffer. The web asks for one: a WebGL2 canvas without alpha
  // ({alpha: false}) makes Chromium mask every write and clear to keep alpha at 1, which turns the fast
  // clears of Shell::frame into drawn quads under software rendering. ImGui's blending keeps alpha at 1.
  bool alpha = false;
  const char* glsl_version = "#version 130";                        // for ImGui's OpenGL3 backend
  std::string unavailable = "cannot create an OpenGL 3.0 context";  // said when the context fails
};

struct ShellOptions {
  int width = 1440, height = 900;  // logical window size
  bool vsync = true;
  int frames = 0;               // > 0: quit after this many frames
  std::string screenshot_path;  // with frames: dump the last frame to this PNG
  std::string font_path;        // a TTF; "" = ImGui's built-in font
  float font_px = 17.0f;        // before HiDPI scaling
  std::string start_panel;
  GlContextOptions gl;
  bool ctrl_q_quits = true;  // a desktop shortcut; a browser tab is closed by the browser
  // Draw nothing when a frame's picture equals the last one drawn (the web: the browser then keeps the
  // canvas as it is and composites nothing new). The loop still runs every frame, so input and animations
  // are handled at full rate; frame_count() counts loop frames, drawn_count() the frames drawn.
  bool skip_unchanged_frames = false;
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
  unsigned long long drawn_count() const { return drawn_; }
  const std::string& last_error() const { return error_; }

 private:
  ShellOptions opt_;
  SDL_Window* window_ = nullptr;
  void* gl_ = nullptr;
  std::unique_ptr<App> app_;
  unsigned long long frames_ = 0;
  unsigned long long drawn_ = 0;
  unsigned long long last_picture_ = 0;  // hash of the draw data last drawn (skip_unchanged_frames)
  unsigned long long rate_drawn_ = 0;    // drawn_ at the start of the current second
  unsigned rate_start_ms_ = 0;
  bool quit_ = false;
  std::string error_;
  float dpi_scale_ = 1.0f;
  bool dump_png(const std::string& path, std::string& err);
  void save_capture();
};

}  // namespace mc::ui
