// flash_mma.h - fused causal attention on tensor cores (FlashAttention-2; Dao 2023, Alg. 1 forward, Alg. 2
// backward) in bf16 with fp32 accumulation and fp32 softmax statistics: the block bodies, written once for
// two executors, as flash_tiled.h is. engine/cuda/train_kernels.cu runs them as __global__ kernels on GPUs
// of compute capability 8.0 and later (the bf16 mma.sync instruction); tests/unit/flash_mma_test.cpp runs the
// same code on the CPU (one std::thread per CUDA thread, the warp's matrix instruction emulated from the
// fragment layouts of the PTX ISA, "Matrix Fragments for mma.m16n8k16"), so tile walks, masks, statistics
// and fragment indexing are checked without a GPU.
//
// Why: flash_tiled.h multiplies in fp32 on the CUDA cores; in a bf16 step of the 12 x 768 model attention
// was 36 % of the GPU time (README, issue 40). Here every product of a 64 x 64 tile is a warp's
// m16n8k16 instruction: a block is 4 warps, each owning 16 rows of the tile.
//
// Fragment layout (lane = 4 g + t; PTX ISA 8.x, mma.m16n8k16 with .bf16 operands):
//   A (16 x 16, row-major): a[0] = row g, columns 2t, 2t+1; a[1] = row g+8, same; a[2], a[3] = columns +8.
//   B (16 x 8):             b[0] = rows 2t, 2t+1 of column g; b[1] = rows +8.
//   C (16 x 8, fp32):       c[0], c[1] = row g, columns 2t, 2t+1; c[2], c[3] = row g+8.
// Two C tiles side by side are, rounded to bf16, the A fragment of the next product (c_to_a): the
// probabilities never leave registers. Each 32-bit register holds two bf16, the lower column in the low half.
//
// Contract of a Ctx: tid() 0..127, block_x(), block_y(), sync() (all 128 threads), shfl_xor(v, o) (o 1 or 2:
// within a lane's quad), smem16() (bf16 bits, 16-byte aligned, *_smem_bytes<HS>() bytes), mma(c, a, b)
// (c += A B, one warp's m16n8k16), and copies into shared memory that may complete later (cp.async):
// cp16(dst, src, valid) (16 bytes, zeros where !valid), commit() (closes a group of copies) and wait<N>()
// (all but the last N groups done; sync() then shows them to every thread). Each loop step copies the next
// step's tiles while it multiplies its own (FlashAttention-2's pipelining, Dao 2023, Sec. 3.3). Every thread of a block
// makes the same calls in the same order. Every output element is written once by one thread after a fixed sequence:
// runs repeat bit for bit. Shapes and block indices as flash_tiled.h; dS and P are rounded to bf16 for their products
// (as FlashAttention-2 does).
//
// Inputs: Q, K, V and dO come already rounded to bf16, each twice: as laid out in fp32 (qkv (B, T, 3D),
// dout (B, T, D)) and transposed per sequence, each column a row of Tp halves (T rounded up to the tile,
// zeros past T): qkv_t (B, 3D, Tp), dout_t (B, D, Tp). One pass over each tensor makes both
// (train_kernels.cu; to_layouts() below on the CPU), so every tile is staged with 16-byte copies, and
// transposed tiles (the B operands that run along keys or queries) need no scattered 2-byte stores: in the
// first version, staging fp32 and transposing in shared memory held the kernels to 46 TFLOP/s on an H200.
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

constexpr int kTile = 64;        // query rows and key rows per tile
constexpr int kThreads = 128;    // 4 warps of 32; warp w owns tile rows 16 w .. 16 w + 15
constexpr int kLdT = kTile + 8;  // row stride (halves) of a transposed (HS x 64) tile
// Row stride (halves) of a (64 x HS) tile: for HS 64 lane (g, t) reads bank 4 g + t, no conflict.
template <int HS>
constexpr int kLd = HS + 8;

// Shared memory: the tiles a loop step reads, twice (the next step's are copied in while this one's are
// used), and the tile of rows the block owns.
template <int HS>
constexpr int kTileHalves = kTile* kLd<HS>;  // a (64 x HS) tile; an (HS x 64) one takes HS * kLdT
template <int HS>
constexpr int forward_smem_bytes() {
  return 2 * (kTileHalves<HS> + 2 * (kTileHalves<HS> + HS * kLdT));  // Q; K, V^T twice
}
template <int HS>
constexpr int backward_kv_smem_bytes() {
  return 2 * 2 * (2 * kTileHalves<HS> + 2 * HS * kLdT);  // Q, dO, Q^T, dO^T twice (K and V staged in the second)
}
template <int HS>
constexpr int backward_q_smem_bytes() {
  return 2 * 2 * (2 * kTileHalves<HS> + HS * kLdT);  // K, V, K^T twice (Q and dO staged in the second)
}

// ---- bf16 bits (round to nearest even, as device::round_to) ----
MC_FM uint16_t bf16_bits(float x) {
#ifdef __CUDACC__
  return __bfloat16_as_ushort(__float2bfloat16_rn(x));
#else
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // NaN stays a quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
#endif
}
MC_FM float bf16_float(uint32_t h) {
  const uint32_t u = (h & 0xffffu) << 16;
#ifdef __CUDACC__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}
MC_FM uint32_t pack(float lo, float hi) { return uint32_t(bf16_bits(lo)) | (uint32_t(bf16_bits(hi)) << 16); }
MC_FM uint32_t ld32(const uint16_t* p) {
#ifdef __CUDACC__
  return *reinterpret_cast<const uint32_t*>(p);
#else
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
#endif
}
MC_FM void st32(uint16_t* p, uint32_t v) {
#ifdef __CUDACC__
  *reinterpret_cast<uint32_t*>(p) = v;
#else
  std::memcpy(p, &v, 4);
#endif
}

// ---- inputs and staging ----
struct Inputs {
  const uint16_t* qkv = nullptr;     // (B, T, 3D) bf16
  const uint16_t* qkv_t = nullptr;   // (B, 3D, Tp)
  const uint16_t* dout = nullptr;    // (B, T, D) (backward only)
  const uint16_t* dout_t = nullptr;  // (B, D, Tp)
  int T = 0, Tp = 0, Hl = 0;
};
constexpr int padded(int T) { return (T + kTile - 1) / kTile * kTile; }

#ifndef __CUDACC__
// The CPU's version of the layout pass: x (B, T, C) fp32 to bf16 as it is (rows) and transposed (cols).
inline void to_layouts(uint16_t* rows, uint16_t* cols, const float* x, int B, int T, int C) {
  const int Tp = padded(T);
  for (int b = 0; b < B; ++b)
    for (int c = 0; c < C; ++c)
      for (int t = 0; t < Tp; ++t) {
        const uint16_t v = t < T ? bf16_bits(x[(int64_t(b) * T + t) * C + c]) : uint16_t(0);
        if (t < T) rows[(int64_t(b) * T + t) * C + c] = v;
        cols[(int64_t(b) * C + c) * Tp + t] = v;
      }
}
#endif

// Rows r0.. of a (T, stride) bf16 matrix, HS columns, into dst[r * kLd + d]; zeros past T. The copies are
// the context's cp16 (asynchronous on the GPU: visible after wait<N>() and sync()).
template <int HS, class Ctx>
MC_FM void stage_rows(Ctx& cx, uint16_t* dst, const uint16_t* src, int64_t stride, int r0, int T) {
  constexpr int chunks = HS / 8;  // 16-byte pieces per row
  for (int e = cx.tid(); e < kTile * chunks; e += kThreads) {
    const int r = e / chunks, d = (e % chunks) * 8, i = r0 + r;
    cx.cp16(dst + r * kLd<HS> + d, src + int64_t(i < T ? i : 0) * stride + d, i < T);
  }
}
// Columns r0..r0+63 of HS rows of a transposed matrix (row stride Tp, zero-padded) into dst[d * kLdT + r].
template <int HS, class Ctx>
MC_FM void stage_cols(Ctx& cx, uint16_t* dst, const uint16_t* src, int Tp, int r0) {
  for (int e = cx.tid(); e < HS * (kTile / 8); e += kThreads) {
    const int d = e / (kTile / 8), r = (e % (kTile / 8)) * 8;
    cx.cp16(dst + d * kLdT + r, src + int64_t(d) * Tp + r0 + r, true);
  }
}

// ---- fragments ----
// A: rows m0..m0+15, columns k0..k0+15 of a row-major tile with row stride ld.
MC_FM void frag_a(uint32_t (&a)[4], const uint16_t* t, int ld, int m0, int k0, int lane) {
  const int g = lane >> 2, c = (lane & 3) * 2;
  a[0] = ld32(t + (m0 + g) * ld + k0 + c);
  a[1] = ld32(t + (m0 + g + 8) * ld + k0 + c);
  a[2] = ld32(t + (m0 + g) * ld + k0 + c + 8);
  a[3] = ld32(t + (m0 + g + 8) * ld + k0 + c + 8);
}
// B (16 x 8) with B(k, n) = t[(n0 + n) * ld + k0 + k]: the tile holds B's transpose row-major.
MC_FM void frag_b(uint32_t (&b)[2], const uint16_t* t, int ld, int n0, int k0, int lane) {
  const int g = lane >> 2, c = (lane & 3) * 2;
  b[0] = ld32(t + (n0 + g) * ld + k0 + c);
  b[1] = ld32(t + (n0 + g) * ld + k0 + c + 8);
}
// The A fragment of columns 16 kc .. 16 kc + 15 of a warp's (16 x 64) result held as eight C tiles.
MC_FM void c_to_a(uint32_t (&a)[4], const float (&c0)[4], const float (&c1)[4]) {
  a[0] = pack(c0[0], c0[1]);
  a[1] = pack(c0[2], c0[3]);
  a[2] = pack(c1[0], c1[1]);
  a[3] = pack(c1[2], c1[3]);
}

// acc[nt] (8 C tiles: 16 x 64) = A (16 x HS, KC fragments) times the transpose of a row-major (64 x HS) tile.
template <int HS, class Ctx>
MC_FM void rows_dot_tile(Ctx& cx, float (&acc)[8][4], const uint32_t (&a)[HS / 16][4], const uint16_t* tile, int lane) {
  MC_FM_UNROLL
  for (int nt = 0; nt < 8; ++nt) {
    acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
    MC_FM_UNROLL
    for (int kc = 0; kc < HS / 16; ++kc) {
      uint32_t b[2];
      frag_b(b, tile, kLd<HS>, nt * 8, kc * 16, lane);
      cx.mma(acc[nt], a[kc], b);
    }
  }
}
// out[n] (HS / 8 C tiles: 16 x HS) += P (16 x 64, C tiles rounded to bf16) times a (64 x HS) matrix held
// transposed (HS x kLdT).
template <int HS, class Ctx>
MC_FM void tile_times_t(Ctx& cx, float (&out)[HS / 8][4], const float (&p)[8][4], const uint16_t* tt, int lane) {
  MC_FM_UNROLL
  for (int kc = 0; kc < 4; ++kc) {
    uint32_t a[4];
    c_to_a(a, p[2 * kc], p[2 * kc + 1]);
    MC_FM_UNROLL
    for (int n = 0; n < HS / 8; ++n) {
      uint32_t b[2];
      frag_b(b, tt, kLdT, n * 8, kc * 16, lane);
      cx.mma(out[n], a, b);
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
template <int HS, class Ctx>
MC_FM void forward_block(Ctx& cx, float* out, float* L, const Inputs& in, float scale) {
  constexpr int KC = HS / 16, NO = HS / 8;
  uint16_t* Qs = cx.smem16();
  // K (row-major) then V^T of step kt, in set kt & 1 (computed, not indexed: an array would be local memory).
  auto Kb = [&](int kt) { return Qs + kTileHalves<HS> + (kt & 1) * (kTileHalves<HS> + HS * kLdT); };
  auto Vb = [&](int kt) { return Kb(kt) + kTileHalves<HS>; };
  const int tid = cx.tid(), lane = tid % 32, m0 = (tid / 32) * 16, g = lane >> 2, c2 = (lane & 3) * 2;
  const int T = in.T, Hl = in.Hl, qt = cx.block_x(), bh = cx.block_y(), b = bh / Hl, h = bh % Hl, D = Hl * HS;
  const int i0 = qt * kTile, ri[2] = {i0 + m0 + g, i0 + m0 + g + 8};  // this lane's two query rows
  const int64_t row = 3 * int64_t(D);
  const uint16_t* base = in.qkv + int64_t(b) * T * row + h * HS;
  const uint16_t* vt = in.qkv_t + (int64_t(b) * row + 2 * D + h * HS) * in.Tp;
  auto stage_kv = [&](int kt) {
    stage_rows<HS>(cx, Kb(kt), base + D, row, kt * kTile, T);
    stage_cols<HS>(cx, Vb(kt), vt, in.Tp, kt * kTile);
    cx.commit();
  };
  stage_rows<HS>(cx, Qs, base, row, i0, T);
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
      for (int kc = 0; kc < KC; ++kc) frag_a(qa[kc], Qs, kLd<HS>, m0, kc * 16, lane);
    }
    float s[8][4];
    rows_dot_tile<HS>(cx, s, qa, Kb(kt), lane);
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
    tile_times_t<HS>(cx, o, s, Vb(kt), lane);  // O += P V over the tile's keys
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
template <int HS, class Ctx>
MC_FM void backward_kv_block(Ctx& cx, float* dqkv, const Inputs& in, const float* L, const float* Drow, float scale) {
  constexpr int KC = HS / 16, NO = HS / 8;
  constexpr int set = 2 * kTileHalves<HS> + 2 * HS * kLdT;  // one step's Q, dO, Q^T, dO^T
  uint16_t* const smem = cx.smem16();
  auto Qb = [&](int step) { return smem + (step & 1) * set; };
  const int tid = cx.tid(), lane = tid % 32, m0 = (tid / 32) * 16, g = lane >> 2, c2 = (lane & 3) * 2;
  const int T = in.T, Hl = in.Hl, kt = cx.block_x(), bh = cx.block_y(), b = bh / Hl, h = bh % Hl, D = Hl * HS;
  const int j0 = kt * kTile, tiles = (T + kTile - 1) / kTile, rj[2] = {j0 + m0 + g, j0 + m0 + g + 8};
  const int64_t row = 3 * int64_t(D);
  const uint16_t* base = in.qkv + int64_t(b) * T * row + h * HS;
  const uint16_t* dbase = in.dout + int64_t(b) * T * D + h * HS;
  const uint16_t* qt_cols = in.qkv_t + (int64_t(b) * row + h * HS) * in.Tp;
  const uint16_t* dot_cols = in.dout_t + (int64_t(b) * D + h * HS) * in.Tp;
  const float* Lh = L + int64_t(bh) * T;
  const float* Dh = Drow + int64_t(bh) * T;
  // Step k's tiles in set k & 1: Q, dO (row-major), then Q^T, dO^T.
  auto stage_q = [&](int step) {
    uint16_t* q = Qb(step);
    const int i0 = (kt + step) * kTile;
    stage_rows<HS>(cx, q, base, row, i0, T);
    stage_rows<HS>(cx, q + kTileHalves<HS>, dbase, D, i0, T);
    stage_cols<HS>(cx, q + 2 * kTileHalves<HS>, qt_cols, in.Tp, i0);
    stage_cols<HS>(cx, q + 2 * kTileHalves<HS> + HS * kLdT, dot_cols, in.Tp, i0);
    cx.commit();
  };
  stage_rows<HS>(cx, Qb(1), base + D, row, j0, T);                        // K, in the second set
  stage_rows<HS>(cx, Qb(1) + kTileHalves<HS>, base + 2 * D, row, j0, T);  // V
  cx.commit();
  stage_q(0);
  cx.template wait<1>();
  cx.sync();
  uint32_t ka[KC][4], va[KC][4];
  MC_FM_UNROLL
  for (int kc = 0; kc < KC; ++kc)
    frag_a(ka[kc], Qb(1), kLd<HS>, m0, kc * 16, lane),
        frag_a(va[kc], Qb(1) + kTileHalves<HS>, kLd<HS>, m0, kc * 16, lane);
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
    const uint16_t* Qs = Qb(step);
    const uint16_t* dOs = Qs + kTileHalves<HS>;
    const uint16_t* Qt = Qs + 2 * kTileHalves<HS>;
    const uint16_t* dOt = Qt + HS * kLdT;
    float pt[8][4], dst[8][4];  // S^T then P^T; dP^T then dS^T
    rows_dot_tile<HS>(cx, pt, ka, Qs, lane);
    rows_dot_tile<HS>(cx, dst, va, dOs, lane);
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
    tile_times_t<HS>(cx, dv, pt, dOt, lane);  // dV += P^T dO
    tile_times_t<HS>(cx, dk, dst, Qt, lane);  // dK += dS^T Q
    cx.sync();                                // this step's set is read before the next step copies over it
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
template <int HS, class Ctx>
MC_FM void backward_q_block(Ctx& cx, float* dqkv, const Inputs& in, const float* L, const float* Drow, float scale) {
  constexpr int KC = HS / 16, NO = HS / 8;
  constexpr int set = 2 * kTileHalves<HS> + HS * kLdT;  // one step's K, V, K^T
  uint16_t* const smem = cx.smem16();
  auto Kb = [&](int kt) { return smem + (kt & 1) * set; };
  const int tid = cx.tid(), lane = tid % 32, m0 = (tid / 32) * 16, g = lane >> 2, c2 = (lane & 3) * 2;
  const int T = in.T, Hl = in.Hl, qt = cx.block_x(), bh = cx.block_y(), b = bh / Hl, h = bh % Hl, D = Hl * HS;
  const int i0 = qt * kTile, ri[2] = {i0 + m0 + g, i0 + m0 + g + 8};
  const int64_t row = 3 * int64_t(D);
  const uint16_t* base = in.qkv + int64_t(b) * T * row + h * HS;
  const uint16_t* kt_cols = in.qkv_t + (int64_t(b) * row + D + h * HS) * in.Tp;
  auto stage_k = [&](int kt) {
    uint16_t* k = Kb(kt);
    stage_rows<HS>(cx, k, base + D, row, kt * kTile, T);
    stage_rows<HS>(cx, k + kTileHalves<HS>, base + 2 * D, row, kt * kTile, T);
    stage_cols<HS>(cx, k + 2 * kTileHalves<HS>, kt_cols, in.Tp, kt * kTile);
    cx.commit();
  };
  stage_rows<HS>(cx, Kb(1), base, row, i0, T);                                                   // Q, in the second set
  stage_rows<HS>(cx, Kb(1) + kTileHalves<HS>, in.dout + int64_t(b) * T * D + h * HS, D, i0, T);  // dO
  cx.commit();
  stage_k(0);
  cx.template wait<1>();
  cx.sync();
  uint32_t qa[KC][4], oa[KC][4];
  MC_FM_UNROLL
  for (int kc = 0; kc < KC; ++kc)
    frag_a(qa[kc], Kb(1), kLd<HS>, m0, kc * 16, lane),
        frag_a(oa[kc], Kb(1) + kTileHalves<HS>, kLd<HS>, m0, kc * 16, lane);
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
    const uint16_t* Ks = Kb(kt);
    float s[8][4], ds[8][4];
    rows_dot_tile<HS>(cx, s, qa, Ks, lane);
    rows_dot_tile<HS>(cx, ds, oa, Ks + kTileHalves<HS>, lane);  // dP = dO V^T
    MC_FM_UNROLL
    for (int nt = 0; nt < 8; ++nt) MC_FM_UNROLL
    for (int e = 0; e < 4; ++e) {
      const int j = j0 + nt * 8 + c2 + (e & 1), r = e >> 1, i = ri[r];
      float d = 0.0f;
      if (i < T && j <= i) d = expf(s[nt][e] * scale - Lr[r]) * (ds[nt][e] - Dr[r]) * scale;
      ds[nt][e] = d;
    }
    tile_times_t<HS>(cx, dq, ds, Ks + 2 * kTileHalves<HS>, lane);  // dQ += dS K
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
