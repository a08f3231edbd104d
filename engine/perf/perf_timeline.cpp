// perf_timeline.cpp - replays one iteration's pipeline schedule to get the start and end of every
// forward and backward pass on every stage (the Gantt chart of the panel; the simulator's reference).
//
// Each stage runs its ops in the order its schedule prescribes; an op starts when the stage is free and
// its input has arrived (the previous stage's forward, or the next stage's backward, plus one p2p).
//   GPipe (Huang et al. 2019): all m forwards, then all m backwards.
//   1F1B (PipeDream-Flush, Narayanan et al. 2021 Sec. 2.2.1): p-1-rank warm-up forwards, then alternate.
//   Interleaved 1F1B (Sec. 2.2.2): v chunks per rank, in the order of Megatron-LM's
//   forward_backward_pipelining_with_interleaving (warm-up (p-rank-1)*2 + (v-1)*p).
#include "perf/perf.h"

#include <algorithm>
#include <limits>

namespace mc::perf {

namespace {

struct Op {
  int mb, chunk;
  bool bwd;
};

// Megatron-LM's mapping of the k-th forward (or backward) op of a rank to (micro-batch, chunk).
Op interleaved_op(int k, int p, int v, bool bwd) {
  const int group = k / (p * v), in_group = k % (p * v);
  int chunk = in_group / p;
  if (bwd) chunk = v - 1 - chunk;
  return {group * p + in_group % p, chunk, bwd};
}

std::vector<Op> stage_order(Schedule s, int rank, int p, int m, int v) {
  std::vector<Op> ops;
  if (s == Schedule::gpipe) {
    for (int i = 0; i < m; ++i) ops.push_back({i, 0, false});
    for (int i = 0; i < m; ++i) ops.push_back({i, 0, true});
    return ops;
  }
  if (s == Schedule::one_f_one_b || v <= 1) {
    const int warm = std::min(m, p - rank - 1);
    int f = 0, b = 0;
    for (; f < warm; ++f) ops.push_back({f, 0, false});
    while (b < m) {
      if (f < m) ops.push_back({f++, 0, false});
      ops.push_back({b++, 0, true});
    }
    return ops;
  }
  const int total = m * v;
  const int warm = std::min(total, (p - rank - 1) * 2 + (v - 1) * p);
  int f = 0, b = 0;
  for (; f < warm; ++f) ops.push_back(interleaved_op(f, p, v, false));
  while (b < total) {
    if (f < total) ops.push_back(interleaved_op(f++, p, v, false));
    ops.push_back(interleaved_op(b++, p, v, true));
  }
  return ops;
}

}  // namespace

namespace {

// Replays the schedule: each rank runs its ops in order; an op starts when its rank is free and its input has
// arrived (the previous virtual stage's forward, or the next one's backward, plus `comm`). `tf(s)`, `tb(s)`:
// the op's time on virtual stage s; `on_op(rank, op, start, end)` sees every op. Returns the last end.
template <class Tf, class Tb, class OnOp>
double replay(Schedule sch, int p, int m, int v, Tf tf, Tb tb, double comm, OnOp on_op) {
  // Virtual stage index of (rank, chunk) = chunk * p + rank; forwards flow up it, backwards down.
  const int vs = p * v;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> fwd_done(size_t(vs) * m, inf), bwd_done(size_t(vs) * m, inf);
  std::vector<std::vector<Op>> order(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) order[size_t(r)] = stage_order(sch, r, p, m, v);
  std::vector<size_t> next(size_t(p), 0);
  std::vector<double> free_at(size_t(p), 0.0);
  double last = 0;
  // Repeatedly run any stage whose next op is ready (ops become ready only as others finish).
  bool progress = true;
  while (progress) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      while (next[size_t(r)] < order[size_t(r)].size()) {
        const Op& op = order[size_t(r)][next[size_t(r)]];
        const int s = op.chunk * p + r;
        double ready = 0;
        if (!op.bwd && s > 0) ready = fwd_done[size_t(s - 1) * m + op.mb] + comm;
        if (op.bwd) {
          ready = s + 1 < vs ? bwd_done[size_t(s + 1) * m + op.mb] + comm : fwd_done[size_t(s) * m + op.mb];
        }
        if (ready == inf) break;  // wait for another stage
        const double start = std::max(ready, free_at[size_t(r)]);
        const double end = start + (op.bwd ? tb(s) : tf(s));
        (op.bwd ? bwd_done : fwd_done)[size_t(s) * m + op.mb] = end;
        free_at[size_t(r)] = end;
        last = std::max(last, end);
        on_op(r, op, start, end);
        ++next[size_t(r)];
        progress = true;
      }
    }
  }
  return last;
}

}  // namespace

double pipeline_end_s(Schedule s, int p, int m, int v, const std::vector<double>& forward_s,
                      const std::vector<double>& backward_s, double comm_s) {
  if (p < 1 || m < 1 || v < 1 || forward_s.size() != size_t(p) * size_t(v) || backward_s.size() != forward_s.size())
    return 0;
  return replay(
      s, p, m, v, [&](int k) { return forward_s[size_t(k)]; }, [&](int k) { return backward_s[size_t(k)]; }, comm_s,
      [](int, const Op&, double, double) {});
}

std::vector<PipelineOp> pipeline_timeline(const Config& c, const Estimate& e, int max_ops) {
  const int p = c.layout.pp, m = c.layout.micro_batches();
  const int v = c.layout.schedule == Schedule::interleaved ? std::max(1, c.layout.virtual_stages) : 1;
  std::vector<PipelineOp> out;
  if (p < 1 || m < 1 || (long long)p * m * v * 2 > max_ops) return out;
  const int vs = p * v;
  // Each virtual stage at its own chunk's times (uneven splits, the output layer on the last chunk); an
  // estimate without them (built by hand) at the slowest stage's mean chunk time.
  const bool per_chunk = e.chunk_forward_s.size() == size_t(vs) && e.chunk_backward_s.size() == size_t(vs);
  auto tf = [&](int s) { return per_chunk ? e.chunk_forward_s[size_t(s)] : e.stage_forward_s; };
  auto tb = [&](int s) { return per_chunk ? e.chunk_backward_s[size_t(s)] : e.stage_backward_s; };
  replay(c.layout.schedule, p, m, v, tf, tb, e.p2p_s, [&](int r, const Op& op, double start, double end) {
    out.push_back({r, op.mb, op.chunk, op.bwd, start, end});
  });
  return out;
}

}  // namespace mc::perf
