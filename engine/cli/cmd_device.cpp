// `megacluster device`: whether CUDA was compiled in and whether a GPU answers.
#include "cli/cli.h"
#include "device/device.h"

#include "core/json_doc.h"

#include <cstdio>

namespace {

int run_device(mc::cli::Args& a) {
  bool as_json = a.flag("--json");
  a.finish();
  const mc::DeviceInfo& d = mc::device_info();
  if (as_json) {
    mc::json j = {{"cuda_compiled", d.cuda_compiled}, {"gpu_available", d.gpu_available},
                  {"gpu_count", d.gpu_count},         {"gpu_name", d.gpu_name},
                  {"gpu_memory_bytes", d.gpu_memory_bytes}, {"message", d.message}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s\n", d.message.c_str());
  }
  return 0;
}

mc::cli::Registrar reg{{"device", "report whether CUDA is compiled in and a GPU was found (else the CPU is used)",
                        "megacluster device [--json]", run_device}};

}  // namespace
