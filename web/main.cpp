// web/main.cpp - the browser shell: the shared frame loop under emscripten_set_main_loop, the web
// Platform (downloads, links, URL parameters; its JavaScript is web/platform.js), and functions the page and
// the e2e test call.
#include "core/url_state.h"
#include "ui/access.h"
#include "ui/platform.h"
#include "ui/shell/sdl_gl_shell.h"

#include <emscripten.h>
#include <emscripten/html5.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

// The browser side of the platform, in web/platform.js (linked with --js-library).
extern "C" {
void js_download(const char* name, const char* data, int len);
void js_open_url(const char* url);
char* js_query_param(const char* key);  // malloc'd; the caller frees it
char* js_query_string();                // malloc'd; the caller frees it
void js_set_address(const char* query);
int js_store(const char* key, const char* data, int len);  // 1 stored, 0 refused (full or disabled)
char* js_stored(const char* key, int* len);                // malloc'd bytes; *len of them
void js_fatal(const char* msg);
int js_window_width();
int js_window_height();
void js_access_apply(const char* ops);
int js_reduced_motion();  // 1 when the page's prefers-reduced-motion media query matches  // the accessibility mirror's
                          // DOM operations (ui/access.h)
}

namespace {

class WebPlatform final : public mc::ui::Platform {
 public:
  const char* name() const override { return "web"; }
  // The browser build has no CUDA and no threads; the engine's device probe speaks of nvcc, which means
  // nothing to a class.
  std::string compute_label() const override { return "WebAssembly, CPU"; }
  bool persistent() const override { return true; }
  void store(const std::string& key, const std::string& bytes) override {
    if (!js_store(key.c_str(), bytes.data(), int(bytes.size())))
      std::fprintf(stderr, "the browser refused to keep %s (storage full or disabled)\n", key.c_str());
  }
  std::string stored(const std::string& key) const override {
    int len = 0;
    char* p = js_stored(key.c_str(), &len);
    std::string v(p, size_t(len));
    free(p);
    return v;
  }
  std::string save_file(const std::string& name, const std::string& content, std::string&) override {
    js_download(name.c_str(), content.data(), int(content.size()));
    return name + " (download)";
  }
  void open_url(const std::string& url) override { js_open_url(url.c_str()); }
  std::string query_param(const std::string& key) const override {
    char* p = js_query_param(key.c_str());
    std::string v = p;
    free(p);
    return v;
  }
  void set_address(const std::string& query) override { js_set_address(query.c_str()); }
  void publish_access(const std::string& ops) override { js_access_apply(ops.c_str()); }
  bool mirrors_access() const override { return true; }
  bool reduced_motion() const override { return js_reduced_motion() != 0; }
};

WebPlatform g_platform;
mc::ui::Shell g_shell;
bool g_ready = false;
std::string g_state;  // storage for app_state_json's return value

void loop() {
  g_shell.set_size(js_window_width(), js_window_height());
  g_shell.frame();
}

}  // namespace

extern "C" {
EMSCRIPTEN_KEEPALIVE unsigned int app_frame_count() { return g_ready ? unsigned(g_shell.frame_count()) : 0u; }
// Frames actually drawn (a still screen draws none: ShellOptions::skip_unchanged_frames).
EMSCRIPTEN_KEEPALIVE unsigned int app_drawn_count() { return g_ready ? unsigned(g_shell.drawn_count()) : 0u; }
EMSCRIPTEN_KEEPALIVE const char* app_state_json() {
  g_state = g_ready ? g_shell.app().state_json().dump() : std::string("{}");
  return g_state.c_str();
}
// The few fields a page waiting on the app polls (App::view_json): cheap however much the app holds.
EMSCRIPTEN_KEEPALIVE const char* app_view_json() {
  g_state = g_ready ? g_shell.app().view_json().dump() : std::string("{}");
  return g_state.c_str();
}
// Opens a file the page wrote into the in-memory file system (drag and drop onto the page).
EMSCRIPTEN_KEEPALIVE int app_open_file(const char* path, const char* display_name) {
  if (!g_ready) return 0;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return g_shell.app().open_file(display_name, ss.str()) ? 1 : 0;
}
// The accessibility mirror's actions (web/platform.js): press the control with ImGui id `id` (a button, a
// checkbox, a chapter, a tab, a header), give a slider or field a value, or move ImGui's keyboard focus to it
// (the DOM's focus went to its mirror); each applies on the next frame.
EMSCRIPTEN_KEEPALIVE void app_access_press(unsigned int id) { mc::ui::access::press(id); }
EMSCRIPTEN_KEEPALIVE void app_access_set(unsigned int id, double value) { mc::ui::access::set_value(id, value); }
EMSCRIPTEN_KEEPALIVE void app_access_focus(unsigned int id) { mc::ui::access::focus(id); }
// Applies a JSON command (see App::command); returns "" or an error message.
EMSCRIPTEN_KEEPALIVE const char* app_command(const char* json_text) {
  if (!g_ready) return "not ready";
  try {
    g_state = g_shell.app().command(nlohmann::json::parse(json_text));
  } catch (const std::exception& e) {
    g_state = e.what();
  }
  return g_state.c_str();
}
}

int main() {
  mc::ui::ShellOptions opt;
  opt.width = js_window_width();
  opt.height = js_window_height();
  opt.font_path = "/assets/fonts/DejaVuSans.ttf";
  // ?panel=ID&scenario=ID&step=N, parsed by the engine (core/url_state.h): what it could not use is named
  // in the status line with the fix, instead of being dropped silently.
  char* query = js_query_string();
  const mc::UrlState url = mc::parse_url_state(query);
  free(query);
  opt.gl = {.es = true,
            .major = 3,
            .minor = 0,
            .alpha = true,
            .glsl_version = "#version 300 es",  // WebGL2
            .unavailable = "WebGL2 is not available in this browser"};
  opt.skip_unchanged_frames = true;  // a still screen costs the browser nothing
  opt.ctrl_q_quits = false;
  std::string err;
  if (!g_shell.init(opt, "/assets", &g_platform, err)) {
    js_fatal(err.c_str());
    return 1;
  }
  // ?panel=ID/TAB&scenario=ID&step=N opens a class at the right place; what it cannot open is named on
  // screen with the real ids nearest it (App::open_address).
  g_shell.app().open_address(url);
  g_ready = true;
  emscripten_set_main_loop(loop, 0, true);
  return 0;
}
