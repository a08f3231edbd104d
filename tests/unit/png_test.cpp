// The PNG writer's output decodes (stb_image, an independent decoder) to the same pixels.
#include "core/png.h"

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

#include <gtest/gtest.h>

#include <vector>

TEST(Png, DecodesToTheSamePixels) {
  for (auto [w, h] : {std::pair{3, 2}, std::pair{300, 250}}) {  // the second spans several stored blocks
    std::vector<uint8_t> px(size_t(w) * h * 4);
    for (size_t i = 0; i < px.size(); ++i) px[i] = uint8_t((i * 37 + i / 7) & 0xFF);
    const std::string png = mc::png_encode_rgba(w, h, px.data());
    int dw = 0, dh = 0, ch = 0;
    unsigned char* back = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png.data()), int(png.size()),
                                                &dw, &dh, &ch, 4);
    ASSERT_NE(back, nullptr) << stbi_failure_reason();
    EXPECT_EQ(dw, w);
    EXPECT_EQ(dh, h);
    EXPECT_EQ(std::vector<uint8_t>(back, back + px.size()), px);
    stbi_image_free(back);
  }
  EXPECT_THROW(mc::png_encode_rgba(0, 1, nullptr), std::invalid_argument);
}
