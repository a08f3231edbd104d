// nccl_ranks.cpp - the NCCL bootstrap across ranks (ncclGetUniqueId on rank 0, broadcast over MPI,
// ncclCommInitRank on each) and the collectives it carries on the ranks' GPUs. The bridge between engine/mpi
// and engine/cuda: CMake compiles it where both are built (nccl_absent.cpp stands in without CUDA), so no
// source tests for CUDA with the preprocessor.
#include "cuda/dl_open.h"
#include "cuda/train_kernels.h"
#include "mpi/mpi_transport.h"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <stdexcept>

namespace mc::mpi {

namespace {

// The lab's collectives on the ranks' GPUs through the NCCL communicator nccl_bootstrap made: one
// sub-communicator per group (a dp, tp or embedding group), split from the world one on first use
// (ncclCommSplit is collective over the world: every rank calls it, since every rank replays the same
// schedule and so makes the same backend calls), then each member's call in place on its device buffer,
// on the legacy default stream, ordered with the kernels that wrote it. No staging through the host.
// NCCL's headers are not needed: the entry points are opened at run time (as engine/cuda does) with the
// types and values nccl.h gives them.
class NcclRanks final : public CollectiveBackend {
 public:
  using Comm_t = void*;
  using SplitFn = int (*)(Comm_t, int, int, Comm_t*, void*);
  using AllReduceFn = int (*)(const void*, void*, size_t, int, int, Comm_t, void*);
  using ReduceScatterFn = int (*)(const void*, void*, size_t, int, int, Comm_t, void*);
  using AllGatherFn = int (*)(const void*, void*, size_t, int, Comm_t, void*);
  static constexpr int kFloat32 = 7, kSum = 0, kNoColor = -1;  // ncclFloat32, ncclSum, NCCL_SPLIT_NOCOLOR
  // cudaStreamLegacy, as CUDA's driver_types.h defines it: ((cudaStream_t)0x1).
  static inline void* const kLegacyStream = reinterpret_cast<void*>(0x1);

  NcclRanks(MpiTransport& t, Comm_t world, SplitFn split, AllReduceFn ar, ReduceScatterFn rs, AllGatherFn ag)
      : t_(t), world_(world), split_(split), all_reduce_(ar), reduce_scatter_(rs), all_gather_(ag) {}
  const char* name() const override { return "nccl-ranks"; }
  bool serves(const device::Device& d) const override { return d.memory_space() == device::MemorySpace::cuda; }
  bool reduce_scatter(const std::vector<int>& g, const Bufs& b, size_t n) override {
    return run(g, b, n, [&](float* d, size_t chunk, int i, Comm_t c) {
      return reduce_scatter_(d, d + size_t(i) * chunk, chunk, kFloat32, kSum, c, kLegacyStream);
    });
  }
  bool all_gather(const std::vector<int>& g, const Bufs& b, size_t n) override {
    return run(g, b, n, [&](float* d, size_t chunk, int i, Comm_t c) {
      return all_gather_(d + size_t(i) * chunk, d, chunk, kFloat32, c, kLegacyStream);
    });
  }
  bool all_reduce(const std::vector<int>& g, const Bufs& b, size_t n) override {
    return run(g, b, n,
               [&](float* d, size_t, int, Comm_t c) { return all_reduce_(d, d, n, kFloat32, kSum, c, kLegacyStream); });
  }

 private:
  MpiTransport& t_;
  Comm_t world_;
  SplitFn split_;
  AllReduceFn all_reduce_;
  ReduceScatterFn reduce_scatter_;
  AllGatherFn all_gather_;
  std::map<std::vector<int>, Comm_t> comms_;  // null where this rank is not a member

  template <class Op>
  bool run(const std::vector<int>& g, const Bufs& bufs, size_t n, Op op) {
    const auto it = std::find(g.begin(), g.end(), t_.rank());
    const int i = it == g.end() ? -1 : int(it - g.begin());
    auto found = comms_.find(g);
    if (found == comms_.end()) {
      Comm_t sub = nullptr;
      if (split_(world_, i < 0 ? kNoColor : 0, i < 0 ? 0 : i, &sub, nullptr) != 0)
        throw std::runtime_error("ncclCommSplit failed on rank " + std::to_string(t_.rank()));
      found = comms_.emplace(g, sub).first;
    }
    if (i < 0) return true;  // the members' processes run it
    if (op(device::Raw::ptr(bufs[size_t(i)]), n / g.size(), i, found->second) != 0)
      throw std::runtime_error("an NCCL collective failed on rank " + std::to_string(t_.rank()));
    return true;
  }
};

}  // namespace

bool nccl_bootstrap(MpiTransport& t, std::string* why) {
  MPI_Comm comm = *static_cast<MPI_Comm*>(t.comm_handle());
  // Every rank must take part in the broadcast, so the decision "NCCL or not" is agreed first: a rank
  // without a GPU or without libnccl makes the whole gang stay on MPI.
  std::string reason;
  int usable = mc::cuda::available(&reason) && mc::cuda::device_count() > 0 ? 1 : 0;
  // NCCL runs one rank per GPU: more ranks on this host than GPUs cannot form a communicator.
  const char* local_size = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (usable && local_size && std::atoi(local_size) > mc::cuda::device_count()) {
    usable = 0;
    reason = std::string(local_size) + " ranks on this host share " + std::to_string(mc::cuda::device_count()) +
             " GPU(s); NCCL needs one GPU per rank";
  }
  // ncclUniqueId is 128 bytes (NCCL_UNIQUE_ID_BYTES) passed by value; ncclComm_t an opaque pointer. The
  // library is opened at run time like engine/cuda does, so binaries start without it.
  struct UniqueId {
    char internal[128];
  };
  using GetId = int (*)(UniqueId*);
  using InitRank = int (*)(void**, int, UniqueId, int);
  GetId get_id = nullptr;
  InitRank init_rank = nullptr;
  std::string errors;
  void* lib =
      usable ? mc::cuda::dl_open_first({"libnccl.so.2", "libnccl.so", "/usr/local/cuda/lib64/libnccl.so.2"}, &errors)
             : nullptr;
  if (usable && (!lib || !mc::cuda::dl_symbol(lib, "ncclGetUniqueId", get_id) ||
                 !mc::cuda::dl_symbol(lib, "ncclCommInitRank", init_rank))) {
    usable = 0;
    reason = "libnccl cannot be opened: " + errors;
  }
  int all = 0;
  MPI_Allreduce(&usable, &all, 1, MPI_INT, MPI_MIN, comm);
  if (!all) {
    if (why) *why = usable ? "another rank has no usable GPU or NCCL; the collectives stay on MPI" : reason;
    return false;
  }
  UniqueId id{};
  if (t.rank() == 0 && get_id(&id) != 0) {
    if (why) *why = "ncclGetUniqueId failed";
    MPI_Abort(comm, 4);
  }
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
  // One GPU per rank on its host: the local rank picks the device (mpirun's OMPI_COMM_WORLD_LOCAL_RANK).
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  const int device = (local ? std::atoi(local) : t.rank()) % mc::cuda::device_count();
  mc::cuda::set_thread_device(device);
  void* nccl_comm = nullptr;
  if (init_rank(&nccl_comm, t.size(), id, t.rank()) != 0) {
    if (why) *why = "ncclCommInitRank failed on rank " + std::to_string(t.rank());
    return false;
  }
  // The lab's collectives go through it (unless --mpi-native asked for MPI's own), when every rank has
  // ncclCommSplit (NCCL 2.18 and later) to make the groups' communicators.
  NcclRanks::SplitFn split = nullptr;
  NcclRanks::AllReduceFn ar = nullptr;
  NcclRanks::ReduceScatterFn rs = nullptr;
  NcclRanks::AllGatherFn ag = nullptr;
  int has_split = mc::cuda::dl_symbol(lib, "ncclCommSplit", split) && mc::cuda::dl_symbol(lib, "ncclAllReduce", ar) &&
                          mc::cuda::dl_symbol(lib, "ncclReduceScatter", rs) &&
                          mc::cuda::dl_symbol(lib, "ncclAllGather", ag)
                      ? 1
                      : 0;
  int every = 0;
  MPI_Allreduce(&has_split, &every, 1, MPI_INT, MPI_MIN, comm);
  const bool carries = every && !t.collectives();
  if (carries) t.use_collectives(std::make_unique<NcclRanks>(t, nccl_comm, split, ar, rs, ag));
  if (why)
    *why = "NCCL communicator over " + std::to_string(t.size()) + " ranks (rank " + std::to_string(t.rank()) +
           " on GPU " + std::to_string(device) + ")" +
           (carries           ? "; it carries the lab's collectives on the GPUs' buffers"
            : t.collectives() ? "; the collectives stay MPI's own (--mpi-native)"
                              : "; libnccl has no ncclCommSplit (NCCL < 2.18): the collectives stay "
                                "the engine's rings over MPI");
  return true;
}

}  // namespace mc::mpi
