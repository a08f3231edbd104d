// ops_backend.h - the training lab's kernels as a table of function pointers, so a caller picks the CPU
// reference or the CUDA kernels at run time (the CUDA ones exist only when built with nvcc AND a GPU answers).
//
// Every entry has exactly the signature of its CPU reference in ops.h (plus sgemm from gemm.h and adamw
// below) and the same semantics, on HOST pointers: the CUDA table's entries copy to the GPU, run there and
// copy back (engine/cuda/train_kernels.h), so swapping tables changes no caller code.
//
// How a caller (stage.cpp / the trainer) selects it:
//   std::string why;
//   const mc::train::OpsBackend& K = mc::train::select_backend(/*prefer_gpu=*/true, &why);
//   K.layernorm_forward(out, mean, rstd, x, w, b, N, C);  // ... instead of ops::layernorm_forward
//   // why: "cuda: NVIDIA H100 ..." or the reason the CPU is used ("built without CUDA ...").
// Keep the chosen table for the whole run: mixing backends inside one step is correct but pays copies
// both ways each call. Per-call copies make the GPU table slower than the CPU for small shapes; the
// device-pointer API (mc::cuda::dev) is the one to keep a whole step resident on the GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "train/parallel/comm.h"

namespace mc::train {

struct OpsBackend {
  const char* name = "";  // "cpu" or "cuda"
  void (*layernorm_forward)(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b,
                            int N, int C) = nullptr;
  void (*layernorm_backward)(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                             const float* mean, const float* rstd, int N, int C) = nullptr;
  void (*gelu_forward)(float* out, const float* x, int64_t n) = nullptr;
  void (*gelu_backward)(float* dx, const float* x, const float* dout, int64_t n) = nullptr;
  void (*attention_forward)(float* out, float* att, const float* qkv, int B, int T, int Hl, int hs) = nullptr;
  void (*attention_backward)(float* dqkv, const float* dout, const float* qkv, const float* att, float* scratch,
                             int B, int T, int Hl, int hs) = nullptr;
  void (*linear_forward)(float* y, const float* x, const float* w, const float* bias, int N, int K,
                         int M) = nullptr;
  void (*linear_backward)(float* dx, float* dw, float* db, const float* dy, const float* x, const float* w, int N,
                          int K, int M, bool accumulate_dx) = nullptr;
  double (*softmax_xent_forward)(float* logits, const int32_t* targets, int N, int V) = nullptr;
  void (*softmax_xent_backward)(float* probs, const int32_t* targets, int N, int V, float scale) = nullptr;
  void (*sgemm)(bool trans_a, bool trans_b, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                float* C, int ldc, bool accumulate) = nullptr;
  void (*adamw)(float* params, const float* grads, float* m, float* v, int64_t n, float lr, float beta1,
                float beta2, float bias_correction1, float bias_correction2, float eps, float weight_decay,
                float grad_scale) = nullptr;
  // Where virtual worker `worker`'s next calls run (the CUDA table: GPU worker % GPUs, so a workstation's
  // GPUs share the workers round-robin; nullptr on the CPU). Callers invoke it before a worker's kernels.
  void (*bind_worker)(int worker) = nullptr;
};

// AdamW (Loshchilov & Hutter 2019, Alg. 2) over n elements, the formula of Trainer::Impl::optimizer_step:
//   g = grads * grad_scale; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
//   params -= lr * (m * bias_correction1 / (sqrt(v * bias_correction2) + eps) + weight_decay * params),
// bias_correction{1,2} = 1 / (1 - beta{1,2}^t) for 1-based step t (adamw_bias_correction computes it the
// trainer's way, in double then rounded); weight_decay 0 for LayerNorm gains and biases.
void adamw_cpu(float* params, const float* grads, float* m, float* v, int64_t n, float lr, float beta1, float beta2,
               float bias_correction1, float bias_correction2, float eps, float weight_decay, float grad_scale);
float adamw_bias_correction(double beta, int step_1based);

// The CPU reference (ops.h, gemm.h, adamw_cpu). Always available.
const OpsBackend& cpu_backend();
// The CUDA kernels, when this binary was built with CUDA, a GPU answers (device_info()) and cuBLAS loads;
// otherwise nullptr and *reason (when given) says why. The probe runs once; later calls are cheap.
const OpsBackend* cuda_backend(std::string* reason = nullptr);
// cuda_backend() when prefer_gpu and available, else cpu_backend(); *note says which and why.
const OpsBackend& select_backend(bool prefer_gpu, std::string* note = nullptr);

// The ring collectives on the GPUs through NCCL (engine/cuda/nccl_collectives.h) when this build has CUDA
// and the machine two or more GPUs; otherwise nullptr and *why says why (the engine's rings are used).
std::unique_ptr<CollectiveBackend> gpu_collectives(std::string* why = nullptr);

}  // namespace mc::train
