// topology.h - the links of a GPU cluster as the flow simulator sees them.
//
// A two-level fat-tree (Leiserson 1985; the InfiniBand clusters of the era, e.g. Selene and the Azure
// NDv2/HBv2 fabrics): GPUs sit in nodes; inside a node every GPU has one port into an NVLink/NVSwitch
// fabric (modelled as a full crossbar, so only each GPU's own port in each direction can saturate);
// each node has `nics_per_node` NICs up and down to a leaf switch; leaves connect to `spines` spine
// switches. A leaf's uplink is its nodes' injection bandwidth divided by the oversubscription ratio.
// Cross-leaf flows are spread over the spines by a deterministic ECMP hash of (source, destination).
//
// Every direction of every cable is one Link with a capacity in bytes/s (converted here, once, from the
// catalog's Gb/s and GB/s) and a class, so utilisation can be reported per class and per link.
//
// Collective limits: where a cluster has a measured collective bus bandwidth below its NICs' rate (Jean
// Zay's Omni-Path, where NCCL's all-reduce reached 5-11 GB/s of a node's 50 GB/s: BigScience's
// benchmarks, experiments/bandwidth of its repository, cited by assets/catalog/fabrics.json opa-100),
// every NIC also gets one limit per direction: a capacity that only collective transfers crossing nodes
// count against. The catalog takes point-to-point transfers on that fabric to reach 90% of the line rate
// (the shortfall is the collectives', not the wire's), so sends keep the link's rate and share the cable
// with the collectives, while a node's collectives together get no more than the measured rate, as
// engine/perf's topology_of prices them. A degraded NIC limits both through its cable. A limit is not a
// Link: it carries no bytes of its own and is never reported; only the rate solver (FlowNet) sees it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mc::sim {

enum class LinkClass : uint8_t { nvlink_up, nvlink_down, nic_up, nic_down, leaf_up, leaf_down, spine };
constexpr int kLinkClasses = 7;
const char* to_string(LinkClass c);

struct TopologySpec {
  int nodes = 1;
  int gpus_per_node = 8;
  double nvlink_GBps_per_gpu = 300;  // bidirectional, as NVIDIA quotes it; half in each direction
  double node_network_Gbps = 400;    // all NICs of a node together, one direction
  int nics_per_node = 1;
  int nodes_per_leaf = 16;  // assumed: not public for the 2020 machine
  int spines = 8;
  double oversubscription = 1;  // leaf down / leaf up bandwidth
  // All NICs of a node together, one direction, in collectives (GB/s): a measured bus bandwidth below
  // the line rate (perf::Topology::node_inter_Bps); 0 or not below node_network_Gbps: no limit.
  double node_collective_GBps = 0;
  // The most one communicator moves out of or into a node in collectives (GB/s): a measured bus bandwidth
  // whose rings crossed each node through fewer NICs than it has (perf::Topology::group_inter_Bps); 0: none.
  double group_collective_GBps = 0;
  // {node, fraction}: that node's NICs run at fraction of their bandwidth (a flapping or degraded cable)
  std::vector<std::pair<int, double>> degraded_nodes;
};

struct Link {
  LinkClass cls;
  int index;            // node, gpu, leaf or spine number within its class
  double capacity_Bps;  // bytes per second
};

class Topology {
 public:
  explicit Topology(const TopologySpec& s);
  const TopologySpec& spec() const { return spec_; }
  int gpus() const { return spec_.nodes * spec_.gpus_per_node; }
  int node_of(int gpu) const { return gpu / spec_.gpus_per_node; }
  int leaf_of_node(int node) const { return node / spec_.nodes_per_leaf; }
  int leaves() const { return leaves_; }
  const std::vector<Link>& links() const { return links_; }
  const Link& link(int id) const { return links_[id]; }

  // A passive link can never be a flow's bottleneck, so the rate solver may skip it (its bytes are still
  // counted): a spine switch is a non-blocking crossbar (the fat-tree's taper is in the leaf uplink
  // cables), and without oversubscription a leaf's uplink is as wide as all the NICs below it.
  bool passive(int link) const {
    const LinkClass c = links_[size_t(link)].cls;
    return c == LinkClass::spine ||
           ((c == LinkClass::leaf_up || c == LinkClass::leaf_down) && spec_.oversubscription <= 1.0);
  }

  // Collective limits (see the top of this file): how many, their capacity, and the ones a collective
  // transfer leaving / entering GPU `gpu`'s node through its NIC counts against (-1: none).
  int limits() const { return limits_; }
  double limit_capacity_Bps(int /*limit: all alike*/) const { return limit_Bps_; }
  // One communicator's cap across a node boundary, bytes/s (0: none); a collective's flow groups divide it
  // among their flows that leave (or enter) one node for one communicator (collectives.cpp LinkAcc).
  double group_cap_Bps() const { return spec_.group_collective_GBps * 1e9; }
  int collective_limit_up(int gpu) const { return limits_ > 0 ? (nic_up(gpu) - nic_base_) : -1; }
  int collective_limit_down(int gpu) const { return limits_ > 0 ? (nic_down(gpu) - nic_base_) : -1; }

  // Link ids a transfer from GPU a to GPU b crosses, appended to `out` (nothing when a == b).
  void path(int a, int b, std::vector<int>& out) const;

  int nvlink_up(int gpu) const { return gpu * 2; }
  int nvlink_down(int gpu) const { return gpu * 2 + 1; }
  int nic_up(int gpu) const;
  int nic_down(int gpu) const;
  int leaf_up(int leaf) const { return leaf_base_ + leaf * 2; }
  int leaf_down(int leaf) const { return leaf_base_ + leaf * 2 + 1; }
  int spine(int s) const { return spine_base_ + s; }

 private:
  TopologySpec spec_;
  int leaves_ = 1, nic_base_ = 0, leaf_base_ = 0, spine_base_ = 0;
  int limits_ = 0;        // 2 per NIC when the spec has a collective rate below the line rate, else 0
  double limit_Bps_ = 0;  // each NIC's share of node_collective_GBps, bytes/s
  std::vector<Link> links_;
};

// What a person calls link `link`: "GPU 12 NVLink up", "node 12 NIC up" ("node 12 NIC 3 up" with several NICs
// per node), "leaf 2 down", "spine 5". The simulation's busiest links and the collective's picture use it.
std::string link_name(const Topology& topo, int link);

}  // namespace mc::sim
