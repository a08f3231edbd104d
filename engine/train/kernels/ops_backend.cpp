// ops_backend.cpp - the kernel tables (ops_backend.h): the CPU reference, the CUDA table when a GPU
// answers, the choice between them with its reason, and AdamW on the CPU.
#include "train/kernels/ops_backend.h"

#include "device/device.h"
#include "train/kernels/gemm.h"
#include "train/kernels/ops.h"

#ifdef MC_HAVE_CUDA
#include "cuda/nccl_collectives.h"
#include "cuda/train_kernels.h"
#endif

#include <cmath>

namespace mc::train {

void adamw_cpu(float* P, const float* G, float* M, float* V, int64_t n, float lr, float b1, float b2, float c1,
               float c2, float eps, float wd, float cs) {
  // Same statements, same order as Trainer::Impl::optimizer_step (trainer.cpp), so results are identical.
  for (int64_t i = 0; i < n; ++i) {
    const float g = G[i] * cs;
    M[i] = b1 * M[i] + (1 - b1) * g;
    V[i] = b2 * V[i] + (1 - b2) * g * g;
    const float mh = M[i] * c1, vh = V[i] * c2;
    P[i] -= lr * (mh / (std::sqrt(vh) + eps) + wd * P[i]);
  }
}

float adamw_bias_correction(double beta, int step_1based) {
  return float(1.0 / (1.0 - std::pow(beta, double(step_1based))));
}

const OpsBackend& cpu_backend() {
  static const OpsBackend b = [] {
    OpsBackend t;
    t.name = "cpu";
    t.layernorm_forward = ops::layernorm_forward;
    t.layernorm_backward = ops::layernorm_backward;
    t.gelu_forward = ops::gelu_forward;
    t.gelu_backward = ops::gelu_backward;
    t.attention_forward = ops::attention_forward;
    t.attention_backward = ops::attention_backward;
    t.linear_forward = ops::linear_forward;
    t.linear_backward = ops::linear_backward;
    t.softmax_xent_forward = ops::softmax_xent_forward;
    t.softmax_xent_backward = ops::softmax_xent_backward;
    t.sgemm = sgemm;
    t.adamw = adamw_cpu;
    return t;
  }();
  return b;
}

namespace {
struct CudaChoice {
  const OpsBackend* table = nullptr;
  std::string reason;
};

CudaChoice probe_cuda() {
  CudaChoice c;
  const DeviceInfo& d = device_info();
#ifdef MC_HAVE_CUDA
  if (!d.gpu_available) {
    c.reason = d.message;
    return c;
  }
  std::string why;
  if (!cuda::available(&why)) {  // the GPU answered, but the context or cuBLAS did not come up
    c.reason = "GPU " + d.gpu_name + " found, but the CUDA kernels cannot run: " + why + "; using the CPU";
    return c;
  }
  static const OpsBackend b = [] {
    OpsBackend t;
    t.name = "cuda";
    t.layernorm_forward = cuda::host::layernorm_forward;
    t.layernorm_backward = cuda::host::layernorm_backward;
    t.gelu_forward = cuda::host::gelu_forward;
    t.gelu_backward = cuda::host::gelu_backward;
    t.attention_forward = cuda::host::attention_forward;
    t.attention_backward = cuda::host::attention_backward;
    t.linear_forward = cuda::host::linear_forward;
    t.linear_backward = cuda::host::linear_backward;
    t.softmax_xent_forward = cuda::host::softmax_xent_forward;
    t.softmax_xent_backward = cuda::host::softmax_xent_backward;
    t.sgemm = cuda::host::sgemm;
    t.adamw = cuda::host::adamw;
    t.bind_worker = [](int worker) {
      static const int gpus = cuda::device_count();
      if (gpus > 1) cuda::set_thread_device(cuda::device_of_worker(worker, gpus));
    };
    return t;
  }();
  c.table = &b;
  c.reason = "cuda: " + d.gpu_name;
#else
  c.reason = d.message;
#endif
  return c;
}
}  // namespace

const OpsBackend* cuda_backend(std::string* reason) {
  static const CudaChoice choice = probe_cuda();
  if (reason) *reason = choice.reason;
  return choice.table;
}

std::unique_ptr<CollectiveBackend> gpu_collectives(std::string* why) {
#ifdef MC_HAVE_CUDA
  return cuda::make_nccl_backend(why);
#else
  if (why) *why = "built without CUDA: the collectives are the engine's own rings";
  return nullptr;
#endif
}

const OpsBackend& select_backend(bool prefer_gpu, std::string* note) {
  if (prefer_gpu) {
    if (const OpsBackend* g = cuda_backend(note)) return *g;
  } else if (note) {
    *note = "cpu: requested";
  }
  return cpu_backend();
}

}  // namespace mc::train
