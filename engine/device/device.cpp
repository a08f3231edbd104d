// device.cpp - the one-line summary of the compute devices (device.h), from the registry's probes.
#include "device/device.h"

#include "device/registry.h"

namespace mc {

static DeviceInfo summarise() {
  DeviceInfo d;
  // The registry lists the highest preference first: the first accelerator is the one "auto" tries first.
  for (const device::DeviceKind& k : device::device_kinds()) {
    if (k.reference) continue;
    const device::DeviceProbe& p = device::probe_of(k);
    d.cuda_compiled = true;
    d.gpu_available = p.available;
    d.gpu_count = p.units;
    d.gpu_name = p.hardware;
    d.gpu_memory_bytes = p.memory_bytes;
    d.message = p.message;
    d.label = p.label;
    return d;
  }
  const device::DeviceProbe& p = device::probe_of(device::reference_device_kind());
  d.message = p.message;
  d.label = p.label;
  return d;
}

const DeviceInfo& device_info() {
  static const DeviceInfo info = summarise();
  return info;
}

}  // namespace mc
