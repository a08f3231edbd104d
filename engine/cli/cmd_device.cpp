// `megacluster device`: whether CUDA was compiled in and whether a GPU answers.
#include "cli/cli.h"
#include "device/device.h"
#include "device/registry.h"

#include "core/json_doc.h"

#include <cstdio>
#include <string>

namespace {

int run_device(mc::cli::Args& a) {
  bool as_json = a.flag("--json");
  a.finish();
  const mc::DeviceInfo& d = mc::device_info();
  if (as_json) {
    mc::json j = {
        {"cuda_compiled", d.cuda_compiled}, {"gpu_available", d.gpu_available},       {"gpu_count", d.gpu_count},
        {"gpu_name", d.gpu_name},           {"gpu_memory_bytes", d.gpu_memory_bytes}, {"message", d.message}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s\n", d.message.c_str());
    // Every kind this build registered (device/registry.h), in the order "auto" tries them.
    std::printf("devices in this build (config \"device\" / --device; auto takes the first that answers):\n");
    for (const mc::device::DeviceKind& k : mc::device::device_kinds()) {
      const mc::device::DeviceProbe& p = mc::device::probe_of(k);
      std::string precisions;
      for (mc::device::Precision q : k.precisions)
        precisions += (precisions.empty() ? "" : ", ") + std::string(mc::device::to_string(q));
      const std::string found = p.available
                                    ? std::to_string(p.units) + " found" + (p.hardware.empty() ? "" : ", " + p.hardware)
                                    : "none answered";
      std::printf("  %-6s %s%s: %s; %s memory%s; products in %s\n", k.name.c_str(), k.summary.c_str(),
                  k.reference ? " (the reference)" : "", found.c_str(), k.host_memory ? "host" : "device",
                  k.several_per_process ? ", several units per process" : "", precisions.c_str());
    }
  }
  return 0;
}

mc::cli::Registrar reg{{"device", "report whether CUDA is compiled in and a GPU was found (else the CPU is used)",
                        "megacluster device [--json]", run_device}};

}  // namespace
