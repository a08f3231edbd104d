// comm_volume.h - bytes each worker sends in the collectives of distributed training: the analytic
// volumes that the training lab's counted bytes are checked against, and that the performance model
// turns into time. All sizes in bytes; p = number of ranks in the collective.
//
// Conventions (NCCL's "bus bandwidth" derivation, nccl-tests PERFORMANCE.md): for a buffer of N bytes,
//   ring reduce-scatter: every rank sends (p-1)/p * N in p-1 messages of N/p;
//   ring all-gather:     the same, (p-1)/p * N in p-1 messages;
//   ring all-reduce = reduce-scatter + all-gather: 2 (p-1)/p * N in 2 (p-1) messages.
#pragma once

#include <cstdint>

namespace mc::perf {

struct CollectiveVolume {
  double bytes_sent_per_rank = 0;  // bytes one rank puts on the wire
  double messages_per_rank = 0;    // point-to-point messages one rank sends
};

CollectiveVolume ring_reduce_scatter(double buffer_bytes, int p);
CollectiveVolume ring_all_gather(double buffer_bytes, int p);
CollectiveVolume ring_all_reduce(double buffer_bytes, int p);

// Data-parallel gradient exchange per optimizer step for one model replica shard of `shard_params`
// parameters (params / (tp*pp)), gradients of `grad_bytes_per_param` bytes, over `dp` ranks.
// ZeRO (Rajbhandari et al. 2020, Sec. 7): stages 0-2 move 2 (dp-1)/dp * Psi (reduce-scatter of gradients
// + all-gather of updated parameters, the same volume as one all-reduce); stage 3 adds one more parameter
// all-gather (forward and backward each gather; the update's gather is not needed): 3 (dp-1)/dp * Psi.
CollectiveVolume dp_gradient_volume(double shard_params, double grad_bytes_per_param, int dp, int zero_stage);

// Megatron tensor parallelism (Shoeybi et al. 2019, Sec. 3; Narayanan et al. 2021, Sec. 3.2): each
// transformer layer does 2 all-reduces of the activations (b*s*h elements) in the forward pass and 2 in
// the backward pass, over t ranks; with full activation recomputation the forward's 2 are redone.
CollectiveVolume tp_layer_volume(double micro_batch, double seq_len, double hidden, double bytes_per_elem, int t,
                                 bool recompute_forward);

// Pipeline parallelism: per micro-batch, each stage boundary carries the activation (b*s*h) forward and
// its gradient backward (Narayanan et al. 2021, Sec. 4.1). Bytes one stage sends per micro-batch
// (interior stages send both; the first sends only forward activations, the last only gradients).
double pp_boundary_bytes(double micro_batch, double seq_len, double hidden, double bytes_per_elem);

}  // namespace mc::perf
