// elementwise.h - per-element formulas that the CPU reference (engine/train/kernels/ops.cpp) and the CUDA
// kernels (engine/cuda/train_kernels.cu) share, so both devices compute the same expression and a CPU
// test of the formula covers the GPU's arithmetic (only the exp implementation differs, by a few ulp).
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define MC_HD __host__ __device__ __forceinline__
#else
#define MC_HD inline
#endif

namespace mc::device {

// GELU, tanh form (Hendrycks & Gimpel 2016, Sec. 2): gelu(x) = x/2 (1 + tanh(u)), u = k (x + c x^3),
// k = sqrt(2/pi), c = 0.044715. Since (1 + tanh u)/2 = sigma(2u), gelu(x) = x sigma(2u) and
//   gelu'(x) = sigma(2u) + x sigma(2u) (1 - sigma(2u)) 2 k (1 + 3 c x^2).
// Written with z = exp(-|2u|) in (0, 1], both sigma(2u) and 1 - sigma(2u) come without cancellation
// (1/(1+z) and z/(1+z)), so the derivative keeps its relative accuracy where tanh saturates; the form
// 1 - tanh(u)^2 loses every digit there (tanh rounds to +-1 near |u| = 8 in fp32), which made two correct
// implementations of the same formula disagree by 4e-6 absolute in the tails.
constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kGeluC = 0.044715f;

// 2u, the sigmoid's argument.
MC_HD float gelu_two_u(float x) { return 2.0f * kGeluK * (x + kGeluC * x * x * x); }

// gelu'(x) given z = exp(-|gelu_two_u(x)|).
MC_HD float gelu_grad_from_z(float x, float z) {
  const float inv = 1.0f / (1.0f + z);
  const bool pos = gelu_two_u(x) >= 0.0f;
  const float s = pos ? inv : z * inv;          // sigma(2u)
  const float one_minus = pos ? z * inv : inv;  // 1 - sigma(2u)
  return s + x * s * one_minus * (2.0f * kGeluK * (1.0f + 3.0f * kGeluC * x * x));
}

}  // namespace mc::device
