// collectives.h - time of NCCL-style collectives on a two-level topology: GPUs joined by NVLink/NVSwitch
// inside a node, nodes joined by NICs into an InfiniBand fat-tree (possibly oversubscribed).
//
// Each collective is alpha-beta: steps x latency + bytes on the busiest link / its bandwidth, with the
// volumes of comm_volume.h (nccl-tests PERFORMANCE.md). Three algorithms are priced and the fastest
// taken, as NCCL's tuner does: a flat ring, a double binary tree (log-depth latency, ring-like
// bandwidth), and a hierarchical one (reduce-scatter in the node, all-reduce across nodes on 1/k of the
// data, all-gather in the node). All-gather and reduce-scatter are rings, as NCCL ran them until 2.23.
#pragma once

#include "perf/comm_volume.h"
#include "perf/perf.h"

namespace mc::perf {

struct Topology {
  int gpus_per_node = 8;
  double intra_Bps = 120e9;      // achievable one-way NVLink bytes/s per GPU
  double node_inter_Bps = 45e9;  // achievable one-way NIC bytes/s of a whole node in collectives
  double node_p2p_Bps = 45e9;    // ... in point-to-point transfers (line rate x the fabric's efficiency)
  double group_inter_Bps = 0;    // most one communicator moves across a node's boundary (0: no cap)
  double intra_latency_s = 5e-6, inter_latency_s = 8e-6;
  double oversubscription = 1;
  int leaf_nodes = 16;
  bool gather_trees = false;  // all-gather/reduce-scatter beyond rings (NCCL >= 2.23's PAT); ring-only before
};
Topology topology_of(const ClusterSpec& c);

struct Collective {
  double time_s = 0;
  const char* algorithm = "none";
};

// A collective over p ranks of which `per_node` share each node; `groups_per_node` such collectives run
// at once in every node and share its NICs (e.g. tp = 8 fills a node: its 8 data-parallel groups each
// get one eighth of the node's network).
// `span_nodes`: how many consecutive nodes the group's members are spread over, when more than the nodes
// they occupy (a data-parallel group whose ranks are a whole pipeline apart, Llama 3's order); 0: packed.
Collective all_reduce(const Topology& t, double bytes, int p, int per_node, int groups_per_node,
                      long long span_nodes = 0);
Collective reduce_scatter(const Topology& t, double bytes, int p, int per_node, int groups_per_node,
                          long long span_nodes = 0);
Collective all_gather(const Topology& t, double bytes, int p, int per_node, int groups_per_node,
                      long long span_nodes = 0);
// One message between neighbouring pipeline stages, over NVLink or over this GPU's share of the NICs.
// `as_collective`: the transfer is a two-rank broadcast and runs at the collective rate across nodes.
Collective point_to_point(const Topology& t, double bytes, bool cross_node, bool as_collective = false);

}  // namespace mc::perf
