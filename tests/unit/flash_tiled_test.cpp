// The tiled attention kernels' block bodies (device/flash_tiled.h), the code the GPU runs, executed on the
// CPU: every block of the grid by 256 std::threads, __syncthreads as a barrier, the warp shuffle through a
// slot array between two barriers. Compared with the reference attention (ops::attention_forward and
// attention_backward, which keep the (T,T) probabilities): the tiling, the causal and end-of-sequence masks
// and every thread's indices are checked here without a GPU; CudaKernels.CausalAttentionForwardBackward
// checks the same kernels on one. Outputs start as NaN, so an element no thread writes fails.
#include "device/flash_tiled.h"
#include "attention_check.h"
#include "block_shim.h"
#include "train/kernels/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

namespace ft = mc::device::flash_tiled;
using Vec = std::vector<float>;
using mc::test::attention::worst;

using mc::test::shim::CpuCtx;
using mc::test::shim::launch;
static_assert(ft::kThreads == mc::test::shim::kThreads, "the shim runs 256-thread blocks");

template <int HS>
void check(int B, int T, int Hl) {
  SCOPED_TRACE("B " + std::to_string(B) + ", T " + std::to_string(T) + ", heads " + std::to_string(Hl) + ", hs " +
               std::to_string(HS));
  const float scale = 1.0f / std::sqrt(float(HS));
  const auto c = mc::test::attention::reference(uint32_t(HS * 1000 + T), B, T, Hl, HS, [](float x) { return x; });
  const Vec &qkv = c.qkv, &dout = c.dout, &out_ref = c.out, &att = c.att, &dqkv_ref = c.dqkv;

  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int tiles = (T + ft::kTile - 1) / ft::kTile;
  Vec out(out_ref.size(), nan), L(size_t(B) * Hl * T, nan);
  launch(tiles, B * Hl, ft::forward_smem_floats<HS>(),
         [&](CpuCtx& cx) { ft::forward_block<HS>(cx, out.data(), L.data(), qkv.data(), T, Hl, scale); });
  EXPECT_LT(worst(out_ref, out), 1e-5) << "attention output";
  EXPECT_LT(mc::test::attention::probabilities_from_L(qkv, L, att, B, T, Hl, HS), 1e-5) << "probabilities from L";

  const Vec Drow = mc::test::attention::rowdot(dout, out, B, T, Hl, HS);  // from the kernels' own output
  Vec dqkv(qkv.size(), nan);
  launch(tiles, B * Hl, ft::backward_kv_smem_floats<HS>(), [&](CpuCtx& cx) {
    ft::backward_kv_block<HS>(cx, dqkv.data(), dout.data(), qkv.data(), L.data(), Drow.data(), T, Hl, scale);
  });
  launch(tiles, B * Hl, ft::backward_q_smem_floats<HS>(), [&](CpuCtx& cx) {
    ft::backward_q_block<HS>(cx, dqkv.data(), dout.data(), qkv.data(), L.data(), Drow.data(), T, Hl, scale);
  });
  EXPECT_LT(worst(dqkv_ref, dqkv), 1e-4) << "attention dqkv";
}

TEST(FlashTiled, BlocksMatchTheReferenceAttention) {
  check<16>(2, 67, 2);   // T not a multiple of the 64-row tiles
  check<32>(1, 130, 2);  // three tiles, the last with two rows
  check<64>(1, 128, 3);  // whole tiles
}

}  // namespace
