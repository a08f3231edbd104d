// perf_fit_layout_test.cpp - perf::fit_layout (the layout "Train a transformer" moves to when the nodes
// slider offers a machine) against layouts derived by hand, and against the rules every layout obeys
// whatever the machine: tp*pp*dp GPUs on whole nodes and no more than the machine, tp dividing the heads,
// the global batch split evenly into micro-batches over dp.
#include "perf/fit_layout.h"
#include "perf/perf.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace {

using nlohmann::json;

// A config of `model` on the 2020 Azure machine (8 V100s per node) asking for tp x pp with this batch. It is
// parsed as one valid node (dp 8) and then given the layout asked for, which may be one the engine refuses
// (tp 8 on 12 heads): fit_layout's job is to move away from it.
mc::perf::Config asking(const std::string& model, int tp, int pp, int micro_batch, int global_batch) {
  const json c = {{"model", {{"preset", model}}},
                  {"cluster", {{"preset", "azure-openai-2020"}, {"gpus", 8}}},
                  {"parallel",
                   {{"tp", 1},
                    {"pp", 1},
                    {"dp", 8},
                    {"micro_batch", 1},
                    {"global_batch", 512},
                    {"schedule", "1f1b"},
                    {"recompute", "full"}}}};
  // check_stack off: the hand cases ask about the layout's arithmetic, not what one stack can run.
  mc::perf::Config out = mc::perf::parse_config(mc::test::catalog(), c, "fit_layout test", true, false);
  out.layout.tp = tp, out.layout.pp = pp, out.layout.dp = 1;
  out.layout.micro_batch = micro_batch, out.layout.global_batch = global_batch;
  return out;
}

// The rules any fitted layout obeys, checked from the model's own numbers.
void expect_valid(const mc::perf::Config& c, const mc::perf::FittedLayout& f, long long machine) {
  const mc::perf::Layout& L = f.layout;
  EXPECT_EQ((long long)L.tp * L.pp * L.dp, f.gpus) << "tp*pp*dp is the GPUs the layout uses";
  EXPECT_LE(f.gpus, machine) << "no more GPUs than the machine has";
  EXPECT_EQ(f.gpus % c.cluster.gpus_per_node, 0) << "whole nodes";
  EXPECT_EQ(c.model.heads % L.tp, 0) << "tp " << L.tp << " splits " << c.model.heads << " heads evenly";
  EXPECT_EQ(L.global_batch % ((long long)L.micro_batch * L.dp), 0) << "the batch splits over dp";
  EXPECT_LE(L.tp, c.layout.tp) << "tp only ever halves from what was asked";
  EXPECT_LE(L.pp, c.layout.pp) << "pp only ever halves from what was asked";
  mc::perf::Config t = c;
  t.layout = L;
  t.cluster.nodes = int(f.gpus / c.cluster.gpus_per_node);
  EXPECT_TRUE(mc::perf::layout_problems(t).empty()) << mc::perf::layout_problems(t).front();
}

struct HandCase {
  const char* why;
  const char* model;
  int tp, pp, micro_batch, global_batch;
  long long machine;
  int want_tp, want_pp, want_dp;
};

}  // namespace

// Each expected layout worked out on paper from fit_layout's contract (header): keep tp and pp where tp*pp
// fits, else halve pp, then tp; then the largest dp that uses whole nodes and divides the global batch.
TEST(FitLayout, HandDerivedLayouts) {
  const HandCase cases[] = {
      // GPT-3's paper layout on 1,024 GPUs: 1024 / (8*16) = 8, and 1536 / 8 = 192 micro-batches of 1.
      {"the paper's layout fits exactly", "gpt3-175b", 8, 16, 1, 1536, 1024, 8, 16, 8},
      // The whole 10,000-GPU machine: 10000 / 128 = 78.1, but dp must divide 1536 = 2^9 * 3; its largest
      // divisor at most 78 is 64 (48 < 64 < 78 < 96): 8192 GPUs, not 9984.
      {"dp the largest divisor of the batch", "gpt3-175b", 8, 16, 1, 1536, 10000, 8, 16, 64},
      // 96 GPUs (12 nodes): tp*pp = 128 does not fit; pp 8 gives 64 with dp 1 (96/64 = 1.5).
      {"pp halved when tp*pp is more than the machine", "gpt3-175b", 8, 16, 1, 1536, 96, 8, 8, 1},
      // One node: pp halves 16 -> 8 -> 4 -> 2 -> 1, then tp 8 x dp 1 = 8.
      {"one node: tensor parallel only", "gpt3-175b", 8, 16, 1, 1536, 8, 8, 1, 1},
      // GPT-3 Small has 12 heads: tp 8 does not split them, tp 4 does; 64 / 4 = 16 and 512 / 16 = 32.
      {"tp halved until it divides the heads", "gpt3-small", 8, 1, 1, 512, 64, 4, 1, 16},
      // Micro-batch 4 on a batch of 96: dp must divide 24 = 96/4; on 80 GPUs at tp*pp = 8, dp <= 10; 10 and 9 do not
      // divide 24, 8 does.
      {"dp splits the batch into micro-batches", "gpt3-small", 4, 2, 4, 96, 80, 4, 2, 8},
  };
  for (const HandCase& h : cases) {
    SCOPED_TRACE(h.why);
    const mc::perf::Config c = asking(h.model, h.tp, h.pp, h.micro_batch, h.global_batch);
    const std::optional<mc::perf::FittedLayout> f = mc::perf::fit_layout(c, h.machine);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->layout.tp, h.want_tp);
    EXPECT_EQ(f->layout.pp, h.want_pp);
    EXPECT_EQ(f->layout.dp, h.want_dp);
    EXPECT_EQ(f->gpus, (long long)h.want_tp * h.want_pp * h.want_dp);
    expect_valid(c, *f, h.machine);
  }
}

// Every machine the nodes slider can offer for GPT-3 on the Azure machine (1 to 1,250 nodes) gets a layout
// that obeys the rules, and none smaller than one dp step below the best by hand: at tp 8 x pp 16 the
// layout uses all of a machine whose node count is a multiple of 16 and divides the batch.
TEST(FitLayout, EveryNodeCountOfTheSliderObeysTheRules) {
  const mc::perf::Config c = asking("gpt3-175b", 8, 16, 1, 1536);
  for (long long nodes = 1; nodes <= 1250; nodes += (nodes < 40 ? 1 : 37)) {
    SCOPED_TRACE("nodes " + std::to_string(nodes));
    const std::optional<mc::perf::FittedLayout> f = mc::perf::fit_layout(c, nodes * 8);
    ASSERT_TRUE(f.has_value());
    expect_valid(c, *f, nodes * 8);
  }
  for (long long dp : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}) {  // divisors of 1536 with 128*dp <= 10000
    const std::optional<mc::perf::FittedLayout> f = mc::perf::fit_layout(c, 128 * dp);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->gpus, 128 * dp) << "a machine the layout divides is used whole";
  }
}

// No layout at all: a global batch of 1 sequence cannot be split into micro-batches of 2. A batch of 16 can,
// over dp 8: the one node of 8 GPUs (whole nodes: dp is a multiple of 8 at tp = pp = 1).
TEST(FitLayout, NothingRunsWhenTheBatchCannotBeSplit) {
  const mc::perf::Config c = asking("gpt3-small", 1, 1, 2, 16);
  const mc::perf::Config tiny = asking("gpt3-small", 1, 1, 2, 1);
  EXPECT_FALSE(mc::perf::fit_layout(tiny, 64).has_value());
  const std::optional<mc::perf::FittedLayout> f = mc::perf::fit_layout(c, 64);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->layout.dp, 8);
  EXPECT_EQ(f->gpus, 8);
}
