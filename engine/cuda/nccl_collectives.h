// nccl_collectives.h - the training lab's ring collectives on a workstation's GPUs through NCCL (shipped
// with the CUDA toolkit), when it has two or more: virtual worker w runs on GPU w % G (its kernels through
// set_thread_device, train_kernels.h) and its collectives go through ncclAllReduce / ncclReduceScatter /
// ncclAllGather between those GPUs. The engine's own rings (engine/train/parallel/comm.cpp) stay the reference and
// the CPU path; Comm counts the same ring bytes either way (device/collective_backend.h).
//
// Plain C++ (no CUDA or NCCL types), so the engine includes it without the toolkit's headers. libnccl is
// opened at run time with dlopen (like cuBLAS), so binaries start on machines without it.
#pragma once

#include "device/collective_backend.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace mc::cuda {

// The GPU of virtual worker `worker` when `gpus` GPUs are shared round-robin (0 when gpus <= 0).
inline int device_of_worker(int worker, int gpus) { return gpus > 0 ? worker % gpus : 0; }

// The GPUs of a group's members, or an empty vector when two members share a GPU (NCCL runs one rank per
// GPU in a communicator; Comm then uses its own ring for that group). Inline so CPU-only builds test it.
inline std::vector<int> group_devices(const std::vector<int>& workers, int gpus) {
  std::vector<int> devs;
  for (int w : workers) devs.push_back(device_of_worker(w, gpus));
  std::vector<int> sorted = devs;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return {};
  return devs;
}

// NCCL collectives over this machine's GPUs; nullptr (and *why) when there are fewer than two GPUs, the
// CUDA context does not come up, or libnccl cannot be opened.
std::unique_ptr<mc::CollectiveBackend> make_nccl_backend(std::string* why = nullptr);

}  // namespace mc::cuda
