// comm.h - the virtual workers' network: one mailbox per worker and the collectives built on it
// (point-to-point send/recv, ring reduce-scatter, ring all-gather, ring all-reduce = reduce-scatter +
// all-gather, binomial-tree all-reduce). Every message is counted: bytes and messages per worker, per
// link and per traffic class, and logged for the current step so the UI can draw who sent what to whom.
//
// The ring algorithms follow NCCL (nccl-tests PERFORMANCE.md): a buffer of n floats is cut into p chunks;
// in reduce-scatter step k, member i sends chunk (i-k-1) mod p to member i+1, which adds it into its own
// copy; after p-1 steps member i holds the full sum of chunk i. All-gather then circulates the reduced
// chunks for p-1 more steps. Every member ends with bit-identical data (one summation order per chunk).
//
// Across processes (engine/mpi: `mpirun -np N megacluster train`), a Transport carries the bytes: every
// process replays the same schedule, but only computes and sends for its own worker. The mailbox then
// holds each message's envelope only (so `has` and the pipeline clock agree on every rank), the data
// travels through the transport, and the collectives run the same rings and tree with the member's own
// part of each step (send its chunk to the next member, receive the previous member's, add in the same
// order), so the counted bytes and the sums are those of the in-process lab, bit for bit.
//
// Buffers are device memory (device/compute.h): in one process a message is a copy inside the device
// (into a mailbox buffer from a pool, so a step allocates nothing once the first has run) and a ring
// step's reduction is the device's add kernel, in the same order as ever. Across processes the bytes
// cross the host on their way to the transport (MPI carries host memory), and the device counts them.
#pragma once

#include "device/collective_backend.h"
#include "device/compute.h"

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mc::train {

// Traffic classes: data-parallel gradients/parameters, tensor-parallel activations, pipeline boundaries,
// the tied embedding between first and last stage, and small control scalars (loss, gradient norm).
enum class Traffic { dp, tp, pp, tie, control };
constexpr int kTrafficClasses = 5;
const char* to_string(Traffic t);

struct MessageRecord {
  int src = 0, dst = 0;
  double bytes = 0;
  Traffic traffic = Traffic::dp;
};

struct WorkerCounters {
  double bytes_sent[kTrafficClasses] = {};
  double messages_sent[kTrafficClasses] = {};
  double bytes_received = 0;
  double data_bytes_sent() const;     // all classes but control
  double data_messages_sent() const;  // all classes but control
};

// CollectiveBackend (where the rings' arithmetic may run instead, e.g. NCCL) lives in
// device/collective_backend.h so that engine/cuda can implement it without including train/.
using mc::CollectiveBackend;

// What one directed link (src -> dst) carried, by traffic class.
struct LinkCounters {
  double bytes[kTrafficClasses] = {};
  double messages[kTrafficClasses] = {};
  double data_bytes() const;     // all classes but control
  double data_messages() const;  // all classes but control
};
using LinkMap = std::map<std::pair<int, int>, LinkCounters>;  // (src, dst) -> counters

// Moves one process's messages to the others (engine/mpi/mpi_transport.h: MPI point-to-point). Ranks are
// worker ids: this process runs worker rank(). Sends are non-blocking (the transport keeps a copy until it
// is delivered); receives block until the message arrives, or throw when the peer is gone.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void send(int dst, int tag, const void* data, size_t bytes) = 0;
  virtual std::vector<char> recv(int src, int tag) = 0;  // the next message from src with this tag
  // One ring step: `bytes` to dst and as many from src into `in` (MPI_Sendrecv).
  virtual void sendrecv(int dst, const void* out, int src, void* in, size_t bytes, int tag) = 0;
  virtual void flush() = 0;  // waits until every send has been delivered
  // Bookkeeping outside the counted traffic (results, checkpoint shards, timings): every rank's bytes
  // (all_gather), or rank 0 gets them and the others an empty list (gather).
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  virtual double wire_bytes() const = 0;  // every byte this rank handed to the transport so far
  // The last checkpoint every rank has on disk (written or resumed from): what a failure message names.
  virtual void note_checkpoint(const std::string& path) { (void)path; }
  // Collectives this transport runs itself (MPI's own, `train --mpi-native`); nullptr: the engine's rings.
  virtual CollectiveBackend* collectives() { return nullptr; }
};

class Comm {
 public:
  explicit Comm(int workers = 1);
  int workers() const { return int(counters_.size()); }
  // The device the buffers live on (not owned); set before the first message.
  void set_device(device::Device* d) { dev_ = d; }
  device::Device* device() const { return dev_; }
  // Across processes: this process runs worker transport->rank() only (not owned; nullptr = all here).
  void set_transport(Transport* t) { transport_ = t; }
  Transport* transport() const { return transport_; }
  bool local(int worker) const { return !transport_ || transport_->rank() == worker; }

  // Point to point. recv pops the oldest message from src with this tag; throws std::logic_error if there
  // is none (a schedule bug, never a silent zero). `tick` is the pipeline clock the message was sent at.
  // With a transport, a send or receive of another process's worker only books the envelope (data may
  // be null; recv returns nothing), so every process's mailbox and pipeline clock agree.
  void send(int src, int dst, int tag, device::DPtr<const float> data, size_t n, Traffic t, int tick = 0);
  // Copies the message (n floats; a different size is a schedule bug) into `out`.
  void recv(int dst, int src, int tag, device::DPtr<float> out, size_t n);
  bool has(int dst, int src, int tag, int before_tick) const;  // a message sent before this tick waits

  // Collectives over `group` (worker ids, ring order); bufs[i] is member i's buffer of n floats (n must be
  // a multiple of the group size for the ring algorithms). Sums; callers scale.
  using Bufs = std::vector<device::DPtr<float>>;
  void reduce_scatter(const std::vector<int>& group, const Bufs& bufs, size_t n, Traffic t);
  void all_gather(const std::vector<int>& group, const Bufs& bufs, size_t n, Traffic t);
  void all_reduce(const std::vector<int>& group, const Bufs& bufs, size_t n, Traffic t);
  // Binomial tree: reduce to member 0 then broadcast (2 ceil(log2 p) rounds; for small buffers). Host
  // memory: the control scalars (loss, gradient norm) that came back from the devices.
  void tree_all_reduce(const std::vector<int>& group, const std::vector<double*>& bufs, size_t n, Traffic t);

  const WorkerCounters& counters(int w) const { return counters_[size_t(w)]; }
  // Runs the ring collectives' arithmetic on `b` (not owned; nullptr = the engine's own rings).
  void set_collective_backend(CollectiveBackend* b) { backend_ = b; }
  const CollectiveBackend* collective_backend() const { return backend_; }
  long long backend_calls() const { return backend_calls_; }  // collectives the backend served

  const LinkMap& links() const { return links_; }            // since the start
  const LinkMap& step_links() const { return step_links_; }  // in the current step (since begin_step)
  const std::vector<MessageRecord>& step_log() const { return log_; }
  void begin_step();  // clears the step log and the per-step counters
  const WorkerCounters& step_counters(int w) const { return step_[size_t(w)]; }
  size_t pending() const;  // undelivered messages (0 between steps)

 private:
  struct Message {
    int src = 0, tag = 0, tick = 0;
    device::Buffer<float> data;  // in one process: a mailbox buffer on the device
    size_t n = 0;                // floats in it
    std::vector<float> host;     // the tree's control scalars
  };
  std::vector<std::deque<Message>> inbox_;
  std::vector<std::vector<device::Buffer<float>>> pool_;  // per destination worker: free mailbox buffers
  device::Device* dev_ = nullptr;
  device::Buffer<float> take(int dst, size_t n);
  void give_back(int dst, device::Buffer<float> b);
  void send_host(int src, int dst, int tag, std::vector<float> data, Traffic t);
  std::vector<float> recv_host(int dst, int src, int tag);
  void reduce_from_mailbox(int dst, int src, int tag, device::DPtr<float> out, size_t n);
  std::vector<WorkerCounters> counters_, step_;
  LinkMap links_, step_links_;
  CollectiveBackend* backend_ = nullptr;
  Transport* transport_ = nullptr;
  long long backend_calls_ = 0;
  // Counts what the ring (reduce-scatter or all-gather phase) sends, hop by hop, without moving data.
  void count_ring(const std::vector<int>& g, size_t chunk, Traffic t);
  std::vector<MessageRecord> log_;
  void count(int src, int dst, double bytes, Traffic t);
  void count_sent(int src, int dst, double bytes, Traffic t);
  void count_received(int dst, double bytes);
  // With a transport: this process's position in g (-1: none of its members run here).
  int local_index(const std::vector<int>& g) const;
  // This process's part of a ring phase over g (reduce: add what arrives, reduce-scatter; else copy it).
  void ring_part(const std::vector<int>& g, device::DPtr<float> buf, size_t chunk, Traffic t, bool reduce);
  void tree_part(const std::vector<int>& g, const std::vector<double*>& bufs, size_t n, Traffic t);
};

}  // namespace mc::train
