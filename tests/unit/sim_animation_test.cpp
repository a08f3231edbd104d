// The collective animation (sim/collective_animation.h) against independent truths:
// - its timeline is the simulator's: the unrolled steps end exactly when the iteration simulator's merged
//   phase groups (build_collective run through FlowNet) end, and each move ends at a FlowNet completion;
// - its chunk schedule is a real collective: replaying the moves on sets of contributing ranks leaves every
//   rank with every chunk reduced over all ranks (all-reduce), its own chunk reduced (reduce-scatter), or
//   every rank's chunk (all-gather);
// - its figures follow nccl-tests PERFORMANCE.md: bytes per GPU 2(p-1)/p N, and with no latency the bus
//   bandwidth of a ring equals its bottleneck link's rate;
// - link loads never exceed capacity and integrate to the bytes each link carried.
#include "sim/collective_animation.h"

#include "core/format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

using namespace mc::sim;

namespace {

TopologySpec nodes_of(int gpus_per_node) {
  TopologySpec s;
  s.nodes = 1;
  s.gpus_per_node = gpus_per_node;
  s.nvlink_GBps_per_gpu = 200;  // 100 GB/s each way
  s.node_network_Gbps = 800;    // 100 GB/s each way, one NIC
  return s;
}

// The iteration simulator's way: each phase of build_collective as ONE flow group, its latency first.
double merged_time(const CollectiveAnimationSpec& s) {
  TopologySpec ts = s.topology;
  ts.nodes = std::max(ts.nodes, (s.first_gpu + s.gpus + ts.gpus_per_node - 1) / ts.gpus_per_node);
  Topology topo(ts);
  std::vector<int> ring;
  for (int i = 0; i < s.gpus; ++i) ring.push_back(s.first_gpu + i);
  std::vector<CollectivePhase> phases =
      s.kind == CollectiveKind::send
          ? std::vector<CollectivePhase>{build_sends(topo, {{ring.front(), ring.back()}}, s.message_bytes, s.latency)}
          : build_collective(topo, s.kind, s.algorithm, {ring}, s.message_bytes, s.latency);
  FlowNet net(topo);
  double t = 0;
  for (const CollectivePhase& ph : phases) {
    t += ph.latency_s;
    net.start(t, ph.flows, 0);
    t = net.next_completion_time();
    net.complete_next();
  }
  return t;
}

// Replays the moves on chunk contents: have[rank][chunk] = the ranks whose data it holds.
std::vector<std::vector<std::set<int>>> replay(const CollectiveAnimation& a, bool start_with_own_chunk_only) {
  const int p = int(a.ranks.size());
  std::vector<std::vector<std::set<int>>> have(size_t(p), std::vector<std::set<int>>(size_t(p), std::set<int>{}));
  for (int r = 0; r < p; ++r)
    for (int c = 0; c < p; ++c)
      if (!start_with_own_chunk_only || c == r) have[size_t(r)][size_t(c)] = {r};
  const int first = a.ranks.front();
  for (int step = 0; step < a.steps; ++step) {
    auto next = have;  // a step's sends read the state before the step
    for (const ChunkMove& m : a.moves) {
      if (m.step != step) continue;
      const auto& from = have[size_t(m.src - first)][size_t(m.chunk)];
      auto& to = next[size_t(m.dst - first)][size_t(m.chunk)];
      if (m.reduces) {
        to.insert(from.begin(), from.end());
      } else {
        to = from;
      }
    }
    have = std::move(next);
  }
  return have;
}

}  // namespace

TEST(CollectiveAnimation, RingAllReduceIsTheSimulatorsTimelineUnrolled) {
  CollectiveAnimationSpec s;
  s.topology = nodes_of(4);
  s.gpus = 8;  // two servers: the ring crosses the NICs twice
  s.message_bytes = 64e6;
  const CollectiveAnimation a = animate_collective(s);
  EXPECT_EQ(a.steps, 2 * (8 - 1));
  EXPECT_EQ(a.moves.size(), size_t(8 * a.steps));
  EXPECT_NEAR(a.total_s, merged_time(s), 1e-12 * merged_time(s));
  // Hand-derived: 2 rounds x (1 fabric step at 10 us + 6 NVLink steps at 5 us), then 2 x 7/8 x 64 MB at the
  // 100 GB/s every hop gets.
  EXPECT_NEAR(a.total_s, 2 * (10e-6 + 6 * 5e-6) + 2 * 7.0 / 8 * 64e6 / 100e9, 1e-12);
  EXPECT_DOUBLE_EQ(a.bytes_sent_per_gpu, 2 * 7.0 / 8 * 64e6);
  // Steps follow one another; a step's moves share its times.
  for (const ChunkMove& m : a.moves) {
    EXPECT_LT(m.t_start_s, m.t_end_s);
    EXPECT_EQ(m.t_start_s, a.moves[size_t(m.step * 8)].t_start_s);
    if (m.step > 0) {
      EXPECT_GT(m.t_start_s, a.moves[size_t((m.step - 1) * 8)].t_end_s);
    }
  }
  EXPECT_EQ(event_times(a).size(), size_t(2 * a.steps));
}

TEST(CollectiveAnimation, EveryAlgorithmEndsWhenTheSimulatorsPhasesEnd) {
  for (CollectiveKind kind :
       {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather, CollectiveKind::send}) {
    for (Algorithm alg : {Algorithm::ring, Algorithm::tree, Algorithm::hierarchical}) {
      for (int gpus : {2, 3, 8, 16}) {
        CollectiveAnimationSpec s;
        s.topology = nodes_of(8);
        s.kind = kind;
        s.algorithm = alg;
        s.gpus = gpus;
        s.message_bytes = 1e8;
        const CollectiveAnimation a = animate_collective(s);
        SCOPED_TRACE(a.rule);
        EXPECT_NEAR(a.total_s, merged_time(s), 1e-12 * merged_time(s)) << gpus << " GPUs";
        ASSERT_FALSE(a.phases.empty());
        EXPECT_EQ(a.phases.back().t_end_s, a.total_s);
      }
    }
  }
}

// The caption says which half of an all-reduce runs (issue 41: "Step 23 of 30" never said): every chunk that
// is added into its receiver's copy moves during a step the caption calls reduce-scatter, every one that
// overwrites during an all-gather, for the ring and for the hierarchical algorithm's ring across servers.
TEST(CollectiveAnimation, TheCaptionNamesTheHalfThatRuns) {
  for (Algorithm alg : {Algorithm::ring, Algorithm::hierarchical}) {
    for (int gpus : {2, 3, 8, 16}) {
      CollectiveAnimationSpec s;
      s.topology = nodes_of(4);
      s.algorithm = alg;
      s.gpus = gpus;
      const CollectiveAnimation a = animate_collective(s);
      SCOPED_TRACE(a.rule);
      ASSERT_FALSE(a.moves.empty());
      for (const ChunkMove& m : a.moves) {
        const std::string said = step_activity(a, m.step);
        EXPECT_EQ(said.find("reduce-scatter") != std::string::npos, m.reduces) << "step " << m.step << ": " << said;
        EXPECT_EQ(said.find("all-gather") != std::string::npos, !m.reduces) << "step " << m.step << ": " << said;
      }
    }
  }
  CollectiveAnimationSpec s;
  s.topology = nodes_of(8);
  s.gpus = 8;  // 2 (p - 1) = 14 steps: 7 of each
  const CollectiveAnimation a = animate_collective(s);
  EXPECT_EQ(step_activity(a, 0), "ring all-reduce: reduce-scatter, step 1 of 7");
  EXPECT_EQ(step_activity(a, 7), "ring all-reduce: all-gather, step 1 of 7");
  EXPECT_EQ(step_activity(a, 13), "ring all-reduce: all-gather, step 7 of 7");
  EXPECT_EQ(step_activity(a, 14), "");
}

TEST(CollectiveAnimation, TheChunkScheduleIsARealCollective) {
  for (int p : {2, 3, 5, 8}) {
    CollectiveAnimationSpec s;
    s.topology = nodes_of(4);
    s.gpus = p;
    const CollectiveAnimation ar = animate_collective(s);
    std::set<int> all;
    for (int r = 0; r < p; ++r) all.insert(r);
    for (const auto& rank : replay(ar, false))
      for (const auto& chunk : rank) EXPECT_EQ(chunk, all) << "all-reduce over " << p;

    s.kind = CollectiveKind::reduce_scatter;
    const auto rs = replay(animate_collective(s), false);
    for (int r = 0; r < p; ++r) EXPECT_EQ(rs[size_t(r)][size_t((r + 1) % p)], all) << "reduce-scatter over " << p;

    s.kind = CollectiveKind::all_gather;
    const auto ag = replay(animate_collective(s), true);
    for (int r = 0; r < p; ++r)
      for (int c = 0; c < p; ++c) EXPECT_EQ(ag[size_t(r)][size_t(c)], std::set<int>{c}) << "all-gather over " << p;
  }
}

TEST(CollectiveAnimation, BusBandwidthIsTheBottleneckRateWithoutLatency) {
  CollectiveAnimationSpec s;
  s.topology = nodes_of(8);
  s.latency = {0, 0};
  s.gpus = 8;
  const CollectiveAnimation a = animate_collective(s);
  EXPECT_NEAR(a.busbw_GBps, 100.0, 1e-9);  // NVLink, 100 GB/s each way
  EXPECT_NEAR(a.algbw_GBps * 2 * 7.0 / 8, a.busbw_GBps, 1e-9);
}

TEST(CollectiveAnimation, LinkLoadsStayWithinCapacityAndCarryTheBytes) {
  CollectiveAnimationSpec s;
  s.topology = nodes_of(4);
  s.topology.node_network_Gbps = 200;  // 25 GB/s: the NIC is the bottleneck
  s.gpus = 8;
  s.message_bytes = 3e7;
  const CollectiveAnimation a = animate_collective(s);
  bool saturated = false;
  for (const AnimatedLink& l : a.links) {
    double integral = 0;
    for (size_t i = 0; i < l.load.size(); ++i) {
      EXPECT_LE(l.load[i].load_Bps, l.capacity_Bps * (1 + 1e-12));
      saturated |= l.load[i].load_Bps > l.capacity_Bps * (1 - 1e-9);
      const double t1 = i + 1 < l.load.size() ? l.load[i + 1].t_s : a.total_s;
      integral += l.load[i].load_Bps * (t1 - l.load[i].t_s);
    }
    EXPECT_NEAR(integral, l.bytes, 1e-6 * l.bytes);
  }
  EXPECT_TRUE(saturated);
  // In the middle of the first step every rank's chunk is half way and the NICs run full.
  const ChunkMove& m0 = a.moves.front();
  const CollectiveFrame f = frame_at(a, 0.5 * (m0.t_start_s + m0.t_end_s));
  EXPECT_EQ(f.step, 0);
  ASSERT_EQ(f.in_flight.size(), 8u);
  for (const MoveInFlight& m : f.in_flight) EXPECT_NEAR(m.progress, 0.5, 1e-9);
  double most = 0;
  for (double u : f.link_utilisation) most = std::max(most, u);
  EXPECT_NEAR(most, 1.0, 1e-9);
  EXPECT_EQ(frame_at(a, a.total_s + 1).step, a.steps);
  // The picture's text alternative says the same moment: a row a drawn link (not the spine), named as the
  // simulation names it, its load in %; the sentence names a link that runs full.
  const mc::ChartData d = link_load_chart(a, f);
  size_t drawn = 0;
  for (const AnimatedLink& l : a.links) drawn += l.cls != LinkClass::spine;
  ASSERT_EQ(d.x_labels.size(), drawn);
  ASSERT_EQ(d.series.size(), 1u);
  EXPECT_EQ(*std::max_element(d.series[0].y.begin(), d.series[0].y.end()), 100 * most);
  const std::string said = mc::chart_summary(d);
  EXPECT_EQ(said.rfind("load at " + mc::format_short_time(f.t_s) + " is highest at ", 0), 0u) << said;
  EXPECT_NE(said.find(", 100 %"), std::string::npos) << said;
  EXPECT_NE(said.find(" NIC "), std::string::npos) << said << " (the NIC is the bottleneck)";
}

TEST(CollectiveAnimation, BadInputIsRefusedSayingWhatToPick) {
  CollectiveAnimationSpec s;
  s.gpus = 1;
  try {
    animate_collective(s);
    FAIL() << "one GPU accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("pick 2 to"), std::string::npos) << e.what();
  }
  s.gpus = 4;
  s.message_bytes = std::nan("");
  EXPECT_THROW(animate_collective(s), std::invalid_argument);
  s.message_bytes = 1e6;
  s.topology.nvlink_GBps_per_gpu = 0;
  EXPECT_THROW(animate_collective(s), std::invalid_argument);
  s.topology = nodes_of(8);
  s.algorithm = Algorithm::hierarchical;
  s.gpus = 12;  // 8 + 4: ragged servers
  EXPECT_THROW(animate_collective(s), std::invalid_argument);
}
