// cpu_device.h - the CPU reference implementation of the training lab's device (device/compute.h): device
// memory is host memory (64-byte aligned), the kernels are ops.h / gemm.h on the lab's thread pool, and
// every copy across the "edge" is counted as the GPU's would be, so tests can hold a training step to
// the traffic a GPU step may have. Always available; the web build runs on it.
#pragma once

#include "device/compute.h"

#include <memory>
#include <string>

namespace mc::train {

class CpuDevice : public device::Device {
 public:
  const char* name() const override { return "cpu"; }
  std::string description() const override;
  device::MemorySpace memory_space() const override { return device::MemorySpace::host; }

  device::DPtr<char> allocate_bytes(int64_t bytes) override;
  void free_bytes(device::DPtr<char> p) override;

  void layernorm_forward(device::DPtr<float> out, device::DPtr<float> mean, device::DPtr<float> rstd,
                         device::DPtr<const float> x, device::DPtr<const float> w, device::DPtr<const float> b, int N,
                         int C) override;
  void layernorm_backward(device::DPtr<float> dx, device::DPtr<float> dw, device::DPtr<float> db,
                          device::DPtr<const float> dout, device::DPtr<const float> x, device::DPtr<const float> w,
                          device::DPtr<const float> mean, device::DPtr<const float> rstd, int N, int C) override;
  void gelu_forward(device::DPtr<float> out, device::DPtr<const float> x, int64_t n) override;
  void gelu_backward(device::DPtr<float> dx, device::DPtr<const float> x, device::DPtr<const float> dout,
                     int64_t n) override;
  int64_t attention_state_floats(int B, int T, int Hl, int hs) const override;
  void attention_forward(device::DPtr<float> out, device::DPtr<float> state, device::DPtr<const float> qkv, int B,
                         int T, int Hl, int hs) override;
  void attention_backward(device::DPtr<float> dqkv, device::DPtr<const float> dout, device::DPtr<const float> qkv,
                          device::DPtr<const float> out, device::DPtr<const float> state, int B, int T, int Hl,
                          int hs) override;
  void linear_forward(device::DPtr<float> y, device::DPtr<const float> x, device::DPtr<const float> w,
                      device::DPtr<const float> bias, int N, int K, int M) override;
  void linear_backward(device::DPtr<float> dx, device::DPtr<float> dw, device::DPtr<float> db,
                       device::DPtr<const float> dy, device::DPtr<const float> x, device::DPtr<const float> w, int N,
                       int K, int M, bool accumulate_dx) override;
  void sgemm(bool trans_a, bool trans_b, int M, int N, int K, device::DPtr<const float> A, int lda,
             device::DPtr<const float> B, int ldb, device::DPtr<float> C, int ldc, bool accumulate) override;
  void softmax_xent_forward(device::DPtr<float> logits, device::DPtr<const int32_t> targets,
                            device::DPtr<double> loss_sum, int N, int V) override;
  void softmax_xent_backward(device::DPtr<float> probs, device::DPtr<const int32_t> targets, int N, int V,
                             float scale) override;
  void targets_from_tokens(device::DPtr<int32_t> targets, device::DPtr<const int32_t> tokens, int B, int T) override;
  void embedding_forward(device::DPtr<float> out, device::DPtr<const float> wte, device::DPtr<const float> wpe,
                         device::DPtr<const int32_t> tokens, int B, int T, int C) override;
  void embedding_backward(device::DPtr<float> dwte, device::DPtr<float> dwpe, device::DPtr<const float> dout,
                          device::DPtr<const int32_t> tokens, int B, int T, int C, int V) override;
  void residual(device::DPtr<float> out, device::DPtr<const float> x, device::DPtr<const float> part,
                device::DPtr<const float> bias, int N, int C) override;
  void add(device::DPtr<float> dst, device::DPtr<const float> src, int64_t n) override;
  void sum_squares(device::DPtr<double> acc, device::DPtr<const float> x, int64_t n) override;
  void adamw(device::DPtr<float> params, device::DPtr<const float> grads, device::DPtr<float> m, device::DPtr<float> v,
             int64_t n, float lr, float beta1, float beta2, float bias_correction1, float bias_correction2, float eps,
             float weight_decay, float grad_scale) override;

 protected:
  void copy_to_device(device::DPtr<char> dst, const void* src, int64_t bytes) override;
  void copy_to_host(void* dst, device::DPtr<const char> src, int64_t bytes) override;
  void copy_on_device(device::DPtr<char> dst, device::DPtr<const char> src, int64_t bytes) override;
  void zero_bytes(device::DPtr<char> dst, int64_t bytes) override;

 private:
  // Inputs of a product rounded to the precision's format (fp32: the input itself, no copy).
  const float* rounded(const float* x, int64_t n, int slot);
  std::unique_ptr<float[]> round_buf_[3];
  int64_t round_cap_[3] = {0, 0, 0};
};

// A fresh CPU device (each trainer owns one, so its transfer counters are its own). The registry opens the
// same ("cpu", registered in cpu_device.cpp); tests that compare against the reference call this directly.
std::unique_ptr<device::Device> make_cpu_device();

}  // namespace mc::train
