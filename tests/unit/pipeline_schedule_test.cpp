// pipeline_schedule_test.cpp - the one set of pipeline schedules (engine/core/pipeline_schedule.h) that the
// analytic model, the simulator and the trainer run: orders written out by hand from the papers' figures and
// Megatron-LM's rules, the properties every schedule must keep (each pass once, a forward before its backward,
// 1F1B's bound on what is in flight), and the warm-up counts the memory model reads agreeing with the orders.
#include "core/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace {

using mc::PipeOp;
using mc::PipeSchedule;

std::string written(const std::vector<PipeOp>& ops) {
  std::string s;
  for (const PipeOp& o : ops)
    s += std::string(s.empty() ? "" : " ") + (o.backward ? "B" : "F") + std::to_string(o.micro_batch) +
         std::string(size_t(o.chunk), '\'');
  return s;
}

// Narayanan et al. 2021, Fig. 4 top (PipeDream-Flush): stage 0 of 4, 8 micro-batches: 3 warm-up forwards.
TEST(PipelineSchedule, OneFOneBAsInTheFigure) {
  EXPECT_EQ(written(mc::stage_order(PipeSchedule::one_f_one_b, 4, 0, 8, 1)),
            "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(written(mc::stage_order(PipeSchedule::one_f_one_b, 4, 3, 8, 1)),
            "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
  EXPECT_EQ(written(mc::stage_order(PipeSchedule::gpipe, 4, 2, 3, 1)), "F0 F1 F2 B0 B1 B2");
}

// Megatron-LM's interleaved order, worked by hand for 2 stages, 2 chunks, 4 micro-batches: groups of p = 2
// micro-batches go through chunk 0 then chunk 1 (a prime marks chunk 1); stage 0 warms up with
// 2 (p - 0 - 1) + (v - 1) p = 4 forwards, stage 1 with 2; backwards run the chunks in reverse.
TEST(PipelineSchedule, InterleavedAsMegatronOrdersIt) {
  EXPECT_EQ(written(mc::stage_order(PipeSchedule::interleaved, 2, 0, 4, 2)),
            "F0 F1 F0' F1' F2 B0' F3 B1' F2' B0 F3' B1 B2' B3' B2 B3");
  EXPECT_EQ(written(mc::stage_order(PipeSchedule::interleaved, 2, 1, 4, 2)),
            "F0 F1 F0' B0' F1' B1' F2 B0 F3 B1 F2' B2' F3' B3' B2 B3");
  // m = p: every forward first ("all warm-up"), on every stage.
  EXPECT_EQ(written(mc::stage_order(PipeSchedule::interleaved, 2, 1, 2, 2)), "F0 F1 F0' F1' B0' B1' B0 B1");
  // One chunk a stage is 1F1B.
  EXPECT_EQ(mc::stage_order(PipeSchedule::interleaved, 4, 1, 8, 1),
            mc::stage_order(PipeSchedule::one_f_one_b, 4, 1, 8, 1));
}

TEST(PipelineSchedule, EveryPassOnceEachForwardBeforeItsBackward) {
  for (PipeSchedule s : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b, PipeSchedule::interleaved})
    for (int p : {1, 2, 3, 4, 8})
      for (int m : {p, 2 * p, 3 * p + (s == PipeSchedule::interleaved ? 0 : 1)})
        for (int v : {1, 2, 3})
          for (int st = 0; st < p; ++st) {
            SCOPED_TRACE(std::string(mc::schedule_name(s)) + " p " + std::to_string(p) + " m " + std::to_string(m) +
                         " v " + std::to_string(v) + " stage " + std::to_string(st));
            const int chunks = s == PipeSchedule::interleaved ? v : 1;
            const std::vector<PipeOp> ops = mc::stage_order(s, p, st, m, v);
            ASSERT_EQ(int(ops.size()), 2 * m * chunks);
            std::set<std::pair<int, int>> forward, backward;
            int in_flight = 0, peak = 0, first_backward = -1;
            for (size_t i = 0; i < ops.size(); ++i) {
              const PipeOp& o = ops[i];
              ASSERT_TRUE(o.micro_batch >= 0 && o.micro_batch < m && o.chunk >= 0 && o.chunk < chunks);
              if (o.backward) {
                EXPECT_TRUE(forward.count({o.micro_batch, o.chunk})) << "a backward before its forward";
                EXPECT_TRUE(backward.insert({o.micro_batch, o.chunk}).second) << "a backward twice";
                --in_flight;
                if (first_backward < 0) first_backward = int(i);
              } else {
                EXPECT_TRUE(forward.insert({o.micro_batch, o.chunk}).second) << "a forward twice";
                peak = std::max(peak, ++in_flight);
              }
            }
            // What the memory model counts: the forwards before the first backward are the warm-up and one more.
            const int warm = mc::warmup_forwards(s, p, st, m, v);
            EXPECT_EQ(first_backward, std::min(warm + (s == PipeSchedule::gpipe ? 0 : 1), m * chunks));
            for (int k = 0; k < first_backward; ++k) EXPECT_EQ(ops[size_t(k)], mc::nth_forward(s, p, v, k));
            // 1F1B keeps at most p - stage micro-batches' activations (Narayanan et al. 2021, Sec. 2.2.1).
            if (s == PipeSchedule::one_f_one_b) EXPECT_LE(peak, std::min(p - st, m));
            if (s == PipeSchedule::gpipe) EXPECT_EQ(peak, m);
          }
}

TEST(PipelineSchedule, SizesItCannotOrderAreRefused) {
  EXPECT_THROW(mc::stage_order(PipeSchedule::interleaved, 4, 0, 6, 2), std::invalid_argument);  // 6 % 4
  EXPECT_THROW(mc::stage_order(PipeSchedule::one_f_one_b, 4, 4, 8, 1), std::invalid_argument);
  EXPECT_THROW(mc::stage_order(PipeSchedule::one_f_one_b, 0, 0, 8, 1), std::invalid_argument);
  EXPECT_THROW(mc::stage_order(PipeSchedule::gpipe, 2, 0, 0, 1), std::invalid_argument);
  EXPECT_NO_THROW(mc::stage_order(PipeSchedule::one_f_one_b, 4, 0, 6, 2));  // v counts only when interleaved
}

TEST(PipelineSchedule, NamesBothWays) {
  for (PipeSchedule s : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b, PipeSchedule::interleaved})
    EXPECT_EQ(mc::schedule_from_string(mc::schedule_name(s)), s);
  try {
    (void)mc::schedule_from_string("zb-h1");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("interleaved"), std::string::npos) << e.what();
  }
}

}  // namespace
