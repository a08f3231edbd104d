// schedule.cpp - the order in which one pipeline stage runs its forward and backward passes.
#include "sim/iteration.h"

#include <algorithm>
#include <stdexcept>

namespace mc::sim {

std::vector<SchedOp> stage_schedule(PipeSchedule s, int p, int stage, int m, int v) {
  std::vector<SchedOp> out;
  if (p < 1 || m < 1 || stage < 0 || stage >= p) throw std::invalid_argument("stage_schedule: bad sizes");
  if (s == PipeSchedule::gpipe) {
    // GPipe (Huang et al. 2019): every micro-batch forward, then every backward.
    for (int i = 0; i < m; ++i) out.push_back({i, 0, false});
    for (int i = 0; i < m; ++i) out.push_back({i, 0, true});
    return out;
  }
  if (s == PipeSchedule::one_f_one_b || v <= 1) {
    // PipeDream-Flush / 1F1B (Narayanan et al. 2021, Sec. 2.2.1, Fig. 4 top): p - s - 1 warm-up
    // forwards, then alternate one forward and one backward, then drain the backwards.
    const int warm = std::min(p - stage - 1, m);
    for (int i = 0; i < warm; ++i) out.push_back({i, 0, false});
    for (int i = 0; i < m - warm; ++i) {
      out.push_back({warm + i, 0, false});
      out.push_back({i, 0, true});
    }
    for (int i = m - warm; i < m; ++i) out.push_back({i, 0, true});
    return out;
  }
  // Interleaved 1F1B (Narayanan et al. 2021, Sec. 2.2.2, Fig. 4 bottom), as Megatron-LM's
  // forward_backward_pipelining_with_interleaving orders it: micro-batches go through model chunks in
  // groups of p; warm-up is 2 (p - s - 1) + (v - 1) p forwards.
  if (m % p != 0) throw std::invalid_argument("interleaved schedule needs micro-batches divisible by pp");
  const int total = m * v;
  auto fwd = [&](int k) { return SchedOp{(k / (p * v)) * p + k % p, (k / p) % v, false}; };
  auto bwd = [&](int k) { return SchedOp{(k / (p * v)) * p + k % p, v - 1 - (k / p) % v, true}; };
  int warm = (p - stage - 1) * 2 + (v - 1) * p;
  if (m == p) warm = total;  // Megatron: all warm-up when there are exactly p micro-batches
  warm = std::min(warm, total);
  for (int k = 0; k < warm; ++k) out.push_back(fwd(k));
  for (int k = 0; k < total - warm; ++k) {
    out.push_back(fwd(warm + k));
    out.push_back(bwd(k));
  }
  for (int k = total - warm; k < total; ++k) out.push_back(bwd(k));
  return out;
}

std::vector<PipeCmd> deepspeed_schedule(int p, int stage, int m) {
  if (p < 1 || m < 1 || stage < 0 || stage >= p) throw std::invalid_argument("deepspeed_schedule: bad sizes");
  // TrainSchedule._step_to_micro_batch: even stages run forwards on even steps, odd stages on odd steps.
  auto at = [&](int step, bool& fwd) {
    fwd = (step % 2 == 0) == (stage % 2 == 0);
    if (fwd) return (step % 2 == 0 ? step / 2 : (step - 1) / 2) - stage / 2;
    return step % 2 == 0 ? step / 2 - p + (stage + 1) / 2 : (step - 1) / 2 - p + 1 + stage / 2;
  };
  auto valid = [&](int mb) { return mb >= 0 && mb < m; };
  std::vector<PipeCmd> out;
  int prev = -1;
  for (int step = 0; step < 2 * (m + p - 1); ++step) {
    bool fwd = true;
    const int mb = at(step, fwd);
    if (fwd) {
      if (valid(prev) && stage > 0) out.push_back({PipeCmd::send_grad, prev});
      if (valid(mb) && stage > 0) out.push_back({PipeCmd::recv_act, mb});
    } else {
      if (valid(mb) && stage < p - 1) out.push_back({PipeCmd::recv_grad, mb});
      if (valid(prev) && stage < p - 1) out.push_back({PipeCmd::send_act, prev});
    }
    if (valid(mb)) out.push_back({fwd ? PipeCmd::forward : PipeCmd::backward, mb});
    prev = mb;
  }
  return out;
}

const char* to_string(SpanKind k) {
  switch (k) {
    case SpanKind::forward:
      return "forward";
    case SpanKind::backward:
      return "backward";
    case SpanKind::tp_comm:
      return "tp_comm";
    case SpanKind::cp_comm:
      return "cp_comm";
    case SpanKind::pp_wait:
      return "pp_wait";
    case SpanKind::dp_comm:
      return "dp_comm";
    case SpanKind::dp_wait:
      return "dp_wait";
    case SpanKind::optimizer:
      return "optimizer";
    case SpanKind::pp_send:
      return "pp_send";
  }
  return "?";
}

GpuCoord gpu_coord(const IterationSpec& s, int gpu) {
  const int t = gpu % s.tp;
  const int rest = gpu / s.tp;
  if (s.pp_inside_dp) {  // tp, cp, pp, dp: replica = dp rank * cp + cp rank
    const int cp = std::max(1, s.cp), k = rest % cp, pipe = rest / cp;
    return {(pipe / s.pp) * cp + k, pipe % s.pp, t};
  }
  return {rest % s.dp, rest / s.dp, t};
}

int gpu_id(const IterationSpec& s, int replica, int stage, int tp_rank) {
  if (s.pp_inside_dp) {
    const int cp = std::max(1, s.cp);
    return (((replica / cp) * s.pp + stage) * cp + replica % cp) * s.tp + tp_rank;
  }
  return (stage * s.dp + replica) * s.tp + tp_rank;
}

}  // namespace mc::sim
