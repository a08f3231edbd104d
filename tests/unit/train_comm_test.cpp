// The virtual network's collectives compute the right sums and send what NCCL's ring algorithms send.
#include "core/json_doc.h"
#include "device_test_util.h"
#include "perf/comm_volume.h"
#include "train/parallel/comm.h"
#include "train/parallel/trainer_impl.h"
#include "train/storage/corpus.h"
#include "train/train.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace {

using namespace mc::train;
using mc::PipeSchedule;
using mc::test::on_device;
using mc::test::on_host;

TEST(TrainComm, RingAllReduceSumsAndCountsLikeNccl) {
  for (int p : {2, 3, 4, 8}) {
    CpuDevice dev;
    Comm comm(p);
    comm.set_device(&dev);
    const size_t n = size_t(p) * 6;
    std::vector<std::vector<float>> host(static_cast<size_t>(p), std::vector<float>(n));
    std::vector<float> sum(n, 0.0f);
    for (int r = 0; r < p; ++r)
      for (size_t i = 0; i < n; ++i) sum[i] += (host[size_t(r)][i] = float(r * 100 + int(i)));
    std::vector<mc::device::Buffer<float>> bufs;
    std::vector<int> g;
    Comm::Bufs ptrs;
    for (int r = 0; r < p; ++r) {
      bufs.push_back(on_device(dev, host[size_t(r)]));
      g.push_back(r), ptrs.push_back(bufs.back().ptr());
    }
    dev.reset_transfers();
    comm.all_reduce(g, ptrs, n, Traffic::dp);
    // On the device from end to end: nothing crossed to the host.
    EXPECT_EQ(dev.transfers().h2d_bytes + dev.transfers().d2h_bytes, 0.0);
    for (int r = 0; r < p; ++r) EXPECT_EQ(on_host(dev, bufs[size_t(r)]), sum) << "rank " << r;
    const auto v = mc::perf::ring_all_reduce(double(n) * 4, p);
    for (int r = 0; r < p; ++r) {
      EXPECT_DOUBLE_EQ(comm.counters(r).bytes_sent[int(Traffic::dp)], v.bytes_sent_per_rank);
      EXPECT_DOUBLE_EQ(comm.counters(r).messages_sent[int(Traffic::dp)], v.messages_per_rank);
    }
    // A ring: each rank talks only to its successor.
    // A ring: each rank talks only to its successor, 2(p-1) messages of one chunk each.
    ASSERT_EQ(comm.links().size(), size_t(p));
    for (const auto& [link, c] : comm.links()) {
      EXPECT_EQ(link.second, (link.first + 1) % p);
      EXPECT_DOUBLE_EQ(c.bytes[int(Traffic::dp)], v.bytes_sent_per_rank);
      EXPECT_DOUBLE_EQ(c.messages[int(Traffic::dp)], v.messages_per_rank);
    }
    EXPECT_EQ(comm.pending(), 0u);
  }
}

TEST(TrainComm, ReduceScatterLeavesEachRankItsOwnChunk) {
  const int p = 4;
  CpuDevice dev;
  Comm comm(p);
  comm.set_device(&dev);
  std::vector<mc::device::Buffer<float>> bufs;
  Comm::Bufs ptrs;
  for (int r = 0; r < p; ++r) {
    bufs.push_back(on_device(dev, std::vector<float>(8, 1.0f)));
    ptrs.push_back(bufs.back().ptr());
  }
  comm.reduce_scatter({0, 1, 2, 3}, ptrs, 8, Traffic::dp);
  for (int r = 0; r < p; ++r) {
    const std::vector<float> b = on_host(dev, bufs[size_t(r)]);
    EXPECT_EQ(b[size_t(2 * r)], 4.0f);
    EXPECT_EQ(b[size_t(2 * r + 1)], 4.0f);
  }
}

TEST(TrainComm, TreeAllReduceAndPointToPoint) {
  for (int p : {1, 2, 3, 5, 8}) {
    Comm comm(p);
    std::vector<std::vector<double>> v(size_t(p), std::vector<double>(2));
    std::vector<int> g;
    std::vector<double*> ptrs;
    for (int r = 0; r < p; ++r) v[size_t(r)] = {double(r), 1.0}, g.push_back(r), ptrs.push_back(v[size_t(r)].data());
    comm.tree_all_reduce(g, ptrs, 2, Traffic::control);
    for (int r = 0; r < p; ++r) EXPECT_EQ(v[size_t(r)], (std::vector<double>{p * (p - 1) / 2.0, double(p)}));
    // Binomial tree: 2 (p - 1) messages in all (p - 1 up, p - 1 down).
    double msgs = 0;
    for (int r = 0; r < p; ++r) msgs += comm.counters(r).messages_sent[int(Traffic::control)];
    EXPECT_EQ(msgs, 2.0 * (p - 1));
  }
  CpuDevice dev;
  Comm comm(2);
  comm.set_device(&dev);
  const mc::device::Buffer<float> x = on_device(dev, std::vector<float>{1, 2, 3});
  const mc::device::Buffer<float> y(dev, 3);
  comm.send(0, 1, 7, x.ptr(), 3, Traffic::pp, 0);
  EXPECT_FALSE(comm.has(1, 0, 7, 0));  // sent in tick 0: visible from tick 1
  EXPECT_TRUE(comm.has(1, 0, 7, 1));
  comm.recv(1, 0, 7, y.ptr(), 3);
  EXPECT_EQ(on_host(dev, y), (std::vector<float>{1, 2, 3}));
  EXPECT_THROW(comm.recv(1, 0, 7, y.ptr(), 3), std::logic_error);
  comm.send(0, 1, 8, x.ptr(), 3, Traffic::pp, 0);
  EXPECT_THROW(comm.recv(1, 0, 8, y.ptr(), 2), std::logic_error);  // a message of another size: a schedule bug
}

TEST(TrainCorpus, SyntheticLanguageEntropyMatchesItsText) {
  const SyntheticLanguage L = make_synthetic_language();
  // pi is stationary.
  std::vector<double> next(L.words.size(), 0.0);
  for (size_t i = 0; i < L.words.size(); ++i)
    for (auto [j, p] : L.next[i]) next[size_t(j)] += L.stationary[i] * p;
  for (size_t i = 0; i < next.size(); ++i) EXPECT_NEAR(next[i], L.stationary[i], 1e-9);
  // The empirical conditional entropy and bytes per word of a long sample agree with the formula.
  const std::string text = generate_text(L, 400000, 5);
  std::map<std::string, std::map<std::string, double>> counts;
  std::string prev, cur;
  double words = 0;
  for (char ch : text) {
    if (ch != ' ') {
      cur.push_back(ch);
      continue;
    }
    if (!prev.empty()) counts[prev][cur] += 1;
    prev = cur;
    cur.clear();
    words += 1;
  }
  double h = 0, total = 0;
  for (auto& [w, nexts] : counts) {
    double n = 0;
    for (auto& [x, c] : nexts) n += c;
    for (auto& [x, c] : nexts) h -= c * std::log(c / n);
    total += n;
  }
  EXPECT_NEAR(h / total, L.entropy_nats_per_word, 0.01);
  EXPECT_NEAR(double(text.size()) / words, L.mean_bytes_per_word, 0.05);
  EXPECT_GT(L.entropy_nats_per_byte(), 0.05);
  EXPECT_LT(L.entropy_nats_per_byte(), 0.5);
}

TEST(TrainConfig, BadLayoutsAreRefusedWithTheRule) {
  auto refused = [](TrainConfig c, const std::string& words) {
    try {
      validate(c);
      ADD_FAILURE() << "accepted: " << words;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  TrainConfig c;
  c.parallel.tp = 3;
  refused(c, "multiple of tp");
  c = {};
  c.parallel.pp = 2;
  c.parallel.zero = 2;
  c.parallel.dp = 2;
  refused(c, "ZeRO-2");
  c = {};
  c.parallel.dp = 3;
  refused(c, "multiple of dp");
  c = {};
  c.model = {.vocab = 256, .context = 2048, .layers = 48, .width = 2048, .heads = 16};
  refused(c, "over the limit");
  // Config files: a misspelt key is an error naming it.
  EXPECT_THROW(parse_config(nlohmann::json{{"dpp", 2}}), mc::LoadError);
  EXPECT_THROW(parse_config(nlohmann::json{{"zero", 4}}), mc::LoadError);
  const TrainConfig ok = parse_config(nlohmann::json{{"dp", 2}, {"schedule", "gpipe"}, {"model", {{"width", 32}}}});
  EXPECT_EQ(ok.parallel.dp, 2);
  EXPECT_EQ(ok.parallel.schedule, PipeSchedule::gpipe);
  EXPECT_EQ(ok.model.width, 32);
  EXPECT_EQ(parse_config(to_json(ok)).parallel.dp, 2);
}

TEST(TrainConfig, LearningRateWarmsUpThenFollowsACosine) {
  OptimConfig o;
  o.lr = 1.0;
  o.warmup_steps = 10;
  o.min_lr_fraction = 0.1;
  EXPECT_DOUBLE_EQ(learning_rate(o, 0, 110), 0.1);
  EXPECT_DOUBLE_EQ(learning_rate(o, 9, 110), 1.0);
  EXPECT_NEAR(learning_rate(o, 60, 110), 0.55, 1e-12);  // half-way down the cosine
  EXPECT_NEAR(learning_rate(o, 110, 110), 0.1, 1e-12);
}

}  // namespace
