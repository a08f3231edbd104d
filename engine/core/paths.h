// paths.h - where the engine finds its data (assets/) and shipped scenarios.
#pragma once

#include <string>

namespace mc {

// The assets folder: $MEGACLUSTER_ASSETS if set, else "assets" beside the executable (`exe_path`, may be
// empty), else "./assets", else the source tree's assets/ (for builds run in place). The first folder
// that holds catalog/index.json wins; if none does, returns the source-tree path so errors name it.
std::string find_assets_dir(const std::string& exe_path = "");

// The scenarios folder, found the same way ($MEGACLUSTER_SCENARIOS, beside the exe, ., source tree).
std::string find_scenarios_dir(const std::string& exe_path = "");

bool file_exists(const std::string& path);

}  // namespace mc
