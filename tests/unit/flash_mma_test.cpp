// The tensor-core attention kernels' block bodies (device/flash_mma.h), the code the GPU runs, executed on
// the CPU: every block by 128 std::threads, the warp's matrix instructions emulated from the PTX ISA's
// fragment layouts (tests/unit/block_shim.h). Compared, in both formats (bf16, TF32), with the reference
// attention (ops::attention_forward and attention_backward, fp32, probabilities kept) run on the same inputs
// rounded to the format, as the kernels stage them: what remains is the kernels' rounding of P and dS for
// their products. Outputs start as NaN, so an element no thread writes fails.
// CudaKernels.AttentionOnTensorCores checks the same code on a GPU.
#include "device/flash_mma.h"
#include "attention_check.h"
#include "block_shim.h"
#include "device/compute.h"
#include "train/kernels/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace fm = mc::device::flash_mma;
using Vec = std::vector<float>;
using mc::test::attention::worst;
using mc::test::shim::CpuCtx;
using mc::test::shim::launch_with;

template <class F>
constexpr mc::device::Precision precision_of() {
  return std::is_same_v<F, fm::Bf16> ? mc::device::Precision::bf16 : mc::device::Precision::tf32;
}

struct Errors {
  double out = 0, prob = 0, dqkv = 0;
};

template <int HS, class F>
Errors run(int B, int T, int Hl) {
  const int D = Hl * HS;
  const float scale = 1.0f / std::sqrt(float(HS));
  // The reference sees what the kernels stage: inputs rounded to the format.
  const auto c = mc::test::attention::reference(uint32_t(HS * 1000 + T), B, T, Hl, HS,
                                                [](float x) { return mc::device::round_to(precision_of<F>(), x); });
  const Vec &qkv = c.qkv, &dout = c.dout, &out_ref = c.out, &att = c.att, &dqkv_ref = c.dqkv;

  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int tiles = (T + fm::kTile - 1) / fm::kTile, Tp = fm::padded(T);
  // The kernels' inputs: the format's elements as laid out and transposed (the GPU's layout pass; here its
  // CPU version).
  using E = typename F::E;
  std::vector<E> qkv_e(qkv.size()), qkv_t(size_t(B) * 3 * D * Tp), dout_e(dout.size()), dout_t(size_t(B) * D * Tp);
  fm::to_layouts<F>(qkv_e.data(), qkv_t.data(), qkv.data(), B, T, 3 * D);
  fm::to_layouts<F>(dout_e.data(), dout_t.data(), dout.data(), B, T, D);
  fm::Inputs<F> in;
  in.qkv = qkv_e.data(), in.qkv_t = qkv_t.data(), in.dout = dout_e.data(), in.dout_t = dout_t.data();
  in.T = T, in.Tp = Tp, in.Hl = Hl;
  Vec out(out_ref.size(), nan), L(size_t(B) * Hl * T, nan);
  launch_with(fm::kThreads, tiles, B * Hl, 0, fm::forward_smem_bytes<HS, F>(),
              [&](CpuCtx& cx) { fm::forward_block<HS, F>(cx, out.data(), L.data(), in, scale); });
  Errors e;
  e.out = worst(out_ref, out);
  e.prob = mc::test::attention::probabilities_from_L(qkv, L, att, B, T, Hl, HS);

  const Vec Drow = mc::test::attention::rowdot(dout, out, B, T, Hl, HS);  // from the kernels' own output
  Vec dqkv(qkv.size(), nan);
  launch_with(fm::kThreads, tiles, B * Hl, 0, fm::backward_kv_smem_bytes<HS, F>(),
              [&](CpuCtx& cx) { fm::backward_kv_block<HS, F>(cx, dqkv.data(), in, L.data(), Drow.data(), scale); });
  launch_with(fm::kThreads, tiles, B * Hl, 0, fm::backward_q_smem_bytes<HS, F>(),
              [&](CpuCtx& cx) { fm::backward_q_block<HS, F>(cx, dqkv.data(), in, L.data(), Drow.data(), scale); });
  e.dqkv = worst(dqkv_ref, dqkv);
  return e;
}

// Bounds: P and dS rounded to the format (a relative step of 2^-8 in bf16, 2^-11 in TF32) before their
// products; the sums over up to T terms average that rounding, so the worst element stays near half a step
// of the tensor's largest.
template <int HS, class F>
void check(int B, int T, int Hl, double bound_out, double bound_dqkv) {
  const char* name = std::is_same_v<F, fm::Bf16> ? "bf16" : "tf32";
  SCOPED_TRACE(std::string(name) + ", B " + std::to_string(B) + ", T " + std::to_string(T) + ", heads " +
               std::to_string(Hl) + ", hs " + std::to_string(HS));
  const Errors e = run<HS, F>(B, T, Hl);
  std::printf("    %s hs %d T %d: out %.2e, probabilities %.2e, dqkv %.2e\n", name, HS, T, e.out, e.prob, e.dqkv);
  EXPECT_LT(e.out, bound_out) << "attention output";
  EXPECT_LT(e.prob, 1e-4) << "probabilities from L";
  EXPECT_LT(e.dqkv, bound_dqkv) << "attention dqkv";
}

TEST(FlashMma, BlocksMatchTheReferenceAttentionOnBfloatInputs) {
  check<16, fm::Bf16>(2, 67, 1, 4e-3, 8e-3);   // T not a multiple of the 64-row tiles
  check<32, fm::Bf16>(1, 130, 1, 4e-3, 8e-3);  // three tiles, the last with two rows
  check<64, fm::Bf16>(1, 128, 2, 4e-3, 8e-3);  // whole tiles
}

TEST(FlashMma, BlocksMatchTheReferenceAttentionOnTf32Inputs) {
  check<16, fm::Tf32>(2, 67, 1, 5e-4, 1e-3);
  check<32, fm::Tf32>(1, 130, 1, 5e-4, 1e-3);
  check<64, fm::Tf32>(1, 128, 1, 5e-4, 1e-3);
}

// The shim's instruction against a plain 16 x 16 by 16 x 8 product, so the fragment layout the kernels
// assume is the one the emulation follows (the GPU test checks it against the hardware).
TEST(FlashMma, FragmentsAreThePtxLayout) {
  float A[16][16], Bm[16][8];
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k) A[r][k] = float(r - k) * 0.25f;
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) Bm[k][n] = float((k * 3 + n) % 7) - 3.0f;
  // A row-major (ld 16) and B^T row-major (ld 16), as the kernels stage them.
  std::vector<uint16_t> a16(256), bt16(128);
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k) a16[size_t(r * 16 + k)] = fm::bf16_bits(A[r][k]);
  for (int n = 0; n < 8; ++n)
    for (int k = 0; k < 16; ++k) bt16[size_t(n * 16 + k)] = fm::bf16_bits(Bm[k][n]);
  float C[16][8];
  launch_with(32, 1, 1, 0, 0, [&](CpuCtx& cx) {
    const int lane = cx.tid(), g = lane >> 2, c2 = (lane & 3) * 2;
    uint32_t a[4], b[2];
    fm::Bf16::frag_a(a, a16.data(), 16, 0, 0, lane);
    fm::Bf16::frag_b(b, bt16.data(), 16, 0, 0, lane);
    float c[4] = {0, 0, 0, 0};
    cx.mma_bf16(c, a, b);
    for (int e = 0; e < 4; ++e) C[g + (e >= 2 ? 8 : 0)][c2 + (e & 1)] = c[e];
  });
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n) {
      float want = 0;
      for (int k = 0; k < 16; ++k) want += A[r][k] * Bm[k][n];
      EXPECT_EQ(C[r][n], want) << "row " << r << " column " << n;
    }
}

// TF32: the fragments and the instruction as above, and c_to_a, which moves a C tile into an A fragment
// with shuffles: the A it makes, times a B, is the C tile's values (rounded) times that B.
TEST(FlashMma, Tf32FragmentsAndTheShuffleIntoAAreThePtxLayout) {
  float A[16][8], Bm[8][8];
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 8; ++k) A[r][k] = float(r - 2 * k) * 0.125f;
  for (int k = 0; k < 8; ++k)
    for (int n = 0; n < 8; ++n) Bm[k][n] = float((k * 5 + n) % 9) - 4.0f;
  std::vector<uint32_t> a32(128), bt32(64);
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 8; ++k) a32[size_t(r * 8 + k)] = fm::tf32_bits(A[r][k]);
  for (int n = 0; n < 8; ++n)
    for (int k = 0; k < 8; ++k) bt32[size_t(n * 8 + k)] = fm::tf32_bits(Bm[k][n]);
  float C[16][8], C2[16][8];
  launch_with(32, 1, 1, 0, 0, [&](CpuCtx& cx) {
    const int lane = cx.tid(), g = lane >> 2, c2 = (lane & 3) * 2;
    uint32_t a[4], b[2];
    fm::Tf32::frag_a(a, a32.data(), 8, 0, 0, lane);
    fm::Tf32::frag_b(b, bt32.data(), 8, 0, 0, lane);
    float c[4] = {0, 0, 0, 0};
    cx.mma_tf32(c, a, b);
    for (int e = 0; e < 4; ++e) C[g + (e >= 2 ? 8 : 0)][c2 + (e & 1)] = c[e];
    // A itself as a C tile (its columns 0..7 are tile 3's here), moved into an A fragment by c_to_a.
    float tiles[8][4] = {};
    for (int e = 0; e < 4; ++e) tiles[3][e] = A[g + (e >= 2 ? 8 : 0)][c2 + (e & 1)];
    uint32_t moved[4];
    fm::Tf32::c_to_a(cx, moved, tiles, 3, lane);
    float d[4] = {0, 0, 0, 0};
    cx.mma_tf32(d, moved, b);
    for (int e = 0; e < 4; ++e) C2[g + (e >= 2 ? 8 : 0)][c2 + (e & 1)] = d[e];
  });
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n) {
      float want = 0;
      for (int k = 0; k < 8; ++k) want += A[r][k] * Bm[k][n];
      EXPECT_EQ(C[r][n], want) << "row " << r << " column " << n;
      EXPECT_EQ(C2[r][n], want) << "through c_to_a: row " << r << " column " << n;
    }
}

}  // namespace
