// column_sums.h - gradients that are sums over the rows of a matrix, one per column: a bias's (db = the
// column sums of dout) and LayerNorm's (dw = the column sums of dout * norm, db of dout). The bodies of the
// CUDA kernels, written once for two executors like flash_tiled.h: engine/cuda/train_kernels.cu runs them
// on the GPU, tests/unit/column_sums_test.cpp on the CPU (block_shim.h, one std::thread per CUDA thread).
//
// Why two passes: the first kernel gave each 32 columns one block of 16 row lanes, so a 768-wide LayerNorm
// had 24 blocks on a GPU of 132 multiprocessors, each thread walking N / 16 rows. Here the rows are cut
// into `chunks` (up to 64, a chunk at least 256 rows): block (x, y) sums 32 columns over chunk y with 8
// row lanes and writes one partial per column, and a second pass adds each column's partials in chunk
// order onto the gradient. Every sum runs in a fixed order (lanes, then chunks): a run repeats bit for bit,
// with no atomics. The order differs from the CPU's row-by-row sum, so the two agree to rounding.
//
// Contract of a Ctx: tid() 0..kThreads-1, block_x(), block_y(), sync() and smem() (kSmemFloats floats).
// Shapes: dout, x (N, C) row-major; mean, rstd (N); part_w, part_b (chunks, C).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define MC_CS __device__ __forceinline__
#define MC_CS_HD __host__ __device__ inline
#else
#define MC_CS inline
#define MC_CS_HD inline
#endif

namespace mc::device::column_sums {

constexpr int kThreads = 256;
constexpr int kCols = 32;                              // columns per block: one warp reads 128 contiguous bytes
constexpr int kLanes = kThreads / kCols;               // row lanes per block
constexpr int kSmemFloats = 2 * kLanes * (kCols + 1);  // padded: lane rows fall in different banks
constexpr int kMaxChunks = 64;
constexpr int kMinChunkRows = 256;

// Row chunks for N rows: enough blocks to fill a large GPU, none shorter than kMinChunkRows.
MC_CS_HD int chunks_for(int N) {
  const int c = N / kMinChunkRows;
  return c < 1 ? 1 : (c > kMaxChunks ? kMaxChunks : c);
}

// Pass 1, block (x, y): columns [32 x, 32 x + 32) over the rows of chunk y. With x (LayerNorm) it sums
// dout * (x - mean) * rstd into part_w as well; without, only dout into part_b.
template <class Ctx>
MC_CS void partial_block(Ctx& ctx, float* part_w, float* part_b, const float* dout, const float* x, const float* mean,
                         const float* rstd, int N, int C, int chunks) {
  float* s = ctx.smem();
  const int tx = ctx.tid() % kCols, ty = ctx.tid() / kCols;
  const int c = ctx.block_x() * kCols + tx;
  const int per = (N + chunks - 1) / chunks;
  const int r0 = ctx.block_y() * per, r1 = r0 + per < N ? r0 + per : N;
  float aw = 0, ab = 0;
  if (c < C)
    for (int i = r0 + ty; i < r1; i += kLanes) {
      const float d = dout[int64_t(i) * C + c];
      ab += d;
      if (x) aw += (x[int64_t(i) * C + c] - mean[i]) * rstd[i] * d;
    }
  s[ty * (kCols + 1) + tx] = aw;
  s[(kLanes + ty) * (kCols + 1) + tx] = ab;
  ctx.sync();
  if (ty == 0 && c < C) {
    float tw = 0, tb = 0;
    for (int r = 0; r < kLanes; ++r) {
      tw += s[r * (kCols + 1) + tx];
      tb += s[(kLanes + r) * (kCols + 1) + tx];
    }
    if (part_w) part_w[int64_t(ctx.block_y()) * C + c] = tw;
    part_b[int64_t(ctx.block_y()) * C + c] = tb;
  }
}

// Pass 2, column c: its partials in chunk order, added onto the gradient (dw or db may be null).
MC_CS void finish_column(int c, float* dw, float* db, const float* part_w, const float* part_b, int C, int chunks) {
  float tw = 0, tb = 0;
  for (int y = 0; y < chunks; ++y) {
    if (part_w) tw += part_w[int64_t(y) * C + c];
    tb += part_b[int64_t(y) * C + c];
  }
  if (dw) dw[c] += tw;
  if (db) db[c] += tb;
}

}  // namespace mc::device::column_sums
