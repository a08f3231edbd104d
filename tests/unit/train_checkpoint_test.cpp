// Checkpoints: a resumed run continues bit for bit; damaged files are refused and the previous one kept.
#include "train/train.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

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
  const std::string d = testing::TempDir() + "mc_train_ckpt_" + name + "_" +
                        std::to_string(::testing::UnitTest::GetInstance()->random_seed());
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

// A file whose checksum is right but whose header was crafted (by hand or by a fuzzer): each bad field is
// refused with the file, the field and the rule, and nothing is loaded.
TEST(TrainCheckpoint, CraftedHeaderFieldsAreRefusedLocated) {
  const std::string dir = fresh_dir("crafted");
  const TrainConfig c = small(1, 1, 1, 0);
  Trainer t(c, default_corpus());
  t.step();
  t.step();
  const std::string path = t.save_checkpoint(dir);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  uint64_t hlen = 0;
  std::memcpy(&hlen, bytes.data() + 12, 8);
  const std::string header = bytes.substr(20, hlen);
  // Rewrites one header field (a JSON fragment replacing "key": value) and fixes length and checksum.
  // A non-empty `rename` also renames the key (a header missing the field).
  auto crafted = [&](const std::string& key, const std::string& value, const std::string& rename = "") {
    nlohmann::json h = nlohmann::json::parse(header);
    std::string text = h.dump();
    const std::string k = "\"" + key + "\":";
    const size_t at = text.find(k);
    size_t end = at + k.size();
    int depth = 0;
    for (; end < text.size(); ++end) {  // the value ends at the next ',' or '}' outside brackets
      const char ch = text[end];
      if (ch == '[' || ch == '{') ++depth;
      if (ch == ']' || ch == '}') {
        if (depth == 0) break;
        --depth;
      }
      if (ch == ',' && depth == 0) break;
    }
    std::string edited = text.substr(0, at);
    edited.append(1, '"').append(rename.empty() ? key : rename).append("\":").append(value).append(text, end);
    text = std::move(edited);
    std::string out = bytes.substr(0, 12);
    const uint64_t n = text.size();
    out.append(reinterpret_cast<const char*>(&n), 8);
    out += text;
    out += bytes.substr(20 + hlen);
    uint64_t sum = 0xcbf29ce484222325ull;  // FNV-1a 64 over everything but the stored sum (checkpoint.cpp)
    for (size_t i = 0; i + 8 < out.size(); ++i) sum = (sum ^ uint8_t(out[i])) * 0x100000001b3ull;
    std::memcpy(out.data() + out.size() - 8, &sum, 8);
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << out;
  };
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"step", "9e99", "out of range"},
      {"step", "-5", "out of range"},
      {"step", "1099511627776", "out of range"},
      {"step", "1", "holds 2 losses for 1 steps"},
      {"data_rng", "\"12ab\"", "decimal digits"},
      {"data_rng", "\"99999999999999999999\"", "2^64"},
      {"losses", "{\"a\": 1}", "list of numbers"},
      {"losses", "[1, \"x\"]", "expected a number"},
      {"config", "[]", "must be a JSON object"},
      {"config", "{\"dp\": 0}", "out of range"},
      {"config", "{\"model\": {\"vocab\": 256}, \"colour\": 1}", "colour"},
  };
  for (const auto& [key, value, expect] : cases) {
    crafted(key, value);
    Trainer other(c, default_corpus());
    try {
      other.load_checkpoint(path);
      ADD_FAILURE() << key << " = " << value << " was accepted";
    } catch (const std::runtime_error& e) {
      const std::string w = e.what();
      EXPECT_NE(w.find(path), std::string::npos) << w;
      EXPECT_NE(w.find(key), std::string::npos) << w;
      EXPECT_NE(w.find(expect), std::string::npos) << key << " = " << value << ": " << w;
    }
    EXPECT_EQ(other.step_index(), 0) << key;  // nothing was loaded
  }
  // A header without its config (a fuzzer found this escaping as a JSON library exception).
  const std::string saved_config = nlohmann::json::parse(header)["config"].dump();
  crafted("config", saved_config, "konfig");
  try {
    Trainer other(c, default_corpus());
    other.load_checkpoint(path);
    ADD_FAILURE() << "a header without config was accepted";
  } catch (const std::runtime_error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find(path), std::string::npos) << w;
    EXPECT_NE(w.find("config"), std::string::npos) << w;
  }
  crafted("step", "2");  // the original values load again
  Trainer ok(c, default_corpus());
  ok.load_checkpoint(path);
  EXPECT_EQ(ok.step_index(), 2);
  fs::remove_all(dir);
}
