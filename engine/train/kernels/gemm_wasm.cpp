// gemm_wasm.cpp - sgemm in WebAssembly SIMD128 for the web build (see gemm_wasm.h; the element-wise
// kernels are in elementwise_wasm.cpp).
//
// The GEMM follows the GotoBLAS/BLIS layout (Goto & van de Geijn 2008, "Anatomy of high-performance
// matrix multiplication", Fig. 4; Van Zee & van de Geijn 2015, BLIS Fig. 2): for each kKc-deep slice of K,
// op(B) is packed into kNr-wide column panels and op(A), kMc rows at a time, into kMr-tall row panels; a
// kMr x kNr micro-kernel then keeps its block of C in registers across the whole slice. Packing absorbs
// both transposes and the leading dimensions, so one kernel serves all four cases. Plain simd128 has no
// fused multiply-add, so the kernel multiplies then adds (the build uses -ffp-contract=off anyway).
//
// 5 x 8 floats: 10 f32x4 accumulators + 2 B vectors + 1 broadcast A + 1 product = 14 of the 15 XMM
// registers V8's x64 code generator allocates (xmm15 is its scratch). The loop is bound by instruction
// count, not arithmetic: around each k step's loads and products (22 for 4 x 8) V8 adds a stack check,
// two index zero-extensions and three increments, where clang's native loop has three instructions.
// Measured on a Zen 5 host: clang's native 4 x 8 loop (25 instructions) 62 GFLOP/s, V8's 4 x 8 (30) 49,
// V8's 5 x 8 (36 for 20 products) 57, under node 20 (V8 11.3). 6x8, 4x12, 4x16 and 8x8 need more than 15
// registers and spill; unrolling k makes clang interleave two steps' loads, which spills too. Every
// element of C is still summed in k order, so 5 x 8 gives the same bits as 4 x 8 did.
#if defined(__wasm_simd128__)
#include "train/kernels/gemm_wasm.h"

#include <wasm_simd128.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace mc::train::wasm {
namespace {

constexpr int kMr = 5;     // rows of C per micro-kernel
constexpr int kNr = 8;     // columns of C per micro-kernel (two f32x4)
constexpr int kKc = 256;   // depth of one slice: a packed A panel (5 KiB) + B panel (8 KiB) stay in L1
constexpr int kMc = 80;    // rows of op(A) packed at once (80 KiB, L2), a multiple of kMr
constexpr int kNc = 1024;  // columns of op(B) packed at once (1 MiB at kKc = 256)

// Four rows of four floats (src[r] + k .. k+3) transposed: out[j] = (src[0][k+j], .., src[3][k+j]). Packing
// a row-major op(A) or a transposed op(B) is this 4 x 4 transpose; by shuffles it is ~8x faster than the
// scalar gather (packing went from ~9% to ~6% of a training step in node's profile).
inline void transpose4(const float* s0, const float* s1, const float* s2, const float* s3, v128_t out[4]) {
  const v128_t r0 = wasm_v128_load(s0), r1 = wasm_v128_load(s1), r2 = wasm_v128_load(s2), r3 = wasm_v128_load(s3);
  const v128_t t0 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7);
  const v128_t t2 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
  out[0] = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);
  out[1] = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);
  out[2] = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);
  out[3] = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);
}

// op(A) rows [i0, i0+mc) x depth [p0, p0+kc) into panels of kMr rows: panel r holds, for each k, the kMr
// values op(A)(i, k) side by side. Rows past mc are zero (their results are computed and discarded).
void pack_a(bool ta, const float* A, int lda, int i0, int mc, int p0, int kc, float* out) {
  static_assert(kMr == 5, "the fast paths below pack 4 + 1 rows");
  for (int ir = 0; ir < mc; ir += kMr) {
    const int mr = std::min(kMr, mc - ir);
    float* dst = out + int64_t(ir) * kc;
    if (ta && mr == kMr) {  // op(A)(i, k) = A[k * lda + i]: kMr neighbours in memory
      for (int k = 0; k < kc; ++k) {
        const float* src = A + int64_t(p0 + k) * lda + i0 + ir;
        float* d = dst + k * kMr;
        wasm_v128_store(d, wasm_v128_load(src));
        d[4] = src[4];
      }
    } else if (mr == kMr) {  // op(A)(i, k) = A[i * lda + k]: rows contiguous in k; 4 x 4 transposes + row 4
      const float* s0 = A + int64_t(i0 + ir) * lda + p0;
      const float *s1 = s0 + lda, *s2 = s1 + lda, *s3 = s2 + lda, *s4 = s3 + lda;
      int k = 0;
      for (; k + 4 <= kc; k += 4) {
        v128_t t[4];
        transpose4(s0 + k, s1 + k, s2 + k, s3 + k, t);
        for (int j = 0; j < 4; ++j) {
          wasm_v128_store(dst + (k + j) * kMr, t[j]);
          dst[(k + j) * kMr + 4] = s4[k + j];
        }
      }
      for (; k < kc; ++k) {
        float* d = dst + k * kMr;
        d[0] = s0[k], d[1] = s1[k], d[2] = s2[k], d[3] = s3[k], d[4] = s4[k];
      }
    } else {  // a last panel of fewer than kMr rows
      for (int k = 0; k < kc; ++k) {
        float* d = dst + k * kMr;
        for (int r = 0; r < kMr; ++r)
          d[r] = r >= mr ? 0.0f : ta ? A[int64_t(p0 + k) * lda + i0 + ir + r] : A[int64_t(i0 + ir + r) * lda + p0 + k];
      }
    }
  }
}

// op(B) depth [p0, p0+kc) x columns [j0, j0+nc) into panels of kNr columns: panel c holds, for each k,
// the kNr values op(B)(k, j) side by side. Columns past nc are zero.
void pack_b(bool tb, const float* B, int ldb, int p0, int kc, int j0, int nc, float* out) {
  for (int jr = 0; jr < nc; jr += kNr) {
    const int nr = std::min(kNr, nc - jr);
    float* dst = out + int64_t(jr) * kc;
    if (!tb) {  // op(B)(k, j) = B[k * ldb + j]: kNr neighbours in memory
      for (int k = 0; k < kc; ++k) {
        const float* src = B + int64_t(p0 + k) * ldb + j0 + jr;
        float* d = dst + k * kNr;
        if (nr == kNr) {
          wasm_v128_store(d, wasm_v128_load(src));
          wasm_v128_store(d + 4, wasm_v128_load(src + 4));
        } else {
          for (int c = 0; c < nr; ++c) d[c] = src[c];
          for (int c = nr; c < kNr; ++c) d[c] = 0.0f;
        }
      }
    } else if (nr == kNr) {  // op(B)(k, j) = B[j * ldb + k]: columns contiguous in k, 4 x 4 transposes
      const float* s[kNr];
      for (int c = 0; c < kNr; ++c) s[c] = B + int64_t(j0 + jr + c) * ldb + p0;
      int k = 0;
      for (; k + 4 <= kc; k += 4) {
        v128_t lo[4], hi[4];
        transpose4(s[0] + k, s[1] + k, s[2] + k, s[3] + k, lo);
        transpose4(s[4] + k, s[5] + k, s[6] + k, s[7] + k, hi);
        for (int j = 0; j < 4; ++j) {
          wasm_v128_store(dst + (k + j) * kNr, lo[j]);
          wasm_v128_store(dst + (k + j) * kNr + 4, hi[j]);
        }
      }
      for (; k < kc; ++k)
        for (int c = 0; c < kNr; ++c) dst[k * kNr + c] = s[c][k];
    } else {  // a last panel of fewer than kNr columns
      for (int c = 0; c < kNr; ++c) {
        if (c < nr) {
          const float* src = B + int64_t(j0 + jr + c) * ldb + p0;
          for (int k = 0; k < kc; ++k) dst[k * kNr + c] = src[k];
        } else {
          for (int k = 0; k < kc; ++k) dst[k * kNr + c] = 0.0f;
        }
      }
    }
  }
}

// acc(kMr x kNr) = sum over k in [0, kc), in k order, of a(:, k) b(k, :); then C = acc (first slice of a
// product that does not accumulate) or C += acc. Writes the whole kMr x kNr block to C, which has room for
// it (the caller passes a scratch tile at the edges). Kept out of line, so that V8 allocates registers for
// this loop alone.
__attribute__((noinline)) void micro_kernel(int kc, const float* pa, const float* pb, float* C, int ldc, bool add) {
  v128_t c00 = wasm_f32x4_splat(0.0f), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  v128_t c30 = c00, c31 = c00, c40 = c00, c41 = c00;
  for (int k = 0; k < kc; ++k) {
    const v128_t b0 = wasm_v128_load(pb), b1 = wasm_v128_load(pb + 4);
    v128_t a = wasm_v128_load32_splat(pa);
    c00 = wasm_f32x4_add(c00, wasm_f32x4_mul(a, b0));
    c01 = wasm_f32x4_add(c01, wasm_f32x4_mul(a, b1));
    a = wasm_v128_load32_splat(pa + 1);
    c10 = wasm_f32x4_add(c10, wasm_f32x4_mul(a, b0));
    c11 = wasm_f32x4_add(c11, wasm_f32x4_mul(a, b1));
    a = wasm_v128_load32_splat(pa + 2);
    c20 = wasm_f32x4_add(c20, wasm_f32x4_mul(a, b0));
    c21 = wasm_f32x4_add(c21, wasm_f32x4_mul(a, b1));
    a = wasm_v128_load32_splat(pa + 3);
    c30 = wasm_f32x4_add(c30, wasm_f32x4_mul(a, b0));
    c31 = wasm_f32x4_add(c31, wasm_f32x4_mul(a, b1));
    a = wasm_v128_load32_splat(pa + 4);
    c40 = wasm_f32x4_add(c40, wasm_f32x4_mul(a, b0));
    c41 = wasm_f32x4_add(c41, wasm_f32x4_mul(a, b1));
    pa += kMr;
    pb += kNr;
  }
  float* c0 = C;
  float* c1 = c0 + ldc;
  float* c2 = c1 + ldc;
  float* c3 = c2 + ldc;
  float* c4 = c3 + ldc;
  if (add) {
    c00 = wasm_f32x4_add(wasm_v128_load(c0), c00), c01 = wasm_f32x4_add(wasm_v128_load(c0 + 4), c01);
    c10 = wasm_f32x4_add(wasm_v128_load(c1), c10), c11 = wasm_f32x4_add(wasm_v128_load(c1 + 4), c11);
    c20 = wasm_f32x4_add(wasm_v128_load(c2), c20), c21 = wasm_f32x4_add(wasm_v128_load(c2 + 4), c21);
    c30 = wasm_f32x4_add(wasm_v128_load(c3), c30), c31 = wasm_f32x4_add(wasm_v128_load(c3 + 4), c31);
    c40 = wasm_f32x4_add(wasm_v128_load(c4), c40), c41 = wasm_f32x4_add(wasm_v128_load(c4 + 4), c41);
  }
  wasm_v128_store(c0, c00), wasm_v128_store(c0 + 4, c01);
  wasm_v128_store(c1, c10), wasm_v128_store(c1 + 4, c11);
  wasm_v128_store(c2, c20), wasm_v128_store(c2 + 4, c21);
  wasm_v128_store(c3, c30), wasm_v128_store(c3 + 4, c31);
  wasm_v128_store(c4, c40), wasm_v128_store(c4 + 4, c41);
}

// An edge block (mr < kMr or nr < kNr real rows/columns): through a scratch tile holding C's values, so
// the sums are formed exactly as in a full block.
void edge_kernel(int kc, const float* pa, const float* pb, float* C, int ldc, int mr, int nr, bool add) {
  alignas(16) float t[kMr * kNr] = {};
  if (add)
    for (int r = 0; r < mr; ++r) std::memcpy(t + r * kNr, C + int64_t(r) * ldc, size_t(nr) * sizeof(float));
  micro_kernel(kc, pa, pb, t, kNr, add);
  for (int r = 0; r < mr; ++r) std::memcpy(C + int64_t(r) * ldc, t + r * kNr, size_t(nr) * sizeof(float));
}

}  // namespace

void sgemm(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
           bool accumulate) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    if (!accumulate)
      for (int i = 0; i < M; ++i) std::memset(C + int64_t(i) * ldc, 0, size_t(N) * sizeof(float));
    return;
  }
  // The web build is single-threaded; thread_local keeps this safe should that change.
  thread_local std::vector<float> apack, bpack;
  const int nc_max = std::min(kNc, (N + kNr - 1) / kNr * kNr);
  const int kc_max = std::min(kKc, K);
  bpack.resize(size_t(nc_max) * kc_max);
  apack.resize(size_t(std::min(kMc, (M + kMr - 1) / kMr * kMr)) * kc_max);
  for (int j0 = 0; j0 < N; j0 += kNc) {
    const int nc = std::min(kNc, N - j0);
    for (int p0 = 0; p0 < K; p0 += kKc) {
      const int kc = std::min(kKc, K - p0);
      const bool add = accumulate || p0 > 0;
      pack_b(tb, B, ldb, p0, kc, j0, nc, bpack.data());
      for (int i0 = 0; i0 < M; i0 += kMc) {
        const int mc = std::min(kMc, M - i0);
        pack_a(ta, A, lda, i0, mc, p0, kc, apack.data());
        for (int jr = 0; jr < nc; jr += kNr) {
          const float* pb = bpack.data() + int64_t(jr) * kc;
          const int nr = std::min(kNr, nc - jr);
          for (int ir = 0; ir < mc; ir += kMr) {
            const int mr = std::min(kMr, mc - ir);
            float* c = C + int64_t(i0 + ir) * ldc + j0 + jr;
            if (mr == kMr && nr == kNr)
              micro_kernel(kc, apack.data() + int64_t(ir) * kc, pb, c, ldc, add);
            else
              edge_kernel(kc, apack.data() + int64_t(ir) * kc, pb, c, ldc, mr, nr, add);
          }
        }
      }
    }
  }
}

}  // namespace mc::train::wasm
#endif
