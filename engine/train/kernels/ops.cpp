// ops.cpp - the CPU reference of the GPT's layers, forward and backward (ops.h): LayerNorm, GELU, causal
// attention in blocks, linear layers and softmax cross-entropy, each sum in a fixed order.
#include "train/kernels/ops.h"

#include "device/elementwise.h"
#include "train/kernels/gemm.h"
#if defined(__wasm_simd128__)
#include "train/kernels/gemm_wasm.h"  // fused SIMD128 GELU for the web build
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace mc::train::ops {

namespace {

// Pieces for row- or element-parallel loops: about 16K floats each, at most 64. Element-wise work gives
// the same bits however it is cut; where a loop reduces across rows, the cut is by columns instead and
// each column keeps its sequential row order.
int pieces_for(int64_t floats) { return int(std::clamp<int64_t>(floats / 16384, 1, 64)); }

// Runs f(begin, end) over [0, n) in pieces of whole `quantum`s, on the pool.
template <class F>
void for_ranges(int64_t n, int64_t work_floats, int64_t quantum, F f) {
  const int p = int(std::min<int64_t>(pieces_for(work_floats), (n + quantum - 1) / quantum));
  if (p <= 1) return f(int64_t(0), n);
  parallel_for(p, [&](int i) {
    int64_t b, e;
    piece_range(n, p, i, quantum, b, e);
    if (b < e) f(b, e);
  });
}

// Column-parallel loops that sum over rows: pieces of at least 64 columns (whole cache lines, long
// vector loops), at most 8, fixed by the shape.
template <class F>
void for_columns(int64_t cols, int64_t work_floats, F f) {
#if defined(__EMSCRIPTEN__)
  // One thread: each piece would stream every row once more (megabytes, from L3), for the same sums.
  return (void)work_floats, f(int64_t(0), cols);
#endif
  const int p = int(std::min<int64_t>({int64_t(pieces_for(work_floats)), cols / 64, 8}));
  if (p <= 1) return f(int64_t(0), cols);
  parallel_for(p, [&](int i) {
    int64_t b, e;
    piece_range(cols, p, i, 16, b, e);
    if (b < e) f(b, e);
  });
}

}  // namespace

void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                       int C) {
  const float eps = 1e-5f;
  for_ranges(N, int64_t(N) * C, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const float* xi = x + i * C;
      float m = 0;
      for (int c = 0; c < C; ++c) m += xi[c];
      m /= float(C);
      float v = 0;
      for (int c = 0; c < C; ++c) v += (xi[c] - m) * (xi[c] - m);
      v /= float(C);
      const float s = 1.0f / std::sqrt(v + eps);
      float* o = out + i * C;
      for (int c = 0; c < C; ++c) o[c] = (xi[c] - m) * s * w[c] + b[c];
      mean[i] = m;
      rstd[i] = s;
    }
  });
}

void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                        const float* mean, const float* rstd, int N, int C) {
  // dx by rows: dx = s * (dnorm - mean(dnorm) - norm * mean(dnorm * norm)), dnorm = dout * w.
  for_ranges(N, int64_t(N) * C, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const float* d = dout + i * C;
      const float* xi = x + i * C;
      const float m = mean[i], s = rstd[i];
      float dn_mean = 0, dn_norm_mean = 0;
      for (int c = 0; c < C; ++c) {
        const float n = (xi[c] - m) * s;
        const float dn = d[c] * w[c];
        dn_mean += dn;
        dn_norm_mean += dn * n;
      }
      dn_mean /= float(C);
      dn_norm_mean /= float(C);
      float* dxi = dx + i * C;
      for (int c = 0; c < C; ++c) {
        const float n = (xi[c] - m) * s;
        dxi[c] += (d[c] * w[c] - dn_mean - n * dn_norm_mean) * s;
      }
    }
  });
  // dw, db by columns, each summed over the rows in order.
  for_columns(C, int64_t(N) * C, [&](int64_t c0, int64_t c1) {
    for (int i = 0; i < N; ++i) {
      const float* d = dout + int64_t(i) * C;
      const float* xi = x + int64_t(i) * C;
      const float m = mean[i], s = rstd[i];
      for (int64_t c = c0; c < c1; ++c) {
        const float n = (xi[c] - m) * s;
        db[c] += d[c];
        dw[c] += n * d[c];
      }
    }
  });
}

namespace {
#if !defined(__wasm_simd128__)                 // the web build's GELU is in elementwise_wasm.cpp
constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2/pi)
#endif
constexpr int64_t kChunk = 512;  // element-wise work in cache-resident chunks
}  // namespace

void gelu_forward(float* out, const float* x, int64_t n) {
  for_ranges(n, n, kChunk, [&](int64_t b, int64_t e) {
#if defined(__wasm_simd128__)
    wasm::gelu_forward(out + b, x + b, e - b);  // the same bits in one pass
#else
    for (int64_t i = b; i < e; ++i) out[i] = kGeluK * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
    tanh_inplace(out + b, e - b);
    for (int64_t i = b; i < e; ++i) out[i] = 0.5f * x[i] * (1.0f + out[i]);
#endif
  });
}

void gelu_backward(float* dx, const float* x, const float* dout, int64_t n) {
  // The derivative in its cancellation-free form (device/elementwise.h), with exp vectorised over a chunk.
  for_ranges(n, n, kChunk, [&](int64_t b0, int64_t e0) {
#if defined(__wasm_simd128__)
    wasm::gelu_backward(dx + b0, x + b0, dout + b0, e0 - b0);  // the same bits in one pass
#else
    float z[kChunk];
    for (int64_t b = b0; b < e0; b += kChunk) {
      const int64_t m = std::min(kChunk, e0 - b);
      const float* xb = x + b;
      for (int64_t i = 0; i < m; ++i) z[i] = -std::fabs(device::gelu_two_u(xb[i]));
      exp_inplace(z, m);
      for (int64_t i = 0; i < m; ++i) dx[b + i] = dout[b + i] * device::gelu_grad_from_z(xb[i], z[i]);
    }
#endif
  });
}

// Causal attention in blocks of kBlk query rows: row block [r0, r1) only sees keys [0, r1), so the products
// skip the fully masked upper blocks (about 3/8 of the square at T = 256). att keeps exact zeros above the
// diagonal (other backends read the whole square). Each (sequence, head) pair
// is one task on the pool, with single-threaded products inside; tasks write disjoint slices.
namespace {
constexpr int kBlk = 64;
}

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int Hl, int hs) {
  const int D = Hl * hs;
  const float scale = 1.0f / std::sqrt(float(hs));
  parallel_for(B * Hl, [&](int task) {
    const int b = task / Hl, h = task % Hl;
    const float* q = qkv + int64_t(b) * T * 3 * D + h * hs;
    const float* k = q + D;
    const float* v = q + 2 * D;
    float* p = att + (int64_t(b) * Hl + h) * T * T;
    float* y = out + int64_t(b) * T * D + h * hs;
    for (int r0 = 0; r0 < T; r0 += kBlk) {
      const int r1 = std::min(T, r0 + kBlk);
      sgemm_serial(false, true, r1 - r0, r1, hs, q + int64_t(r0) * 3 * D, 3 * D, k, 3 * D, p + int64_t(r0) * T, T,
                   false);  // scores = q k^T
      for (int i = r0; i < r1; ++i) {
        float* row = p + int64_t(i) * T;
        float mx = -INFINITY;
        for (int j = 0; j <= i; ++j) mx = std::max(mx, row[j] * scale);
        for (int j = 0; j <= i; ++j) row[j] = row[j] * scale - mx;
        exp_inplace(row, i + 1);
        float sum = 0;
        for (int j = 0; j <= i; ++j) sum += row[j];
        const float inv = 1.0f / sum;
        for (int j = 0; j <= i; ++j) row[j] *= inv;
        std::memset(row + i + 1, 0, size_t(T - i - 1) * sizeof(float));  // causal mask
      }
      sgemm_serial(false, false, r1 - r0, hs, r1, p + int64_t(r0) * T, T, v, 3 * D, y + int64_t(r0) * D, D, false);
    }
  });
}

void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* att, float* /*scratch*/, int B,
                        int T, int Hl, int hs) {
  const int D = Hl * hs;
  const float scale = 1.0f / std::sqrt(float(hs));
  parallel_for(B * Hl, [&](int task) {
    const int b = task / Hl, h = task % Hl;
    thread_local std::vector<float> scratch;  // dS (T,T) of this task; reused across calls
    if (scratch.size() < size_t(T) * T) scratch.resize(size_t(T) * T);
    float* ds = scratch.data();
    const float* q = qkv + int64_t(b) * T * 3 * D + h * hs;
    const float* k = q + D;
    const float* v = q + 2 * D;
    float* dq = dqkv + int64_t(b) * T * 3 * D + h * hs;
    float* dk = dq + D;
    float* dv = dq + 2 * D;
    const float* p = att + (int64_t(b) * Hl + h) * T * T;
    const float* dy = dout + int64_t(b) * T * D + h * hs;
    for (int r0 = 0; r0 < T; r0 += kBlk) {
      const int r1 = std::min(T, r0 + kBlk);
      sgemm_serial(false, true, r1 - r0, r1, hs, dy + int64_t(r0) * D, D, v, 3 * D, ds + int64_t(r0) * T, T,
                   false);  // dP = dy v^T
      // Softmax backward: dS = P * (dP - sum_j P dP), then the 1/sqrt(hs) of the scores.
      for (int i = r0; i < r1; ++i) {
        float* r = ds + int64_t(i) * T;
        const float* pr = p + int64_t(i) * T;
        float dot = 0;
        for (int j = 0; j <= i; ++j) dot += pr[j] * r[j];
        for (int j = 0; j <= i; ++j) r[j] = pr[j] * (r[j] - dot) * scale;
        for (int j = i + 1; j < r1; ++j) r[j] = 0;
      }
      sgemm_serial(false, false, r1 - r0, hs, r1, ds + int64_t(r0) * T, T, k, 3 * D, dq + int64_t(r0) * 3 * D, 3 * D,
                   false);  // dq = dS k
    }
    // Key block [c0, c1) is seen by query rows [c0, T) only.
    for (int c0 = 0; c0 < T; c0 += kBlk) {
      const int c1 = std::min(T, c0 + kBlk);
      const int64_t off = int64_t(c0) * T + c0;
      sgemm_serial(true, false, c1 - c0, hs, T - c0, p + off, T, dy + int64_t(c0) * D, D, dv + int64_t(c0) * 3 * D,
                   3 * D, false);  // dv = P^T dy
      sgemm_serial(true, false, c1 - c0, hs, T - c0, ds + off, T, q + int64_t(c0) * 3 * D, 3 * D,
                   dk + int64_t(c0) * 3 * D, 3 * D, false);  // dk = dS^T q
    }
  });
}

void linear_forward(float* y, const float* x, const float* w, const float* bias, int N, int K, int M) {
  if (bias) {
    for_ranges(N, int64_t(N) * M, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) std::memcpy(y + i * M, bias, size_t(M) * sizeof(float));
    });
    sgemm(false, false, N, M, K, x, K, w, M, y, M, true);
  } else {
    sgemm(false, false, N, M, K, x, K, w, M, y, M, false);
  }
}

void linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x, const float* w, int N, int K,
                     int M, bool accumulate_dx) {
  sgemm(true, false, K, M, N, x, K, dy, M, dw, M, true);  // dw(K,M) += x^T dy
  if (db)                                                 // by columns, each summed over the rows in order
    for_columns(M, int64_t(N) * M, [&](int64_t j0, int64_t j1) {
      float* __restrict d = db + j0;
      const int64_t w = j1 - j0;
      for (int i = 0; i < N; ++i) {
        const float* __restrict r = dy + int64_t(i) * M + j0;
        for (int64_t j = 0; j < w; ++j) d[j] += r[j];
      }
    });
  if (dx) sgemm(false, true, N, K, M, dy, M, w, M, dx, K, accumulate_dx);  // dx(N,K) = dy w^T
}

double softmax_xent_forward(float* logits, const int32_t* targets, int N, int V) {
  thread_local std::vector<double> row_loss;
  row_loss.resize(size_t(N));
  double* rl = row_loss.data();
  for_ranges(N, int64_t(N) * V, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      float* r = logits + i * V;
      float mx = -INFINITY;
      for (int j = 0; j < V; ++j) mx = std::max(mx, r[j]);
      for (int j = 0; j < V; ++j) r[j] -= mx;
      exp_inplace(r, V);
      float sum = 0;
      for (int j = 0; j < V; ++j) sum += r[j];
      const float inv = 1.0f / sum;
      for (int j = 0; j < V; ++j) r[j] *= inv;
      rl[i] = -std::log(std::max(double(r[targets[i]]), 1e-30));
    }
  });
  double loss = 0;
  for (int i = 0; i < N; ++i) loss += rl[i];  // in row order, whatever the cut
  return loss;
}

void softmax_xent_backward(float* probs, const int32_t* targets, int N, int V, float scale) {
  for_ranges(N, int64_t(N) * V, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      float* r = probs + i * V;
      r[targets[i]] -= 1.0f;
      for (int j = 0; j < V; ++j) r[j] *= scale;
    }
  });
}

}  // namespace mc::train::ops
