// iteration.cpp - the discrete-event engine of one iteration (see iteration.h for the model).
//
// Sections: classes of replicas; op streams; engine; work estimate; results.
#include "sim/iteration.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>

namespace mc::sim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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
long long flow_tag(int kind, int id) { return (static_cast<long long>(id) << 2) | kind; }

class Engine {
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

// ---- classes of replicas ----

void Engine::build_classes() {
  std::vector<char> special(size_t(s_.dp), s_.merge_symmetric_replicas ? 0 : 1);
  for (auto [gpu, speed] : s_.stragglers)
    if (gpu >= 0 && gpu < s_.tp * s_.pp * s_.dp && speed != 1.0) special[size_t(gpu_coord(s_, gpu).replica)] = 1;
  for (auto [node, frac] : topo_.spec().degraded_nodes)
    for (int g = node * topo_.spec().gpus_per_node; g < (node + 1) * topo_.spec().gpus_per_node; ++g)
      if (g >= 0 && g < s_.tp * s_.pp * s_.dp && frac < 1.0) special[size_t(gpu_coord(s_, g).replica)] = 1;
  // A replica that shares a node (and so its NIC) with a special one sees different link contention
  // from the others, so it is special too, transitively; otherwise its timeline would be its class's
  // and not its own. With tp filling whole nodes (the usual layout) no replica shares a node. The cp
  // ranks of one group (replicas cp apart in dp rank, IterationSpec::cp) meet in every layer: a special
  // one makes its whole group special, and the group is one class (it goes at its slowest member's pace).
  const int gpn = topo_.spec().gpus_per_node, gpus = s_.tp * s_.pp * s_.dp;
  const int cpg = cp_on() ? s_.cp : 1;
  for (bool changed = true; changed;) {
    changed = false;
    for (int g0 = 0; g0 + cpg <= s_.dp && cpg > 1; g0 += cpg) {
      bool any = false, all = true;
      for (int d = g0; d < g0 + cpg; ++d) any = any || special[size_t(d)], all = all && special[size_t(d)];
      if (any && !all) {
        for (int d = g0; d < g0 + cpg; ++d) special[size_t(d)] = 1;
        changed = true;
      }
    }
    for (int n0 = 0; n0 * gpn < gpus; ++n0) {
      const int g_end = std::min(gpus, (n0 + 1) * gpn);
      bool any = false, all = true;
      for (int g = n0 * gpn; g < g_end; ++g) {
        const bool sp = special[size_t(gpu_coord(s_, g).replica)] != 0;
        any = any || sp;
        all = all && sp;
      }
      if (!any || all) continue;
      for (int g = n0 * gpn; g < g_end; ++g) special[size_t(gpu_coord(s_, g).replica)] = 1;
      changed = true;
    }
  }
  res_.replica_class.assign(size_t(s_.dp), -1);
  int normal = -1;
  for (int d = 0; d < s_.dp; ++d) {
    if (special[size_t(d)]) {
      if (cpg > 1 && d % cpg != 0) {  // the rest of a cp group joins its first replica's class
        const int c = res_.replica_class[size_t(d - d % cpg)];
        res_.replica_class[size_t(d)] = c;
        class_replicas_[size_t(c)].push_back(d);
        continue;
      }
      res_.replica_class[size_t(d)] = int(class_replicas_.size());
      class_replicas_.push_back({d});
    } else {
      if (normal < 0) {
        normal = int(class_replicas_.size());
        class_replicas_.emplace_back();
      }
      res_.replica_class[size_t(d)] = normal;
      class_replicas_[size_t(normal)].push_back(d);
    }
  }
}

// ---- op streams ----

void Engine::build_ops(Worker& w) {
  const int p = s_.pp, v = s_.schedule == PipeSchedule::interleaved ? s_.virtual_stages : 1;
  // Layers of each model chunk (virtual stage vs = chunk * p + stage): the spec's per-chunk or per-stage
  // counts (uneven pipelines), or layers / (p v); the stage holds the sum of its chunks.
  const int m = s_.micro_batches;
  const int stage_total = stage_layer_count(w.stage);
  const double per_layer_grad = s_.dp_bytes_per_stage / double(std::max(1, stage_total));
  const bool tp = s_.tp > 1, cp = cp_on();
  double cum = 0;
  int next_bucket = 0;
  auto emit_buckets = [&](bool all) {
    while (next_bucket < n_buckets_ && (all || cum >= (next_bucket + 1) * s_.bucket_bytes - 1e-6 * s_.bucket_bytes)) {
      w.ops.push_back({OpType::bucket, SpanKind::dp_comm, 0, -1, 0, next_bucket, 0});
      ++next_bucket;
    }
  };
  // ZeRO-3 units of this stage (iteration.h): each layer, and the parameters outside the layers, gathered
  // with chunk 0. Sizes and counts are the stack's (IterationSpec::zero3, from perf_time.cpp's formulas).
  const bool zero3 = zero3_on();
  const IterationSpec::Zero3Stack& z = s_.zero3;
  const double layer_b = z.layer_bytes > 0 ? z.layer_bytes : s_.dp_bytes_per_stage / double(std::max(1, stage_total));
  const double rest_b = std::max(0.0, s_.dp_bytes_per_stage - layer_b * stage_total);
  const double per_layer = std::max(1.0, z.collectives_per_layer);
  std::vector<Z3Item>& items = z3_items_[size_t(w.stage)];
  const bool record = items.empty();  // the first worker of the stage records, the others issue the same
  int z3n = 0, last_async = -1;
  auto z3_new = [&](double bytes, double count, bool reduce, int unit, const PipeOp& so, bool bwd) {
    if (record) items.push_back({bytes, count, reduce, unit, so.micro_batch, bwd});
    return z3n++;
  };
  auto push = [&](OpType t, SpanKind k, const PipeOp& so, int a, int vs) {
    w.ops.push_back({t, k, 0, so.micro_batch, so.chunk, a, vs});
  };
  // One pass of a chunk: its units in order (the rest first in the forward, last in the backward), each
  // gathered before it computes. Of each gather the open share (IterationSpec::zero3.open_share) is
  // joined and waited for there; the rest was issued as a prefetch while the unit before computed (the
  // first unit's at the start of the pass, where nothing hides it: perf_time.cpp's 2 (1 - open_share)
  // gather_layer). The backward gathers a layer twice when the stack regathers for the recomputed forward
  // (perf_time.cpp bwd_gathers) and, when it reduces every micro-batch, reduce-scatters the layer's
  // gradients after it: the open_reduce share blocking, the rest behind the backward (bwd_reduces).
  auto pass = [&](const PipeOp& so, int vs, bool bwd, double fx, double lx) {
    const int lpc = chunk_layer_count(vs);
    std::vector<int> units;  // layer index, -1 for the rest
    const bool rest = zero3 && so.chunk == 0 && rest_b > 0;
    if (rest && !bwd) units.push_back(-1);
    for (int i = 0; i < lpc; ++i) units.push_back(bwd ? lpc - 1 - i : i);
    if (rest && bwd) units.push_back(-1);
    auto bytes_of = [&](int u) { return u < 0 ? rest_b : layer_b; };
    auto count_of = [&](int u) { return u < 0 ? 1.0 : per_layer; };
    // Without resharding after the forward the backward finds every unit whole: no gathers at all.
    auto gathers = [&](int u) { return bwd && !z.reshard ? 0.0 : bwd && u >= 0 && z.regather ? 2.0 : 1.0; };
    auto prefetch = [&](size_t i) {
      if (!zero3 || i >= units.size() || z.open_share >= 1 || gathers(units[i]) == 0) return -1;
      const int u = units[i], id = z3_new((1 - z.open_share) * gathers(u) * bytes_of(u),
                                          (1 - z.open_share) * gathers(u) * count_of(u), false, u, so, bwd);
      push(OpType::z3_issue, SpanKind::dp_comm, so, id, vs);
      return id;
    };
    const bool final_mb = so.micro_batch == m - 1;
    int pf = prefetch(0);
    for (size_t i = 0; i < units.size(); ++i) {
      const int u = units[i];
      if (zero3) {
        if (z.open_share > 0 && gathers(u) > 0)
          push(OpType::gather, SpanKind::dp_wait, so,
               z3_new(z.open_share * gathers(u) * bytes_of(u), z.open_share * gathers(u) * count_of(u), false, u, so,
                      bwd),
               vs);
        if (pf >= 0) push(OpType::z3_wait, SpanKind::dp_wait, so, pf, vs);
        pf = prefetch(i + 1);
      }
      if (u >= 0) {
        // Embedding/logits work (a third forward, two thirds backward: the backward of a matmul costs twice
        // its forward) rides on the first/last layer of the first/last virtual stage.
        const double d = bwd ? s_.layer_backward_s + (u == lpc - 1 ? 2 * lx / 3 : 0) + (u == 0 ? 2 * fx / 3 : 0)
                             : s_.layer_forward_s + (u == 0 ? fx / 3 : 0) + (u == lpc - 1 ? lx / 3 : 0);
        // Context parallel: the keys and values gathered before the attention (again in the backward), their
        // gradients reduce-scattered after it; the op's duration field counts the collectives.
        if (cp)
          w.ops.push_back({OpType::tp, SpanKind::cp_comm, double(bwd ? s_.cp_gathers_backward : s_.cp_gathers_forward),
                           so.micro_batch, so.chunk, kCollCpGather, vs});
        w.ops.push_back({OpType::compute, bwd ? SpanKind::backward : SpanKind::forward, d / w.speed, so.micro_batch,
                         so.chunk, 0, vs});
        if (cp && bwd)
          w.ops.push_back({OpType::tp, SpanKind::cp_comm, double(s_.cp_reduces_backward), so.micro_batch, so.chunk,
                           kCollCpReduce, vs});
        if (tp)
          w.ops.push_back({OpType::tp, SpanKind::tp_comm,
                           double(bwd ? s_.tp_collectives_backward : s_.tp_collectives_forward), so.micro_batch,
                           so.chunk, 0, vs});
        if (bwd && final_mb && s_.overlap_dp) {
          cum += per_layer_grad;
          emit_buckets(false);
        }
      }
      if (zero3 && bwd && z.reduce_each_microbatch) {
        if (z.open_reduce > 0)
          push(OpType::gather, SpanKind::dp_wait, so,
               z3_new(z.open_reduce * bytes_of(u), z.open_reduce * count_of(u), true, u, so, bwd), vs);
        if (z.open_reduce < 1) {
          last_async = z3_new((1 - z.open_reduce) * bytes_of(u), (1 - z.open_reduce) * count_of(u), true, u, so, bwd);
          push(OpType::z3_issue, SpanKind::dp_comm, so, last_async, vs);
        }
      }
    }
    // A chunk without layers (Llama 3's first chunk holds only the embedding, its last only the output
    // layer): its embedding or output work is a compute op of its own.
    if (lpc == 0 && fx + lx > 0)
      w.ops.push_back({OpType::compute, bwd ? SpanKind::backward : SpanKind::forward,
                       (bwd ? 2 * (fx + lx) / 3 : (fx + lx) / 3) / w.speed, so.micro_batch, so.chunk, 0, vs});
  };
  if (paired_) {
    // DeepSpeed's instruction order (deepspeed_schedule): one chunk per stage.
    const int vs = w.stage;
    const double fx = vs == 0 ? s_.first_stage_extra_s : 0, lx = vs == V_ - 1 ? s_.last_stage_extra_s : 0;
    for (const PipeCmd& c : deepspeed_schedule(p, w.stage, m)) {
      const PipeOp so{c.micro_batch, 0, c.kind == PipeCmd::backward};
      switch (c.kind) {
        case PipeCmd::recv_act:
          w.ops.push_back({OpType::recv, SpanKind::pp_wait, 0, so.micro_batch, 0, 0, vs});
          if (tp && s_.pp_all_gather) w.ops.push_back({OpType::tp, SpanKind::tp_comm, 0.5, so.micro_batch, 0, 0, vs});
          break;
        case PipeCmd::recv_grad:
          w.ops.push_back({OpType::recv, SpanKind::pp_wait, 0, so.micro_batch, 0, 1, vs});
          break;
        case PipeCmd::send_act:
          w.ops.push_back({OpType::send, SpanKind::pp_send, 0, so.micro_batch, 0, 0, vs + 1});
          break;
        case PipeCmd::send_grad:
          w.ops.push_back({OpType::send, SpanKind::pp_send, 0, so.micro_batch, 0, 1, vs - 1});
          break;
        case PipeCmd::forward:
          pass(so, vs, false, fx, lx);
          break;
        case PipeCmd::backward:
          pass(so, vs, true, fx, lx);
          break;
      }
    }
  } else {
    for (const PipeOp& so : stage_order(s_.schedule, p, w.stage, m, v)) {
      const int vs = so.chunk * p + w.stage;
      const bool first = vs == 0, last = vs == V_ - 1;
      const double fx = first ? s_.first_stage_extra_s : 0, lx = last ? s_.last_stage_extra_s : 0;
      if (!so.backward) {
        if (!first) {
          w.ops.push_back({OpType::recv, SpanKind::pp_wait, 0, so.micro_batch, so.chunk, 0, vs});
          // An all-gather moves half an all-reduce's bytes in half its steps (collectives.h).
          if (tp && s_.pp_all_gather)
            w.ops.push_back({OpType::tp, SpanKind::tp_comm, 0.5, so.micro_batch, so.chunk, 0, vs});
        }
        pass(so, vs, false, fx, lx);
        if (!last) w.ops.push_back({OpType::send, SpanKind::pp_send, 0, so.micro_batch, so.chunk, 0, vs + 1});
      } else {
        if (!last) w.ops.push_back({OpType::recv, SpanKind::pp_wait, 0, so.micro_batch, so.chunk, 1, vs});
        pass(so, vs, true, fx, lx);
        if (!first) w.ops.push_back({OpType::send, SpanKind::pp_send, 0, so.micro_batch, so.chunk, 1, vs - 1});
      }
    }
  }
  // ZeRO-3 gradients accumulated over the micro-batches: reduce-scattered once after the last backward,
  // one unit after another (perf_time.cpp end_reduce, exposed), before the optimizer.
  if (zero3 && !z.reduce_each_microbatch)
    for (int c = 0; c < v; ++c) {
      const PipeOp so{-1, c, true};
      for (int l = 0; l < chunk_layer_count(c * p + w.stage); ++l) {
        last_async = z3_new(layer_b, per_layer, true, l, so, true);
        push(OpType::z3_issue, SpanKind::dp_comm, so, last_async, c * p + w.stage);
      }
      if (c == 0 && rest_b > 0) {
        last_async = z3_new(rest_b, 1, true, -1, so, true);
        push(OpType::z3_issue, SpanKind::dp_comm, so, last_async, w.stage);
      }
    }
  if (last_async >= 0) w.ops.push_back({OpType::z3_wait, SpanKind::dp_wait, 0, -1, 0, last_async, 0});
  // The tied embedding's gradient, summed by the two stages that hold it before their data-parallel
  // reduction (DeepSpeed's ReduceTiedGrads precedes ReduceGrads; engine/perf adds it in the open).
  if (tied_on() && (w.stage == 0 || w.stage == p - 1))
    w.ops.push_back({OpType::tied, SpanKind::pp_wait, 0, -1, 0, 0, 0});
  emit_buckets(true);
  w.ops.push_back({OpType::opt_wait, SpanKind::dp_wait, 0, -1, 0, 0, 0});
  w.ops.push_back({OpType::compute, SpanKind::optimizer, s_.optimizer_s / w.speed, -1, 0, 0, 0});
  if (post_step_gather()) w.ops.push_back({OpType::all_gather, SpanKind::dp_wait, 0, -1, 0, 0, 0});
  if (!record && z3n != int(items.size()))
    throw std::logic_error("simulate_iteration: ZeRO-3 items differ between classes of stage " +
                           std::to_string(w.stage));
}

// ---- engine ----

void Engine::advance(int wi, double now) {
  Worker& w = workers_[size_t(wi)];
  while (!w.blocked && w.pc < w.ops.size()) {
    const Op& op = w.ops[w.pc];
    switch (op.type) {
      case OpType::recv: {
        Arrival& a = arrivals_[size_t(w.cls)][size_t((op.a * V_ + op.vs) * s_.micro_batches + op.mb)];
        if (!a.arrived) {
          a.waiter = wi;
          w.blocked = true;
          w.wait_start = now;
          if (a.pending_sender >= 0) {  // paired: the sender was waiting for this call
            const int sender = a.pending_sender;
            a.pending_sender = -1;
            start_send(sender, workers_[size_t(sender)].ops[workers_[size_t(sender)].pc], now);
          }
          return;
        }
        ++w.pc;
        break;
      }
      case OpType::compute:
        w.blocked = true;
        w.op_start = now;
        push_timer(now + op.dur_s, kComputeDone, wi);
        return;
      case OpType::tp:
        w.blocked = true;
        w.op_start = now;
        w.tp_phase = 0;
        start_tp(wi, now);
        return;
      case OpType::send:
        if (paired_) {  // starts when the receiver has called; the sender waits for it, then for the transfer
          Arrival& a = arrivals_[size_t(w.cls)][size_t((op.a * V_ + op.vs) * s_.micro_batches + op.mb)];
          w.blocked = true;
          if (a.waiter >= 0)
            start_send(wi, op, now);
          else
            a.pending_sender = wi;
          return;
        }
        start_send(wi, op, now);
        if (s_.blocking_p2p) {
          w.blocked = true;
          return;
        }
        ++w.pc;
        break;
      case OpType::bucket:
        ++w.pc;
        dp_join(w.stage, op.a, wi, now);
        break;
      case OpType::opt_wait:
        if (dp_[size_t(w.stage)].done < n_buckets_) {
          dp_[size_t(w.stage)].opt_waiters.push_back(wi);
          w.blocked = true;
          w.wait_start = now;
          return;
        }
        ++w.pc;
        break;
      case OpType::optimizer:
        ++w.pc;
        break;
      case OpType::all_gather:
        dp_wait(w.stage, ag_item(), wi, now);
        return;
      case OpType::gather:
        dp_[size_t(w.stage)].items[size_t(gather_item(op.a))].mb = op.mb;
        dp_[size_t(w.stage)].items[size_t(gather_item(op.a))].chunk = op.chunk;
        dp_wait(w.stage, gather_item(op.a), wi, now);
        return;
      case OpType::z3_issue:
        dp_[size_t(w.stage)].items[size_t(gather_item(op.a))].mb = op.mb;
        dp_[size_t(w.stage)].items[size_t(gather_item(op.a))].chunk = op.chunk;
        ++w.pc;
        dp_join(w.stage, gather_item(op.a), wi, now);
        break;
      case OpType::tied: {
        TiedMeet& t = tied_[size_t(w.cls)];
        w.blocked = true;
        w.wait_start = now;
        t.waiters.push_back(wi);
        if (t.waiters.size() == 2) {  // both stages have called: the all-reduce starts
          t.start_s = now;
          t.phase = 0;
          tied_phase_start(w.cls, now);
        }
        return;
      }
      case OpType::z3_wait: {
        DpItem& it = dp_[size_t(w.stage)].items[size_t(gather_item(op.a))];
        if (it.end_s >= 0) {
          ++w.pc;
          break;
        }
        it.waiters.push_back(wi);
        w.blocked = true;
        w.wait_start = now;
        return;
      }
    }
  }
  if (w.pc >= w.ops.size()) res_.workers[size_t(wi)].end_s = std::max(res_.workers[size_t(wi)].end_s, now);
}

void Engine::start_tp(int wi, double now) {
  Worker& w = workers_[size_t(wi)];
  const auto& phases = coll_phases(wi, w.ops[w.pc].a);
  if (phases.empty()) {  // tp group inside one GPU: nothing to move
    push_timer(now, kTpLatency, wi);
    return;
  }
  // Latency of `a` collectives, then their bytes in one transfer (they run back to back on one stream).
  const double k = w.ops[w.pc].dur_s;
  push_timer(now + k * phases[size_t(w.tp_phase)].latency_s, kTpLatency, wi);
}

void Engine::start_send(int wi, const Op& op, double now) {
  const Worker& w = workers_[size_t(wi)];
  const int dst_stage = op.vs % s_.pp;
  const int id = int(sends_.size());
  sends_.push_back({w.cls, wi, op.a, op.vs, op.mb, now});
  auto key = std::make_tuple(w.cls, w.stage, dst_stage);
  auto it = send_phase_.find(key);
  if (it == send_phase_.end()) {
    std::vector<std::pair<int, int>> pairs;
    for (int d : class_replicas_[size_t(w.cls)])
      for (int t = 0; t < s_.tp; ++t) pairs.push_back({gpu_id(s_, d, w.stage, t), gpu_id(s_, d, dst_stage, t)});
    it = send_phase_.emplace(key, build_sends(topo_, pairs, 1.0, s_.latency, s_.pp_sends_as_collective)).first;
  }
  push_timer(now + it->second.latency_s, kSendLatency, id);
}

void Engine::arrive(const SendRec& r, double now) {
  Arrival& a = arrivals_[size_t(r.cls)][size_t((r.dir * V_ + r.dst_vs) * s_.micro_batches + r.mb)];
  a.arrived = true;
  a.src_worker = r.src_worker;
  if (a.waiter >= 0) {
    Worker& w = workers_[size_t(a.waiter)];
    add_span(a.waiter, w.wait_start, now, SpanKind::pp_wait, r.mb, r.dst_vs / s_.pp);
    w.blocked = false;
    ++w.pc;
    const int wi = a.waiter;
    a.waiter = -1;
    advance(wi, now);
  }
}

void Engine::dp_join(int stage, int item, int wi, double now) {
  DpStream& st = dp_[size_t(stage)];
  DpItem& it = st.items[size_t(item)];
  if (++it.joined == int(class_replicas_.size())) {
    it.ready_s = now;
    it.ready_worker = wi;
    st.queue.push_back(item);
    dp_kick(stage, now);
  }
}

void Engine::dp_wait(int stage, int item, int wi, double now) {
  Worker& w = workers_[size_t(wi)];
  w.blocked = true;
  w.wait_start = now;
  dp_[size_t(stage)].items[size_t(item)].waiters.push_back(wi);
  dp_join(stage, item, wi, now);
}

void Engine::dp_kick(int stage, double now) {
  DpStream& st = dp_[size_t(stage)];
  if (st.busy || st.queue.empty()) return;
  st.busy = true;
  st.item = st.queue.front();
  st.queue.pop_front();
  st.phase = 0;
  st.items[size_t(st.item)].start_s = now;
  st.order.push_back(st.item);
  dp_phase_start(stage, now);
}

void Engine::dp_phase_start(int stage, double now) {
  DpStream& st = dp_[size_t(stage)];
  const auto& phases = item_phases(stage, st.item);
  if (phases.empty()) {
    push_timer(now, kDpLatency, stage | (1 << 30));  // nothing to move (dp = 1): done at once
    return;
  }
  double t = item_count(stage, st.item) * phases[size_t(st.phase)].latency_s;
  // A ZeRO-3 collective in list form also pays its copies (once, with its first phase; iteration.h).
  if (const Z3Item* z = st.phase == 0 ? z3_item(stage, st.item) : nullptr)
    t += item_count(stage, st.item) * s_.zero3.copy_per_collective_s +
         item_bytes(stage, st.item) * (s_.zero3.copy_per_byte_s + (z->reduce ? 0.0 : s_.zero3.gather_fill_per_byte_s));
  // ... and so does DeepSpeed's post-step all-gather of ZeRO-1.
  if (st.phase == 0 && st.item == ag_item() && s_.zero1_gather.on)
    t += item_count(stage, st.item) * s_.zero1_gather.copy_per_collective_s +
         item_bytes(stage, st.item) * s_.zero1_gather.copy_per_byte_s;
  push_timer(now + t, kDpLatency, stage);
}

void Engine::dp_item_done(int stage, double now) {
  DpStream& st = dp_[size_t(stage)];
  const int item = st.item;
  DpItem& it = st.items[size_t(item)];
  it.end_s = now;
  // The collective on every class's side stream: (-1, bucket) for gradients, (-1, -1) for the post-step
  // all-gather, (micro-batch, chunk) for a ZeRO-3 gather.
  for (int c = 0; c < int(class_replicas_.size()); ++c)
    add_span(worker_index(c, stage), it.start_s, now, SpanKind::dp_comm, it.mb, item < n_buckets_ ? item : it.chunk);
  st.busy = false;
  auto release = [&](std::vector<int> waiters) {
    for (int wi : waiters) {
      Worker& w = workers_[size_t(wi)];
      add_span(wi, w.wait_start, now, SpanKind::dp_wait, w.ops[w.pc].mb, w.ops[w.pc].chunk);
      w.blocked = false;
      ++w.pc;
      advance(wi, now);
    }
  };
  if (item >= n_buckets_) {
    release(std::move(it.waiters));
  } else if (++st.done == n_buckets_) {
    release(std::move(st.opt_waiters));
  }
  dp_kick(stage, now);
}

void Engine::tied_phase_start(int cls, double now) {
  const TiedMeet& t = tied_[size_t(cls)];
  push_timer(now + tied_phase_[size_t(cls)][t.phase].latency_s, kTiedLatency, cls);
}

void Engine::tied_done(int cls, double now) {
  TiedMeet& t = tied_[size_t(cls)];
  if (++t.phase < tied_phase_[size_t(cls)].size()) {
    tied_phase_start(cls, now);
    return;
  }
  // Spans without a micro-batch: the wait for the other stage, then the transfer (critical_path follows
  // the wait to the other stage).
  std::vector<int> waiters = std::move(t.waiters);
  t.waiters.clear();
  for (int wi : waiters) {
    Worker& w = workers_[size_t(wi)];
    add_span(wi, w.wait_start, t.start_s, SpanKind::pp_wait, -1, 0);
    add_span(wi, t.start_s, now, SpanKind::pp_send, -1, 0);
    w.blocked = false;
    ++w.pc;
  }
  for (int wi : waiters) advance(wi, now);
}

void Engine::start() {
  const auto t0 = std::chrono::steady_clock::now();
  const int p = s_.pp, v = s_.schedule == PipeSchedule::interleaved ? s_.virtual_stages : 1;
  if (s_.tp < 1 || s_.pp < 1 || s_.dp < 1 || s_.micro_batches < 1 || v < 1)
    throw std::invalid_argument("simulate_iteration: tp, pp, dp, micro_batches, virtual_stages must be >= 1");
  if (s_.cp < 1 || s_.dp % s_.cp != 0)
    throw std::invalid_argument("simulate_iteration: dp (" + std::to_string(s_.dp) +
                                " replicas, data x context parallel) must be a multiple of cp (" +
                                std::to_string(s_.cp) + ")");
  if (s_.tp * s_.pp * s_.dp > topo_.gpus())
    throw std::invalid_argument("simulate_iteration: tp*pp*dp = " + std::to_string(s_.tp * s_.pp * s_.dp) +
                                " GPUs but the topology has " + std::to_string(topo_.gpus()));
  if (!s_.stage_layers.empty() && (int(s_.stage_layers.size()) != p || v != 1))
    throw std::invalid_argument("simulate_iteration: stage_layers needs one count per stage and a 1f1b/gpipe schedule");
  if (!s_.chunk_layers.empty() && int(s_.chunk_layers.size()) != p * v)
    throw std::invalid_argument(
        "simulate_iteration: chunk_layers needs one count per virtual stage (pp * virtual_stages = " +
        std::to_string(p * v) + ")");
  for (int n : s_.chunk_layers)
    if (n < 0) throw std::invalid_argument("simulate_iteration: chunk_layers must not be negative");
  if (s_.stage_layers.empty() && s_.chunk_layers.empty() && s_.layers % (p * v) != 0)
    throw std::invalid_argument("simulate_iteration: layers (" + std::to_string(s_.layers) +
                                ") must be divisible by pp * virtual_stages (" + std::to_string(p * v) + ")");
  V_ = p * v;
  paired_ = s_.paired_p2p && p > 1 && s_.schedule == PipeSchedule::one_f_one_b;
  build_classes();
  const int C = int(class_replicas_.size());
  // ZeRO-3 reduce-scatters its gradients unit by unit (build_ops), not in buckets.
  n_buckets_ = s_.dp > 1 && s_.dp_bytes_per_stage > 0 && !zero3_on()
                   ? std::max(1, int(std::ceil(s_.dp_bytes_per_stage / std::max(1.0, s_.bucket_bytes) - 1e-9)))
                   : 0;
  bucket_bytes_.assign(size_t(n_buckets_), 0);
  for (int b = 0; b < n_buckets_; ++b)
    bucket_bytes_[size_t(b)] = std::min(s_.bucket_bytes, s_.dp_bytes_per_stage - b * s_.bucket_bytes);
  // Workers and their tp rings (one representative replica: tp rings inside a node touch only that
  // node's NVLink ports, which no other class uses; across nodes every replica's ring is included).
  workers_.resize(size_t(C * p));
  z3_items_.assign(size_t(p), {});
  res_.workers.resize(size_t(C * p));
  tp_phase_.resize(size_t(C * p));
  cp_ag_phase_.resize(size_t(C * p));
  cp_rs_phase_.resize(size_t(C * p));
  tp_in_node_ = s_.tp <= topo_.spec().gpus_per_node;
  total_ops_ = 0;
  for (int c = 0; c < C; ++c)
    for (int st = 0; st < p; ++st) {
      const int wi = worker_index(c, st);
      Worker& w = workers_[size_t(wi)];
      w.cls = c;
      w.stage = st;
      // The slowest GPU of the stage in any replica of the class: one replica unless a cp group (whose
      // members wait for each other in every layer) makes up the class.
      for (auto [gpu, speed] : s_.stragglers) {
        if (gpu < 0 || gpu >= s_.tp * s_.pp * s_.dp) continue;
        const GpuCoord g = gpu_coord(s_, gpu);
        if (res_.replica_class[size_t(g.replica)] == c && g.stage == st && speed > 0)
          w.speed = std::min(w.speed, speed);
      }
      if (cp_on()) {
        // One ring per cp group of the class and tensor rank, the group's replicas in cp-rank order; every
        // replica runs its own (they cross nodes: no representative stands in for the others).
        std::vector<std::vector<int>> rings;
        const auto& reps = class_replicas_[size_t(c)];
        for (size_t i = 0; i + size_t(s_.cp) <= reps.size(); i += size_t(s_.cp))
          for (int t = 0; t < s_.tp; ++t) {
            std::vector<int> r;
            for (int k = 0; k < s_.cp; ++k) r.push_back(gpu_id(s_, reps[i + size_t(k)], st, t));
            rings.push_back(std::move(r));
          }
        cp_ag_phase_[size_t(wi)] =
            build_collective(topo_, CollectiveKind::all_gather, Algorithm::ring, rings, 1.0, s_.latency);
        cp_rs_phase_[size_t(wi)] =
            build_collective(topo_, CollectiveKind::reduce_scatter, Algorithm::ring, rings, 1.0, s_.latency);
      }
      if (s_.tp > 1) {
        std::vector<std::vector<int>> rings;
        for (int d : class_replicas_[size_t(c)]) {
          std::vector<int> r;
          for (int t = 0; t < s_.tp; ++t) r.push_back(gpu_id(s_, d, st, t));
          rings.push_back(std::move(r));
          if (tp_in_node_) break;
        }
        tp_phase_[size_t(wi)] =
            build_collective(topo_, CollectiveKind::all_reduce, s_.tp_algorithm, rings, 1.0, s_.latency);
      }
      build_ops(w);
      total_ops_ += w.ops.size();
      WorkerTimeline& tl = res_.workers[size_t(wi)];
      tl.cls = c;
      tl.stage = st;
      tl.replicas = int(class_replicas_[size_t(c)].size());
      tl.speed = w.speed;
    }
  total_ops_ = std::max<size_t>(1, total_ops_);
  // The tied gradient's all-reduce of each class: one two-rank ring per replica and tensor rank.
  tied_.assign(size_t(C), {});
  tied_phase_.assign(size_t(C), {});
  if (tied_on())
    for (int c = 0; c < C; ++c) {
      std::vector<std::vector<int>> rings;
      for (int d : class_replicas_[size_t(c)])
        for (int t = 0; t < s_.tp; ++t) rings.push_back({gpu_id(s_, d, 0, t), gpu_id(s_, d, p - 1, t)});
      tied_phase_[size_t(c)] =
          build_collective(topo_, CollectiveKind::all_reduce, Algorithm::ring, rings, 1.0, s_.latency);
      if (tied_phase_[size_t(c)].empty())
        throw std::logic_error("simulate_iteration: the tied gradient's all-reduce has nothing to move");
    }
  arrivals_.assign(size_t(C), std::vector<Arrival>(size_t(2 * V_ * s_.micro_batches)));
  dp_.resize(size_t(p));
  dp_phase_.resize(size_t(p));
  ag_phase_.resize(size_t(p));
  const bool zero3 = zero3_on();
  for (int st = 0; st < p; ++st) {
    dp_[size_t(st)].items.resize(size_t(n_buckets_ + 1) + z3_items_[size_t(st)].size());
    if (s_.dp < 2) continue;
    std::vector<std::vector<int>> rings;
    for (int t = 0; t < s_.tp; ++t) {
      std::vector<int> r;
      for (int d = 0; d < s_.dp; ++d) r.push_back(gpu_id(s_, d, st, t));
      rings.push_back(std::move(r));
    }
    const CollectiveKind k =
        (s_.zero_sharded || zero3) && !s_.zero1_gather.on ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
    dp_phase_[size_t(st)] = build_collective(topo_, k, s_.dp_algorithm, rings, 1.0, s_.latency);
    // NCCL all-gathers are rings (it has no tree all-gather).
    if (s_.zero_sharded || zero3 || s_.zero1_gather.on)
      ag_phase_[size_t(st)] =
          build_collective(topo_, CollectiveKind::all_gather, Algorithm::ring, rings, 1.0, s_.latency);
  }
  est_work_ = estimate_work();
  // Refused before the first event (step() processes none): the work the layout implies is over the budget.
  if (s_.refuse_estimated_over_budget && s_.max_work > 0 && est_work_ > double(s_.max_work)) {
    wall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    refused_ = true;
    return;
  }
  for (int wi = 0; wi < C * p; ++wi) advance(wi, 0.0);
  wall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double Engine::progress() const {
  if (finished_) return 1.0;
  size_t done = 0;
  for (const Worker& w : workers_) done += w.pc;
  return std::min(0.999, double(done) / double(total_ops_));
}

void Engine::on_flow_done(long long tag, double now) {
  const int p = s_.pp;
  const int kind = int(tag & 3), id = int(tag >> 2);
  if (kind == kFlowTp) {
    Worker& w = workers_[size_t(id)];
    if (++w.tp_phase < int(coll_phases(id, w.ops[w.pc].a).size())) {
      start_tp(id, now);
    } else {
      const Op& op = w.ops[w.pc];
      add_span(id, w.op_start, now, op.kind, op.mb, op.chunk);
      w.blocked = false;
      ++w.pc;
      advance(id, now);
    }
  } else if (kind == kFlowSend) {
    const SendRec r = sends_[size_t(id)];
    add_span(r.src_worker, r.start_s, now, SpanKind::pp_send, r.mb, r.dst_vs / p);
    arrive(r, now);
    if (s_.blocking_p2p || paired_) {
      Worker& w = workers_[size_t(r.src_worker)];
      w.blocked = false;
      ++w.pc;
      advance(r.src_worker, now);
    }
  } else if (kind == kFlowTied) {
    tied_done(id, now);
  } else {
    DpStream& st = dp_[size_t(id)];
    if (++st.phase < int(item_phases(id, st.item).size())) {
      dp_phase_start(id, now);
      return;
    }
    dp_item_done(id, now);
  }
}

void Engine::on_timer(const Timer& tm, double now) {
  if (tm.kind == kComputeDone) {
    Worker& w = workers_[size_t(tm.a)];
    const Op& op = w.ops[w.pc];
    add_span(tm.a, w.op_start, now, op.kind, op.mb, op.chunk);
    w.blocked = false;
    ++w.pc;
    advance(tm.a, now);
  } else if (tm.kind == kTpLatency) {
    Worker& w = workers_[size_t(tm.a)];
    const int a = w.ops[w.pc].a;
    const auto& phases = coll_phases(tm.a, a);
    if (phases.empty()) {
      w.blocked = false;
      ++w.pc;
      advance(tm.a, now);
      return;
    }
    FlowGroupSpec f = phases[size_t(w.tp_phase)].flows;
    note_group(&phases[size_t(w.tp_phase)].flows, kFlowTp);
    f.bytes_per_flow *= w.ops[w.pc].dur_s * coll_bytes(a);
    // Only the tensor-parallel rings run on the class's first replica alone (finish() copies their bytes
    // to the others); the cp groups' rings run for every replica of the class.
    if (a == kCollTp) {
      if (tp_link_bytes_.empty()) tp_link_bytes_.assign(topo_.links().size(), 0.0);
      for (const auto* ls : {&f.links, &f.passive_links})
        for (auto [l, n] : *ls) tp_link_bytes_[size_t(l)] += n * f.bytes_per_flow;
    }
    net_.start(now, std::move(f), flow_tag(kFlowTp, tm.a));
    ++res_.flow_groups;
  } else if (tm.kind == kTiedLatency) {
    const TiedMeet& t = tied_[size_t(tm.a)];
    const FlowGroupSpec& src = tied_phase_[size_t(tm.a)][t.phase].flows;
    FlowGroupSpec f = src;
    note_group(&src, kFlowTied);
    f.bytes_per_flow *= s_.tied_grad_bytes;
    net_.start(now, std::move(f), flow_tag(kFlowTied, tm.a));
    ++res_.flow_groups;
  } else if (tm.kind == kSendLatency) {
    const SendRec& r = sends_[size_t(tm.a)];
    const Worker& w = workers_[size_t(r.src_worker)];
    const FlowGroupSpec& src = send_phase_.at(std::make_tuple(r.cls, w.stage, r.dst_vs % s_.pp)).flows;
    FlowGroupSpec f = src;
    note_group(&src, kFlowSend);
    f.bytes_per_flow *= r.dir == 1 && s_.pp_bytes_backward > 0 ? s_.pp_bytes_backward : s_.pp_bytes;
    net_.start(now, std::move(f), flow_tag(kFlowSend, tm.a));
    ++res_.flow_groups;
  } else {
    const int stage = tm.a & ((1 << 30) - 1);
    if (tm.a & (1 << 30)) {  // dp = 1: finish the item immediately
      dp_item_done(stage, now);
      return;
    }
    DpStream& st = dp_[size_t(stage)];
    FlowGroupSpec f = item_phases(stage, st.item)[size_t(st.phase)].flows;
    note_group(&item_phases(stage, st.item)[size_t(st.phase)].flows, kFlowDp);
    f.bytes_per_flow *= item_bytes(stage, st.item);
    net_.start(now, std::move(f), flow_tag(kFlowDp, stage));
    ++res_.flow_groups;
  }
}

bool Engine::step(long long max_events) {
  if (finished_) return true;
  if (refused_)
    throw WorkBudgetExceeded("the simulation would pass its work budget (" + std::to_string(s_.max_work) +
                             " units: link visits of its bandwidth solver + " + std::to_string(kWorkPerEvent) +
                             " per event, a few seconds): about " + std::to_string((long long)est_work_) +
                             " units estimated from the layout before running" + over_budget_advice());
  const auto t0 = std::chrono::steady_clock::now();
  for (long long n = 0; n < max_events; ++n) {
    const double tt = timers_.empty() ? kInf : timers_.top().t;
    const double tf = net_.next_completion_time();
    if (tt == kInf && tf == kInf) {
      finish();
      break;
    }
    ++events_;
    if (s_.max_work > 0 && work() > s_.max_work) throw_over_budget();
    if (tf < tt) {
      const long long tag = net_.complete_next();
      on_flow_done(tag, tf);
    } else {
      const Timer tm = timers_.top();
      timers_.pop();
      on_timer(tm, tm.t);
    }
  }
  wall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (finished_) res_.wall_s = wall_s_;
  return finished_;
}

std::string Engine::over_budget_advice() const {
  return ": simulate fewer data-parallel GPUs (dp " + std::to_string(s_.dp) + ", tp " + std::to_string(s_.tp) +
         "), larger gradient buckets (sim.bucket_bytes), fewer micro-batches, or use `megacluster estimate` (the "
         "analytic model has no such limit)";
}

void Engine::throw_over_budget() const {
  throw WorkBudgetExceeded("the simulation passed its work budget (" + std::to_string(s_.max_work) +
                           " units: link visits of its bandwidth solver + " + std::to_string(kWorkPerEvent) +
                           " per event, a few seconds) after " + std::to_string(events_) + " events, " +
                           std::to_string(int(progress() * 100)) + "% of the iteration" + over_budget_advice());
}

// ---- work estimate ----
//
// The work (iteration.h: FlowNet::work + kWorkPerEvent per event) the built op streams and cached phases
// imply, counted before the first event from what the engine will do with them:
//   events: one per compute op; per flow group a latency timer and its completion (tp phases, sends,
//     data-parallel item phases);
//   solver: FlowNet::start re-solves the new group's connected component (groups sharing a link): it visits
//     each member group's constraints and each component link once, 2 c for a group of c constraints alone;
//     FlowNet::complete_next re-solves the component the ending group leaves behind.
// Components are found from the phases' links: the data-parallel streams of the stages and the pipeline
// sends of each (class, stage, destination) are joined where they share a constraint (one spine switch, an
// oversubscribed or degraded uplink, a collective limit); each member counts one group in flight (a stage's
// dp stream runs one collective at a time, a blocking sender one send). Sends meet the dp collectives only
// while these overlap the last micro-batch's backward (IterationSpec::overlap_dp): 1/m of the sends.
double Engine::estimate_work() {
  const int p = s_.pp, m = s_.micro_batches;
  auto size_of = [](const CollectivePhase& ph) { return double(ph.flows.links.size() + ph.flows.limits.size()); };
  double events = 0, solver = 0;
  // Members of the components: p data-parallel streams, then one per send key.
  std::vector<double> c_member;                                // constraints of one group in flight
  std::vector<double> groups_member;                           // groups the member starts over the iteration
  std::vector<std::vector<const FlowGroupSpec*>> spec_member;  // the links it may cross
  std::vector<bool> is_dp;
  for (int st = 0; st < p; ++st) {
    double groups = 0, crossings = 0;
    const DpStream& ds = dp_[size_t(st)];
    for (int item = 0; item < int(ds.items.size()); ++item) {
      if (item == ag_item() && !post_step_gather()) continue;
      if (s_.dp < 2) continue;
      for (const CollectivePhase& ph : item_phases(st, item)) groups += 1, crossings += size_of(ph);
    }
    c_member.push_back(groups > 0 ? crossings / groups : 0);
    groups_member.push_back(groups);
    spec_member.emplace_back();
    for (const auto* phases : {&dp_phase_[size_t(st)], &ag_phase_[size_t(st)]})
      for (const CollectivePhase& ph : *phases) spec_member.back().push_back(&ph.flows);
    is_dp.push_back(true);
  }
  std::map<std::tuple<int, int, int>, int> send_member;
  for (size_t wi = 0; wi < workers_.size(); ++wi) {
    const Worker& w = workers_[wi];
    for (const Op& op : w.ops) {
      if (op.type == OpType::compute) events += 1;
      if (op.type == OpType::tp) {
        for (const CollectivePhase& ph : coll_phases(int(wi), op.a)) events += 2, solver += 2 * size_of(ph);
      }
      if (op.type != OpType::send) continue;
      events += 2;
      const auto key = std::make_tuple(w.cls, w.stage, op.vs % p);
      auto it = send_member.find(key);
      if (it == send_member.end()) {
        // The phase start_send will build for this key (cached there, so built once either way).
        auto ph = send_phase_.find(key);
        if (ph == send_phase_.end()) {
          std::vector<std::pair<int, int>> pairs;
          for (int d : class_replicas_[size_t(w.cls)])
            for (int t = 0; t < s_.tp; ++t) pairs.push_back({gpu_id(s_, d, w.stage, t), gpu_id(s_, d, op.vs % p, t)});
          ph = send_phase_.emplace(key, build_sends(topo_, pairs, 1.0, s_.latency, s_.pp_sends_as_collective)).first;
        }
        it = send_member.emplace(key, int(c_member.size())).first;
        c_member.push_back(size_of(ph->second));
        groups_member.push_back(0);
        spec_member.push_back({&ph->second.flows});
        is_dp.push_back(false);
      }
      groups_member[size_t(it->second)] += 1;
    }
  }
  for (int st = 0; st < p; ++st) events += 2 * groups_member[size_t(st)];
  // Components: members joined through the constraints (links and collective limits) they share.
  const int n = int(c_member.size());
  std::vector<int> parent(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) parent[size_t(i)] = i;
  auto find = [&](int x) {
    while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
    return x;
  };
  std::map<int, int> first_on;  // constraint -> a member on it (limits offset past the links)
  const int links = int(topo_.links().size());
  for (int i = 0; i < n; ++i) {
    auto join = [&](int constraint) {
      auto [it, fresh] = first_on.emplace(constraint, i);
      if (!fresh) parent[size_t(find(i))] = find(it->second);
    };
    for (const FlowGroupSpec* f : spec_member[size_t(i)]) {
      for (auto [l, w] : f->links) join(l);
      for (auto [l, w] : f->limits) join(links + l);
    }
  }
  std::map<int, double> dp_in, sends_in;  // constraints in flight per component, by kind
  for (int i = 0; i < n; ++i) (is_dp[size_t(i)] ? dp_in : sends_in)[find(i)] += c_member[size_t(i)];
  for (int i = 0; i < n; ++i) {
    const int root = find(i);
    const double c = c_member[size_t(i)], g = groups_member[size_t(i)];
    // Others in flight beside it: visited when it starts and again when it ends.
    double others = is_dp[size_t(i)] ? dp_in[root] - c : sends_in[root] - c;
    if (!is_dp[size_t(i)] && s_.overlap_dp) others += dp_in[root] / std::max(1, m);
    solver += g * (2 * c + 4 * std::max(0.0, others));
  }
  return solver + double(kWorkPerEvent) * events;
}

// ---- results ----

void Engine::finish() {
  for (size_t wi = 0; wi < workers_.size(); ++wi)
    if (workers_[wi].pc < workers_[wi].ops.size())
      throw std::logic_error("simulate_iteration: deadlock at stage " + std::to_string(workers_[wi].stage));
  finished_ = true;
  const int p = s_.pp, C = int(class_replicas_.size());
  res_.events = events_;
  res_.rate_solves = net_.rate_solves();
  res_.work = work();
  res_.link_bytes = net_.link_bytes();
  res_.class_rate_changes = net_.class_rate_changes();
  // Add the NVLink bytes of the representative replica's tp rings to every other replica of its class
  // (which ran no tp rings of its own), on top of the data-parallel bytes those replicas did simulate.
  if (s_.tp > 1 && tp_in_node_ && !tp_link_bytes_.empty())
    for (int c = 0; c < C; ++c) {
      const auto& reps = class_replicas_[size_t(c)];
      for (int st = 0; st < p; ++st)
        for (int t = 0; t < s_.tp; ++t) {
          const int g0 = gpu_id(s_, reps.front(), st, t);
          for (size_t k = 1; k < reps.size(); ++k) {
            const int g = gpu_id(s_, reps[k], st, t);
            res_.link_bytes[size_t(topo_.nvlink_up(g))] += tp_link_bytes_[size_t(topo_.nvlink_up(g0))];
            res_.link_bytes[size_t(topo_.nvlink_down(g))] += tp_link_bytes_[size_t(topo_.nvlink_down(g0))];
          }
        }
    }
  if (s_.hottest_links > 0) hottest_series();
  int crit = 0;
  for (size_t wi = 0; wi < res_.workers.size(); ++wi) {
    auto& tl = res_.workers[wi];
    std::stable_sort(tl.spans.begin(), tl.spans.end(),
                     [](const Span& a, const Span& b) { return a.start_s < b.start_s; });
    if (tl.end_s > res_.workers[size_t(crit)].end_s) crit = int(wi);
  }
  // Stage 0's data-parallel collectives in the order they ran (IterationResult::dp_events).
  if (!dp_.empty())
    for (int item : dp_[0].order) {
      const DpItem& it = dp_[0].items[size_t(item)];
      IterationResult::DpEvent ev{IterationResult::DpEvent::bucket};
      ev.bytes = item_bytes(0, item);
      ev.start_s = it.start_s;
      ev.end_s = it.end_s;
      if (const Z3Item* z = z3_item(0, item)) {
        ev.kind = z->reduce ? IterationResult::DpEvent::zero3_reduce : IterationResult::DpEvent::zero3_gather;
        ev.micro_batch = z->mb;
        ev.unit = z->unit;
        ev.backward = z->backward;
      } else if (item == ag_item()) {
        ev.kind = IterationResult::DpEvent::params_all_gather;
      }
      res_.dp_events.push_back(ev);
    }
  const WorkerTimeline& ct = res_.workers[size_t(crit)];
  res_.iteration_s = ct.end_s;
  res_.critical_stage = ct.stage;
  res_.critical_class = ct.cls;
  for (const Span& sp : ct.spans) {
    const double d = sp.end_s - sp.start_s;
    switch (sp.kind) {
      case SpanKind::forward:
      case SpanKind::backward:
        res_.compute_s += d;
        break;
      case SpanKind::tp_comm:
        res_.tp_comm_s += d;
        break;
      case SpanKind::cp_comm:
        res_.cp_comm_s += d;
        break;
      case SpanKind::pp_wait:
        res_.pp_wait_s += d;
        break;
      case SpanKind::pp_send:
        if (s_.blocking_p2p || paired_) res_.pp_send_s += d;
        break;
      case SpanKind::dp_wait:
        res_.dp_exposed_s += d;
        break;
      case SpanKind::optimizer:
        res_.optimizer_s += d;
        break;
      default:
        break;  // dp_comm and pp_send run on other streams
    }
  }
  res_.idle_s = std::max(0.0, res_.iteration_s - res_.compute_s - res_.tp_comm_s - res_.cp_comm_s - res_.pp_send_s -
                                  res_.pp_wait_s - res_.dp_exposed_s - res_.optimizer_s);
  critical_path(crit);
}

// The NVLink port of the representative replica whose tensor-parallel bytes finish() copied onto `link`
// (an NVLink port of another replica of its class, which ran no tp rings of its own), or -1.
int Engine::tp_copy_source(int link) const {
  if (!(s_.tp > 1 && tp_in_node_ && !tp_link_bytes_.empty())) return -1;
  const Link& L = topo_.link(link);
  if (L.cls != LinkClass::nvlink_up && L.cls != LinkClass::nvlink_down) return -1;
  const int g = L.index;  // NVLink ports are numbered by GPU
  if (g < 0 || g >= s_.tp * s_.pp * s_.dp) return -1;
  const GpuCoord c = gpu_coord(s_, g);
  const auto& reps = class_replicas_[size_t(res_.replica_class[size_t(c.replica)])];
  if (reps.front() == c.replica) return -1;
  const int g0 = gpu_id(s_, reps.front(), c.stage, c.tp_rank);
  return L.cls == LinkClass::nvlink_up ? topo_.nvlink_up(g0) : topo_.nvlink_down(g0);
}

// Utilisation over time of the links that carried the most bytes. Which links those are is known only
// now, so the run recorded one entry per group rate change (not per link per change, which would cost a
// multiple of the rate solves themselves on 10^4 GPUs); the loads of the few chosen links are rebuilt from
// it: load(t) = sum over the groups crossing the link of flows_on_link * rate(t) (link_loads). Groups
// made from one cached phase share its link list, so what each phase puts on the chosen links is found
// once. A link of a replica that only stands in a symmetric class (its tp bytes were copied in finish())
// follows its representative's tp groups, so its series integrates to its link_bytes as well.
void Engine::hottest_series() {
  const auto& bytes = res_.link_bytes;
  std::vector<int> hot;
  for (size_t l = 0; l < bytes.size(); ++l)
    if (bytes[l] > 0 && (s_.hottest_include_passive || !topo_.passive(int(l)))) hot.push_back(int(l));
  const size_t k = std::min(hot.size(), size_t(s_.hottest_links));
  // Busiest first: bytes / capacity is the mean utilisation times the iteration time, the same for all.
  auto busy = [&](int l) { return bytes[size_t(l)] / topo_.link(l).capacity_Bps; };
  std::partial_sort(hot.begin(), hot.begin() + long(k), hot.end(),
                    [&](int a, int b) { return busy(a) > busy(b) || (busy(a) == busy(b) && a < b); });
  hot.resize(k);
  if (hot.empty()) return;
  std::vector<int> hot_index(bytes.size(), -1);
  std::map<int, std::vector<int>> tp_src;  // representative's NVLink port -> hot links that copy its tp bytes
  for (size_t i = 0; i < k; ++i) {
    hot_index[size_t(hot[i])] = int(i);
    const int src = tp_copy_source(hot[i]);
    if (src >= 0) tp_src[src].push_back(int(i));
  }
  std::map<std::pair<const FlowGroupSpec*, bool>, std::vector<std::pair<int, double>>> per_phase;
  auto crossings = [&](int serial, std::vector<std::pair<int, double>>& out) {
    const auto [spec, kind] = group_src_[size_t(serial)];
    const bool tp = kind == kFlowTp;
    auto it = per_phase.find({spec, tp});
    if (it == per_phase.end()) {
      std::vector<std::pair<int, double>> v;
      for (const auto* ls : {&spec->links, &spec->passive_links})
        for (auto [l, n] : *ls) {
          if (hot_index[size_t(l)] >= 0) v.push_back({hot_index[size_t(l)], n});
          if (!tp) continue;
          auto s = tp_src.find(l);
          if (s != tp_src.end())
            for (int i : s->second) v.push_back({i, n});
        }
      it = per_phase.emplace(std::make_pair(spec, tp), std::move(v)).first;
    }
    out.insert(out.end(), it->second.begin(), it->second.end());
  };
  if (int(group_src_.size()) != net_.groups_started())
    throw std::logic_error("simulate_iteration: flow groups started outside the engine's record");
  const auto loads = link_loads(net_.group_rate_changes(), net_.groups_started(), int(k), crossings);
  res_.hottest_series.resize(k);
  for (size_t i = 0; i < k; ++i) {
    LinkSeries& ls = res_.hottest_series[i];
    ls.link = hot[i];
    ls.bytes = bytes[size_t(hot[i])];
    ls.capacity_Bps = topo_.link(hot[i]).capacity_Bps;
    ls.t_s.reserve(loads[i].size());
    ls.utilisation.reserve(loads[i].size());
    for (const LoadPoint& p : loads[i]) {
      ls.t_s.push_back(p.t_s);
      ls.utilisation.push_back(p.load_Bps / ls.capacity_Bps);
    }
  }
}

// A dp_wait span `sp` of worker w ending at t: the collective that released it ran at the end of a chain
// of back-to-back items on the stage's dp stream; the chain began when its first item became ready,
// i.e. when the last class joined it. When that class is another worker, the path records the chain as
// dp_comm steps and continues on that worker at the join time (true); otherwise it stays (false).
bool Engine::follow_dp_wait(int& w, double& t, const Span& sp) {
  const double eps = 1e-12 + 1e-12 * std::abs(t);
  const DpStream& st = dp_[size_t(res_.workers[size_t(w)].stage)];
  int j = int(st.order.size()) - 1;
  while (j >= 0 && std::abs(st.items[size_t(st.order[size_t(j)])].end_s - sp.end_s) > eps) --j;
  if (j < 0) return false;
  const int last = j;
  while (j > 0) {
    const DpItem& it = st.items[size_t(st.order[size_t(j)])];
    if (it.start_s <= it.ready_s + eps) break;  // started when it became ready: the join gated it
    --j;                                        // else it waited for the item before it
  }
  const DpItem& first = st.items[size_t(st.order[size_t(j)])];
  const int g = first.ready_worker;
  if (g < 0 || g == w || first.ready_s > t + eps) return false;
  for (int i = last; i >= j; --i) {
    const DpItem& it = st.items[size_t(st.order[size_t(i)])];
    res_.critical_path.push_back({w, SpanKind::dp_comm, it.start_s, std::min(it.end_s, t)});
  }
  w = g;
  t = first.ready_s;
  return true;
}

void Engine::critical_path(int crit) {
  constexpr double eps = 1e-12;
  int w = crit;
  double t = res_.workers[size_t(crit)].end_s;
  const int p = s_.pp;
  for (int guard = 0; guard < 4000000 && t > eps; ++guard) {
    const auto& spans = res_.workers[size_t(w)].spans;
    // The latest compute-stream span ending at or before t (dp_comm runs on another stream).
    int k = -1;
    // Spans are sorted by start: begin at the last one starting before t (binary search), walk back.
    const int hi = int(
        std::upper_bound(spans.begin(), spans.end(), t + eps, [](double x, const Span& a) { return x < a.start_s; }) -
        spans.begin());
    for (int i = hi - 1; i >= 0; --i) {
      const Span& sp = spans[size_t(i)];
      // A send the sender did not wait for is off its path; the tied all-reduce (no micro-batch) it waits out.
      if (sp.kind == SpanKind::dp_comm ||
          (sp.kind == SpanKind::pp_send && sp.micro_batch >= 0 && !s_.blocking_p2p && !paired_))
        continue;
      if (sp.end_s <= t + eps) {
        k = i;
        break;
      }
    }
    if (k < 0) break;
    const Span& sp = spans[size_t(k)];
    if (sp.kind == SpanKind::pp_wait && sp.micro_batch < 0 && sp.end_s >= t - eps) {
      // Waiting for the other stage of the tied all-reduce: the path goes on there, where it called.
      res_.critical_path.push_back({w, SpanKind::pp_wait, sp.end_s, sp.end_s});
      const int stage = res_.workers[size_t(w)].stage;
      w = res_.workers[size_t(w)].cls * p + (stage == 0 ? p - 1 : 0);
      continue;
    }
    if (sp.kind == SpanKind::pp_wait && sp.end_s >= t - eps) {
      // Jump to the sender: the next compute span says the direction (forward waits for activations;
      // a tp all-gather or ZeRO-3 gather may come between the receive and the compute).
      bool fwd = true;
      for (size_t i = size_t(k) + 1; i < spans.size(); ++i)
        if (spans[i].kind == SpanKind::forward || spans[i].kind == SpanKind::backward) {
          fwd = spans[i].kind == SpanKind::forward;
          break;
        }
      const int vs = sp.chunk * p + res_.workers[size_t(w)].stage;
      const int src_vs = fwd ? vs - 1 : vs + 1;
      if (src_vs < 0 || src_vs >= V_) break;
      res_.critical_path.push_back({w, SpanKind::pp_wait, sp.end_s, sp.end_s});
      w = res_.workers[size_t(w)].cls * p + src_vs % p;
      continue;  // same t: the sender's transfer ended when the wait did
    }
    if (sp.kind == SpanKind::dp_wait && sp.end_s >= t - eps && follow_dp_wait(w, t, sp)) continue;
    res_.critical_path.push_back({w, sp.kind, sp.start_s, std::min(sp.end_s, t)});
    t = sp.start_s;
  }
  std::reverse(res_.critical_path.begin(), res_.critical_path.end());
}

}  // namespace

IterationResult simulate_iteration(const Topology& topo, const IterationSpec& spec) {
  Engine e(topo, spec);
  e.start();
  while (!e.step(1LL << 40)) {
  }
  return e.take();
}

struct IterationSim::Impl {
  Engine e;
  Impl(const Topology& t, const IterationSpec& s) : e(t, s) {}
};

IterationSim::IterationSim(const Topology& topo, const IterationSpec& spec)
    : impl_(std::make_unique<Impl>(topo, spec)) {
  impl_->e.start();
}
IterationSim::~IterationSim() = default;
bool IterationSim::step(long long max_events) { return impl_->e.step(std::max(1LL, max_events)); }
bool IterationSim::done() const { return impl_->e.done(); }
double IterationSim::progress() const { return impl_->e.progress(); }
long long IterationSim::events() const { return impl_->e.events(); }
long long IterationSim::work() const { return impl_->e.work(); }
double IterationSim::estimated_work() const { return impl_->e.estimated_work(); }
IterationResult IterationSim::take_result() {
  if (!impl_->e.done()) throw std::logic_error("IterationSim::take_result before the simulation finished");
  return impl_->e.take();
}

}  // namespace mc::sim
