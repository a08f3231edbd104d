// collective_backend.h - the interface through which the training lab's ring collectives may run on
// another engine (NCCL on a workstation's GPUs: engine/cuda/nccl_collectives.h). It lives in core/ so
// that train/ (which uses it) and cuda/ (which implements it) both depend on core/ and not on each other.
#pragma once

#include <cstddef>
#include <vector>

namespace mc {

// Where the arithmetic of the ring collectives may run instead of the engine's own ring (the reference):
// NCCL on a workstation's GPUs (engine/cuda/nccl_collectives.h). Buffers are the members' host buffers of
// n floats (n divisible by the group size); chunk i of the buffer is member i's, as in Comm's rings. A
// call returns false when this backend cannot serve the group (e.g. two members on one GPU): Comm then
// runs its own ring. Comm counts the ring's bytes and messages either way, so the counters, the message
// log and the predictions stay the same; only the summation order (and so the last bits) may differ.
class CollectiveBackend {
 public:
  virtual ~CollectiveBackend() = default;
  virtual const char* name() const = 0;
  // Every member ends with the sum of chunk i in its chunk i (the other chunks are left unspecified).
  virtual bool reduce_scatter(const std::vector<int>& group, const std::vector<float*>& bufs, size_t n) = 0;
  // Every member ends with member i's chunk i in its chunk i, for every i.
  virtual bool all_gather(const std::vector<int>& group, const std::vector<float*>& bufs, size_t n) = 0;
  // Every member ends with the element-wise sum of all the buffers.
  virtual bool all_reduce(const std::vector<int>& group, const std::vector<float*>& bufs, size_t n) = 0;
};

}  // namespace mc
