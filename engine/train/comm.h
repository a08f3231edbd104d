// comm.h - the virtual workers' network: one mailbox per worker and the collectives built on it
// (point-to-point send/recv, ring reduce-scatter, ring all-gather, ring all-reduce = reduce-scatter +
// all-gather, binomial-tree all-reduce). Every message is counted: bytes and messages per worker, per
// link and per traffic class, and logged for the current step so the UI can draw who sent what to whom.
//
// The ring algorithms follow NCCL (nccl-tests PERFORMANCE.md): a buffer of n floats is cut into p chunks;
// in reduce-scatter step k, member i sends chunk (i-k-1) mod p to member i+1, which adds it into its own
// copy; after p-1 steps member i holds the full sum of chunk i. All-gather then circulates the reduced
// chunks for p-1 more steps. Every member ends with bit-identical data (one summation order per chunk).
#pragma once

#include "core/collective_backend.h"

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
// core/collective_backend.h so that engine/cuda can implement it without including train/.
using mc::CollectiveBackend;

// What one directed link (src -> dst) carried, by traffic class.
struct LinkCounters {
  double bytes[kTrafficClasses] = {};
  double messages[kTrafficClasses] = {};
  double data_bytes() const;     // all classes but control
  double data_messages() const;  // all classes but control
};
using LinkMap = std::map<std::pair<int, int>, LinkCounters>;  // (src, dst) -> counters

class Comm {
 public:
  explicit Comm(int workers = 1);
  int workers() const { return int(counters_.size()); }

  // Point to point. recv pops the oldest message from src with this tag; throws std::logic_error if there
  // is none (a schedule bug, never a silent zero). `tick` is the pipeline clock the message was sent at.
  void send(int src, int dst, int tag, const float* data, size_t n, Traffic t, int tick = 0);
  std::vector<float> recv(int dst, int src, int tag);
  bool has(int dst, int src, int tag, int before_tick) const;  // a message sent before this tick waits

  // Collectives over `group` (worker ids, ring order); bufs[i] is member i's buffer of n floats (n must be
  // a multiple of the group size for the ring algorithms). Sums; callers scale.
  void reduce_scatter(const std::vector<int>& group, const std::vector<float*>& bufs, size_t n, Traffic t);
  void all_gather(const std::vector<int>& group, const std::vector<float*>& bufs, size_t n, Traffic t);
  void all_reduce(const std::vector<int>& group, const std::vector<float*>& bufs, size_t n, Traffic t);
  // Binomial tree: reduce to member 0 then broadcast (2 ceil(log2 p) rounds; for small buffers).
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
    int src, tag, tick;
    std::vector<float> data;
  };
  std::vector<std::deque<Message>> inbox_;
  std::vector<WorkerCounters> counters_, step_;
  LinkMap links_, step_links_;
  CollectiveBackend* backend_ = nullptr;
  long long backend_calls_ = 0;
  // Counts what the ring (reduce-scatter or all-gather phase) sends, hop by hop, without moving data.
  void count_ring(const std::vector<int>& g, size_t chunk, Traffic t);
  std::vector<MessageRecord> log_;
  void count(int src, int dst, double bytes, Traffic t);
};

}  // namespace mc::train
