// train_kernels.h - the training lab's heavy kernels on a CUDA GPU (implemented in train_kernels.cu, only
// compiled when nvcc is found). Plain C++: no CUDA types, so the engine's .cpp files and the tests include
// it without the toolkit's headers.
//
// mc::cuda::dev::* take device pointers (from device_alloc); kernels and cuBLAS calls run on the legacy
// default stream, so consecutive calls are ordered; nothing is copied to or from the host. The trainer
// reaches them through the device interface (engine/cuda/cuda_device.cu implements device/compute.h).
// Semantics (what is overwritten, what is accumulated) are those of the CPU reference in every case.
// Every CUDA and cuBLAS call is checked: a failure throws std::runtime_error naming the call and the
// runtime's error string; nothing calls exit().
//
// cuBLAS: this toolkit ships libcublas only as a shared library, and the binaries must start on machines
// without the toolkit (cudart is linked statically for the same reason), so cuBLAS is opened at run time
// with dlopen on first use. If it is not found, the first call throws and cuda::available() says why.
// Products in fp32 (CUBLAS_DEFAULT_MATH, comparable with the CPU reference at fp32 tolerances) unless
// set_precision asks for tf32 or bf16 inputs.
//
// Devices and threads: each GPU has its own cuBLAS handle and scratch pool behind a mutex; a call runs on
// the calling thread's device (set_thread_device; 0 unless set) and calls to one device serialise.
// Device pointers from dev:: belong to the device that was current when they were allocated.
#pragma once

#include <cstdint>
#include <string>

namespace mc::cuda {

// True when a device answers and cuBLAS loads; otherwise false and *why (when given) says what failed.
// Cheap after the first call (the answer is cached).
bool available(std::string* why = nullptr);

// GPUs this process can use (0 when available() is false; at most 64).
int device_count();
// The device this thread's later calls run on (0 to device_count() - 1); throws when out of range.
void set_thread_device(int device);
int thread_device();

// Device memory. device_free(nullptr) is a no-op; sizes <= 0 give nullptr.
void* device_alloc_bytes(int64_t bytes);
float* device_alloc(int64_t n_floats);
int32_t* device_alloc_i32(int64_t n);
double* device_alloc_f64(int64_t n);  // e.g. softmax_xent_forward's row_loss
void device_free(void* p);
void to_device(void* dst, const void* src, int64_t bytes);
void to_host(void* dst, const void* src, int64_t bytes);
void device_synchronize();

// How the row-major sgemm of gemm.h maps onto column-major cuBLAS. A row-major (r x c) matrix with
// leading dimension ld is, read column-major, its (c x r) transpose with the same ld; so
// C = op(A) op(B) (row-major) is C^T = op(B)^T op(A)^T (column-major): cuBLAS gets B first, A second,
// m = N, n = M, and each operand keeps its own transpose flag. Kept here (plain C++) so the mapping is
// unit-tested on machines without a GPU against a column-major reference.
struct ColMajorGemm {
  bool trans_first = false, trans_second = false;  // op flags for cuBLAS's A and B
  int m = 0, n = 0, k = 0;
  const float* first = nullptr;  // cuBLAS A
  int ld_first = 0;
  const float* second = nullptr;  // cuBLAS B
  int ld_second = 0;
  float beta = 0;  // 1 when accumulating into C
};
inline ColMajorGemm colmajor_gemm_for_rowmajor(bool trans_a, bool trans_b, int M, int N, int K, const float* A, int lda,
                                               const float* B, int ldb, bool accumulate) {
  ColMajorGemm g;
  g.trans_first = trans_b;
  g.trans_second = trans_a;
  g.m = N;
  g.n = M;
  g.k = K;
  g.first = B;
  g.ld_first = ldb;
  g.second = A;
  g.ld_second = lda;
  g.beta = accumulate ? 1.0f : 0.0f;
  return g;
}
// Elements a row-major (rows x cols) matrix with leading dimension ld spans: what must be copied.
inline int64_t rowmajor_span(int rows, int cols, int ld) {
  return rows <= 0 || cols <= 0 ? 0 : int64_t(rows - 1) * ld + cols;
}

namespace dev {
// Device-pointer versions. Shapes and semantics as in ops.h / gemm.h, with these differences:
//  - attention_backward's scratch holds Hl*T*T floats (the CPU version needs T*T);
//  - softmax_xent_forward writes each row's loss (nats, as double) to row_loss(N) instead of returning
//    the sum (summing on the host in row order reproduces the CPU's double accumulation).
void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                       int C);
void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                        const float* mean, const float* rstd, int N, int C);
void gelu_forward(float* out, const float* x, int64_t n);
void gelu_backward(float* dx, const float* x, const float* dout, int64_t n);
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int Hl, int hs);
void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* att, float* scratch, int B,
                        int T, int Hl, int hs);
void linear_forward(float* y, const float* x, const float* w, const float* bias, int N, int K, int M);
void linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x, const float* w, int N, int K,
                     int M, bool accumulate_dx);
void softmax_xent_forward(float* logits, const int32_t* targets, double* row_loss, int N, int V);
void softmax_xent_backward(float* probs, const int32_t* targets, int N, int V, float scale);
void sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
           int ldc, bool accumulate);
void adamw(float* params, const float* grads, float* m, float* v, int64_t n, float lr, float beta1, float beta2,
           float bias_correction1, float bias_correction2, float eps, float weight_decay, float grad_scale);
// The device interface's remaining kernels (device/compute.h has their contracts).
void targets_from_tokens(int32_t* targets, const int32_t* tokens, int B, int T);
void embedding_forward(float* out, const float* wte, const float* wpe, const int32_t* tokens, int B, int T, int C);
void embedding_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B, int T, int C, int V);
void residual(float* out, const float* x, const float* part, const float* bias, int N, int C);
void add(float* dst, const float* src, int64_t n);
void sum_squares(double* acc, const float* x, int64_t n);
// Device::sum_squares_many and adamw_many (device/compute.h): one launch for a list of slices, the same bits
// as a call per slice.
struct SquaresSlice {
  const float* x;
  int64_t n;
};
struct AdamWSlice {
  float* params;
  const float* grads;
  float* m;
  float* v;
  int64_t n;
  float weight_decay;
};
void sum_squares_many(double* acc, const SquaresSlice* slices, int count);
void adamw_many(const AdamWSlice* slices, int count, float lr, float beta1, float beta2, float bias_correction1,
                float bias_correction2, float eps, float grad_scale);
// softmax_xent_forward, then *loss_sum += the rows' losses in row order (loss_sum may be null).
void softmax_xent_forward_sum(float* logits, const int32_t* targets, double* loss_sum, int N, int V);
// Fused causal attention (FlashAttention; train_kernels.cu): L(B, Hl, T) keeps each row's log-sum-exp
// instead of the (T,T) probabilities; head sizes 16, 32 and 64. Under set_precision(2) (bf16) on a GPU of
// compute capability 8.0 or later, Q, K, V, dO, P and dS are multiplied as bf16 on the tensor cores
// (device/flash_mma.h); under set_precision(1) as TF32 there when MC_ATTENTION_TF32=mma asks; otherwise in
// fp32.
bool flash_attention_supports(int hs);
void flash_attention_forward(float* out, float* L, const float* qkv, int B, int T, int Hl, int hs);
void flash_attention_backward(float* dqkv, const float* dout, const float* qkv, const float* out, const float* L, int B,
                              int T, int Hl, int hs);
// This thread's products from now on: 0 fp32, 1 tf32, 2 bf16 (device::Precision).
void set_precision(int p);
void memset_zero(void* p, int64_t bytes);
void copy_device(void* dst, const void* src, int64_t bytes);  // ordered on the default stream (UVA: any GPU)
}  // namespace dev

}  // namespace mc::cuda
