// png.cpp - see png.h. stb_image_write's encoder: zlib deflate with its own Huffman coding and per-row
// filters (the stored blocks this file wrote before made a 1280x640 chart 3.3 MB).
#include "core/png.h"

#include <stdexcept>

// The implementation lives in this file only, with internal linkage, so no other user of stb (the tests
// decode with stb_image) can clash with it.
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif
#include <stb/stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace mc {

std::string png_encode_rgba(int w, int h, const uint8_t* rgba) {
  if (w <= 0 || h <= 0 || !rgba) throw std::invalid_argument("png_encode_rgba: empty image");
  std::string out;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), size_t(size));
  };
  if (!stbi_write_png_to_func(append, &out, w, h, 4, rgba, w * 4))
    throw std::runtime_error("png_encode_rgba: the encoder failed (out of memory?)");
  return out;
}

}  // namespace mc
