// device_host_ops.h - the compute device interface (device/compute.h) on host vectors, for tests that compare
// a device with a reference: HostOps uploads each call's inputs, runs the kernel and downloads its outputs;
// Rand gives seeded inputs that are the same on every standard library; expect_close compares two results
// and prints the worst errors. Used by cuda_kernels_test.cpp (the GPU against the CPU) and
// device_conformance_test.cpp (every registered device against naive references). Header-only.
#pragma once

#include "device/compute.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace mc::test {

using Vec = std::vector<float>;

// Elements a row-major (rows x cols) matrix with leading dimension ld spans: what a call must copy (the last
// row's padding is not part of it).
inline int64_t matrix_span(int rows, int cols, int ld) {
  return rows <= 0 || cols <= 0 ? 0 : int64_t(rows - 1) * ld + cols;
}

// The device interface on host vectors, for comparing a device with a reference on the same inputs: each call
// uploads its inputs, runs the kernel on the device, and downloads its outputs (accumulated outputs go both
// ways). A null host pointer is a null device pointer.
class HostOps {
 public:
  explicit HostOps(device::Device& d) : d_(d) {}
  device::Device& device() const { return d_; }
  const char* name() const { return d_.name(); }
  // Off (the default): an output starts as the allocation's zeros. On: it starts as the host vector's
  // contents, so a test that fills an output with garbage tells a kernel that overwrites it from one that adds
  // to it.
  void set_upload_outputs(bool on) { upload_outputs_ = on; }

  void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                         int C) {
    Call k(d_, upload_outputs_);
    d_.layernorm_forward(k.out(out, N * C), k.out(mean, N), k.out(rstd, N), k.in(x, N * C), k.in(w, C), k.in(b, C), N,
                         C);
  }
  void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                          const float* mean, const float* rstd, int N, int C) {
    Call k(d_, upload_outputs_);
    d_.layernorm_backward(k.inout(dx, N * C), k.inout(dw, C), k.inout(db, C), k.in(dout, N * C), k.in(x, N * C),
                          k.in(w, C), k.in(mean, N), k.in(rstd, N), N, C);
  }
  void gelu_forward(float* out, const float* x, int64_t n) {
    Call k(d_, upload_outputs_);
    d_.gelu_forward(k.out(out, n), k.in(x, n), n);
  }
  void gelu_backward(float* dx, const float* x, const float* dout, int64_t n) {
    Call k(d_, upload_outputs_);
    d_.gelu_backward(k.out(dx, n), k.in(x, n), k.in(dout, n), n);
  }
  // The floats of the device's attention state (the host vector passed as `att` needs at least this many).
  int64_t attention_state_floats(int B, int T, int Hl, int hs) const { return d_.attention_state_floats(B, T, Hl, hs); }
  // att: the device's attention state, kept on the host between forward and backward.
  void attention_forward(float* out, float* att, const float* qkv, int B, int T, int Hl, int hs) {
    Call k(d_, upload_outputs_);
    d_.attention_forward(k.out(out, int64_t(B) * T * Hl * hs), k.out(att, d_.attention_state_floats(B, T, Hl, hs)),
                         k.in(qkv, int64_t(B) * T * 3 * Hl * hs), B, T, Hl, hs);
  }
  // out: the forward's output (the fused backward's row term needs it).
  void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* out, const float* att, int B,
                          int T, int Hl, int hs) {
    Call k(d_, upload_outputs_);
    const int64_t D = int64_t(Hl) * hs;
    d_.attention_backward(k.out(dqkv, int64_t(B) * T * 3 * D), k.in(dout, int64_t(B) * T * D),
                          k.in(qkv, int64_t(B) * T * 3 * D), k.in(out, int64_t(B) * T * D),
                          k.in(att, d_.attention_state_floats(B, T, Hl, hs)), B, T, Hl, hs);
  }
  // Whether this device keeps the (T,T) probabilities as its attention state (the fused GPU path does not).
  bool keeps_probabilities(int B, int T, int Hl, int hs) const {
    return d_.attention_state_floats(B, T, Hl, hs) == int64_t(B) * Hl * T * T;
  }
  void linear_forward(float* y, const float* x, const float* w, const float* bias, int N, int K, int M) {
    Call k(d_, upload_outputs_);
    d_.linear_forward(k.out(y, int64_t(N) * M), k.in(x, int64_t(N) * K), k.in(w, int64_t(K) * M), k.in(bias, M), N, K,
                      M);
  }
  void linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x, const float* w, int N, int K,
                       int M, bool accumulate_dx) {
    Call k(d_, upload_outputs_);
    const device::DPtr<float> ddx = accumulate_dx ? k.inout(dx, int64_t(N) * K) : k.out(dx, int64_t(N) * K);
    d_.linear_backward(ddx, k.inout(dw, int64_t(K) * M), k.inout(db, M), k.in(dy, int64_t(N) * M),
                       k.in(x, int64_t(N) * K), k.in(w, int64_t(K) * M), N, K, M, accumulate_dx);
  }
  // *loss_sum += the rows' losses (loss_sum may be null); the logits become probabilities.
  void softmax_xent_forward(float* logits, const int32_t* targets, double* loss_sum, int N, int V) {
    Call k(d_, upload_outputs_);
    d_.softmax_xent_forward(k.inout(logits, int64_t(N) * V), k.in(targets, N), k.inout(loss_sum, 1), N, V);
  }
  // The rows' summed loss.
  double softmax_xent_forward(float* logits, const int32_t* targets, int N, int V) {
    double l = 0;
    softmax_xent_forward(logits, targets, &l, N, V);
    return l;
  }
  void softmax_xent_backward(float* probs, const int32_t* targets, int N, int V, float scale) {
    Call k(d_, upload_outputs_);
    d_.softmax_xent_backward(k.inout(probs, int64_t(N) * V), k.in(targets, N), N, V, scale);
  }
  void sgemm(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc,
             bool accumulate) {
    Call k(d_, upload_outputs_);
    d_.sgemm(ta, tb, M, N, K, k.in(A, matrix_span(ta ? K : M, ta ? M : K, lda)), lda,
             k.in(B, matrix_span(tb ? N : K, tb ? K : N, ldb)), ldb, k.inout(C, matrix_span(M, N, ldc)), ldc,
             accumulate);
  }
  // tokens: B rows of T + 1 ids; targets(B*T).
  void targets_from_tokens(int32_t* targets, const int32_t* tokens, int B, int T) {
    Call k(d_, upload_outputs_);
    d_.targets_from_tokens(k.out(targets, int64_t(B) * T), k.in(tokens, int64_t(B) * (T + 1)), B, T);
  }
  // wte(V,C), wpe(T,C) (the rows the call reads), tokens: B rows of T + 1 ids.
  void embedding_forward(float* out, const float* wte, const float* wpe, const int32_t* tokens, int B, int T, int C,
                         int V) {
    Call k(d_, upload_outputs_);
    d_.embedding_forward(k.out(out, int64_t(B) * T * C), k.in(wte, int64_t(V) * C), k.in(wpe, int64_t(T) * C),
                         k.in(tokens, int64_t(B) * (T + 1)), B, T, C);
  }
  void embedding_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B, int T, int C,
                          int V) {
    Call k(d_, upload_outputs_);
    d_.embedding_backward(k.inout(dwte, int64_t(V) * C), k.inout(dwpe, int64_t(T) * C), k.in(dout, int64_t(B) * T * C),
                          k.in(tokens, int64_t(B) * (T + 1)), B, T, C, V);
  }
  void residual(float* out, const float* x, const float* part, const float* bias, int N, int C) {
    Call k(d_, upload_outputs_);
    d_.residual(k.out(out, int64_t(N) * C), k.in(x, int64_t(N) * C), k.in(part, int64_t(N) * C), k.in(bias, C), N, C);
  }
  void add(float* dst, const float* src, int64_t n) {
    Call k(d_, upload_outputs_);
    d_.add(k.inout(dst, n), k.in(src, n), n);
  }
  void sum_squares(double* acc, const float* x, int64_t n) {
    Call k(d_, upload_outputs_);
    d_.sum_squares(k.inout(acc, 1), k.in(x, n), n);
  }
  void adamw(float* p, const float* g, float* m, float* v, int64_t n, float lr, float b1, float b2, float c1, float c2,
             float eps, float wd, float cs) {
    Call k(d_, upload_outputs_);
    d_.adamw(k.inout(p, n), k.in(g, n), k.inout(m, n), k.inout(v, n), n, lr, b1, b2, c1, c2, eps, wd, cs);
  }

 private:
  device::Device& d_;
  bool upload_outputs_ = false;
  // One call's buffers: inputs uploaded now, outputs downloaded (in the order they were named) when the call
  // ends.
  class Call {
   public:
    Call(device::Device& d, bool upload_outputs) : d_(d), upload_outputs_(upload_outputs) {}
    ~Call() { finish(); }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
    template <class T>
    device::DPtr<const T> in(const T* h, int64_t n) {
      if (!h) return nullptr;
      const device::DPtr<T> p = hold<T>(n);
      d_.upload(p, h, n);
      return p;
    }
    template <class T>
    device::DPtr<T> out(T* h, int64_t n) {
      if (!h) return nullptr;
      const device::DPtr<T> p = hold<T>(n);
      backs_.push_back(std::make_unique<Back<T>>(h, p, n));
      if (upload_outputs_) d_.upload(p, static_cast<const T*>(h), n);
      return p;
    }
    template <class T>
    device::DPtr<T> inout(T* h, int64_t n) {
      if (!h) return nullptr;
      const device::DPtr<T> p = hold<T>(n);
      backs_.push_back(std::make_unique<Back<T>>(h, p, n));
      d_.upload(p, static_cast<const T*>(h), n);
      return p;
    }
    void finish() {
      for (const auto& b : backs_) b->download(d_);
      backs_.clear();
    }

   private:
    struct Held {
      virtual ~Held() = default;
    };
    template <class T>
    struct HeldBuffer : Held {
      HeldBuffer(device::Device& d, int64_t n) : buf(d, n) {}
      device::Buffer<T> buf;
    };
    struct BackBase {
      virtual ~BackBase() = default;
      virtual void download(device::Device& d) const = 0;
    };
    template <class T>
    struct Back : BackBase {
      Back(T* h, device::DPtr<T> p, int64_t count) : host(h), dev(p), n(count) {}
      void download(device::Device& d) const override { d.download(host, device::DPtr<const T>(dev), n); }
      T* host;
      device::DPtr<T> dev;
      int64_t n;
    };
    template <class T>
    device::DPtr<T> hold(int64_t n) {
      auto h = std::make_unique<HeldBuffer<T>>(d_, n);
      const device::DPtr<T> p = h->buf.ptr();
      bufs_.push_back(std::move(h));
      return p;
    }
    device::Device& d_;
    bool upload_outputs_;
    std::vector<std::unique_ptr<Held>> bufs_;
    std::vector<std::unique_ptr<BackBase>> backs_;
  };
};

// Seeded, and the same numbers on every standard library (mt19937's output is specified; the distributions
// are not, so the conversion is done by hand).
struct Rand {
  std::mt19937 g;
  explicit Rand(uint32_t seed) : g(seed) {}
  float uniform(float lo, float hi) { return lo + (hi - lo) * float(g() >> 8) * (1.0f / 16777216.0f); }
  Vec vec(size_t n, float lo = -1.0f, float hi = 1.0f) {
    Vec v(n);
    for (float& x : v) x = uniform(lo, hi);
    return v;
  }
  std::vector<int32_t> ints(size_t n, int hi) {
    std::vector<int32_t> v(n);
    for (int32_t& x : v) x = int32_t(g() % uint32_t(hi));
    return v;
  }
};

// Every element within atol + rtol * |ref|; the worst errors are printed as the figures measured. ref_name and
// got_name label the two sides in a failure's message.
inline void expect_close(const Vec& ref, const Vec& got, float atol, float rtol, const std::string& what,
                         const char* ref_name = "cpu", const char* got_name = "gpu") {
  ASSERT_EQ(ref.size(), got.size()) << what;
  double max_abs = 0, max_rel = 0;
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(double(ref[i]) - double(got[i]));
    max_abs = std::max(max_abs, d);
    if (std::fabs(ref[i]) > 1e-6f) max_rel = std::max(max_rel, d / std::fabs(double(ref[i])));
    if (!(d <= atol + rtol * std::fabs(double(ref[i])))) {
      if (bad++ == 0) first_bad = i;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << ref.size() << " elements out of tolerance (atol " << atol
                     << ", rtol " << rtol << "); first at " << first_bad << ": " << ref_name << " " << ref[first_bad]
                     << " " << got_name << " " << got[first_bad];
  std::printf("    %-28s n=%-8zu max abs err %.3g, max rel err %.3g\n", what.c_str(), ref.size(), max_abs, max_rel);
}

}  // namespace mc::test
