// web/main.cpp - the browser shell: the shared frame loop under emscripten_set_main_loop, the web
// Platform (downloads, links, URL parameters), and functions the page and the e2e test call.
#include "core/url_state.h"
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

// The EM_JS bodies are JavaScript: clang-format would split its !== and reflow it (docs/TOOLCHAIN.md).
// clang-format off
EM_JS(void, js_download, (const char* name, const char* data, int len), {
  const bytes = HEAPU8.slice(data, data + len);
  const blob = new Blob([bytes], {type: "application/octet-stream"});
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = UTF8ToString(name);
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
});
EM_JS(void, js_open_url, (const char* url), { window.open(UTF8ToString(url), "_blank", "noopener"); });
EM_JS(char*, js_query_param, (const char* key), {
  const v = new URLSearchParams(window.location.search).get(UTF8ToString(key)) || "";
  const n = lengthBytesUTF8(v) + 1;
  const p = _malloc(n);
  stringToUTF8(v, p, n);
  return p;
});
EM_JS(char*, js_query_string, (), {
  const v = window.location.search || "";
  const n = lengthBytesUTF8(v) + 1;
  const p = _malloc(n);
  stringToUTF8(v, p, n);
  return p;
});
// (Compared with != : clang-format splits JavaScript's !== into "!= =", and EM_JS takes no comments.)
// The address follows the screen in place: replaceState adds no history entry (Back leaves the page, as
// before) and reloads nothing; the path (a course site's sub-path) and a #fragment stay as they are.
EM_JS(void, js_set_address, (const char* query), {
  const u = new URL(window.location.href);
  u.search = UTF8ToString(query);
  if (u.href != window.location.href) window.history.replaceState(window.history.state, "", u.href);
});
// localStorage holds strings: bytes go in as base64 (a checkpoint of the lab's model is a few hundred KB,
// well inside the browser's quota). A full quota or disabled storage is reported, never fatal.
EM_JS(int, js_store, (const char* key, const char* data, int len), {
  try {
    const bytes = HEAPU8.subarray(data, data + len);
    let bin = "";
    for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    window.localStorage.setItem("megacluster." + UTF8ToString(key), btoa(bin));
    return 1;
  } catch (e) { return 0; }
});
EM_JS(char*, js_stored, (const char* key, int* len), {
  let bin = "";
  try { bin = atob(window.localStorage.getItem("megacluster." + UTF8ToString(key)) || ""); } catch (e) { bin = ""; }
  const p = _malloc(bin.length + 1);
  for (let i = 0; i < bin.length; ++i) HEAPU8[p + i] = bin.charCodeAt(i);
  HEAP32[len >> 2] = bin.length;
  return p;
});
EM_JS(void, js_fatal, (const char* msg), { if (window.mcShowError) window.mcShowError(UTF8ToString(msg)); });
EM_JS(int, js_window_width, (), { return window.innerWidth; });
EM_JS(int, js_window_height, (), { return window.innerHeight; });
// clang-format on

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
// Opens a file the page wrote into the in-memory file system (drag and drop onto the page).
EMSCRIPTEN_KEEPALIVE int app_open_file(const char* path, const char* display_name) {
  if (!g_ready) return 0;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return g_shell.app().open_file(display_name, ss.str()) ? 1 : 0;
}
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
