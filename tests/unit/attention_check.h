// attention_check.h - what the fused attention kernels' CPU tests (flash_tiled_test.cpp, flash_mma_test.cpp)
// and their GPU test (cuda_kernels_test.cpp) measure: the largest error relative to a tensor's largest
// value, the probabilities a kernel's log-sum-exp L implies against the reference's, and the backward's
// D_i = dO_i . O_i; and the inputs with the reference's results (ops::attention_forward and
// attention_backward, fp32, probabilities kept). Header-only.
#pragma once

#include "train/kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace mc::test::attention {

using Vec = std::vector<float>;

// max |want - got| over the first n elements, relative to want's largest |value|; infinite where got is
// not finite (NaN marks an element no thread wrote).
inline double worst(const Vec& want, const Vec& got, size_t n) {
  double scale = 0, err = 0;
  for (size_t i = 0; i < n; ++i) scale = std::max(scale, double(std::fabs(want[i])));
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    err = std::max(err, double(std::fabs(want[i] - got[i])));
  }
  return err / scale;
}
inline double worst(const Vec& want, const Vec& got) { return worst(want, got, want.size()); }

// L is each row's log-sum-exp of its scaled scores, so exp(s_ij / sqrt(hs) - L_i) are the probabilities:
// the largest difference from the reference's att (B, Hl, T, T), over the causal entries.
inline double probabilities_from_L(const Vec& qkv, const Vec& L, const Vec& att, int B, int T, int Hl, int HS) {
  const int D = Hl * HS;
  const float scale = 1.0f / std::sqrt(float(HS));
  double most = 0;
  for (int bh = 0; bh < B * Hl; ++bh)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j <= i; ++j) {
        const int b = bh / Hl, h = bh % Hl;
        float sc = 0;
        for (int d = 0; d < HS; ++d)
          sc += qkv[size_t((int64_t(b) * T + i) * 3 * D + h * HS + d)] *
                qkv[size_t((int64_t(b) * T + j) * 3 * D + D + h * HS + d)];
        const double p = std::exp(double(sc) * scale - L[size_t(int64_t(bh) * T + i)]);
        const double want = att[size_t((int64_t(bh) * T + i) * T + j)];
        most = std::max(most, std::isfinite(p) ? std::fabs(p - want) : INFINITY);
      }
  return most;
}

// D (B, Hl, T): D_i = dO_i . O_i per head, what the rowdot kernel hands the backward.
inline Vec rowdot(const Vec& dout, const Vec& out, int B, int T, int Hl, int HS) {
  const int D = Hl * HS;
  Vec r(size_t(B) * Hl * T);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hl; ++h)
      for (int i = 0; i < T; ++i) {
        float s = 0;
        for (int d = 0; d < HS; ++d) {
          const size_t at = size_t((int64_t(b) * T + i) * D + h * HS + d);
          s += dout[at] * out[at];
        }
        r[size_t((int64_t(b) * Hl + h) * T + i)] = s;
      }
  return r;
}

// Seeded qkv (B, T, 3D) and dout (B, T, D) in [-2, 2] with 2e-3 steps, passed through `round` (what the
// kernels under test stage them as: bf16, TF32 or as they are), and the reference's output, probabilities
// and dqkv on exactly those inputs.
struct Case {
  Vec qkv, dout, out, att, dqkv;
};
template <class Round>
Case reference(uint32_t seed, int B, int T, int Hl, int HS, Round round) {
  std::mt19937 g(seed);
  auto vec = [&](size_t n) {
    Vec v(n);
    for (float& x : v) x = round(float(int(g() % 2001) - 1000) * 2e-3f);
    return v;
  };
  const int D = Hl * HS;
  Case c;
  c.qkv = vec(size_t(B) * T * 3 * D);
  c.dout = vec(size_t(B) * T * D);
  c.out.resize(size_t(B) * T * D), c.att.resize(size_t(B) * Hl * T * T), c.dqkv.resize(c.qkv.size());
  mc::train::ops::attention_forward(c.out.data(), c.att.data(), c.qkv.data(), B, T, Hl, HS);
  mc::train::ops::attention_backward(c.dqkv.data(), c.dout.data(), c.qkv.data(), c.att.data(), nullptr, B, T, Hl, HS);
  return c;
}

}  // namespace mc::test::attention
