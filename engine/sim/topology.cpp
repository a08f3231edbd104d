// topology.cpp - the links of a cluster (topology.h): the links inside a server, NICs, leaf and
// spine switches (ECMP over the spines), and the path a transfer takes between two GPUs.
#include "sim/topology.h"

#include <algorithm>
#include <stdexcept>

namespace mc::sim {

const char* to_string(LinkClass c) {
  switch (c) {
    case LinkClass::nvlink_up:
      return "nvlink_up";
    case LinkClass::nvlink_down:
      return "nvlink_down";
    case LinkClass::nic_up:
      return "nic_up";
    case LinkClass::nic_down:
      return "nic_down";
    case LinkClass::leaf_up:
      return "leaf_up";
    case LinkClass::leaf_down:
      return "leaf_down";
    case LinkClass::spine:
      return "spine";
  }
  return "?";
}

Topology::Topology(const TopologySpec& s) : spec_(s) {
  if (s.nodes < 1 || s.gpus_per_node < 1 || s.nics_per_node < 1 || s.nodes_per_leaf < 1 || s.spines < 1)
    throw std::invalid_argument("topology: nodes, gpus_per_node, nics_per_node, nodes_per_leaf, spines must be >= 1");
  if (!(s.oversubscription >= 1)) throw std::invalid_argument("topology: oversubscription must be >= 1");
  if (!(s.node_collective_GBps >= 0)) throw std::invalid_argument("topology: node_collective_GBps must be >= 0");
  if (!(s.group_collective_GBps >= 0)) throw std::invalid_argument("topology: group_collective_GBps must be >= 0");
  leaves_ = (s.nodes + s.nodes_per_leaf - 1) / s.nodes_per_leaf;
  const int g = gpus();
  // Unit conversions, in one place: GB/s (bidirectional NVLink quote) -> bytes/s per direction;
  // Gb/s -> bytes/s.
  const double nvlink_Bps = s.nvlink_GBps_per_gpu * 1e9 / 2;
  const double node_Bps = s.node_network_Gbps * 1e9 / 8;
  const double nic_Bps = node_Bps / s.nics_per_node;
  links_.reserve(size_t(g) * 2 + size_t(s.nodes) * s.nics_per_node * 2 + size_t(leaves_) * 2 + s.spines);
  for (int i = 0; i < g; ++i) {
    links_.push_back({LinkClass::nvlink_up, i, nvlink_Bps});
    links_.push_back({LinkClass::nvlink_down, i, nvlink_Bps});
  }
  nic_base_ = int(links_.size());
  std::vector<double> frac(size_t(s.nodes), 1.0);
  for (auto [node, f] : s.degraded_nodes)
    if (node >= 0 && node < s.nodes) frac[size_t(node)] = std::clamp(f, 1e-6, 1.0);
  for (int n = 0; n < s.nodes; ++n)
    for (int k = 0; k < s.nics_per_node; ++k) {
      const int idx = n * s.nics_per_node + k;
      links_.push_back({LinkClass::nic_up, idx, nic_Bps * frac[size_t(n)]});
      links_.push_back({LinkClass::nic_down, idx, nic_Bps * frac[size_t(n)]});
    }
  // A measured collective rate below the line rate: one limit per NIC and direction, numbered as the
  // NICs' links (nic_up - nic_base_, nic_down - nic_base_), each the NIC's share of the node's rate.
  const double coll_Bps = s.node_collective_GBps * 1e9;
  if (coll_Bps > 0 && coll_Bps < node_Bps) {
    limits_ = s.nodes * s.nics_per_node * 2;
    limit_Bps_ = coll_Bps / s.nics_per_node;
  }
  leaf_base_ = int(links_.size());
  // A leaf's uplink carries at most its nodes' injection bandwidth / oversubscription (fat-tree taper).
  for (int l = 0; l < leaves_; ++l) {
    const int nodes_here = std::min(s.nodes_per_leaf, s.nodes - l * s.nodes_per_leaf);
    const double up = nodes_here * node_Bps / s.oversubscription;
    links_.push_back({LinkClass::leaf_up, l, up});
    links_.push_back({LinkClass::leaf_down, l, up});
  }
  spine_base_ = int(links_.size());
  // Each spine switch is non-blocking inside; its capacity is the sum of the leaf cables into it.
  const double total_up = double(s.nodes) * node_Bps / s.oversubscription;
  for (int k = 0; k < s.spines; ++k) links_.push_back({LinkClass::spine, k, total_up / s.spines});
}

int Topology::nic_up(int gpu) const {
  const int local = gpu % spec_.gpus_per_node;
  const int k = local * spec_.nics_per_node / spec_.gpus_per_node;
  return nic_base_ + (node_of(gpu) * spec_.nics_per_node + k) * 2;
}
int Topology::nic_down(int gpu) const { return nic_up(gpu) + 1; }

void Topology::path(int a, int b, std::vector<int>& out) const {
  if (a == b) return;
  const int na = node_of(a), nb = node_of(b);
  if (na == nb) {
    out.push_back(nvlink_up(a));
    out.push_back(nvlink_down(b));
    return;
  }
  out.push_back(nic_up(a));
  const int la = leaf_of_node(na), lb = leaf_of_node(nb);
  if (la != lb) {
    out.push_back(leaf_up(la));
    // ECMP: a fixed hash of the endpoints picks the spine (deterministic, spreads flows evenly).
    const uint32_t h = uint32_t(na) * 2654435761u ^ uint32_t(nb) * 40503u;
    out.push_back(spine(int(h % uint32_t(spec_.spines))));
    out.push_back(leaf_down(lb));
  }
  out.push_back(nic_down(b));
}

// What a person calls a link (topology.h): "GPU 12 NVLink up", "node 12 NIC up" ("node 12 NIC 3 up" with several NICs
// per node), "leaf 2 down", "spine 5".
std::string link_name(const Topology& topo, int link) {
  const Link& L = topo.link(link);
  const std::string i = std::to_string(L.index);
  const int nics = topo.spec().nics_per_node;
  auto nic = [&](const char* dir) {
    return "node " + std::to_string(L.index / nics) + " NIC " + (nics > 1 ? std::to_string(L.index % nics) + " " : "") +
           dir;
  };
  switch (L.cls) {
    case LinkClass::nvlink_up:
      return "GPU " + i + " NVLink up";
    case LinkClass::nvlink_down:
      return "GPU " + i + " NVLink down";
    case LinkClass::nic_up:
      return nic("up");
    case LinkClass::nic_down:
      return nic("down");
    case LinkClass::leaf_up:
      return "leaf " + i + " up";
    case LinkClass::leaf_down:
      return "leaf " + i + " down";
    case LinkClass::spine:
      return "spine " + i;
  }
  return "link " + std::to_string(link);
}

}  // namespace mc::sim
