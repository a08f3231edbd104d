// gemm_avx2.cpp - sgemm and the element-wise kernels compiled for AVX2 + FMA, used only when the CPU
// reports both (gemm.cpp checks at run time). The build uses the baseline x86-64 ISA (SSE2) so the
// binaries run anywhere; engine/CMakeLists.txt compiles this one file with -mavx2 -mfma and defines
// MC_TRAIN_HAVE_AVX2 (x86-64 GCC/Clang only, never Emscripten). Eigen's namespace is renamed here so its
// AVX2 template instances never merge with the baseline ones other files instantiate (one definition
// rule: the linker would otherwise keep either copy, and a baseline caller could land in AVX2 code).
#if defined(MC_TRAIN_HAVE_AVX2)
#if !defined(__AVX2__) || !defined(__FMA__)
#error "gemm_avx2.cpp must be compiled with -mavx2 -mfma (see engine/CMakeLists.txt)"
#endif
#define Eigen mc_train_avx2_Eigen
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
namespace {
#include "train/kernels/gemm_impl.inc"
}

void sgemm(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
           bool accumulate) {
  sgemm_body(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, accumulate);
}
void tanh_inplace(float* x, int64_t n) { tanh_body(x, n); }
void exp_inplace(float* x, int64_t n) { exp_body(x, n); }
}  // namespace mc::train::avx2
#endif
