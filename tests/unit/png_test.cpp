// The PNG writer's output decodes (stb_image, an independent decoder) to the same pixels.
#include "core/png.h"

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

TEST(Png, DecodesToTheSamePixels) {
  for (auto [w, h] : {std::pair{3, 2}, std::pair{300, 250}}) {  // the second spans several stored blocks
    std::vector<uint8_t> px(size_t(w) * h * 4);
    for (size_t i = 0; i < px.size(); ++i) px[i] = uint8_t((i * 37 + i / 7) & 0xFF);
    const std::string png = mc::png_encode_rgba(w, h, px.data());
    int dw = 0, dh = 0, ch = 0;
    unsigned char* back =
        stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png.data()), int(png.size()), &dw, &dh, &ch, 4);
    ASSERT_NE(back, nullptr) << stbi_failure_reason();
    EXPECT_EQ(dw, w);
    EXPECT_EQ(dh, h);
    EXPECT_EQ(std::vector<uint8_t>(back, back + px.size()), px);
    stbi_image_free(back);
  }
  EXPECT_THROW(mc::png_encode_rgba(0, 1, nullptr), std::invalid_argument);
}

// A chart (flat background, a few lines) is compressed: the stored-deflate writer this replaced gave
// 4 bytes a pixel and more (3.3 MB for an export of the lab's loss chart at 1280x640).
TEST(Png, CompressesAChart) {
  const int w = 1280, h = 640;
  std::vector<uint8_t> px(size_t(w) * h * 4, 255);
  for (int x = 0; x < w; ++x)
    for (int t = 0; t < 3; ++t) {
      const int y = (h / 2 + int(200 * std::sin(x / 90.0)) + t) % h;
      uint8_t* p = &px[(size_t(y) * w + size_t(x)) * 4];
      p[0] = 30, p[1] = 110, p[2] = 220;
    }
  const std::string png = mc::png_encode_rgba(w, h, px.data());
  EXPECT_LT(png.size(), px.size() / 20) << png.size() << " bytes for " << px.size() << " bytes of pixels";
  int dw = 0, dh = 0, ch = 0;
  unsigned char* back =
      stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png.data()), int(png.size()), &dw, &dh, &ch, 4);
  ASSERT_NE(back, nullptr) << stbi_failure_reason();
  EXPECT_EQ(std::vector<uint8_t>(back, back + px.size()), px);
  stbi_image_free(back);
}
