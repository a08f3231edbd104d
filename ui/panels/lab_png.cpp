// lab_png.cpp - the loss chart drawn into pixels (see lab_png.h). Text is stb_easy_font's segment font
// (libstb-dev), scaled up: its glyphs are quads, so every drawing here is a filled rectangle or a line.
#include "ui/panels/lab_png.h"

#include "core/png.h"
#include "ui/panels/lab_charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
#include <stb/stb_easy_font.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace mc::ui {
namespace {

struct Rgb {
  uint8_t r, g, b;
};

// The on-screen chart's series colours (lab_charts.cpp), darkened to read on white paper.
const Rgb kSeries[8] = {{30, 110, 200}, {220, 110, 20}, {40, 150, 40}, {200, 40, 100},
                        {120, 70, 200}, {160, 140, 0},  {0, 140, 130}, {90, 90, 90}};
const Rgb kInk = {40, 40, 48}, kGrid = {225, 227, 232}, kFloor = {170, 140, 0};

struct Canvas {
  int w, h;
  std::vector<uint8_t>& px;
  void fill(float x0, float y0, float x1, float y1, Rgb c) {
    const int a = std::max(0, int(std::floor(x0))), b = std::min(w, int(std::ceil(x1)));
    const int t = std::max(0, int(std::floor(y0))), u = std::min(h, int(std::ceil(y1)));
    for (int y = t; y < u; ++y)
      for (int x = a; x < b; ++x) {
        uint8_t* p = &px[(size_t(y) * size_t(w) + size_t(x)) * 4];
        p[0] = c.r, p[1] = c.g, p[2] = c.b, p[3] = 255;
      }
  }
  // A line of `width` pixels: a square brush stamped every half pixel along it.
  void line(float x0, float y0, float x1, float y1, float width, Rgb c) {
    const float len = std::hypot(x1 - x0, y1 - y0);
    const int n = std::max(1, int(len * 2));
    for (int i = 0; i <= n; ++i) {
      const float x = x0 + (x1 - x0) * float(i) / float(n), y = y0 + (y1 - y0) * float(i) / float(n);
      fill(x - width / 2, y - width / 2, x + width / 2, y + width / 2, c);
    }
  }
  // Text at (x, y) (top left), `scale` times stb_easy_font's 7-pixel-high glyphs; rotated a quarter turn
  // counter-clockwise when `vertical` (reading bottom to top, for the y axis's title; (x, y) is then the
  // bottom left).
  void text(float x, float y, const std::string& s, float scale, Rgb c, bool vertical = false) {
    static char quads[120000];
    std::string copy = s;
    const int n = stb_easy_font_print(0, 0, copy.data(), nullptr, quads, sizeof quads);
    for (int q = 0; q < n; ++q) {
      const float* v0 = reinterpret_cast<const float*>(quads + size_t(q) * 64);
      const float* v2 = reinterpret_cast<const float*>(quads + size_t(q) * 64 + 32);
      const float qx0 = v0[0] * scale, qy0 = v0[1] * scale, qx1 = v2[0] * scale, qy1 = v2[1] * scale;
      if (!vertical)
        fill(x + qx0, y + qy0, x + qx1, y + qy1, c);
      else
        fill(x + qy0, y - qx1, x + qy1, y - qx0, c);
    }
  }
  static float text_width(const std::string& s, float scale) {
    std::string copy = s;
    return float(stb_easy_font_width(copy.data())) * scale;
  }
};

}  // namespace

LossChartImage render_loss_chart(const std::vector<LabCurve>& curves, int steps, double floor, bool log_y, int width,
                                 int height) {
  LossChartImage img;
  img.width = width, img.height = height;
  img.rgba.assign(size_t(width) * size_t(height) * 4, 255);
  Canvas cv{width, height, img.rgba};
  const LossAxes ax = loss_axes(curves, steps, floor, log_y);
  const float s = float(height) / 300.0f;  // text scale: 3 at 900 pixels high (21-pixel capitals)
  const float L = 48 * s, R = float(width) - 24 * s, T = 26 * s, B = float(height) - 30 * s;
  auto ty = [&](double v) {
    const double a = log_y ? std::log(v) : v, l0 = log_y ? std::log(ax.lo) : ax.lo,
                 l1 = log_y ? std::log(ax.hi) : ax.hi;
    return float(B - (a - l0) / (l1 - l0) * (B - T));
  };
  auto tx = [&](double step) { return float(L + (step - 1) / double(std::max<size_t>(ax.steps - 1, 1)) * (R - L)); };
  char buf[64];
  // y grid and tick labels
  for (int k = 0; k <= 4; ++k) {
    const double v = log_y ? ax.lo * std::pow(ax.hi / ax.lo, k / 4.0) : ax.lo + (ax.hi - ax.lo) * k / 4.0;
    std::snprintf(buf, sizeof buf, "%.2f", v);
    cv.line(L, ty(v), R, ty(v), 1, kGrid);
    cv.text(L - Canvas::text_width(buf, s) - 4 * s, ty(v) - 3.5f * s, buf, s, kInk);
  }
  // x ticks: 0, a quarter, ... of the span, in whole steps
  for (int k = 0; k <= 4; ++k) {
    const double step = std::max(1.0, std::round(double(ax.steps) * k / 4.0));
    std::snprintf(buf, sizeof buf, "%.0f", step);
    cv.line(tx(step), B, tx(step), B + 3 * s, 1.5f, kInk);
    cv.text(tx(step) - Canvas::text_width(buf, s) / 2, B + 5 * s, buf, s, kInk);
  }
  cv.line(L, B, R, B, 2, kInk);
  cv.line(L, T, L, B, 2, kInk);
  // The axes' titles
  const std::string xt = "training step", yt = log_y ? "loss (nats/byte, log scale)" : "loss (nats/byte)";
  cv.text((L + R) / 2 - Canvas::text_width(xt, s * 1.2f) / 2, float(height) - 12 * s, xt, s * 1.2f, kInk);
  cv.text(4 * s, (T + B) / 2 + Canvas::text_width(yt, s * 1.2f) / 2, yt, s * 1.2f, kInk, true);
  cv.text(L, 6 * s, "Training lab: loss per step", s * 1.4f, kInk);
  if (floor > 0) {
    for (float x = L; x < R; x += 8 * s) cv.line(x, ty(floor), std::min(x + 4 * s, R), ty(floor), 2, kFloor);
    cv.text(L + 4 * s, ty(floor) + 4 * s, "corpus entropy (no model goes below it)", s, kFloor);
  }
  float legend_w = 0;
  for (const auto& c : curves) legend_w = std::max(legend_w, Canvas::text_width(c.label, s));
  for (size_t ci = 0; ci < curves.size(); ++ci) {
    const auto& c = curves[ci];
    const Rgb col = kSeries[ci % 8];
    const float lw = ci + 1 == curves.size() ? 3.0f : 2.0f;
    for (size_t i = 1; i < c.losses.size(); ++i)
      cv.line(tx(double(i)), ty(c.losses[i - 1]), tx(double(i + 1)), ty(c.losses[i]), lw, col);
    const float ly = T + 4 * s + 11 * s * float(ci);
    const float lx = R - legend_w - 16 * s;
    cv.fill(lx, ly + 2 * s, lx + 10 * s, ly + 5 * s, col);
    cv.text(lx + 14 * s, ly, c.label, s, col);
  }
  return img;
}

std::string loss_chart_png(const std::vector<LabCurve>& curves, int steps, double floor, bool log_y) {
  const LossChartImage img = render_loss_chart(curves, steps, floor, log_y);
  return png_encode_rgba(img.width, img.height, img.rgba.data());
}

}  // namespace mc::ui
