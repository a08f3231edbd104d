// iteration.cpp - the discrete-event engine of one iteration (see iteration.h for the model): the event loop
// and the public API. Its state is iteration_engine.h; the op streams it runs are built in iteration_ops.cpp
// and its results in iteration_results.cpp.
//
// Sections: engine; the public API.
#include "sim/iteration_engine.h"

namespace mc::sim {
namespace detail {

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

}  // namespace detail

// ---- the public API ----

using detail::Engine;

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
