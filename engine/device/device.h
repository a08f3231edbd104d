// device.h - which compute device the engine will use, detected at run time.
// With MC_HAVE_CUDA the CUDA library was compiled in; a GPU may still be absent (no driver, no device),
// in which case every GPU path falls back to the CPU reference and `message` says so.
#pragma once

#include <string>

namespace mc {

struct DeviceInfo {
  bool cuda_compiled = false;  // the binary contains CUDA kernels
  bool gpu_available = false;  // a CUDA device answered
  int gpu_count = 0;
  std::string gpu_name;         // first device
  double gpu_memory_bytes = 0;  // first device
  std::string message;          // one human sentence: what was found and what will be used
  std::string label;            // the same in a few plain words for a status bar: "CPU", "CUDA GPU: NAME"
};

// Probes once and caches the answer (cheap to call every frame).
const DeviceInfo& device_info();

}  // namespace mc
