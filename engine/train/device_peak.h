// device_peak.h - which catalog GPU the lab's device is, and its peak for the precision the lab runs, so
// MFU is measured FLOP/s over a sourced peak (assets/catalog/gpus.json), never a typed number.
#pragma once

#include "catalog/catalog.h"
#include "device/compute.h"

#include <string>

namespace mc::train {

// The gpus.json record of a device as the CUDA runtime names it ("NVIDIA H100 80GB HBM3", "Tesla
// V100-SXM2-16GB"): the records whose name holds the same model number (P100, V100, A100, H100, ...),
// preferring the one whose memory size (16, 32, 40, 80 GB) the name also gives; nullptr when none does.
const Record* gpu_record_for(const Table& gpus, const std::string& device_name);

// The record's peak FLOP/s for the products in this precision: fp32 -> peak_fp32_flops, tf32 ->
// peak_tf32_tensor_flops, bf16 -> peak_bf16_tensor_flops; 0 when the catalog has none. *field (when given)
// names the field, so a caller can show its source.
double peak_flops_for(const Record& gpu, device::Precision p, std::string* field = nullptr);

}  // namespace mc::train
