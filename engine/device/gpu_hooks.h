// gpu_hooks.h - what engine/cuda provides to the rest of the engine, declared here so that cuda/ depends
// on device/ and not the other way round (no include cycle between engine folders). Defined in
// engine/cuda/*.cu, and only linked when this build has CUDA (MC_HAVE_CUDA); callers test that macro.
#pragma once

#include "device/collective_backend.h"
#include "device/compute.h"

#include <memory>
#include <string>

namespace mc {

struct CudaProbe {
  int device_count = 0;
  std::string name;
  double memory_bytes = 0;
  std::string error;  // e.g. "cudaGetDeviceCount: CUDA driver version is insufficient (35)"
};

// The CUDA runtime's device query (engine/cuda/cuda_probe.cu).
CudaProbe cuda_probe();

namespace device {
// The GPU device (engine/cuda/cuda_device.cu): nullptr and *why when the context or cuBLAS does not come up.
std::unique_ptr<Device> open_cuda_device(std::string* why);
// NCCL over this machine's GPUs, in place on device buffers (engine/cuda/nccl_collectives.cu); nullptr and
// *why with fewer than two GPUs or without libnccl.
std::unique_ptr<CollectiveBackend> open_nccl_collectives(std::string* why);
}  // namespace device

}  // namespace mc
