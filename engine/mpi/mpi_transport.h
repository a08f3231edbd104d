// mpi_transport.h - the training lab across real processes and hosts: `mpirun -np N megacluster train`.
// Each MPI rank runs one worker of the layout (rank = worker id); the engine's own rings, tree and
// pipeline sends (engine/train/parallel/comm.h) move their bytes through MPI point-to-point calls here, so the
// bytes counted per rank and the order of every sum are those of the in-process lab.
//
// The lessons of a gang-scheduled job (every rank in one communicator; one dead rank stops the job, which
// restarts from its last checkpoint) are kept here too:
//   - errors return (MPI_ERRORS_RETURN) and every wait has a deadline (the heartbeat): a rank that waits
//     longer than `timeout_s` on a peer names it, names the last sound checkpoint, and aborts the job;
//   - when a rank dies, Open MPI 4.1's mpirun sends SIGTERM to the others (SIGKILL 1 s later,
//     odls_base_sigkill_timeout): the handler installed by install_gang_handler() names the rank that is
//     gone (its pid no longer exists) and the last sound checkpoint before the process ends.
//
// Only engine/mpi and the CLI include <mpi.h>; this header does not, so the engine needs no MPI.
#pragma once

#include "device/collective_backend.h"
#include "train/parallel/comm.h"

#include <memory>
#include <string>
#include <vector>

namespace mc::mpi {

// The number of processes and this one's rank that a launcher (mpirun / srun / hydra) announced in the
// environment, without calling MPI; {0, 0} when not started by one.
struct Launch {
  int size = 0, rank = 0;
};
Launch launched();

// MPI_Init / MPI_Finalize for the process (one at a time). Aborting is MPI_Abort on the world.
class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  static void abort(int code);

 private:
  int rank_ = 0, size_ = 1;
};

// The lab's Transport (train/comm.h) over MPI_COMM_WORLD (a duplicate with MPI_ERRORS_RETURN). Sends are
// MPI_Isend of a kept copy; ring steps MPI_Isend + MPI_Irecv; every wait polls with a deadline.
class MpiTransport : public train::Transport {
 public:
  explicit MpiTransport(double timeout_s = 60);
  ~MpiTransport() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int dst, int tag, const void* data, size_t bytes) override;
  std::vector<char> recv(int src, int tag) override;
  void sendrecv(int dst, const void* out, int src, void* in, size_t bytes, int tag) override;
  void flush() override;
  std::vector<std::string> all_gather(const std::string& mine) override;
  std::vector<std::string> gather(const std::string& mine) override;
  double wire_bytes() const override { return wire_bytes_; }
  void note_checkpoint(const std::string& path) override;
  CollectiveBackend* collectives() override { return native_.get(); }
  // From now on the lab's collectives run as MPI's own (make_native_collectives); not bit-identical.
  void use_native_collectives();
  // From now on the lab's collectives run on `b` (the NCCL ranks backend of nccl_bootstrap).
  void use_collectives(std::unique_ptr<CollectiveBackend> b) { native_ = std::move(b); }

  // The communicator as MPI's handle (an MPI_Comm, passed as void* so this header needs no <mpi.h>).
  void* comm_handle();
  double timeout_s() const { return timeout_s_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int rank_ = 0, size_ = 1;
  double timeout_s_ = 60, wire_bytes_ = 0;
  std::unique_ptr<CollectiveBackend> native_;
};

// MPI's own collectives (MPI_Reduce_scatter_block, MPI_Allgather, MPI_Allreduce) for the lab's rings,
// behind `train --mpi-native`: faster on real networks, but MPI picks the summation order, so losses may
// differ from the in-process run in the last bits. Comm still counts the ring's bytes (what the model
// predicts); MPI's own algorithm may move other amounts (the benchmark compares the wire bytes).
std::unique_ptr<CollectiveBackend> make_native_collectives(MpiTransport& t);

// SIGTERM / SIGINT handler for the gang: names the ranks whose processes are gone (checked by pid, on
// this host) and the last sound checkpoint, then ends this process. Gathers every rank's pid and host
// (a collective: every rank calls it, after the transport is made).
void install_gang_handler(MpiTransport& t);

// The NCCL bootstrap across ranks (ncclGetUniqueId on rank 0, MPI_Bcast, ncclCommInitRank): true and a
// communicator when this build has CUDA and NCCL and every rank has a GPU, else false and *why. The
// communicator then carries the lab's collectives in place on the GPUs' buffers (groups split from it with
// ncclCommSplit), unless MPI's own were chosen (--mpi-native) or libnccl is older than 2.18.
bool nccl_bootstrap(MpiTransport& t, std::string* why);

}  // namespace mc::mpi
