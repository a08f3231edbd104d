// Checkpoints: a resumed run continues bit for bit; damaged files are refused and the previous one kept.
#include "train/train.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace {

using namespace mc::train;
namespace fs = std::filesystem;

TrainConfig small(int dp, int tp, int pp, int zero) {
  TrainConfig c;
  c.model = {.vocab = 256, .context = 16, .layers = 2, .width = 16, .heads = 2};
  c.batch = 4;
  c.steps = 8;
  c.parallel = {.dp = dp, .tp = tp, .pp = pp, .zero = zero};
  return c;
}

std::string fresh_dir(const std::string& name) {
  const std::string d = testing::TempDir() + "mc_train_ckpt_" + name + "_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed());
  fs::remove_all(d);
  return d;
}

void resume_is_bit_for_bit(const TrainConfig& c, const std::string& name) {
  const std::string dir = fresh_dir(name);
  Trainer straight(c, default_corpus());
  while (straight.step_index() < c.steps) straight.step();

  Trainer first(c, default_corpus());
  while (first.step_index() < 3) first.step();
  const std::string path = first.save_checkpoint(dir);
  EXPECT_EQ(latest_checkpoint(dir), path);
  Trainer resumed(c, default_corpus());  // a new process would start exactly like this
  resumed.load_checkpoint(path);
  EXPECT_EQ(resumed.step_index(), 3);
  while (resumed.step_index() < c.steps) resumed.step();
  EXPECT_EQ(resumed.losses(), straight.losses());
  EXPECT_EQ(resumed.full_parameters(), straight.full_parameters());
  fs::remove_all(dir);
}

TEST(TrainCheckpoint, ResumeContinuesBitForBit) {
  resume_is_bit_for_bit(small(1, 1, 1, 0), "single");
  resume_is_bit_for_bit(small(2, 2, 1, 1), "dp_tp_zero1");
  resume_is_bit_for_bit(small(2, 1, 1, 3), "zero3");
  resume_is_bit_for_bit(small(1, 1, 2, 0), "pipeline");
}

TEST(TrainCheckpoint, DamagedFilesAreRefusedAndThePreviousKept) {
  const std::string dir = fresh_dir("damaged");
  TrainConfig c = small(2, 1, 1, 1);
  Trainer t(c, default_corpus());
  t.step();
  const std::string good = t.save_checkpoint(dir);
  t.step();
  const std::string newer = t.save_checkpoint(dir);
  ASSERT_EQ(latest_checkpoint(dir), newer);
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().extension(), ".mcck");  // no temp left

  std::string bytes;
  {
    std::ifstream in(newer, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto expect_refused = [&](const std::string& content, const std::string& words) {
    {
      std::ofstream out(newer, std::ios::binary | std::ios::trunc);
      out << content;
    }
    Trainer other(c, default_corpus());
    try {
      other.load_checkpoint(newer);
      ADD_FAILURE() << "a damaged checkpoint was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(newer), std::string::npos) << "the message names the file";
    }
    EXPECT_EQ(other.step_index(), 0);  // nothing half-loaded
    other.load_checkpoint(good);       // the previous checkpoint is intact and loads
    EXPECT_EQ(other.step_index(), 1);
  };
  expect_refused(bytes.substr(0, bytes.size() / 2), "checksum");
  expect_refused(bytes.substr(0, 10), "truncated");
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x10;
  expect_refused(flipped, "checksum");
  expect_refused("hello, not a checkpoint at all....", "not a megacluster checkpoint");

  // A checkpoint of another layout is refused, naming the difference.
  Trainer wrong(small(1, 1, 1, 0), default_corpus());
  EXPECT_THROW(wrong.load_checkpoint(good), std::runtime_error);
  fs::remove_all(dir);
}

}  // namespace
