// iteration_engine.h - the state of the discrete-event engine of one iteration, shared by its three parts
// (internal to engine/sim/iteration*.cpp; the model is described in iteration.h):
//   iteration_ops.cpp      the replica classes and each worker's op stream (what it runs, in order);
//   iteration.cpp          the event loop (workers, flows, timers, collective streams) and the public API;
//   iteration_results.cpp  the work estimate before the first event and the results after the last.
#pragma once

#include "sim/iteration.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>
#include <tuple>

namespace mc::sim::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// gather: a ZeRO-3 collective the worker joins and waits for; z3_issue: one it joins and goes on (a
// prefetch, a reduce-scatter behind the backward); z3_wait: waits for one issued earlier; tied: the first
// and the last stage meet to all-reduce the tied embedding's gradient (IterationSpec::tied_grad_bytes).
enum class OpType : uint8_t {
  recv,
  compute,
  tp,
  send,
  bucket,
  opt_wait,
  optimizer,
  all_gather,
  gather,
  z3_issue,
  z3_wait,
  tied
};

struct Op {
  OpType type;
  SpanKind kind;  // for compute: forward/backward/optimizer
  double dur_s = 0;
  int mb = -1, chunk = 0;
  int a = 0;   // recv/send: direction (0 activation, 1 gradient); bucket: bucket id; gather/z3_*: ZeRO-3 item;
               // tp: which collective (kCollTp, kCollCpGather, kCollCpReduce)
  int vs = 0;  // recv: own virtual stage; send: destination virtual stage
};

struct Arrival {
  bool arrived = false;
  int waiter = -1;
  int src_worker = -1;
  int pending_sender = -1;  // paired p2p: a sender blocked until the receiver calls (its op at its pc)
};

struct SendRec {
  int cls, src_worker, dir, dst_vs, mb;
  double start_s;
};

// One collective on a stage's data-parallel stream. It starts once every replica class has joined it
// (and the stream is free); the critical path follows `ready_worker`, the class that joined last.
struct DpItem {
  int joined = 0;
  double ready_s = -1, start_s = -1, end_s = -1;
  int ready_worker = -1;
  int mb = -1, chunk = -1;   // ZeRO-3 gathers: which micro-batch and model chunk
  std::vector<int> waiters;  // workers blocked until it ends (post-step all-gather, ZeRO-3 gathers)
};

// Data-parallel collective stream of one stage (spans all replicas, so shared by all classes). Items:
// [0, nb) gradient buckets, nb the post-step parameter all-gather (ZeRO-1/2 explicit), nb + 1 + g the
// g-th ZeRO-3 collective of the stage (Engine::z3_items_).
struct DpStream {
  std::vector<DpItem> items;
  std::deque<int> queue;   // items ready, in order
  std::vector<int> order;  // items in the order they ran
  bool busy = false;
  int item = -1, phase = 0;
  int done = 0;                  // buckets finished
  std::vector<int> opt_waiters;  // workers waiting for all buckets
};

// One ZeRO-3 item: `count` collectives (possibly a fraction: the open or prefetched share of a layer's)
// moving `bytes` in all; a parameter all-gather or (reduce) a gradient reduce-scatter.
struct Z3Item {
  double bytes = 0, count = 1;
  bool reduce = false;
  int unit = -1, mb = -1;  // which unit (layer of the chunk, -1 the rest) and micro-batch issued it
  bool backward = false;
};

struct Worker {
  int cls = 0, stage = 0;
  double speed = 1;
  std::vector<Op> ops;
  size_t pc = 0;
  bool blocked = false;
  double wait_start = 0;
  double op_start = 0;
  int tp_phase = 0;
};

struct Timer {
  double t;
  long long seq;
  int kind, a;
  bool operator>(const Timer& o) const { return t > o.t || (t == o.t && seq > o.seq); }
};

enum TimerKind { kComputeDone, kTpLatency, kSendLatency, kDpLatency, kTiedLatency };
// The collectives a worker's group makes inside a layer, all blocking (OpType::tp, Op::a): the tensor-parallel
// all-reduce, the context-parallel key/value all-gather and their gradients' reduce-scatter.
enum CollKind { kCollTp = 0, kCollCpGather = 1, kCollCpReduce = 2 };
enum FlowKind { kFlowTp = 0, kFlowSend = 1, kFlowDp = 2, kFlowTied = 3 };

// The tied embedding's all-reduce of one class of replicas: its first and last stage's workers, the one
// that came first waiting for the other; then the collective's phases, one after another.
struct TiedMeet {
  std::vector<int> waiters;
  double start_s = -1;
  size_t phase = 0;
};
inline long long flow_tag(int kind, int id) { return (static_cast<long long>(id) << 2) | kind; }

struct OpStreamBuilder;  // iteration_ops.cpp: writes one worker's op stream

class Engine {
  friend struct OpStreamBuilder;

 public:
  Engine(const Topology& topo, const IterationSpec& s) : topo_(topo), s_(s), net_(topo) {}
  void start();                     // builds classes, op streams and phases; starts every worker
  bool step(long long max_events);  // runs at most max_events events; true (and results built) when done
  bool done() const { return finished_; }
  double progress() const;
  long long events() const { return events_; }
  long long work() const { return net_.work() + kWorkPerEvent * events_; }
  [[noreturn]] void throw_over_budget() const;
  double estimated_work() const { return est_work_; }
  IterationResult take() { return std::move(res_); }

 private:
  void build_classes();
  void build_ops(Worker& w);
  void advance(int wi, double now);
  void start_tp(int wi, double now);
  void start_send(int wi, const Op& op, double now);
  void dp_join(int stage, int item, int wi, double now);
  void dp_wait(int stage, int item, int wi, double now);
  void dp_kick(int stage, double now);
  void dp_phase_start(int stage, double now);
  void dp_item_done(int stage, double now);
  void tied_phase_start(int cls, double now);
  void tied_done(int cls, double now);
  bool tied_on() const { return s_.tied_grad_bytes > 0 && s_.pp > 1; }
  void arrive(const SendRec& r, double now);
  void on_flow_done(long long tag, double now);
  void on_timer(const Timer& tm, double now);
  void finish();
  void hottest_series();
  int tp_copy_source(int link) const;
  const std::vector<CollectivePhase>& coll_phases(int wi, int a) const {
    return a == kCollTp         ? tp_phase_[size_t(wi)]
           : a == kCollCpGather ? cp_ag_phase_[size_t(wi)]
                                : cp_rs_phase_[size_t(wi)];
  }
  double coll_bytes(int a) const { return a == kCollTp ? s_.tp_buffer_bytes : s_.cp_buffer_bytes; }
  bool cp_on() const { return s_.cp > 1 && s_.cp_buffer_bytes > 0; }
  void note_group(const FlowGroupSpec* spec, int kind) {
    if (s_.hottest_links > 0) group_src_.push_back({spec, kind});
  }
  void critical_path(int crit);
  double estimate_work();
  std::string over_budget_advice() const;
  bool follow_dp_wait(int& w, double& t, const Span& sp);
  void push_timer(double t, int kind, int a) { timers_.push({t, seq_++, kind, a}); }
  int worker_index(int cls, int stage) const { return cls * s_.pp + stage; }
  int chunks() const { return s_.schedule == PipeSchedule::interleaved ? s_.virtual_stages : 1; }
  // Layers of virtual stage vs (chunk * pp + stage): IterationSpec::chunk_layers, or stage_layers (one
  // chunk per stage), or layers / (pp v).
  int chunk_layer_count(int vs) const {
    if (!s_.chunk_layers.empty()) return s_.chunk_layers[size_t(vs)];
    if (!s_.stage_layers.empty()) return s_.stage_layers[size_t(vs)];
    return s_.layers / (s_.pp * chunks());
  }
  int stage_layer_count(int stage) const {
    int n = 0;
    for (int c = 0; c < chunks(); ++c) n += chunk_layer_count(c * s_.pp + stage);
    return n;
  }
  int ag_item() const { return n_buckets_; }
  int gather_item(int g) const { return n_buckets_ + 1 + g; }
  bool zero3_on() const { return s_.zero3_gathers && s_.dp > 1 && s_.dp_bytes_per_stage > 0; }
  // The updated parameters all-gathered after the step: ZeRO-1/2 done as reduce-scatter + all-gather, or
  // DeepSpeed's ZeRO-1 after its whole all-reduce.
  bool post_step_gather() const { return s_.dp > 1 && ((s_.zero_sharded && !zero3_on()) || s_.zero1_gather.on); }
  const Z3Item* z3_item(int stage, int item) const {
    return item > n_buckets_ ? &z3_items_[size_t(stage)][size_t(item - n_buckets_ - 1)] : nullptr;
  }
  const std::vector<CollectivePhase>& item_phases(int stage, int item) const {
    const Z3Item* z = z3_item(stage, item);
    return item < n_buckets_ || (z && z->reduce) ? dp_phase_[size_t(stage)] : ag_phase_[size_t(stage)];
  }
  double item_bytes(int stage, int item) const {
    if (item < n_buckets_) return bucket_bytes_[size_t(item)];
    // The post-step all-gather moves the stage's parameters; a ZeRO-3 item its own.
    return item == n_buckets_ ? s_.dp_bytes_per_stage : z3_item(stage, item)->bytes;
  }
  // Latency steps are paid once per collective: a ZeRO-3 item stands for `count` back-to-back collectives
  // of the same ring (one per tensor or module of a layer), whose bytes move as one transfer.
  double item_count(int stage, int item) const {
    const Z3Item* z = z3_item(stage, item);
    if (item == ag_item() && s_.zero1_gather.on) return s_.zero1_gather.collectives;
    return z ? z->count : 1.0;
  }
  void add_span(int wi, double a, double b, SpanKind k, int mb, int chunk) {
    if (b > a) res_.workers[size_t(wi)].spans.push_back({a, b, k, mb, chunk});
  }

  const Topology& topo_;
  const IterationSpec s_;
  FlowNet net_;
  IterationResult res_;
  std::vector<std::vector<int>> class_replicas_;
  std::vector<Worker> workers_;
  std::vector<std::vector<Arrival>> arrivals_;  // [cls][(dir * V + vs) * m + mb]
  std::vector<SendRec> sends_;
  std::vector<DpStream> dp_;
  int n_buckets_ = 0;  // per stage
  // ZeRO-3 collectives of each stage in the order its workers issue them (the same for every class).
  std::vector<std::vector<Z3Item>> z3_items_;
  std::vector<double> bucket_bytes_;
  // Cached phases (bytes scaled per use): tp per worker, sends per (cls, src stage, dst stage), dp per stage.
  std::vector<std::vector<CollectivePhase>> tp_phase_;
  std::vector<std::vector<CollectivePhase>> cp_ag_phase_, cp_rs_phase_;  // per worker: its cp groups' rings
  std::map<std::tuple<int, int, int>, CollectivePhase> send_phase_;
  std::vector<std::vector<CollectivePhase>> dp_phase_, ag_phase_;
  std::vector<std::vector<CollectivePhase>> tied_phase_;  // per class: the tied gradient's all-reduce
  std::vector<TiedMeet> tied_;                            // per class
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;
  long long seq_ = 0, events_ = 0;
  int V_ = 1;
  bool tp_in_node_ = true, finished_ = false;
  bool paired_ = false;  // IterationSpec::paired_p2p in effect (a pipeline, 1F1B)
  double wall_s_ = 0;
  double est_work_ = 0;   // estimate_work(), before the first event
  bool refused_ = false;  // est_work_ over the budget: step() throws before processing any event
  // Bytes the simulated tensor-parallel rings put on each link (indexed by link id; sized on first use):
  // only representative replicas run their tp rings, so finish() adds these to the symmetric replicas.
  std::vector<double> tp_link_bytes_;
  // For the hottest links' series: each started flow group's links (the cached phase it was copied from,
  // stable while the engine lives) and kind, by FlowNet serial (start order).
  std::vector<std::pair<const FlowGroupSpec*, int>> group_src_;
  size_t total_ops_ = 1;
};

}  // namespace mc::sim::detail
