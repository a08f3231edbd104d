// sim_test_util.h - set-ups the simulator's tests share (one definition, so they test the same layout).
#pragma once

#include "catalog/catalog.h"
#include "sim/iteration.h"
#include "test_helpers.h"

namespace mc::sim::test {

// The shipped catalog (assets/), loaded once (test_helpers.h).
using mc::test::catalog;

// `nodes` nodes of 4 GPUs, the rest of the fabric at its defaults.
inline Topology nodes_of_4(int nodes = 8) {
  TopologySpec ts;
  ts.nodes = nodes;
  ts.gpus_per_node = 4;
  return Topology(ts);
}

// A small Megatron layout on nodes_of_4(8): tp 2 inside nodes, pp 2, dp 8 across nodes, 4 micro-batches
// of 4 layers (backward twice the forward), 100 MB tp buffers, 400 MB of gradients per stage, 10 MB sends.
inline IterationSpec tp2_pp2_dp8(double layer_forward_s) {
  IterationSpec it;
  it.tp = 2;
  it.pp = 2;
  it.dp = 8;
  it.micro_batches = 4;
  it.layers = 4;
  it.layer_forward_s = layer_forward_s;
  it.layer_backward_s = 2 * layer_forward_s;
  it.tp_buffer_bytes = 1e8;
  it.dp_bytes_per_stage = 4e8;
  it.pp_bytes = 1e7;
  return it;
}

}  // namespace mc::sim::test
