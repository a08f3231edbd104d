// The training lab's thread pool (gemm.h) changes speed, never results: the same run with 1, 2 or 3
// threads gives the same bits, the pool's pieces cover every index once, and the block-causal attention
// equals the textbook full-square formula computed in double.
#include "train/kernels/gemm.h"
#include "train/kernels/ops.h"
#include "train/model/worker.h"
#include "train/train.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace {

using namespace mc::train;

// Restores the pool size a test changed.
struct ThreadsGuard {
  int before = thread_count();
  ~ThreadsGuard() { set_thread_count(before); }
};

TEST(TrainThreads, ParallelForRunsEveryTaskOnce) {
  ThreadsGuard g;
  for (int threads : {1, 2, 3}) {
    set_thread_count(threads);
    EXPECT_EQ(thread_count(), threads);
    std::vector<std::atomic<int>> hits(1000);
    parallel_for(1000, [&](int i) {
      hits[size_t(i)]++;
      parallel_for(3, [&](int) {});  // nested: runs inline, no deadlock
    });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
  int64_t b, e, covered = 0;
  for (int i = 0; i < 7; ++i) {
    piece_range(1001, 7, i, 16, b, e);
    EXPECT_EQ(b, covered);
    EXPECT_TRUE(b % 16 == 0 || b == 1001);
    covered = e;
  }
  EXPECT_EQ(covered, 1001);
}

TEST(TrainThreads, ATaskThatThrowsReachesTheCallerAndThePoolStaysUsable) {
  ThreadsGuard g;
  for (int threads : {1, 2, 3}) {
    set_thread_count(threads);
    std::atomic<int> ran{0};
    EXPECT_THROW(parallel_for(200,
                              [&](int i) {
                                ++ran;
                                if (i == 17) throw std::runtime_error("task 17");
                              }),
                 std::runtime_error);
    EXPECT_GE(ran.load(), 1);
    // The pool is free again and parallel again (not stuck in the nested, serial mode).
    std::vector<std::atomic<int>> hits(500);
    parallel_for(500, [&](int i) { hits[size_t(i)]++; });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

TEST(TrainThreads, SgemmIsTheSameBitsForAnyThreadCount) {
  ThreadsGuard g;
  const int M = 700, N = 300, K = 129;
  std::vector<float> a(size_t(M) * K), b(size_t(K) * N);
  Rng r{1};
  for (float& x : a) x = float(r.normal());
  for (float& x : b) x = float(r.normal());
  std::vector<float> c1(size_t(M) * N), c2(c1.size());
  set_thread_count(1);
  sgemm(false, false, M, N, K, a.data(), K, b.data(), N, c1.data(), N, false);
  set_thread_count(2);
  sgemm(false, false, M, N, K, a.data(), K, b.data(), N, c2.data(), N, false);
  EXPECT_EQ(c1, c2);
  // And it is the product: one element against a double dot product.
  double ref = 0;
  for (int k = 0; k < K; ++k) ref += double(a[size_t(5) * K + size_t(k)]) * b[size_t(k) * N + 7];
  EXPECT_NEAR(c1[size_t(5) * N + 7], ref, 1e-4 * K);
}

TEST(TrainThreads, TrainingIsTheSameBitsForAnyThreadCount) {
  ThreadsGuard g;
  // Big enough that every kernel is cut into several pieces and attention has several 64-row blocks
  // (context 160 is not a multiple of the block), small enough for a unit test.
  TrainConfig c;
  c.model = {.vocab = 256, .context = 160, .layers = 2, .width = 64, .heads = 4};
  c.batch = 4;
  c.steps = 3;
  c.seed = 7;
  c.parallel = {.dp = 2, .tp = 2, .pp = 1, .zero = 1};
  std::vector<std::vector<double>> losses;
  std::vector<std::vector<float>> params;
  for (int threads : {1, 2, 3}) {
    set_thread_count(threads);
    Trainer t(c, default_corpus());
    while (t.step_index() < c.steps) t.step();
    losses.push_back(t.losses());
    params.push_back(t.full_parameters());
  }
  for (size_t i = 1; i < losses.size(); ++i) {
    EXPECT_EQ(losses[i], losses[0]) << "run " << i;
    EXPECT_EQ(params[i], params[0]) << "run " << i;
  }
  EXPECT_LT(losses[0].back(), losses[0].front());
}

// Causal attention of one head in double, full square: P = softmax(q k^T / sqrt(hs) + mask), y = P v,
// and the backward of sum(y * dy).
void reference_attention(const std::vector<float>& qkv, const std::vector<float>& dy, int T, int hs, int H, int h,
                         int b, std::vector<double>& y, std::vector<double>& dq, std::vector<double>& dk,
                         std::vector<double>& dv) {
  const int D = H * hs;
  auto at = [&](int t, int part, int e) {
    return double(qkv[(size_t(b) * T + size_t(t)) * 3 * D + size_t(part * D + h * hs + e)]);
  };
  auto g = [&](int t, int e) { return double(dy[(size_t(b) * T + size_t(t)) * D + size_t(h * hs + e)]); };
  std::vector<double> P(size_t(T) * T, 0.0), dP(size_t(T) * T, 0.0);
  y.assign(size_t(T) * hs, 0.0);
  dq.assign(size_t(T) * hs, 0.0);
  dk.assign(size_t(T) * hs, 0.0);
  dv.assign(size_t(T) * hs, 0.0);
  const double scale = 1.0 / std::sqrt(double(hs));
  for (int i = 0; i < T; ++i) {
    double mx = -1e300, sum = 0;
    for (int j = 0; j <= i; ++j) {
      double s = 0;
      for (int e = 0; e < hs; ++e) s += at(i, 0, e) * at(j, 1, e);
      P[size_t(i) * T + size_t(j)] = s * scale;
      mx = std::max(mx, s * scale);
    }
    for (int j = 0; j <= i; ++j) sum += (P[size_t(i) * T + size_t(j)] = std::exp(P[size_t(i) * T + size_t(j)] - mx));
    for (int j = 0; j <= i; ++j) P[size_t(i) * T + size_t(j)] /= sum;
    for (int j = 0; j <= i; ++j)
      for (int e = 0; e < hs; ++e) {
        y[size_t(i) * hs + size_t(e)] += P[size_t(i) * T + size_t(j)] * at(j, 2, e);
        dv[size_t(j) * hs + size_t(e)] += P[size_t(i) * T + size_t(j)] * g(i, e);
        dP[size_t(i) * T + size_t(j)] += g(i, e) * at(j, 2, e);
      }
    double dot = 0;
    for (int j = 0; j <= i; ++j) dot += P[size_t(i) * T + size_t(j)] * dP[size_t(i) * T + size_t(j)];
    for (int j = 0; j <= i; ++j) {
      const double ds = P[size_t(i) * T + size_t(j)] * (dP[size_t(i) * T + size_t(j)] - dot) * scale;
      for (int e = 0; e < hs; ++e) {
        dq[size_t(i) * hs + size_t(e)] += ds * at(j, 1, e);
        dk[size_t(j) * hs + size_t(e)] += ds * at(i, 0, e);
      }
    }
  }
}

TEST(TrainThreads, BlockCausalAttentionMatchesTheFullSquare) {
  const int B = 2, T = 150, H = 2, hs = 16, D = H * hs;
  std::vector<float> qkv(size_t(B) * T * 3 * D), dy(size_t(B) * T * D);
  Rng r{11};
  for (float& x : qkv) x = float(r.normal());
  for (float& x : dy) x = float(r.normal());
  std::vector<float> y(size_t(B) * T * D), att(size_t(B) * H * T * T, 123.0f), dqkv(qkv.size());
  ops::attention_forward(y.data(), att.data(), qkv.data(), B, T, H, hs);
  ops::attention_backward(dqkv.data(), dy.data(), qkv.data(), att.data(), nullptr, B, T, H, hs);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      std::vector<double> ry, rdq, rdk, rdv;
      reference_attention(qkv, dy, T, hs, H, h, b, ry, rdq, rdk, rdv);
      for (int t = 0; t < T; ++t) {
        // Above the diagonal att holds exact zeros (every backend may read the whole square).
        for (int j = t + 1; j < T; ++j)
          ASSERT_EQ(att[((size_t(b) * H + size_t(h)) * T + size_t(t)) * T + size_t(j)], 0.0f);
        for (int e = 0; e < hs; ++e) {
          const size_t row = (size_t(b) * T + size_t(t)) * 3 * D + size_t(h * hs + e);
          EXPECT_NEAR(y[(size_t(b) * T + size_t(t)) * D + size_t(h * hs + e)], ry[size_t(t) * hs + size_t(e)], 1e-4);
          EXPECT_NEAR(dqkv[row], rdq[size_t(t) * hs + size_t(e)], 1e-4);
          EXPECT_NEAR(dqkv[row + size_t(D)], rdk[size_t(t) * hs + size_t(e)], 1e-4);
          EXPECT_NEAR(dqkv[row + 2 * size_t(D)], rdv[size_t(t) * hs + size_t(e)], 1e-4);
        }
      }
    }
}

}  // namespace
