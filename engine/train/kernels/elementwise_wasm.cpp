// elementwise_wasm.cpp - exp, tanh and GELU in WebAssembly SIMD128 for the web build (see gemm_wasm.h).
// Eigen 3.4 has no wasm packet math, so without these its exp/tanh run one float at a time.
#if defined(__wasm_simd128__)
#include "train/kernels/gemm_wasm.h"

#include <wasm_simd128.h>

#include <cstring>

namespace mc::train::wasm {
namespace {

// Clamps use pmin/pmax (b < a ? b : a, a < b ? b : a): one minps/maxps each under V8, where f32x4.min/max
// cost ~8 instructions for their NaN and signed-zero rules. Neither matters here: the bounds are finite and
// nonzero, and a NaN input still comes out NaN (every comparison with it is false, so it passes through).
// exp on four lanes: Cephes expf (S. Moshier, Cephes Math Library, expf.c), the same range reduction and
// polynomial as Eigen's pexp_float (GenericPacketMathFunctions.h), so web and native agree to ~1 ulp.
// exp(x) = 2^m exp(r), m = floor(x log2(e) + 1/2), r = x - m ln2 with ln2 split in two for exactness.
inline v128_t exp4(v128_t x_in) {
  v128_t x = wasm_f32x4_pmin(wasm_f32x4_pmax(x_in, wasm_f32x4_splat(-88.723f)), wasm_f32x4_splat(88.723f));
  const v128_t m = wasm_f32x4_floor(
      wasm_f32x4_add(wasm_f32x4_mul(x, wasm_f32x4_splat(1.44269504088896341f)), wasm_f32x4_splat(0.5f)));
  v128_t r = wasm_f32x4_add(wasm_f32x4_mul(m, wasm_f32x4_splat(-0.693359375f)), x);
  r = wasm_f32x4_add(wasm_f32x4_mul(m, wasm_f32x4_splat(2.12194440e-4f)), r);
  const v128_t r2 = wasm_f32x4_mul(r, r), r3 = wasm_f32x4_mul(r2, r);
  auto madd = [](v128_t a, v128_t b, float c) { return wasm_f32x4_add(wasm_f32x4_mul(a, b), wasm_f32x4_splat(c)); };
  v128_t y = madd(wasm_f32x4_splat(1.9875691500e-4f), r, 1.3981999507e-3f);
  v128_t y1 = madd(wasm_f32x4_splat(4.1665795894e-2f), r, 1.6666665459e-1f);
  const v128_t y2 = wasm_f32x4_add(r, wasm_f32x4_splat(1.0f));
  y = madd(y, r, 8.3334519073e-3f);
  y1 = madd(y1, r, 5.0000001201e-1f);
  y = wasm_f32x4_add(wasm_f32x4_mul(y, r3), y1);
  y = wasm_f32x4_add(wasm_f32x4_mul(y, r2), y2);
  // y * 2^m with m in [-128, 128]: two factors 2^(m/2) and 2^(m - m/2), each a normal float, so the
  // extremes (m = 128 near FLT_MAX, m = -128 in the subnormals) neither overflow nor flush early.
  // m as an integer: m + 1.5 * 2^23 is exact for |m| < 2^22 and holds m in its low mantissa bits, so its
  // bits minus those of 1.5 * 2^23 are m (2 instructions; V8's trunc_sat takes ~8 for its NaN/range cases).
  const v128_t mi = wasm_i32x4_sub(wasm_f32x4_add(m, wasm_f32x4_splat(12582912.0f)), wasm_i32x4_splat(0x4B400000));
  const v128_t h = wasm_i32x4_shr(mi, 1), l = wasm_i32x4_sub(mi, h);
  const v128_t bias = wasm_i32x4_splat(127);
  const v128_t f1 = wasm_i32x4_shl(wasm_i32x4_add(h, bias), 23), f2 = wasm_i32x4_shl(wasm_i32x4_add(l, bias), 23);
  // exp(x) > x for every finite x, so the max changes nothing there but gives exp(+inf) = +inf (and
  // keeps NaN), as Eigen's pexp_float does.
  const v128_t e = wasm_f32x4_pmax(wasm_f32x4_mul(wasm_f32x4_mul(y, f1), f2), x_in);
  // Below the clamp the true value is under 3e-39: flush to 0 so that exp(-inf) = 0 exactly.
  return wasm_v128_andnot(e, wasm_f32x4_lt(x_in, wasm_f32x4_splat(-88.723f)));
}

// tanh on four lanes: the odd/even rational approximation of Eigen's ptanh_float (13th/6th degree,
// clamped at +-7.9053, where it reaches 1 in float), x itself below |x| = 0.0004.
inline v128_t tanh4(v128_t a) {
  const v128_t x = wasm_f32x4_pmin(wasm_f32x4_pmax(a, wasm_f32x4_splat(-7.90531110763549805f)),
                                   wasm_f32x4_splat(7.90531110763549805f));
  const v128_t tiny = wasm_f32x4_lt(wasm_f32x4_abs(a), wasm_f32x4_splat(0.0004f));
  const v128_t x2 = wasm_f32x4_mul(x, x);
  auto madd = [](v128_t a, v128_t b, float c) { return wasm_f32x4_add(wasm_f32x4_mul(a, b), wasm_f32x4_splat(c)); };
  v128_t p = madd(x2, wasm_f32x4_splat(-2.76076847742355e-16f), 2.00018790482477e-13f);
  p = madd(x2, p, -8.60467152213735e-11f);
  p = madd(x2, p, 5.12229709037114e-08f);
  p = madd(x2, p, 1.48572235717979e-05f);
  p = madd(x2, p, 6.37261928875436e-04f);
  p = madd(x2, p, 4.89352455891786e-03f);
  p = wasm_f32x4_mul(x, p);
  v128_t q = madd(x2, wasm_f32x4_splat(1.19825839466702e-06f), 1.18534705686654e-04f);
  q = madd(x2, q, 2.26843463243900e-03f);
  q = madd(x2, q, 4.89352518554385e-03f);
  return wasm_v128_bitselect(x, wasm_f32x4_div(p, q), tiny);
}

// Whole vectors in place (unaligned loads are as fast as aligned ones in wasm); the last n % 4 elements
// through a zero-padded copy, so each element's result depends on its value only.
template <class F>
void lanewise(float* x, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, f(wasm_v128_load(x + i)));
  if (i < n) {
    alignas(16) float t[4] = {0, 0, 0, 0};
    std::memcpy(t, x + i, size_t(n - i) * sizeof(float));
    wasm_v128_store(t, f(wasm_v128_load(t)));
    std::memcpy(x + i, t, size_t(n - i) * sizeof(float));
  }
}

}  // namespace

void exp_inplace(float* x, int64_t n) { lanewise(x, n, exp4); }
void tanh_inplace(float* x, int64_t n) { lanewise(x, n, tanh4); }

namespace {

// GELU's tanh form (Hendrycks & Gimpel 2016, "Gaussian Error Linear Units", eq. after 2):
// gelu(x) = x/2 (1 + tanh(k (x + 0.044715 x^3))), k = sqrt(2/pi). Same operations in the same order as
// ops.cpp's scalar loops around tanh_inplace, so the results are the same bits; fused, each element makes
// one trip through registers instead of three through memory.
constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kGeluC = 0.044715f;

inline v128_t splat(float c) { return wasm_f32x4_splat(c); }
inline v128_t mul(v128_t a, v128_t b) { return wasm_f32x4_mul(a, b); }
inline v128_t add(v128_t a, v128_t b) { return wasm_f32x4_add(a, b); }

// tanh(k (x + c x x x)), with the products in ops.cpp's order: ((c x) x) x.
inline v128_t gelu_tanh(v128_t x) { return tanh4(mul(splat(kGeluK), add(x, mul(mul(mul(splat(kGeluC), x), x), x)))); }

inline v128_t gelu4(v128_t x) { return mul(mul(splat(0.5f), x), add(splat(1.0f), gelu_tanh(x))); }

// The last n % 4 elements of an array, zero-padded to a vector (and back).
inline v128_t load_tail(const float* p, int64_t m) {
  alignas(16) float t[4] = {0, 0, 0, 0};
  std::memcpy(t, p, size_t(m) * sizeof(float));
  return wasm_v128_load(t);
}
inline void store_tail(float* p, int64_t m, v128_t v) {
  alignas(16) float t[4];
  wasm_v128_store(t, v);
  std::memcpy(p, t, size_t(m) * sizeof(float));
}

}  // namespace

void gelu_forward(float* out, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(out + i, gelu4(wasm_v128_load(x + i)));
  if (i < n) store_tail(out + i, n - i, gelu4(load_tail(x + i, n - i)));
}

namespace {

// gelu'(x) times dout: device/elementwise.h's gelu_two_u and gelu_grad_from_z with exp4 between them, the
// operations in the same order (the constants 2k and 3c fold exactly as the scalar code's do), so the
// same bits as ops.cpp's three loops around exp_inplace. Those loops stayed scalar in the web build and
// took 4.6 % of a training step in node's profile, more than every other element-wise kernel together.
inline v128_t gelu_grad4(v128_t x, v128_t dout) {
  const v128_t two_u = mul(splat(2.0f * kGeluK), add(x, mul(mul(mul(splat(kGeluC), x), x), x)));
  const v128_t z = exp4(wasm_f32x4_neg(wasm_f32x4_abs(two_u)));
  const v128_t inv = wasm_f32x4_div(splat(1.0f), add(splat(1.0f), z));
  const v128_t z_inv = mul(z, inv);
  const v128_t pos = wasm_f32x4_ge(two_u, splat(0.0f));
  const v128_t s = wasm_v128_bitselect(inv, z_inv, pos);          // sigma(2u)
  const v128_t one_minus = wasm_v128_bitselect(z_inv, inv, pos);  // 1 - sigma(2u)
  const v128_t slope = mul(splat(2.0f * kGeluK), add(splat(1.0f), mul(mul(splat(3.0f * kGeluC), x), x)));
  return mul(dout, add(s, mul(mul(mul(x, s), one_minus), slope)));
}

}  // namespace

void gelu_backward(float* dx, const float* x, const float* dout, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(dx + i, gelu_grad4(wasm_v128_load(x + i), wasm_v128_load(dout + i)));
  if (i < n) store_tail(dx + i, n - i, gelu_grad4(load_tail(x + i, n - i), load_tail(dout + i, n - i)));
}

}  // namespace mc::train::wasm
#endif
