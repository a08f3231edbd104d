// sdl_gl_shell.cpp - see sdl_gl_shell.h. Follows Dear ImGui's example_sdl_opengl3/main.cpp.
#include "ui/shell/sdl_gl_shell.h"

#include "core/png.h"

#include <SDL.h>
#include <SDL_opengl.h>  // the GL 1.x calls used here exist in WebGL2 too (emscripten maps them)
#include <imgui.h>
#include <imgui_impl_opengl3.h>
#include <imgui_impl_sdl.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace mc::ui {

bool Shell::init(const ShellOptions& opt, const std::string& assets_dir, Platform* platform, std::string& error) {
  opt_ = opt;
  if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_TIMER) != 0) {
    error = std::string("SDL_Init failed: ") + SDL_GetError();
    return false;
  }
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_FLAGS, 0);
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, opt.gl.es ? SDL_GL_CONTEXT_PROFILE_ES : SDL_GL_CONTEXT_PROFILE_CORE);
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, opt.gl.major);
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, opt.gl.minor);
  SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
  SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 24);
  SDL_GL_SetAttribute(SDL_GL_STENCIL_SIZE, 8);
  auto flags = SDL_WindowFlags(SDL_WINDOW_OPENGL | SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
  window_ = SDL_CreateWindow("Megacluster Explorer", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, opt.width,
                             opt.height, flags);
  if (!window_) {
    error = std::string("cannot create a window: ") + SDL_GetError();
    return false;
  }
  gl_ = SDL_GL_CreateContext(window_);
  if (!gl_) {
    error = opt.gl.unavailable + ": " + std::string(SDL_GetError());
    return false;
  }
  SDL_GL_MakeCurrent(window_, gl_);
  SDL_GL_SetSwapInterval(opt.vsync && opt.frames == 0 ? 1 : 0);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  io.IniFilename = nullptr;  // the explorer lays itself out; nothing to persist between runs

  // HiDPI: on Retina/Wayland the drawable is larger than the window (ImGui's backend sets
  // DisplayFramebufferScale, we raster the font at that size and scale it back); on X11 the display DPI
  // tells. MEGACLUSTER_UI_SCALE overrides both.
  int ww = 0, wh = 0, dw = 0, dh = 0;
  SDL_GetWindowSize(window_, &ww, &wh);
  SDL_GL_GetDrawableSize(window_, &dw, &dh);
  float fb_scale = ww > 0 ? float(dw) / float(ww) : 1.0f;
  float ddpi = 0;
  float dpi_scale = 1.0f;
  if (fb_scale <= 1.01f && SDL_GetDisplayDPI(0, &ddpi, nullptr, nullptr) == 0 && ddpi > 120.0f)
    dpi_scale = std::clamp(ddpi / 96.0f, 1.0f, 3.0f);
  if (const char* e = std::getenv("MEGACLUSTER_UI_SCALE"); e && std::atof(e) > 0.5) dpi_scale = float(std::atof(e));
  dpi_scale_ = dpi_scale;
  apply_theme(dpi_scale);
  const float px = opt.font_px * dpi_scale * std::max(1.0f, fb_scale);
  if (!opt.font_path.empty() && io.Fonts->AddFontFromFileTTF(opt.font_path.c_str(), px)) {
    io.FontGlobalScale = 1.0f / std::max(1.0f, fb_scale);
  } else {
    ImFontConfig cfg;
    cfg.SizePixels = 13.0f * dpi_scale;
    io.Fonts->AddFontDefault(&cfg);
  }
  ImGui_ImplSDL2_InitForOpenGL(window_, gl_);
  ImGui_ImplOpenGL3_Init(opt.gl.glsl_version);

  app_ = std::make_unique<App>(AppConfig{assets_dir, platform, opt.start_panel});
  return true;
}

bool Shell::frame() {
  SDL_Event ev;
  while (SDL_PollEvent(&ev)) {
    ImGui_ImplSDL2_ProcessEvent(&ev);
    if (ev.type == SDL_QUIT) quit_ = true;
    if (ev.type == SDL_DROPFILE && ev.drop.file) {  // a file dropped on the window
      std::string path = ev.drop.file;
      SDL_free(ev.drop.file);
      std::ifstream in(path, std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      if (in) app_->open_file(path, ss.str());
      else app_->state().status = "cannot read " + path;
    }
    if (ev.type == SDL_WINDOWEVENT && ev.window.event == SDL_WINDOWEVENT_CLOSE &&
        ev.window.windowID == SDL_GetWindowID(window_))
      quit_ = true;
    if (opt_.ctrl_q_quits && ev.type == SDL_KEYDOWN && ev.key.keysym.sym == SDLK_q && (ev.key.keysym.mod & KMOD_CTRL))
      quit_ = true;
  }
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplSDL2_NewFrame();
  // ImGui 1.86 asserts on a zero time step (headless browsers with virtual time produce them).
  ImGuiIO& io = ImGui::GetIO();
  if (io.DeltaTime <= 0.0f) io.DeltaTime = 1.0f / 60.0f;
  ImGui::NewFrame();
  app_->frame();
  ImGui::Render();
  glViewport(0, 0, int(io.DisplaySize.x * io.DisplayFramebufferScale.x),
             int(io.DisplaySize.y * io.DisplayFramebufferScale.y));
  glClearColor(0.07f, 0.08f, 0.10f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  save_capture();
  ++frames_;
  if (opt_.frames > 0 && int(frames_) >= opt_.frames) {
    if (!opt_.screenshot_path.empty() && !dump_png(opt_.screenshot_path, error_)) quit_ = true;
    quit_ = true;
  }
  SDL_GL_SwapWindow(window_);
  return !quit_;
}

// The whole back buffer as a PNG file (--screenshot; the browser test takes its own screenshots).
bool Shell::dump_png(const std::string& path, std::string& err) {
  int w = 0, h = 0;
  SDL_GL_GetDrawableSize(window_, &w, &h);
  std::vector<unsigned char> px(size_t(w) * h * 4), flipped(px.size());
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  for (int y = 0; y < h; ++y)  // GL's origin is bottom-left, PNG's top-left
    std::copy_n(&px[size_t(h - 1 - y) * w * 4], size_t(w) * 4, &flipped[size_t(y) * w * 4]);
  for (size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;
  std::ofstream out(path, std::ios::binary);
  out << png_encode_rgba(w, h, flipped.data());
  if (!out) {
    err = "cannot write " + path;
    return false;
  }
  return true;
}

// The region the app asked for (ExplorerState::capture), read back from the frame just drawn, as a PNG
// given to the platform (native: ./exports/NAME; web: a download).
void Shell::save_capture() {
  ExplorerState& s = app_->state();
  if (s.capture.name.empty()) return;
  const ExplorerState::Capture c = s.capture;
  s.capture = {};
  const ImGuiIO& io = ImGui::GetIO();
  const float sx = io.DisplayFramebufferScale.x, sy = io.DisplayFramebufferScale.y;
  const int fb_h = int(io.DisplaySize.y * sy);
  const int x = std::max(0, int(c.rect.x * sx)), w = std::max(1, int(c.rect.w * sx));
  const int h = std::max(1, int(c.rect.h * sy)), y = std::max(0, fb_h - int((c.rect.y + c.rect.h) * sy));
  std::vector<unsigned char> px(size_t(w) * h * 4), flipped(px.size());
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(x, y, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  for (int row = 0; row < h; ++row)  // GL's origin is bottom-left, PNG's top-left
    std::copy_n(&px[size_t(h - 1 - row) * w * 4], size_t(w) * 4, &flipped[size_t(row) * w * 4]);
  for (size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;
  std::string err;
  const std::string where = s.platform ? s.platform->save_file(c.name, png_encode_rgba(w, h, flipped.data()), err) : "";
  s.status = where.empty() ? "export failed: " + (err.empty() ? std::string("no platform") : err) : "exported " + where;
}

void Shell::set_size(int w, int h) {
  int cw = 0, ch = 0;
  SDL_GetWindowSize(window_, &cw, &ch);
  if (window_ && w > 0 && h > 0 && (w != cw || h != ch)) SDL_SetWindowSize(window_, w, h);
}

void Shell::shutdown() {
  app_.reset();
  if (ImGui::GetCurrentContext()) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplSDL2_Shutdown();
    ImGui::DestroyContext();
  }
  if (gl_) SDL_GL_DeleteContext(gl_);
  if (window_) SDL_DestroyWindow(window_);
  gl_ = nullptr;
  window_ = nullptr;
  SDL_Quit();
}

}  // namespace mc::ui
