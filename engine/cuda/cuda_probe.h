// cuda_probe.h - the CUDA runtime's device query, in plain C++ (no CUDA types) for the CUDA device's
// registration (cuda_device.cu). Internal to engine/cuda: the rest of the engine reads the registry's probe
// (device/registry.h).
#pragma once

#include <string>

namespace mc::cuda {

struct CudaProbe {
  int device_count = 0;
  std::string name;
  double memory_bytes = 0;
  std::string error;  // e.g. "cudaGetDeviceCount: CUDA driver version is insufficient (35)"
};

// cudaGetDeviceCount and the first device's properties (cuda_probe.cu).
CudaProbe cuda_probe();

}  // namespace mc::cuda
