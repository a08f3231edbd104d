// mpi_collectives.cpp - MPI's own collectives behind `train --mpi-native` (see mpi_transport.h). The NCCL
// bootstrap is nccl_ranks.cpp's (nccl_absent.cpp's in a build without CUDA).
#include "mpi/mpi_transport.h"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <stdexcept>

namespace mc::mpi {

namespace {

// One communicator per group of ranks (a dp, tp or embedding group), made on first use with
// MPI_Comm_create_group: only the group's members call it, as only they run its collectives.
class NativeCollectives final : public CollectiveBackend {
 public:
  explicit NativeCollectives(MpiTransport& t) : t_(t), world_(*static_cast<MPI_Comm*>(t.comm_handle())) {}
  ~NativeCollectives() override {
    for (auto& [g, c] : comms_) MPI_Comm_free(&c);
  }
  const char* name() const override { return "mpi-native"; }
  // MPI carries host memory: the CPU device's buffers are that (a GPU's go through the engine's ring).
  bool serves(const device::Device& d) const override { return d.host_addressable(); }

  bool reduce_scatter(const std::vector<int>& g, const Bufs& bufs, size_t n) override {
    const int i = position(g);
    if (i < 0) return true;  // no member here: the members' processes run it
    const size_t chunk = n / g.size();
    std::vector<float> mine(chunk);
    ok(MPI_Reduce_scatter_block(device::Raw::ptr(bufs[size_t(i)]), mine.data(), int(chunk), MPI_FLOAT, MPI_SUM,
                                comm(g)));
    std::copy(mine.begin(), mine.end(), device::Raw::ptr(bufs[size_t(i)]) + size_t(i) * chunk);
    return true;
  }
  bool all_gather(const std::vector<int>& g, const Bufs& bufs, size_t n) override {
    const int i = position(g);
    if (i < 0) return true;
    ok(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, device::Raw::ptr(bufs[size_t(i)]), int(n / g.size()),
                     MPI_FLOAT, comm(g)));
    return true;
  }
  bool all_reduce(const std::vector<int>& g, const Bufs& bufs, size_t n) override {
    const int i = position(g);
    if (i < 0) return true;
    ok(MPI_Allreduce(MPI_IN_PLACE, device::Raw::ptr(bufs[size_t(i)]), int(n), MPI_FLOAT, MPI_SUM, comm(g)));
    return true;
  }

 private:
  MpiTransport& t_;
  MPI_Comm world_;
  std::map<std::vector<int>, MPI_Comm> comms_;

  int position(const std::vector<int>& g) const {
    const auto it = std::find(g.begin(), g.end(), t_.rank());
    return it == g.end() ? -1 : int(it - g.begin());
  }
  MPI_Comm comm(const std::vector<int>& g) {
    auto it = comms_.find(g);
    if (it != comms_.end()) return it->second;
    MPI_Group world_group, group;
    MPI_Comm_group(world_, &world_group);
    MPI_Group_incl(world_group, int(g.size()), g.data(), &group);  // ranks in ring order
    MPI_Comm c;
    ok(MPI_Comm_create_group(world_, group, 7, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Group_free(&group);
    MPI_Group_free(&world_group);
    return comms_[g] = c;
  }
  static void ok(int rc) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw std::runtime_error("MPI native collective failed: " + std::string(text, size_t(len)));
  }
};

}  // namespace

std::unique_ptr<CollectiveBackend> make_native_collectives(MpiTransport& t) {
  return std::make_unique<NativeCollectives>(t);
}

void MpiTransport::use_native_collectives() { native_ = make_native_collectives(*this); }

}  // namespace mc::mpi
