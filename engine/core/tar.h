// tar.h - a tar archive (POSIX ustar) of a few in-memory files, so that an export made of several files
// (the lab's model: its checkpoint and the config that resumes it) is one download that any system's
// `tar xf` unpacks.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mc {

// {path inside the archive (at most 100 bytes, '/' for folders), bytes}. `mtime` in seconds since 1970.
// Throws std::invalid_argument for an empty or too long path.
std::string tar_archive(const std::vector<std::pair<std::string, std::string>>& files, int64_t mtime);

}  // namespace mc
