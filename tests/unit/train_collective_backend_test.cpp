// Collectives on another transport (train/comm.h: CollectiveBackend; NCCL on a workstation's GPUs). A CPU
// stand-in that sums in another order (last member first, in double) checks the plumbing on any machine:
// Comm hands the arithmetic over and still counts the ring's bytes, and a whole training run through it
// matches the engine's own rings. The NCCL test itself needs two GPUs and skips otherwise.
#include "cuda/nccl_collectives.h"
#include "device_test_util.h"
#include "train/kernels/cpu_device.h"
#include "train/train.h"

#include "device/registry.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace mc::train;
using mc::device::DPtr;
using mc::device::Raw;

// The CPU device's memory is host memory: these tests wrap host vectors as its buffers.
Comm::Bufs wrap(std::vector<std::vector<float>>& v) {
  Comm::Bufs out;
  for (auto& b : v) out.push_back(Raw::wrap(b.data()));
  return out;
}

class ReverseOrderSums : public CollectiveBackend {
 public:
  bool refuse = false;
  int calls = 0;
  const char* name() const override { return "reverse-order sums"; }
  bool serves(const mc::device::Device& d) const override { return d.host_addressable(); }
  bool reduce_scatter(const std::vector<int>& g, const Bufs& bufs, size_t n) override {
    const std::vector<float*> b = raw(bufs);
    if (refuse) return false;
    ++calls;
    const size_t p = g.size(), chunk = n / p;
    for (size_t i = 0; i < p; ++i)
      for (size_t j = i * chunk; j < (i + 1) * chunk; ++j) b[i][j] = sum(b, j);
    return true;
  }
  bool all_gather(const std::vector<int>& g, const Bufs& bufs, size_t n) override {
    const std::vector<float*> b = raw(bufs);
    if (refuse) return false;
    ++calls;
    const size_t p = g.size(), chunk = n / p;
    for (size_t i = 0; i < p; ++i)
      for (size_t k = 0; k < p; ++k)
        if (k != i) std::copy(b[i] + i * chunk, b[i] + (i + 1) * chunk, b[k] + i * chunk);
    return true;
  }
  bool all_reduce(const std::vector<int>& g, const Bufs& bufs, size_t n) override {
    const std::vector<float*> b = raw(bufs);
    if (refuse) return false;
    ++calls;
    std::vector<float> s(n);
    for (size_t j = 0; j < n; ++j) s[j] = sum(b, j);
    for (size_t i = 0; i < g.size(); ++i) std::copy(s.begin(), s.end(), b[i]);
    return true;
  }

 private:
  static std::vector<float*> raw(const Bufs& bufs) {  // a backend over host-addressable memory
    std::vector<float*> out;
    for (DPtr<float> p : bufs) out.push_back(Raw::ptr(p));
    return out;
  }
  // Note: reduce_scatter writes member i's chunk while later members still read theirs: sum() reads
  // only chunk j of every member, and each member's chunk j is written once, after all reads of j.
  static float sum(const std::vector<float*>& b, size_t j) {
    double s = 0;
    for (size_t k = b.size(); k-- > 0;) s += b[k][j];
    return float(s);
  }
};

std::vector<std::vector<float>> buffers(int p, size_t n) {
  std::vector<std::vector<float>> b(static_cast<size_t>(p), std::vector<float>(n));
  for (int r = 0; r < p; ++r)
    for (size_t i = 0; i < n; ++i) b[size_t(r)][i] = float(std::sin(double(r * 131 + int(i))) * 10);
  return b;
}

TEST(CollectiveBackend, CommHandsTheArithmeticOverAndCountsTheSameRing) {
  const int p = 4;
  const size_t n = 64;
  for (int op = 0; op < 3; ++op) {
    CpuDevice dev;
    Comm own(p), other(p);
    own.set_device(&dev), other.set_device(&dev);
    ReverseOrderSums rev;
    other.set_collective_backend(&rev);
    auto a = buffers(p, n), b = a;
    std::vector<int> g = {0, 1, 2, 3};
    const Comm::Bufs pa = wrap(a), pb = wrap(b);
    if (op == 0) own.all_reduce(g, pa, n, Traffic::dp), other.all_reduce(g, pb, n, Traffic::dp);
    if (op == 1) own.reduce_scatter(g, pa, n, Traffic::dp), other.reduce_scatter(g, pb, n, Traffic::dp);
    if (op == 2) own.all_gather(g, pa, n, Traffic::dp), other.all_gather(g, pb, n, Traffic::dp);
    EXPECT_EQ(rev.calls, 1);
    EXPECT_EQ(other.backend_calls(), 1);
    const size_t chunk = n / p;
    for (int r = 0; r < p; ++r) {
      // The defined part: everything (all-reduce, all-gather) or the member's own chunk (reduce-scatter).
      const size_t lo = op == 1 ? size_t(r) * chunk : 0, hi = op == 1 ? lo + chunk : n;
      for (size_t i = lo; i < hi; ++i)
        EXPECT_NEAR(a[size_t(r)][i], b[size_t(r)][i], 1e-5) << "op " << op << " rank " << r;
      EXPECT_EQ(own.counters(r).bytes_sent[int(Traffic::dp)], other.counters(r).bytes_sent[int(Traffic::dp)]);
      EXPECT_EQ(own.counters(r).messages_sent[int(Traffic::dp)], other.counters(r).messages_sent[int(Traffic::dp)]);
    }
    EXPECT_EQ(own.step_log().size(), other.step_log().size());
    EXPECT_EQ(other.pending(), 0u);
  }
  // A backend that cannot serve the group: the engine's ring runs, bit for bit as without one.
  CpuDevice dev;
  Comm own(p), other(p);
  own.set_device(&dev), other.set_device(&dev);
  ReverseOrderSums rev;
  rev.refuse = true;
  other.set_collective_backend(&rev);
  auto a = buffers(p, n), b = a;
  const Comm::Bufs pa = wrap(a), pb = wrap(b);
  own.all_reduce({0, 1, 2, 3}, pa, n, Traffic::dp);
  other.all_reduce({0, 1, 2, 3}, pb, n, Traffic::dp);
  EXPECT_EQ(a, b);
  EXPECT_EQ(other.backend_calls(), 0);
}

TEST(CollectiveBackend, TrainingThroughItMatchesTheEnginesRings) {
  // dp 2 x tp 2 with ZeRO-1: every kind of collective (tp all-reduce, dp reduce-scatter and all-gather).
  TrainConfig c;
  c.model = {.vocab = 256, .context = 16, .layers = 2, .width = 32, .heads = 4};
  c.batch = 8;
  c.steps = 10;
  c.parallel = {.dp = 2, .tp = 2, .pp = 1, .zero = 1};
  Trainer own(c, default_corpus()), other(c, default_corpus());
  auto rev = std::make_unique<ReverseOrderSums>();
  ReverseOrderSums* seen = rev.get();
  other.use_collective_backend(std::move(rev));
  while (own.step_index() < c.steps) own.step(), other.step();
  EXPECT_GT(seen->calls, 10);
  for (size_t i = 0; i < own.losses().size(); ++i)
    EXPECT_NEAR(other.losses()[i], own.losses()[i], 2e-4 * own.losses()[i]);
  const auto pa = own.full_parameters(), pb = other.full_parameters();
  double worst = 0;
  for (size_t i = 0; i < pa.size(); ++i) worst = std::max(worst, double(std::fabs(pa[i] - pb[i])));
  EXPECT_LT(worst, 2e-4);
  const auto predicted = other.predicted_bytes_per_worker();
  for (int w = 0; w < 4; ++w) EXPECT_DOUBLE_EQ(other.comm().step_counters(w).data_bytes_sent(), predicted[size_t(w)]);
}

TEST(CollectiveBackend, WorkersShareGpusRoundRobinOneRankPerGpu) {
  using mc::cuda::device_of_worker;
  using mc::cuda::group_devices;
  EXPECT_EQ(device_of_worker(5, 4), 1);
  EXPECT_EQ(device_of_worker(5, 0), 0);
  EXPECT_EQ(group_devices({0, 1, 2, 3}, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(group_devices({1, 3}, 2), std::vector<int>{}) << "workers 1 and 3 both on GPU 1: the engine's ring";
  EXPECT_EQ(group_devices({4, 6, 9}, 8), (std::vector<int>{4, 6, 1}));
}

TEST(CollectiveBackend, NcclOnTwoGpusMatchesTheEnginesRing) {
  std::string why;
  const mc::device::DeviceKind* cuda = mc::device::find_device_kind("cuda");
  if (!cuda) GTEST_SKIP() << "no CUDA device in this build";
  std::unique_ptr<CollectiveBackend> nccl = cuda->open_collectives(&why);
  if (!nccl) GTEST_SKIP() << why;
  std::unique_ptr<mc::device::Device> gpu = cuda->open(&why);
  ASSERT_TRUE(gpu) << why;
  const int p = 2;
  const size_t n = 1 << 12;
  for (int op = 0; op < 3; ++op) {
    // The engine's ring on the GPUs (a and b start equal), NCCL in place on the same kind of buffers.
    Comm own(p), other(p);
    own.set_device(gpu.get()), other.set_device(gpu.get());
    other.set_collective_backend(nccl.get());
    auto a = buffers(p, n), b = a;
    std::vector<mc::device::Buffer<float>> da, db;
    Comm::Bufs pa, pb;
    for (int r = 0; r < p; ++r) {
      gpu->bind_worker(r);
      da.push_back(mc::test::on_device(*gpu, a[size_t(r)]));
      db.push_back(mc::test::on_device(*gpu, b[size_t(r)]));
      pa.push_back(da.back().ptr()), pb.push_back(db.back().ptr());
    }
    if (op == 0) own.all_reduce({0, 1}, pa, n, Traffic::dp), other.all_reduce({0, 1}, pb, n, Traffic::dp);
    if (op == 1) own.reduce_scatter({0, 1}, pa, n, Traffic::dp), other.reduce_scatter({0, 1}, pb, n, Traffic::dp);
    if (op == 2) own.all_gather({0, 1}, pa, n, Traffic::dp), other.all_gather({0, 1}, pb, n, Traffic::dp);
    EXPECT_EQ(other.backend_calls(), 1) << "served by NCCL";
    gpu->synchronize();
    for (int r = 0; r < p; ++r) {
      a[size_t(r)] = mc::test::on_host(*gpu, da[size_t(r)]);
      b[size_t(r)] = mc::test::on_host(*gpu, db[size_t(r)]);
    }
    for (int r = 0; r < p; ++r) {
      const size_t lo = op == 1 ? size_t(r) * n / p : 0, hi = op == 1 ? lo + n / p : n;
      for (size_t i = lo; i < hi; ++i)
        ASSERT_NEAR(a[size_t(r)][i], b[size_t(r)][i], 1e-5) << op << " " << r << " " << i;
    }
  }
}

}  // namespace
