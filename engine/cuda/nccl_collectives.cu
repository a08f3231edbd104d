// nccl_collectives.cu - see nccl_collectives.h. One NCCL communicator per distinct list of GPUs (a dp, tp
// or embedding group), created on first use with ncclCommInitAll (single process, one rank per GPU) and
// driven from the trainer's thread inside ncclGroupStart/End, NCCL's pattern for one thread steering
// several GPUs. The workers' buffers are device memory (device/compute.h): NCCL works on them in place,
// nothing is staged through the host; every call is checked.
#include "cuda/cuda_check.h"
#include "cuda/dl_open.h"
#include "cuda/nccl_collectives.h"
#include "cuda/train_kernels.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace mc::cuda {

namespace {

constexpr const char* kWho = "NCCL collectives";
[[noreturn]] void fail(const std::string& call, const std::string& what) { fail_call(kWho, call, what); }
#define MC_CUDA(call) check_call(kWho, (call), #call)

struct Nccl {
  void* lib = nullptr;
  decltype(&ncclCommInitAll) init_all = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;

  void check(ncclResult_t r, const char* call) const {
    if (r == ncclSuccess) return;
    fail(call, std::string(error_string ? error_string(r) : "NCCL error") + " (" + std::to_string(int(r)) + ")");
  }
};

template <class F>
void load_symbol(void* lib, const char* name, F& f) {
  if (!dl_symbol(lib, name, f)) fail("dlsym(" + std::string(name) + ")", "symbol not found in libnccl");
}

Nccl load_nccl() {
  Nccl n;
  std::string errors;
  n.lib = dl_open_first(
      {"libnccl.so.2", "libnccl.so", "/usr/local/cuda/lib64/libnccl.so.2", "/usr/local/cuda/lib/libnccl.so.2"},
      &errors);
  if (!n.lib) fail("dlopen(libnccl)", errors);
  load_symbol(n.lib, "ncclCommInitAll", n.init_all);
  load_symbol(n.lib, "ncclCommDestroy", n.destroy);
  load_symbol(n.lib, "ncclAllReduce", n.all_reduce);
  load_symbol(n.lib, "ncclReduceScatter", n.reduce_scatter);
  load_symbol(n.lib, "ncclAllGather", n.all_gather);
  load_symbol(n.lib, "ncclGroupStart", n.group_start);
  load_symbol(n.lib, "ncclGroupEnd", n.group_end);
  load_symbol(n.lib, "ncclGetErrorString", n.error_string);
  return n;
}

enum class Op { all_reduce, reduce_scatter, all_gather };

class NcclBackend final : public mc::CollectiveBackend {
 public:
  NcclBackend(Nccl api, int gpus) : api_(api), gpus_(gpus) {}
  ~NcclBackend() override {
    // Best effort: at process exit the runtime may be gone already, so errors are ignored here.
    for (auto& [devs, g] : groups_)
      for (size_t i = 0; i < devs.size(); ++i) {
        cudaSetDevice(devs[i]);
        if (g.comm[i]) api_.destroy(g.comm[i]);
      }
  }
  const char* name() const override { return "nccl"; }
  bool serves(const device::Device& d) const override { return d.memory_space() == device::MemorySpace::cuda; }
  bool reduce_scatter(const std::vector<int>& g, const Bufs& b, size_t n) override {
    return run(Op::reduce_scatter, g, b, n);
  }
  bool all_gather(const std::vector<int>& g, const Bufs& b, size_t n) override { return run(Op::all_gather, g, b, n); }
  bool all_reduce(const std::vector<int>& g, const Bufs& b, size_t n) override { return run(Op::all_reduce, g, b, n); }

 private:
  struct Group {
    std::vector<ncclComm_t> comm;
  };
  Nccl api_;
  int gpus_;
  std::map<std::vector<int>, Group> groups_;

  Group& group(const std::vector<int>& devs) {
    auto it = groups_.find(devs);
    if (it != groups_.end()) return it->second;
    Group g;
    g.comm.assign(devs.size(), nullptr);
    // Rank i of the communicator is GPU devs[i], i.e. member i of the group: chunk i is rank i's.
    api_.check(api_.init_all(g.comm.data(), int(devs.size()), devs.data()), "ncclCommInitAll");
    return groups_.emplace(devs, std::move(g)).first->second;
  }

  // In place on the members' buffers, on the legacy default stream of each GPU, so the collective is
  // ordered after the kernels that wrote the buffers and before those that read them.
  bool run(Op op, const std::vector<int>& workers, const Bufs& bufs, size_t n) {
    const std::vector<int> devs = group_devices(workers, gpus_);
    if (devs.empty() || devs.size() < 2) return false;  // two members on one GPU: the engine's ring
    Group& g = group(devs);
    const size_t p = devs.size(), chunk = n / p;
    api_.check(api_.group_start(), "ncclGroupStart");
    for (size_t i = 0; i < p; ++i) {
      float* d = device::Raw::ptr(bufs[i]);
      switch (op) {
        case Op::all_reduce:
          api_.check(api_.all_reduce(d, d, n, ncclFloat32, ncclSum, g.comm[i], cudaStreamLegacy), "ncclAllReduce");
          break;
        case Op::reduce_scatter:  // in place: rank i's result lands in its own chunk
          api_.check(api_.reduce_scatter(d, d + i * chunk, chunk, ncclFloat32, ncclSum, g.comm[i], cudaStreamLegacy),
                     "ncclReduceScatter");
          break;
        case Op::all_gather:  // in place: rank i's input is its own chunk
          api_.check(api_.all_gather(d + i * chunk, d, chunk, ncclFloat32, g.comm[i], cudaStreamLegacy),
                     "ncclAllGather");
          break;
      }
    }
    api_.check(api_.group_end(), "ncclGroupEnd");
    return true;
  }
};

}  // namespace

std::unique_ptr<mc::CollectiveBackend> make_nccl_backend(std::string* why) {
  std::string reason;
  if (!available(&reason)) {
    if (why) *why = "no NCCL collectives: " + reason;
    return nullptr;
  }
  const int gpus = device_count();
  if (gpus < 2) {
    if (why) *why = "one GPU: the collectives stay the engine's own rings (NCCL needs two or more GPUs)";
    return nullptr;
  }
  try {
    auto b = std::make_unique<NcclBackend>(load_nccl(), gpus);
    if (why) *why = "NCCL over " + std::to_string(gpus) + " GPUs (worker w on GPU w % " + std::to_string(gpus) + ")";
    return b;
  } catch (const std::exception& e) {
    if (why) *why = std::string("no NCCL collectives: ") + e.what();
    return nullptr;
  }
}

}  // namespace mc::cuda
