// ops.h - the layers of the GPT, forward and backward, on raw row-major buffers (llm.c style).
// Every function splits its work over the pool (gemm.h) in pieces chosen from the shapes alone, and
// any sum across rows keeps its sequential order, so results never depend on the thread count.
// Shapes in comments: N = rows (B*T tokens of a micro-batch), C = width, Hl = heads held locally
// (H / tp), hs = head size C / H, F = local MLP width (4C / tp).
#pragma once

#include <cstdint>

namespace mc::train::ops {

// LayerNorm (Ba et al. 2016) over the last dimension: out(N,C), mean(N), rstd(N).
void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                       int C);
// dx (+=), dw (+=), db (+=) from dout(N,C).
void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                        const float* mean, const float* rstd, int N, int C);

// GELU, tanh approximation (Hendrycks & Gimpel 2016, Eq. in Sec. 2), as in GPT-2.
void gelu_forward(float* out, const float* x, int64_t n);
void gelu_backward(float* dx, const float* x, const float* dout, int64_t n);  // dx = dout * gelu'(x)

// Causal self-attention of Hl local heads. qkv(B,T,3*Hl*hs) laid out [q | k | v], each Hl*hs wide.
// att(B,Hl,T,T) keeps the softmax probabilities for backward; out(B,T,Hl*hs).
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int Hl, int hs);
// dqkv (overwritten) from dout. Both run the (sequence, head) pairs in parallel on the pool and skip the
// fully masked upper blocks of the TxT square in their products (att still holds zeros above the
// diagonal). `scratch` (T*T floats) is no longer needed, since each thread keeps its own; the parameter stays
// so every backend's table entry keeps one signature (ops_backend.h). It may be null.
void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* att, float* scratch, int B,
                        int T, int Hl, int hs);

// y(N,M) = x(N,K) w(K,M) (+ bias(M) when bias != nullptr); w is stored input-major (K rows, M cols).
void linear_forward(float* y, const float* x, const float* w, const float* bias, int N, int K, int M);
// dw += x^T dy; db += colsum(dy) (db may be null); dx = dy w^T (or += when accumulate_dx; dx may be null).
void linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x, const float* w, int N, int K,
                     int M, bool accumulate_dx);

// Softmax cross-entropy over V classes for N rows of logits, in place: logits become probabilities.
// Returns the summed loss (nats) over the rows.
double softmax_xent_forward(float* logits, const int32_t* targets, int N, int V);
// dlogits = (probs - onehot) * scale, in place over probs.
void softmax_xent_backward(float* probs, const int32_t* targets, int N, int V, float scale);

}  // namespace mc::train::ops
