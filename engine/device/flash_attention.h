// flash_attention.h - the arithmetic of fused causal attention (FlashAttention; Dao et al. 2022, Alg. 1 and
// 2), per query row and per (query, key) pair, shared by the CUDA kernels (engine/cuda/train_kernels.cu,
// which add the tiling through shared memory and the threads) and a CPU test that runs the same steps in
// the same order against the reference attention (tests/unit/flash_attention_test.cpp), so the algorithm
// is checked on machines without a GPU.
//
// Forward, row i: keys j = 0..i in order; with s_j = q_i . k_j / sqrt(hs) (q pre-scaled), the running
// maximum m, sum l and unnormalised output acc are updated per key (the online softmax; Milakov &
// Gimelshein 2018); at the end out_i = acc / l and L_i = m + log l (the row's log-sum-exp).
// Backward: P_ij = exp(s_ij - L_i) is recomputed; with dP_ij = dO_i . v_j and D_i = dO_i . out_i,
// dS_ij = P_ij (dP_ij - D_i); dv_j += P_ij dO_i, dk_j += dS_ij q_i / sqrt(hs), dq_i += dS_ij k_j / sqrt(hs).
#pragma once

#include "device/elementwise.h"  // MC_HD

#include <cmath>

namespace mc::device::flash {

// One key of row i's forward: q is already scaled by 1/sqrt(hs).
template <int HS>
MC_HD void forward_key(const float* q, const float* k, const float* v, float* acc, float& m, float& l) {
  float sc = 0.0f;
  for (int d = 0; d < HS; ++d) sc += q[d] * k[d];
  if (sc > m) {  // a new maximum: rescale what is accumulated
    const float f = expf(m - sc);
    l *= f;
    for (int d = 0; d < HS; ++d) acc[d] *= f;
    m = sc;
  }
  const float pr = expf(sc - m);
  l += pr;
  for (int d = 0; d < HS; ++d) acc[d] += pr * v[d];
}

// The probability and the score gradient of pair (i, j).
template <int HS>
MC_HD void pair_gradients(const float* q, const float* k, const float* v, const float* dout, float L, float D,
                          float scale, float& pr, float& dsc) {
  float sc = 0.0f, dp = 0.0f;
  for (int d = 0; d < HS; ++d) sc += q[d] * k[d], dp += dout[d] * v[d];
  pr = expf(sc * scale - L);
  dsc = pr * (dp - D) * scale;
}

}  // namespace mc::device::flash
