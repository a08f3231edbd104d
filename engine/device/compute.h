// compute.h - the training lab's compute device: memory the host cannot touch, the copies across the
// host/device edge (counted), and the kernels a training step runs. The CPU reference
// (engine/train/kernels/cpu_device.h) and the CUDA GPU (engine/cuda/cuda_device.cu) implement it; the
// trainer (engine/train) is written once against this interface, so what the CPU implementation counts
// crossing the edge is what the GPU's step moves too.
//
// Device memory is a DPtr<T>: an address in the device's memory with pointer arithmetic but no
// dereference, no operator[] and no conversion to T*, so host code that reads device memory does not
// compile. Only Device implementations turn a DPtr into an address (Raw, below). Buffer<T> owns an
// allocation; a worker carves its state from one (llm.c's malloc_and_point_parameters).
//
// Shapes and semantics of the kernels are those of the CPU reference (engine/train/kernels/ops.h):
// N = rows (tokens of a micro-batch), C = width, Hl = local heads, hs = head size, V = vocabulary.
//
// Sections: DPtr and Raw; Transfers (the edge's counters); Precision; Device; Buffer. Which devices a build
// has, and how one is chosen: device/registry.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mc::device {

// ---- DPtr ----
template <class T>
class DPtr {
 public:
  DPtr() = default;
  DPtr(std::nullptr_t) {}
  // DPtr<float> -> DPtr<const float>, as for raw pointers.
  template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  DPtr(DPtr<U> o) : addr_(o.addr_) {}
  DPtr operator+(int64_t n) const {
    DPtr r;
    r.addr_ = addr_ ? addr_ + std::uintptr_t(n * int64_t(sizeof(T))) : 0;
    return r;
  }
  explicit operator bool() const { return addr_ != 0; }
  friend bool operator==(DPtr a, DPtr b) { return a.addr_ == b.addr_; }
  friend bool operator!=(DPtr a, DPtr b) { return a.addr_ != b.addr_; }

 private:
  std::uintptr_t addr_ = 0;
  template <class U>
  friend class DPtr;
  friend struct Raw;
};

// The one door between a DPtr and an address. For Device implementations only (the CPU reference,
// engine/cuda): anything else that calls it is reading device memory from the host.
struct Raw {
  template <class T>
  static T* ptr(DPtr<T> p) {
    return reinterpret_cast<T*>(p.addr_);
  }
  template <class T>
  static DPtr<T> wrap(T* p) {
    DPtr<T> d;
    d.addr_ = reinterpret_cast<std::uintptr_t>(p);
    return d;
  }
};

// ---- Transfers ----
// What crossed the host/device edge (and moved inside the device) since the last reset. A training step
// sends the batch's token ids in and brings the loss and gradient-norm partials out; everything else
// stays on the device (tests/unit/train_transfer_test.cpp holds the trainer to it).
struct Transfers {
  double h2d_bytes = 0, d2h_bytes = 0, d2d_bytes = 0;
  double h2d_copies = 0, d2h_copies = 0;
};

// ---- Precision ----
// The matrix products' arithmetic, as frameworks of the era offered it; master weights, optimizer state,
// LayerNorm, softmax and every reduction stay fp32 (mixed precision, Micikevicius et al. 2018):
//  fp32 - IEEE single precision inputs and products.
//  tf32 - inputs rounded to TensorFloat-32 (8-bit exponent, 10-bit mantissa; NVIDIA A100 whitepaper,
//         2020), products accumulated in fp32.
//  bf16 - inputs rounded to bfloat16 (8-bit exponent, 7-bit mantissa; Kalamkar et al. 2019), products
//         accumulated in fp32.
// The CPU reference emulates tf32 and bf16 by rounding the products' inputs to nearest-even, so the
// numerics of each precision can be checked without a GPU.
enum class Precision { fp32, tf32, bf16 };
const char* to_string(Precision p);
// "fp32" | "tf32" | "bf16"; false for anything else.
bool parse_precision(const std::string& s, Precision* out);
// Rounds x to the precision's input format (round to nearest, ties to even; NaN and infinity kept).
float round_to(Precision p, float x);

// ---- Device ----
// The address space a device's DPtrs point into: host memory (the CPU reference) or CUDA device memory
// (what NCCL and CUDA-aware transports read in place). A new kind of memory is a new value here.
enum class MemorySpace { host, cuda };

class Device {
 public:
  virtual ~Device() = default;
  virtual const char* name() const = 0;         // its kind's name in the registry (device/registry.h)
  virtual std::string description() const = 0;  // what it is, for the lab's status line
  // Where its memory lives, so a collective backend can tell whether it may work on the buffers in place
  // without testing the device's name.
  virtual MemorySpace memory_space() const = 0;
  // Whether device memory is host memory (the CPU reference): MPI's own collectives may then read it.
  bool host_addressable() const { return memory_space() == MemorySpace::host; }
  // Where virtual worker `worker`'s next calls run (a workstation's GPUs share the workers).
  virtual void bind_worker(int worker) { (void)worker; }
  virtual void synchronize() {}
  // A training step starts (the trainer calls it first thing in each step): a profiling device can leave
  // the first step's warm-up out of what it reports.
  virtual void begin_step() {}

  void set_precision(Precision p) { precision_ = p; }
  Precision precision() const { return precision_; }

  // Memory. Sizes in bytes; allocations are zeroed.
  virtual DPtr<char> allocate_bytes(int64_t bytes) = 0;
  virtual void free_bytes(DPtr<char> p) = 0;

  // The edge, counted. n in elements.
  template <class T>
  void upload(DPtr<T> dst, const T* src, int64_t n) {
    if (n <= 0) return;
    counted_.h2d_bytes += double(n) * sizeof(T);
    counted_.h2d_copies += 1;
    copy_to_device(DPtr<char>(reinterpret_cast_dptr<char>(dst)), src, n * int64_t(sizeof(T)));
  }
  template <class T>
  void download(T* dst, DPtr<const T> src, int64_t n) {
    if (n <= 0) return;
    counted_.d2h_bytes += double(n) * sizeof(T);
    counted_.d2h_copies += 1;
    copy_to_host(dst, reinterpret_cast_dptr<const char>(src), n * int64_t(sizeof(T)));
  }
  template <class T>
  void copy(DPtr<T> dst, DPtr<const T> src, int64_t n) {
    if (n <= 0) return;
    counted_.d2d_bytes += double(n) * sizeof(T);
    copy_on_device(reinterpret_cast_dptr<char>(dst), reinterpret_cast_dptr<const char>(src), n * int64_t(sizeof(T)));
  }
  template <class T>
  void zero(DPtr<T> dst, int64_t n) {
    if (n > 0) zero_bytes(reinterpret_cast_dptr<char>(dst), n * int64_t(sizeof(T)));
  }
  const Transfers& transfers() const { return counted_; }
  void reset_transfers() { counted_ = Transfers{}; }

  // LayerNorm (Ba et al. 2016): out(N,C), mean(N), rstd(N); backward accumulates dx, dw, db.
  virtual void layernorm_forward(DPtr<float> out, DPtr<float> mean, DPtr<float> rstd, DPtr<const float> x,
                                 DPtr<const float> w, DPtr<const float> b, int N, int C) = 0;
  virtual void layernorm_backward(DPtr<float> dx, DPtr<float> dw, DPtr<float> db, DPtr<const float> dout,
                                  DPtr<const float> x, DPtr<const float> w, DPtr<const float> mean,
                                  DPtr<const float> rstd, int N, int C) = 0;
  // GELU, tanh form (Hendrycks & Gimpel 2016, Sec. 2); dx = dout * gelu'(x) (dx may alias dout).
  virtual void gelu_forward(DPtr<float> out, DPtr<const float> x, int64_t n) = 0;
  virtual void gelu_backward(DPtr<float> dx, DPtr<const float> x, DPtr<const float> dout, int64_t n) = 0;
  // Causal self-attention of Hl heads over qkv(B,T,3*Hl*hs) = [q | k | v]; out(B,T,Hl*hs). `state` keeps
  // what backward needs, attention_state_floats of it: the CPU keeps the (T,T) probabilities of every
  // head, a fused GPU kernel only each row's softmax statistics (FlashAttention, Dao et al. 2022).
  virtual int64_t attention_state_floats(int B, int T, int Hl, int hs) const = 0;
  virtual void attention_forward(DPtr<float> out, DPtr<float> state, DPtr<const float> qkv, int B, int T, int Hl,
                                 int hs) = 0;
  // dqkv is overwritten. `out` is the forward's output (a fused backward recomputes from it).
  virtual void attention_backward(DPtr<float> dqkv, DPtr<const float> dout, DPtr<const float> qkv,
                                  DPtr<const float> out, DPtr<const float> state, int B, int T, int Hl, int hs) = 0;
  // y(N,M) = x(N,K) w(K,M) (+ bias); backward: dw += x^T dy, db += colsum dy, dx = (or +=) dy w^T.
  virtual void linear_forward(DPtr<float> y, DPtr<const float> x, DPtr<const float> w, DPtr<const float> bias, int N,
                              int K, int M) = 0;
  virtual void linear_backward(DPtr<float> dx, DPtr<float> dw, DPtr<float> db, DPtr<const float> dy,
                               DPtr<const float> x, DPtr<const float> w, int N, int K, int M, bool accumulate_dx) = 0;
  // Row-major C(M,N) (+)= op(A) op(B) (engine/train/kernels/gemm.h).
  virtual void sgemm(bool trans_a, bool trans_b, int M, int N, int K, DPtr<const float> A, int lda, DPtr<const float> B,
                     int ldb, DPtr<float> C, int ldc, bool accumulate) = 0;
  // Softmax cross-entropy in place (logits become probabilities); *loss_sum += the rows' losses (nats,
  // summed in row order in double) unless loss_sum is null. Backward: (probs - onehot) * scale.
  virtual void softmax_xent_forward(DPtr<float> logits, DPtr<const int32_t> targets, DPtr<double> loss_sum, int N,
                                    int V) = 0;
  virtual void softmax_xent_backward(DPtr<float> probs, DPtr<const int32_t> targets, int N, int V, float scale) = 0;

  // What the CPU did between the kernels before the trainer lived on the device.
  // tokens: B rows of T + 1 ids. targets(B*T) = each row's ids shifted by one.
  virtual void targets_from_tokens(DPtr<int32_t> targets, DPtr<const int32_t> tokens, int B, int T) = 0;
  // out(B*T, C) = wte[token] + wpe[position].
  virtual void embedding_forward(DPtr<float> out, DPtr<const float> wte, DPtr<const float> wpe,
                                 DPtr<const int32_t> tokens, int B, int T, int C) = 0;
  // dwte[token] += dout, dwpe[position] += dout; each element sums its rows in order. V: dwte's rows (the
  // vocabulary), which sizes the GPU's grid (device/embedding_grad.h).
  virtual void embedding_backward(DPtr<float> dwte, DPtr<float> dwpe, DPtr<const float> dout,
                                  DPtr<const int32_t> tokens, int B, int T, int C, int V) = 0;
  // out = x + (part + bias) row by row.
  virtual void residual(DPtr<float> out, DPtr<const float> x, DPtr<const float> part, DPtr<const float> bias, int N,
                        int C) = 0;
  // dst += src (a ring step's reduction; ZeRO's gradient shards).
  virtual void add(DPtr<float> dst, DPtr<const float> src, int64_t n) = 0;
  // *acc += sum of x^2 in double, over pieces fixed by n added in order (the same bits on any thread count).
  virtual void sum_squares(DPtr<double> acc, DPtr<const float> x, int64_t n) = 0;
  // AdamW (Loshchilov & Hutter 2019, Alg. 2): g = grads * grad_scale; m, v moments; bias corrections
  // passed as 1/(1 - beta^t); params -= lr * (m_hat / (sqrt(v_hat) + eps) + weight_decay * params).
  virtual void adamw(DPtr<float> params, DPtr<const float> grads, DPtr<float> m, DPtr<float> v, int64_t n, float lr,
                     float beta1, float beta2, float bias_correction1, float bias_correction2, float eps,
                     float weight_decay, float grad_scale) = 0;
  // The optimizer's pass over a worker's arena, one slice per tensor: the same results, bit for bit, as
  // calling sum_squares (onto one acc, in the list's order) and adamw once per slice. A GPU does each in one
  // launch instead of one per tensor (issue 40: 148 of each in a step of the 12 x 768 model).
  struct SquaresSlice {
    DPtr<const float> x;
    int64_t n = 0;
  };
  struct AdamWSlice {
    DPtr<float> params;
    DPtr<const float> grads;
    DPtr<float> m, v;
    int64_t n = 0;
    float weight_decay = 0.0f;
  };
  virtual void sum_squares_many(DPtr<double> acc, const std::vector<SquaresSlice>& slices) {
    for (const SquaresSlice& s : slices) sum_squares(acc, s.x, s.n);
  }
  virtual void adamw_many(const std::vector<AdamWSlice>& slices, float lr, float beta1, float beta2,
                          float bias_correction1, float bias_correction2, float eps, float grad_scale) {
    for (const AdamWSlice& s : slices)
      adamw(s.params, s.grads, s.m, s.v, s.n, lr, beta1, beta2, bias_correction1, bias_correction2, eps, s.weight_decay,
            grad_scale);
  }

 protected:
  virtual void copy_to_device(DPtr<char> dst, const void* src, int64_t bytes) = 0;
  virtual void copy_to_host(void* dst, DPtr<const char> src, int64_t bytes) = 0;
  virtual void copy_on_device(DPtr<char> dst, DPtr<const char> src, int64_t bytes) = 0;
  virtual void zero_bytes(DPtr<char> dst, int64_t bytes) = 0;

  template <class To, class From>
  static DPtr<To> reinterpret_cast_dptr(DPtr<From> p) {
    return Raw::wrap(reinterpret_cast<To*>(const_cast<std::remove_const_t<From>*>(Raw::ptr(p))));
  }

 private:
  Transfers counted_;
  Precision precision_ = Precision::fp32;
};

// ---- Buffer ----
// One allocation on a device, freed with it. Move-only.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(Device& d, int64_t n) : dev_(&d), n_(n > 0 ? n : 0) {
    if (n_ > 0) {
      const DPtr<char> raw = d.allocate_bytes(n_ * int64_t(sizeof(T)));
      ptr_ = Raw::wrap(reinterpret_cast<T*>(Raw::ptr(raw)));
    }
  }
  ~Buffer() { reset(); }
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      reset();
      dev_ = o.dev_;
      ptr_ = o.ptr_;
      n_ = o.n_;
      o.ptr_ = nullptr;
      o.n_ = 0;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  DPtr<T> ptr() const { return ptr_; }
  int64_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  Device* device() const { return dev_; }
  void reset() {
    if (ptr_ && dev_) dev_->free_bytes(Raw::wrap(reinterpret_cast<char*>(Raw::ptr(ptr_))));
    ptr_ = nullptr;
    n_ = 0;
  }

 private:
  Device* dev_ = nullptr;
  DPtr<T> ptr_;
  int64_t n_ = 0;
};

}  // namespace mc::device
