// pipeline_schedule.h - the pipeline schedules, once for the whole engine: which one (the enum), and the order
// in which one stage runs its forward and backward passes. The analytic model (perf: the bubble and the Gantt),
// the simulator (sim: its op stream, the pipeline animation) and the training lab (train: the trainer's
// passes) all read these, so they cannot disagree on what "1F1B" means.
//
//   for (const PipeOp& op : stage_order(PipeSchedule::one_f_one_b, /*pp*/ 4, /*stage*/ 0, /*m*/ 8, /*v*/ 1))
//     run(op.micro_batch, op.chunk, op.backward);   // F0 F1 F2 F3 B0 F4 B1 ... B7
//
// DeepSpeed's lockstep TrainSchedule, whose commands pair sends with receives, is the simulator's own
// (sim/iteration.h deepspeed_schedule): its passes come in the 1F1B order above.
#pragma once

#include <string>
#include <vector>

namespace mc {

enum class PipeSchedule { gpipe, one_f_one_b, interleaved };
const char* schedule_name(PipeSchedule s);  // "gpipe", "1f1b", "interleaved"
// The names back; throws std::invalid_argument naming the three for anything else.
PipeSchedule schedule_from_string(const std::string& s);

// One pass of one micro-batch through one model chunk (0 unless interleaved) on one stage.
struct PipeOp {
  int micro_batch = 0, chunk = 0;
  bool backward = false;
  bool operator==(const PipeOp&) const = default;
};

// The passes of `stage` (0-based, of pp) over m micro-batches and v model chunks per stage, in order:
//   GPipe (Huang et al. 2019): every forward, then every backward.
//   1F1B (PipeDream-Flush, Narayanan et al. 2021 Sec. 2.2.1, Fig. 4 top): pp - stage - 1 warm-up forwards,
//     then one forward and one backward alternately, then the remaining backwards; at most pp - stage
//     micro-batches' activations are alive at once instead of m. So is the interleaved schedule with v = 1.
//   Interleaved 1F1B (Sec. 2.2.2, Fig. 4 bottom), as Megatron-LM's forward_backward_pipelining_with_interleaving
//     orders it: micro-batches go through the model chunks in groups of pp; 2 (pp - stage - 1) + (v - 1) pp
//     warm-up forwards, or all of them when m == pp.
// Throws std::invalid_argument for sizes out of range, and for an interleaved schedule (v > 1) whose
// micro-batches are not a multiple of pp.
std::vector<PipeOp> stage_order(PipeSchedule s, int pp, int stage, int m, int v);

// The parts of that order other models count with (perf's activation memory): how many forwards `stage` runs
// before its first backward (GPipe: all m; 1F1B: pp - stage - 1, at most m; interleaved: as above, at most
// m v), and which micro-batch and chunk its k-th forward is.
int warmup_forwards(PipeSchedule s, int pp, int stage, int m, int v);
PipeOp nth_forward(PipeSchedule s, int pp, int v, int k);

}  // namespace mc
