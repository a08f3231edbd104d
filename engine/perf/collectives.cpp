// collectives.cpp - alpha-beta timing of ring, tree and hierarchical collectives (see collectives.h).
#include "perf/collectives.h"

#include <algorithm>
#include <cmath>

namespace mc::perf {

Topology topology_of(const ClusterSpec& c) {
  Topology t;
  t.gpus_per_node = std::max(1, c.gpus_per_node);
  // NVIDIA quotes NVLink per GPU as both directions together: one direction is half.
  t.intra_Bps = c.intra_node_GBps_per_gpu * 1e9 / 2 * c.intra_bus_efficiency;
  t.node_inter_Bps = c.node_network_Gbps * 1e9 / 8 * c.inter_bus_efficiency;  // Gb/s -> bytes/s, once
  t.node_p2p_Bps = t.node_inter_Bps;
  // A collective bus bandwidth measured on that machine replaces the line-rate estimate for collectives
  // (Jean Zay's Omni-Path: NCCL's rings reached a tenth of the line rate); transfers keep the link's.
  // Where the measurement's NCCL log shows its rings crossing each node through fewer NICs than the node
  // has, on a network no other job loads (BigScience's A100 benchmark of January 2022: 2 channels entering
  // and leaving each node through one of its four Omni-Path ports, on a dedicated NCCL subnet), the figure
  // is one communicator's (cluster inter_busbw_nics): it caps every collective, while the node's ports
  // together carry that rate per port used, shared by the collectives that run at once (each
  // communicator's rings use the NICs next to its own GPUs).
  if (c.inter_busbw_GBps > 0) {
    t.node_inter_Bps = c.inter_busbw_GBps * 1e9;
    if (c.inter_busbw_nics > 0 && c.inter_link_Gbps > 0) {
      const double ports = std::max(1.0, std::round(c.node_network_Gbps / c.inter_link_Gbps));
      t.node_inter_Bps *= std::max(1.0, ports / c.inter_busbw_nics);
      t.group_inter_Bps = c.inter_busbw_GBps * 1e9;
    }
  }
  t.intra_latency_s = c.intra_latency_s;
  t.inter_latency_s = c.inter_latency_s;
  t.oversubscription = std::max(1.0, c.oversubscription);
  t.leaf_nodes = std::max(1, c.leaf_nodes);
  return t;
}

namespace {

// `phases` = 1 for reduce-scatter or all-gather, 2 for all-reduce (= reduce-scatter + all-gather).
// `trees` = false prices the ring alone: NCCL implements all-gather and reduce-scatter as rings only
// (its tree algorithms, NCCL >= 2.4, serve all-reduce; PAT for all-gather/reduce-scatter came in 2.23).
Collective time_collective(const Topology& t, double bytes, int p, int per_node, int groups_per_node, int phases,
                           bool trees, long long span_nodes) {
  Collective out;
  if (p <= 1 || bytes <= 0) return out;
  per_node = std::clamp(per_node, 1, p);
  const int nodes = (p + per_node - 1) / per_node;
  const double frac = double(p - 1) / p;  // ring volume factor (comm_volume.h)
  if (nodes == 1) {
    const double ring = phases * (frac * bytes / t.intra_Bps + (p - 1) * t.intra_latency_s);
    const double tree = phases * (frac * bytes / t.intra_Bps + std::ceil(std::log2(p)) * t.intra_latency_s);
    out.time_s = trees ? std::min(ring, tree) : ring;
    out.algorithm = trees && tree < ring ? "tree" : "ring";
    return out;
  }
  // The group's share of the node's NICs, reduced by the fat-tree's oversubscription once the group
  // spans more nodes than hang off one leaf switch.
  double nic = t.node_inter_Bps / std::max(1, groups_per_node);
  if (t.group_inter_Bps > 0) nic = std::min(nic, t.group_inter_Bps);
  // A tree's edges join ranks far apart in rank order (a node's parent and children in two binary trees),
  // so in a group spread over more nodes than one leaf holds most of them leave their leaf and cross the
  // oversubscribed layer; a ring, in rank order, crosses each leaf boundary only on its way in and out.
  double tree_nic = nic;
  if (nodes > t.leaf_nodes || span_nodes > t.leaf_nodes) tree_nic /= t.oversubscription;
  if (nodes > t.leaf_nodes) nic /= t.oversubscription;
  // Flat ring: every byte of the ring passes each node boundary once; NVLink carries the same per GPU.
  const double ring_bw = std::max(frac * bytes / nic, frac * bytes / t.intra_Bps);
  const double ring = phases * (ring_bw + (nodes - 1) * t.inter_latency_s + (p - nodes) * t.intra_latency_s);
  // Double binary tree across nodes (NCCL >= 2.4): about ring bandwidth, log-depth latency.
  const double tree_bw = std::max(frac * bytes / tree_nic, frac * bytes / t.intra_Bps);
  const double tree = phases * (tree_bw + std::ceil(std::log2(nodes)) * t.inter_latency_s +
                                std::ceil(std::log2(per_node)) * t.intra_latency_s);
  // Hierarchical: intra reduce-scatter, inter collective on bytes/per_node by per_node ranks at once
  // (each using 1/per_node of the group's NICs), intra all-gather.
  const double in_frac = double(per_node - 1) / per_node, out_frac = double(nodes - 1) / nodes;
  const double hier = phases * (in_frac * bytes / t.intra_Bps + (per_node - 1) * t.intra_latency_s +
                                out_frac * bytes / nic + (nodes - 1) * t.inter_latency_s);
  out.time_s = ring;
  out.algorithm = "ring";
  if (!trees) return out;
  if (tree < out.time_s) out = {tree, "tree"};
  if (per_node > 1 && hier < out.time_s) out = {hier, "hierarchical"};
  return out;
}

}  // namespace

Collective all_reduce(const Topology& t, double bytes, int p, int per_node, int groups, long long span) {
  return time_collective(t, bytes, p, per_node, groups, 2, true, span);
}
Collective reduce_scatter(const Topology& t, double bytes, int p, int per_node, int groups, long long span) {
  return time_collective(t, bytes, p, per_node, groups, 1, t.gather_trees, span);
}
Collective all_gather(const Topology& t, double bytes, int p, int per_node, int groups, long long span) {
  return time_collective(t, bytes, p, per_node, groups, 1, t.gather_trees, span);
}

Collective point_to_point(const Topology& t, double bytes, bool cross_node, bool as_collective) {
  if (bytes <= 0) return {};
  if (!cross_node) return {bytes / t.intra_Bps + t.intra_latency_s, "nvlink"};
  // One GPU's share of the node's NICs (with scatter/gather each of the t ranks sends its part at once).
  double per_gpu = (as_collective ? t.node_inter_Bps : t.node_p2p_Bps) / t.gpus_per_node;
  if (as_collective && t.group_inter_Bps > 0) per_gpu = std::min(per_gpu, t.group_inter_Bps);
  return {bytes / per_gpu + t.inter_latency_s, "infiniband"};
}

}  // namespace mc::perf
