// collectives.h - a collective call broken into the point-to-point transfers its algorithm makes, as
// flow groups for FlowNet plus the latency steps it pays.
//
// For a buffer of N bytes over p ranks (NCCL's algorithms; bytes per hop as in nccl-tests
// PERFORMANCE.md, "bus bandwidth"):
//   ring all-reduce:  hop i -> i+1 carries 2 (p-1)/p N in 2 (p-1) steps (reduce-scatter + all-gather);
//   ring reduce-scatter / all-gather: (p-1)/p N in p-1 steps;
//   double binary tree all-reduce (Sanders, Speck & Traeff 2009, used by NCCL >= 2.4): two trees each
//     reduce then broadcast N/2, so every tree edge carries N/2 each way, in 2 ceil(log2 p) steps;
//   hierarchical all-reduce (2D: Jia et al. 2018; NCCL's intra/inter split): reduce-scatter inside each
//     node over its g local ranks, ring all-reduce of N/g across nodes per local index, all-gather inside.
// Hops between nodes also count against the NICs' collective limits where the cluster has a measured
// collective rate below the line rate (topology.h), as engine/perf prices collectives at that rate.
// A ring is pipelined, so its hops advance together at the speed of the slowest: one flow group per
// phase. Several rings issued together (the tp rings of all stages, the dp rings of all tp ranks) are
// merged into one group when symmetric, which keeps the event count independent of the GPU count.
#pragma once

#include "sim/flow_net.h"
#include "sim/topology.h"

#include <string>
#include <vector>

namespace mc::sim {

enum class CollectiveKind { all_reduce, reduce_scatter, all_gather, send };
enum class Algorithm { ring, tree, hierarchical };
const char* to_string(Algorithm a);
Algorithm algorithm_from_string(const std::string& s);  // "ring", "tree", "hierarchical"; else ring

struct CollectivePhase {
  FlowGroupSpec flows;
  double latency_s = 0;  // paid before the bytes move (steps * per-step latency)
};

struct LatencySpec {
  double intra_node_s = 5e-6;   // one step whose hops all stay inside nodes
  double inter_node_s = 10e-6;  // one step with a hop across the fabric
};

// A group's ranks split by the node they sit on, nodes in order of first appearance, ranks in group order
// (the chains of a tree and the local rings of a hierarchical all-reduce).
std::vector<std::vector<int>> ranks_by_node(const Topology& topo, const std::vector<int>& ranks);

// `rings`: each inner vector is one collective's ranks (GPU ids) in ring order; all run concurrently.
// Returns the phases to run one after another (1 for ring and tree, 3 for hierarchical).
std::vector<CollectivePhase> build_collective(const Topology& topo, CollectiveKind kind, Algorithm alg,
                                              const std::vector<std::vector<int>>& rings, double buffer_bytes,
                                              const LatencySpec& lat);

// Point-to-point sends (pipeline boundaries): one flow per (src, dst) pair, all in one group. They run at
// the line rate; `as_collective`: each is a two-rank NCCL broadcast (DeepSpeed < 0.5.4,
// software.json pipeline_p2p_broadcast) and counts against the collective limits (topology.h) as well.
CollectivePhase build_sends(const Topology& topo, const std::vector<std::pair<int, int>>& pairs, double bytes,
                            const LatencySpec& lat, bool as_collective = false);

}  // namespace mc::sim
