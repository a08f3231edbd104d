// flash_mma.h - fused causal attention on tensor cores (FlashAttention-2; Dao 2023, Alg. 1 forward, Alg. 2
// backward) with fp32 accumulation and fp32 softmax statistics, in two operand formats: bf16 (mma.m16n8k16)
// and TF32 (mma.m16n8k8). The block bodies are written once for two executors, as flash_tiled.h's are:
// engine/cuda/train_kernels.cu runs them as __global__ kernels on GPUs of compute capability 8.0 and later
// (bf16 steps always; TF32 steps when MC_ATTENTION_TF32=mma asks, until the TF32 kernels have run on a GPU);
// tests/unit/flash_mma_test.cpp runs the same code on the CPU (one std::thread per CUDA thread, the warp's
// matrix instruction emulated from the fragment layouts of the PTX ISA, "Matrix Fragments for mma.m16n8k16"
// and "for mma.m16n8k8"), so tile walks, masks, statistics and fragment indexing are checked without a GPU.
//
// Why: flash_tiled.h multiplies in fp32 on the CUDA cores; in a bf16 step of the 12 x 768 model attention
// was 36 % of the GPU time (README, issue 40), and in a TF32 step half. Here every product of a 64 x 64 tile
// is a warp's matrix instruction: a block is 4 warps, each owning 16 rows of the tile.
//
// Fragment layouts (lane = 4 g + t; C is the same for both formats):
//   C (16 x 8, fp32):  c[0], c[1] = row g, columns 2t, 2t+1; c[2], c[3] = row g+8.
//   bf16, k = 16: A (16 x 16) a[0] = row g, columns 2t, 2t+1; a[1] = row g+8, same; a[2], a[3] = columns +8
//                 (two bf16 per register, the lower column in the low half); B (16 x 8) b[0] = rows 2t,
//                 2t+1 of column g; b[1] = rows +8.
//   TF32, k = 8:  A (16 x 8) a[0] = (g, t), a[1] = (g+8, t), a[2] = (g, t+4), a[3] = (g+8, t+4);
//                 B (8 x 8) b[0] = (t, g), b[1] = (t+4, g).
// A warp's probabilities P (and dS) are C tiles; as the next product's A operand they stay in registers:
// in bf16 two C tiles side by side are the A fragment, rounded; in TF32 the quad's lanes swap their values
// (four shuffles from each of two lanes).
//
// Contract of a Ctx: tid() 0..127, block_x(), block_y(), sync() (all 128 threads), shfl_xor(v, o) (o 1 or 2:
// within a lane's quad), shfl(v, lane) (from a lane of the caller's warp), smem_raw() (16-byte aligned,
// *_smem_bytes<HS, F>() bytes), mma_bf16 and mma_tf32 (c += A B, one warp's instruction), and copies into
// shared memory that may complete later (cp.async): cp16(dst, src, valid) (16 bytes, zeros where !valid),
// commit() (closes a group of copies) and wait<N>() (all but the last N groups done; sync() then shows them
// to every thread). Each loop step copies the next step's tiles while it multiplies its own
// (FlashAttention-2's pipelining, Dao 2023, Sec. 3.3). Every thread of a block makes the same calls in the
// same order. Every output element is written once by one thread after a fixed sequence: runs repeat bit for
// bit. Shapes and block indices as flash_tiled.h; dS and P are rounded to the format for their products (as
// FlashAttention-2 does).
//
// Inputs: Q, K, V and dO come already rounded to the format, each twice: as laid out in fp32 (qkv (B, T, 3D),
// dout (B, T, D)) and transposed per sequence, each column a row of Tp elements (T rounded up to the tile,
// zeros past T): qkv_t (B, 3D, Tp), dout_t (B, D, Tp). One pass over each tensor makes both
// (train_kernels.cu; to_layouts() below on the CPU), so every tile is staged with 16-byte copies, and
// transposed tiles (the B operands that run along keys or queries) need no scattered stores: in the first
// version, staging fp32 and transposing in shared memory held the bf16 kernels to 46 TFLOP/s on an H200.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#include <cuda_bf16.h>
#define MC_FM __device__ __forceinline__
#define MC_FM_UNROLL _Pragma("unroll")
#else
#define MC_FM inline
#define MC_FM_UNROLL
#endif

namespace mc::device::flash_mma {

constexpr int kTile = 64;      // query rows and key rows per tile
constexpr int kThreads = 128;  // 4 warps of 32; warp w owns tile rows 16 w .. 16 w + 15

// ---- rounding (to nearest, ties to even, as device::round_to) ----
MC_FM uint32_t float_bits(float x) {
#ifdef __CUDACC__
  return __float_as_uint(x);
#else
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
#endif
}
MC_FM uint16_t bf16_bits(float x) {
#ifdef __CUDACC__
  return __bfloat16_as_ushort(__float2bfloat16_rn(x));
#else
  uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // NaN stays a quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
#endif
}
// fp32 bits with the 13 mantissa bits TF32 drops rounded off (the instruction reads the top 19 bits).
MC_FM uint32_t tf32_bits(float x) {
  uint32_t u = float_bits(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return u;  // NaN and infinity pass through
  u += 0xfffu + ((u >> 13) & 1u);
  return u & ~0x1fffu;
}
MC_FM uint32_t pack(float lo, float hi) { return uint32_t(bf16_bits(lo)) | (uint32_t(bf16_bits(hi)) << 16); }
MC_FM uint32_t ld32(const void* p) {
#ifdef __CUDACC__
  return *reinterpret_cast<const uint32_t*>(p);
#else
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
#endif
}

// ---- the two operand formats ----
struct Bf16 {
  using E = uint16_t;              // element in memory
  static constexpr int kK = 16;    // the instruction's k
  static constexpr int kPad = 8;   // elements a shared tile's rows are padded by
  static constexpr int kCopy = 8;  // elements per 16-byte copy
  MC_FM static E bits(float x) { return bf16_bits(x); }
  // A: rows m0..m0+15, columns k0..k0+15 of a row-major tile with row stride ld.
  MC_FM static void frag_a(uint32_t (&a)[4], const E* t, int ld, int m0, int k0, int lane) {
    const int g = lane >> 2, c = (lane & 3) * 2;
    a[0] = ld32(t + (m0 + g) * ld + k0 + c);
    a[1] = ld32(t + (m0 + g + 8) * ld + k0 + c);
    a[2] = ld32(t + (m0 + g) * ld + k0 + c + 8);
    a[3] = ld32(t + (m0 + g + 8) * ld + k0 + c + 8);
  }
  // B (16 x 8) with B(k, n) = t[(n0 + n) * ld + k0 + k]: the tile holds B's transpose row-major.
  MC_FM static void frag_b(uint32_t (&b)[2], const E* t, int ld, int n0, int k0, int lane) {
    const int g = lane >> 2, c = (lane & 3) * 2;
    b[0] = ld32(t + (n0 + g) * ld + k0 + c);
    b[1] = ld32(t + (n0 + g) * ld + k0 + c + 8);
  }
  // The A fragment of columns kc*16.. of a warp's (16 x 64) result held as eight C tiles.
  template <class Ctx>
  MC_FM static void c_to_a(Ctx&, uint32_t (&a)[4], const float (&c)[8][4], int kc, int) {
    a[0] = pack(c[2 * kc][0], c[2 * kc][1]);
    a[1] = pack(c[2 * kc][2], c[2 * kc][3]);
    a[2] = pack(c[2 * kc + 1][0], c[2 * kc + 1][1]);
    a[3] = pack(c[2 * kc + 1][2], c[2 * kc + 1][3]);
  }
  template <class Ctx>
  MC_FM static void mma(Ctx& cx, float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    cx.mma_bf16(c, a, b);
  }
};
struct Tf32 {
  using E = uint32_t;  // fp32 bits, rounded to TF32
  static constexpr int kK = 8;
  static constexpr int kPad = 4;
  static constexpr int kCopy = 4;
  MC_FM static E bits(float x) { return tf32_bits(x); }
  MC_FM static void frag_a(uint32_t (&a)[4], const E* t, int ld, int m0, int k0, int lane) {
    const int g = lane >> 2, c = lane & 3;
    a[0] = t[(m0 + g) * ld + k0 + c];
    a[1] = t[(m0 + g + 8) * ld + k0 + c];
    a[2] = t[(m0 + g) * ld + k0 + c + 4];
    a[3] = t[(m0 + g + 8) * ld + k0 + c + 4];
  }
  MC_FM static void frag_b(uint32_t (&b)[2], const E* t, int ld, int n0, int k0, int lane) {
    const int g = lane >> 2, c = lane & 3;
    b[0] = t[(n0 + g) * ld + k0 + c];
    b[1] = t[(n0 + g) * ld + k0 + c + 4];
  }
  // A's (g, t) is C tile kc's (g, t): column t lives in lane (g, t / 2) as its element t % 2, column t + 4 in
  // lane (g, 2 + t / 2). Every lane sends both of its columns; the receiver keeps the one of its parity.
  template <class Ctx>
  MC_FM static void c_to_a(Ctx& cx, uint32_t (&a)[4], const float (&c)[8][4], int kc, int lane) {
    const int first = (lane & ~3) | ((lane & 3) >> 1), second = first + 2;
    const bool odd = lane & 1;
    float v[8];
    v[0] = cx.shfl(c[kc][0], first), v[1] = cx.shfl(c[kc][1], first);
    v[2] = cx.shfl(c[kc][2], first), v[3] = cx.shfl(c[kc][3], first);
    v[4] = cx.shfl(c[kc][0], second), v[5] = cx.shfl(c[kc][1], second);
    v[6] = cx.shfl(c[kc][2], second), v[7] = cx.shfl(c[kc][3], second);
    a[0] = tf32_bits(odd ? v[1] : v[0]);
    a[1] = tf32_bits(odd ? v[3] : v[2]);
    a[2] = tf32_bits(odd ? v[5] : v[4]);
    a[3] = tf32_bits(odd ? v[7] : v[6]);
  }
  template <class Ctx>
  MC_FM static void mma(Ctx& cx, float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    cx.mma_tf32(c, a, b);
  }
};

// Row strides (elements): a (64 x HS) tile's, and a transposed (HS x 64) tile's. For HS 64 the padding puts
// lane (g, t)'s fragment reads in bank 4 g + t: no conflict.
template <int HS, class F>
constexpr int kLd = HS + F::kPad;
template <class F>
constexpr int kLdT = kTile + F::kPad;
template <int HS, class F>
constexpr int kTileElems = kTile* kLd<HS, F>;  // a (64 x HS) tile; an (HS x 64) one takes HS * kLdT<F>

// Shared memory: the tiles a loop step reads, twice (the next step's are copied in while this one's are
// used), and the tile of rows the block owns.
template <int HS, class F>
constexpr int forward_smem_bytes() {
  return int(sizeof(typename F::E)) * (kTileElems<HS, F> + 2 * (kTileElems<HS, F> + HS * kLdT<F>));  // Q; K, V^T
}
template <int HS, class F>
constexpr int backward_kv_smem_bytes() {
  // Q, dO, Q^T, dO^T twice (K and V staged in the second)
  return int(sizeof(typename F::E)) * 2 * (2 * kTileElems<HS, F> + 2 * HS * kLdT<F>);
}
template <int HS, class F>
constexpr int backward_q_smem_bytes() {
  // K, V, K^T twice (Q and dO staged in the second)
  return int(sizeof(typename F::E)) * 2 * (2 * kTileElems<HS, F> + HS * kLdT<F>);
}

// ---- inputs and staging ----
template <class F>
struct Inputs {
  using E = typename F::E;
  const E* qkv = nullptr;     // (B, T, 3D)
  const E* qkv_t = nullptr;   // (B, 3D, Tp)
  const E* dout = nullptr;    // (B, T, D) (backward only)
  const E* dout_t = nullptr;  // (B, D, Tp)
  int T = 0, Tp = 0, Hl = 0;
};
constexpr int padded(int T) { return (T + kTile - 1) / kTile * kTile; }

#ifndef __CUDACC__
// The CPU's version of the layout pass: x (B, T, C) fp32 rounded to the format as it is (rows) and
// transposed (cols).
template <class F>
void to_layouts(typename F::E* rows, typename F::E* cols, const float* x, int B, int T, int C) {
  const int Tp = padded(T);
  for (int b = 0; b < B; ++b)
    for (int c = 0; c < C; ++c)
      for (int t = 0; t < Tp; ++t) {
        const typename F::E v = t < T ? F::bits(x[(int64_t(b) * T + t) * C + c]) : typename F::E(0);
        if (t < T) rows[(int64_t(b) * T + t) * C + c] = v;
        cols[(int64_t(b) * C + c) * Tp + t] = v;
      }
}
#endif

// Rows r0.. of a (T, stride) matrix, HS columns, into dst[r * kLd + d]; zeros past T. The copies are the
// context's cp16 (asynchronous on the GPU: visible after wait<N>() and sync()).
template <int HS, class F, class Ctx>
MC_FM void stage_rows(Ctx& cx, typename F::E* dst, const typename F::E* src, int64_t stride, int r0, int T) {
  constexpr int chunks = HS / F::kCopy;  // 16-byte pieces per row
  for (int e = cx.tid(); e < kTile * chunks; e += kThreads) {
    const int r = e / chunks, d = (e % chunks) * F::kCopy, i = r0 + r;
    cx.cp16(dst + r * kLd<HS, F> + d, src + int64_t(i < T ? i : 0) * stride + d, i < T);
  }
}
// Columns r0..r0+63 of HS rows of a transposed matrix (row stride Tp, zero-padded) into dst[d * kLdT + r].
template <int HS, class F, class Ctx>
MC_FM void stage_cols(Ctx& cx, typename F::E* dst, const typename F::E* src, int Tp, int r0) {
  constexpr int chunks = kTile / F::kCopy;
  for (int e = cx.tid(); e < HS * chunks; e += kThreads) {
    const int d = e / chunks, r = (e % chunks) * F::kCopy;
    cx.cp16(dst + d * kLdT<F> + r, src + int64_t(d) * Tp + r0 + r, true);
  }
}

// ---- products of a warp's rows with a tile ----
// acc[nt] (8 C tiles: 16 x 64) = A (16 x HS, HS / kK fragments) times the transpose of a row-major (64 x HS)
// tile.
template <int HS, class F, class Ctx>
MC_FM void rows_dot_tile(Ctx& cx, float (&acc)[8][4], const uint32_t (&a)[HS / F::kK][4], const typename F::E* tile,
                         int lane) {
  MC_FM_UNROLL
  for (int nt = 0; nt < 8; ++nt) {
    acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
    MC_FM_UNROLL
    for (int kc = 0; kc < HS / F::kK; ++kc) {
      uint32_t b[2];
      F::frag_b(b, tile, kLd<HS, F>, nt * 8, kc * F::kK, lane);
      F::mma(cx, acc[nt], a[kc], b);
    }
  }
}
// out[n] (HS / 8 C tiles: 16 x HS) += P (16 x 64, C tiles rounded to the format) times a (64 x HS) matrix
// held transposed (HS x kLdT).
template <int HS, class F, class Ctx>
MC_FM void tile_times_t(Ctx& cx, float (&out)[HS / 8][4], const float (&p)[8][4], const typename F::E* tt, int lane) {
  MC_FM_UNROLL
  for (int kc = 0; kc < kTile / F::kK; ++kc) {
    uint32_t a[4];
    F::c_to_a(cx, a, p, kc, lane);
    MC_FM_UNROLL
    for (int n = 0; n < HS / 8; ++n) {
      uint32_t b[2];
      F::frag_b(b, tt, kLdT<F>, n * 8, kc * F::kK, lane);
      F::mma(cx, out[n], a, b);
    }
  }
}
template <class Ctx>
MC_FM float quad_max(Ctx& cx, float v) {
  v = fmaxf(v, cx.shfl_xor(v, 1));
  return fmaxf(v, cx.shfl_xor(v, 2));
}
template <class Ctx>
MC_FM float quad_sum(Ctx& cx, float v) {
  v += cx.shfl_xor(v, 1);
  return v + cx.shfl_xor(v, 2);
}

// ---- forward: block (query tile, b*Hl+h); key tiles 0..the query tile (causal) --------------------------
template <int HS, class F, class Ctx>
MC_FM void forward_block(Ctx& cx, float* out, float* L, const Inputs<F>& in, float scale) {
  using E = typename F::E;
  constexpr int KC = HS / F::kK, NO = HS / 8;
  E* Qs = static_cast<E*>(cx.smem_raw());
  // K (row-major) then V^T of step kt, in set kt & 1 (computed, not indexed: an array would be local memory).
  auto Kb = [&](int kt) { return Qs + kTileElems<HS, F> + (kt & 1) * (kTileElems<HS, F> + HS * kLdT<F>); };
  auto Vb = [&](int kt) { return Kb(kt) + kTileElems<HS, F>; };
  const int tid = cx.tid(), lane = tid % 32, m0 = (tid / 32) * 16, g = lane >> 2, c2 = (lane & 3) * 2;
  const int T = in.T, Hl = in.Hl, qt = cx.block_x(), bh = cx.block_y(), b = bh / Hl, h = bh % Hl, D = Hl * HS;
  const int i0 = qt * kTile, ri[2] = {i0 + m0 + g, i0 + m0 + g + 8};  // this lane's two query rows
  const int64_t row = 3 * int64_t(D);
  const E* base = in.qkv + int64_t(b) * T * row + h * HS;
  const E* vt = in.qkv_t + (int64_t(b) * row + 2 * D + h * HS) * in.Tp;
  auto stage_kv = [&](int kt) {
    stage_rows<HS, F>(cx, Kb(kt), base + D, row, kt * kTile, T);
    stage_cols<HS, F>(cx, Vb(kt), vt, in.Tp, kt * kTile);
    cx.commit();
  };
  stage_rows<HS, F>(cx, Qs, base, row, i0, T);
  stage_kv(0);  // one group: Q and the first K, V
  uint32_t qa[KC][4];
  float o[NO][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  MC_FM_UNROLL
  for (int n = 0; n < NO; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  for (int kt = 0; kt <= qt; ++kt) {
    const int j0 = kt * kTile;
    if (kt < qt) {
      stage_kv(kt + 1);  // into the buffers the last step read (the sync ending it has passed)
      cx.template wait<1>();
    } else {
      cx.template wait<0>();
    }
    cx.sync();
    if (kt == 0) {
      MC_FM_UNROLL
      for (int kc = 0; kc < KC; ++kc) F::frag_a(qa[kc], Qs, kLd<HS, F>, m0, kc * F::kK, lane);
    }
    float s[8][4];
    rows_dot_tile<HS, F>(cx, s, qa, Kb(kt), lane);
    float mx[2] = {-INFINITY, -INFINITY};
    MC_FM_UNROLL
    for (int nt = 0; nt < 8; ++nt) MC_FM_UNROLL
    for (int e = 0; e < 4; ++e) {
      const int j = j0 + nt * 8 + c2 + (e & 1), r = e >> 1;
      const float v = j > ri[r] ? -INFINITY : s[nt][e] * scale;  // causal: key j only for queries i >= j
      s[nt][e] = v;
      mx[r] = fmaxf(mx[r], v);
    }
    float f[2];
    MC_FM_UNROLL
    for (int r = 0; r < 2; ++r) {
      // The tile's first key (j0 <= i0 <= i) is never masked, so the new maximum is finite.
      const float mn = fmaxf(m[r], quad_max(cx, mx[r]));
      f[r] = expf(m[r] - mn);
      m[r] = mn, l[r] *= f[r];
    }
    MC_FM_UNROLL
    for (int nt = 0; nt < 8; ++nt) MC_FM_UNROLL
    for (int e = 0; e < 4; ++e) {
      const float p = expf(s[nt][e] - m[e >> 1]);
      s[nt][e] = p;
      l[e >> 1] += p;  // this lane's part of the row sum; the quad's parts are added at the end
    }
    MC_FM_UNROLL
    for (int n = 0; n < NO; ++n) MC_FM_UNROLL
    for (int e = 0; e < 4; ++e) o[n][e] *= f[e >> 1];
    tile_times_t<HS, F>(cx, o, s, Vb(kt), lane);  // O += P V over the tile's keys
    cx.sync();  // every warp has read this step's K and V before the next step copies over them
  }
  MC_FM_UNROLL
  for (int r = 0; r < 2; ++r) l[r] = quad_sum(cx, l[r]);
  MC_FM_UNROLL
  for (int r = 0; r < 2; ++r) {
    const int i = ri[r];
    if (i >= T) continue;
    float* op = out + (int64_t(b) * T + i) * D + h * HS + c2;
    const float inv = 1.0f / l[r];
    MC_FM_UNROLL
    for (int n = 0; n < NO; ++n) op[n * 8] = o[n][2 * r] * inv, op[n * 8 + 1] = o[n][2 * r + 1] * inv;
    if ((lane & 3) == 0) L[int64_t(bh) * T + i] = m[r] + logf(l[r]);
  }
}

// ---- backward, dK and dV: block (key tile, b*Hl+h); query tiles from the key tile's own to the last -----
// The warp computes S^T and dP^T (its 16 keys x the tile's 64 queries) so that P^T and dS^T are already
// the A fragments of dV += P^T dO and dK += dS^T Q.
template <int HS, class F, class Ctx>
MC_FM void backward_kv_block(Ctx& cx, float* dqkv, const Inputs<F>& in, const float* L, const float* Drow,
                             float scale) {
  using E = typename F::E;
  constexpr int KC = HS / F::kK, NO = HS / 8;
  constexpr int set = 2 * kTileElems<HS, F> + 2 * HS * kLdT<F>;  // one step's Q, dO, Q^T, dO^T
  E* const smem = static_cast<E*>(cx.smem_raw());
  auto Qb = [&](int step) { return smem + (step & 1) * set; };
  const int tid = cx.tid(), lane = tid % 32, m0 = (tid / 32) * 16, g = lane >> 2, c2 = (lane & 3) * 2;
  const int T = in.T, Hl = in.Hl, kt = cx.block_x(), bh = cx.block_y(), b = bh / Hl, h = bh % Hl, D = Hl * HS;
  const int j0 = kt * kTile, tiles = (T + kTile - 1) / kTile, rj[2] = {j0 + m0 + g, j0 + m0 + g + 8};
  const int64_t row = 3 * int64_t(D);
  const E* base = in.qkv + int64_t(b) * T * row + h * HS;
  const E* dbase = in.dout + int64_t(b) * T * D + h * HS;
  const E* qt_cols = in.qkv_t + (int64_t(b) * row + h * HS) * in.Tp;
  const E* dot_cols = in.dout_t + (int64_t(b) * D + h * HS) * in.Tp;
  const float* Lh = L + int64_t(bh) * T;
  const float* Dh = Drow + int64_t(bh) * T;
  // Step k's tiles in set k & 1: Q, dO (row-major), then Q^T, dO^T.
  auto stage_q = [&](int step) {
    E* q = Qb(step);
    const int i0 = (kt + step) * kTile;
    stage_rows<HS, F>(cx, q, base, row, i0, T);
    stage_rows<HS, F>(cx, q + kTileElems<HS, F>, dbase, D, i0, T);
    stage_cols<HS, F>(cx, q + 2 * kTileElems<HS, F>, qt_cols, in.Tp, i0);
    stage_cols<HS, F>(cx, q + 2 * kTileElems<HS, F> + HS * kLdT<F>, dot_cols, in.Tp, i0);
    cx.commit();
  };
  stage_rows<HS, F>(cx, Qb(1), base + D, row, j0, T);                          // K, in the second set
  stage_rows<HS, F>(cx, Qb(1) + kTileElems<HS, F>, base + 2 * D, row, j0, T);  // V
  cx.commit();
  stage_q(0);
  cx.template wait<1>();
  cx.sync();
  uint32_t ka[KC][4], va[KC][4];
  MC_FM_UNROLL
  for (int kc = 0; kc < KC; ++kc)
    F::frag_a(ka[kc], Qb(1), kLd<HS, F>, m0, kc * F::kK, lane),
        F::frag_a(va[kc], Qb(1) + kTileElems<HS, F>, kLd<HS, F>, m0, kc * F::kK, lane);
  cx.sync();  // K and V are in registers: the second set is free
  float dk[NO][4], dv[NO][4];
  MC_FM_UNROLL
  for (int n = 0; n < NO; ++n) MC_FM_UNROLL
  for (int e = 0; e < 4; ++e) dk[n][e] = dv[n][e] = 0.0f;
  for (int step = 0; kt + step < tiles; ++step) {
    const int i0 = (kt + step) * kTile;
    if (kt + step + 1 < tiles) {
      stage_q(step + 1);
      cx.template wait<1>();
    } else {
      cx.template wait<0>();
    }
    cx.sync();
    const E* Qs = Qb(step);
    const E* dOs = Qs + kTileElems<HS, F>;
    const E* Qt = Qs + 2 * kTileElems<HS, F>;
    const E* dOt = Qt + HS * kLdT<F>;
    float pt[8][4], dst[8][4];  // S^T then P^T; dP^T then dS^T
    rows_dot_tile<HS, F>(cx, pt, ka, Qs, lane);
    rows_dot_tile<HS, F>(cx, dst, va, dOs, lane);
    MC_FM_UNROLL
    for (int nt = 0; nt < 8; ++nt) MC_FM_UNROLL
    for (int e = 0; e < 4; ++e) {
      const int i = i0 + nt * 8 + c2 + (e & 1), j = rj[e >> 1];
      float p = 0.0f, ds = 0.0f;
      if (i < T && j <= i) {
        p = expf(pt[nt][e] * scale - Lh[i]);
        ds = p * (dst[nt][e] - Dh[i]) * scale;
      }
      pt[nt][e] = p, dst[nt][e] = ds;
    }
    tile_times_t<HS, F>(cx, dv, pt, dOt, lane);  // dV += P^T dO
    tile_times_t<HS, F>(cx, dk, dst, Qt, lane);  // dK += dS^T Q
    cx.sync();                                   // this step's set is read before the next step copies over it
  }
  MC_FM_UNROLL
  for (int r = 0; r < 2; ++r) {
    const int j = rj[r];
    if (j >= T) continue;
    float* kr = dqkv + (int64_t(b) * T + j) * row + D + h * HS + c2;
    MC_FM_UNROLL
    for (int n = 0; n < NO; ++n) {
      kr[n * 8] = dk[n][2 * r], kr[n * 8 + 1] = dk[n][2 * r + 1];
      kr[D + n * 8] = dv[n][2 * r], kr[D + n * 8 + 1] = dv[n][2 * r + 1];
    }
  }
}

// ---- backward, dQ: block (query tile, b*Hl+h); key tiles 0..the query tile ------------------------------
template <int HS, class F, class Ctx>
MC_FM void backward_q_block(Ctx& cx, float* dqkv, const Inputs<F>& in, const float* L, const float* Drow, float scale) {
  using E = typename F::E;
  constexpr int KC = HS / F::kK, NO = HS / 8;
  constexpr int set = 2 * kTileElems<HS, F> + HS * kLdT<F>;  // one step's K, V, K^T
  E* const smem = static_cast<E*>(cx.smem_raw());
  auto Kb = [&](int kt) { return smem + (kt & 1) * set; };
  const int tid = cx.tid(), lane = tid % 32, m0 = (tid / 32) * 16, g = lane >> 2, c2 = (lane & 3) * 2;
  const int T = in.T, Hl = in.Hl, qt = cx.block_x(), bh = cx.block_y(), b = bh / Hl, h = bh % Hl, D = Hl * HS;
  const int i0 = qt * kTile, ri[2] = {i0 + m0 + g, i0 + m0 + g + 8};
  const int64_t row = 3 * int64_t(D);
  const E* base = in.qkv + int64_t(b) * T * row + h * HS;
  const E* kt_cols = in.qkv_t + (int64_t(b) * row + D + h * HS) * in.Tp;
  auto stage_k = [&](int kt) {
    E* k = Kb(kt);
    stage_rows<HS, F>(cx, k, base + D, row, kt * kTile, T);
    stage_rows<HS, F>(cx, k + kTileElems<HS, F>, base + 2 * D, row, kt * kTile, T);
    stage_cols<HS, F>(cx, k + 2 * kTileElems<HS, F>, kt_cols, in.Tp, kt * kTile);
    cx.commit();
  };
  stage_rows<HS, F>(cx, Kb(1), base, row, i0, T);  // Q, in the second set
  stage_rows<HS, F>(cx, Kb(1) + kTileElems<HS, F>, in.dout + int64_t(b) * T * D + h * HS, D, i0, T);  // dO
  cx.commit();
  stage_k(0);
  cx.template wait<1>();
  cx.sync();
  uint32_t qa[KC][4], oa[KC][4];
  MC_FM_UNROLL
  for (int kc = 0; kc < KC; ++kc)
    F::frag_a(qa[kc], Kb(1), kLd<HS, F>, m0, kc * F::kK, lane),
        F::frag_a(oa[kc], Kb(1) + kTileElems<HS, F>, kLd<HS, F>, m0, kc * F::kK, lane);
  cx.sync();  // Q and dO are in registers: the second set is free
  float Lr[2], Dr[2];
  MC_FM_UNROLL
  for (int r = 0; r < 2; ++r) {
    const bool in_seq = ri[r] < T;
    Lr[r] = in_seq ? L[int64_t(bh) * T + ri[r]] : 0.0f;
    Dr[r] = in_seq ? Drow[int64_t(bh) * T + ri[r]] : 0.0f;
  }
  float dq[NO][4];
  MC_FM_UNROLL
  for (int n = 0; n < NO; ++n) dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.0f;
  for (int kt = 0; kt <= qt; ++kt) {
    const int j0 = kt * kTile;
    if (kt < qt) {
      stage_k(kt + 1);
      cx.template wait<1>();
    } else {
      cx.template wait<0>();
    }
    cx.sync();
    const E* Ks = Kb(kt);
    float s[8][4], ds[8][4];
    rows_dot_tile<HS, F>(cx, s, qa, Ks, lane);
    rows_dot_tile<HS, F>(cx, ds, oa, Ks + kTileElems<HS, F>, lane);  // dP = dO V^T
    MC_FM_UNROLL
    for (int nt = 0; nt < 8; ++nt) MC_FM_UNROLL
    for (int e = 0; e < 4; ++e) {
      const int j = j0 + nt * 8 + c2 + (e & 1), r = e >> 1, i = ri[r];
      float d = 0.0f;
      if (i < T && j <= i) d = expf(s[nt][e] * scale - Lr[r]) * (ds[nt][e] - Dr[r]) * scale;
      ds[nt][e] = d;
    }
    tile_times_t<HS, F>(cx, dq, ds, Ks + 2 * kTileElems<HS, F>, lane);  // dQ += dS K
    cx.sync();  // this step's set is read before the next step copies over it
  }
  MC_FM_UNROLL
  for (int r = 0; r < 2; ++r) {
    const int i = ri[r];
    if (i >= T) continue;
    float* qr = dqkv + (int64_t(b) * T + i) * row + h * HS + c2;
    MC_FM_UNROLL
    for (int n = 0; n < NO; ++n) qr[n * 8] = dq[n][2 * r], qr[n * 8 + 1] = dq[n][2 * r + 1];
  }
}

}  // namespace mc::device::flash_mma
