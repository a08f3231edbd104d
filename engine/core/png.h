// png.h - a minimal PNG writer (8-bit RGBA, deflate "stored" blocks: no compression, no dependency), so the
// engine and both app builds can export an image the same way. Files are larger than a compressing
// encoder's, which is fine for a chart of a few hundred kilobytes.
#pragma once

#include <cstdint>
#include <string>

namespace mc {

// The PNG file for `w` x `h` pixels of RGBA, rows top to bottom (`rgba` holds w*h*4 bytes).
std::string png_encode_rgba(int w, int h, const uint8_t* rgba);

}  // namespace mc
