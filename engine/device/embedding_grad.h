// embedding_grad.h - the token embedding's gradient, dwte[v] += the dout rows whose token is v, as the
// body of a CUDA thread block, written once for two executors like flash_tiled.h: engine/cuda/
// train_kernels.cu runs it as a __global__ kernel, tests/unit/embedding_grad_test.cpp on the CPU with one
// std::thread per CUDA thread (a barrier for __syncthreads).
//
// Why: the first kernel gave each of the C columns one thread that walked every token and added its row
// into dwte in global memory, one dependent read-modify-write after another; with C = 768 that is 768
// threads on a GPU that holds 100,000, and it took 3.3 ms a call on an H100 (MC_CUDA_PROFILE, 12 x 768,
// B 8, T 1024: 4 % of a bf16 step). Here block (x, y) owns 256 columns of vocabulary row v = y: V C
// threads, each keeping its sum in a register. The block reads the tokens 256 at a time into shared
// memory and every thread scans them (the branch is the same for the whole block: one v), adding the
// rows whose token is v in token order. That is the order the CPU adds them in (CpuDevice::
// embedding_backward), so the result is the CPU's to the bit, and a run repeats exactly: no atomics.
// The scan costs V B T compares over the grid, so train_kernels.cu keeps the column kernel above
// kMaxVocab.
//
// Contract of a Ctx: tid() 0..kThreads-1, block_x(), block_y(), sync() (all kThreads threads) and smem()
// (at least kThreads 4-byte slots). Shapes: dwte (V, C), dout (B T, C), tokens B rows of T + 1 ids.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define MC_EG __device__ __forceinline__
#define MC_EG_UNROLL _Pragma("unroll")
#else
#define MC_EG inline
#define MC_EG_UNROLL
#endif

namespace mc::device::embedding_grad {

constexpr int kThreads = 256;    // columns per block, and tokens per shared-memory tile
constexpr int kMaxVocab = 8192;  // above: V B T compares cost more than the column kernel's 3 ms
constexpr int kAhead = 8;        // token rows loaded before they are added

template <class Ctx>
MC_EG void wte_row_block(Ctx& ctx, float* dwte, const float* dout, const int32_t* tokens, int B, int T, int C) {
  int32_t* tile = reinterpret_cast<int32_t*>(ctx.smem());
  const int v = ctx.block_y(), k = ctx.block_x() * kThreads + ctx.tid();
  const int64_t n = int64_t(B) * T;
  float acc = k < C ? dwte[int64_t(v) * C + k] : 0.0f;
  for (int64_t base = 0; base < n; base += kThreads) {
    const int64_t i = base + ctx.tid();
    if (i < n) {
      const int64_t b = i / T;
      tile[ctx.tid()] = tokens[b * (T + 1) + (i - b * T)];
    }
    ctx.sync();
    const int m = n - base < kThreads ? int(n - base) : kThreads;
    // The rows of a run of kAhead tokens are loaded before any is added: the loads do not wait on each
    // other, and the additions keep token order. One add after another, each waiting on its load, took
    // 1.07 ms a step on an H200 (MC_CUDA_PROFILE, 12 x 768, B 8, T 1024, bytes as tokens: a common byte's
    // block adds over a thousand rows).
    if (k < C)
      for (int j = 0; j < m; j += kAhead) {
        float row[kAhead];
        MC_EG_UNROLL
        for (int u = 0; u < kAhead; ++u) row[u] = (j + u < m && tile[j + u] == v) ? dout[(base + j + u) * C + k] : 0.0f;
        MC_EG_UNROLL
        for (int u = 0; u < kAhead; ++u)
          if (j + u < m && tile[j + u] == v) acc += row[u];
      }
    ctx.sync();  // the tile is read by all before the next one overwrites it
  }
  if (k < C) dwte[int64_t(v) * C + k] = acc;
}

}  // namespace mc::device::embedding_grad
