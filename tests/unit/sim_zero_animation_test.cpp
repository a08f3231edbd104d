// ZeRO, layer by layer (sim/zero_animation.h): the view's timeline is the iteration simulator's own
// (GPU 0's compute spans and its stage's data-parallel collectives, for the same settings), its memory at
// rest is the ZeRO paper's model-state formula (Rajbhandari et al. 2020, Sec. 5.1: (2 + 2 + K) Psi bytes
// with K = 12 for mixed-precision Adam, each term divided by N_d once its stage shards it), and its
// traffic is the paper's volume (Sec. 7.2.2: data parallelism 2 Psi, ZeRO-3 3 Psi per step).
#include "sim/zero_animation.h"

#include "core/json_doc.h"
#include "perf/perf.h"
#include "sim/iteration.h"
#include "sim/sim_config.h"

#include "sim_test_util.h"

#include <gtest/gtest.h>

using mc::json;
using mc::sim::ZeroAnimation;
using mc::sim::ZeroAnimationSpec;
using mc::sim::ZeroEvent;

namespace {

using mc::sim::test::catalog;

ZeroAnimationSpec spec(int stage, int gpus = 8, int m = 1, const char* recompute = "full") {
  ZeroAnimationSpec s;
  s.recompute = recompute;
  s.config = {{"model", {{"preset", "gpt3-2.7b"}}},
              {"cluster", {{"preset", "azure-openai-2020"}}},
              {"software", "deepspeed-2022"}};
  s.stage = stage;
  s.gpus = gpus;
  s.micro_batches = m;
  return s;
}

}  // namespace

TEST(ZeroAnimation, TimelineIsTheSimulatorsEventList) {
  for (int stage : {0, 1, 2, 3}) {
    const ZeroAnimation a = mc::sim::animate_zero(catalog(), spec(stage, 8, 2));
    // The same step, simulated here from the config the view describes.
    json cfg = spec(stage).config;
    cfg["cluster"]["gpus"] = 8;
    cfg["parallel"] = {{"tp", 1},
                       {"pp", 1},
                       {"dp", 8},
                       {"micro_batch", 1},
                       {"global_batch", 16},
                       {"zero", stage},
                       {"recompute", "full"}};
    const mc::sim::Resolved r = mc::sim::resolve(catalog(), mc::JsonDoc::parse(cfg.dump(), "test"));
    const mc::sim::IterationResult res = mc::sim::simulate_iteration(mc::sim::Topology(r.topo), r.iter);
    EXPECT_DOUBLE_EQ(a.total_s, res.iteration_s) << "stage " << stage;
    std::vector<std::pair<double, double>> want, got;
    for (const mc::sim::Span& s : res.workers[0].spans)
      if (s.kind == mc::sim::SpanKind::forward || s.kind == mc::sim::SpanKind::backward ||
          s.kind == mc::sim::SpanKind::optimizer)
        want.push_back({s.start_s, s.end_s});
    for (const auto& d : res.dp_events) want.push_back({d.start_s, d.end_s});
    for (const ZeroEvent& e : a.events) got.push_back({e.start_s, e.end_s});
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << "stage " << stage;
    // Two micro-batches, 32 layers: each layer computes forward and backward once per micro-batch.
    int fwd = 0, bwd = 0, gathers = 0;
    for (const ZeroEvent& e : a.events) {
      fwd += e.kind == ZeroEvent::forward;
      bwd += e.kind == ZeroEvent::backward;
      gathers += e.kind == ZeroEvent::gather;
    }
    EXPECT_EQ(fwd, 2 * 32);
    EXPECT_EQ(bwd, 2 * 32);
    EXPECT_EQ(gathers > 0, stage == 3) << "stage " << stage;
  }
}

TEST(ZeroAnimation, StatesAtRestAreThePapersFormula) {
  const double psi = mc::perf::param_count(
      mc::perf::parse_config(catalog(),
                             {{"model", {{"preset", "gpt3-2.7b"}}}, {"cluster", {{"preset", "azure-openai-2020"}}}},
                             "test", false)
          .model);
  const double n = 8;
  const double want[] = {16 * psi, 4 * psi + 12 * psi / n, 2 * psi + 14 * psi / n, 16 * psi / n};
  for (int stage = 0; stage <= 3; ++stage) {
    const ZeroAnimation a = mc::sim::animate_zero(catalog(), spec(stage));
    EXPECT_NEAR(a.states_bytes, want[stage], 1e-3 * want[stage]) << "stage " << stage;
  }
}

TEST(ZeroAnimation, TrafficIsThePapersVolume) {
  // One micro-batch: data parallelism all-reduces the gradients (2 Psi); ZeRO-3 gathers the weights for
  // the forward and the backward and reduce-scatters the gradients (3 Psi), 1.5x (Sec. 7.2.2). With full
  // recomputation DeepSpeed's module hooks gather the layers once more for the recomputed forward
  // (software.json deepspeed-2022 zero3_gather per-module): the layers' Psi once more, about 2x.
  const ZeroAnimation z0 = mc::sim::animate_zero(catalog(), spec(0, 8, 1, "none"));
  const ZeroAnimation z3 = mc::sim::animate_zero(catalog(), spec(3, 8, 1, "none"));
  EXPECT_NEAR(z0.bytes_moved_per_gpu / z0.data_parallel_bytes, 1.0, 1e-5);
  EXPECT_NEAR(z3.bytes_moved_per_gpu / z3.data_parallel_bytes, 1.5, 1e-5);
  const ZeroAnimation full = mc::sim::animate_zero(catalog(), spec(3));
  const double layers_share = 32 * full.layer_weights_bytes / (full.data_parallel_bytes / 2);
  EXPECT_NEAR(full.bytes_moved_per_gpu / full.data_parallel_bytes, 1.5 + layers_share / 2, 1e-5);
}

TEST(ZeroAnimation, MemoryRisesThroughTheForwardAndFallsThroughTheBackward) {
  for (int stage : {0, 3}) {
    const ZeroAnimation a = mc::sim::animate_zero(catalog(), spec(stage));
    double last_fwd = 0, first_bwd = 1e30;
    for (const ZeroEvent& e : a.events) {
      if (e.kind == ZeroEvent::forward) last_fwd = std::max(last_fwd, e.end_s);
      if (e.kind == ZeroEvent::backward) first_bwd = std::min(first_bwd, e.start_s);
    }
    const double rest = a.states_bytes;
    const double turn = mc::sim::frame_at(a, 0.5 * (last_fwd + first_bwd)).memory_bytes;
    // At the turn every layer's saved activations (its input, with full recomputation) are held.
    EXPECT_GE(turn, rest + 32 * a.activations_per_layer_bytes * (1 - 1e-9)) << "stage " << stage;
    EXPECT_NEAR(a.memory_bytes.back(), rest, 1e-6 * rest) << "stage " << stage;  // all freed at the end
    EXPECT_GE(a.peak_bytes, turn);
  }
  // ZeRO-3 holds a layer's full weights only while it is gathered and used: during layer 5's forward it
  // holds layer 5 (and what is prefetched), never all 32.
  const ZeroAnimation a = mc::sim::animate_zero(catalog(), spec(3));
  for (const ZeroEvent& e : a.events)
    if (e.kind == ZeroEvent::forward && e.layer == 5) {
      const mc::sim::ZeroFrame f = mc::sim::frame_at(a, 0.5 * (e.start_s + e.end_s));
      EXPECT_EQ(f.computing_layer, 5);
      EXPECT_NE(std::find(f.gathered.begin(), f.gathered.end(), 5), f.gathered.end());
      EXPECT_LT(f.gathered.size(), 4u);
    }
}

TEST(ZeroAnimation, BadSettingsAreRefusedSayingWhatToPick) {
  EXPECT_THROW(mc::sim::animate_zero(catalog(), spec(4)), std::invalid_argument);
  EXPECT_THROW(mc::sim::animate_zero(catalog(), spec(3, 1)), std::invalid_argument);
  try {
    mc::sim::animate_zero(catalog(), spec(3, 100));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2 to 64"), std::string::npos) << e.what();
  }
}
