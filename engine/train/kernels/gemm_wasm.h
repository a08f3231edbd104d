// gemm_wasm.h - the training lab's sgemm (gemm_wasm.cpp) and exp, tanh, GELU (elementwise_wasm.cpp) in
// WebAssembly SIMD128, compiled only when the compiler targets it, i.e. the web build with -msimd128;
// gemm.cpp and ops.cpp call these from their `#if defined(__wasm_simd128__)` blocks. Eigen 3.4 has no wasm
// packet math, so without these its GEMM and its exp/tanh run one float at a time.
#pragma once

#if defined(__wasm_simd128__)
#include <cstdint>

namespace mc::train::wasm {

// Exactly mc::train::sgemm's contract (gemm.h): C(M,N) = op(A) op(B), or C += ... when accumulate;
// row-major with leading dimensions. Each element of C is summed in an order fixed by K alone (blocks of
// kKc, each from zero in k order, then added to C), so results repeat bit for bit.
void sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
           int ldc, bool accumulate);

// Element-wise exp and tanh in place; every element's result depends only on its value (no position- or
// alignment-dependent tails: the last partial vector goes through the same code via a padded copy).
void exp_inplace(float* x, int64_t n);
void tanh_inplace(float* x, int64_t n);

// ops::gelu_forward's element-wise work, the same bits as its scalar loops around tanh_inplace:
// out = gelu(x).
void gelu_forward(float* out, const float* x, int64_t n);
// ops::gelu_backward's, the same bits as its scalar loops around exp_inplace: dx = dout gelu'(x).
void gelu_backward(float* dx, const float* x, const float* dout, int64_t n);

}  // namespace mc::train::wasm
#endif
