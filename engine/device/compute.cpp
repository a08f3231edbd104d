// compute.cpp - the device interface's plain helpers: precision names and rounding (compute.h).
#include "device/compute.h"

#include <cmath>
#include <cstring>

namespace mc::device {

const char* to_string(Precision p) {
  switch (p) {
    case Precision::fp32:
      return "fp32";
    case Precision::tf32:
      return "tf32";
    case Precision::bf16:
      return "bf16";
  }
  return "?";
}

bool parse_precision(const std::string& s, Precision* out) {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::bf16})
    if (s == to_string(p)) {
      *out = p;
      return true;
    }
  return false;
}

float round_to(Precision p, float x) {
  // Keep the top (32 - drop) bits, rounding the dropped ones to nearest, ties to even: tf32 keeps 10
  // mantissa bits (drops 13), bf16 keeps 7 (drops 16). NaN and infinity pass through unchanged.
  const int drop = p == Precision::tf32 ? 13 : p == Precision::bf16 ? 16 : 0;
  if (drop == 0 || !std::isfinite(x)) return x;
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint32_t half = (1u << (drop - 1)) - 1u, lsb = (u >> drop) & 1u;
  u += half + lsb;
  u &= ~((1u << drop) - 1u);
  float r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

}  // namespace mc::device
