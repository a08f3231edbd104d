// gemm_avx2.cpp - sgemm compiled for AVX2 + FMA, used only when the CPU reports both (gemm.cpp checks).
// The build uses the baseline x86-64 ISA (SSE2) so the binaries run anywhere; this one file opts in with
// a target pragma and tells Eigen which instruction sets it may use. Eigen's namespace is renamed here so
// its AVX2 template instances never merge with the baseline ones other files instantiate (one definition
// rule: the linker would otherwise keep either copy).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__)
#define MC_TRAIN_HAVE_AVX2_TU 1
#pragma GCC target("avx2,fma")
#define Eigen mc_train_avx2_Eigen
#define __SSE3__ 1
#define __SSSE3__ 1
#define __SSE4_1__ 1
#define __SSE4_2__ 1
#define __AVX__ 1
#define __AVX2__ 1
#define __FMA__ 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Every product through the blocked GEMM kernel: Eigen's small-size coefficient path peels to the first
// aligned address, so its summation order (and rounding) would depend on where buffers happen to lie.
#define EIGEN_GEMM_TO_COEFFBASED_THRESHOLD 0
#include <Eigen/Core>
#include <algorithm>
#pragma GCC diagnostic pop
#include <cstdint>

namespace mc::train::avx2 {
#include "train/gemm_impl.inc"

void sgemm(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
           int ldc, bool accumulate) {
  sgemm_body(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}
void tanh_inplace(float* x, int64_t n) { tanh_body(x, n); }
void exp_inplace(float* x, int64_t n) { exp_body(x, n); }
}  // namespace mc::train::avx2
#endif
