// The training lab's replay of one step (issue 25 item 4): the report carries every message of the last
// step in the order the workers sent them (Comm::step_log, a ring collective hop by hop), and replaying
// them gives back exactly what the lab's table counts: each worker's bytes sent (control scalars
// excluded) and each link's bytes and messages per traffic class.
#include "train/report.h"
#include "train/train.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

using namespace mc::train;
using mc::PipeSchedule;

TEST(TrainMessageLog, ReplayingTheStepGivesTheCountedBytes) {
  for (auto [dp, tp, pp, zero] : {std::tuple{2, 2, 2, 0}, std::tuple{4, 1, 1, 3}, std::tuple{2, 1, 2, 1}}) {
    TrainConfig c;
    c.model = {.vocab = 256, .context = 16, .layers = 4, .width = 32, .heads = 4};
    c.batch = 8;
    c.steps = 2;
    c.seed = 42;
    c.parallel = {
        .dp = dp, .tp = tp, .pp = pp, .zero = zero, .micro_batches = 0, .schedule = PipeSchedule::one_f_one_b};
    Trainer t(c, default_corpus());
    t.step();
    t.step();
    const TrainerReport r = report(t);
    const std::string layout = "dp " + std::to_string(dp) + " tp " + std::to_string(tp) + " pp " + std::to_string(pp) +
                               " zero " + std::to_string(zero);
    ASSERT_EQ(r.messages.size(), r.messages_in_step) << layout;  // a small model: every message kept
    ASSERT_GT(r.messages.size(), 0u) << layout;
    const std::vector<double> replayed = bytes_sent_in_first(r, r.messages.size());
    ASSERT_EQ(replayed.size(), r.bytes_sent.size());
    for (size_t w = 0; w < replayed.size(); ++w)
      EXPECT_DOUBLE_EQ(replayed[w], r.bytes_sent[w]) << layout << " worker " << w;
    // Half way, no worker has sent more than at the end, and someone has sent less.
    const std::vector<double> half = bytes_sent_in_first(r, r.messages.size() / 2);
    double less = 0;
    for (size_t w = 0; w < half.size(); ++w) {
      EXPECT_LE(half[w], replayed[w]);
      less += replayed[w] - half[w];
    }
    EXPECT_GT(less, 0) << layout;
    // Per link and class, the messages add up to the link counters the message graph draws.
    std::map<std::tuple<int, int, int>, std::pair<double, double>> agg;
    for (const MessageRecord& m : r.messages) {
      auto& a = agg[{m.src, m.dst, int(m.traffic)}];
      a.first += m.bytes;
      a.second += 1;
    }
    ASSERT_EQ(agg.size(), r.links.size()) << layout;
    for (const LinkTraffic& l : r.links) {
      const auto& a = agg[{l.src, l.dst, int(l.traffic)}];
      EXPECT_DOUBLE_EQ(a.first, l.bytes) << layout;
      EXPECT_DOUBLE_EQ(a.second, l.messages) << layout;
    }
  }
}
