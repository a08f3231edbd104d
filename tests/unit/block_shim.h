// block_shim.h - a CUDA thread block on the CPU, for kernel bodies written against a small context
// (device/flash_tiled.h, device/embedding_grad.h): one std::thread per CUDA thread, __syncthreads as a
// std::barrier, the warp shuffle through a slot array between two barriers, and shared memory poisoned
// with NaN so that a read of a value no thread stored spreads into the result.
#pragma once

#include <barrier>
#include <functional>
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

// Runs body(ctx) for every thread of every block of the (gx, gy) grid, one block at a time.
inline void launch(int gx, int gy, int smem_floats, const std::function<void(CpuCtx&)>& body) {
  for (int y = 0; y < gy; ++y)
    for (int x = 0; x < gx; ++x) {
      Block blk(smem_floats);
      blk.x = x, blk.y = y;
      std::vector<std::thread> threads;
      threads.reserve(kThreads);
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&blk, &body, t] {
          CpuCtx cx{&blk, t};
          body(cx);
        });
      for (auto& th : threads) th.join();
    }
}

}  // namespace mc::test::shim
