// The GPU's token-embedding gradient (device/embedding_grad.h: one block per 256 columns of a vocabulary
// row, scanning the tokens through shared memory), the code train_kernels.cu runs, executed on the CPU by
// the block shim (one std::thread per CUDA thread, block_shim.h). It must be the CPU device's result to the
// bit: the same rows added in the same order onto the gradient already there. Shapes where T is not a
// multiple of the 256-token tile, C not a multiple of the 256-column block, tokens repeat and some rows of
// the vocabulary never occur; CudaKernels.EmbeddingBackwardIsTheCpusToTheBit checks the kernel on a GPU.
#include "device/embedding_grad.h"
#include "block_shim.h"
#include "train/kernels/cpu_device.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

namespace eg = mc::device::embedding_grad;
static_assert(eg::kThreads == mc::test::shim::kThreads, "the shim runs 256-thread blocks");

}  // namespace

TEST(EmbeddingGrad, BlockBodyIsTheCpuDevicesResultToTheBit) {
  for (const std::array<int, 4>& shape :
       {std::array{3, 67, 300, 23}, std::array{2, 300, 64, 5}, std::array{1, 1, 257, 2}}) {
    const int B = shape[0], T = shape[1], C = shape[2], V = shape[3];  // (clang 14 lambdas take no bindings)
    std::mt19937 g(uint32_t(B * 1000 + T));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<int32_t> tok(size_t(B) * (T + 1));
    // Skewed as text is: low ids often, the top id never (its row must come back untouched).
    for (int32_t& id : tok) id = int32_t((g() % uint32_t(V - 1)) * (g() % 2));
    std::vector<float> dout(size_t(B) * T * C), start(size_t(V) * C);
    for (float& x : dout) x = u(g);
    for (float& x : start) x = u(g);

    mc::train::CpuDevice cpu;
    mc::device::Buffer<float> wte(cpu, int64_t(start.size())), wpe(cpu, int64_t(T) * C), d(cpu, int64_t(dout.size()));
    mc::device::Buffer<int32_t> ids(cpu, int64_t(tok.size()));
    cpu.upload(wte.ptr(), start.data(), int64_t(start.size()));
    cpu.upload(d.ptr(), dout.data(), int64_t(dout.size()));
    cpu.upload(ids.ptr(), tok.data(), int64_t(tok.size()));
    const std::vector<float> zeros(size_t(T) * C, 0.0f);
    cpu.upload(wpe.ptr(), zeros.data(), int64_t(zeros.size()));
    cpu.embedding_backward(wte.ptr(), wpe.ptr(), d.ptr(), ids.ptr(), B, T, C, V);
    std::vector<float> want(start.size());
    cpu.download(want.data(), mc::device::DPtr<const float>(wte.ptr()), int64_t(want.size()));

    std::vector<float> got = start;
    mc::test::shim::launch((C + eg::kThreads - 1) / eg::kThreads, V, eg::kSmemSlots, [&](mc::test::shim::CpuCtx& cx) {
      eg::wte_row_block(cx, got.data(), dout.data(), tok.data(), B, T, C);
    });
    EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0)
        << "B " << B << " T " << T << " C " << C << " V " << V;
    EXPECT_EQ(std::memcmp(&start[size_t(V - 1) * C], &got[size_t(V - 1) * C], size_t(C) * sizeof(float)), 0)
        << "a row no token names is left as it was";
  }
}
