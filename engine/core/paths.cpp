// paths.cpp - finding assets/ and scenarios/ (paths.h): the environment variable, then beside the
// executable and its parents, then the source tree this binary was built from.
#include "core/paths.h"

#include <cstdlib>
#include <fstream>
#include <vector>

namespace mc {

bool file_exists(const std::string& path) {
  std::ifstream f(path);
  return f.good();
}

static std::string find_dir(const char* env, const std::string& exe_path, const std::string& name,
                            const std::string& marker) {
  std::vector<std::string> candidates;
  if (const char* e = std::getenv(env); e && *e) candidates.emplace_back(e);
  if (!exe_path.empty()) {
    auto slash = exe_path.find_last_of('/');
    std::string dir = slash == std::string::npos ? "." : exe_path.substr(0, slash);
    candidates.push_back(dir + "/" + name);
  }
  candidates.push_back(name);
  candidates.push_back("/" + name);  // the web build preloads its files at /assets and /scenarios
  candidates.push_back(std::string(MC_SOURCE_DIR) + "/" + name);
  for (const auto& c : candidates)
    if (file_exists(c + "/" + marker)) return c;
  return candidates.back();
}

std::string find_assets_dir(const std::string& exe_path) {
  return find_dir("MEGACLUSTER_ASSETS", exe_path, "assets", "catalog/index.json");
}

std::string find_scenarios_dir(const std::string& exe_path) {
  return find_dir("MEGACLUSTER_SCENARIOS", exe_path, "scenarios", "index.json");
}

}  // namespace mc
