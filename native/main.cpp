// native/main.cpp - the desktop shell: a window, the shared frame loop, and a few options for tests.
//
//   megacluster-app [--frames N --screenshot out.png] [--panel ID] [--size WxH] [--assets DIR]
#include "core/paths.h"
#include "ui/platform.h"
#include "ui/shell/sdl_gl_shell.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace {

class NativePlatform final : public mc::ui::Platform {
 public:
  const char* name() const override { return "native"; }
  std::string save_file(const std::string& name, const std::string& content, std::string& error) override {
    std::error_code ec;
    std::filesystem::create_directories("exports", ec);
    const std::string path = "exports/" + name;
    const std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary);
      out << content;
      if (!out) {
        error = "cannot write " + tmp;
        return "";
      }
    }
    std::filesystem::rename(tmp, path, ec);  // atomic: never a half-written export
    if (ec) {
      error = "cannot rename " + tmp + ": " + ec.message();
      return "";
    }
    return std::filesystem::absolute(path).string();
  }
  void open_url(const std::string& url) override {
    std::string cmd = "xdg-open '" + url + "' >/dev/null 2>&1 &";
    if (url.find('\'') == std::string::npos && std::system(cmd.c_str()) != 0)
      std::fprintf(stderr, "open %s in a browser\n", url.c_str());
  }
  // A detached thread: the job owns everything it touches (ui/jobs.h), so it may outlive the window.
  bool run_on_worker(std::function<void()> work) override {
    std::thread(std::move(work)).detach();
    return true;
  }
};

void usage() {
  std::fprintf(stderr,
               "usage: megacluster-app [--frames N --screenshot FILE.png] [--panel ID] [--size WxH] [--assets DIR]\n");
}

}  // namespace

int main(int argc, char** argv) {
  mc::ui::ShellOptions opt;
  std::string assets;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--frames")
      opt.frames = std::atoi(next().c_str());
    else if (a == "--screenshot")
      opt.screenshot_path = next();
    else if (a == "--panel")
      opt.start_panel = next();
    else if (a == "--assets")
      assets = next();
    else if (a == "--size") {
      std::string v = next();
      if (std::sscanf(v.c_str(), "%dx%d", &opt.width, &opt.height) != 2) {
        usage();
        return 2;
      }
    } else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else {
      std::fprintf(stderr, "megacluster-app: unknown option %s\n", a.c_str());
      usage();
      return 2;
    }
  }
  if (!opt.screenshot_path.empty() && opt.frames <= 0) opt.frames = 30;
  if (assets.empty()) assets = mc::find_assets_dir(argv[0]);
  opt.font_path = assets + "/fonts/DejaVuSans.ttf";
  if (!mc::file_exists(opt.font_path)) opt.font_path = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

  NativePlatform platform;
  mc::ui::Shell shell;
  std::string err;
  if (!shell.init(opt, assets, &platform, err)) {
    std::fprintf(stderr, "megacluster-app: %s\n(no display? run it under xvfb-run, or use the web build: see README)\n",
                 err.c_str());
    shell.shutdown();
    return 1;
  }
  while (shell.frame()) {
  }
  std::string last = shell.last_error();
  shell.shutdown();
  if (!last.empty()) {
    std::fprintf(stderr, "megacluster-app: %s\n", last.c_str());
    return 1;
  }
  if (!opt.screenshot_path.empty()) std::printf("wrote %s\n", opt.screenshot_path.c_str());
  return 0;
}
