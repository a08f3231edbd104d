// perf_timeline.cpp - replays one iteration's pipeline schedule to get the start and end of every
// forward and backward pass on every stage (the Gantt chart of the panel; the simulator's reference).
//
// Each stage runs its ops in the order its schedule prescribes (core/pipeline_schedule.h: GPipe, 1F1B,
// Megatron-LM's interleaved 1F1B); an op starts when the stage is free and its input has arrived (the previous
// stage's forward, or the next stage's backward, plus one p2p).
#include "perf/perf.h"

#include <algorithm>
#include <limits>

namespace mc::perf {

namespace {

// Replays the schedule: each rank runs its ops in order; an op starts when its rank is free and its input has
// arrived (the previous virtual stage's forward, or the next one's backward, plus `comm`). `tf(s)`, `tb(s)`:
// the op's time on virtual stage s; `on_op(rank, op, start, end)` sees every op. Returns the last end.
template <class Tf, class Tb, class OnOp>
double replay(PipeSchedule sch, int p, int m, int v, Tf tf, Tb tb, double comm, OnOp on_op) {
  // Virtual stage index of (rank, chunk) = chunk * p + rank; forwards flow up it, backwards down.
  const int vs = p * v;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> fwd_done(size_t(vs) * m, inf), bwd_done(size_t(vs) * m, inf);
  std::vector<std::vector<PipeOp>> order(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) order[size_t(r)] = stage_order(sch, p, r, m, v);
  std::vector<size_t> next(size_t(p), 0);
  std::vector<double> free_at(size_t(p), 0.0);
  double last = 0;
  // Repeatedly run any stage whose next op is ready (ops become ready only as others finish).
  bool progress = true;
  while (progress) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      while (next[size_t(r)] < order[size_t(r)].size()) {
        const PipeOp& op = order[size_t(r)][next[size_t(r)]];
        const int s = op.chunk * p + r;
        double ready = 0;
        if (!op.backward && s > 0) ready = fwd_done[size_t(s - 1) * m + op.micro_batch] + comm;
        if (op.backward) {
          ready = s + 1 < vs ? bwd_done[size_t(s + 1) * m + op.micro_batch] + comm
                             : fwd_done[size_t(s) * m + op.micro_batch];
        }
        if (ready == inf) break;  // wait for another stage
        const double start = std::max(ready, free_at[size_t(r)]);
        const double end = start + (op.backward ? tb(s) : tf(s));
        (op.backward ? bwd_done : fwd_done)[size_t(s) * m + op.micro_batch] = end;
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

double pipeline_end_s(PipeSchedule s, int p, int m, int v, const std::vector<double>& forward_s,
                      const std::vector<double>& backward_s, double comm_s) {
  if (p < 1 || m < 1 || v < 1 || forward_s.size() != size_t(p) * size_t(v) || backward_s.size() != forward_s.size())
    return 0;
  return replay(
      s, p, m, v, [&](int k) { return forward_s[size_t(k)]; }, [&](int k) { return backward_s[size_t(k)]; }, comm_s,
      [](int, const PipeOp&, double, double) {});
}

std::vector<PipelineOp> pipeline_timeline(const Config& c, const Estimate& e, int max_ops) {
  const int p = c.layout.pp, m = c.layout.micro_batches();
  const int v = c.layout.schedule == PipeSchedule::interleaved ? std::max(1, c.layout.virtual_stages) : 1;
  std::vector<PipelineOp> out;
  if (p < 1 || m < 1 || (long long)p * m * v * 2 > max_ops) return out;
  const int vs = p * v;
  // Each virtual stage at its own chunk's times (uneven splits, the output layer on the last chunk); an
  // estimate without them (built by hand) at the slowest stage's mean chunk time.
  const bool per_chunk = e.chunk_forward_s.size() == size_t(vs) && e.chunk_backward_s.size() == size_t(vs);
  auto tf = [&](int s) { return per_chunk ? e.chunk_forward_s[size_t(s)] : e.stage_forward_s; };
  auto tb = [&](int s) { return per_chunk ? e.chunk_backward_s[size_t(s)] : e.stage_backward_s; };
  replay(c.layout.schedule, p, m, v, tf, tb, e.p2p_s, [&](int r, const PipeOp& op, double start, double end) {
    out.push_back({r, op.micro_batch, op.chunk, op.backward, start, end});
  });
  return out;
}

}  // namespace mc::perf
