// train_kernels.cu - the training lab's kernels on a CUDA GPU; see train_kernels.h for the contract.
// Each kernel computes what its CPU reference in engine/train/kernels/ops.cpp computes, with the same formulas,
// so tests compare them element by element (only summation order and fused multiply-adds differ).
//
// Sections: cuBLAS opened at run time; one context per GPU (handle, scratch slots, lock); uploads and
// downloads; the __global__ kernels; their launches on device pointers (*_impl: LayerNorm, GELU, attention,
// linear (its bias in cuBLASLt's epilogue, cuda/blas_lt.h), softmax cross-entropy, AdamW); fused attention,
// per row (the fallback), in 64 x 64 fp32 tiles (device/flash_tiled.h) and on tensor cores with its layout
// pass (device/flash_mma.h: bf16, and TF32 when asked); the kernels of what the trainer once did on the host
// between them (embedding, residual, ring adds, norm partials and the optimizer's one-launch passes,
// targets); device memory helpers; the dev:: entries.
#include "cuda/blas_lt.h"
#include "cuda/cuda_check.h"
#include "cuda/dl_open.h"
#include "cuda/train_kernels.h"
#include "device/column_sums.h"
#include "device/elementwise.h"
#include "device/embedding_grad.h"
#include "device/flash_attention.h"
#include "device/flash_mma.h"
#include "device/flash_tiled.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace mc::cuda {
namespace {

constexpr const char* kWho = "CUDA";
[[noreturn]] void fail(const std::string& call, const std::string& what) { fail_call(kWho, call, what); }
#define MC_CUDA(call) check_call(kWho, (call), #call)
// Launch errors (bad configuration, no kernel image for this GPU) surface at cudaGetLastError.
#define MC_LAUNCHED(kernel) check_call(kWho, cudaGetLastError(), #kernel " launch")

// ---- cuBLAS, opened at run time (see header) ----------------------------------------------------------
struct Cublas {
  void* lib = nullptr;
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched = nullptr;
  // The C entry (C++ sees overloads of this name): cuBLAS's documented signature.
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                            const void*, const void*, cudaDataType, int, long long, const void*,
                                            cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                            long long, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  cublasHandle_t handle = nullptr;
};

template <class F>
void load_symbol(void* lib, const char* name, F& f) {
  if (!dl_symbol(lib, name, f)) fail("dlsym(" + std::string(name) + ")", "symbol not found in libcublas");
}

void check_blas(const Cublas& b, cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  fail(call, std::string(b.status_string ? b.status_string(s) : "cuBLAS error") + " (" + std::to_string(int(s)) + ")");
}

void load_cublas(Cublas& b) {
  std::string errors;
  b.lib = dl_open_first({"libcublas.so.13", "libcublas.so", "/usr/local/cuda/lib64/libcublas.so.13",
                         "/usr/local/cuda/lib64/libcublas.so"},
                        &errors);
  if (!b.lib) fail("dlopen(libcublas)", errors);
  load_symbol(b.lib, "cublasCreate_v2", b.create);
  load_symbol(b.lib, "cublasDestroy_v2", b.destroy);
  load_symbol(b.lib, "cublasSetMathMode", b.set_math_mode);
  load_symbol(b.lib, "cublasGetStatusString", b.status_string);
  load_symbol(b.lib, "cublasSgemmStridedBatched", b.sgemm_strided_batched);
  load_symbol(b.lib, "cublasGemmStridedBatchedEx", b.gemm_strided_batched_ex);
  check_blas(b, b.create(&b.handle), "cublasCreate");
  // Plain fp32: no TF32 tensor-op rounding of the inputs, so the GPU matches the CPU reference to fp32.
  check_blas(b, b.set_math_mode(b.handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
}

// ---- one context per GPU: cuBLAS handle, scratch pool, lock ---------------------------------------------
// A cuBLAS handle and device memory belong to one device, so each GPU has its own context; a thread's
// calls go to the device set_thread_device() chose for it (0 unless set), so virtual workers can be
// spread over the GPUs of a workstation.
struct Context {
  std::mutex mu;
  bool initialised = false;
  std::string error;  // set when initialisation failed: every later call reports it
  Cublas blas;
  int smem_optin = 0;          // bytes of shared memory one block may opt in to (the tiled attention's test)
  int cc_major = 0;            // compute capability: 8 and later have the bf16 matrix instruction (flash_mma.h)
  std::unique_ptr<BlasLt> lt;  // products with the bias in their epilogue (blas_lt.h)
  std::vector<std::pair<void*, int64_t>> slots;  // grow-only device buffers for the host wrappers
};

constexpr int kMaxDevices = 64;
thread_local int t_device = 0;

// Never destroyed: at process exit the CUDA runtime may already be torn down, and freeing then fails.
Context& context(int dev) {
  static std::mutex mu;
  static Context* all[kMaxDevices] = {};
  std::lock_guard<std::mutex> l(mu);
  if (!all[dev]) all[dev] = new Context;
  return *all[dev];
}

void init_locked(Context& c, int dev) {
  if (c.initialised) {
    if (!c.error.empty()) throw std::runtime_error(c.error);
    return;
  }
  c.initialised = true;
  try {
    int n = 0;
    MC_CUDA(cudaGetDeviceCount(&n));
    if (n == 0) fail("cudaGetDeviceCount", "no CUDA device");
    if (dev >= n) fail("cudaSetDevice", "device " + std::to_string(dev) + " of " + std::to_string(n));
    MC_CUDA(cudaSetDevice(dev));
    MC_CUDA(cudaDeviceGetAttribute(&c.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    MC_CUDA(cudaDeviceGetAttribute(&c.cc_major, cudaDevAttrComputeCapabilityMajor, dev));
    load_cublas(c.blas);
    c.lt = std::make_unique<BlasLt>();
  } catch (const std::exception& e) {
    c.error = e.what();
    throw;
  }
}

// Holds the calling thread's device's lock for one public call, after making sure its context is ready
// and that device is current.
class Session {
 public:
  Session() : c_(context(t_device)), lock_(c_.mu) {
    init_locked(c_, t_device);
    MC_CUDA(cudaSetDevice(t_device));
  }
  Context& ctx() { return c_; }

 private:
  Context& c_;
  std::lock_guard<std::mutex> lock_;
};

void* slot(Context& c, size_t i, int64_t bytes) {
  if (c.slots.size() <= i) c.slots.resize(i + 1, {nullptr, 0});
  auto& s = c.slots[i];
  if (s.second < bytes) {
    if (s.first) MC_CUDA(cudaFree(s.first));
    s = {nullptr, 0};
    MC_CUDA(cudaMalloc(&s.first, size_t(bytes)));
    s.second = bytes;
  }
  return s.first;
}

template <class T>
T* upload(Context& c, size_t i, const T* host, int64_t n) {
  T* d = static_cast<T*>(slot(c, i, n * int64_t(sizeof(T))));
  if (host && n > 0) MC_CUDA(cudaMemcpy(d, host, size_t(n) * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <class T>
void download(T* host, const T* dev, int64_t n) {
  if (host && n > 0) MC_CUDA(cudaMemcpy(host, dev, size_t(n) * sizeof(T), cudaMemcpyDeviceToHost));
}

// ---- kernels --------------------------------------------------------------------------------------------
constexpr int kBlock = 256;  // threads per block everywhere (8 warps)
constexpr int kWarpsPerBlock = kBlock / 32;
constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2/pi)

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return unsigned(b < 65535LL * 32 ? b : 65535LL * 32);  // element kernels loop (grid-stride) past this
}

// Warp-per-row kernels are not grid-stride: one warp for each row, so the grid must cover every row.
unsigned row_blocks(int64_t rows) {
  const int64_t b = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (b > 0x7fffffffLL) fail("row kernel launch", std::to_string(rows) + " rows exceed the grid limit");
  return unsigned(b);
}

__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Whole-block reductions (blockDim.x a multiple of 32); every thread gets the result.
__device__ float block_sum(float v, float* sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // sh may still be read from the previous reduction
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  return warp_sum(lane < nw ? sh[lane] : 0.0f);
}
__device__ float block_max(float v, float* sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  return warp_max(lane < nw ? sh[lane] : -INFINITY);
}

// LayerNorm forward (Ba et al. 2016, Eq. 3-4), one warp per row, two passes (mean, then variance of the
// centred values) as the CPU does, eps 1e-5 inside the square root.
__global__ void layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* x, const float* w,
                                         const float* b, int N, int C) {
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= N) return;  // the whole warp leaves together, so the shuffles below stay full-warp
  const float* xi = x + row * C;
  float s = 0;
  for (int c = lane; c < C; c += 32) s += xi[c];
  const float m = warp_sum(s) / float(C);
  float v = 0;
  for (int c = lane; c < C; c += 32) v += (xi[c] - m) * (xi[c] - m);
  const float r = 1.0f / sqrtf(warp_sum(v) / float(C) + 1e-5f);
  float* o = out + row * C;
  for (int c = lane; c < C; c += 32) o[c] = (xi[c] - m) * r * w[c] + b[c];
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = r;
  }
}

// LayerNorm backward, input gradient: dx += rstd * (dnorm - mean(dnorm) - norm * mean(dnorm * norm)),
// dnorm = dout * w (the standard derivation, as in llm.c's layernorm_backward). One warp per row.
__global__ void layernorm_backward_dx_kernel(float* dx, const float* dout, const float* x, const float* w,
                                             const float* mean, const float* rstd, int N, int C) {
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= N) return;
  const float* d = dout + row * C;
  const float* xi = x + row * C;
  const float m = mean[row], s = rstd[row];
  float a = 0, an = 0;
  for (int c = lane; c < C; c += 32) {
    const float n = (xi[c] - m) * s, dn = d[c] * w[c];
    a += dn;
    an += dn * n;
  }
  const float dn_mean = warp_sum(a) / float(C), dn_norm_mean = warp_sum(an) / float(C);
  float* dxi = dx + row * C;
  for (int c = lane; c < C; c += 32) {
    const float n = (xi[c] - m) * s;
    dxi[c] += (d[c] * w[c] - dn_mean - n * dn_norm_mean) * s;
  }
}

// Column sums over N rows, accumulated (a bias's gradient; LayerNorm's dw and db): two passes over row
// chunks whose bodies live in device/column_sums.h, tested on the CPU by ColumnSums.*; column_grad below
// launches them with the partials in a scratch slot.
namespace column_sums = mc::device::column_sums;
// The context of a block body written for two executors (device/column_sums.h, embedding_grad.h,
// flash_tiled.h): CUDA's thread and block indices, barrier, half-warp shuffle and shared memory.
struct BlockCtx {
  float* s;
  __device__ int tid() const { return int(threadIdx.x); }
  __device__ int block_x() const { return int(blockIdx.x); }
  __device__ int block_y() const { return int(blockIdx.y); }
  __device__ void sync() const { __syncthreads(); }
  __device__ float shfl_xor(float v, int o) const { return __shfl_xor_sync(0xffffffffu, v, o); }
  __device__ float* smem() const { return s; }
};
__global__ void __launch_bounds__(column_sums::kThreads)
    column_partial_kernel(float* part_w, float* part_b, const float* dout, const float* x, const float* mean,
                          const float* rstd, int N, int C, int chunks) {
  __shared__ float s[column_sums::kSmemFloats];
  BlockCtx cx{s};
  column_sums::partial_block(cx, part_w, part_b, dout, x, mean, rstd, N, C, chunks);
}
__global__ void column_finish_kernel(float* dw, float* db, const float* part_w, const float* part_b, int C,
                                     int chunks) {
  const int c = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
  if (c < C) column_sums::finish_column(c, dw, db, part_w, part_b, C, chunks);
}

// GELU, tanh form (Hendrycks & Gimpel 2016, Sec. 2): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
__device__ __forceinline__ float gelu_of(float v) {
  const float t = tanhf(kGeluK * (v + 0.044715f * v * v * v));
  return 0.5f * v * (1.0f + t);
}
// d/dx of the above in its cancellation-free form, the CPU's expression (device/elementwise.h).
__device__ __forceinline__ float gelu_grad_of(float v, float d) {
  return d * device::gelu_grad_from_z(v, expf(-fabsf(device::gelu_two_u(v))));
}
__global__ void gelu_forward_kernel(float* out, const float* x, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = gelu_of(x[i]);
}
__global__ void gelu_backward_kernel(float* dx, const float* x, const float* dout, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dx[i] = gelu_grad_of(x[i], dout[i]);
}
// The same element by element, four at a time (16-byte loads and stores), where every pointer is 16-byte
// aligned and n a multiple of 4: one element per thread left the GELUs of the 12 x 768 model at 1.7 TB/s
// on an H200 (MC_CUDA_PROFILE), 40 % of its copy rate.
bool aligned16(const void* p) { return uintptr_t(p) % 16 == 0; }
__global__ void gelu_forward4_kernel(float4* out, const float4* x, int64_t n4) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += int64_t(gridDim.x) * blockDim.x) {
    const float4 v = x[i];
    out[i] = make_float4(gelu_of(v.x), gelu_of(v.y), gelu_of(v.z), gelu_of(v.w));
  }
}
__global__ void gelu_backward4_kernel(float4* dx, const float4* x, const float4* dout, int64_t n4) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += int64_t(gridDim.x) * blockDim.x) {
    const float4 v = x[i], d = dout[i];
    dx[i] = make_float4(gelu_grad_of(v.x, d.x), gelu_grad_of(v.y, d.y), gelu_grad_of(v.z, d.z), gelu_grad_of(v.w, d.w));
  }
}

// Softmax cross-entropy forward, one block per row: max-subtracted exponentials (the stable softmax),
// probabilities in place, the row's loss -log p[target] (in double, floored at 1e-30 as the CPU does).
__global__ void softmax_xent_forward_kernel(float* logits, const int32_t* targets, double* row_loss, int V) {
  __shared__ float sh[32];
  float* r = logits + int64_t(blockIdx.x) * V;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < V; j += blockDim.x) mx = fmaxf(mx, r[j]);
  mx = block_max(mx, sh);
  float s = 0;
  for (int j = threadIdx.x; j < V; j += blockDim.x) {
    const float e = expf(r[j] - mx);
    r[j] = e;
    s += e;
  }
  const float inv = 1.0f / block_sum(s, sh);
  for (int j = threadIdx.x; j < V; j += blockDim.x) r[j] *= inv;
  __syncthreads();  // the target's probability was written by another thread
  if (threadIdx.x == 0) {
    const int t = targets[blockIdx.x];
    row_loss[blockIdx.x] = (t >= 0 && t < V) ? -log(fmax(double(r[t]), 1e-30)) : nan("");
  }
}
// dlogits = (probs - onehot(target)) * scale, in place.
__global__ void softmax_xent_backward_kernel(float* probs, const int32_t* targets, int64_t n, int V, float scale) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / V;
    const int j = int(i - row * V);
    const float p = probs[i];
    probs[i] = (j == targets[row] ? p - 1.0f : p) * scale;
  }
}

// Causal softmax of attention scores (Vaswani et al. 2017, Eq. 1, with the decoder's mask): row i of
// each (T,T) matrix keeps columns j <= i; softmax(scores * 1/sqrt(hs)); masked entries set to 0. One
// warp per row; rows = B*Hl*T.
__global__ void causal_softmax_kernel(float* att, int64_t rows, int T, float scale) {
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const int i = int(row % T);
  float* p = att + row * T;
  float mx = -INFINITY;
  for (int j = lane; j <= i; j += 32) mx = fmaxf(mx, p[j] * scale);
  mx = warp_max(mx);
  float s = 0;
  for (int j = lane; j <= i; j += 32) {
    const float e = expf(p[j] * scale - mx);
    p[j] = e;
    s += e;
  }
  const float inv = 1.0f / warp_sum(s);
  for (int j = lane; j < T; j += 32) p[j] = j <= i ? p[j] * inv : 0.0f;
}
// Softmax backward through the mask: dS = P * (dP - sum_j P dP) * 1/sqrt(hs), 0 above the diagonal.
__global__ void causal_softmax_backward_kernel(float* ds, const float* p, int64_t rows, int T, float scale) {
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const int i = int(row % T);
  float* r = ds + row * T;
  const float* pr = p + row * T;
  float dot = 0;
  for (int j = lane; j <= i; j += 32) dot += pr[j] * r[j];
  dot = warp_sum(dot);
  for (int j = lane; j < T; j += 32) r[j] = j <= i ? pr[j] * (r[j] - dot) * scale : 0.0f;
}

// y(N,M) rows = bias(M), before the product is accumulated onto them.
__global__ void fill_rows_kernel(float* y, const float* bias, int64_t n, int M) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = bias[i % M];
}

// AdamW (Loshchilov & Hutter 2019, Alg. 2, decoupled weight decay), the trainer's exact formula.
__device__ __forceinline__ void adamw_element(float* P, const float* G, float* M, float* Vv, int64_t i, float lr,
                                              float b1, float b2, float c1, float c2, float eps, float wd, float cs) {
  const float g = G[i] * cs;
  const float m = b1 * M[i] + (1 - b1) * g;
  const float v = b2 * Vv[i] + (1 - b2) * g * g;
  M[i] = m;
  Vv[i] = v;
  const float mh = m * c1, vh = v * c2;
  P[i] -= lr * (mh / (sqrtf(vh) + eps) + wd * P[i]);
}
__global__ void adamw_kernel(float* P, const float* G, float* M, float* Vv, int64_t n, float lr, float b1, float b2,
                             float c1, float c2, float eps, float wd, float cs) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    adamw_element(P, G, M, Vv, i, lr, b1, b2, c1, c2, eps, wd, cs);
}
// adamw_many: row y of the grid updates slice y (AdamWSlice in train_kernels.h), its blocks striding over it.
__global__ void adamw_many_kernel(const dev::AdamWSlice* slices, float lr, float b1, float b2, float c1, float c2,
                                  float eps, float cs) {
  const dev::AdamWSlice sl = slices[blockIdx.y];
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < sl.n; i += int64_t(gridDim.x) * blockDim.x)
    adamw_element(sl.params, sl.grads, sl.m, sl.v, i, lr, b1, b2, c1, c2, eps, sl.weight_decay, cs);
}

// ---- implementations on device pointers (caller holds the Session) ------------------------------------
// Row-major strided-batched product through cuBLAS (mapping in colmajor_gemm_for_rowmajor): batch item i
// uses A + i*sA, B + i*sB, C + i*sC.
// The products' precision for this thread's next calls (device/compute.h's Precision as an int: 0 fp32,
// 1 tf32, 2 bf16), set by the device before each product.
thread_local int t_precision = 0;

__global__ void to_bf16_kernel(__nv_bfloat16* out, const float* x, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(x[i]);  // round to nearest even, as device::round_to
}

// A strided batch's operand converted to bf16 into scratch slot `slot_i` (span: the elements it covers).
const __nv_bfloat16* as_bf16(Context& c, size_t slot_i, const float* x, int64_t span) {
  auto* out = static_cast<__nv_bfloat16*>(slot(c, slot_i, span * int64_t(sizeof(__nv_bfloat16))));
  if (span > 0) {
    to_bf16_kernel<<<blocks_for(span), kBlock>>>(out, x, span);
    MC_LAUNCHED(to_bf16_kernel);
  }
  return out;
}

// Row-major strided-batched product through cuBLAS (mapping in colmajor_gemm_for_rowmajor): batch item i
// uses A + i*sA, B + i*sB, C + i*sC. fp32: plain SGEMM without tensor-op rounding; tf32: the same call
// with TF32 tensor-op math (inputs rounded to 10 mantissa bits, fp32 accumulation); bf16: the operands
// converted to bfloat16, multiplied with fp32 accumulation and fp32 output (cublasGemmStridedBatchedEx).
// Operands a caller already converted to bf16 (a product's A or B), so one tensor used by two products of
// a call is converted once.
struct Bf16Pre {
  const __nv_bfloat16* a = nullptr;
  const __nv_bfloat16* b = nullptr;
};

void gemm_strided(Context& c, bool ta, bool tb, int M, int N, int K, const float* A, int lda, int64_t sA,
                  const float* B, int ldb, int64_t sB, float* C, int ldc, int64_t sC, int batch, bool accumulate,
                  Bf16Pre pre = {}) {
  if (M <= 0 || N <= 0 || batch <= 0) return;
  const ColMajorGemm g = colmajor_gemm_for_rowmajor(ta, tb, M, N, K, A, lda, B, ldb, accumulate);
  const float alpha = 1.0f;
  const cublasOperation_t op_first = g.trans_first ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = g.trans_second ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (t_precision == 2) {
    const int64_t span_a = int64_t(batch - 1) * sA + rowmajor_span(ta ? K : M, ta ? M : K, lda);
    const int64_t span_b = int64_t(batch - 1) * sB + rowmajor_span(tb ? N : K, tb ? K : N, ldb);
    const __nv_bfloat16* a16 = pre.a ? pre.a : as_bf16(c, 8, A, span_a);
    const __nv_bfloat16* b16 = pre.b ? pre.b : as_bf16(c, 9, B, span_b);
    check_blas(
        c.blas,
        c.blas.gemm_strided_batched_ex(c.blas.handle, op_first, op_second, g.m, g.n, g.k, &alpha, b16, CUDA_R_16BF,
                                       g.ld_first, sB, a16, CUDA_R_16BF, g.ld_second, sA, &g.beta, C, CUDA_R_32F, ldc,
                                       sC, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP),
        "cublasGemmStridedBatchedEx(bf16)");
    return;
  }
  check_blas(c.blas,
             c.blas.set_math_mode(c.blas.handle, t_precision == 1 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
             "cublasSetMathMode");
  check_blas(c.blas,
             c.blas.sgemm_strided_batched(c.blas.handle, op_first, op_second, g.m, g.n, g.k, &alpha, g.first,
                                          g.ld_first, sB, g.second, g.ld_second, sA, &g.beta, C, ldc, sC, batch),
             "cublasSgemmStridedBatched");
}

void layernorm_forward_impl(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                            int C) {
  if (N <= 0 || C <= 0) return;
  layernorm_forward_kernel<<<row_blocks(N), kBlock>>>(out, mean, rstd, x, w, b, N, C);
  MC_LAUNCHED(layernorm_forward_kernel);
}

// dw += column sums of dout * norm (when x is given), db += column sums of dout: the partials of each row
// chunk into scratch slot 13, then each column's in chunk order (device/column_sums.h).
void column_grad(Context& c, float* dw, float* db, const float* dout, const float* x, const float* mean,
                 const float* rstd, int N, int C) {
  const int chunks = column_sums::chunks_for(N);
  const int64_t n = int64_t(chunks) * C;
  float* part = static_cast<float*>(slot(c, 13, (x ? 2 : 1) * n * int64_t(sizeof(float))));
  float* part_w = x ? part + n : nullptr;
  column_partial_kernel<<<dim3(unsigned((C + column_sums::kCols - 1) / column_sums::kCols), unsigned(chunks)),
                          column_sums::kThreads>>>(part_w, part, dout, x, mean, rstd, N, C, chunks);
  MC_LAUNCHED(column_partial_kernel);
  column_finish_kernel<<<blocks_for(C), kBlock>>>(dw, db, part_w, part, C, chunks);
  MC_LAUNCHED(column_finish_kernel);
}

void layernorm_backward_impl(Context& c, float* dx, float* dw, float* db, const float* dout, const float* x,
                             const float* w, const float* mean, const float* rstd, int N, int C) {
  if (N <= 0 || C <= 0) return;
  layernorm_backward_dx_kernel<<<row_blocks(N), kBlock>>>(dx, dout, x, w, mean, rstd, N, C);
  MC_LAUNCHED(layernorm_backward_dx_kernel);
  column_grad(c, dw, db, dout, x, mean, rstd, N, C);
}

void gelu_forward_impl(float* out, const float* x, int64_t n) {
  if (n <= 0) return;
  if (n % 4 == 0 && aligned16(out) && aligned16(x)) {
    gelu_forward4_kernel<<<blocks_for(n / 4), kBlock>>>(reinterpret_cast<float4*>(out),
                                                        reinterpret_cast<const float4*>(x), n / 4);
    MC_LAUNCHED(gelu_forward4_kernel);
    return;
  }
  gelu_forward_kernel<<<blocks_for(n), kBlock>>>(out, x, n);
  MC_LAUNCHED(gelu_forward_kernel);
}
void gelu_backward_impl(float* dx, const float* x, const float* dout, int64_t n) {
  if (n <= 0) return;
  if (n % 4 == 0 && aligned16(dx) && aligned16(x) && aligned16(dout)) {
    gelu_backward4_kernel<<<blocks_for(n / 4), kBlock>>>(reinterpret_cast<float4*>(dx),
                                                         reinterpret_cast<const float4*>(x),
                                                         reinterpret_cast<const float4*>(dout), n / 4);
    MC_LAUNCHED(gelu_backward4_kernel);
    return;
  }
  gelu_backward_kernel<<<blocks_for(n), kBlock>>>(dx, x, dout, n);
  MC_LAUNCHED(gelu_backward_kernel);
}

// Attention (as ops::attention_forward): per batch row b, the Hl heads are one strided batch (head h's
// q/k/v columns start h*hs further along each token's qkv row; its (T,T) block of att is T*T further).
void attention_forward_impl(Context& c, float* out, float* att, const float* qkv, int B, int T, int Hl, int hs) {
  if (B <= 0 || T <= 0 || Hl <= 0 || hs <= 0) return;
  const int D = Hl * hs;
  const int64_t TT = int64_t(T) * T;
  for (int b = 0; b < B; ++b) {
    const float* q = qkv + int64_t(b) * T * 3 * D;
    gemm_strided(c, false, true, T, T, hs, q, 3 * D, hs, q + D, 3 * D, hs, att + int64_t(b) * Hl * TT, T, TT, Hl,
                 false);  // scores = q k^T
  }
  const int64_t rows = int64_t(B) * Hl * T;
  causal_softmax_kernel<<<row_blocks(rows), kBlock>>>(att, rows, T, 1.0f / sqrtf(float(hs)));
  MC_LAUNCHED(causal_softmax_kernel);
  for (int b = 0; b < B; ++b) {
    const float* v = qkv + int64_t(b) * T * 3 * D + 2 * D;
    gemm_strided(c, false, false, T, hs, T, att + int64_t(b) * Hl * TT, T, TT, v, 3 * D, hs, out + int64_t(b) * T * D,
                 D, hs, Hl, false);  // out = P v
  }
}

void attention_backward_impl(Context& c, float* dqkv, const float* dout, const float* qkv, const float* att,
                             float* scratch, int B, int T, int Hl, int hs) {
  if (B <= 0 || T <= 0 || Hl <= 0 || hs <= 0) return;
  const int D = Hl * hs;
  const int64_t TT = int64_t(T) * T;
  const float scale = 1.0f / sqrtf(float(hs));
  for (int b = 0; b < B; ++b) {
    const float* q = qkv + int64_t(b) * T * 3 * D;
    const float* k = q + D;
    const float* v = q + 2 * D;
    float* dq = dqkv + int64_t(b) * T * 3 * D;
    float* dk = dq + D;
    float* dv = dq + 2 * D;
    const float* p = att + int64_t(b) * Hl * TT;
    const float* dy = dout + int64_t(b) * T * D;
    gemm_strided(c, false, true, T, T, hs, dy, D, hs, v, 3 * D, hs, scratch, T, TT, Hl, false);  // dP = dy v^T
    gemm_strided(c, true, false, T, hs, T, p, T, TT, dy, D, hs, dv, 3 * D, hs, Hl, false);       // dv = P^T dy
    const int64_t rows = int64_t(Hl) * T;
    causal_softmax_backward_kernel<<<row_blocks(rows), kBlock>>>(scratch, p, rows, T, scale);
    MC_LAUNCHED(causal_softmax_backward_kernel);
    gemm_strided(c, false, false, T, hs, T, scratch, T, TT, k, 3 * D, hs, dq, 3 * D, hs, Hl, false);  // dq = dS k
    gemm_strided(c, true, false, T, hs, T, scratch, T, TT, q, 3 * D, hs, dk, 3 * D, hs, Hl, false);   // dk = dS^T q
  }
}

void linear_forward_impl(Context& c, float* y, const float* x, const float* w, const float* bias, int N, int K, int M) {
  if (N <= 0 || M <= 0) return;
  Bf16Pre pre;
  if (bias && c.lt) {
    // One pass: y = x w + bias in the product's epilogue (blas_lt.h), where cuBLASLt can.
    const void* xa = x;
    const void* wa = w;
    if (t_precision == 2) xa = pre.a = as_bf16(c, 8, x, int64_t(N) * K), wa = pre.b = as_bf16(c, 9, w, int64_t(K) * M);
    if (c.lt->linear_bias(t_precision, y, xa, wa, bias, N, K, M, slot(c, 28, BlasLt::kWorkspaceBytes))) return;
  }
  if (bias) {
    fill_rows_kernel<<<blocks_for(int64_t(N) * M), kBlock>>>(y, bias, int64_t(N) * M, M);
    MC_LAUNCHED(fill_rows_kernel);
  }
  gemm_strided(c, false, false, N, M, K, x, K, 0, w, M, 0, y, M, 0, 1, bias != nullptr, pre);
}

void linear_backward_impl(Context& c, float* dx, float* dw, float* db, const float* dy, const float* x, const float* w,
                          int N, int K, int M, bool accumulate_dx) {
  if (N <= 0 || M <= 0) return;
  Bf16Pre as_b, as_a;  // bf16: dy converted once for both products
  if (t_precision == 2) as_b.b = as_a.a = as_bf16(c, 24, dy, int64_t(N) * M);
  gemm_strided(c, true, false, K, M, N, x, K, 0, dy, M, 0, dw, M, 0, 1, true, as_b);  // dw(K,M) += x^T dy
  if (db) column_grad(c, nullptr, db, dy, nullptr, nullptr, nullptr, N, M);
  if (dx) gemm_strided(c, false, true, N, K, M, dy, M, 0, w, M, 0, dx, K, 0, 1, accumulate_dx, as_a);  // dx = dy w^T
}

void softmax_xent_forward_impl(float* logits, const int32_t* targets, double* row_loss, int N, int V) {
  if (N <= 0 || V <= 0) return;
  softmax_xent_forward_kernel<<<unsigned(N), kBlock>>>(logits, targets, row_loss, V);
  MC_LAUNCHED(softmax_xent_forward_kernel);
}
void softmax_xent_backward_impl(float* probs, const int32_t* targets, int N, int V, float scale) {
  const int64_t n = int64_t(N) * V;
  if (n <= 0) return;
  softmax_xent_backward_kernel<<<blocks_for(n), kBlock>>>(probs, targets, n, V, scale);
  MC_LAUNCHED(softmax_xent_backward_kernel);
}

void adamw_impl(float* P, const float* G, float* M, float* V, int64_t n, float lr, float b1, float b2, float c1,
                float c2, float eps, float wd, float cs) {
  if (n <= 0) return;
  adamw_kernel<<<blocks_for(n), kBlock>>>(P, G, M, V, n, lr, b1, b2, c1, c2, eps, wd, cs);
  MC_LAUNCHED(adamw_kernel);
}

// ---- fused causal attention (FlashAttention; Dao et al. 2022, Alg. 1 forward, Alg. 2 backward) --------------
// The (T,T) score matrix never exists in memory: the forward streams key/value tiles through shared memory
// and keeps each query row's running max and sum (the online softmax, Milakov & Gimelshein 2018), writing
// only the output and each row's log-sum-exp L. The backward recomputes the probabilities from L tile by
// tile: one kernel owns key rows (dK, dV), another owns query rows (dQ), so every gradient element is
// written by one thread, in a fixed order (no atomics: runs repeat bit for bit). fp32 arithmetic on the
// CUDA cores; one thread per row of a 32-row tile; head sizes up to 64 (others use the cuBLAS path).
// These per-row kernels are the fallback: the tiled kernels below do the same in 64 x 64 tiles, 3.9x
// (forward) and 4.7x (backward) faster on an H100 (README, "On a GPU").
// Shapes: qkv (B, T, 3D) = [q | k | v] per token with head h at columns h*HS..; out (B, T, D), D = Hl*HS;
// L and Drow (B, Hl, T).
constexpr int kFaTile = 32;

// The 32 key and value rows of a tile from j0 into shared memory, one column per thread (zeros past T).
template <int HS>
__device__ void load_kv_tile(float (*ks)[HS + 1], float (*vs)[HS + 1], const float* base, int j0, int T, int D) {
  for (int r = 0; r < kFaTile; ++r) {
    const int j = j0 + r;
    for (int d = threadIdx.x; d < HS; d += kFaTile) {
      ks[r][d] = j < T ? base[int64_t(j) * 3 * D + D + d] : 0.0f;
      vs[r][d] = j < T ? base[int64_t(j) * 3 * D + 2 * D + d] : 0.0f;
    }
  }
}

template <int HS>
__global__ void flash_forward_kernel(float* out, float* L, const float* qkv, int T, int Hl, float scale) {
  __shared__ float ks[kFaTile][HS + 1], vs[kFaTile][HS + 1];
  const int bh = blockIdx.y, b = bh / Hl, h = bh % Hl, D = Hl * HS;
  const int i = blockIdx.x * kFaTile + threadIdx.x;  // this thread's query row
  const float* base = qkv + int64_t(b) * T * 3 * D + h * HS;
  float q[HS], acc[HS];
  for (int d = 0; d < HS; ++d) q[d] = i < T ? base[int64_t(i) * 3 * D + d] * scale : 0.0f, acc[d] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  const int last_tile = blockIdx.x;  // causal: key tiles up to the query tile's own
  for (int kt = 0; kt <= last_tile; ++kt) {
    __syncthreads();
    const int j0 = kt * kFaTile;
    load_kv_tile<HS>(ks, vs, base, j0, T, D);
    __syncthreads();
    if (i >= T) continue;
    for (int r = 0; r < kFaTile && j0 + r <= i; ++r) device::flash::forward_key<HS>(q, ks[r], vs[r], acc, m, l);
  }
  if (i >= T) return;
  float* o = out + (int64_t(b) * T + i) * D + h * HS;
  const float inv = 1.0f / l;
  for (int d = 0; d < HS; ++d) o[d] = acc[d] * inv;
  L[int64_t(bh) * T + i] = m + logf(l);
}

// Drow[i] = sum_d dO[i,d] O[i,d] (the softmax backward's row term), per (b, h, row).
template <int HS>
__global__ void flash_rowdot_kernel(float* Drow, const float* dout, const float* out, int B, int T, int Hl) {
  const int64_t n = int64_t(B) * Hl * T;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t bh = k / T, i = k - bh * T, b = bh / Hl, h = bh - b * Hl;
    const int64_t at = (b * T + i) * Hl * HS + h * HS;
    float s = 0.0f;
    for (int d = 0; d < HS; ++d) s += dout[at + d] * out[at + d];
    Drow[k] = s;
  }
}

// dK and dV: one thread per key row j, query tiles from j's own tile to the end.
template <int HS>
__global__ void flash_backward_kv_kernel(float* dqkv, const float* dout, const float* qkv, const float* L,
                                         const float* Drow, int T, int Hl, float scale) {
  __shared__ float qs[kFaTile][HS + 1], dos[kFaTile][HS + 1];
  __shared__ float ls[kFaTile], ds_[kFaTile];
  const int bh = blockIdx.y, b = bh / Hl, h = bh % Hl, D = Hl * HS;
  const int j = blockIdx.x * kFaTile + threadIdx.x;
  const float* base = qkv + int64_t(b) * T * 3 * D + h * HS;
  const float* dbase = dout + int64_t(b) * T * D + h * HS;
  float k[HS], v[HS], dk[HS], dv[HS];
  for (int d = 0; d < HS; ++d) {
    k[d] = j < T ? base[int64_t(j) * 3 * D + D + d] : 0.0f;
    v[d] = j < T ? base[int64_t(j) * 3 * D + 2 * D + d] : 0.0f;
    dk[d] = dv[d] = 0.0f;
  }
  const int tiles = (T + kFaTile - 1) / kFaTile;
  for (int qt = blockIdx.x; qt < tiles; ++qt) {
    __syncthreads();
    const int i0 = qt * kFaTile;
    for (int r = 0; r < kFaTile; ++r) {
      const int i = i0 + r;
      for (int d = threadIdx.x; d < HS; d += kFaTile) {
        qs[r][d] = i < T ? base[int64_t(i) * 3 * D + d] : 0.0f;
        dos[r][d] = i < T ? dbase[int64_t(i) * D + d] : 0.0f;
      }
    }
    {
      const int i = i0 + int(threadIdx.x);
      ls[threadIdx.x] = i < T ? L[int64_t(bh) * T + i] : 0.0f;
      ds_[threadIdx.x] = i < T ? Drow[int64_t(bh) * T + i] : 0.0f;
    }
    __syncthreads();
    if (j >= T) continue;
    for (int r = 0; r < kFaTile; ++r) {
      const int i = i0 + r;
      if (i >= T || i < j) continue;  // causal: query i sees key j only when j <= i
      float pr, dsc;
      device::flash::pair_gradients<HS>(qs[r], k, v, dos[r], ls[r], ds_[r], scale, pr, dsc);
      for (int d = 0; d < HS; ++d) dv[d] += pr * dos[r][d], dk[d] += dsc * qs[r][d];
    }
  }
  if (j >= T) return;
  float* dkr = dqkv + (int64_t(b) * T + j) * 3 * D + D + h * HS;
  for (int d = 0; d < HS; ++d) dkr[d] = dk[d], dkr[D + d] = dv[d];
}

// dQ: one thread per query row i, key tiles up to i's own.
template <int HS>
__global__ void flash_backward_q_kernel(float* dqkv, const float* dout, const float* qkv, const float* L,
                                        const float* Drow, int T, int Hl, float scale) {
  __shared__ float ks[kFaTile][HS + 1], vs[kFaTile][HS + 1];
  const int bh = blockIdx.y, b = bh / Hl, h = bh % Hl, D = Hl * HS;
  const int i = blockIdx.x * kFaTile + threadIdx.x;
  const float* base = qkv + int64_t(b) * T * 3 * D + h * HS;
  float q[HS], o[HS], dq[HS];
  for (int d = 0; d < HS; ++d) {
    q[d] = i < T ? base[int64_t(i) * 3 * D + d] : 0.0f;
    o[d] = i < T ? dout[(int64_t(b) * T + i) * D + h * HS + d] : 0.0f;
    dq[d] = 0.0f;
  }
  const float li = i < T ? L[int64_t(bh) * T + i] : 0.0f, di = i < T ? Drow[int64_t(bh) * T + i] : 0.0f;
  for (int kt = 0; kt <= int(blockIdx.x); ++kt) {
    __syncthreads();
    const int j0 = kt * kFaTile;
    load_kv_tile<HS>(ks, vs, base, j0, T, D);
    __syncthreads();
    if (i >= T) continue;
    for (int r = 0; r < kFaTile && j0 + r <= i; ++r) {
      float pr, dsc;
      device::flash::pair_gradients<HS>(q, ks[r], vs[r], o, li, di, scale, pr, dsc);
      for (int d = 0; d < HS; ++d) dq[d] += dsc * ks[r][d];
    }
  }
  if (i >= T) return;
  float* dqr = dqkv + (int64_t(b) * T + i) * 3 * D + h * HS;
  for (int d = 0; d < HS; ++d) dqr[d] = dq[d];
}

template <int HS>
void flash_forward_launch(float* out, float* L, const float* qkv, int B, int T, int Hl) {
  const dim3 grid(unsigned((T + kFaTile - 1) / kFaTile), unsigned(B * Hl));
  flash_forward_kernel<HS><<<grid, kFaTile>>>(out, L, qkv, T, Hl, 1.0f / sqrtf(float(HS)));
  MC_LAUNCHED(flash_forward_kernel);
}

template <int HS>
void flash_backward_launch(float* dqkv, float* Drow, const float* dout, const float* qkv, const float* out,
                           const float* L, int B, int T, int Hl) {
  const float scale = 1.0f / sqrtf(float(HS));
  flash_rowdot_kernel<HS><<<blocks_for(int64_t(B) * Hl * T), kBlock>>>(Drow, dout, out, B, T, Hl);
  MC_LAUNCHED(flash_rowdot_kernel);
  const dim3 grid(unsigned((T + kFaTile - 1) / kFaTile), unsigned(B * Hl));
  flash_backward_kv_kernel<HS><<<grid, kFaTile>>>(dqkv, dout, qkv, L, Drow, T, Hl, scale);
  MC_LAUNCHED(flash_backward_kv_kernel);
  flash_backward_q_kernel<HS><<<grid, kFaTile>>>(dqkv, dout, qkv, L, Drow, T, Hl, scale);
  MC_LAUNCHED(flash_backward_q_kernel);
}

// ---- fused causal attention in 64 x 64 tiles (device/flash_tiled.h) -------------------------------------
// The block bodies live in flash_tiled.h, shared with a CPU executor that tests them without a GPU; here
// they get CUDA's threads, barrier, shuffle and dynamic shared memory. HS 64 needs 64 KiB (forward) and
// 98.5 KiB (backward) per block, so a GPU that cannot give a block that much (sm_75: 64 KiB) keeps the
// per-row kernels above; MC_ATTENTION=rows keeps them anywhere (to measure one against the other).
namespace flash_tiled = mc::device::flash_tiled;

template <int HS>
__global__ void __launch_bounds__(flash_tiled::kThreads)
    tiled_forward_kernel(float* out, float* L, const float* qkv, int T, int Hl, float scale) {
  extern __shared__ __align__(16) float tiled_smem[];
  BlockCtx cx{tiled_smem};
  flash_tiled::forward_block<HS>(cx, out, L, qkv, T, Hl, scale);
}
template <int HS>
__global__ void __launch_bounds__(flash_tiled::kThreads)
    tiled_backward_kv_kernel(float* dqkv, const float* dout, const float* qkv, const float* L, const float* Drow, int T,
                             int Hl, float scale) {
  extern __shared__ __align__(16) float tiled_smem[];
  BlockCtx cx{tiled_smem};
  flash_tiled::backward_kv_block<HS>(cx, dqkv, dout, qkv, L, Drow, T, Hl, scale);
}
template <int HS>
__global__ void __launch_bounds__(flash_tiled::kThreads)
    tiled_backward_q_kernel(float* dqkv, const float* dout, const float* qkv, const float* L, const float* Drow, int T,
                            int Hl, float scale) {
  extern __shared__ __align__(16) float tiled_smem[];
  BlockCtx cx{tiled_smem};
  flash_tiled::backward_q_block<HS>(cx, dqkv, dout, qkv, L, Drow, T, Hl, scale);
}

// MC_ATTENTION names a kernel family to measure one against another: rows, tiled (fp32 on the CUDA cores in
// every precision), cublas (the materialised path; cuda_device.cu). Unset: the fastest the GPU runs.
const std::string& attention_asked() {
  static const std::string asked = [] {
    const char* a = std::getenv("MC_ATTENTION");
    return std::string(a ? a : "");
  }();
  return asked;
}
bool rows_asked() { return attention_asked() == "rows"; }
template <int HS>
bool tiled_fits(const Context& c) {
  constexpr int most =
      std::max(flash_tiled::forward_smem_floats<HS>(),
               std::max(flash_tiled::backward_kv_smem_floats<HS>(), flash_tiled::backward_q_smem_floats<HS>()));
  return !rows_asked() && int64_t(most) * int64_t(sizeof(float)) <= c.smem_optin;
}
template <class K>
void allow_smem(K kernel, int floats) {
  MC_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, floats * int(sizeof(float))));
}

template <int HS>
void tiled_forward_launch(float* out, float* L, const float* qkv, int B, int T, int Hl) {
  constexpr int smem = flash_tiled::forward_smem_floats<HS>();
  allow_smem(tiled_forward_kernel<HS>, smem);
  const dim3 grid(unsigned((T + flash_tiled::kTile - 1) / flash_tiled::kTile), unsigned(B * Hl));
  tiled_forward_kernel<HS>
      <<<grid, flash_tiled::kThreads, smem * sizeof(float)>>>(out, L, qkv, T, Hl, 1.0f / sqrtf(float(HS)));
  MC_LAUNCHED(tiled_forward_kernel);
}
template <int HS>
void tiled_backward_launch(float* dqkv, float* Drow, const float* dout, const float* qkv, const float* out,
                           const float* L, int B, int T, int Hl) {
  const float scale = 1.0f / sqrtf(float(HS));
  flash_rowdot_kernel<HS><<<blocks_for(int64_t(B) * Hl * T), kBlock>>>(Drow, dout, out, B, T, Hl);
  MC_LAUNCHED(flash_rowdot_kernel);
  constexpr int kv = flash_tiled::backward_kv_smem_floats<HS>(), q = flash_tiled::backward_q_smem_floats<HS>();
  allow_smem(tiled_backward_kv_kernel<HS>, kv);
  allow_smem(tiled_backward_q_kernel<HS>, q);
  const dim3 grid(unsigned((T + flash_tiled::kTile - 1) / flash_tiled::kTile), unsigned(B * Hl));
  tiled_backward_kv_kernel<HS>
      <<<grid, flash_tiled::kThreads, kv * sizeof(float)>>>(dqkv, dout, qkv, L, Drow, T, Hl, scale);
  MC_LAUNCHED(tiled_backward_kv_kernel);
  tiled_backward_q_kernel<HS>
      <<<grid, flash_tiled::kThreads, q * sizeof(float)>>>(dqkv, dout, qkv, L, Drow, T, Hl, scale);
  MC_LAUNCHED(tiled_backward_q_kernel);
}

// ---- fused causal attention on tensor cores (device/flash_mma.h) ----------------------------------------
// bf16 (mma.sync.m16n8k16) or TF32 (m16n8k8) operands, fp32 accumulation and statistics; 128-thread blocks
// of 4 warps. Built for sm_80 and later; on older GPUs mma_format() keeps the fp32 kernels, and the
// instructions' place holds a trap.
namespace flash_mma = mc::device::flash_mma;

struct MmaCtx {
  void* s;
  __device__ int tid() const { return int(threadIdx.x); }
  __device__ int block_x() const { return int(blockIdx.x); }
  __device__ int block_y() const { return int(blockIdx.y); }
  __device__ void sync() const { __syncthreads(); }
  __device__ float shfl_xor(float v, int o) const { return __shfl_xor_sync(0xffffffffu, v, o); }
  __device__ float shfl(float v, int from) const { return __shfl_sync(0xffffffffu, v, from); }
  __device__ void* smem_raw() const { return s; }
  // cp.async.cg: 16 bytes from global memory into shared memory without a register in between, completing
  // in the background; a src-size of 0 fills the 16 bytes with zeros (rows past the sequence's end).
  __device__ void cp16(void* dst, const void* src, bool valid) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned d = unsigned(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 16 : 0));
#else
    *static_cast<uint4*>(dst) = valid ? *static_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
#endif
  }
  __device__ void commit() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
  }
  template <int N>
  __device__ void wait() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
  }
  __device__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    __trap();
#endif
  }
  __device__ void mma_tf32(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    __trap();
#endif
  }
};

// The layout pass (flash_mma.h, "Inputs"): x (B, T, C) fp32 rounded to the format, as it is and transposed
// per sequence, (B, C, Tp) with zeros from T to Tp; the transpose goes through a 32 x 32 shared tile so
// that reads and writes are both coalesced.
template <class F>
__global__ void format_rows_kernel(typename F::E* rows, const float* x, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    rows[i] = F::bits(x[i]);
}
template <class F>
__global__ void format_columns_kernel(typename F::E* cols, const float* x, int T, int Tp, int C) {
  __shared__ float tile[32][33];
  const int b = int(blockIdx.z), t0 = int(blockIdx.x) * 32, c0 = int(blockIdx.y) * 32;
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);  // 32 x 8 threads
  for (int r = ty; r < 32; r += 8) {
    const int t = t0 + r, c = c0 + tx;
    tile[r][tx] = (t < T && c < C) ? x[(int64_t(b) * T + t) * C + c] : 0.0f;
  }
  __syncthreads();
  for (int r = ty; r < 32; r += 8) {
    const int c = c0 + r, t = t0 + tx;
    if (c < C && t < Tp) cols[(int64_t(b) * C + c) * Tp + t] = F::bits(tile[tx][r]);
  }
}
// x (B, T, C) into two scratch slots as flash_mma.h's inputs want it: rows (B, T, C) and columns (B, C, Tp).
template <class F>
void format_layouts(Context& c, size_t slot_rows, size_t slot_cols, const float* x, int B, int T, int C,
                    const typename F::E** rows, const typename F::E** cols) {
  using E = typename F::E;
  const int Tp = flash_mma::padded(T);
  const int64_t n = int64_t(B) * T * C;
  auto* r = static_cast<E*>(slot(c, slot_rows, n * int64_t(sizeof(E))));
  auto* t = static_cast<E*>(slot(c, slot_cols, int64_t(B) * C * Tp * int64_t(sizeof(E))));
  format_rows_kernel<F><<<blocks_for(n), kBlock>>>(r, x, n);
  MC_LAUNCHED(format_rows_kernel);
  const dim3 grid(unsigned(Tp / 32), unsigned((C + 31) / 32), unsigned(B));
  format_columns_kernel<F><<<grid, dim3(32, 8)>>>(t, x, T, Tp, C);
  MC_LAUNCHED(format_columns_kernel);
  *rows = r, *cols = t;
}

template <int HS, class F>
__global__ void __launch_bounds__(flash_mma::kThreads)
    mma_forward_kernel(float* out, float* L, flash_mma::Inputs<F> in, float scale) {
  extern __shared__ __align__(16) unsigned char mma_smem[];
  MmaCtx cx{mma_smem};
  flash_mma::forward_block<HS, F>(cx, out, L, in, scale);
}
template <int HS, class F>
__global__ void __launch_bounds__(flash_mma::kThreads)
    mma_backward_kv_kernel(float* dqkv, flash_mma::Inputs<F> in, const float* L, const float* Drow, float scale) {
  extern __shared__ __align__(16) unsigned char mma_smem[];
  MmaCtx cx{mma_smem};
  flash_mma::backward_kv_block<HS, F>(cx, dqkv, in, L, Drow, scale);
}
template <int HS, class F>
__global__ void __launch_bounds__(flash_mma::kThreads)
    mma_backward_q_kernel(float* dqkv, flash_mma::Inputs<F> in, const float* L, const float* Drow, float scale) {
  extern __shared__ __align__(16) unsigned char mma_smem[];
  MmaCtx cx{mma_smem};
  flash_mma::backward_q_block<HS, F>(cx, dqkv, in, L, Drow, scale);
}

template <int HS, class F>
void mma_forward_launch(Context& c, float* out, float* L, const float* qkv, int B, int T, int Hl) {
  flash_mma::Inputs<F> in;
  in.T = T, in.Tp = flash_mma::padded(T), in.Hl = Hl;
  format_layouts<F>(c, 20, 21, qkv, B, T, 3 * Hl * HS, &in.qkv, &in.qkv_t);
  constexpr int smem = flash_mma::forward_smem_bytes<HS, F>();
  MC_CUDA(cudaFuncSetAttribute(mma_forward_kernel<HS, F>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const dim3 grid(unsigned((T + flash_mma::kTile - 1) / flash_mma::kTile), unsigned(B * Hl));
  mma_forward_kernel<HS, F><<<grid, flash_mma::kThreads, smem>>>(out, L, in, 1.0f / sqrtf(float(HS)));
  MC_LAUNCHED(mma_forward_kernel);
}
template <int HS, class F>
void mma_backward_launch(Context& c, float* dqkv, float* Drow, const float* dout, const float* qkv, const float* out,
                         const float* L, int B, int T, int Hl) {
  const float scale = 1.0f / sqrtf(float(HS));
  flash_rowdot_kernel<HS><<<blocks_for(int64_t(B) * Hl * T), kBlock>>>(Drow, dout, out, B, T, Hl);
  MC_LAUNCHED(flash_rowdot_kernel);
  flash_mma::Inputs<F> in;
  in.T = T, in.Tp = flash_mma::padded(T), in.Hl = Hl;
  format_layouts<F>(c, 20, 21, qkv, B, T, 3 * Hl * HS, &in.qkv, &in.qkv_t);
  format_layouts<F>(c, 22, 23, dout, B, T, Hl * HS, &in.dout, &in.dout_t);
  constexpr int kv = flash_mma::backward_kv_smem_bytes<HS, F>(), q = flash_mma::backward_q_smem_bytes<HS, F>();
  MC_CUDA(cudaFuncSetAttribute(mma_backward_kv_kernel<HS, F>, cudaFuncAttributeMaxDynamicSharedMemorySize, kv));
  MC_CUDA(cudaFuncSetAttribute(mma_backward_q_kernel<HS, F>, cudaFuncAttributeMaxDynamicSharedMemorySize, q));
  const dim3 grid(unsigned((T + flash_mma::kTile - 1) / flash_mma::kTile), unsigned(B * Hl));
  mma_backward_kv_kernel<HS, F><<<grid, flash_mma::kThreads, kv>>>(dqkv, in, L, Drow, scale);
  MC_LAUNCHED(mma_backward_kv_kernel);
  mma_backward_q_kernel<HS, F><<<grid, flash_mma::kThreads, q>>>(dqkv, in, L, Drow, scale);
  MC_LAUNCHED(mma_backward_q_kernel);
}
// The TF32 kernels have run only on the CPU's emulation of the instruction (FlashMma.*Tf32*): the GPU lease
// that was to measure them was withdrawn (issue 40). Until CudaKernels.AttentionOnTensorCores has passed on
// a GPU with them, TF32 steps take them only when MC_ATTENTION_TF32=mma asks (scripts/gpu-lease.sh does).
bool tf32_mma_asked() {
  static const bool asked = [] {
    const char* a = std::getenv("MC_ATTENTION_TF32");
    return a && std::string(a) == "mma";
  }();
  return asked;
}
// The tensor-core kernels for this call's precision and head size HS, where they run: 2 bf16, 1 TF32, 0 none
// (fp32 steps, GPUs before sm_80, too little shared memory, or MC_ATTENTION naming the fp32 kernels).
template <int HS>
int mma_format(const Context& c) {
  if (c.cc_major < 8 || attention_asked() == "rows" || attention_asked() == "tiled") return 0;
  if (t_precision == 2 && flash_mma::backward_kv_smem_bytes<HS, flash_mma::Bf16>() <= c.smem_optin) return 2;
  if (t_precision == 1 && tf32_mma_asked() && flash_mma::backward_kv_smem_bytes<HS, flash_mma::Tf32>() <= c.smem_optin)
    return 1;
  return 0;
}
template <int HS>
bool mma_forward(Context& c, float* out, float* L, const float* qkv, int B, int T, int Hl) {
  switch (mma_format<HS>(c)) {
    case 2:
      mma_forward_launch<HS, flash_mma::Bf16>(c, out, L, qkv, B, T, Hl);
      return true;
    case 1:
      mma_forward_launch<HS, flash_mma::Tf32>(c, out, L, qkv, B, T, Hl);
      return true;
  }
  return false;
}
template <int HS>
bool mma_backward(Context& c, float* dqkv, float* Drow, const float* dout, const float* qkv, const float* out,
                  const float* L, int B, int T, int Hl) {
  switch (mma_format<HS>(c)) {
    case 2:
      mma_backward_launch<HS, flash_mma::Bf16>(c, dqkv, Drow, dout, qkv, out, L, B, T, Hl);
      return true;
    case 1:
      mma_backward_launch<HS, flash_mma::Tf32>(c, dqkv, Drow, dout, qkv, out, L, B, T, Hl);
      return true;
  }
  return false;
}

// ---- what the trainer did on the host between kernels ------------------------------------------------
__global__ void targets_kernel(int32_t* out, const int32_t* tok, int B, int T) {
  const int64_t n = int64_t(B) * T;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = i / T, t = i - b * T;
    out[i] = tok[b * (T + 1) + t + 1];
  }
}

__global__ void embedding_forward_kernel(float* out, const float* wte, const float* wpe, const int32_t* tok, int B,
                                         int T, int C) {
  const int64_t n = int64_t(B) * T * C;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / C, k = i - row * C, b = row / T, t = row - b * T;
    out[i] = wte[int64_t(tok[b * (T + 1) + t]) * C + k] + wpe[t * C + k];
  }
}

// dwte: one thread per column adds the rows in order (tokens repeat, so rows collide; the CPU's order,
// and so its bits, with no atomics): vocabularies above embedding_grad::kMaxVocab. Up to it, one block per
// (256 columns, vocabulary row) scans the tokens (device/embedding_grad.h): the same order, V C threads.
// dwpe: one thread per (position, column) adds the sequences in order.
__global__ void __launch_bounds__(mc::device::embedding_grad::kThreads)
    embedding_backward_wte_rows_kernel(float* dwte, const float* dout, const int32_t* tok, int B, int T, int C) {
  __shared__ float tile[mc::device::embedding_grad::kSmemSlots];
  BlockCtx cx{tile};
  mc::device::embedding_grad::wte_row_block(cx, dwte, dout, tok, B, T, C);
}
__global__ void embedding_backward_wte_kernel(float* dwte, const float* dout, const int32_t* tok, int B, int T, int C) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= C) return;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      dwte[int64_t(tok[int64_t(b) * (T + 1) + t]) * C + k] += dout[(int64_t(b) * T + t) * C + k];
}
__global__ void embedding_backward_wpe_kernel(float* dwpe, const float* dout, int B, int T, int C) {
  const int64_t n = int64_t(T) * C;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float acc = dwpe[i];
    for (int b = 0; b < B; ++b) acc += dout[int64_t(b) * n + i];
    dwpe[i] = acc;
  }
}

__global__ void residual_kernel(float* out, const float* x, const float* part, const float* bias, int64_t n, int C) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = x[i] + (part[i] + bias[i % C]);
}
// Four at a time where the pointers are 16-byte aligned and C a multiple of 4 (C4 = C / 4).
__global__ void residual4_kernel(float4* out, const float4* x, const float4* part, const float4* bias, int64_t n4,
                                 int C4) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += int64_t(gridDim.x) * blockDim.x) {
    const float4 a = x[i], p = part[i], b = bias[i % C4];
    out[i] = make_float4(a.x + (p.x + b.x), a.y + (p.y + b.y), a.z + (p.z + b.z), a.w + (p.w + b.w));
  }
}

__global__ void add_kernel(float* dst, const float* src, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] += src[i];
}

// Sum of squares in double: one block per piece (the CPU's pieces), a fixed tree inside the block, then
// one thread adds the pieces in order into *acc.
// Piece `index` of `pieces` of x[0, n): its sum of squares in double, in thread 0 (a block of kBlock).
__device__ __forceinline__ double square_piece(double* sh, const float* x, int64_t n, int pieces, int index) {
  const int64_t units = (n + 15) / 16;
  const int64_t b = units * index / pieces * 16, e0 = units * (index + 1) / pieces * 16;
  const int64_t e = e0 < n ? e0 : n;
  double a = 0;
  for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x) a += double(x[i]) * double(x[i]);
  sh[threadIdx.x] = a;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  return sh[0];
}
__global__ void sum_squares_pieces_kernel(double* part, const float* x, int64_t n, int pieces) {
  __shared__ double sh[kBlock];
  const double v = square_piece(sh, x, n, pieces, int(blockIdx.x));
  if (threadIdx.x == 0) part[blockIdx.x] = v;
}
// sum_squares_many: block i computes piece table[i] (each slice's pieces as sum_squares makes them).
struct SquaresPiece {
  const float* x;
  int64_t n;
  int pieces, index;
};
__global__ void sum_squares_many_kernel(double* part, const SquaresPiece* table) {
  __shared__ double sh[kBlock];
  const SquaresPiece p = table[blockIdx.x];
  const double v = square_piece(sh, p.x, p.n, p.pieces, p.index);
  if (threadIdx.x == 0) part[blockIdx.x] = v;
}
__global__ void add_in_order_kernel(double* acc, const double* part, int64_t n) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  double s = *acc;
  for (int64_t i = 0; i < n; ++i) s += part[i];
  *acc = s;
}

}  // namespace

// ---- public: context and memory ----------------------------------------------------------------------
bool available(std::string* why) {
  Context& c = context(0);
  std::lock_guard<std::mutex> l(c.mu);
  try {
    init_locked(c, 0);
    return true;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return false;
  }
}

int device_count() {
  if (!available()) return 0;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n < kMaxDevices ? n : kMaxDevices;
}

void set_thread_device(int dev) {
  if (dev < 0 || dev >= kMaxDevices) fail("set_thread_device", "device " + std::to_string(dev) + " out of range");
  t_device = dev;
}

int thread_device() { return t_device; }

void* device_alloc_bytes(int64_t bytes) {
  Session s;
  void* p = nullptr;
  if (bytes > 0) {
    MC_CUDA(cudaMalloc(&p, size_t(bytes)));
    MC_CUDA(cudaMemset(p, 0, size_t(bytes)));
  }
  return p;
}
float* device_alloc(int64_t n) { return static_cast<float*>(device_alloc_bytes(n * int64_t(sizeof(float)))); }
int32_t* device_alloc_i32(int64_t n) { return static_cast<int32_t*>(device_alloc_bytes(n * int64_t(sizeof(int32_t)))); }
double* device_alloc_f64(int64_t n) { return static_cast<double*>(device_alloc_bytes(n * int64_t(sizeof(double)))); }
void device_free(void* p) {
  if (!p) return;
  Session s;
  MC_CUDA(cudaFree(p));
}
void to_device(void* dst, const void* src, int64_t bytes) {
  Session s;
  if (bytes > 0) MC_CUDA(cudaMemcpy(dst, src, size_t(bytes), cudaMemcpyHostToDevice));
}
void to_host(void* dst, const void* src, int64_t bytes) {
  Session s;
  if (bytes > 0) MC_CUDA(cudaMemcpy(dst, src, size_t(bytes), cudaMemcpyDeviceToHost));
}
void device_synchronize() {
  Session s;
  MC_CUDA(cudaDeviceSynchronize());
}

// ---- public: device-pointer API ------------------------------------------------------------------------
namespace dev {
void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                       int C) {
  Session s;
  layernorm_forward_impl(out, mean, rstd, x, w, b, N, C);
}
void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                        const float* mean, const float* rstd, int N, int C) {
  Session s;
  layernorm_backward_impl(s.ctx(), dx, dw, db, dout, x, w, mean, rstd, N, C);
}
void gelu_forward(float* out, const float* x, int64_t n) {
  Session s;
  gelu_forward_impl(out, x, n);
}
void gelu_backward(float* dx, const float* x, const float* dout, int64_t n) {
  Session s;
  gelu_backward_impl(dx, x, dout, n);
}
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int Hl, int hs) {
  Session s;
  attention_forward_impl(s.ctx(), out, att, qkv, B, T, Hl, hs);
}
void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* att, float* scratch, int B,
                        int T, int Hl, int hs) {
  Session s;
  attention_backward_impl(s.ctx(), dqkv, dout, qkv, att, scratch, B, T, Hl, hs);
}
void linear_forward(float* y, const float* x, const float* w, const float* bias, int N, int K, int M) {
  Session s;
  linear_forward_impl(s.ctx(), y, x, w, bias, N, K, M);
}
void linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x, const float* w, int N, int K,
                     int M, bool accumulate_dx) {
  Session s;
  linear_backward_impl(s.ctx(), dx, dw, db, dy, x, w, N, K, M, accumulate_dx);
}
void softmax_xent_forward(float* logits, const int32_t* targets, double* row_loss, int N, int V) {
  Session s;
  softmax_xent_forward_impl(logits, targets, row_loss, N, V);
}
void softmax_xent_backward(float* probs, const int32_t* targets, int N, int V, float scale) {
  Session s;
  softmax_xent_backward_impl(probs, targets, N, V, scale);
}
void sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
           int ldc, bool accumulate) {
  Session s;
  gemm_strided(s.ctx(), trans_a, trans_b, M, N, K, A, lda, 0, B, ldb, 0, C, ldc, 0, 1, accumulate);
}
void adamw(float* params, const float* grads, float* m, float* v, int64_t n, float lr, float beta1, float beta2,
           float bias_correction1, float bias_correction2, float eps, float weight_decay, float grad_scale) {
  Session s;
  adamw_impl(params, grads, m, v, n, lr, beta1, beta2, bias_correction1, bias_correction2, eps, weight_decay,
             grad_scale);
}
void targets_from_tokens(int32_t* targets, const int32_t* tokens, int B, int T) {
  Session s;
  const int64_t n = int64_t(B) * T;
  if (n <= 0) return;
  targets_kernel<<<blocks_for(n), kBlock>>>(targets, tokens, B, T);
  MC_LAUNCHED(targets_kernel);
}
void embedding_forward(float* out, const float* wte, const float* wpe, const int32_t* tokens, int B, int T, int C) {
  Session s;
  const int64_t n = int64_t(B) * T * C;
  if (n <= 0) return;
  embedding_forward_kernel<<<blocks_for(n), kBlock>>>(out, wte, wpe, tokens, B, T, C);
  MC_LAUNCHED(embedding_forward_kernel);
}
void embedding_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B, int T, int C,
                        int V) {
  Session s;
  if (int64_t(B) * T * C <= 0) return;
  namespace eg = mc::device::embedding_grad;
  if (V > 0 && V <= eg::kMaxVocab) {
    embedding_backward_wte_rows_kernel<<<dim3(unsigned((C + eg::kThreads - 1) / eg::kThreads), unsigned(V)),
                                         eg::kThreads>>>(dwte, dout, tokens, B, T, C);
    MC_LAUNCHED(embedding_backward_wte_rows_kernel);
  } else {
    embedding_backward_wte_kernel<<<unsigned((C + kBlock - 1) / kBlock), kBlock>>>(dwte, dout, tokens, B, T, C);
    MC_LAUNCHED(embedding_backward_wte_kernel);
  }
  embedding_backward_wpe_kernel<<<blocks_for(int64_t(T) * C), kBlock>>>(dwpe, dout, B, T, C);
  MC_LAUNCHED(embedding_backward_wpe_kernel);
}
void residual(float* out, const float* x, const float* part, const float* bias, int N, int C) {
  Session s;
  const int64_t n = int64_t(N) * C;
  if (n <= 0) return;
  if (C % 4 == 0 && aligned16(out) && aligned16(x) && aligned16(part) && aligned16(bias)) {
    residual4_kernel<<<blocks_for(n / 4), kBlock>>>(reinterpret_cast<float4*>(out), reinterpret_cast<const float4*>(x),
                                                    reinterpret_cast<const float4*>(part),
                                                    reinterpret_cast<const float4*>(bias), n / 4, C / 4);
    MC_LAUNCHED(residual4_kernel);
    return;
  }
  residual_kernel<<<blocks_for(n), kBlock>>>(out, x, part, bias, n, C);
  MC_LAUNCHED(residual_kernel);
}
void add(float* dst, const float* src, int64_t n) {
  Session s;
  if (n <= 0) return;
  add_kernel<<<blocks_for(n), kBlock>>>(dst, src, n);
  MC_LAUNCHED(add_kernel);
}
int square_pieces(int64_t n) {
  const int64_t p = n / 32768;
  return int(p < 1 ? 1 : p > 64 ? 64 : p);
}
void sum_squares_many(double* acc, const SquaresSlice* slices, int count) {
  Session s;
  std::vector<SquaresPiece> table;
  for (int i = 0; i < count; ++i) {
    if (slices[i].n <= 0) continue;
    const int pieces = square_pieces(slices[i].n);
    for (int k = 0; k < pieces; ++k) table.push_back({slices[i].x, slices[i].n, pieces, k});
  }
  if (table.empty()) return;
  const int64_t bytes = int64_t(table.size() * sizeof(SquaresPiece));
  auto* dtable = static_cast<SquaresPiece*>(slot(s.ctx(), 25, bytes));
  auto* part = static_cast<double*>(slot(s.ctx(), 26, int64_t(table.size() * sizeof(double))));
  MC_CUDA(cudaMemcpyAsync(dtable, table.data(), size_t(bytes), cudaMemcpyHostToDevice, cudaStreamLegacy));
  sum_squares_many_kernel<<<unsigned(table.size()), kBlock>>>(part, dtable);
  MC_LAUNCHED(sum_squares_many_kernel);
  add_in_order_kernel<<<1, 1>>>(acc, part, int64_t(table.size()));  // every piece in order, as one call each
  MC_LAUNCHED(add_in_order_kernel);
}
void adamw_many(const AdamWSlice* slices, int count, float lr, float beta1, float beta2, float bias_correction1,
                float bias_correction2, float eps, float grad_scale) {
  Session s;
  if (count <= 0) return;
  int64_t most = 0;
  for (int i = 0; i < count; ++i) most = std::max(most, slices[i].n);
  if (most <= 0) return;
  const int64_t bytes = int64_t(count) * int64_t(sizeof(AdamWSlice));
  auto* dslices = static_cast<AdamWSlice*>(slot(s.ctx(), 27, bytes));
  MC_CUDA(cudaMemcpyAsync(dslices, slices, size_t(bytes), cudaMemcpyHostToDevice, cudaStreamLegacy));
  const unsigned per_slice = std::min(blocks_for(most), 64u);  // enough for the largest; small ones end early
  adamw_many_kernel<<<dim3(per_slice, unsigned(count)), kBlock>>>(dslices, lr, beta1, beta2, bias_correction1,
                                                                  bias_correction2, eps, grad_scale);
  MC_LAUNCHED(adamw_many_kernel);
}
void sum_squares(double* acc, const float* x, int64_t n) {
  Session s;
  if (n <= 0) return;
  const int pieces = square_pieces(n);
  auto* part = static_cast<double*>(slot(s.ctx(), 10, int64_t(pieces) * int64_t(sizeof(double))));
  sum_squares_pieces_kernel<<<unsigned(pieces), kBlock>>>(part, x, n, pieces);
  MC_LAUNCHED(sum_squares_pieces_kernel);
  add_in_order_kernel<<<1, 1>>>(acc, part, pieces);
  MC_LAUNCHED(add_in_order_kernel);
}
void softmax_xent_forward_sum(float* logits, const int32_t* targets, double* loss_sum, int N, int V) {
  Session s;
  if (N <= 0 || V <= 0) return;
  auto* rows = static_cast<double*>(slot(s.ctx(), 11, int64_t(N) * int64_t(sizeof(double))));
  softmax_xent_forward_impl(logits, targets, rows, N, V);
  if (loss_sum) {
    add_in_order_kernel<<<1, 1>>>(loss_sum, rows, N);  // in row order, as the CPU sums them
    MC_LAUNCHED(add_in_order_kernel);
  }
}
void set_precision(int p) { t_precision = p; }
void memset_zero(void* p, int64_t bytes) {
  Session s;
  if (bytes > 0) MC_CUDA(cudaMemsetAsync(p, 0, size_t(bytes), cudaStreamLegacy));
}
void copy_device(void* dst, const void* src, int64_t bytes) {
  Session s;
  if (bytes > 0) MC_CUDA(cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyDefault, cudaStreamLegacy));
}
bool flash_attention_supports(int hs) { return hs == 16 || hs == 32 || hs == 64; }
void flash_attention_forward(float* out, float* L, const float* qkv, int B, int T, int Hl, int hs) {
  Session s;
  if (B <= 0 || T <= 0 || Hl <= 0) return;
  switch (hs) {
    case 16:
      if (mma_forward<16>(s.ctx(), out, L, qkv, B, T, Hl)) return;
      if (tiled_fits<16>(s.ctx())) return tiled_forward_launch<16>(out, L, qkv, B, T, Hl);
      return flash_forward_launch<16>(out, L, qkv, B, T, Hl);
    case 32:
      if (mma_forward<32>(s.ctx(), out, L, qkv, B, T, Hl)) return;
      if (tiled_fits<32>(s.ctx())) return tiled_forward_launch<32>(out, L, qkv, B, T, Hl);
      return flash_forward_launch<32>(out, L, qkv, B, T, Hl);
    case 64:
      if (mma_forward<64>(s.ctx(), out, L, qkv, B, T, Hl)) return;
      if (tiled_fits<64>(s.ctx())) return tiled_forward_launch<64>(out, L, qkv, B, T, Hl);
      return flash_forward_launch<64>(out, L, qkv, B, T, Hl);
  }
  fail("flash_attention_forward", "head size " + std::to_string(hs) + " (the fused kernel takes 16, 32 or 64)");
}
void flash_attention_backward(float* dqkv, const float* dout, const float* qkv, const float* out, const float* L, int B,
                              int T, int Hl, int hs) {
  Session s;
  if (B <= 0 || T <= 0 || Hl <= 0) return;
  auto* Drow = static_cast<float*>(slot(s.ctx(), 12, int64_t(B) * Hl * T * int64_t(sizeof(float))));
  switch (hs) {
    case 16:
      if (mma_backward<16>(s.ctx(), dqkv, Drow, dout, qkv, out, L, B, T, Hl)) return;
      if (tiled_fits<16>(s.ctx())) return tiled_backward_launch<16>(dqkv, Drow, dout, qkv, out, L, B, T, Hl);
      return flash_backward_launch<16>(dqkv, Drow, dout, qkv, out, L, B, T, Hl);
    case 32:
      if (mma_backward<32>(s.ctx(), dqkv, Drow, dout, qkv, out, L, B, T, Hl)) return;
      if (tiled_fits<32>(s.ctx())) return tiled_backward_launch<32>(dqkv, Drow, dout, qkv, out, L, B, T, Hl);
      return flash_backward_launch<32>(dqkv, Drow, dout, qkv, out, L, B, T, Hl);
    case 64:
      if (mma_backward<64>(s.ctx(), dqkv, Drow, dout, qkv, out, L, B, T, Hl)) return;
      if (tiled_fits<64>(s.ctx())) return tiled_backward_launch<64>(dqkv, Drow, dout, qkv, out, L, B, T, Hl);
      return flash_backward_launch<64>(dqkv, Drow, dout, qkv, out, L, B, T, Hl);
  }
  fail("flash_attention_backward", "head size " + std::to_string(hs) + " (the fused kernel takes 16, 32 or 64)");
}
}  // namespace dev

// ---- public: host-pointer wrappers (copy in, run, copy out) ------------------------------------------
// Slot numbers index the context's scratch pool; within one call each buffer has its own slot.

}  // namespace mc::cuda
