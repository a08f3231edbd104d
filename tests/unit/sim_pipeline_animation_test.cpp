// The pipeline animation (sim/pipeline_animation.h) against independent truths:
// - its timeline is the simulator's: for the same settings (GPipe, 1F1B, interleaved, even and uneven
//   stages, with and without communication) every forward and backward block is exactly the hull of the
//   iteration simulator's spans of that pass, the passes come in the schedule's order (stage_schedule),
//   every send block lies inside one of the simulator's pp_send spans, and the blocks tile [0, total];
// - with equal stages and free communication the measured bubble is the analytic rule (p-1)/(v m + p-1)
//   (Huang et al. 2019; Narayanan et al. 2021 Sec. 2.2.1-2.2.2), exactly where that rule is exact;
// - the bubble forms over time: idle so far never decreases and ends at the measured fraction.
#include "sim/pipeline_animation.h"

#include "core/json_doc.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

using namespace mc::sim;
using mc::PipeOp;
using mc::PipeSchedule;
using mc::stage_order;

namespace {

PipelineAnimationSpec spec(PipeSchedule sch, int p, int m, int v, int layers, bool comm) {
  PipelineAnimationSpec s;
  s.topology.nodes = 1;
  s.topology.gpus_per_node = 8;
  s.topology.nvlink_GBps_per_gpu = 200;
  s.topology.node_network_Gbps = 800;
  IterationSpec& it = s.iteration;
  it.schedule = sch;
  it.pp = p;
  it.micro_batches = m;
  it.virtual_stages = v;
  it.layers = layers;
  it.layer_forward_s = 1e-3;
  it.layer_backward_s = 2e-3;  // a matmul's backward costs twice its forward
  if (comm) {
    it.pp_bytes = 16e6;
  } else {
    it.pp_bytes = 0;
    it.latency = {0, 0};
  }
  return s;
}

// The simulator's own spans for the same settings, one replica.
IterationResult simulated(const PipelineAnimation& a) {
  return simulate_iteration(Topology(a.spec.topology), a.spec.iteration);
}

void expect_timeline_is_the_simulators(const PipelineAnimationSpec& s) {
  const PipelineAnimation a = animate_pipeline(s);
  const IterationResult r = simulated(a);
  ASSERT_EQ(int(a.rows.size()), s.iteration.pp);
  for (const WorkerTimeline& w : r.workers) {
    // Hulls of each pass from the raw spans.
    std::map<std::tuple<int, int, bool>, std::pair<double, double>> hull;
    for (const Span& sp : w.spans) {
      if (sp.kind != SpanKind::forward && sp.kind != SpanKind::backward) continue;
      auto [it, fresh] =
          hull.try_emplace({sp.micro_batch, sp.chunk, sp.kind == SpanKind::backward}, std::pair{sp.start_s, sp.end_s});
      it->second.first = std::min(it->second.first, sp.start_s);
      it->second.second = std::max(it->second.second, sp.end_s);
    }
    const auto& row = a.rows[size_t(w.stage)];
    std::vector<PipeOp> order;
    double t = 0;
    for (const PipeBlock& b : row) {
      EXPECT_DOUBLE_EQ(b.t_start_s, t) << "stage " << w.stage;  // the blocks tile the timeline
      EXPECT_GT(b.t_end_s, b.t_start_s);
      t = b.t_end_s;
      if (b.kind == PipeBlockKind::forward || b.kind == PipeBlockKind::backward) {
        const bool bwd = b.kind == PipeBlockKind::backward;
        const auto it = hull.find({b.micro_batch, b.chunk, bwd});
        ASSERT_NE(it, hull.end());
        EXPECT_EQ(b.t_start_s, it->second.first);
        EXPECT_EQ(b.t_end_s, it->second.second);
        order.push_back({b.micro_batch, b.chunk, bwd});
      } else if (b.kind == PipeBlockKind::send) {
        bool inside = false;
        for (const Span& sp : w.spans)
          inside |= sp.kind == SpanKind::pp_send && sp.micro_batch == b.micro_batch && sp.start_s <= b.t_start_s &&
                    b.t_end_s <= sp.end_s;
        EXPECT_TRUE(inside) << "stage " << w.stage << " send of micro-batch " << b.micro_batch;
      }
    }
    EXPECT_DOUBLE_EQ(t, a.total_s);
    // Every pass the simulator ran is a block, in the schedule's order.
    EXPECT_EQ(order.size(), hull.size());
    const int v = s.iteration.schedule == PipeSchedule::interleaved ? s.iteration.virtual_stages : 1;
    const std::vector<PipeOp> want =
        stage_order(s.iteration.schedule, s.iteration.pp, w.stage, s.iteration.micro_batches, v);
    ASSERT_EQ(order.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(order[i].micro_batch, want[i].micro_batch) << "stage " << w.stage << " op " << i;
      EXPECT_EQ(order[i].chunk, want[i].chunk);
      EXPECT_EQ(order[i].backward, want[i].backward);
    }
  }
  // Stepping walks every block edge.
  const std::vector<double> ev = event_times(a);
  EXPECT_EQ(ev.front(), 0);
  EXPECT_EQ(ev.back(), a.total_s);
}

}  // namespace

TEST(PipelineAnimation, GPipeTimelineIsTheSimulators) {
  expect_timeline_is_the_simulators(spec(PipeSchedule::gpipe, 4, 8, 1, 8, true));
  expect_timeline_is_the_simulators(spec(PipeSchedule::gpipe, 4, 8, 1, 8, false));
}

TEST(PipelineAnimation, OneFOneBTimelineIsTheSimulators) {
  expect_timeline_is_the_simulators(spec(PipeSchedule::one_f_one_b, 4, 8, 1, 8, true));
  expect_timeline_is_the_simulators(spec(PipeSchedule::one_f_one_b, 3, 5, 1, 6, false));
}

TEST(PipelineAnimation, InterleavedTimelineIsTheSimulatorsEvenAndUneven) {
  expect_timeline_is_the_simulators(spec(PipeSchedule::interleaved, 4, 8, 2, 16, true));
  // Uneven: Llama 3 405B's shape in small, an embedding-only first chunk and an output-only last chunk
  // (IterationSpec::chunk_layers), the rest evenly.
  PipelineAnimationSpec s = spec(PipeSchedule::interleaved, 4, 8, 2, 12, true);
  s.iteration.chunk_layers = {0, 2, 2, 2, 2, 2, 2, 0};
  s.iteration.first_stage_extra_s = 1e-3;
  s.iteration.last_stage_extra_s = 2e-3;
  expect_timeline_is_the_simulators(s);
  const PipelineAnimation a = animate_pipeline(s);
  EXPECT_GT(a.bubble_fraction, a.analytic_bubble);  // uneven chunks: the rule is a lower bound
}

TEST(PipelineAnimation, UnevenStagesTimelineIsTheSimulators) {
  PipelineAnimationSpec s = spec(PipeSchedule::one_f_one_b, 4, 6, 1, 10, true);
  s.iteration.stage_layers = {2, 3, 3, 2};  // BLOOM-like: lighter first and last stages
  expect_timeline_is_the_simulators(s);
}

TEST(PipelineAnimation, BubbleIsTheRuleWhereTheRuleIsExact) {
  struct Case {
    PipeSchedule sch;
    int p, m, v;
  };
  for (const Case c : {Case{PipeSchedule::gpipe, 4, 8, 1}, Case{PipeSchedule::gpipe, 8, 4, 1},
                       Case{PipeSchedule::one_f_one_b, 4, 8, 1}, Case{PipeSchedule::one_f_one_b, 6, 12, 1},
                       Case{PipeSchedule::interleaved, 4, 8, 2}, Case{PipeSchedule::interleaved, 4, 12, 3}}) {
    const PipelineAnimation a = animate_pipeline(spec(c.sch, c.p, c.m, c.v, c.p * c.v * 2, false));
    const double rule = double(c.p - 1) / (c.v * c.m + c.p - 1);
    EXPECT_NEAR(a.analytic_bubble, rule, 1e-15);
    EXPECT_NEAR(a.bubble_fraction, rule, 1e-9) << "p=" << c.p << " m=" << c.m << " v=" << c.v;
    // The whole: v m + p - 1 chunk passes (forward + backward) on the critical path.
    const double pass = 2 * 3e-3;  // a chunk's pass: 2 layers x (1 + 2) ms
    EXPECT_NEAR(a.total_s, (c.v * c.m + c.p - 1) * pass, 1e-12);
  }
  EXPECT_EQ(animate_pipeline(spec(PipeSchedule::one_f_one_b, 4, 8, 1, 8, false)).rule,
            "bubble = (p-1) / (m + p-1) = (4-1) / (8 + 4-1) = 3/11 = 27.3%");
  EXPECT_EQ(animate_pipeline(spec(PipeSchedule::interleaved, 4, 8, 2, 8, false)).rule,
            "bubble = (p-1) / (v m + p-1) = (4-1) / (2 x 8 + 4-1) = 3/19 = 15.8%");
}

TEST(PipelineAnimation, TheBubbleFormsOverTime) {
  const PipelineAnimation a = animate_pipeline(spec(PipeSchedule::one_f_one_b, 4, 8, 1, 8, true));
  double before = 0;
  for (double t : event_times(a)) {
    const PipelineFrame f = frame_at(a, t);
    double idle = 0;
    for (double x : f.idle_s) idle += x;
    EXPECT_GE(idle, before - 1e-15);
    before = idle;
  }
  EXPECT_NEAR(frame_at(a, a.total_s).bubble_so_far, a.bubble_fraction, 1e-12);
  // Stage p-1 waits for the first micro-batch to cross p-1 stages: all its time so far is idle.
  const PipeBlock& first = a.rows[3].front();
  EXPECT_EQ(first.kind, PipeBlockKind::idle);
  EXPECT_NEAR(idle_until(a, 3, first.t_end_s), first.t_end_s, 1e-15);
  EXPECT_EQ(frame_at(a, 0).block[0], 0);
  EXPECT_EQ(a.rows[0].front().kind, PipeBlockKind::forward);
}

TEST(PipelineAnimation, RefusesWhatTheScheduleCannotRun) {
  EXPECT_THROW(animate_pipeline(spec(PipeSchedule::interleaved, 4, 6, 2, 8, false)), std::invalid_argument);
  EXPECT_THROW(animate_pipeline(spec(PipeSchedule::one_f_one_b, 3, 6, 1, 8, false)), std::invalid_argument);
  EXPECT_THROW(animate_pipeline(spec(PipeSchedule::gpipe, 4, 200, 1, 8, false)), std::invalid_argument);
}

// A config's pipeline (the Run chapter's default: GPT-3 175B, 96 layers) with the stages changed: the layers
// are split as engine/perf splits them, unevenly when they do not divide, and the timeline is still the
// simulator's.
TEST(PipelineAnimation, AConfigsPipelineWithOtherStagesSplitsItsLayersAsThePerfModelDoes) {
  const nlohmann::json cfg = mc::JsonDoc::load(MC_SOURCE_DIR "/assets/configs/simulate.json").value();
  PipelineSettings set;
  set.schedule = int(PipeSchedule::one_f_one_b);
  set.stages = 5;
  set.micro_batches = 10;
  const PipelineAnimationSpec s = pipeline_spec_of_config(mc::test::catalog(), cfg, set);
  EXPECT_EQ(s.iteration.pp, 5);
  EXPECT_EQ(s.iteration.micro_batches, 10);
  // 96 over 5: four stages of 19 and one of 20 (perf's balanced split; which stage takes it is perf's rule).
  ASSERT_EQ(s.iteration.stage_layers.size(), 5u);
  EXPECT_EQ(std::count(s.iteration.stage_layers.begin(), s.iteration.stage_layers.end(), 19), 4);
  EXPECT_EQ(std::count(s.iteration.stage_layers.begin(), s.iteration.stage_layers.end(), 20), 1);
  EXPECT_GT(s.iteration.layer_forward_s, 0);
  expect_timeline_is_the_simulators(s);
  set.schedule = int(PipeSchedule::interleaved);
  set.virtual_stages = 2;
  const PipelineAnimationSpec si = pipeline_spec_of_config(mc::test::catalog(), cfg, set);
  int sum = 0;
  for (int n : si.iteration.chunk_layers) sum += n;
  EXPECT_EQ(si.iteration.chunk_layers.size(), 10u);
  EXPECT_EQ(sum, 96);
  expect_timeline_is_the_simulators(si);
}
