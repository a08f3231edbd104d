// device.h - which compute device the engine will use, as one summary for the status bar and
// `megacluster device`, read off the device registry (device/registry.h): the accelerator of the highest
// preference this build has (a CUDA GPU when nvcc was found at configure time), whether one answered, and
// otherwise why the CPU is used.
#pragma once

#include <string>

namespace mc {

struct DeviceInfo {
  bool cuda_compiled = false;  // the binary contains an accelerator's kernels (a kind besides the CPU registered)
  bool gpu_available = false;  // one answered
  int gpu_count = 0;
  std::string gpu_name;         // first unit's product name
  double gpu_memory_bytes = 0;  // first unit's memory
  std::string message;          // one human sentence: what was found and what will be used
  std::string label;            // the same in a few plain words for a status bar: "CPU", "CUDA GPU: NAME"
};

// Probes once and caches the answer (cheap to call every frame).
const DeviceInfo& device_info();

}  // namespace mc
