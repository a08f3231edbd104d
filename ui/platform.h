// platform.h - the one small interface behind which native and web differ. Panels call it for
// anything that touches the outside world (saving an export, opening a link, the page URL).
#pragma once

#include <functional>
#include <string>

namespace mc::ui {

class Platform {
 public:
  virtual ~Platform() = default;
  virtual const char* name() const = 0;  // "native" or "web"
  // Saves `content` for the user: native writes ./exports/<name> and returns that path; web starts a
  // browser download and returns the file name. Returns "" and sets `error` on failure.
  virtual std::string save_file(const std::string& name, const std::string& content, std::string& error) = 0;
  virtual void open_url(const std::string& url) = 0;
  // Web: query parameters of the page URL (?scenario=...&step=3); native: command-line --KEY VALUE.
  virtual std::string query_param(const std::string& key) const {
    (void)key;
    return "";
  }
  // The address of what is on screen ("?panel=capital/waterfall&scenario=openai-lp-2019&step=2", from
  // core/url_state.h's to_query) as the class moves: web replaces the page URL's query in place
  // (history.replaceState: no reload, no new history entry), so a copied link opens this screen; native has
  // no address bar and ignores it.
  virtual void set_address(const std::string& query) { (void)query; }
  // The accessibility mirror's changes since the last frame (ui/access.h's diff: JSON DOM operations): web
  // applies them to the page's hidden DOM for screen readers and the keyboard (web/platform.js); native has
  // no platform bridge and ignores them.
  virtual void publish_access(const std::string& ops) { (void)ops; }
  // Whether anything reads the mirror (the page's DOM; the tests): where nothing does (the native shell), the
  // app builds no tree and ImGui calls no item hook.
  virtual bool mirrors_access() const { return false; }
  // Whether the reader asked the system for less motion (web: the prefers-reduced-motion media query): the
  // animations then start paused.
  virtual bool reduced_motion() const { return false; }
  // What computes, in plain words for the status bar ("WebAssembly, CPU"); "" = the engine's device label
  // (DeviceInfo::label), which describes a native build.
  virtual std::string compute_label() const { return ""; }
  // Storage that outlives the page (web: the browser's localStorage), so a reload resumes the lab's run.
  // Native keeps nothing here (a desktop run is exported as a checkpoint instead): stored() returns "".
  virtual bool persistent() const { return false; }
  virtual void store(const std::string& key, const std::string& bytes) {
    (void)key;
    (void)bytes;
  }
  virtual std::string stored(const std::string& key) const {
    (void)key;
    return "";
  }
  // Long work (ui/jobs.h): runs `work` on a worker thread and returns true, or returns false when this
  // platform has none (the browser build is single-threaded: no SharedArrayBuffer on a plain static host),
  // and the job runner then advances the work a slice per frame instead.
  virtual bool run_on_worker(std::function<void()> work) {
    (void)work;
    return false;
  }
};

}  // namespace mc::ui
