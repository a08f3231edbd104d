// cpu_device.cpp - the CPU reference device (cpu_device.h). Each kernel is the ops.h / gemm.h function on
// the buffers' addresses; what the trainer used to do between kernels on the host (embedding, residual,
// reductions, AdamW) is here with the same statements in the same order, so a run's bits did not change
// when the trainer moved onto the device interface.
#include "train/kernels/cpu_device.h"

#include "device/registry.h"
#include "train/kernels/gemm.h"
#include "train/kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace mc::train {

using device::DPtr;
using device::Raw;

namespace {
template <class T>
T* at(DPtr<T> p) {
  return Raw::ptr(p);
}
// Elements a row-major (rows x cols) matrix with leading dimension ld spans.
int64_t device_span(int rows, int cols, int ld) { return rows <= 0 || cols <= 0 ? 0 : int64_t(rows - 1) * ld + cols; }
}  // namespace

std::string CpuDevice::description() const {
  return "CPU reference (" + std::to_string(thread_count()) + " thread" + (thread_count() == 1 ? "" : "s") + ", " +
         sgemm_path() + ")";
}

DPtr<char> CpuDevice::allocate_bytes(int64_t bytes) {
  if (bytes <= 0) return nullptr;
  const size_t rounded = (size_t(bytes) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  return Raw::wrap(static_cast<char*>(p));
}

void CpuDevice::free_bytes(DPtr<char> p) { std::free(at(p)); }

void CpuDevice::copy_to_device(DPtr<char> dst, const void* src, int64_t bytes) {
  std::memcpy(at(dst), src, size_t(bytes));
}
void CpuDevice::copy_to_host(void* dst, DPtr<const char> src, int64_t bytes) {
  std::memcpy(dst, at(src), size_t(bytes));
}
void CpuDevice::copy_on_device(DPtr<char> dst, DPtr<const char> src, int64_t bytes) {
  std::memmove(at(dst), at(src), size_t(bytes));
}
void CpuDevice::zero_bytes(DPtr<char> dst, int64_t bytes) { std::memset(at(dst), 0, size_t(bytes)); }

const float* CpuDevice::rounded(const float* x, int64_t n, int slot) {
  if (precision() == device::Precision::fp32 || !x) return x;
  if (round_cap_[slot] < n) {
    round_buf_[slot].reset(new float[size_t(n)]);
    round_cap_[slot] = n;
  }
  float* r = round_buf_[slot].get();
  const device::Precision p = precision();
  for (int64_t i = 0; i < n; ++i) r[i] = device::round_to(p, x[i]);
  return r;
}

void CpuDevice::layernorm_forward(DPtr<float> out, DPtr<float> mean, DPtr<float> rstd, DPtr<const float> x,
                                  DPtr<const float> w, DPtr<const float> b, int N, int C) {
  ops::layernorm_forward(at(out), at(mean), at(rstd), at(x), at(w), at(b), N, C);
}

void CpuDevice::layernorm_backward(DPtr<float> dx, DPtr<float> dw, DPtr<float> db, DPtr<const float> dout,
                                   DPtr<const float> x, DPtr<const float> w, DPtr<const float> mean,
                                   DPtr<const float> rstd, int N, int C) {
  ops::layernorm_backward(at(dx), at(dw), at(db), at(dout), at(x), at(w), at(mean), at(rstd), N, C);
}

void CpuDevice::gelu_forward(DPtr<float> out, DPtr<const float> x, int64_t n) { ops::gelu_forward(at(out), at(x), n); }
void CpuDevice::gelu_backward(DPtr<float> dx, DPtr<const float> x, DPtr<const float> dout, int64_t n) {
  ops::gelu_backward(at(dx), at(x), at(dout), n);
}

int64_t CpuDevice::attention_state_floats(int B, int T, int Hl, int /*hs*/) const { return int64_t(B) * Hl * T * T; }

// Reduced precisions round the attention products' q, k, v inputs (the probabilities stay fp32).
void CpuDevice::attention_forward(DPtr<float> out, DPtr<float> state, DPtr<const float> qkv, int B, int T, int Hl,
                                  int hs) {
  const float* q = rounded(at(qkv), int64_t(B) * T * 3 * Hl * hs, 0);
  ops::attention_forward(at(out), at(state), q, B, T, Hl, hs);
}
void CpuDevice::attention_backward(DPtr<float> dqkv, DPtr<const float> dout, DPtr<const float> qkv,
                                   DPtr<const float> out, DPtr<const float> state, int B, int T, int Hl, int hs) {
  (void)out;
  const float* q = rounded(at(qkv), int64_t(B) * T * 3 * Hl * hs, 0);
  const float* d = rounded(at(dout), int64_t(B) * T * Hl * hs, 1);
  ops::attention_backward(at(dqkv), d, q, at(state), nullptr, B, T, Hl, hs);
}

void CpuDevice::linear_forward(DPtr<float> y, DPtr<const float> x, DPtr<const float> w, DPtr<const float> bias, int N,
                               int K, int M) {
  ops::linear_forward(at(y), rounded(at(x), int64_t(N) * K, 0), rounded(at(w), int64_t(K) * M, 1), at(bias), N, K, M);
}
void CpuDevice::linear_backward(DPtr<float> dx, DPtr<float> dw, DPtr<float> db, DPtr<const float> dy,
                                DPtr<const float> x, DPtr<const float> w, int N, int K, int M, bool accumulate_dx) {
  // The bias gradient sums dy in fp32 (a reduction, not a product): only the products' inputs are rounded.
  if (precision() == device::Precision::fp32) {
    ops::linear_backward(at(dx), at(dw), at(db), at(dy), at(x), at(w), N, K, M, accumulate_dx);
    return;
  }
  if (db) {  // by columns, each summed over the rows in order, as ops::linear_backward does
    float* d = at(db);
    const float* y = at(dy);
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < M; ++j) d[j] += y[int64_t(i) * M + j];
  }
  const float* ry = rounded(at(dy), int64_t(N) * M, 2);
  if (dw) train::sgemm(true, false, K, M, N, rounded(at(x), int64_t(N) * K, 0), K, ry, M, at(dw), M, true);
  if (dx) train::sgemm(false, true, N, K, M, ry, M, rounded(at(w), int64_t(K) * M, 1), M, at(dx), K, accumulate_dx);
}

void CpuDevice::sgemm(bool trans_a, bool trans_b, int M, int N, int K, DPtr<const float> A, int lda,
                      DPtr<const float> B, int ldb, DPtr<float> C, int ldc, bool accumulate) {
  const float* a = at(A);
  const float* b = at(B);
  if (precision() != device::Precision::fp32) {
    a = rounded(a, device_span(trans_a ? K : M, trans_a ? M : K, lda), 0);
    b = rounded(b, device_span(trans_b ? N : K, trans_b ? K : N, ldb), 1);
  }
  train::sgemm(trans_a, trans_b, M, N, K, a, lda, b, ldb, at(C), ldc, accumulate);
}

void CpuDevice::softmax_xent_forward(DPtr<float> logits, DPtr<const int32_t> targets, DPtr<double> loss_sum, int N,
                                     int V) {
  const double loss = ops::softmax_xent_forward(at(logits), at(targets), N, V);
  if (loss_sum) *at(loss_sum) += loss;
}
void CpuDevice::softmax_xent_backward(DPtr<float> probs, DPtr<const int32_t> targets, int N, int V, float scale) {
  ops::softmax_xent_backward(at(probs), at(targets), N, V, scale);
}

void CpuDevice::targets_from_tokens(DPtr<int32_t> targets, DPtr<const int32_t> tokens, int B, int T) {
  int32_t* out = at(targets);
  const int32_t* tok = at(tokens);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) out[int64_t(b) * T + t] = tok[int64_t(b) * (T + 1) + t + 1];
}

void CpuDevice::embedding_forward(DPtr<float> out, DPtr<const float> wte_p, DPtr<const float> wpe_p,
                                  DPtr<const int32_t> tokens, int B, int T, int C) {
  float* x = at(out);
  const float* wte = at(wte_p);
  const float* wpe = at(wpe_p);
  const int32_t* tok = at(tokens);
  parallel_for(B, [&](int b) {
    for (int t = 0; t < T; ++t) {
      const int32_t id = tok[int64_t(b) * (T + 1) + t];
      float* o = x + (int64_t(b) * T + t) * C;
      for (int k = 0; k < C; ++k) o[k] = wte[int64_t(id) * C + k] + wpe[int64_t(t) * C + k];
    }
  });
}

void CpuDevice::embedding_backward(DPtr<float> dwte, DPtr<float> dwpe, DPtr<const float> dout,
                                   DPtr<const int32_t> tokens, int B, int T, int C, int /*V: rows by token*/) {
  // Scatter-add by columns: every element still sums its rows in order (tokens repeat within a batch).
  float* gwte = at(dwte);
  float* gwpe = at(dwpe);
  const float* d0 = at(dout);
  const int32_t* tok = at(tokens);
  const int pieces = std::clamp(C / 64, 1, 8);
  parallel_for(pieces, [&](int p) {
    int64_t k0, k1;
    piece_range(C, pieces, p, 16, k0, k1);
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t) {
        const int32_t id = tok[int64_t(b) * (T + 1) + t];
        const float* d = d0 + (int64_t(b) * T + t) * C;
        for (int64_t k = k0; k < k1; ++k) {
          gwte[int64_t(id) * C + k] += d[k];
          gwpe[int64_t(t) * C + k] += d[k];
        }
      }
  });
}

void CpuDevice::residual(DPtr<float> out_p, DPtr<const float> x_p, DPtr<const float> part_p, DPtr<const float> bias_p,
                         int N, int C) {
  // Row by row on the pool (element-wise: the same bits however it is cut).
  float* out = at(out_p);
  const float* x = at(x_p);
  const float* part = at(part_p);
  const float* bias = at(bias_p);
  const int pieces = std::clamp(int(int64_t(N) * C / 16384), 1, 64);
  parallel_for(pieces, [&](int p) {
    int64_t i0, i1;
    piece_range(N, pieces, p, 1, i0, i1);
    for (int64_t i = i0; i < i1; ++i)
      for (int k = 0; k < C; ++k) {
        const int64_t j = i * C + k;
        out[j] = x[j] + (part[j] + bias[k]);
      }
  });
}

void CpuDevice::add(DPtr<float> dst_p, DPtr<const float> src_p, int64_t n) {
  float* dst = at(dst_p);
  const float* src = at(src_p);
  for (int64_t j = 0; j < n; ++j) dst[j] += src[j];
}

void CpuDevice::sum_squares(DPtr<double> acc, DPtr<const float> x, int64_t n) {
  // Partial sums over pieces fixed by n, added in piece order: the same bits whatever the thread count.
  const float* G = at(x);
  const int pieces = int(std::clamp<int64_t>(n / 32768, 1, 64));
  double part[64];
  parallel_for(pieces, [&](int piece) {
    int64_t i0, i1;
    piece_range(n, pieces, piece, 16, i0, i1);
    double a = 0;
    for (int64_t i = i0; i < i1; ++i) a += double(G[i]) * double(G[i]);
    part[piece] = a;
  });
  double& sum = *at(acc);
  for (int piece = 0; piece < pieces; ++piece) sum += part[piece];
}

void CpuDevice::adamw(DPtr<float> params, DPtr<const float> grads, DPtr<float> m, DPtr<float> v, int64_t n, float lr,
                      float b1, float b2, float c1, float c2, float eps, float wd, float cs) {
  float* P = at(params);
  const float* G = at(grads);
  float* M = at(m);
  float* Vv = at(v);
  // Element-wise, so any cut gives the same bits; pieces of at least 32K elements on the pool.
  const int pieces = int(std::clamp<int64_t>(n / 32768, 1, 64));
  parallel_for(pieces, [&](int piece) {
    int64_t i0, i1;
    piece_range(n, pieces, piece, 16, i0, i1);
    for (int64_t i = i0; i < i1; ++i) {
      // AdamW (Loshchilov & Hutter 2019, Alg. 2): decoupled weight decay.
      const float g = G[i] * cs;
      M[i] = b1 * M[i] + (1 - b1) * g;
      Vv[i] = b2 * Vv[i] + (1 - b2) * g * g;
      const float mh = M[i] * c1, vh = Vv[i] * c2;
      P[i] -= lr * (mh / (std::sqrt(vh) + eps) + wd * P[i]);
    }
  });
}

std::unique_ptr<device::Device> make_cpu_device() { return std::make_unique<CpuDevice>(); }

namespace {

// The reference device: always there, the fallback of "auto", what every other kind is checked against.
device::DeviceProbe probe_cpu() {
  device::DeviceProbe p;
  p.available = true;
  p.units = 1;
  p.message = "this build has no GPU device (CUDA kernels need nvcc at configure time); using the CPU";
  p.label = "CPU";
  return p;
}

const device::DeviceRegistrar registered{device::DeviceKind{
    .name = "cpu",
    .summary = "CPU",
    .preference = 0,
    .reference = true,
    .host_memory = true,
    .several_per_process = false,
    .precisions = {device::Precision::fp32, device::Precision::tf32, device::Precision::bf16},
    .probe = probe_cpu,
    .open = [](std::string*) -> std::unique_ptr<device::Device> { return make_cpu_device(); },
    .open_collectives = {},
}};

}  // namespace

}  // namespace mc::train
