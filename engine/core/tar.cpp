// tar.cpp - see tar.h. Format: POSIX.1-2001 ustar (IEEE Std 1003.1, "pax" chapter): per file a 512-byte
// header with octal fields and a checksum, the bytes padded to 512, and two zero blocks at the end.
#include "core/tar.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace mc {
namespace {

constexpr size_t kBlock = 512;

// An octal field of `width` bytes: width-1 digits, then NUL (callers keep `v` below 8^(width-1)).
void octal(char* field, size_t width, uint64_t v) {
  for (size_t i = width - 1; i-- > 0; v >>= 3) field[i] = char('0' + (v & 7));
  field[width - 1] = '\0';
}

}  // namespace

std::string tar_archive(const std::vector<std::pair<std::string, std::string>>& files, int64_t mtime) {
  std::string out;
  for (const auto& [path, bytes] : files) {
    if (path.empty() || path.size() > 100) throw std::invalid_argument("tar_archive: a path of 1 to 100 bytes");
    if (bytes.size() >= (uint64_t(1) << 33)) throw std::invalid_argument("tar_archive: a file under 8 GiB");
    char h[kBlock] = {};
    std::memcpy(h, path.data(), path.size());             // name
    octal(h + 100, 8, 0644);                              // mode
    octal(h + 108, 8, 0);                                 // uid
    octal(h + 116, 8, 0);                                 // gid
    octal(h + 124, 12, bytes.size());                     // size
    octal(h + 136, 12, uint64_t(mtime < 0 ? 0 : mtime));  // mtime
    h[156] = '0';                                         // a regular file
    std::memcpy(h + 257, "ustar", 6);                     // magic, with its NUL
    std::memcpy(h + 263, "00", 2);                        // version
    // The checksum: the header's bytes summed with the checksum field read as spaces.
    std::memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : h) sum += c;
    std::snprintf(h + 148, 7, "%06o", sum);
    h[154] = '\0', h[155] = ' ';
    out.append(h, kBlock);
    out += bytes;
    out.append((kBlock - bytes.size() % kBlock) % kBlock, '\0');
  }
  out.append(2 * kBlock, '\0');
  return out;
}

}  // namespace mc
