#include "train/ops.h"

#include "train/gemm.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mc::train::ops {

void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                       int C) {
  const float eps = 1e-5f;
  for (int i = 0; i < N; ++i) {
    const float* xi = x + int64_t(i) * C;
    float m = 0;
    for (int c = 0; c < C; ++c) m += xi[c];
    m /= float(C);
    float v = 0;
    for (int c = 0; c < C; ++c) v += (xi[c] - m) * (xi[c] - m);
    v /= float(C);
    const float s = 1.0f / std::sqrt(v + eps);
    float* o = out + int64_t(i) * C;
    for (int c = 0; c < C; ++c) o[c] = (xi[c] - m) * s * w[c] + b[c];
    mean[i] = m;
    rstd[i] = s;
  }
}

void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                        const float* mean, const float* rstd, int N, int C) {
  for (int i = 0; i < N; ++i) {
    const float* d = dout + int64_t(i) * C;
    const float* xi = x + int64_t(i) * C;
    const float m = mean[i], s = rstd[i];
    // dx = s * (dnorm - mean(dnorm) - norm * mean(dnorm * norm)), dnorm = dout * w.
    float dn_mean = 0, dn_norm_mean = 0;
    for (int c = 0; c < C; ++c) {
      const float n = (xi[c] - m) * s;
      const float dn = d[c] * w[c];
      dn_mean += dn;
      dn_norm_mean += dn * n;
    }
    dn_mean /= float(C);
    dn_norm_mean /= float(C);
    float* dxi = dx + int64_t(i) * C;
    for (int c = 0; c < C; ++c) {
      const float n = (xi[c] - m) * s;
      db[c] += d[c];
      dw[c] += n * d[c];
      dxi[c] += (d[c] * w[c] - dn_mean - n * dn_norm_mean) * s;
    }
  }
}

namespace {
constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2/pi)
}

void gelu_forward(float* out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = kGeluK * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
  tanh_inplace(out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = 0.5f * x[i] * (1.0f + out[i]);
}

void gelu_backward(float* dx, const float* x, const float* dout, int64_t n) {
  std::vector<float> th(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) th[size_t(i)] = kGeluK * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
  tanh_inplace(th.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float t = th[size_t(i)];
    const float sech2 = 1.0f - t * t;
    const float g = 0.5f * (1.0f + t) + 0.5f * v * sech2 * kGeluK * (1.0f + 3.0f * 0.044715f * v * v);
    dx[i] = dout[i] * g;
  }
}

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int Hl, int hs) {
  const int D = Hl * hs;
  const float scale = 1.0f / std::sqrt(float(hs));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hl; ++h) {
      const float* q = qkv + int64_t(b) * T * 3 * D + h * hs;
      const float* k = q + D;
      const float* v = q + 2 * D;
      float* p = att + (int64_t(b) * Hl + h) * T * T;
      sgemm(false, true, T, T, hs, q, 3 * D, k, 3 * D, p, T, false);  // scores (T,T) = q k^T
      for (int i = 0; i < T; ++i) {
        float* row = p + int64_t(i) * T;
        float mx = -INFINITY;
        for (int j = 0; j <= i; ++j) mx = std::max(mx, row[j] * scale);
        for (int j = 0; j <= i; ++j) row[j] = row[j] * scale - mx;
        exp_inplace(row, i + 1);
        float sum = 0;
        for (int j = 0; j <= i; ++j) sum += row[j];
        const float inv = 1.0f / sum;
        for (int j = 0; j <= i; ++j) row[j] *= inv;
        for (int j = i + 1; j < T; ++j) row[j] = 0;  // causal mask
      }
      sgemm(false, false, T, hs, T, p, T, v, 3 * D, out + int64_t(b) * T * D + h * hs, D, false);
    }
}

void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* att, float* scratch, int B,
                        int T, int Hl, int hs) {
  const int D = Hl * hs;
  const float scale = 1.0f / std::sqrt(float(hs));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hl; ++h) {
      const float* q = qkv + int64_t(b) * T * 3 * D + h * hs;
      const float* k = q + D;
      const float* v = q + 2 * D;
      float* dq = dqkv + int64_t(b) * T * 3 * D + h * hs;
      float* dk = dq + D;
      float* dv = dq + 2 * D;
      const float* p = att + (int64_t(b) * Hl + h) * T * T;
      const float* dy = dout + int64_t(b) * T * D + h * hs;
      float* ds = scratch;
      sgemm(false, true, T, T, hs, dy, D, v, 3 * D, ds, T, false);  // dP = dy v^T
      sgemm(true, false, T, hs, T, p, T, dy, D, dv, 3 * D, false);  // dv = P^T dy
      // Softmax backward: dS = P * (dP - sum_j P dP), then the 1/sqrt(hs) of the scores.
      for (int i = 0; i < T; ++i) {
        float* r = ds + int64_t(i) * T;
        const float* pr = p + int64_t(i) * T;
        float dot = 0;
        for (int j = 0; j <= i; ++j) dot += pr[j] * r[j];
        for (int j = 0; j <= i; ++j) r[j] = pr[j] * (r[j] - dot) * scale;
        for (int j = i + 1; j < T; ++j) r[j] = 0;
      }
      sgemm(false, false, T, hs, T, ds, T, k, 3 * D, dq, 3 * D, false);  // dq = dS k
      sgemm(true, false, T, hs, T, ds, T, q, 3 * D, dk, 3 * D, false);  // dk = dS^T q
    }
}

void linear_forward(float* y, const float* x, const float* w, const float* bias, int N, int K, int M) {
  if (bias) {
    for (int i = 0; i < N; ++i) std::copy(bias, bias + M, y + int64_t(i) * M);
    sgemm(false, false, N, M, K, x, K, w, M, y, M, true);
  } else {
    sgemm(false, false, N, M, K, x, K, w, M, y, M, false);
  }
}

void linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x, const float* w, int N, int K,
                     int M, bool accumulate_dx) {
  sgemm(true, false, K, M, N, x, K, dy, M, dw, M, true);  // dw(K,M) += x^T dy
  if (db)
    for (int i = 0; i < N; ++i) {
      const float* r = dy + int64_t(i) * M;
      for (int j = 0; j < M; ++j) db[j] += r[j];
    }
  if (dx) sgemm(false, true, N, K, M, dy, M, w, M, dx, K, accumulate_dx);  // dx(N,K) = dy w^T
}

double softmax_xent_forward(float* logits, const int32_t* targets, int N, int V) {
  double loss = 0;
  for (int i = 0; i < N; ++i) {
    float* r = logits + int64_t(i) * V;
    float mx = -INFINITY;
    for (int j = 0; j < V; ++j) mx = std::max(mx, r[j]);
    for (int j = 0; j < V; ++j) r[j] -= mx;
    exp_inplace(r, V);
    float sum = 0;
    for (int j = 0; j < V; ++j) sum += r[j];
    const float inv = 1.0f / sum;
    for (int j = 0; j < V; ++j) r[j] *= inv;
    loss -= std::log(std::max(double(r[targets[i]]), 1e-30));
  }
  return loss;
}

void softmax_xent_backward(float* probs, const int32_t* targets, int N, int V, float scale) {
  for (int i = 0; i < N; ++i) {
    float* r = probs + int64_t(i) * V;
    r[targets[i]] -= 1.0f;
    for (int j = 0; j < V; ++j) r[j] *= scale;
  }
}

}  // namespace mc::train::ops
