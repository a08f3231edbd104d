// fuzz_common.cpp - the scratch file of fuzz_common.h.
#include "fuzz_common.h"

#include <unistd.h>
#include <cstdio>
#include <fstream>

namespace mc::fuzz {

std::string scratch_file(const uint8_t* data, size_t size, const char* suffix) {
  static const std::string dir = [] {
    const char* shm = "/dev/shm";
    const char* tmp = std::getenv("TMPDIR");
    std::string base = access(shm, W_OK) == 0 ? shm : (tmp && *tmp ? tmp : "/tmp");
    return base;
  }();
  const std::string path = dir + "/mc-fuzz-" + std::to_string(getpid()) + suffix;
  struct Remove {  // the file goes when the process ends normally
    std::string p;
    ~Remove() { std::remove(p.c_str()); }
  };
  static std::map<std::string, Remove> made;
  if (!made.count(path)) made[path].p = path;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  if (!out) finding("cannot write the scratch file " + path);
  return path;
}

}  // namespace mc::fuzz
