// iteration_ops.cpp - the iteration engine's replica classes and op streams: which replicas behave alike, and
// what each worker runs, in order (its schedule's passes, tensor-parallel collectives, pipeline sends and
// receives, gradient buckets, ZeRO-3 gathers, the optimizer). See iteration_engine.h.
//
// Sections: classes of replicas; op streams.
#include "sim/iteration_engine.h"

namespace mc::sim::detail {

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

// What build_ops keeps while it writes one worker's stream: the stage's sizes, the gradient bytes counted
// towards the next bucket, and the ZeRO-3 items issued (recorded by the stage's first worker; the others
// must issue the same).
struct OpStreamBuilder {
  Engine& e;
  const IterationSpec& s;
  Worker& w;
  const int p, v, m;
  const double per_layer_grad;  // gradient bytes of one layer of the stage
  const bool tp, cp, zero3;
  const IterationSpec::Zero3Stack& z;
  // ZeRO-3 units of this stage (iteration.h): each layer, and the parameters outside the layers, gathered
  // with chunk 0. Sizes and counts are the stack's (IterationSpec::zero3, from perf_time.cpp's formulas).
  const double layer_b, rest_b, per_layer;
  std::vector<Z3Item>& items;
  const bool record;  // the first worker of the stage records, the others issue the same
  double cum = 0;
  int next_bucket = 0, z3n = 0, last_async = -1;

  OpStreamBuilder(Engine& engine, Worker& worker)
      : e(engine),
        s(engine.s_),
        w(worker),
        p(s.pp),
        v(s.schedule == PipeSchedule::interleaved ? s.virtual_stages : 1),
        m(s.micro_batches),
        per_layer_grad(s.dp_bytes_per_stage / double(std::max(1, engine.stage_layer_count(worker.stage)))),
        tp(s.tp > 1),
        cp(engine.cp_on()),
        zero3(engine.zero3_on()),
        z(s.zero3),
        layer_b(z.layer_bytes > 0 ? z.layer_bytes
                                  : s.dp_bytes_per_stage / double(std::max(1, engine.stage_layer_count(worker.stage)))),
        rest_b(std::max(0.0, s.dp_bytes_per_stage - layer_b * engine.stage_layer_count(worker.stage))),
        per_layer(std::max(1.0, z.collectives_per_layer)),
        items(engine.z3_items_[size_t(worker.stage)]),
        record(items.empty()) {}

  void emit_buckets(bool all) {
    while (next_bucket < e.n_buckets_ && (all || cum >= (next_bucket + 1) * s.bucket_bytes - 1e-6 * s.bucket_bytes)) {
      w.ops.push_back({OpType::bucket, SpanKind::dp_comm, 0, -1, 0, next_bucket, 0});
      ++next_bucket;
    }
  }
  int z3_new(double bytes, double count, bool reduce, int unit, const PipeOp& so, bool bwd) {
    if (record) items.push_back({bytes, count, reduce, unit, so.micro_batch, bwd});
    return z3n++;
  }
  void push(OpType t, SpanKind k, const PipeOp& so, int a, int vs) {
    w.ops.push_back({t, k, 0, so.micro_batch, so.chunk, a, vs});
  }
  void pass(const PipeOp& so, int vs, bool bwd, double fx, double lx);
  void deepspeed_order();
  void schedule_order();
  void end_of_step();
};

// One pass of a chunk: its units in order (the rest first in the forward, last in the backward), each
// gathered before it computes. Of each gather the open share (IterationSpec::zero3.open_share) is
// joined and waited for there; the rest was issued as a prefetch while the unit before computed (the
// first unit's at the start of the pass, where nothing hides it: perf_time.cpp's 2 (1 - open_share)
// gather_layer). The backward gathers a layer twice when the stack regathers for the recomputed forward
// (perf_time.cpp bwd_gathers) and, when it reduces every micro-batch, reduce-scatters the layer's
// gradients after it: the open_reduce share blocking, the rest behind the backward (bwd_reduces).
void OpStreamBuilder::pass(const PipeOp& so, int vs, bool bwd, double fx, double lx) {
  const int lpc = e.chunk_layer_count(vs);
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
        push(
            OpType::gather, SpanKind::dp_wait, so,
            z3_new(z.open_share * gathers(u) * bytes_of(u), z.open_share * gathers(u) * count_of(u), false, u, so, bwd),
            vs);
      if (pf >= 0) push(OpType::z3_wait, SpanKind::dp_wait, so, pf, vs);
      pf = prefetch(i + 1);
    }
    if (u >= 0) {
      // Embedding/logits work (a third forward, two thirds backward: the backward of a matmul costs twice
      // its forward) rides on the first/last layer of the first/last virtual stage.
      const double d = bwd ? s.layer_backward_s + (u == lpc - 1 ? 2 * lx / 3 : 0) + (u == 0 ? 2 * fx / 3 : 0)
                           : s.layer_forward_s + (u == 0 ? fx / 3 : 0) + (u == lpc - 1 ? lx / 3 : 0);
      // Context parallel: the keys and values gathered before the attention (again in the backward), their
      // gradients reduce-scattered after it; the op's duration field counts the collectives.
      if (cp)
        w.ops.push_back({OpType::tp, SpanKind::cp_comm, double(bwd ? s.cp_gathers_backward : s.cp_gathers_forward),
                         so.micro_batch, so.chunk, kCollCpGather, vs});
      w.ops.push_back({OpType::compute, bwd ? SpanKind::backward : SpanKind::forward, d / w.speed, so.micro_batch,
                       so.chunk, 0, vs});
      if (cp && bwd)
        w.ops.push_back({OpType::tp, SpanKind::cp_comm, double(s.cp_reduces_backward), so.micro_batch, so.chunk,
                         kCollCpReduce, vs});
      if (tp)
        w.ops.push_back({OpType::tp, SpanKind::tp_comm,
                         double(bwd ? s.tp_collectives_backward : s.tp_collectives_forward), so.micro_batch, so.chunk,
                         0, vs});
      if (bwd && final_mb && s.overlap_dp) {
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
}

// DeepSpeed's instruction order (deepspeed_schedule): one chunk per stage, each transfer paired.
void OpStreamBuilder::deepspeed_order() {
  const int vs = w.stage;
  const double fx = vs == 0 ? s.first_stage_extra_s : 0, lx = vs == e.V_ - 1 ? s.last_stage_extra_s : 0;
  for (const PipeCmd& c : deepspeed_schedule(p, w.stage, m)) {
    const PipeOp so{c.micro_batch, 0, c.kind == PipeCmd::backward};
    switch (c.kind) {
      case PipeCmd::recv_act:
        w.ops.push_back({OpType::recv, SpanKind::pp_wait, 0, so.micro_batch, 0, 0, vs});
        if (tp && s.pp_all_gather) w.ops.push_back({OpType::tp, SpanKind::tp_comm, 0.5, so.micro_batch, 0, 0, vs});
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
}

// The schedule's stage order (core/pipeline_schedule.h), each pass between its receive and its send.
void OpStreamBuilder::schedule_order() {
  for (const PipeOp& so : stage_order(s.schedule, p, w.stage, m, v)) {
    const int vs = so.chunk * p + w.stage;
    const bool first = vs == 0, last = vs == e.V_ - 1;
    const double fx = first ? s.first_stage_extra_s : 0, lx = last ? s.last_stage_extra_s : 0;
    if (!so.backward) {
      if (!first) {
        w.ops.push_back({OpType::recv, SpanKind::pp_wait, 0, so.micro_batch, so.chunk, 0, vs});
        // An all-gather moves half an all-reduce's bytes in half its steps (collectives.h).
        if (tp && s.pp_all_gather)
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

// After the last pass: ZeRO-3's accumulated gradients, the tied embedding, the buckets left, the optimizer and
// the post-step gather.
void OpStreamBuilder::end_of_step() {
  // ZeRO-3 gradients accumulated over the micro-batches: reduce-scattered once after the last backward,
  // one unit after another (perf_time.cpp end_reduce, exposed), before the optimizer.
  if (zero3 && !z.reduce_each_microbatch)
    for (int c = 0; c < v; ++c) {
      const PipeOp so{-1, c, true};
      for (int l = 0; l < e.chunk_layer_count(c * p + w.stage); ++l) {
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
  if (e.tied_on() && (w.stage == 0 || w.stage == p - 1))
    w.ops.push_back({OpType::tied, SpanKind::pp_wait, 0, -1, 0, 0, 0});
  emit_buckets(true);
  w.ops.push_back({OpType::opt_wait, SpanKind::dp_wait, 0, -1, 0, 0, 0});
  w.ops.push_back({OpType::compute, SpanKind::optimizer, s.optimizer_s / w.speed, -1, 0, 0, 0});
  if (e.post_step_gather()) w.ops.push_back({OpType::all_gather, SpanKind::dp_wait, 0, -1, 0, 0, 0});
  if (!record && z3n != int(items.size()))
    throw std::logic_error("simulate_iteration: ZeRO-3 items differ between classes of stage " +
                           std::to_string(w.stage));
}

void Engine::build_ops(Worker& w) {
  OpStreamBuilder b(*this, w);
  if (paired_)
    b.deepspeed_order();
  else
    b.schedule_order();
  b.end_of_step();
}

}  // namespace mc::sim::detail
