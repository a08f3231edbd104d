// gemm.h - the one matrix multiply of the training lab (every linear layer and attention product goes
// through it), its measured rate for the benchmark, and the small thread pool the lab's kernels share.
#pragma once

#include <cstdint>
#include <type_traits>

namespace mc::train {

// C(M,N) = op(A)(M,K) * op(B)(K,N), or C += ... when accumulate. Row-major with leading dimensions
// (elements between rows). op(X) = X^T when the flag is set (then X is stored K x M or N x K).
// A large product is cut into pieces of C chosen from the shape alone and the pieces run on the pool, so
// the result is the same bit for bit whatever the thread count.
void sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
           int ldc, bool accumulate);
// The same product on the calling thread only, in one piece (for small products inside a parallel task).
void sgemm_serial(bool trans_a, bool trans_b, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                  float* C, int ldc, bool accumulate);

// Element-wise tanh and exp in place, vectorised (Eigen's packet math; within a few ulp of libm). Each
// element's result depends only on its value, never on its position or the buffer's alignment.
void tanh_inplace(float* x, int64_t n);
void exp_inplace(float* x, int64_t n);

// Which code path sgemm uses: "avx2+fma" (x86-64 CPUs that have it, chosen at run time) or "baseline".
const char* sgemm_path();

// GFLOP/s of sgemm on an (M x K) * (K x N) product, best of a few repetitions lasting about `seconds`.
double measure_sgemm_gflops(int M, int N, int K, double seconds = 0.5);

// Threads the lab's kernels use, the caller included: the environment variable MC_THREADS when set
// (1 = no helper threads at all), else the CPUs this process may run on (sched_getaffinity). Always 1 in
// the web build. Throws std::invalid_argument when MC_THREADS is not a whole number from 1 to 256.
int thread_count();
// Replaces the pool with one of n threads (n >= 1; for tests and benchmarks). Not while a task runs.
void set_thread_count(int n);

// Runs task(ctx, i) for i in [0, n) on the pool, the caller taking part, and returns when all are done.
// Tasks must write disjoint outputs: which thread runs which task varies from run to run, so a caller that
// needs a reduction keeps one partial per task and adds them in task order. Called from inside a task (or
// while another thread uses the pool) the tasks simply run in order on the calling thread.
void parallel_for(int n, void (*task)(void* ctx, int i), void* ctx);
template <class F>
void parallel_for(int n, F&& f) {
  using G = std::remove_reference_t<F>;
  parallel_for(
      n, [](void* c, int i) { (*static_cast<G*>(c))(i); }, const_cast<void*>(static_cast<const void*>(&f)));
}

// [begin, end) of piece i when `total` items are cut into `pieces` near-equal pieces of whole `quantum`s.
inline void piece_range(int64_t total, int pieces, int i, int64_t quantum, int64_t& begin, int64_t& end) {
  const int64_t units = (total + quantum - 1) / quantum;
  const int64_t b = units * i / pieces, e = units * (i + 1) / pieces;
  begin = b * quantum < total ? b * quantum : total;
  end = e * quantum < total ? e * quantum : total;
}

}  // namespace mc::train
