// gemm.cpp - the lab's matrix multiply and thread pool (gemm.h): work cut in pieces chosen from the shapes
// alone so results never depend on the thread count, AVX2 + FMA picked at run time when the CPU has them.
//
// Sections: the kernel paths (WebAssembly SIMD, AVX2, portable body from gemm_impl.inc); the thread pool
// (Pool, pool(), MC_THREADS); how a product is cut into pieces (gemm_pieces, sgemm); vector tanh/exp; the
// GFLOP/s probe.
#include "train/kernels/gemm.h"
#if defined(__wasm_simd128__)
#include "train/kernels/gemm_wasm.h"  // SIMD128 kernels for the web build (Eigen 3.4 has no wasm packet math)
#endif

// Every product through the blocked GEMM kernel: Eigen's small-size coefficient path peels to the first
// aligned address, so its summation order (and rounding) would depend on where buffers happen to lie.
#define EIGEN_GEMM_TO_COEFFBASED_THRESHOLD 0
#include <Eigen/Core>
#include <algorithm>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#ifndef __EMSCRIPTEN__
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#if defined(__linux__)
#include <sched.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#endif
#include <vector>

namespace mc::train {

// engine/CMakeLists.txt compiles gemm_avx2.cpp with -mavx2 -mfma (x86-64 GCC/Clang, not Emscripten) and
// defines MC_TRAIN_HAVE_AVX2; this file stays at the baseline ISA and picks the AVX2 code at run time.
#if defined(MC_TRAIN_HAVE_AVX2)
namespace avx2 {
void sgemm(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
           bool accumulate);
void tanh_inplace(float* x, int64_t n);
void exp_inplace(float* x, int64_t n);
}  // namespace avx2
static bool use_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
#define MC_TRAIN_DISPATCH 1
#endif

namespace {
#include "train/kernels/gemm_impl.inc"
}

namespace {

void sgemm_one(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
               int ldc, bool accumulate) {
#if defined(__wasm_simd128__)
  return wasm::sgemm(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
#endif
#ifdef MC_TRAIN_DISPATCH
  if (use_avx2()) return avx2::sgemm(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
#endif
  sgemm_body(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}

#ifndef __EMSCRIPTEN__
int parse_threads(const char* s) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 1 || v > 256)
    throw std::invalid_argument(std::string("MC_THREADS=\"") + s +
                                "\": expected a whole number of threads from 1 to 256 (1 = no helper threads); "
                                "unset it to use every CPU this process may run on");
  return int(v);
}

int default_threads() {
  if (const char* e = std::getenv("MC_THREADS"); e && *e) return parse_threads(e);
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

thread_local bool t_in_task = false;  // nested parallel_for runs serially

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// A persistent pool: helpers spin briefly for the next job (the lab's kernels come back to back), then
// sleep on a condition variable. Tasks are claimed from an atomic counter; callers make each task's
// output independent of which thread ran it, so results never depend on timing.
class Pool {
 public:
  explicit Pool(int threads) : threads_(threads) {
    for (int i = 1; i < threads; ++i) helpers_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    stop_.store(true);
    gen_.fetch_add(1);
    { std::lock_guard<std::mutex> l(m_); }
    cv_.notify_all();
    for (auto& t : helpers_) t.join();
  }
  int threads() const { return threads_; }

  // False when the pool is busy (another thread's job): the caller then runs the tasks itself.
  bool run(int n, void (*task)(void*, int), void* ctx) {
    std::unique_lock<std::mutex> busy(submit_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    task_ = task;
    ctx_ = ctx;
    n_ = n;
    error_ = nullptr;
    next_.store(0);
    active_.store(int(helpers_.size()));
    gen_.fetch_add(1);  // seq_cst: pairs with the sleepers_ check in loop()
    if (sleepers_.load() > 0) {
      { std::lock_guard<std::mutex> l(m_); }
      cv_.notify_all();
    }
    work();
    // Always wait for the helpers, even after a task threw: they use the caller's task and context.
    for (int spin = 0; active_.load(std::memory_order_acquire) != 0; ++spin)
      if (spin < 4000)
        cpu_relax();
      else
        std::this_thread::yield();
    if (error_) std::rethrow_exception(error_);  // the first task that threw, on the caller's thread
    return true;
  }

 private:
  // Claims tasks until none is left. A task that throws stops the claiming (the remaining tasks are
  // skipped) and its exception is kept for run() to rethrow once every thread is out.
  void work() {
    t_in_task = true;
    try {
      for (int i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < n_;) task_(ctx_, i);
    } catch (...) {
      std::lock_guard<std::mutex> l(error_m_);
      if (!error_) error_ = std::current_exception();
      next_.store(n_);
    }
    t_in_task = false;
  }
  void loop() {
    uint64_t seen = 0;  // not gen_.load(): a job may be posted before this thread first runs
    for (;;) {
      // About 200 us of spinning covers the gap between two kernels of one step without a futex round trip.
      const auto t0 = std::chrono::steady_clock::now();
      for (int spin = 1; gen_.load(std::memory_order_acquire) == seen; ++spin) {
        cpu_relax();
        if (spin % 256 == 0 && std::chrono::steady_clock::now() - t0 > std::chrono::microseconds(200)) break;
      }
      if (gen_.load() == seen) {
        std::unique_lock<std::mutex> l(m_);
        sleepers_.fetch_add(1);
        cv_.wait(l, [&] { return gen_.load() != seen; });
        sleepers_.fetch_sub(1);
      }
      seen = gen_.load();
      if (stop_.load()) return;
      work();
      active_.fetch_sub(1, std::memory_order_release);
    }
  }

  const int threads_;
  std::vector<std::thread> helpers_;
  std::mutex submit_, m_;
  std::condition_variable cv_;
  std::atomic<uint64_t> gen_{0};
  std::atomic<int> sleepers_{0}, next_{0}, active_{0};
  std::atomic<bool> stop_{false};
  void (*task_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  int n_ = 0;
  std::mutex error_m_;
  std::exception_ptr error_;
};

std::mutex g_pool_mutex;
std::unique_ptr<Pool> g_pool;
std::atomic<Pool*> g_pool_ptr{nullptr};

Pool* pool() {
  if (Pool* p = g_pool_ptr.load(std::memory_order_acquire)) return p;
  std::lock_guard<std::mutex> l(g_pool_mutex);
  if (!g_pool) {
    g_pool = std::make_unique<Pool>(default_threads());
    g_pool_ptr.store(g_pool.get(), std::memory_order_release);
  }
  return g_pool.get();
}
#endif

// How many pieces of C a product is cut into: from the shape alone (never the thread count), so every
// thread count gives the same bits (Eigen's kernel picks its register blocks by a row's position in the
// piece, and the rows at a piece's end are summed in another order). Each piece repacks the operand it
// shares with the others, which costs about 1 / (piece width) of the work, so pieces stay wide: 2 from 128
// rows or columns, 4 from 1024 (even counts balance on two cores), each of about a million multiply-adds
// or more.
int gemm_pieces(int M, int N, int K) {
  const double macs = double(M) * N * K;
  const int dim = std::max(M, N);
  int p = dim >= 1024 ? 4 : dim >= 128 ? 2 : 1;
  while (p > 1 && macs / p < 1.0e6) p /= 2;
  return p;
}

}  // namespace

int thread_count() {
#ifdef __EMSCRIPTEN__
  return 1;
#else
  return pool()->threads();
#endif
}

void set_thread_count(int n) {
  if (n < 1) throw std::invalid_argument("set_thread_count: the thread count must be at least 1");
#ifndef __EMSCRIPTEN__
  std::lock_guard<std::mutex> l(g_pool_mutex);
  g_pool_ptr.store(nullptr);
  g_pool.reset();
  g_pool = std::make_unique<Pool>(n);
  g_pool_ptr.store(g_pool.get(), std::memory_order_release);
#endif
}

void parallel_for(int n, void (*task)(void*, int), void* ctx) {
  if (n <= 0) return;
#ifndef __EMSCRIPTEN__
  if (n > 1 && !t_in_task) {
    Pool* p = pool();
    if (p->threads() > 1 && p->run(n, task, ctx)) return;
  }
#endif
  for (int i = 0; i < n; ++i) task(ctx, i);  // nested or pool busy: in order, exceptions pass straight up
}

void sgemm_serial(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
                  int ldc, bool accumulate) {
  if (M <= 0 || N <= 0) return;
  sgemm_one(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}

void sgemm(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
           bool accumulate) {
  if (M <= 0 || N <= 0) return;
#if defined(__wasm_simd128__)
  // The web build has one thread, so pieces would only repack the operand they share once per piece; the
  // SIMD128 kernel's sums depend on K alone, so one piece gives the same bits.
  return sgemm_one(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
#endif
  const int pieces = gemm_pieces(M, N, K);
  if (pieces == 1) return sgemm_one(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
  const bool by_rows = M >= N;
  parallel_for(pieces, [&](int i) {
    int64_t b, e;
    if (by_rows) {
      piece_range(M, pieces, i, 16, b, e);
      const float* Ai = ta ? A + b : A + b * lda;
      sgemm_one(ta, tb, int(e - b), N, K, Ai, lda, B, ldb, C + b * ldc, ldc, accumulate);
    } else {
      piece_range(N, pieces, i, 16, b, e);
      const float* Bi = tb ? B + b * ldb : B + b;
      sgemm_one(ta, tb, M, int(e - b), K, A, lda, Bi, ldb, C + b, ldc, accumulate);
    }
  });
}

void tanh_inplace(float* x, int64_t n) {
#if defined(__wasm_simd128__)
  return wasm::tanh_inplace(x, n);
#endif
#ifdef MC_TRAIN_DISPATCH
  if (use_avx2()) return avx2::tanh_inplace(x, n);
#endif
  tanh_body(x, n);
}

void exp_inplace(float* x, int64_t n) {
#if defined(__wasm_simd128__)
  return wasm::exp_inplace(x, n);
#endif
#ifdef MC_TRAIN_DISPATCH
  if (use_avx2()) return avx2::exp_inplace(x, n);
#endif
  exp_body(x, n);
}

const char* sgemm_path() {
#if defined(__wasm_simd128__)
  return "wasm-simd128";
#endif
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
