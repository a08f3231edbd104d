// cuda_probe.h - plain C++ view of the CUDA runtime's device query (implemented in cuda_probe.cu, only
// compiled when nvcc is found). No CUDA headers here, so the engine's .cpp files stay host-only.
#pragma once

#include <string>

namespace mc {

struct CudaProbe {
  int device_count = 0;
  std::string name;
  double memory_bytes = 0;
  std::string error;  // e.g. "cudaGetDeviceCount: CUDA driver version is insufficient (35)"
};

CudaProbe cuda_probe();

}  // namespace mc
