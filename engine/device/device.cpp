// device.cpp - probes once which compute device the engine uses (device.h): a CUDA GPU when this build has
// CUDA and one answers, otherwise the CPU, with the reason.
#include "device/device.h"

#include "device/gpu_hooks.h"

namespace mc {

static DeviceInfo probe() {
  DeviceInfo d;
#ifdef MC_HAVE_CUDA
  d.cuda_compiled = true;
  CudaProbe p = cuda_probe();
  d.gpu_count = p.device_count;
  d.gpu_available = p.device_count > 0;
  d.gpu_name = p.name;
  d.gpu_memory_bytes = p.memory_bytes;
  if (d.gpu_available) {
    d.message =
        "CUDA GPU found: " + d.gpu_name + " (" + std::to_string(d.gpu_count) + " device(s)); GPU kernels enabled";
    d.label = "CUDA GPU: " + d.gpu_name;
  } else {
    d.message = "built with CUDA, but no GPU was found (" + p.error + "); using the CPU";
    d.label = "CPU (no GPU found)";
  }
#else
  d.message = "built without CUDA (nvcc was not found at configure time); using the CPU";
  d.label = "CPU";
#endif
  return d;
}

const DeviceInfo& device_info() {
  static const DeviceInfo info = probe();
  return info;
}

}  // namespace mc
