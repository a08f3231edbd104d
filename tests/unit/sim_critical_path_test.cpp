// The critical path of the simulated iteration follows waits across GPUs: pipeline waits to the sending
// stage, and waits on data-parallel collectives back to the replica that joined the collective last
// (a straggler in another replica). Checked against the construction: the path must be contiguous (it
// covers the iteration with no gap: it is a chain of dependencies from t = 0 to the end) and must pass
// through the straggler's compute, which is what slows everyone.
#include "sim/iteration.h"

#include "sim_test_util.h"

#include <gtest/gtest.h>

#include <set>

using namespace mc::sim;

namespace {

Topology topo_8x4() { return mc::sim::test::nodes_of_4(8); }
IterationSpec spec_tp2_pp2_dp8() { return mc::sim::test::tp2_pp2_dp8(1.0); }

// The path is a chain: consecutive steps meet, it starts at 0 and ends with the iteration.
void expect_contiguous(const IterationResult& r) {
  ASSERT_FALSE(r.critical_path.empty());
  EXPECT_NEAR(r.critical_path.front().start_s, 0.0, 1e-9);
  EXPECT_NEAR(r.critical_path.back().end_s, r.iteration_s, 1e-9);
  double covered = 0;
  for (size_t i = 0; i < r.critical_path.size(); ++i) {
    const auto& s = r.critical_path[i];
    EXPECT_LE(s.start_s, s.end_s + 1e-12);
    covered += s.end_s - s.start_s;
    if (i > 0) {
      EXPECT_NEAR(r.critical_path[i - 1].end_s, s.start_s, 1e-9) << "gap before step " << i;
    }
  }
  EXPECT_NEAR(covered, r.iteration_s, 1e-9);
}

bool path_computes_on(const IterationResult& r, int worker) {
  for (const auto& s : r.critical_path)
    if (s.worker == worker && (s.kind == SpanKind::forward || s.kind == SpanKind::backward) && s.end_s > s.start_s)
      return true;
  return false;
}

}  // namespace

TEST(SimCriticalPath, WithoutStragglersItStaysOnTheOneClass) {
  auto r = simulate_iteration(topo_8x4(), spec_tp2_pp2_dp8());
  ASSERT_EQ(r.workers.size(), 2u);  // symmetric: one class
  expect_contiguous(r);
  for (const auto& s : r.critical_path) {
    EXPECT_LT(s.worker, 2);
    EXPECT_NE(s.kind, SpanKind::dp_comm);  // a wait for its own gradients stays a dp_wait step
  }
}

TEST(SimCriticalPath, FollowsTheGradientAllReduceToAStragglerInAnotherReplica) {
  IterationSpec it = spec_tp2_pp2_dp8();
  // GPU k: replica 5, last stage, tp rank 1, at half speed. Stage 0 of every replica ends last (it runs the
  // last backward), and the normal class's stage 0 (worker 0) ties with the straggler's replica's, so the
  // walk starts in the normal class, which never computes slowly itself.
  const int k = gpu_id(it, 5, 1, 1);
  it.stragglers = {{k, 0.5}};
  auto r = simulate_iteration(topo_8x4(), it);
  // Classes: the normal replicas, replica 4 (it shares stage 0's node, and so the NIC, with replica 5)
  // and the straggler's replica 5; two stages each.
  ASSERT_EQ(r.workers.size(), 6u);
  const int cls = r.replica_class[5];
  ASSERT_NE(cls, r.replica_class[0]);
  const int straggler_worker = cls * it.pp + gpu_coord(it, k).stage;
  EXPECT_EQ(r.critical_class, r.replica_class[0]) << "the walk should start outside the straggler's replica";
  expect_contiguous(r);
  EXPECT_TRUE(path_computes_on(r, straggler_worker)) << "critical path misses the straggler's compute";
  // It crossed from the normal class to the straggler's through the gradient collective.
  bool dp_step = false;
  for (const auto& s : r.critical_path) dp_step |= s.kind == SpanKind::dp_comm;
  EXPECT_TRUE(dp_step);
  // The straggler's compute dominates the path: at half speed its 4 micro-batches of 2 layers take
  // 4 * 2 * (1 + 2) / 0.5 = 48 s, of which the path carries most (all but the first stage's warm-up).
  double on_straggler = 0;
  for (const auto& s : r.critical_path)
    if (s.worker == straggler_worker && (s.kind == SpanKind::forward || s.kind == SpanKind::backward))
      on_straggler += s.end_s - s.start_s;
  EXPECT_GT(on_straggler, 0.75 * 48.0);
}

TEST(SimCriticalPath, FollowsZero3GathersToAStragglerOnTheSameStage) {
  IterationSpec it = spec_tp2_pp2_dp8();
  it.zero3_gathers = true;
  it.zero_sharded = true;
  // A straggler on stage 0 of replica 3: every replica's stage 0 waits for it at each parameter gather.
  const int k = gpu_id(it, 3, 0, 0);
  it.stragglers = {{k, 0.5}};
  auto r = simulate_iteration(topo_8x4(), it);
  const int straggler_worker = r.replica_class[3] * it.pp + 0;
  expect_contiguous(r);
  EXPECT_TRUE(path_computes_on(r, straggler_worker));
}
