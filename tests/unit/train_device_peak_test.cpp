// The lab's device to its catalog GPU and peak (train/device_peak.h), with the names the CUDA runtime
// reports for these parts.
#include "catalog/catalog.h"
#include "train/device_peak.h"

#include <gtest/gtest.h>

namespace {

using mc::device::Precision;

const mc::Table& gpus() {
  static const mc::Catalog c = mc::load_catalog(MC_SOURCE_DIR "/assets");
  return *c.table("gpus");
}

TEST(TrainDevicePeak, RuntimeNamesFindTheirCatalogGpu) {
  auto id = [](const char* name) {
    const mc::Record* r = mc::train::gpu_record_for(gpus(), name);
    return r ? r->id : std::string("none");
  };
  EXPECT_EQ(id("NVIDIA H100 80GB HBM3"), "h100-80gb");
  EXPECT_EQ(id("Tesla V100-SXM2-16GB"), "v100-16gb");
  EXPECT_EQ(id("Tesla V100-SXM2-32GB"), "v100-32gb");
  EXPECT_EQ(id("NVIDIA A100-SXM4-80GB"), "a100-80gb");
  EXPECT_EQ(id("NVIDIA A100-SXM4-40GB"), "a100-40gb");
  EXPECT_EQ(id("NVIDIA GeForce RTX 4090"), "none");  // not in the catalog: no MFU rather than a wrong one
  EXPECT_EQ(id("cpu"), "none");
}

TEST(TrainDevicePeak, PeakFollowsThePrecision) {
  const mc::Record& h100 = *gpus().find("h100-80gb");
  std::string field;
  EXPECT_DOUBLE_EQ(mc::train::peak_flops_for(h100, Precision::bf16, &field), h100.get("peak_bf16_tensor_flops"));
  EXPECT_EQ(field, "peak_bf16_tensor_flops");
  EXPECT_DOUBLE_EQ(mc::train::peak_flops_for(h100, Precision::tf32), h100.get("peak_tf32_tensor_flops"));
  EXPECT_DOUBLE_EQ(mc::train::peak_flops_for(h100, Precision::fp32), h100.get("peak_fp32_flops"));
  // The datasheet's ratios: tf32 dense is half of bf16 dense; fp32 runs without tensor cores.
  EXPECT_NEAR(2 * h100.get("peak_tf32_tensor_flops") / h100.get("peak_bf16_tensor_flops"), 1.0, 1e-3);
  EXPECT_LT(h100.get("peak_fp32_flops"), h100.get("peak_tf32_tensor_flops") / 5);
  const mc::Record& v100 = *gpus().find("v100-32gb");
  EXPECT_EQ(mc::train::peak_flops_for(v100, Precision::tf32), 0.0) << "Volta has no TF32 tensor cores";
}

}  // namespace
