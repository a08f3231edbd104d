// accelerator.h - the word for one accelerator of a catalog row ("GPU", "TPU v3 chip", "TPU v3 core"), so a
// panel that prices or counts TPUs does not call them GPUs (a TPU v3 core-hour is not a GPU-hour).
#pragma once

#include "catalog/catalog.h"

#include <string>

namespace mc {

struct AcceleratorWords {
  std::string one = "GPU";        // "1 GPU", "per GPU"
  std::string many = "GPUs";      // "256 GPUs"
  std::string hour = "GPU-hour";  // "$1.00 per GPU-hour", "3.05e+04 GPU-hours"
  bool is_gpu = true;
};

// The words for the accelerator `id`: a gpus.json row's text "unit" when it has one (e.g. "TPU v3 chip"),
// else derived from its "architecture" text (a "TPU ..." architecture is not a GPU: its unit is a chip,
// as gpus.json's tpu-v3 row counts it); an id that names no gpus.json row but reads "tpu-...-core" (the
// capital plan's "tpu-v3-core", priced per core in prices.json) is a TPU core. Anything else is a GPU.
AcceleratorWords accelerator_words(const Catalog* cat, const std::string& id);

}  // namespace mc
