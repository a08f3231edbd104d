// nccl_absent.cpp - nccl_bootstrap in a build without CUDA (CMake compiles it instead of nccl_ranks.cpp):
// no rank has NCCL, and the collectives stay on MPI.
#include "mpi/mpi_transport.h"

namespace mc::mpi {

bool nccl_bootstrap(MpiTransport&, std::string* why) {
  if (why) *why = "this build has no CUDA (nvcc was not found at configure time): no NCCL on any rank";
  return false;
}

}  // namespace mc::mpi
