// device_peak.cpp - see device_peak.h.
#include "train/device_peak.h"

#include <cctype>
#include <regex>

namespace mc::train {

namespace {
// Model numbers: a capital letter and three digits (P100, V100, A100, H100, H200, L40 is not one of them).
std::string model_number(const std::string& s) {
  static const std::regex re("([A-Z][0-9]{3})");
  std::smatch m;
  return std::regex_search(s, m, re) ? m[1].str() : "";
}
// "80GB", "80 GB", "-16GB": the memory size the name gives, or "".
std::string memory_gb(const std::string& s) {
  static const std::regex re("([0-9]{2,3}) ?GB");
  std::smatch m;
  return std::regex_search(s, m, re) ? m[1].str() : "";
}
}  // namespace

const Record* gpu_record_for(const Table& gpus, const std::string& device_name) {
  const std::string model = model_number(device_name), mem = memory_gb(device_name);
  if (model.empty()) return nullptr;
  const Record* first = nullptr;
  for (const Record& r : gpus.records) {
    if (model_number(r.name) != model) continue;
    if (!first) first = &r;
    if (!mem.empty() && memory_gb(r.name) == mem) return &r;
  }
  return first;
}

double peak_flops_for(const Record& gpu, device::Precision p, std::string* field) {
  const char* key = p == device::Precision::fp32   ? "peak_fp32_flops"
                    : p == device::Precision::tf32 ? "peak_tf32_tensor_flops"
                                                   : "peak_bf16_tensor_flops";
  if (field) *field = key;
  return gpu.get_or(key, 0);
}

}  // namespace mc::train
