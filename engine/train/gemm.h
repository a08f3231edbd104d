// gemm.h - the one matrix multiply of the training lab (every linear layer and attention product goes
// through it), and its measured rate for the benchmark.
#pragma once

#include <cstdint>

namespace mc::train {

// C(M,N) = op(A)(M,K) * op(B)(K,N), or C += ... when accumulate. Row-major with leading dimensions
// (elements between rows). op(X) = X^T when the flag is set (then X is stored K x M or N x K).
void sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
           float* C, int ldc, bool accumulate);

// Element-wise tanh and exp in place, vectorised (Eigen's packet math; within a few ulp of libm).
void tanh_inplace(float* x, int64_t n);
void exp_inplace(float* x, int64_t n);

// Which code path sgemm uses: "avx2+fma" (x86-64 CPUs that have it, chosen at run time) or "baseline".
const char* sgemm_path();

// GFLOP/s of sgemm on an (M x K) * (K x N) product, best of a few repetitions lasting about `seconds`.
double measure_sgemm_gflops(int M, int N, int K, double seconds = 0.5);

}  // namespace mc::train
