// block_shim.h - a CUDA thread block on the CPU, for kernel bodies written against a small context
// (device/flash_tiled.h, device/embedding_grad.h): one std::thread per CUDA thread, __syncthreads as a
// std::barrier, the warp shuffle through a slot array between two barriers, and shared memory poisoned
// with NaN so that a read of a value no thread stored spreads into the result.
#pragma once

#include <algorithm>
#include <barrier>
#include <functional>
#include <iterator>
#include <limits>
#include <thread>
#include <vector>

namespace mc::test::shim {

constexpr int kThreads = 256;  // the block size of every kernel run this way

struct Block {
  explicit Block(int smem_floats) : smem(size_t(smem_floats), std::numeric_limits<float>::quiet_NaN()) {}
  std::barrier<> bar{kThreads};
  std::vector<float> smem;
  float slots[kThreads] = {};
  int x = 0, y = 0;
};

struct CpuCtx {
  Block* blk;
  int t;
  int tid() const { return t; }
  int block_x() const { return blk->x; }
  int block_y() const { return blk->y; }
  void sync() { blk->bar.arrive_and_wait(); }
  float shfl_xor(float v, int o) {
    blk->slots[t] = v;
    sync();
    const float r = blk->slots[t ^ o];
    sync();
    return r;
  }
  float* smem() { return blk->smem.data(); }
};

// Runs body(ctx) for every thread of every block of the (gx, gy) grid, one block at a time. The same
// kThreads threads run every block (between two blocks all of them wait while thread 0 poisons the shared
// memory again and names the next block): starting 256 threads per block was most of these tests' time, 34 s
// of ColumnSums' under the sanitizers (issue 43).
inline void launch(int gx, int gy, int smem_floats, const std::function<void(CpuCtx&)>& body) {
  Block blk(smem_floats);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&blk, &body, gx, gy, t, smem_floats] {
      CpuCtx cx{&blk, t};
      for (int y = 0; y < gy; ++y)
        for (int x = 0; x < gx; ++x) {
          cx.sync();  // every thread has left the last block
          if (t == 0) {
            blk.x = x, blk.y = y;
            blk.smem.assign(size_t(smem_floats), std::numeric_limits<float>::quiet_NaN());
            std::fill(std::begin(blk.slots), std::end(blk.slots), 0.0f);
          }
          cx.sync();  // the next block is set up
          body(cx);
        }
    });
  for (auto& th : threads) th.join();
}

}  // namespace mc::test::shim
