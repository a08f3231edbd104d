// check_png - fails (exit 1) if a PNG is missing, tiny, or blank. "Blank" means nearly one colour:
// an ImGui screen with text and tables has thousands of distinct colours and a wide luminance spread.
//   mc_check_png FILE.png [--min-colors N]
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_set>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mc_check_png FILE.png [--min-colors N]\n");
    return 2;
  }
  int min_colors = 64;
  if (argc >= 4 && std::string(argv[2]) == "--min-colors") min_colors = std::atoi(argv[3]);
  int w = 0, h = 0, n = 0;
  unsigned char* px = stbi_load(argv[1], &w, &h, &n, 4);
  if (!px) {
    std::fprintf(stderr, "%s: cannot read PNG (%s)\n", argv[1], stbi_failure_reason());
    return 1;
  }
  std::unordered_set<unsigned> colors;
  int lo = 255, hi = 0;
  for (long i = 0; i < long(w) * h; ++i) {
    unsigned char* p = px + 4 * i;
    colors.insert(unsigned(p[0]) << 16 | unsigned(p[1]) << 8 | p[2]);
    int lum = (p[0] * 3 + p[1] * 6 + p[2]) / 10;
    lo = lum < lo ? lum : lo;
    hi = lum > hi ? lum : hi;
  }
  stbi_image_free(px);
  std::printf("%s: %dx%d, %zu distinct colours, luminance %d..%d\n", argv[1], w, h, colors.size(), lo, hi);
  if (w < 200 || h < 200) return std::fprintf(stderr, "image too small\n"), 1;
  if (int(colors.size()) < min_colors || hi - lo < 64)
    return std::fprintf(stderr, "image looks blank (fewer than %d colours or no contrast)\n", min_colors), 1;
  return 0;
}
