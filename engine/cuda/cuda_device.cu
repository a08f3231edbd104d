// cuda_device.cu - the training lab's device (device/compute.h) on CUDA GPUs: memory from cudaMalloc, the
// kernels of train_kernels.cu and cuBLAS, everything ordered on each GPU's legacy default stream. Copies
// to and from the host are the interface's counted upload/download (cudaMemcpy, which waits for the
// kernels before it); nothing else crosses. One object serves every GPU of the machine: bind_worker makes
// the worker's GPU (worker % GPUs) current for the calling thread, as the workers share them round-robin.
#include "cuda/cuda_check.h"
#include "cuda/cuda_probe.h"
#include "cuda/nccl_collectives.h"
#include "cuda/op_timer.h"
#include "cuda/train_kernels.h"
#include "device/registry.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>

namespace mc::cuda {
namespace {

using device::DPtr;
using device::Raw;

template <class T>
T* at(DPtr<T> p) {
  return Raw::ptr(p);
}

class CudaDevice final : public device::Device {
 public:
  explicit CudaDevice(int gpus, std::string name) : gpus_(gpus), name_(std::move(name)) {
    // MC_ATTENTION=cublas keeps the materialised (T,T) path everywhere (to measure one against the other).
    const char* a = std::getenv("MC_ATTENTION");
    fused_enabled_ = !(a && std::string(a) == "cublas");
  }
  const char* name() const override { return "cuda"; }
  device::MemorySpace memory_space() const override { return device::MemorySpace::cuda; }
  std::string description() const override {
    return name_ + (gpus_ > 1 ? " (x" + std::to_string(gpus_) + ")" : "") + ", " + device::to_string(precision()) +
           (fused_enabled_ ? ", fused attention" : ", cuBLAS attention");
  }
  void bind_worker(int worker) override {
    if (gpus_ > 1) set_thread_device(device_of_worker(worker, gpus_));
  }
  void synchronize() override { device_synchronize(); }
  void begin_step() override { timer_.begin_step(); }

  DPtr<char> allocate_bytes(int64_t bytes) override {
    return Raw::wrap(static_cast<char*>(device_alloc_bytes(bytes)));  // zeroed
  }
  void free_bytes(DPtr<char> p) override { device_free(at(p)); }

  void layernorm_forward(DPtr<float> out, DPtr<float> mean, DPtr<float> rstd, DPtr<const float> x, DPtr<const float> w,
                         DPtr<const float> b, int N, int C) override {
    OpTimer::Scope timed(&timer_, "layernorm_forward");
    dev::layernorm_forward(at(out), at(mean), at(rstd), at(x), at(w), at(b), N, C);
  }
  void layernorm_backward(DPtr<float> dx, DPtr<float> dw, DPtr<float> db, DPtr<const float> dout, DPtr<const float> x,
                          DPtr<const float> w, DPtr<const float> mean, DPtr<const float> rstd, int N, int C) override {
    OpTimer::Scope timed(&timer_, "layernorm_backward");
    dev::layernorm_backward(at(dx), at(dw), at(db), at(dout), at(x), at(w), at(mean), at(rstd), N, C);
  }
  void gelu_forward(DPtr<float> out, DPtr<const float> x, int64_t n) override {
    OpTimer::Scope timed(&timer_, "gelu_forward");
    dev::gelu_forward(at(out), at(x), n);
  }
  void gelu_backward(DPtr<float> dx, DPtr<const float> x, DPtr<const float> dout, int64_t n) override {
    OpTimer::Scope timed(&timer_, "gelu_backward");
    dev::gelu_backward(at(dx), at(x), at(dout), n);
  }
  // Fused attention keeps each row's log-sum-exp (B*Hl*T floats); the cuBLAS path the (T,T) probabilities.
  int64_t attention_state_floats(int B, int T, int Hl, int hs) const override {
    return fused(hs) ? int64_t(B) * Hl * T : int64_t(B) * Hl * T * T;
  }
  void attention_forward(DPtr<float> out, DPtr<float> state, DPtr<const float> qkv, int B, int T, int Hl,
                         int hs) override {
    OpTimer::Scope timed(&timer_, "attention_forward");
    dev::set_precision(int(precision()));  // bf16 takes the tensor-core kernels (device/flash_mma.h)
    if (fused(hs)) return dev::flash_attention_forward(at(out), at(state), at(qkv), B, T, Hl, hs);
    dev::attention_forward(at(out), at(state), at(qkv), B, T, Hl, hs);
  }
  void attention_backward(DPtr<float> dqkv, DPtr<const float> dout, DPtr<const float> qkv, DPtr<const float> out,
                          DPtr<const float> state, int B, int T, int Hl, int hs) override {
    OpTimer::Scope timed(&timer_, "attention_backward");
    dev::set_precision(int(precision()));
    if (fused(hs)) return dev::flash_attention_backward(at(dqkv), at(dout), at(qkv), at(out), at(state), B, T, Hl, hs);
    const int64_t need = int64_t(Hl) * T * T;  // dP of one sequence's heads, on the GPU that runs it
    device::Buffer<float>& scratch = scratch_[thread_device()];
    if (scratch.size() < need) scratch = device::Buffer<float>(*this, need);
    dev::set_precision(int(precision()));
    dev::attention_backward(at(dqkv), at(dout), at(qkv), at(state), at(scratch.ptr()), B, T, Hl, hs);
  }
  void linear_forward(DPtr<float> y, DPtr<const float> x, DPtr<const float> w, DPtr<const float> bias, int N, int K,
                      int M) override {
    OpTimer::Scope timed(&timer_, "linear_forward");
    dev::set_precision(int(precision()));
    dev::linear_forward(at(y), at(x), at(w), at(bias), N, K, M);
  }
  void linear_backward(DPtr<float> dx, DPtr<float> dw, DPtr<float> db, DPtr<const float> dy, DPtr<const float> x,
                       DPtr<const float> w, int N, int K, int M, bool accumulate_dx) override {
    OpTimer::Scope timed(&timer_, "linear_backward");
    dev::set_precision(int(precision()));
    dev::linear_backward(at(dx), at(dw), at(db), at(dy), at(x), at(w), N, K, M, accumulate_dx);
  }
  void sgemm(bool ta, bool tb, int M, int N, int K, DPtr<const float> A, int lda, DPtr<const float> B, int ldb,
             DPtr<float> C, int ldc, bool accumulate) override {
    OpTimer::Scope timed(&timer_, "sgemm");
    dev::set_precision(int(precision()));
    dev::sgemm(ta, tb, M, N, K, at(A), lda, at(B), ldb, at(C), ldc, accumulate);
  }
  void softmax_xent_forward(DPtr<float> logits, DPtr<const int32_t> targets, DPtr<double> loss_sum, int N,
                            int V) override {
    OpTimer::Scope timed(&timer_, "softmax_xent_forward");
    dev::softmax_xent_forward_sum(at(logits), at(targets), at(loss_sum), N, V);
  }
  void softmax_xent_backward(DPtr<float> probs, DPtr<const int32_t> targets, int N, int V, float scale) override {
    OpTimer::Scope timed(&timer_, "softmax_xent_backward");
    dev::softmax_xent_backward(at(probs), at(targets), N, V, scale);
  }
  void targets_from_tokens(DPtr<int32_t> targets, DPtr<const int32_t> tokens, int B, int T) override {
    OpTimer::Scope timed(&timer_, "targets_from_tokens");
    dev::targets_from_tokens(at(targets), at(tokens), B, T);
  }
  void embedding_forward(DPtr<float> out, DPtr<const float> wte, DPtr<const float> wpe, DPtr<const int32_t> tokens,
                         int B, int T, int C) override {
    OpTimer::Scope timed(&timer_, "embedding_forward");
    dev::embedding_forward(at(out), at(wte), at(wpe), at(tokens), B, T, C);
  }
  void embedding_backward(DPtr<float> dwte, DPtr<float> dwpe, DPtr<const float> dout, DPtr<const int32_t> tokens, int B,
                          int T, int C, int V) override {
    OpTimer::Scope timed(&timer_, "embedding_backward");
    dev::embedding_backward(at(dwte), at(dwpe), at(dout), at(tokens), B, T, C, V);
  }
  void residual(DPtr<float> out, DPtr<const float> x, DPtr<const float> part, DPtr<const float> bias, int N,
                int C) override {
    OpTimer::Scope timed(&timer_, "residual");
    dev::residual(at(out), at(x), at(part), at(bias), N, C);
  }
  void add(DPtr<float> dst, DPtr<const float> src, int64_t n) override {
    OpTimer::Scope timed(&timer_, "add");
    dev::add(at(dst), at(src), n);
  }
  void sum_squares(DPtr<double> acc, DPtr<const float> x, int64_t n) override {
    OpTimer::Scope timed(&timer_, "sum_squares");
    dev::sum_squares(at(acc), at(x), n);
  }
  void sum_squares_many(DPtr<double> acc, const std::vector<SquaresSlice>& slices) override {
    OpTimer::Scope timed(&timer_, "sum_squares");
    std::vector<dev::SquaresSlice> raw;
    raw.reserve(slices.size());
    for (const SquaresSlice& sl : slices) raw.push_back({at(sl.x), sl.n});
    dev::sum_squares_many(at(acc), raw.data(), int(raw.size()));
  }
  void adamw_many(const std::vector<AdamWSlice>& slices, float lr, float b1, float b2, float c1, float c2, float eps,
                  float cs) override {
    OpTimer::Scope timed(&timer_, "adamw");
    std::vector<dev::AdamWSlice> raw;
    raw.reserve(slices.size());
    for (const AdamWSlice& sl : slices)
      raw.push_back({at(sl.params), at(sl.grads), at(sl.m), at(sl.v), sl.n, sl.weight_decay});
    dev::adamw_many(raw.data(), int(raw.size()), lr, b1, b2, c1, c2, eps, cs);
  }
  void adamw(DPtr<float> params, DPtr<const float> grads, DPtr<float> m, DPtr<float> v, int64_t n, float lr, float b1,
             float b2, float c1, float c2, float eps, float wd, float cs) override {
    OpTimer::Scope timed(&timer_, "adamw");
    dev::adamw(at(params), at(grads), at(m), at(v), n, lr, b1, b2, c1, c2, eps, wd, cs);
  }

 protected:
  void copy_to_device(DPtr<char> dst, const void* src, int64_t bytes) override {
    OpTimer::Scope timed(&timer_, "upload");
    to_device(at(dst), src, bytes);
  }
  void copy_to_host(void* dst, DPtr<const char> src, int64_t bytes) override {
    OpTimer::Scope timed(&timer_, "download");
    to_host(dst, at(src), bytes);
  }
  void copy_on_device(DPtr<char> dst, DPtr<const char> src, int64_t bytes) override {
    OpTimer::Scope timed(&timer_, "copy_on_device");
    dev::copy_device(at(dst), at(src), bytes);
  }
  void zero_bytes(DPtr<char> dst, int64_t bytes) override {
    OpTimer::Scope timed(&timer_, "zero_bytes");
    dev::memset_zero(at(dst), bytes);
  }

 private:
  bool fused(int hs) const { return fused_enabled_ && dev::flash_attention_supports(hs); }
  OpTimer timer_;  // MC_CUDA_PROFILE=1: GPU time per operation, printed when the run ends
  bool fused_enabled_ = true;
  int gpus_;
  std::string name_;
  std::map<int, device::Buffer<float>> scratch_;  // attention backward's dP, per GPU
};

}  // namespace
}  // namespace mc::cuda

// ---- Registration ----
// CUDA GPUs as a kind of device (device/registry.h): "auto" prefers them when one answers; NCCL serves the
// collectives in place when the machine has two or more.
namespace mc::cuda {
namespace {

device::DeviceProbe probe_cuda() {
  const CudaProbe p = cuda_probe();
  device::DeviceProbe d;
  d.available = p.device_count > 0;
  d.units = p.device_count;
  d.hardware = p.name;
  d.memory_bytes = p.memory_bytes;
  if (d.available) {
    d.message =
        "CUDA GPU found: " + p.name + " (" + std::to_string(p.device_count) + " device(s)); GPU kernels enabled";
    d.label = "CUDA GPU: " + p.name;
  } else {
    d.message = "built with CUDA, but no GPU was found (" + p.error + "); using the CPU";
    d.label = "CPU (no GPU found)";
  }
  return d;
}

std::unique_ptr<device::Device> open_cuda(std::string* why) {
  const CudaProbe p = cuda_probe();
  if (p.device_count <= 0) {
    if (why) *why = "built with CUDA, but no GPU was found (" + p.error + ")";
    return nullptr;
  }
  std::string reason;
  if (!available(&reason)) {
    if (why) *why = "GPU " + p.name + " found, but the CUDA kernels cannot run: " + reason;
    return nullptr;
  }
  return std::make_unique<CudaDevice>(device_count(), p.name);
}

// Built field by field: this file is compiled as C++17 (CMAKE_CUDA_STANDARD), without designated initializers.
device::DeviceKind cuda_kind() {
  device::DeviceKind k;
  k.name = "cuda";
  k.summary = "CUDA GPUs";
  k.preference = 100;
  k.host_memory = false;
  k.several_per_process = true;
  k.precisions = {device::Precision::fp32, device::Precision::tf32, device::Precision::bf16};
  k.probe = probe_cuda;
  k.open = open_cuda;
  k.open_collectives = [](std::string* why) { return make_nccl_backend(why); };
  return k;
}

const device::DeviceRegistrar registered{cuda_kind()};

}  // namespace
}  // namespace mc::cuda
