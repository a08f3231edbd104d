#include "train/gemm.h"

// Every product through the blocked GEMM kernel: Eigen's small-size coefficient path peels to the first
// aligned address, so its summation order (and rounding) would depend on where buffers happen to lie.
#define EIGEN_GEMM_TO_COEFFBASED_THRESHOLD 0
#include <Eigen/Core>
#include <algorithm>

#include <chrono>
#include <functional>
#ifndef __EMSCRIPTEN__
#include <condition_variable>
#include <mutex>
#include <thread>
#endif
#include <vector>

namespace mc::train {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__)
namespace avx2 {
void sgemm(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
           int ldc, bool accumulate);
void tanh_inplace(float* x, int64_t n);
void exp_inplace(float* x, int64_t n);
}
static bool use_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
#define MC_TRAIN_DISPATCH 1
#endif

namespace {
#include "train/gemm_impl.inc"
}

namespace {

void sgemm_one(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
               int ldc, bool accumulate) {
#ifdef MC_TRAIN_DISPATCH
  if (use_avx2()) return avx2::sgemm(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
#endif
  sgemm_body(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}

#ifndef __EMSCRIPTEN__
// One helper thread: a large product is cut in two halves of C, computed at once on two cores. The cut
// depends only on the shape, so a run repeats bit for bit (the web build is single-threaded).
class Helper {
 public:
  Helper() : thread_([this] { loop(); }) {}
  ~Helper() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void run_pair(const std::function<void()>& mine, const std::function<void()>& theirs) {
    {
      std::lock_guard<std::mutex> l(m_);
      job_ = theirs;
      pending_ = true;
    }
    cv_.notify_all();
    mine();
    std::unique_lock<std::mutex> l(m_);
    done_cv_.wait(l, [this] { return !pending_; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      cv_.wait(l, [this] { return stop_ || (pending_ && job_); });
      if (stop_) return;
      std::function<void()> j = std::move(job_);
      job_ = nullptr;
      l.unlock();
      j();
      l.lock();
      pending_ = false;
      done_cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  std::function<void()> job_;
  bool pending_ = false, stop_ = false;
  std::thread thread_;
};

Helper* helper() {
  if (std::thread::hardware_concurrency() < 2) return nullptr;
  static Helper h;
  return &h;
}
#endif

}  // namespace

void sgemm(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
           int ldc, bool accumulate) {
  if (M <= 0 || N <= 0) return;
#ifndef __EMSCRIPTEN__
  // Worth a second core from about 2 million multiply-adds (the hand-off costs a few microseconds).
  if (double(M) * N * K >= 2.0e6 && (M >= 64 || N >= 64)) {
    if (Helper* h = helper()) {
      if (M >= N) {
        const int m0 = M / 2;
        const float* A2 = ta ? A + m0 : A + int64_t(m0) * lda;
        h->run_pair([&] { sgemm_one(ta, tb, m0, N, K, A, lda, B, ldb, C, ldc, accumulate); },
                    [&] { sgemm_one(ta, tb, M - m0, N, K, A2, lda, B, ldb, C + int64_t(m0) * ldc, ldc, accumulate); });
      } else {
        const int n0 = N / 2;
        const float* B2 = tb ? B + int64_t(n0) * ldb : B + n0;
        h->run_pair([&] { sgemm_one(ta, tb, M, n0, K, A, lda, B, ldb, C, ldc, accumulate); },
                    [&] { sgemm_one(ta, tb, M, N - n0, K, A, lda, B2, ldb, C + n0, ldc, accumulate); });
      }
      return;
    }
  }
#endif
  sgemm_one(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}

void tanh_inplace(float* x, int64_t n) {
#ifdef MC_TRAIN_DISPATCH
  if (use_avx2()) return avx2::tanh_inplace(x, n);
#endif
  tanh_body(x, n);
}

void exp_inplace(float* x, int64_t n) {
#ifdef MC_TRAIN_DISPATCH
  if (use_avx2()) return avx2::exp_inplace(x, n);
#endif
  exp_body(x, n);
}

const char* sgemm_path() {
#ifdef MC_TRAIN_DISPATCH
  if (use_avx2()) return "avx2+fma";
#endif
  return "baseline";
}

double measure_sgemm_gflops(int M, int N, int K, double seconds) {
  std::vector<float> a(size_t(M) * size_t(K)), b(size_t(K) * size_t(N)), c(size_t(M) * size_t(N));
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 17) - 8) * 0.01f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 13) - 6) * 0.01f;
  double best = 0;
  const auto start = std::chrono::steady_clock::now();
  do {
    const auto t0 = std::chrono::steady_clock::now();
    sgemm(false, false, M, N, K, a.data(), K, b.data(), N, c.data(), N, false);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0) best = std::max(best, 2.0 * M * N * K / s / 1e9);
  } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds);
  return best;
}

}  // namespace mc::train
