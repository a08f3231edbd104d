// schedule.cpp - DeepSpeed's lockstep pipeline commands for one stage, and the simulator's span names and GPU
// coordinates (the stage orders of the schedules are core/pipeline_schedule.h's).
#include "sim/iteration.h"

#include <algorithm>
#include <stdexcept>

namespace mc::sim {

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
