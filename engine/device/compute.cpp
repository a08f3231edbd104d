// compute.cpp - the device interface's plain helpers (precision names and rounding) and the choice of the
// GPU implementation when this build has one (compute.h).
#include "device/compute.h"

#include "device/gpu_hooks.h"

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

std::unique_ptr<Device> open_gpu_device(std::string* why) {
#ifdef MC_HAVE_CUDA
  return open_cuda_device(why);
#else
  if (why) *why = "built without CUDA (nvcc was not found at configure time)";
  return nullptr;
#endif
}

std::unique_ptr<CollectiveBackend> open_gpu_collectives(std::string* why) {
#ifdef MC_HAVE_CUDA
  return open_nccl_collectives(why);
#else
  if (why) *why = "built without CUDA: the collectives are the engine's own rings";
  return nullptr;
#endif
}

}  // namespace mc::device
