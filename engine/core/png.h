// png.h - PNG export (8-bit RGBA), compressed by stb_image_write (Debian's libstb-dev, a header-only
// library; no third-party source is committed), so the engine and both app builds export an image the
// same way. A chart of flat colours compresses to a few tens of kilobytes.
#pragma once

#include <cstdint>
#include <string>

namespace mc {

// The PNG file for `w` x `h` pixels of RGBA, rows top to bottom (`rgba` holds w*h*4 bytes).
std::string png_encode_rgba(int w, int h, const uint8_t* rgba);

}  // namespace mc
