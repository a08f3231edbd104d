// blas_lt.h - a linear layer's product with its bias added in the product's epilogue, through cuBLASLt
// (opened at run time like cuBLAS), for train_kernels.cu's linear_forward.
//
// Why: without it the bias is first written over the whole output (N x M floats) and the product then
// reads that output back to add to it (beta = 1): two extra passes over an N x M fp32 matrix, as much
// memory traffic as the bf16 product itself for the 12 x 768 model's layers (issue 40, item 3).
// With CUBLASLT_EPILOGUE_BIAS the product writes x w + b once. Where cuBLASLt is missing or finds no
// algorithm for a shape, run() returns false and the caller keeps the two-pass path.
#pragma once

#include <cstdint>

namespace mc::cuda {

// One per GPU context (not thread-safe by itself: the caller holds the context's lock).
class BlasLt {
 public:
  BlasLt();
  ~BlasLt();
  BlasLt(const BlasLt&) = delete;
  BlasLt& operator=(const BlasLt&) = delete;

  // y (N x M, fp32, row-major) = x (N x K) w (K x M) + bias (M): x and w fp32 (precision 0: fp32
  // arithmetic; 1: TF32 tensor ops) or bf16 (precision 2). workspace: a device buffer of
  // kWorkspaceBytes. False (and nothing written) when cuBLASLt cannot: the caller multiplies without it.
  bool linear_bias(int precision, float* y, const void* x, const void* w, const float* bias, int N, int K, int M,
                   void* workspace);
  static constexpr int64_t kWorkspaceBytes = int64_t(32) << 20;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace mc::cuda
