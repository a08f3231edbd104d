// Checkpoints: a resumed run continues bit for bit; damaged files are refused and the previous one kept.
#include "train/train.h"

#include <gtest/gtest.h>

#include <cstring>
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
  resume_is_bit_for_bit(small(2, 1, 1, 2), "zero2");
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

  // A checkpoint of another layout is refused, naming the keys that differ and nothing else.
  Trainer wrong(small(1, 1, 1, 0), default_corpus());
  try {
    wrong.load_checkpoint(good);
    ADD_FAILURE() << "a checkpoint of another layout was accepted";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("dp: checkpoint 2, this run 1"), std::string::npos) << m;
    EXPECT_NE(m.find("zero: checkpoint 1, this run 0"), std::string::npos) << m;
    EXPECT_EQ(m.find("width"), std::string::npos) << "keys that agree are not listed: " << m;
  }
  fs::remove_all(dir);
}

// Version 1 files shard ZeRO-2/3 as one flat buffer; version 2 by unit (layer). A version-1 file of a
// ZeRO-2/3 run is refused with what to do; the other stages' arrays did not change and still load.
TEST(TrainCheckpoint, VersionOneFilesLoadWhereTheLayoutIsUnchanged) {
  for (int zero : {0, 1, 2, 3}) {
    const std::string dir = fresh_dir("v1_" + std::to_string(zero));
    const TrainConfig c = small(2, 1, 1, zero);
    Trainer t(c, default_corpus());
    t.step();
    const std::string path = t.save_checkpoint(dir);
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    ASSERT_GT(bytes.size(), 20u);
    const uint32_t v1 = 1;
    std::memcpy(bytes.data() + 8, &v1, 4);
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 over everything but the stored sum (checkpoint.cpp)
    for (size_t i = 0; i + 8 < bytes.size(); ++i) h = (h ^ uint8_t(bytes[i])) * 0x100000001b3ull;
    std::memcpy(bytes.data() + bytes.size() - 8, &h, 8);
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << bytes;
    }
    Trainer other(c, default_corpus());
    if (zero < 2) {
      other.load_checkpoint(path);
      EXPECT_EQ(other.full_parameters(), t.full_parameters());
    } else {
      try {
        other.load_checkpoint(path);
        ADD_FAILURE() << "a version-1 ZeRO-3 checkpoint was accepted";
      } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("version 1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("restart the run"), std::string::npos) << e.what();
      }
      EXPECT_EQ(other.step_index(), 0);
    }
    fs::remove_all(dir);
  }
}

// --resume (run_json): a damaged newest file is skipped, reported and kept on disk; the run continues from
// the previous one and still ends bit for bit where an uninterrupted run ends.
TEST(TrainCheckpoint, ResumeSkipsADamagedNewestFileAndSaysSo) {
  const std::string dir = fresh_dir("resume_skip");
  nlohmann::json cfg = to_json(small(2, 1, 1, 1));
  cfg["steps"] = 6;
  const nlohmann::json straight = run_json(cfg);

  nlohmann::json part = cfg;
  part["steps"] = 4;
  part["checkpoint"] = dir;
  part["checkpoint_every"] = 2;
  const nlohmann::json first = run_json(part);
  ASSERT_EQ(first["checkpoints"].size(), 2u);  // steps 2 and 4
  const std::string older = first["checkpoints"][0], newest = first["checkpoints"][1];
  {
    std::ofstream out(newest, std::ios::binary | std::ios::trunc);
    out << "half a file";
  }
  nlohmann::json resume = cfg;
  resume["checkpoint"] = dir;
  resume["resume"] = true;
  const nlohmann::json r = run_json(resume);
  EXPECT_EQ(r["resumed_from"], older);
  ASSERT_EQ(r["skipped_checkpoints"].size(), 1u);
  EXPECT_EQ(r["skipped_checkpoints"][0]["path"], newest);
  EXPECT_NE(r["skipped_checkpoints"][0]["error"].get<std::string>().find(newest), std::string::npos);
  EXPECT_TRUE(fs::exists(newest)) << "a refused file is never deleted";
  EXPECT_EQ(r["steps_run"], 4);
  EXPECT_EQ(r["losses"], straight["losses"]);

  // A checkpoint already past the steps asked for is refused with the fix, not run for zero steps.
  resume["steps"] = 3;
  try {
    run_json(resume);
    ADD_FAILURE() << "resuming past --steps was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--steps 6"), std::string::npos) << e.what();
  }
  // A sound checkpoint of another configuration is not skipped: resuming there would mix two runs.
  {
    nlohmann::json other = to_json(small(1, 1, 1, 0));
    other["steps"] = 7;
    other["checkpoint"] = dir;
    run_json(other);  // writes ckpt-00000007.mcck, the newest
    nlohmann::json again = resume;
    again["steps"] = 8;
    EXPECT_THROW(run_json(again), CheckpointMismatch);
    fs::remove(dir + "/ckpt-00000007.mcck");
  }
  // Every file damaged: refused, naming the directory and the newest file's fault.
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ofstream out(e.path(), std::ios::binary | std::ios::trunc);
    out << "x";
  }
  resume["steps"] = 6;
  try {
    run_json(resume);
    ADD_FAILURE() << "a directory of damaged checkpoints was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("none of its 3 checkpoints"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
