// Every parallel layout trains like one worker with the same global batch (the reference), the bytes its
// collectives count equal engine/perf/comm_volume.h's prediction, and ZeRO's memory shrinks as the paper's
// formulas say.
#include "perf/comm_volume.h"
#include "train/train.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace mc::train;
using mc::PipeSchedule;

// Small enough for ASan, big enough that every strategy has work: 4 layers so pp = 4 has one each.
TrainConfig tiny(int dp, int tp, int pp, int zero, int micro = 0, PipeSchedule s = PipeSchedule::one_f_one_b) {
  TrainConfig c;
  c.model = {.vocab = 256, .context = 16, .layers = 4, .width = 32, .heads = 4};
  c.batch = 8;
  c.steps = 20;
  c.seed = 42;
  c.parallel = {.dp = dp, .tp = tp, .pp = pp, .zero = zero, .micro_batches = micro, .schedule = s};
  return c;
}

struct Result {
  std::vector<double> losses;
  std::vector<float> params;
};

Result train(const TrainConfig& c, Trainer** keep = nullptr) {
  static std::vector<std::unique_ptr<Trainer>> kept;
  auto t = std::make_unique<Trainer>(c, default_corpus());
  while (t->step_index() < c.steps) t->step();
  Result r{t->losses(), t->full_parameters()};
  if (keep) {
    kept.push_back(std::move(t));
    *keep = kept.back().get();
  }
  return r;
}

const Result& reference() {
  static const Result r = train(tiny(1, 1, 1, 0));
  return r;
}

// A model whose units are not multiples of 4 (a block has 12 C^2 + 13 C = 11,190 floats at width 30), so
// with dp = 4 ZeRO-2/3's per-unit padding differs from one pad at the end of the flat buffer.
TrainConfig odd(int dp, int zero, int micro = 0) {
  TrainConfig c = tiny(dp, 1, 1, zero, micro);
  c.model.width = 30;
  c.model.heads = 3;
  return c;
}
const Result& odd_reference() {
  static const Result r = train(odd(1, 0));
  return r;
}

// Floats of each unit (embeddings, each block, final LayerNorm) padded to a multiple of nd, from the
// model's shapes: the Psi of ZeRO-2/3's formulas as the lab partitions it.
std::vector<double> unit_floats(const ModelConfig& m, int nd) {
  const double C = m.width;
  std::vector<double> u{double(m.vocab) * C + double(m.context) * C};
  for (int l = 0; l < m.layers; ++l) u.push_back(12 * C * C + 13 * C);
  u.push_back(2 * C);
  for (double& x : u) x = std::ceil(x / nd) * nd;
  return u;
}

// Tolerances: float32 sums in a different order (ring chunks, row-parallel partial sums, micro-batch
// accumulation) drift by a few ulp per step; 20 steps of Adam keep them under these bounds.
constexpr double kLossRel = 2e-4;
constexpr double kParamAbs = 2e-4;

void expect_same_training(const TrainConfig& c, const Result& ref = reference()) {
  Trainer* t = nullptr;
  const Result r = train(c, &t);
  ASSERT_EQ(r.losses.size(), ref.losses.size());
  for (size_t i = 0; i < r.losses.size(); ++i)
    EXPECT_NEAR(r.losses[i], ref.losses[i], kLossRel * ref.losses[i]) << "step " << i + 1;
  ASSERT_EQ(r.params.size(), ref.params.size());
  double worst = 0;
  for (size_t i = 0; i < r.params.size(); ++i) worst = std::max(worst, double(std::fabs(r.params[i] - ref.params[i])));
  EXPECT_LT(worst, kParamAbs);
  // The training moved the weights far more than the tolerance (the comparison is not vacuous).
  EXPECT_LT(ref.losses.back(), ref.losses.front() - 1.0);

  // Counted bytes and messages of the last step == the analytic model, worker by worker.
  const auto predicted = t->predicted_bytes_per_worker();
  const auto predicted_msgs = t->predicted_messages_per_worker();
  for (int w = 0; w < c.parallel.workers(); ++w) {
    EXPECT_DOUBLE_EQ(t->comm().step_counters(w).data_bytes_sent(), predicted[size_t(w)]) << "worker " << w;
    EXPECT_DOUBLE_EQ(t->comm().step_counters(w).data_messages_sent(), predicted_msgs[size_t(w)]) << "worker " << w;
  }
  EXPECT_EQ(t->comm().pending(), 0u);
}

TEST(TrainParallel, DataParallel) {
  expect_same_training(tiny(2, 1, 1, 0));
  expect_same_training(tiny(4, 1, 1, 0));
}
TEST(TrainParallel, ZeroStages) {
  for (int z = 1; z <= 3; ++z) expect_same_training(tiny(2, 1, 1, z));
  expect_same_training(tiny(4, 1, 1, 3));
}
TEST(TrainParallel, ZeroStagesWithMicroBatchesTensorParallelAndPaddedUnits) {
  // ZeRO-2/3 reduce-scatter each unit in every micro-batch and add the pieces up across the step.
  expect_same_training(tiny(2, 1, 1, 2, 2));
  expect_same_training(tiny(2, 1, 1, 3, 4));
  // Several tensor-parallel ranks, each with its own dp group, in lock step unit by unit.
  expect_same_training(tiny(2, 2, 1, 3));
  // Units that need padding: the padded pieces must stay zero and out of the model.
  for (int z = 1; z <= 3; ++z) expect_same_training(odd(4, z), odd_reference());
}
TEST(TrainParallel, TensorParallel) {
  expect_same_training(tiny(1, 2, 1, 0));
  expect_same_training(tiny(1, 4, 1, 0));
}
TEST(TrainParallel, PipelineGPipeAnd1F1B) {
  expect_same_training(tiny(1, 1, 2, 0, 4, PipeSchedule::gpipe));
  expect_same_training(tiny(1, 1, 4, 0, 4, PipeSchedule::one_f_one_b));
}
TEST(TrainParallel, ThreeDimensional) {
  expect_same_training(tiny(2, 2, 2, 0));
  expect_same_training(tiny(2, 2, 2, 1, 2, PipeSchedule::gpipe));
}

// Per link (src -> dst) in one step: with pure data parallelism each worker sends only to its ring
// successor, and with a two-stage pipeline each stage only to the other; so every link carries exactly
// its sender's predicted bytes and messages (engine/perf/comm_volume.h), and no other link carries data.
TEST(TrainParallel, EachLinkCarriesWhatTheModelPredicts) {
  for (const TrainConfig& c : {tiny(4, 1, 1, 0), tiny(4, 1, 1, 2), tiny(1, 1, 2, 0, 4)}) {
    TrainConfig one = c;
    one.steps = 2;
    Trainer t(one, default_corpus());
    t.step();
    t.step();  // step_links() holds the last step only
    const auto bytes = t.predicted_bytes_per_worker(), msgs = t.predicted_messages_per_worker();
    const int p = one.parallel.workers();
    int data_links = 0;
    for (const auto& [link, lc] : t.comm().step_links()) {
      if (lc.data_bytes() == 0) continue;  // control scalars only (loss, gradient norm)
      ++data_links;
      EXPECT_EQ(link.second, (link.first + 1) % p) << "dp " << one.parallel.dp << " pp " << one.parallel.pp;
      EXPECT_DOUBLE_EQ(lc.data_bytes(), bytes[size_t(link.first)]) << link.first << " -> " << link.second;
      EXPECT_DOUBLE_EQ(lc.data_messages(), msgs[size_t(link.first)]) << link.first << " -> " << link.second;
    }
    EXPECT_EQ(data_links, p);
  }
}

TEST(TrainParallel, ZeroMemoryShrinksAsThePaperSays) {
  // Rajbhandari et al. 2020, Fig. 1 with fp32 weights and gradients and K = 8 bytes of Adam state a
  // parameter: stage 0 holds (4 + 4 + 8) Psi, 1: (4 + 4) Psi + 8 Psi / Nd, 2: 4 Psi + 12 Psi / Nd, 3: 16 Psi / Nd
  // (stages 2-3 with Psi padded unit by unit, as they partition).
  for (int nd : {2, 4}) {
    for (int k = 0; k < 8; ++k) {
      const int z = k % 4;
      TrainConfig c = k < 4 ? tiny(nd, 1, 1, z) : odd(nd, z);  // odd(): units padded unlike the flat buffer
      c.steps = 1;
      Trainer t(c, default_corpus());
      t.step();
      const double psi = double(t.parameter_count() + (nd - t.parameter_count() % nd) % nd);  // padded to Nd
      double psi_units = 0;  // ZeRO-2/3 pad every unit (worker.h's ParamUnit)
      for (double u : unit_floats(c.model, nd)) psi_units += u;
      const double expect[4] = {16 * psi, 8 * psi + 8 * psi / nd, 4 * psi_units + 12 * psi_units / nd,
                                16 * psi_units / nd};
      for (const WorkerMemory& m : t.memory())
        EXPECT_DOUBLE_EQ(m.persistent_bytes(), expect[z]) << "stage " << z << " width " << c.model.width;
    }
  }
}

TEST(TrainParallel, ZeroThreeHoldsOneLayerAtATimeNotTheModel) {
  // Gather-on-use by unit (Rajbhandari et al. 2020, Sec. 5.3): during a step a ZeRO-3 worker holds, on
  // top of its shards, at most the embedding's gradient (tied to the head, so it waits for the end of the
  // backward) plus one block's parameters and gradients; ZeRO-2 holds gradients only, the embedding's
  // and one block's. Stages 0-1 keep everything whole and have no transient buffers.
  for (const TrainConfig& base : {tiny(4, 1, 1, 0), odd(4, 0)}) {
    const std::vector<double> u = unit_floats(base.model, 4);
    const double embed = u.front(), block = u[1], head = u.back();
    double model = 0;
    for (double x : u) model += x;
    const double expect[4] = {0, 0, 4 * (embed + block), 4 * std::max(embed + 2 * block, 2 * (embed + head))};
    for (int z = 0; z <= 3; ++z) {
      TrainConfig c = base;
      c.parallel.zero = z;
      c.steps = 1;
      Trainer t(c, default_corpus());
      t.step();
      for (const WorkerMemory& m : t.memory()) EXPECT_DOUBLE_EQ(m.transient_peak_bytes, expect[z]) << "stage " << z;
    }
    // The point of ZeRO-3: its peak of parameters + gradients is well under one whole copy of both.
    EXPECT_LT(expect[3], 0.7 * 8 * model);
  }
}

TEST(TrainParallel, PredictionUsesThePerfModel) {
  // ZeRO-3's traffic with one micro-batch is exactly the perf model's 3 (Nd-1)/Nd Psi, Psi padded unit by
  // unit; ZeRO-2's 2 (Nd-1)/Nd Psi, ZeRO-1's over the flat buffer padded once.
  for (const TrainConfig& base : {tiny(4, 1, 1, 0, 1), odd(4, 0, 1)}) {
    double psi_units = 0;
    for (double u : unit_floats(base.model, 4)) psi_units += u;
    for (int z = 1; z <= 3; ++z) {
      TrainConfig c = base;
      c.parallel.zero = z;
      Trainer t(c, default_corpus());
      const double psi_flat = double(t.parameter_count() + (4 - t.parameter_count() % 4) % 4);
      const double psi = z == 1 ? psi_flat : psi_units;
      EXPECT_DOUBLE_EQ(t.predicted_bytes_per_worker()[0],
                       mc::perf::dp_gradient_volume(psi, 4, 4, z).bytes_sent_per_rank)
          << "stage " << z;
    }
  }
}

TEST(TrainParallel, OneFOneBHoldsFewerActivationsThanGPipe) {
  // GPipe keeps all m micro-batches' activations on the first stage; 1F1B at most pp (Narayanan et al. 2021).
  TrainConfig g = tiny(1, 1, 2, 0, 4, PipeSchedule::gpipe), f = tiny(1, 1, 2, 0, 4, PipeSchedule::one_f_one_b);
  g.steps = f.steps = 1;
  Trainer tg(g, default_corpus()), tf(f, default_corpus());
  tg.step();
  tf.step();
  EXPECT_DOUBLE_EQ(tg.memory()[0].activations_peak_bytes, 2.0 * tf.memory()[0].activations_peak_bytes);
  EXPECT_DOUBLE_EQ(tg.losses()[0], tf.losses()[0]);  // same arithmetic, another order of passes
  // The schedule really interleaves: stage 0 runs a backward before its last forward under 1F1B.
  int first_b = -1, last_f = -1;
  for (const PipelineOp& op : tf.last_schedule())
    if (op.stage == 0) {
      if (op.backward && first_b < 0) first_b = op.tick;
      if (!op.backward) last_f = op.tick;
    }
  EXPECT_LT(first_b, last_f);
}

TEST(TrainParallel, SameSeedSameRunBitForBit) {
  TrainConfig c = tiny(2, 2, 1, 1);
  c.steps = 5;
  const Result a = train(c), b = train(c);
  EXPECT_EQ(a.losses, b.losses);
  EXPECT_EQ(a.params, b.params);
  c.seed = 43;
  EXPECT_NE(train(c).losses, a.losses);
}

}  // namespace
