// train_memory_limit_test.cpp - the training lab refuses, before allocating anything, a run whose workers
// together need more memory than the machine has, however high memory_limit_bytes (--memory-limit-GB) is
// set (issue 15: --memory-limit-GB 100000 with a huge model ended in std::bad_alloc after 50 s).
#include "train/train.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace {

TEST(TrainMemoryLimit, MachineMemoryIsKnownHere) {
  // Linux reports its physical memory; every machine this project runs on has between 1 GiB and 64 TiB.
  const double have = mc::train::machine_memory_bytes();
  EXPECT_GT(have, double(1ull << 30));
  EXPECT_LT(have, 64.0 * double(1ull << 40));
}

TEST(TrainMemoryLimit, ARunLargerThanTheMachineIsRefusedUpFront) {
  mc::train::TrainConfig c;
  c.model = {.vocab = 256, .context = 4096, .layers = 96, .width = 8192, .heads = 64};
  c.batch = 64;
  c.memory_limit_bytes = 1e14;  // --memory-limit-GB 100000
  const double need = mc::train::estimate_worker_bytes(c);
  ASSERT_GT(need, mc::train::machine_memory_bytes());  // the premise: this model does not fit here
  try {
    mc::train::validate(c);
    ADD_FAILURE() << "a run of " << need << " bytes was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("this machine has"), std::string::npos) << m;
    EXPECT_NE(m.find("for its 1 workers"), std::string::npos) << m;
    EXPECT_NE(m.find("smaller model"), std::string::npos) << m;
  }
  // A trainer is never built for it: the constructor validates first.
  EXPECT_THROW(mc::train::Trainer(c, std::string(1 << 20, 'a')), std::invalid_argument);
}

TEST(TrainMemoryLimit, AnMpiRankCountsOnlyItsOwnWorker) {
  // Eight data-parallel workers of about a quarter of this machine's memory each: too much for one
  // process holding all eight, fine for an MPI rank holding one (the others live on other hosts).
  const double have = mc::train::machine_memory_bytes();
  ASSERT_GT(have, 0.0);
  const int C = std::max(64, int(std::sqrt(0.25 * have / 16 / 12) / 64) * 64);  // one layer ~ 12 C^2 params
  mc::train::TrainConfig c;
  c.model = {.vocab = 256, .context = 8, .layers = 1, .width = C, .heads = C / 64};
  c.parallel.dp = 8;
  c.batch = 8;
  c.memory_limit_bytes = 1e15;
  const double need = mc::train::estimate_worker_bytes(c);
  ASSERT_LT(need, 0.9 * have);
  ASSERT_GT(8 * need, 0.9 * have);
  EXPECT_THROW(mc::train::validate(c), std::invalid_argument);
  EXPECT_NO_THROW(mc::train::validate(c, 1));
}

TEST(TrainMemoryLimit, TheDefaultLabRunIsNotAffected) {
  mc::train::TrainConfig c;  // the lab's default model, 2 GiB limit
  EXPECT_NO_THROW(mc::train::validate(c));
  EXPECT_LT(mc::train::estimate_worker_bytes(c) * c.parallel.workers(), 0.9 * mc::train::machine_memory_bytes());
}

}  // namespace
