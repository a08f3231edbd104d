// cuda_probe.cu - the CUDA runtime's device query behind the plain C++ interface of cuda_probe.h (the
// only place the engine's device detection touches the runtime).
#include "cuda/cuda_probe.h"

#include <cuda_runtime.h>

namespace mc::cuda {

CudaProbe cuda_probe() {
  CudaProbe p;
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    p.error = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err) + " (" + std::to_string(int(err)) + ")";
    cudaGetLastError();  // clear the sticky error
    return p;
  }
  p.device_count = n;
  if (n == 0) {
    p.error = "no CUDA device";
    return p;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    p.name = prop.name;
    p.memory_bytes = double(prop.totalGlobalMem);
  }
  return p;
}

}  // namespace mc::cuda
