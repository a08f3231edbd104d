// sdl_gl_shell.cpp - see sdl_gl_shell.h. Follows Dear ImGui's example_sdl_opengl3/main.cpp.
#include "ui/shell/sdl_gl_shell.h"

#include "core/png.h"

#include <SDL.h>
#include <SDL_opengl.h>  // the GL 1.x calls used here exist in WebGL2 too (emscripten maps them)
#include <imgui.h>
#include <imgui_impl_opengl3.h>
#include <imgui_impl_sdl.h>

#include <algorithm>
#include <bitset>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace mc::ui {

namespace {

// Fast fills. Under software rendering (Chromium's SwiftShader without a GPU, Mesa's llvmpipe) the cost of
// a frame is the pixels ImGui shades, each through its textured, blended shader; and most of those pixels
// are large opaque rectangles: window and child backgrounds, a view's backdrop (a 1280x720 frame of the
// collective animation shaded 1.6 screens of pixels, 1.3 of them in such rectangles). A scissored glClear
// paints the same pixels the same colour at memory speed. So after ImGui::Render, each opaque, untextured,
// axis-aligned rectangle of at least kMinFillPixels (ImDrawList::PrimRect's six indices) is cut out of its
// draw command, which is split around it, and a callback command clears its pixels in its place: the
// drawing order, and so the picture, stay the same.
constexpr int kMinFillPixels = 64 * 64;

struct Fill {
  int x, y, w, h;  // GL window coordinates (origin bottom-left), framebuffer pixels
  float r, g, b;
};

void fill_callback(const ImDrawList*, const ImDrawCmd* cmd) {
  const Fill& f = *static_cast<const Fill*>(cmd->UserCallbackData);
  glScissor(f.x, f.y, f.w, f.h);  // the backend enables GL_SCISSOR_TEST and sets the scissor per command
  glClearColor(f.r, f.g, f.b, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
}

// The pixels whose centres a rectangle [a, b) covers (GL's rasterization rule): [ceil(a - 0.5), ceil(b - 0.5)).
int first_pixel(float v) { return int(std::ceil(v - 0.5f)); }

// If the triangles at idx[k..k+5] are PrimRect's opaque untextured rectangle, its fill (possibly empty).
bool opaque_rect(const ImDrawList& dl, const ImDrawCmd& cmd, unsigned k, const ImDrawData& dd, int fb_h, Fill& f) {
  const ImDrawIdx* idx = dl.IdxBuffer.Data + cmd.IdxOffset + k;
  const unsigned e = idx[0];
  if (idx[1] != e + 1 || idx[2] != e + 2 || idx[3] != e || idx[4] != e + 2 || idx[5] != e + 3) return false;
  if (cmd.VtxOffset + e + 3 >= unsigned(dl.VtxBuffer.Size)) return false;
  const ImDrawVert* v = dl.VtxBuffer.Data + cmd.VtxOffset + e;
  const ImVec2 uv = ImGui::GetIO().Fonts->TexUvWhitePixel;
  for (int i = 0; i < 4; ++i)
    if (v[i].col != v[0].col || v[i].uv.x != uv.x || v[i].uv.y != uv.y) return false;
  if ((v[0].col & IM_COL32_A_MASK) != IM_COL32_A_MASK) return false;
  const float x0 = v[0].pos.x, y0 = v[0].pos.y, x1 = v[2].pos.x, y1 = v[2].pos.y;
  if (!(x1 > x0 && y1 > y0) || v[1].pos.x != x1 || v[1].pos.y != y0 || v[3].pos.x != x0 || v[3].pos.y != y1)
    return false;
  const ImVec2 off = dd.DisplayPos, sc = dd.FramebufferScale;
  // The backend's scissor for this command (imgui_impl_opengl3.cpp), in top-down framebuffer pixels.
  const float cx0 = (cmd.ClipRect.x - off.x) * sc.x, cy0 = (cmd.ClipRect.y - off.y) * sc.y;
  const float cx1 = (cmd.ClipRect.z - off.x) * sc.x, cy1 = (cmd.ClipRect.w - off.y) * sc.y;
  const int sx0 = int(cx0), sx1 = sx0 + int(cx1 - cx0), sy1 = int(cy1), sy0 = sy1 - int(cy1 - cy0);
  const int px0 = std::max({0, sx0, first_pixel((x0 - off.x) * sc.x)}),
            px1 = std::min(sx1, first_pixel((x1 - off.x) * sc.x));
  const int py0 = std::max({0, sy0, first_pixel((y0 - off.y) * sc.y)}),
            py1 = std::min(sy1, first_pixel((y1 - off.y) * sc.y));
  f = {px0,
       fb_h - py1,
       std::max(0, px1 - px0),
       std::max(0, py1 - py0),
       float((v[0].col >> IM_COL32_R_SHIFT) & 0xFF) / 255.0f,
       float((v[0].col >> IM_COL32_G_SHIFT) & 0xFF) / 255.0f,
       float((v[0].col >> IM_COL32_B_SHIFT) & 0xFF) / 255.0f};
  return (x1 - x0) * (y1 - y0) * sc.x * sc.y >= float(kMinFillPixels);
}

// Rewrites the draw data's commands: every large opaque rectangle becomes a fill callback (see above).
void cut_out_fills(ImDrawData& dd, std::vector<Fill>& fills) {
  fills.clear();
  if (!dd.Valid || dd.CmdListsCount == 0) return;
  const int fb_h = int(dd.DisplaySize.y * dd.FramebufferScale.y);
  const ImTextureID font = ImGui::GetIO().Fonts->TexID;
  struct Cut {
    int list, cmd;
    unsigned at;  // index offset of the rectangle inside the command
  };
  std::vector<Cut> cuts;
  for (int l = 0; l < dd.CmdListsCount; ++l) {
    const ImDrawList& dl = *dd.CmdLists[l];
    for (int c = 0; c < dl.CmdBuffer.Size; ++c) {
      const ImDrawCmd& cmd = dl.CmdBuffer[c];
      if (cmd.UserCallback || cmd.TextureId != font) continue;
      for (unsigned k = 0; k + 6 <= cmd.ElemCount; k += 3) {
        Fill f;
        if (!opaque_rect(dl, cmd, k, dd, fb_h, f)) continue;
        cuts.push_back({l, c, k});
        fills.push_back(f);
        k += 3;  // the rectangle's second triangle
      }
    }
  }
  if (cuts.empty()) return;
  size_t i = 0;
  for (int l = 0; l < dd.CmdListsCount && i < cuts.size(); ++l) {
    if (cuts[i].list != l) continue;
    ImDrawList& dl = *dd.CmdLists[l];
    ImVector<ImDrawCmd> out;
    out.reserve(dl.CmdBuffer.Size + 2 * int(cuts.size()));
    for (int c = 0; c < dl.CmdBuffer.Size; ++c) {
      ImDrawCmd rest = dl.CmdBuffer[c];
      const unsigned start = rest.IdxOffset, end = rest.IdxOffset + rest.ElemCount;
      for (; i < cuts.size() && cuts[i].list == l && cuts[i].cmd == c; ++i) {
        const unsigned at = start + cuts[i].at;
        ImDrawCmd before = rest;
        before.ElemCount = at - rest.IdxOffset;
        if (before.ElemCount > 0) out.push_back(before);
        if (fills[i].w > 0 && fills[i].h > 0) {
          ImDrawCmd fill = rest;
          fill.ElemCount = 0;
          fill.UserCallback = fill_callback;
          fill.UserCallbackData = &fills[i];
          out.push_back(fill);
        }
        rest.IdxOffset = at + 6;
        rest.ElemCount = end - rest.IdxOffset;
      }
      if (rest.ElemCount > 0 || rest.UserCallback) out.push_back(rest);
    }
    dl.CmdBuffer.swap(out);
  }
}

// A 64-bit digest of what a frame draws (skip_unchanged_frames): equal digests, equal pictures.
struct Digest {
  std::uint64_t h = 0x9E3779B97F4A7C15ull;
  void word(std::uint64_t w) {
    h ^= w * 0xBF58476D1CE4E5B9ull;
    h = ((h << 27) | (h >> 37)) * 0x94D049BB133111EBull;
  }
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (; n >= 8; n -= 8, b += 8) {
      std::uint64_t w;
      std::memcpy(&w, b, 8);
      word(w);
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, b, n);
    word(tail ^ (std::uint64_t(n) << 56));
  }
  void f(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    word(u);
  }
};

std::uint64_t picture_digest(const ImDrawData& dd) {
  Digest d;
  d.f(dd.DisplayPos.x), d.f(dd.DisplayPos.y), d.f(dd.DisplaySize.x), d.f(dd.DisplaySize.y);
  d.f(dd.FramebufferScale.x), d.f(dd.FramebufferScale.y);
  for (int l = 0; l < dd.CmdListsCount; ++l) {
    const ImDrawList& dl = *dd.CmdLists[l];
    d.word(std::uint64_t(dl.CmdBuffer.Size));
    for (const ImDrawCmd& c : dl.CmdBuffer) {
      d.f(c.ClipRect.x), d.f(c.ClipRect.y), d.f(c.ClipRect.z), d.f(c.ClipRect.w);
      d.word(std::uint64_t(reinterpret_cast<std::uintptr_t>(c.TextureId)));
      d.word(std::uint64_t(c.VtxOffset) << 32 | c.IdxOffset);
      d.word(c.ElemCount);
      d.word(std::uint64_t(reinterpret_cast<std::uintptr_t>(c.UserCallback)));
      d.word(std::uint64_t(reinterpret_cast<std::uintptr_t>(c.UserCallbackData)));
    }
    d.bytes(dl.VtxBuffer.Data, size_t(dl.VtxBuffer.Size) * sizeof(ImDrawVert));
    d.bytes(dl.IdxBuffer.Data, size_t(dl.IdxBuffer.Size) * sizeof(ImDrawIdx));
  }
  return d.h;
}

}  // namespace

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
  // ImGui draws with neither a depth nor a stencil buffer: none is asked for (SDL's default depth is 16),
  // so the browser neither allocates nor clears them each frame.
  SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 0);
  SDL_GL_SetAttribute(SDL_GL_STENCIL_SIZE, 0);
  SDL_GL_SetAttribute(SDL_GL_ALPHA_SIZE, opt.gl.alpha ? 8 : 0);
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
  // ImGui 1.86 reads each key as down or up once a frame (io.KeysDown), so a key pressed and released between
  // two frames, a quick tap during a slow frame, was never seen down (F5 pressed three times did nothing:
  // issue 42). The release of a key that went down in this frame's events, and every event after it, waits
  // for the next frame, in order.
  std::bitset<SDL_NUM_SCANCODES> pressed;
  std::vector<SDL_Event> next_frame;
  SDL_Event ev;
  while (SDL_PollEvent(&ev)) {
    const bool quick_release =
        ev.type == SDL_KEYUP && ev.key.keysym.scancode < SDL_NUM_SCANCODES && pressed[ev.key.keysym.scancode];
    if (quick_release || !next_frame.empty()) {
      next_frame.push_back(ev);
      continue;
    }
    if (ev.type == SDL_KEYDOWN && ev.key.keysym.scancode < SDL_NUM_SCANCODES) pressed.set(ev.key.keysym.scancode);
    ImGui_ImplSDL2_ProcessEvent(&ev);
    if (ev.type == SDL_QUIT) quit_ = true;
    if (ev.type == SDL_DROPFILE && ev.drop.file) {  // a file dropped on the window
      std::string path = ev.drop.file;
      SDL_free(ev.drop.file);
      std::ifstream in(path, std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      if (in)
        app_->open_file(path, ss.str());
      else
        app_->state().status = "cannot read " + path;
    }
    if (ev.type == SDL_WINDOWEVENT && ev.window.event == SDL_WINDOWEVENT_CLOSE &&
        ev.window.windowID == SDL_GetWindowID(window_))
      quit_ = true;
    if (opt_.ctrl_q_quits && ev.type == SDL_KEYDOWN && ev.key.keysym.sym == SDLK_q && (ev.key.keysym.mod & KMOD_CTRL))
      quit_ = true;
  }
  for (SDL_Event& e : next_frame) SDL_PushEvent(&e);  // the queue is empty now: they come first
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplSDL2_NewFrame();
  // ImGui 1.86 asserts on a zero time step (headless browsers with virtual time produce them).
  ImGuiIO& io = ImGui::GetIO();
  if (io.DeltaTime <= 0.0f) io.DeltaTime = 1.0f / 60.0f;
  // The status bar's frame rate: frames drawn in the last whole second (with skip_unchanged_frames a still
  // screen draws none, and the loop's own rate would say nothing).
  const unsigned now = SDL_GetTicks();
  if (now - rate_start_ms_ >= 1000) {
    if (rate_start_ms_ != 0) app_->set_drawn_rate(float(drawn_ - rate_drawn_) * 1000.0f / float(now - rate_start_ms_));
    rate_start_ms_ = now;
    rate_drawn_ = drawn_;
  }
  ImGui::NewFrame();
  app_->frame();
  ImGui::Render();
  ImDrawData* dd = ImGui::GetDrawData();
  bool draw = true;
  if (opt_.skip_unchanged_frames) {
    const std::uint64_t picture = picture_digest(*dd);
    draw = drawn_ == 0 || picture != last_picture_ || !app_->state().capture.name.empty() || opt_.frames > 0;
    last_picture_ = picture;
  }
  if (draw) {
    glViewport(0, 0, int(io.DisplaySize.x * io.DisplayFramebufferScale.x),
               int(io.DisplaySize.y * io.DisplayFramebufferScale.y));
    glClearColor(0.07f, 0.08f, 0.10f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    std::vector<Fill> fills;
    cut_out_fills(*dd, fills);
    ImGui_ImplOpenGL3_RenderDrawData(dd);
    save_capture();
    ++drawn_;
  }
  ++frames_;
  if (opt_.frames > 0 && int(frames_) >= opt_.frames) {
    if (!opt_.screenshot_path.empty() && !dump_png(opt_.screenshot_path, error_)) quit_ = true;
    quit_ = true;
  }
  // Without drawing, no swap either: the browser keeps showing the last frame drawn.
  if (draw) SDL_GL_SwapWindow(window_);
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
