// flash_tiled.h - fused causal attention in 64 x 64 tiles (FlashAttention-2; Dao 2023, Alg. 1 for the
// forward, Alg. 2 for the backward), the bodies of the CUDA kernels' thread blocks, written once for two
// executors: engine/cuda/train_kernels.cu runs them as __global__ kernels, and
// tests/unit/flash_tiled_test.cpp runs the same code on the CPU with one std::thread per CUDA thread (a
// barrier for __syncthreads, a shared slot array for the warp shuffle), so the tiling, the masks and the
// thread indexing are checked against the reference attention on machines without a GPU.
//
// Why tiles: the first kernels (flash_attention.h; one thread per row, 32-thread blocks) read a shared
// value per multiply-add and ran at 5 TFLOP/s on an H100 (MC_CUDA_PROFILE, 12 x 768, T 1024): 80 % of a
// bf16 step. Here a block of 256 threads owns a 64-row tile, each thread a 4 x 4 piece of the 64 x 64
// score tile, and every operand loaded from shared memory (16 bytes at a time) feeds 4 to 16 multiply-adds.
//
// Contract of a Ctx: tid() 0..255, block_x(), block_y(), sync() (all 256 threads), shfl_xor(v, o) (the
// value of thread tid ^ o, o < 16: within a half-warp) and smem() (16-byte aligned, *_smem_floats<HS>).
// Thread (ty, tx) = (tid / 16, tid % 16): ty picks 4 rows of the tile, tx 4 columns of the score tile (or
// HS / 16 columns of the output); the 16 threads of a row group are one half-warp, so row maxima and sums
// are shuffles. Every output element is written by one thread after a fixed sequence of operations: runs
// repeat bit for bit (no atomics). Shapes as in flash_attention.h: qkv (B, T, 3D), out and dout (B, T, D),
// L and Drow (B, Hl, T); block (x, y) = (tile, b * Hl + h).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define MC_FA __device__ __forceinline__
#define MC_UNROLL _Pragma("unroll")
#else
#define MC_FA inline
#define MC_UNROLL
#endif

namespace mc::device::flash_tiled {

#ifdef __CUDACC__
using f4 = float4;
#else
struct alignas(16) f4 {
  float x, y, z, w;
};
#endif

constexpr int kTile = 64;      // query rows and key rows per tile
constexpr int kThreads = 256;  // 16 x 16 threads
// Row stride of the transposed K and V tiles: a multiple of 4 (16-byte loads) that spreads the transposing
// stores over eight banks instead of one.
constexpr int kPad = kTile + 4;

template <int HS>
constexpr int forward_smem_floats() {
  return kTile * HS + HS * kPad + kTile * HS + kTile * kTile;  // Q, K^T, V, P
}
template <int HS>
constexpr int backward_kv_smem_floats() {
  return 2 * HS * kPad + 2 * kTile * HS + 2 * kTile * kTile + 2 * kTile;  // K^T, V^T, Q, dO, P, dS, L, D
}
template <int HS>
constexpr int backward_q_smem_floats() {
  return 2 * kTile * HS + 2 * HS * kPad + kTile * HS + kTile * kTile + 2 * kTile;  // Q, dO, K^T, V^T, K, dS, L, D
}

MC_FA float comp(const f4& v, int k) { return k == 0 ? v.x : (k == 1 ? v.y : (k == 2 ? v.z : v.w)); }
MC_FA f4 ld4(const float* p) {
#ifdef __CUDACC__
  return *reinterpret_cast<const f4*>(p);
#else
  f4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}
MC_FA void st4(float* p, const float (&v)[4]) {
#ifdef __CUDACC__
  f4 w;
  w.x = v[0], w.y = v[1], w.z = v[2], w.w = v[3];
  *reinterpret_cast<f4*>(p) = w;
#else
  std::memcpy(p, v, sizeof v);
#endif
}
// A thread's CPT = HS / 16 consecutive columns of a row-major tile row.
template <int CPT>
MC_FA void load_cols(float (&v)[CPT], const float* p) {
  if constexpr (CPT == 4) {
    const f4 w = ld4(p);
    v[0] = w.x, v[1] = w.y, v[2] = w.z, v[3] = w.w;
  } else {
    MC_UNROLL
    for (int c = 0; c < CPT; ++c) v[c] = p[c];
  }
}

// Tile rows r0.. of a (T, stride) matrix into shared memory, zeros past T: row-major (dst[r * HS + d]) or
// transposed (dst[d * kPad + r]).
template <int HS, class Ctx>
MC_FA void load_rows(Ctx& cx, float* dst, const float* src, int64_t stride, int r0, int T, float mul) {
  for (int e = cx.tid(); e < kTile * HS; e += kThreads) {
    const int r = e / HS, d = e % HS, i = r0 + r;
    dst[e] = i < T ? src[int64_t(i) * stride + d] * mul : 0.0f;
  }
}
template <int HS, class Ctx>
MC_FA void load_rows_t(Ctx& cx, float* dst, const float* src, int64_t stride, int r0, int T) {
  for (int e = cx.tid(); e < kTile * HS; e += kThreads) {
    const int r = e / HS, d = e % HS, i = r0 + r;
    dst[d * kPad + r] = i < T ? src[int64_t(i) * stride + d] : 0.0f;
  }
}

// s[ii][jj] = sum_d A[ty*4+ii][d] B[tx*4+jj][d]: A row-major (kTile x HS), B transposed (HS x kPad).
template <int HS>
MC_FA void tile_dots(float (&s)[4][4], const float* A, const float* Bt, int ty, int tx) {
  MC_UNROLL
  for (int ii = 0; ii < 4; ++ii) MC_UNROLL
  for (int jj = 0; jj < 4; ++jj) s[ii][jj] = 0.0f;
  MC_UNROLL
  for (int d = 0; d < HS; d += 4) {
    f4 a[4], b[4];
    MC_UNROLL
    for (int ii = 0; ii < 4; ++ii) a[ii] = ld4(A + (ty * 4 + ii) * HS + d);
    MC_UNROLL
    for (int dd = 0; dd < 4; ++dd) b[dd] = ld4(Bt + (d + dd) * kPad + tx * 4);
    MC_UNROLL
    for (int ii = 0; ii < 4; ++ii) MC_UNROLL
    for (int jj = 0; jj < 4; ++jj) MC_UNROLL
    for (int dd = 0; dd < 4; ++dd) s[ii][jj] += comp(a[ii], dd) * comp(b[dd], jj);
  }
}

// acc[ii][c] += sum_j A[ty*4+ii][j] B[j][tx*CPT+c] over the tile's 64 j: A row-major (kTile x kTile, the
// probabilities or their gradient), B row-major (kTile x HS, V or K).
template <int HS>
MC_FA void tile_times_rows(float (&acc)[4][HS / 16], const float* A, const float* B, int ty, int tx) {
  constexpr int CPT = HS / 16;
  MC_UNROLL
  for (int j = 0; j < kTile; j += 4) {
    f4 a[4];
    MC_UNROLL
    for (int ii = 0; ii < 4; ++ii) a[ii] = ld4(A + (ty * 4 + ii) * kTile + j);
    MC_UNROLL
    for (int jj = 0; jj < 4; ++jj) {
      float b[CPT];
      load_cols<CPT>(b, B + (j + jj) * HS + tx * CPT);
      MC_UNROLL
      for (int ii = 0; ii < 4; ++ii) MC_UNROLL
      for (int c = 0; c < CPT; ++c) acc[ii][c] += comp(a[ii], jj) * b[c];
    }
  }
}

// Each query row's log-sum-exp and D_i of the tile from i0 (zeros past T); L and Drow point at the head's rows.
template <class Ctx>
MC_FA void load_row_stats(Ctx& cx, float* Ls, float* Ds, const float* L, const float* Drow, int i0, int T) {
  for (int r = cx.tid(); r < kTile; r += kThreads) {
    const int i = i0 + r;
    Ls[r] = i < T ? L[i] : 0.0f;
    Ds[r] = i < T ? Drow[i] : 0.0f;
  }
}

// ---- forward: block (query tile, b*Hl+h); key tiles 0..the query tile (causal) --------------------------
template <int HS, class Ctx>
MC_FA void forward_block(Ctx& cx, float* out, float* L, const float* qkv, int T, int Hl, float scale) {
  constexpr int CPT = HS / 16;
  float* Qs = cx.smem();
  float* Kt = Qs + kTile * HS;
  float* Vs = Kt + HS * kPad;
  float* Ps = Vs + kTile * HS;
  const int tid = cx.tid(), tx = tid % 16, ty = tid / 16;
  const int qt = cx.block_x(), bh = cx.block_y(), b = bh / Hl, h = bh % Hl, D = Hl * HS;
  const int i0 = qt * kTile;
  const int64_t row = 3 * int64_t(D);
  const float* base = qkv + int64_t(b) * T * row + h * HS;
  load_rows<HS>(cx, Qs, base, row, i0, T, scale);  // q pre-scaled by 1/sqrt(hs), as flash_attention.h
  float acc[4][CPT], m[4], l[4];
  MC_UNROLL
  for (int ii = 0; ii < 4; ++ii) {
    m[ii] = -INFINITY, l[ii] = 0.0f;
    MC_UNROLL
    for (int c = 0; c < CPT; ++c) acc[ii][c] = 0.0f;
  }
  for (int kt = 0; kt <= qt; ++kt) {
    const int j0 = kt * kTile;
    cx.sync();  // the last tile's K, V and P are read
    load_rows_t<HS>(cx, Kt, base + D, row, j0, T);
    load_rows<HS>(cx, Vs, base + 2 * D, row, j0, T, 1.0f);
    cx.sync();
    float s[4][4];
    tile_dots<HS>(s, Qs, Kt, ty, tx);
    MC_UNROLL
    for (int ii = 0; ii < 4; ++ii) {
      const int i = i0 + ty * 4 + ii;
      float mx = -INFINITY;
      MC_UNROLL
      for (int jj = 0; jj < 4; ++jj) {
        if (j0 + tx * 4 + jj > i) s[ii][jj] = -INFINITY;  // causal: key j only for queries i >= j
        mx = fmaxf(mx, s[ii][jj]);
      }
      MC_UNROLL
      for (int o = 1; o < 16; o <<= 1) mx = fmaxf(mx, cx.shfl_xor(mx, o));
      // The tile's first key (j0 <= i0 <= i) is never masked, so mx and the new maximum are finite.
      const float mn = fmaxf(m[ii], mx), f = expf(m[ii] - mn);
      float p[4], sum = 0.0f;
      MC_UNROLL
      for (int jj = 0; jj < 4; ++jj) p[jj] = expf(s[ii][jj] - mn), sum += p[jj];
      MC_UNROLL
      for (int o = 1; o < 16; o <<= 1) sum += cx.shfl_xor(sum, o);
      l[ii] = l[ii] * f + sum, m[ii] = mn;
      MC_UNROLL
      for (int c = 0; c < CPT; ++c) acc[ii][c] *= f;
      st4(Ps + (ty * 4 + ii) * kTile + tx * 4, p);
    }
    cx.sync();
    tile_times_rows<HS>(acc, Ps, Vs, ty, tx);  // acc += P V over the tile's keys
  }
  MC_UNROLL
  for (int ii = 0; ii < 4; ++ii) {
    const int i = i0 + ty * 4 + ii;
    if (i >= T) continue;
    float* o = out + (int64_t(b) * T + i) * D + h * HS + tx * CPT;
    const float inv = 1.0f / l[ii];
    MC_UNROLL
    for (int c = 0; c < CPT; ++c) o[c] = acc[ii][c] * inv;
    if (tx == 0) L[int64_t(bh) * T + i] = m[ii] + logf(l[ii]);
  }
}

// P_ij = exp(s_ij / sqrt(hs) - L_i) and dS_ij = P_ij (dP_ij - D_i) / sqrt(hs) for the thread's 4 x 4 piece
// (queries i0 + ty*4.., keys j0 + tx*4..), zero where j > i or i >= T.
template <int HS>
MC_FA void probabilities(float (&p)[4][4], float (&ds)[4][4], const float (&s)[4][4], const float (&dp)[4][4],
                         const float* Ls, const float* Ds, int i0, int j0, int T, int ty, int tx, float scale) {
  MC_UNROLL
  for (int ii = 0; ii < 4; ++ii) {
    const int r = ty * 4 + ii, i = i0 + r;
    MC_UNROLL
    for (int jj = 0; jj < 4; ++jj) {
      const int j = j0 + tx * 4 + jj;
      p[ii][jj] = ds[ii][jj] = 0.0f;
      if (i >= T || j > i) continue;
      p[ii][jj] = expf(s[ii][jj] * scale - Ls[r]);
      ds[ii][jj] = p[ii][jj] * (dp[ii][jj] - Ds[r]) * scale;
    }
  }
}

// ---- backward, dK and dV: block (key tile, b*Hl+h); query tiles from the key tile's own to the last -----
template <int HS, class Ctx>
MC_FA void backward_kv_block(Ctx& cx, float* dqkv, const float* dout, const float* qkv, const float* L,
                             const float* Drow, int T, int Hl, float scale) {
  constexpr int CPT = HS / 16;
  float* Kt = cx.smem();
  float* Vt = Kt + HS * kPad;
  float* Qs = Vt + HS * kPad;
  float* dOs = Qs + kTile * HS;
  float* Ps = dOs + kTile * HS;
  float* dSs = Ps + kTile * kTile;
  float* Ls = dSs + kTile * kTile;
  float* Ds = Ls + kTile;
  const int tid = cx.tid(), tx = tid % 16, ty = tid / 16;
  const int kt = cx.block_x(), bh = cx.block_y(), b = bh / Hl, h = bh % Hl, D = Hl * HS;
  const int j0 = kt * kTile, tiles = (T + kTile - 1) / kTile;
  const int64_t row = 3 * int64_t(D);
  const float* base = qkv + int64_t(b) * T * row + h * HS;
  const float* dbase = dout + int64_t(b) * T * D + h * HS;
  load_rows_t<HS>(cx, Kt, base + D, row, j0, T);
  load_rows_t<HS>(cx, Vt, base + 2 * D, row, j0, T);
  float dk[4][CPT], dv[4][CPT];  // keys j0 + ty*4.., columns tx*CPT..
  MC_UNROLL
  for (int jj = 0; jj < 4; ++jj) MC_UNROLL
  for (int c = 0; c < CPT; ++c) dk[jj][c] = dv[jj][c] = 0.0f;
  for (int qt = kt; qt < tiles; ++qt) {
    const int i0 = qt * kTile;
    cx.sync();  // the last tile's Q, dO, P and dS are read
    load_rows<HS>(cx, Qs, base, row, i0, T, 1.0f);
    load_rows<HS>(cx, dOs, dbase, D, i0, T, 1.0f);
    load_row_stats(cx, Ls, Ds, L + int64_t(bh) * T, Drow + int64_t(bh) * T, i0, T);
    cx.sync();
    float s[4][4], dp[4][4], p[4][4], ds[4][4];
    tile_dots<HS>(s, Qs, Kt, ty, tx);
    tile_dots<HS>(dp, dOs, Vt, ty, tx);
    probabilities<HS>(p, ds, s, dp, Ls, Ds, i0, j0, T, ty, tx, scale);
    MC_UNROLL
    for (int ii = 0; ii < 4; ++ii) {
      st4(Ps + (ty * 4 + ii) * kTile + tx * 4, p[ii]);
      st4(dSs + (ty * 4 + ii) * kTile + tx * 4, ds[ii]);
    }
    cx.sync();
    for (int i = 0; i < kTile; ++i) {  // dV += P^T dO, dK += dS^T Q over the tile's queries
      const f4 pa = ld4(Ps + i * kTile + ty * 4), da = ld4(dSs + i * kTile + ty * 4);
      float o[CPT], q[CPT];
      load_cols<CPT>(o, dOs + i * HS + tx * CPT);
      load_cols<CPT>(q, Qs + i * HS + tx * CPT);
      MC_UNROLL
      for (int jj = 0; jj < 4; ++jj) MC_UNROLL
      for (int c = 0; c < CPT; ++c) dv[jj][c] += comp(pa, jj) * o[c], dk[jj][c] += comp(da, jj) * q[c];
    }
  }
  MC_UNROLL
  for (int jj = 0; jj < 4; ++jj) {
    const int j = j0 + ty * 4 + jj;
    if (j >= T) continue;
    float* kr = dqkv + (int64_t(b) * T + j) * row + D + h * HS + tx * CPT;
    MC_UNROLL
    for (int c = 0; c < CPT; ++c) kr[c] = dk[jj][c], kr[D + c] = dv[jj][c];
  }
}

// ---- backward, dQ: block (query tile, b*Hl+h); key tiles 0..the query tile ------------------------------
template <int HS, class Ctx>
MC_FA void backward_q_block(Ctx& cx, float* dqkv, const float* dout, const float* qkv, const float* L,
                            const float* Drow, int T, int Hl, float scale) {
  constexpr int CPT = HS / 16;
  float* Qs = cx.smem();
  float* dOs = Qs + kTile * HS;
  float* Kt = dOs + kTile * HS;
  float* Vt = Kt + HS * kPad;
  float* Ks = Vt + HS * kPad;
  float* dSs = Ks + kTile * HS;
  float* Ls = dSs + kTile * kTile;
  float* Ds = Ls + kTile;
  const int tid = cx.tid(), tx = tid % 16, ty = tid / 16;
  const int qt = cx.block_x(), bh = cx.block_y(), b = bh / Hl, h = bh % Hl, D = Hl * HS;
  const int i0 = qt * kTile;
  const int64_t row = 3 * int64_t(D);
  const float* base = qkv + int64_t(b) * T * row + h * HS;
  load_rows<HS>(cx, Qs, base, row, i0, T, 1.0f);
  load_rows<HS>(cx, dOs, dout + int64_t(b) * T * D + h * HS, D, i0, T, 1.0f);
  load_row_stats(cx, Ls, Ds, L + int64_t(bh) * T, Drow + int64_t(bh) * T, i0, T);
  float dq[4][CPT];  // queries i0 + ty*4.., columns tx*CPT..
  MC_UNROLL
  for (int ii = 0; ii < 4; ++ii) MC_UNROLL
  for (int c = 0; c < CPT; ++c) dq[ii][c] = 0.0f;
  for (int kt = 0; kt <= qt; ++kt) {
    const int j0 = kt * kTile;
    cx.sync();  // the last tile's K and dS are read
    load_rows_t<HS>(cx, Kt, base + D, row, j0, T);
    load_rows_t<HS>(cx, Vt, base + 2 * D, row, j0, T);
    load_rows<HS>(cx, Ks, base + D, row, j0, T, 1.0f);
    cx.sync();
    float s[4][4], dp[4][4], p[4][4], ds[4][4];
    tile_dots<HS>(s, Qs, Kt, ty, tx);
    tile_dots<HS>(dp, dOs, Vt, ty, tx);
    probabilities<HS>(p, ds, s, dp, Ls, Ds, i0, j0, T, ty, tx, scale);
    MC_UNROLL
    for (int ii = 0; ii < 4; ++ii) st4(dSs + (ty * 4 + ii) * kTile + tx * 4, ds[ii]);
    cx.sync();
    tile_times_rows<HS>(dq, dSs, Ks, ty, tx);  // dQ += dS K over the tile's keys
  }
  MC_UNROLL
  for (int ii = 0; ii < 4; ++ii) {
    const int i = i0 + ty * 4 + ii;
    if (i >= T) continue;
    float* qr = dqkv + (int64_t(b) * T + i) * row + h * HS + tx * CPT;
    MC_UNROLL
    for (int c = 0; c < CPT; ++c) qr[c] = dq[ii][c];
  }
}

}  // namespace mc::device::flash_tiled
