// png.cpp - see png.h. Format: PNG specification (W3C, 2003) sections 5 (chunks, CRC-32) and 11
// (IHDR, IDAT, IEND); zlib (RFC 1950) with deflate stored blocks (RFC 1951 section 3.2.4) and Adler-32.
#include "core/png.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace mc {
namespace {

uint32_t crc32(const std::string& bytes, size_t from) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = from; i < bytes.size(); ++i) c = table[(c ^ uint8_t(bytes[i])) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void put32(std::string& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(char((v >> s) & 0xFF));
}

void chunk(std::string& out, const char* type, const std::string& data) {
  put32(out, uint32_t(data.size()));
  const size_t start = out.size();
  out += type;
  out += data;
  put32(out, crc32(out, start));  // over the type and the data
}

}  // namespace

std::string png_encode_rgba(int w, int h, const uint8_t* rgba) {
  if (w <= 0 || h <= 0 || !rgba) throw std::invalid_argument("png_encode_rgba: empty image");
  // The raw scanlines: a filter byte (0, none) before each row.
  std::string raw;
  raw.reserve(size_t(h) * (size_t(w) * 4 + 1));
  for (int y = 0; y < h; ++y) {
    raw.push_back('\0');
    raw.append(reinterpret_cast<const char*>(rgba) + size_t(y) * w * 4, size_t(w) * 4);
  }
  std::string z = "\x78\x01";  // zlib header: deflate, 32 KiB window, no dictionary
  for (size_t at = 0; at < raw.size() || at == 0;) {
    const size_t n = std::min<size_t>(65535, raw.size() - at);
    const bool last = at + n >= raw.size();
    z.push_back(last ? '\x01' : '\x00');  // BFINAL, BTYPE 00 (stored)
    z.push_back(char(n & 0xFF)), z.push_back(char(n >> 8));
    z.push_back(char(~n & 0xFF)), z.push_back(char((~n >> 8) & 0xFF));
    z.append(raw, at, n);
    at += n;
    if (last) break;
  }
  uint32_t a = 1, b = 0;  // Adler-32 of the uncompressed data
  for (unsigned char c : raw) a = (a + c) % 65521, b = (b + a) % 65521;
  put32(z, (b << 16) | a);

  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  put32(ihdr, uint32_t(w));
  put32(ihdr, uint32_t(h));
  ihdr += std::string("\x08\x06\x00\x00\x00", 5);  // 8-bit depth, RGBA, deflate, no filter method, no interlace
  chunk(png, "IHDR", ihdr);
  chunk(png, "IDAT", z);
  chunk(png, "IEND", "");
  return png;
}

}  // namespace mc
