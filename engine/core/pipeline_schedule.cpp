// pipeline_schedule.cpp - the pipeline schedules' stage orders (pipeline_schedule.h).
#include "core/pipeline_schedule.h"

#include <algorithm>
#include <stdexcept>

namespace mc {

const char* schedule_name(PipeSchedule s) {
  switch (s) {
    case PipeSchedule::gpipe:
      return "gpipe";
    case PipeSchedule::one_f_one_b:
      return "1f1b";
    case PipeSchedule::interleaved:
      return "interleaved";
  }
  return "1f1b";
}

PipeSchedule schedule_from_string(const std::string& s) {
  if (s == "gpipe") return PipeSchedule::gpipe;
  if (s == "1f1b") return PipeSchedule::one_f_one_b;
  if (s == "interleaved") return PipeSchedule::interleaved;
  throw std::invalid_argument("unknown pipeline schedule \"" + s.substr(0, 40) +
                              "\"; use \"gpipe\", \"1f1b\" or \"interleaved\"");
}

namespace {

void check_sizes(int p, int stage, int m, int v) {
  if (p < 1 || m < 1 || v < 1 || stage < 0 || stage >= p)
    throw std::invalid_argument("stage_order: pp " + std::to_string(p) + ", stage " + std::to_string(stage) +
                                ", micro-batches " + std::to_string(m) + ", virtual stages " + std::to_string(v) +
                                " (each at least 1, the stage below pp)");
}

bool interleaving(PipeSchedule s, int v) { return s == PipeSchedule::interleaved && v > 1; }

}  // namespace

int warmup_forwards(PipeSchedule s, int p, int stage, int m, int v) {
  check_sizes(p, stage, m, v);
  if (s == PipeSchedule::gpipe) return m;
  if (!interleaving(s, v)) return std::min(p - stage - 1, m);
  const int total = m * v;
  if (m == p) return total;  // Megatron: all warm-up when there are exactly pp micro-batches
  return std::min((p - stage - 1) * 2 + (v - 1) * p, total);
}

// Megatron-LM's mapping of a rank's k-th forward to its micro-batch and chunk: groups of p micro-batches go
// through chunk 0, then chunk 1, ...
PipeOp nth_forward(PipeSchedule s, int p, int v, int k) {
  if (!interleaving(s, v)) return {k, 0, false};
  return {(k / (p * v)) * p + k % p, (k / p) % v, false};
}

std::vector<PipeOp> stage_order(PipeSchedule s, int p, int stage, int m, int v) {
  const int warm = warmup_forwards(s, p, stage, m, v);
  std::vector<PipeOp> out;
  if (s == PipeSchedule::gpipe) {
    for (int i = 0; i < m; ++i) out.push_back({i, 0, false});
    for (int i = 0; i < m; ++i) out.push_back({i, 0, true});
    return out;
  }
  if (interleaving(s, v) && m % p != 0)
    throw std::invalid_argument("the interleaved schedule needs micro-batches (" + std::to_string(m) +
                                ") divisible by pp (" + std::to_string(p) + ")");
  // After the warm-up, one forward and one backward alternately, then the remaining backwards; backwards run
  // the chunks in reverse.
  const int vv = interleaving(s, v) ? v : 1, total = m * vv;
  auto bwd = [&](int k) {
    PipeOp op = nth_forward(s, p, vv, k);
    op.chunk = vv - 1 - op.chunk;
    op.backward = true;
    return op;
  };
  for (int k = 0; k < warm; ++k) out.push_back(nth_forward(s, p, vv, k));
  for (int k = 0; k < total - warm; ++k) {
    out.push_back(nth_forward(s, p, vv, warm + k));
    out.push_back(bwd(k));
  }
  for (int k = total - warm; k < total; ++k) out.push_back(bwd(k));
  return out;
}

}  // namespace mc
