// Tests of the simulator's network pieces against hand-derived truths: max-min fairness (Bertsekas &
// Gallager, Sec. 6.5.2 example), collective volumes (nccl-tests PERFORMANCE.md via perf/comm_volume.h),
// fat-tree paths.
#include "perf/comm_volume.h"
#include "sim/collectives.h"
#include "sim/flow_net.h"
#include "sim/topology.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mc::sim;

namespace {

TopologySpec two_nodes() {
  TopologySpec s;
  s.nodes = 2;
  s.gpus_per_node = 4;
  s.nvlink_GBps_per_gpu = 200;  // 100 GB/s each way
  s.node_network_Gbps = 800;    // 100 GB/s each way
  return s;
}

// Runs a FlowNet to completion; returns each tag's completion time.
std::map<long long, double> drain(FlowNet& net) {
  std::map<long long, double> done;
  while (std::isfinite(net.next_completion_time())) {
    const double t = net.next_completion_time();
    done[net.complete_next()] = t;
  }
  return done;
}

}  // namespace

TEST(SimTopology, PathsCrossTheRightLinks) {
  TopologySpec s = two_nodes();
  s.nodes = 40;
  s.nodes_per_leaf = 16;
  Topology t(s);
  std::vector<int> p;
  t.path(0, 1, p);  // same node: NVLink out and in
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(t.link(p[0]).cls, LinkClass::nvlink_up);
  p.clear();
  t.path(0, 4, p);  // next node, same leaf: NIC up, NIC down
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(t.link(p[0]).cls, LinkClass::nic_up);
  EXPECT_EQ(t.link(p[1]).cls, LinkClass::nic_down);
  p.clear();
  t.path(0, 4 * 20, p);  // node 20 is under leaf 1: NIC, leaf up, spine, leaf down, NIC
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(t.link(p[1]).cls, LinkClass::leaf_up);
  EXPECT_EQ(t.link(p[2]).cls, LinkClass::spine);
  EXPECT_EQ(t.link(p[3]).cls, LinkClass::leaf_down);
  EXPECT_EQ(t.leaves(), 3);
  // Gb/s and bidirectional GB/s converted once: 800 Gb/s = 100 GB/s; 200 GB/s NVLink = 100 GB/s each way.
  EXPECT_DOUBLE_EQ(t.link(t.nic_up(0)).capacity_Bps, 100e9);
  EXPECT_DOUBLE_EQ(t.link(t.nvlink_up(0)).capacity_Bps, 100e9);
}

TEST(SimFlowNet, MaxMinFairSharingTextbookExample) {
  // Three flows: A crosses links 1 and 2, B only link 1, C only link 2; link 1 = 100 GB/s, link 2 = 50.
  // Max-min: link 2 saturates first at 25 each (A, C); B gets the rest of link 1: 75.
  TopologySpec s = two_nodes();
  Topology t(s);
  const int l1 = t.nic_up(0), l2 = t.nic_down(4);
  s.degraded_nodes = {{1, 0.5}};  // node 1's NICs at 50 GB/s
  Topology t2(s);
  FlowNet net(t2);
  net.start(0, {{{l1, 1}, {l2, 1}}, {}, 1, 1e9}, 1);
  net.start(0, {{{l1, 1}}, {}, 1, 1e9}, 2);
  net.start(0, {{{l2, 1}}, {}, 1, 1e9}, 3);
  (void)t;
  auto done = drain(net);
  // A and C move 1 GB at 25 GB/s: 40 ms. B at 75 GB/s until A leaves... B finishes first at 1/75 s.
  EXPECT_NEAR(done[2], 1.0 / 75, 1e-12);
  EXPECT_NEAR(done[1], 0.04, 1e-12);
  EXPECT_NEAR(done[3], 0.04, 1e-12);
  // Bytes counted per link: link 1 carried A and B.
  EXPECT_DOUBLE_EQ(net.link_bytes()[size_t(l1)], 2e9);
}

TEST(SimFlowNet, RatesRiseWhenAFlowLeaves) {
  Topology t(two_nodes());
  FlowNet net(t);
  const int l = t.nic_up(0);
  net.start(0, {{{l, 1}}, {}, 1, 1e9}, 1);   // 1 GB
  net.start(0, {{{l, 1}}, {}, 1, 3e9}, 2);   // 3 GB
  auto done = drain(net);
  // Both at 50 GB/s until the first ends at 20 ms (the second has 2 GB left), then 100 GB/s: +20 ms.
  EXPECT_NEAR(done[1], 0.02, 1e-12);
  EXPECT_NEAR(done[2], 0.04, 1e-12);
}

TEST(SimCollectives, RingVolumesMatchNcclBusBandwidth) {
  Topology t(two_nodes());
  const double N = 1e9;
  std::vector<std::vector<int>> ring = {{0, 1, 2, 3}};
  auto ar = build_collective(t, CollectiveKind::all_reduce, Algorithm::ring, ring, N, {});
  ASSERT_EQ(ar.size(), 1u);
  EXPECT_DOUBLE_EQ(ar[0].flows.bytes_per_flow, mc::perf::ring_all_reduce(N, 4).bytes_sent_per_rank);
  auto rs = build_collective(t, CollectiveKind::reduce_scatter, Algorithm::ring, ring, N, {});
  EXPECT_DOUBLE_EQ(rs[0].flows.bytes_per_flow, mc::perf::ring_reduce_scatter(N, 4).bytes_sent_per_rank);
  // Latency: 2 (p-1) steps inside the node.
  EXPECT_NEAR(ar[0].latency_s, 6 * LatencySpec{}.intra_node_s, 1e-15);
  // Time on an idle node = bytes / one-way NVLink: the alpha-beta ring formula.
  FlowNet net(t);
  net.start(0, ar[0].flows, 7);
  auto done = drain(net);
  EXPECT_NEAR(done[7], 1.5e9 / 100e9, 1e-12);
}

TEST(SimCollectives, HierarchicalMovesLessAcrossNodes) {
  Topology t(two_nodes());
  const double N = 8e8;
  std::vector<std::vector<int>> ring = {{0, 1, 2, 3, 4, 5, 6, 7}};
  auto flat = build_collective(t, CollectiveKind::all_reduce, Algorithm::ring, ring, N, {});
  auto hier = build_collective(t, CollectiveKind::all_reduce, Algorithm::hierarchical, ring, N, {});
  ASSERT_EQ(hier.size(), 3u);
  // Inter-node phase: 4 rings (one per local rank) of 2 nodes, each all-reducing N/4: 2 (1/2) N/4 per hop.
  EXPECT_DOUBLE_EQ(hier[1].flows.bytes_per_flow, N / 4);
  EXPECT_DOUBLE_EQ(hier[1].flows.flows, 8);
  auto nic_bytes = [&](const std::vector<CollectivePhase>& ph) {
    FlowNet net(t);
    for (const auto& p : ph) net.start(0, p.flows, 0);
    drain(net);
    return net.link_bytes()[size_t(t.nic_up(0))];
  };
  EXPECT_LT(nic_bytes(hier), nic_bytes(flat));
  // Tree all-reduce over p ranks: every edge carries N/2 each way in each of the two trees.
  auto tree = build_collective(t, CollectiveKind::all_reduce, Algorithm::tree, ring, N, {});
  EXPECT_DOUBLE_EQ(tree[0].flows.bytes_per_flow, N / 2);
  // Two trees: 2 chains of 3 edges inside the 2 nodes and 1 edge between them, each used both ways.
  EXPECT_DOUBLE_EQ(tree[0].flows.flows, 2 * 2 * (2 * 3 + 1));
}
