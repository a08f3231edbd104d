// registry.h - the compute devices this build has. Each kind of device registers itself from its own file
// (a static DeviceRegistrar beside its implementation: engine/train/kernels/cpu_device.cpp, the CPU reference,
// always; engine/cuda/cuda_device.cu, CUDA GPUs, when nvcc was found at configure time), with what it can do.
// Everything else asks the registry: the config's "device" and --device accept its names, the trainer opens
// a device and its in-place collectives through it, the status bar and `megacluster device` read its probes,
// and the kernel conformance suite (tests/unit/device_conformance_test.cpp) runs over every kind in it, so a
// new device is one file plus its tests inherited. No code outside a device tests a device's name.
//
// The registering files are named *_device.cpp (or live in engine/cuda) and are linked whole into every
// program (engine/CMakeLists.txt), since nothing refers to their registrars by name.
#pragma once

#include "device/collective_backend.h"
#include "device/compute.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mc::device {

// What one look at the machine found for a kind of device (cached: a probe runs once per process).
struct DeviceProbe {
  bool available = false;   // a device of this kind answered (open() may still refuse, with its reason)
  int units = 0;            // how many it found (GPUs); 1 for the CPU
  std::string hardware;     // one unit's product name as assets/catalog/gpus.json names it ("Tesla V100-SXM2-32GB");
                            // empty where the catalog has no sourced peak for it (the CPU)
  double memory_bytes = 0;  // one unit's memory, bytes
  std::string message;      // one sentence: what was found and what will be used
  std::string label;        // the same in a few words for a status bar ("CUDA GPU: NVIDIA H200")
};

// One kind of device and what it can do.
struct DeviceKind {
  std::string name;     // "cpu", "cuda": the config's "device" and --device
  std::string summary;  // a few words for help texts ("CUDA GPUs")
  // "auto" opens the available kind of the highest preference; the reference is the fallback.
  int preference = 0;
  // The reference every other kind is checked against (the CPU): always opens, never refuses.
  bool reference = false;
  // Its memory is host memory (MPI's own collectives may then read it in place).
  bool host_memory = false;
  // One device object drives several units, the workers bound round-robin (Device::bind_worker).
  bool several_per_process = false;
  std::vector<Precision> precisions;  // the matrix products' precisions it runs
  std::function<DeviceProbe()> probe;
  // A device, or nullptr and *why in one clause ("built with CUDA, but no GPU was found (...)").
  std::function<std::unique_ptr<Device>(std::string* why)> open;
  // The ring collectives in place on this kind's memory among one process's workers (NCCL over the GPUs);
  // unset where the engine's own rings are all it has. nullptr and *why when it cannot serve here.
  std::function<std::unique_ptr<CollectiveBackend>(std::string* why)> open_collectives;
};

// Registers a kind at static initialisation (one per device file). A second kind of the same name is refused
// by a message on stderr and ignored, so a double link cannot change which device runs.
struct DeviceRegistrar {
  explicit DeviceRegistrar(DeviceKind k);
};

// Every registered kind, the highest preference first (the reference last).
const std::vector<DeviceKind>& device_kinds();
// The kind of that name, or nullptr.
const DeviceKind* find_device_kind(std::string_view name);
// The reference kind (the CPU). Throws std::logic_error if no kind registered as the reference (a link error).
const DeviceKind& reference_device_kind();
// The kind's probe, run once per process.
const DeviceProbe& probe_of(const DeviceKind& k);

// What a config may name: "auto" followed by each kind's name.
std::vector<std::string> device_choices();
// The same for a help or error text: "auto (the fastest that answers: cuda, else cpu), cpu or cuda".
std::string device_choices_text();

// A device chosen by the config's word: "auto" opens the kind of highest preference that opens, falling back
// to the reference, and `note` says what was used and why the others were not; a kind's name opens that kind
// or throws std::invalid_argument with its reason and the fix; anything else throws naming the choices.
struct OpenedDevice {
  std::unique_ptr<Device> device;
  const DeviceKind* kind = nullptr;
  std::string note;  // "cuda: NVIDIA H200, fp32, fused attention" | "cpu: requested" | "...; using the CPU"
};
OpenedDevice open_device(const std::string& choice);
// That kind's device, or nullptr and *why (including "not in this build") without throwing: for tests and
// tools that compare one named kind against the reference.
std::unique_ptr<Device> open_kind(std::string_view name, std::string* why);

}  // namespace mc::device
