// Tests of the simulator's network pieces against hand-derived truths: max-min fairness (Bertsekas &
// Gallager, Sec. 6.5.2 example), collective volumes (nccl-tests PERFORMANCE.md via perf/comm_volume.h),
// fat-tree paths, and the hottest links' utilisation over time (its integral is the link's bytes).
#include "catalog/catalog.h"
#include "perf/comm_volume.h"
#include "sim/collectives.h"
#include "sim/flow_net.h"
#include "sim/iteration.h"
#include "sim/sim.h"
#include "sim/topology.h"

#include "sim_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

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
  net.start(0, {{{l1, 1}, {l2, 1}}, {}, 1, 1e9, {}}, 1);
  net.start(0, {{{l1, 1}}, {}, 1, 1e9, {}}, 2);
  net.start(0, {{{l2, 1}}, {}, 1, 1e9, {}}, 3);
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
  net.start(0, {{{l, 1}}, {}, 1, 1e9, {}}, 1);  // 1 GB
  net.start(0, {{{l, 1}}, {}, 1, 3e9, {}}, 2);  // 3 GB
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

// A measured collective bus bandwidth below the line rate (Jean Zay's Omni-Path: assets/catalog/fabrics.json
// opa-100) limits collectives between nodes, not point-to-point transfers, and not the links' bytes: two
// nodes of 4 GPUs at 100 GB/s per NIC direction, collectives limited to 10 GB/s per node.
TEST(SimCollectives, MeasuredCollectiveRateLimitsCollectivesNotSends) {
  TopologySpec s = two_nodes();
  s.node_collective_GBps = 10;
  Topology t(s);
  ASSERT_EQ(t.limits(), 4);  // one NIC per node, both directions
  const double N = 1e9;
  // Ring all-reduce over one GPU of each node: 2 (p-1)/p N = N per hop, at the collective rate alone.
  const std::vector<std::vector<int>> ring = {{0, 4}};
  auto ar = build_collective(t, CollectiveKind::all_reduce, Algorithm::ring, ring, N, {});
  ASSERT_EQ(ar.size(), 1u);
  EXPECT_EQ(ar[0].flows.limits.size(), 4u);  // leaves and enters both NICs
  {
    FlowNet net(t);
    net.start(0, ar[0].flows, 1);
    EXPECT_NEAR(drain(net)[1], N / 10e9, 1e-12);
    EXPECT_DOUBLE_EQ(net.link_bytes()[size_t(t.nic_up(0))], N);  // the cable's bytes, counted once
  }
  // A pipeline send between the same GPUs keeps the line rate; as a two-rank broadcast (DeepSpeed's
  // p2p before 0.5.4) it is a collective and gets the collective rate.
  auto send = build_sends(t, {{0, 4}}, N, {});
  EXPECT_TRUE(send.flows.limits.empty());
  auto bcast = build_sends(t, {{0, 4}}, N, {}, true);
  for (auto [phase, rate] : {std::pair{&send, 100e9}, std::pair{&bcast, 10e9}}) {
    FlowNet net(t);
    net.start(0, phase->flows, 1);
    EXPECT_NEAR(drain(net)[1], N / rate, 1e-12);
  }
  // Together on one cable: the collective takes its 10 GB/s, the send the remaining 90 GB/s (the wire is
  // not full at the collective's rate), until the send ends; max-min fair sharing with the limit as a link.
  FlowNet net(t);
  net.start(0, ar[0].flows, 1);
  net.start(0, send.flows, 2);
  auto done = drain(net);
  EXPECT_NEAR(done[2], N / 90e9, 1e-12);
  EXPECT_NEAR(done[1], N / 10e9, 1e-12);
  // Inside a node nothing changes: a collective that never crosses the NICs has no limit.
  auto local = build_collective(t, CollectiveKind::all_reduce, Algorithm::ring, {{0, 1, 2, 3}}, N, {});
  EXPECT_TRUE(local[0].flows.limits.empty());
  // A rate at or above the line rate is no limit at all.
  s.node_collective_GBps = 100;
  EXPECT_EQ(Topology(s).limits(), 0);
}

// One communicator's cap (TopologySpec::group_collective_GBps): BigScience's A100 benchmark crossed each
// node through one of its four Omni-Path ports, so its 5.07 GB/s is one communicator's rate while the node
// carries four times that. By hand, on two nodes with a 40 GB/s collective limit and a 10 GB/s cap: one
// ring alone moves at the cap (10), not at the node's 40; four rings from four GPUs each keep 10 (40 in
// all); eight share the node's 40 at 5 each. A communicator whose hierarchical rings leave a node from two
// GPUs at once splits its cap between them. Point-to-point sends keep the line rate.
TEST(SimCollectives, OneCommunicatorIsCappedTheNodeIsShared) {
  TopologySpec s = two_nodes();
  s.gpus_per_node = 8;
  s.node_collective_GBps = 40;
  s.group_collective_GBps = 10;
  Topology t(s);
  const double N = 1e9;
  auto time_of = [&](const std::vector<std::vector<int>>& rings, Algorithm alg = Algorithm::ring) {
    FlowNet net(t);
    double end = 0;
    for (const CollectivePhase& ph : build_collective(t, CollectiveKind::all_reduce, alg, rings, N, {})) {
      net.start(end, ph.flows, 1);
      end = drain(net)[1];
    }
    return end;
  };
  // A two-rank ring: N per hop (2 (p-1)/p N).
  EXPECT_NEAR(time_of({{0, 8}}), N / 10e9, 1e-12);
  EXPECT_NEAR(time_of({{0, 8}, {1, 9}, {2, 10}, {3, 11}}), N / 10e9, 1e-12);
  EXPECT_NEAR(time_of({{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}}), N / 5e9, 1e-12);
  // Hierarchical over 2 GPUs a node: its two rings across nodes carry N/2 each (per hop 2 (2-1)/2 N/2),
  // both leaving node 0 for the same communicator: 5 GB/s each, the cap in all.
  const auto hier = build_collective(t, CollectiveKind::all_reduce, Algorithm::hierarchical, {{0, 1, 8, 9}}, N, {});
  ASSERT_EQ(hier.size(), 3u);
  EXPECT_DOUBLE_EQ(hier[1].flows.max_rate_Bps, 5e9);
  // Each send pair is a communicator of its own (a two-rank broadcast): capped as a collective...
  EXPECT_DOUBLE_EQ(build_sends(t, {{0, 8}, {1, 9}}, N, {}, true).flows.max_rate_Bps, 10e9);
  // ... while a point-to-point send has no cap.
  EXPECT_DOUBLE_EQ(build_sends(t, {{0, 8}}, N, {}).flows.max_rate_Bps, 0);
}

// A per-flow cap in the rate solver: a capped group stops at its cap and leaves the rest of the link to
// the others (max-min fairness with the cap as a private link).
TEST(SimFlowNet, ACappedGroupLeavesTheRestToOthers) {
  Topology t(two_nodes());
  FlowNet net(t);
  const int l = t.nic_up(0);  // 100 GB/s
  FlowGroupSpec capped{{{l, 1}}, {}, 1, 1e9, {}};
  capped.max_rate_Bps = 20e9;
  net.start(0, capped, 1);
  net.start(0, {{{l, 1}}, {}, 1, 4e9, {}}, 2);
  auto done = drain(net);
  EXPECT_NEAR(done[1], 1e9 / 20e9, 1e-12);  // at its cap, not at half the link
  // The other runs at 80 until the capped one ends (50 ms, 4 GB of its 4 GB moved), so it ends then too.
  EXPECT_NEAR(done[2], 4e9 / 80e9, 1e-12);
}

// ---- utilisation over time of the hottest links ----

namespace {

// Area under a piecewise-constant series (value i from t_s[i] to t_s[i + 1], the last until `end`).
double integral(const std::vector<double>& t, const std::vector<double>& u, double end) {
  double a = 0;
  for (size_t i = 0; i < t.size(); ++i) a += u[i] * ((i + 1 < t.size() ? t[i + 1] : end) - t[i]);
  return a;
}

// The Megatron layout of sim_iteration_test on 8 nodes of 4 GPUs: tp 2 inside nodes (rings only in the
// representative replica, their NVLink bytes copied to the others), dp 8 across nodes, pp 2.
IterationSpec tp_dp_pp() { return mc::sim::test::tp2_pp2_dp8(1e-3); }

using mc::sim::test::catalog;

}  // namespace

TEST(SimLinkSeries, BottleneckLinkIsFullWhileItsTransferRunsAndIdleAfter) {
  // pp 2 x dp 2 on two nodes of 2 GPUs (stage 0 on node 0, stage 1 on node 1), 50 GB/s NICs, no latency:
  // after the 1 s forward both replicas send 1 GB to stage 1 through node 0's one NIC: two flows share it,
  // max-min gives each half, so the NIC is exactly full for 2 GB / 50 GB/s = 40 ms, then idle.
  TopologySpec ts;
  ts.nodes = 2;
  ts.gpus_per_node = 2;
  ts.node_network_Gbps = 400;
  const Topology topo(ts);
  IterationSpec it;
  it.pp = 2;
  it.dp = 2;
  it.layers = 2;
  it.layer_forward_s = 1;
  it.layer_backward_s = 2;
  it.pp_bytes = 1e9;
  it.latency = {0, 0};
  const IterationResult r = simulate_iteration(topo, it);
  // Only the 4 NIC directions carried bytes (2 GB each), so 4 series of the 8 asked for, ties by link id.
  ASSERT_EQ(r.hottest_series.size(), 4u);
  for (size_t i = 1; i < r.hottest_series.size(); ++i)
    EXPECT_LT(r.hottest_series[i - 1].link, r.hottest_series[i].link);
  const LinkSeries* up = nullptr;
  for (const LinkSeries& ls : r.hottest_series)
    if (ls.link == topo.nic_up(0)) up = &ls;
  ASSERT_NE(up, nullptr);
  EXPECT_DOUBLE_EQ(up->bytes, 2e9);
  ASSERT_EQ(up->t_s.size(), 3u);
  EXPECT_EQ(up->t_s[0], 0.0);
  EXPECT_EQ(up->utilisation[0], 0.0);  // computing: nothing sent yet
  EXPECT_DOUBLE_EQ(up->t_s[1], 1.0);
  EXPECT_EQ(up->utilisation[1], 1.0);  // exactly full: 2 flows x 25 GB/s on 50 GB/s
  EXPECT_NEAR(up->t_s[2], 1.04, 1e-12);
  EXPECT_EQ(up->utilisation[2], 0.0);  // exactly idle after, to the iteration's end
  EXPECT_GT(r.iteration_s, 1.04);
  EXPECT_NEAR(integral(up->t_s, up->utilisation, r.iteration_s) * up->capacity_Bps, 2e9, 1e-6 * 2e9);
}

TEST(SimLinkSeries, IntegralOfEverySeriesIsTheLinksBytes) {
  // Every link that carried bytes (hottest_links = all of them), with and without a straggler (more replica
  // classes), with the leaf uplinks passive (no oversubscription) and active (2:1): the time integral of
  // each series times its capacity is the link's bytes, the NVLink ports of replicas whose tp bytes were
  // copied from their class's representative included.
  for (const double oversub : {1.0, 2.0})
    for (const bool straggler : {false, true}) {
      TopologySpec ts;
      ts.nodes = 8;
      ts.gpus_per_node = 4;
      ts.nodes_per_leaf = 2;
      ts.spines = 2;
      ts.oversubscription = oversub;
      const Topology topo(ts);
      IterationSpec it = tp_dp_pp();
      if (straggler) it.stragglers = {{gpu_id(it, 5, 1, 1), 0.5}};
      it.hottest_links = int(topo.links().size());
      it.hottest_include_passive = true;
      const IterationResult r = simulate_iteration(topo, it);
      SCOPED_TRACE("oversubscription " + std::to_string(oversub) + (straggler ? ", straggler" : ""));
      size_t carried = 0, copied = 0, passive = 0;
      for (size_t l = 0; l < r.link_bytes.size(); ++l) carried += r.link_bytes[l] > 0;
      ASSERT_EQ(r.hottest_series.size(), carried);
      for (const LinkSeries& ls : r.hottest_series) {
        const Link& L = topo.link(ls.link);
        SCOPED_TRACE("link " + std::to_string(ls.link) + " " + to_string(L.cls) + " " + std::to_string(L.index));
        EXPECT_EQ(ls.bytes, r.link_bytes[size_t(ls.link)]);
        EXPECT_EQ(ls.capacity_Bps, L.capacity_Bps);
        ASSERT_EQ(ls.t_s.size(), ls.utilisation.size());
        ASSERT_FALSE(ls.t_s.empty());
        EXPECT_EQ(ls.t_s.front(), 0.0);
        for (size_t i = 1; i < ls.t_s.size(); ++i) {
          EXPECT_GT(ls.t_s[i], ls.t_s[i - 1]);
          EXPECT_NE(ls.utilisation[i], ls.utilisation[i - 1]) << "equal consecutive values are merged";
        }
        for (double u : ls.utilisation) {
          EXPECT_GE(u, 0.0);
          if (!topo.passive(ls.link)) {
            EXPECT_LE(u, 1 + 1e-9) << "max-min never fills an active link past capacity";
          }
        }
        EXPECT_EQ(ls.utilisation.back(), 0.0);
        EXPECT_LE(ls.t_s.back(), r.iteration_s + 1e-12);
        EXPECT_NEAR(integral(ls.t_s, ls.utilisation, r.iteration_s) * ls.capacity_Bps, ls.bytes, 1e-6 * ls.bytes);
        passive += topo.passive(ls.link);
        // An NVLink port of a replica that is not the first of its class: it ran no tp rings of its own.
        if (L.cls == LinkClass::nvlink_up) {
          const int d = gpu_coord(it, L.index).replica;
          for (int e = 0; e < d; ++e) copied += r.replica_class[size_t(e)] == r.replica_class[size_t(d)] ? 1 : 0;
        }
      }
      EXPECT_GT(copied, 0u);
      if (oversub == 1.0) {
        EXPECT_GT(passive, 0u);
      }
    }
}

TEST(SimLinkSeries, MergedReplicasGiveEveryLinkTheSameSeriesAsSimulatedAlone) {
  // The symmetry shortcut over time, not only in bytes: a replica that only stands in its class (its tp
  // NVLink load follows its representative's) shows the same utilisation at every instant as when every
  // replica is simulated on its own. Compared at the midpoints of both series' breakpoints.
  TopologySpec ts;
  ts.nodes = 8;
  ts.gpus_per_node = 4;
  const Topology topo(ts);
  IterationSpec it = tp_dp_pp();
  it.hottest_links = int(topo.links().size());
  it.hottest_include_passive = true;
  const IterationResult merged = simulate_iteration(topo, it);
  it.merge_symmetric_replicas = false;
  const IterationResult each = simulate_iteration(topo, it);
  ASSERT_EQ(merged.hottest_series.size(), each.hottest_series.size());
  std::map<int, const LinkSeries*> alone;
  for (const LinkSeries& ls : each.hottest_series) alone[ls.link] = &ls;
  auto at = [](const LinkSeries& ls, double t) {
    const size_t i = size_t(std::upper_bound(ls.t_s.begin(), ls.t_s.end(), t) - ls.t_s.begin());
    return i == 0 ? 0.0 : ls.utilisation[i - 1];
  };
  for (const LinkSeries& a : merged.hottest_series) {
    ASSERT_TRUE(alone.count(a.link)) << a.link;
    const LinkSeries& b = *alone[a.link];
    std::vector<double> t = a.t_s;
    t.insert(t.end(), b.t_s.begin(), b.t_s.end());
    t.push_back(merged.iteration_s);
    std::sort(t.begin(), t.end());
    for (size_t i = 0; i + 1 < t.size(); ++i) {
      if (t[i + 1] - t[i] < 1e-12) continue;
      const double m = 0.5 * (t[i] + t[i + 1]);
      ASSERT_NEAR(at(a, m), at(b, m), 1e-9)
          << "link " << a.link << " (" << to_string(topo.link(a.link).cls) << ") at " << m;
    }
  }
}

TEST(SimLinkSeries, HottestSeriesAreTheBusiestActiveLinksInOrder) {
  TopologySpec ts;
  ts.nodes = 8;
  ts.gpus_per_node = 4;
  ts.node_network_Gbps = 100;  // slow NICs: the cross-node traffic is what piles up
  const Topology topo(ts);
  const IterationResult r = simulate_iteration(topo, tp_dp_pp());
  ASSERT_EQ(r.hottest_series.size(), 8u);  // the default
  auto busy = [&](int l) { return r.link_bytes[size_t(l)] / topo.link(l).capacity_Bps; };
  for (size_t i = 1; i < r.hottest_series.size(); ++i)
    EXPECT_GE(busy(r.hottest_series[i - 1].link), busy(r.hottest_series[i].link));
  std::vector<double> all;  // every active link's bytes / capacity, busiest first
  for (size_t l = 0; l < r.link_bytes.size(); ++l)
    if (!topo.passive(int(l))) all.push_back(busy(int(l)));
  std::sort(all.rbegin(), all.rend());
  for (size_t i = 0; i < r.hottest_series.size(); ++i) {
    EXPECT_EQ(busy(r.hottest_series[i].link), all[i]) << i;
    EXPECT_FALSE(topo.passive(r.hottest_series[i].link)) << "a passive link never limits a rate";
  }
  IterationSpec none = tp_dp_pp();
  none.hottest_links = 0;
  const IterationResult n = simulate_iteration(topo, none);
  EXPECT_TRUE(n.hottest_series.empty());
  EXPECT_EQ(n.iteration_s, r.iteration_s) << "reporting changes nothing in the simulation";
}

TEST(SimLinkSeries, JsonNamesSortsAndBucketsKeepingTheBytes) {
  const mc::json cfg = {{"model", {{"preset", "gpt3-2.7b"}}},
                        {"cluster", {{"preset", "azure-openai-2020"}, {"gpus", 64}}},
                        {"parallel", {{"tp", 4}, {"pp", 2}, {"dp", 8}, {"micro_batch", 1}, {"global_batch", 64}}}};
  SimOptions o;
  o.timeline_gpu = -1;
  o.hottest_links = 5;
  const mc::json exact = simulate_json(catalog(), cfg, o);
  o.max_link_series_points = 20;  // force the time-averaged bins
  const mc::json binned = simulate_json(catalog(), cfg, o);
  const double T = exact["iteration_time_s"];
  for (const mc::json* out : {&exact, &binned}) {
    const mc::json& hs = (*out)["sim"]["links"]["hottest_series"];
    ASSERT_EQ(hs.size(), 5u);
    double last = INFINITY;
    for (const mc::json& h : hs) {
      const double bytes = h["bytes"];
      EXPECT_LE(bytes, last) << "bytes descending";
      last = bytes;
      EXPECT_FALSE(h["name"].get<std::string>().empty());
      const auto t = h["t_s"].get<std::vector<double>>(), u = h["utilisation"].get<std::vector<double>>();
      ASSERT_EQ(t.size(), u.size());
      if (out == &binned) {
        EXPECT_LE(t.size(), 20u);
      } else {
        EXPECT_EQ(h["bucket_s"].get<double>(), 0.0);
      }
      EXPECT_NEAR(integral(t, u, T) * h["capacity_Bps"].get<double>(), bytes, 1e-6 * bytes) << h["name"];
      EXPECT_NEAR(h["mean_utilisation"].get<double>() * h["capacity_Bps"].get<double>() * T, bytes, 1e-6 * bytes);
    }
    EXPECT_EQ(hs[0]["link"], exact["sim"]["links"]["hottest_series"][0]["link"]);
  }
  bool any_binned = false;
  for (const mc::json& h : binned["sim"]["links"]["hottest_series"]) any_binned |= h["bucket_s"].get<double>() > 0;
  EXPECT_TRUE(any_binned);
  // Names as a person says them, matching the class: "GPU 3 NVLink up", "node 12 NIC down", "spine 2".
  const std::map<std::string, std::string> word = {
      {"nvlink_up", "NVLink up"}, {"nvlink_down", "NVLink down"}, {"nic_up", "NIC"}, {"nic_down", "NIC"},
      {"leaf_up", "leaf"},        {"leaf_down", "leaf"},          {"spine", "spine"}};
  for (const mc::json& h : exact["sim"]["links"]["hottest_series"])
    EXPECT_NE(h["name"].get<std::string>().find(word.at(h["class"])), std::string::npos) << h["name"];
  for (const mc::json& h : exact["sim"]["links"]["hottest"])
    EXPECT_NE(h["name"].get<std::string>().find(word.at(h["class"])), std::string::npos) << h["name"];
  o.include_link_series = false;
  EXPECT_FALSE(simulate_json(catalog(), cfg, o)["sim"]["links"].contains("hottest_series"));
}
