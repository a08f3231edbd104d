// cuda_check.h - CUDA runtime errors as exceptions that name the failing call, for the .cu files
// (train_kernels.cu, nccl_collectives.cu). `who` prefixes the message ("CUDA", "NCCL collectives").
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace mc::cuda {

[[noreturn]] inline void fail_call(const char* who, const std::string& call, const std::string& what) {
  throw std::runtime_error(std::string(who) + ": " + call + " failed: " + what);
}

inline void check_call(const char* who, cudaError_t e, const char* call) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  fail_call(who, call, std::string(cudaGetErrorString(e)) + " (" + std::to_string(int(e)) + ")");
}

}  // namespace mc::cuda
