// embedding_grad.h - the token embedding's gradient, dwte[v] += the dout rows whose token is v, as the
// body of a CUDA thread block, written once for two executors like flash_tiled.h: engine/cuda/
// train_kernels.cu runs it as a __global__ kernel, tests/unit/embedding_grad_test.cpp on the CPU with one
// std::thread per CUDA thread (a barrier for __syncthreads).
//
// Why: the first kernel gave each of the C columns one thread that walked every token and added its row
// into dwte in global memory, one dependent read-modify-write after another; with C = 768 that is 768
// threads on a GPU that holds 100,000, and it took 3.3 ms a call on an H100 (MC_CUDA_PROFILE, 12 x 768,
// B 8, T 1024: 4 % of a bf16 step). Here block (x, y) owns 256 columns of vocabulary row v = y: V C
// threads, each keeping its sum in a register. The block takes the tokens 256 at a time, lists in shared
// memory those whose id is v, in token order, and every thread adds those rows in that order. That is the
// order the CPU adds them in (CpuDevice::embedding_backward), so the result is the CPU's to the bit, and a
// run repeats exactly: no atomics. The grid still compares V B T ids, so train_kernels.cu keeps the
// column kernel above kMaxVocab.
//
// Contract of a Ctx: tid() 0..kThreads-1, block_x(), block_y(), sync() (all kThreads threads) and smem()
// (kSmemSlots 4-byte slots). Shapes: dwte (V, C), dout (B T, C), tokens B rows of T + 1 ids.
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

constexpr int kThreads = 256;             // columns per block, and tokens per shared-memory tile
constexpr int kMaxVocab = 8192;           // above: V B T compares cost more than the column kernel's 3 ms
constexpr int kAhead = 8;                 // token rows loaded before they are added
constexpr int kSmemSlots = 2 * kThreads;  // 4-byte slots of shared memory a block uses

template <class Ctx>
MC_EG void wte_row_block(Ctx& ctx, float* dwte, const float* dout, const int32_t* tokens, int B, int T, int C) {
  int32_t* scan = reinterpret_cast<int32_t*>(ctx.smem());  // the tile's matches up to each token, inclusive
  int32_t* list = scan + kThreads;                         // the tile's tokens of v, in token order
  const int tid = ctx.tid(), v = ctx.block_y(), k = ctx.block_x() * kThreads + tid;
  const int64_t n = int64_t(B) * T;
  float acc = k < C ? dwte[int64_t(v) * C + k] : 0.0f;
  for (int64_t base = 0; base < n; base += kThreads) {
    const int64_t i = base + tid;
    bool match = false;
    if (i < n) {
      const int64_t b = i / T;
      match = tokens[b * (T + 1) + (i - b * T)] == v;
    }
    // The block lists the tile's tokens of v in order (a prefix sum over 256 flags, Hillis & Steele 1986),
    // so each thread then visits only those: scanning all 256 ids in every thread, one compare each, was
    // the kernel's time (0.87 ms a step of the 12 x 768 model on an H200, MC_CUDA_PROFILE).
    scan[tid] = match ? 1 : 0;
    ctx.sync();
    for (int off = 1; off < kThreads; off <<= 1) {
      const int add = tid >= off ? scan[tid - off] : 0;
      ctx.sync();
      scan[tid] += add;
      ctx.sync();
    }
    if (match) list[scan[tid] - 1] = tid;
    const int count = scan[kThreads - 1];
    ctx.sync();
    // A run of kAhead rows is loaded before any is added: the loads do not wait on each other, and the
    // additions keep token order.
    if (k < C)
      for (int j = 0; j < count; j += kAhead) {
        float row[kAhead];
        MC_EG_UNROLL
        for (int u = 0; u < kAhead; ++u) row[u] = j + u < count ? dout[(base + list[j + u]) * C + k] : 0.0f;
        MC_EG_UNROLL
        for (int u = 0; u < kAhead; ++u)
          if (j + u < count) acc += row[u];
      }
    ctx.sync();  // the list and the counts are read before the next tile overwrites them
  }
  if (k < C) dwte[int64_t(v) * C + k] = acc;
}

}  // namespace mc::device::embedding_grad
