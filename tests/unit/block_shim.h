// block_shim.h - a CUDA thread block on the CPU, for kernel bodies written against a small context
// (device/flash_tiled.h, device/embedding_grad.h, device/flash_mma.h): one std::thread per CUDA thread,
// __syncthreads as a std::barrier, the warp shuffle through a slot array between two barriers, a warp's
// matrix instructions (mma.m16n8k16 with bf16, m16n8k8 with TF32) from the fragments its 32 lanes hand in, and shared
// memory poisoned with NaN so that a read of a value no thread stored spreads into the result.
#pragma once

#include <algorithm>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <thread>
#include <vector>

namespace mc::test::shim {

constexpr int kThreads = 256;  // the block size of launch()
// smem_raw()'s poison: a quiet NaN as fp32 and as each of its two bf16 halves.
constexpr uint32_t kNaN32 = 0x7fc17fc1u;

struct Block {
  Block(int smem_floats, int threads, int smem_bytes = 0)
      : bar(threads),
        smem(size_t(smem_floats), std::numeric_limits<float>::quiet_NaN()),
        raw(size_t((smem_bytes + 3) / 4), kNaN32),
        slots(size_t(threads)),
        frags(size_t(threads) * 6) {}
  std::barrier<> bar;
  std::vector<float> smem;
  std::vector<uint32_t> raw;
  std::vector<float> slots;
  std::vector<uint32_t> frags;  // each thread's mma operands: a[0..3], b[0..1]
  int x = 0, y = 0;
};

inline float bf16_value(uint32_t bits) {
  const uint32_t u = (bits & 0xffffu) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

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
  void* smem_raw() { return blk->raw.data(); }
  // cp.async on the CPU: the copy happens at once, so commit and wait have nothing to do (what they order on
  // a GPU, that no tile is read before its copy and none overwritten while read, is the kernels' syncs).
  void cp16(void* dst, const void* src, bool valid) {
    if (valid)
      std::memcpy(dst, src, 16);
    else
      std::memset(dst, 0, 16);
  }
  void commit() {}
  template <int N>
  void wait() {}
  // __shfl_sync: v of lane `from` of the caller's warp.
  float shfl(float v, int from) {
    blk->slots[size_t(t)] = v;
    sync();
    const float r = blk->slots[size_t((t & ~31) | from)];
    sync();
    return r;
  }
  // A warp's matrix instruction, c += A B (16 x K by K x 8): every lane hands in its fragments, then each
  // computes its four elements of C from the warp's, with A(frags, r, k) and B(frags, k, n) reading an
  // operand's element out of the 32 lanes' fragments (6 words a lane: a[0..3], b[0..1]) by the PTX layout.
  template <int K, class GetA, class GetB>
  void warp_product(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], GetA A, GetB B) {
    uint32_t* mine = &blk->frags[size_t(t) * 6];
    for (int i = 0; i < 4; ++i) mine[i] = a[i];
    mine[4] = b[0], mine[5] = b[1];
    sync();
    const uint32_t* warp = &blk->frags[size_t(t & ~31) * 6];
    const int lane = t & 31, g = lane >> 2, c2 = (lane & 3) * 2;
    for (int e = 0; e < 4; ++e) {
      const int r = g + (e >= 2 ? 8 : 0), n = c2 + (e & 1);
      float acc = c[e];
      for (int k = 0; k < K; ++k) acc += A(warp, r, k) * B(warp, k, n);
      c[e] = acc;
    }
    sync();
  }
  // mma.m16n8k16 with bf16 operands, laid out as device/flash_mma.h's header gives. Products of two bf16
  // are exact in fp32; the sum runs over k in order.
  void mma_bf16(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    auto half = [](const uint32_t* warp, int ln, int reg, int k) {
      const uint32_t v = warp[size_t(ln) * 6 + size_t(reg)];
      return bf16_value(k % 2 ? v >> 16 : v);
    };
    warp_product<16>(
        c, a, b,
        [&](const uint32_t* w, int r, int k) {
          return half(w, (r % 8) * 4 + (k % 8) / 2, (r >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0), k);
        },
        [&](const uint32_t* w, int k, int n) { return half(w, n * 4 + (k % 8) / 2, 4 + (k >= 8 ? 1 : 0), k); });
  }
  // mma.m16n8k8 with TF32 operands: A (16 x 8) a[0] = (g, t), a[1] = (g+8, t), a[2] = (g, t+4),
  // a[3] = (g+8, t+4); B (8 x 8) b[0] = (t, g), b[1] = (t+4, g). The hardware reads each operand's top 19
  // bits; the kernels hand it values already rounded, so the emulation multiplies them as they are (the
  // products of two TF32 values are exact in fp32).
  void mma_tf32(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    auto value = [](const uint32_t* warp, int ln, int reg) {
      float f;
      std::memcpy(&f, &warp[size_t(ln) * 6 + size_t(reg)], 4);
      return f;
    };
    warp_product<8>(
        c, a, b,
        [&](const uint32_t* w, int r, int k) {
          return value(w, (r % 8) * 4 + k % 4, (r >= 8 ? 1 : 0) + (k >= 4 ? 2 : 0));
        },
        [&](const uint32_t* w, int k, int n) { return value(w, n * 4 + k % 4, 4 + (k >= 4 ? 1 : 0)); });
  }
};

// Runs body(ctx) for every thread of every block of the (gx, gy) grid, one block at a time. The same
// kThreads threads run every block (between two blocks all of them wait while thread 0 poisons the shared
// memory again and names the next block): starting 256 threads per block was most of these tests' time, 34 s
// of ColumnSums' under the sanitizers (issue 43).
// launch_with runs `threads` threads per block and gives each block smem_bytes of smem_raw() as well.
inline void launch_with(int threads_per_block, int gx, int gy, int smem_floats, int smem_bytes,
                        const std::function<void(CpuCtx&)>& body) {
  Block blk(smem_floats, threads_per_block, smem_bytes);
  std::vector<std::thread> threads;
  threads.reserve(size_t(threads_per_block));
  for (int t = 0; t < threads_per_block; ++t)
    threads.emplace_back([&blk, &body, gx, gy, t, smem_floats] {
      CpuCtx cx{&blk, t};
      for (int y = 0; y < gy; ++y)
        for (int x = 0; x < gx; ++x) {
          cx.sync();  // every thread has left the last block
          if (t == 0) {
            blk.x = x, blk.y = y;
            blk.smem.assign(size_t(smem_floats), std::numeric_limits<float>::quiet_NaN());
            std::fill(blk.raw.begin(), blk.raw.end(), kNaN32);
            std::fill(blk.slots.begin(), blk.slots.end(), 0.0f);
          }
          cx.sync();  // the next block is set up
          body(cx);
        }
    });
  for (auto& th : threads) th.join();
}
inline void launch(int gx, int gy, int smem_floats, const std::function<void(CpuCtx&)>& body) {
  launch_with(kThreads, gx, gy, smem_floats, 0, body);
}

}  // namespace mc::test::shim
