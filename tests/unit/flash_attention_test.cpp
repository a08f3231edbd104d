// The fused attention's arithmetic (device/flash_attention.h), run on the CPU in the order the CUDA kernels
// run it (engine/cuda/train_kernels.cu: per query row the keys in order for the output and dQ, per key row
// the queries in order for dK and dV), against the reference attention (ops::attention_forward/backward,
// which keeps the (T,T) probabilities). What this cannot check without a GPU is the kernels' tiling and
// threads; CudaKernels.CausalAttentionForwardBackward compares those with the CPU where a GPU is found.
#include "device/flash_attention.h"
#include "train/kernels/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using Vec = std::vector<float>;

template <int HS>
void flash_forward(Vec& out, Vec& L, const Vec& qkv, int B, int T, int Hl) {
  const int D = Hl * HS;
  const float scale = 1.0f / std::sqrt(float(HS));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hl; ++h)
      for (int i = 0; i < T; ++i) {
        const float* base = qkv.data() + int64_t(b) * T * 3 * D + h * HS;
        float q[HS], acc[HS] = {};
        for (int d = 0; d < HS; ++d) q[d] = base[int64_t(i) * 3 * D + d] * scale;
        float m = -INFINITY, l = 0.0f;
        for (int j = 0; j <= i; ++j)
          mc::device::flash::forward_key<HS>(q, base + int64_t(j) * 3 * D + D, base + int64_t(j) * 3 * D + 2 * D, acc,
                                             m, l);
        for (int d = 0; d < HS; ++d) out[size_t((int64_t(b) * T + i) * D + h * HS + d)] = acc[d] / l;
        L[size_t((int64_t(b) * Hl + h) * T + i)] = m + std::log(l);
      }
}

template <int HS>
void flash_backward(Vec& dqkv, const Vec& dout, const Vec& qkv, const Vec& out, const Vec& L, int B, int T, int Hl) {
  const int D = Hl * HS;
  const float scale = 1.0f / std::sqrt(float(HS));
  Vec Drow(size_t(B) * Hl * T);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hl; ++h)
      for (int i = 0; i < T; ++i) {
        float s = 0;
        for (int d = 0; d < HS; ++d)
          s += dout[size_t((int64_t(b) * T + i) * D + h * HS + d)] * out[size_t((int64_t(b) * T + i) * D + h * HS + d)];
        Drow[size_t((int64_t(b) * Hl + h) * T + i)] = s;
      }
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hl; ++h) {
      const float* base = qkv.data() + int64_t(b) * T * 3 * D + h * HS;
      const float* db = dout.data() + int64_t(b) * T * D + h * HS;
      const float* Lr = L.data() + (int64_t(b) * Hl + h) * T;
      const float* Dr = Drow.data() + (int64_t(b) * Hl + h) * T;
      for (int j = 0; j < T; ++j) {  // dK, dV: the key row's thread
        float dk[HS] = {}, dv[HS] = {};
        const float* k = base + int64_t(j) * 3 * D + D;
        const float* v = k + D;
        for (int i = j; i < T; ++i) {
          const float* q = base + int64_t(i) * 3 * D;
          float pr, dsc;
          mc::device::flash::pair_gradients<HS>(q, k, v, db + int64_t(i) * D, Lr[i], Dr[i], scale, pr, dsc);
          for (int d = 0; d < HS; ++d) dv[d] += pr * db[int64_t(i) * D + d], dk[d] += dsc * q[d];
        }
        float* dkr = dqkv.data() + (int64_t(b) * T + j) * 3 * D + D + h * HS;
        for (int d = 0; d < HS; ++d) dkr[d] = dk[d], dkr[D + d] = dv[d];
      }
      for (int i = 0; i < T; ++i) {  // dQ: the query row's thread
        float dq[HS] = {};
        const float* q = base + int64_t(i) * 3 * D;
        for (int j = 0; j <= i; ++j) {
          const float* k = base + int64_t(j) * 3 * D + D;
          float pr, dsc;
          mc::device::flash::pair_gradients<HS>(q, k, k + D, db + int64_t(i) * D, Lr[i], Dr[i], scale, pr, dsc);
          for (int d = 0; d < HS; ++d) dq[d] += dsc * k[d];
        }
        float* dqr = dqkv.data() + (int64_t(b) * T + i) * 3 * D + h * HS;
        for (int d = 0; d < HS; ++d) dqr[d] = dq[d];
      }
    }
}

double worst(const Vec& want, const Vec& got) {
  double scale = 0, err = 0;
  for (float v : want) scale = std::max(scale, double(std::fabs(v)));
  for (size_t i = 0; i < want.size(); ++i) err = std::max(err, double(std::fabs(want[i] - got[i])));
  return err / scale;  // relative to the tensor's largest value
}

template <int HS>
void check(int B, int T, int Hl) {
  std::mt19937 g(uint32_t(HS * 1000 + T));
  auto vec = [&](size_t n) {
    Vec v(n);
    for (float& x : v) x = float(int(g() % 2001) - 1000) * 1e-3f * 2.0f;
    return v;
  };
  const int D = Hl * HS;
  const Vec qkv = vec(size_t(B) * T * 3 * D), dout = vec(size_t(B) * T * D);
  Vec out_ref(size_t(B) * T * D), att(size_t(B) * Hl * T * T), dqkv_ref(qkv.size());
  mc::train::ops::attention_forward(out_ref.data(), att.data(), qkv.data(), B, T, Hl, HS);
  mc::train::ops::attention_backward(dqkv_ref.data(), dout.data(), qkv.data(), att.data(), nullptr, B, T, Hl, HS);
  Vec out(out_ref.size()), L(size_t(B) * Hl * T), dqkv(qkv.size());
  flash_forward<HS>(out, L, qkv, B, T, Hl);
  flash_backward<HS>(dqkv, dout, qkv, out, L, B, T, Hl);
  EXPECT_LT(worst(out_ref, out), 1e-5) << "out, hs " << HS;
  EXPECT_LT(worst(dqkv_ref, dqkv), 1e-4) << "dqkv, hs " << HS;
  // L is the log-sum-exp of each row's scaled scores: exp(s_ij - L_i) are the reference's probabilities.
  const float* q = qkv.data();
  const int i = T - 1;
  double total = 0;
  for (int j = 0; j <= i; ++j) {
    float sc = 0;
    for (int d = 0; d < HS; ++d) sc += q[int64_t(i) * 3 * D + d] * q[int64_t(j) * 3 * D + D + d];
    total += std::exp(double(sc) / std::sqrt(double(HS)) - L[size_t(i)]);
  }
  EXPECT_NEAR(total, 1.0, 1e-5) << "the probabilities of a row sum to one";
}

TEST(FlashAttention, AlgorithmMatchesTheReferenceAttention) {
  check<16>(2, 70, 3);  // T not a multiple of the kernels' 32-row tiles
  check<32>(1, 33, 2);
  check<64>(2, 64, 2);
}

}  // namespace
