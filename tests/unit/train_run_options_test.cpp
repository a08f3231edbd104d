// The training run's options and result as plain data (train/run.h): one codec that round-trips every key,
// a config laid over a base key by key (as the CLI lays its options over a file), located errors, and a
// result whose JSON says what the trainer did.
#include "core/json_doc.h"
#include "train/run.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>

namespace {

using mc::train::RunOptions;

RunOptions unusual() {
  RunOptions o;
  o.train.model = {.vocab = 200, .context = 24, .layers = 3, .width = 48, .heads = 6};
  o.train.optim.lr = 1.25e-3;
  o.train.optim.warmup_steps = 3;
  o.train.optim.clip_norm = 0.5;
  o.train.parallel = {.dp = 2, .tp = 3, .pp = 1, .zero = 2, .micro_batches = 4, .schedule = mc::PipeSchedule::gpipe};
  o.train.batch = 16;
  o.train.steps = 7;
  o.train.seed = 42;
  o.train.memory_limit_bytes = 3.5e9;
  o.train.device = "cpu";
  o.train.precision = mc::device::Precision::bf16;
  o.corpus = "story";
  o.checkpoint = "/tmp/ckpt";
  o.checkpoint_every = 2;
  o.resume = true;
  o.bench = true;
  o.sample_bytes = 33;
  o.sample_every = 5;
  return o;
}

TEST(RunOptions, EveryKeyRoundTripsThroughItsCodec) {
  const RunOptions o = unusual();
  const RunOptions back = mc::train::parse_run_options(mc::train::to_json(o), "round-trip");
  EXPECT_TRUE(back == o) << mc::train::to_json(back).dump() << "\n" << mc::train::to_json(o).dump();
  // The defaults too: a key written at its default reads back as the default.
  const RunOptions defaults;
  EXPECT_TRUE(mc::train::parse_run_options(mc::train::to_json(defaults)) == defaults);
  // And each field matters: change one and the two differ.
  RunOptions other = o;
  other.sample_every = 6;
  EXPECT_FALSE(mc::train::parse_run_options(mc::train::to_json(other)) == o);
}

TEST(RunOptions, AConfigOverridesItsBaseKeyByKey) {
  const RunOptions base = unusual();
  const RunOptions o = mc::train::parse_run_options(
      nlohmann::json{{"steps", 3}, {"model", {{"layers", 1}}}, {"corpus", "default"}}, "options", base);
  EXPECT_EQ(o.train.steps, 3);
  EXPECT_EQ(o.train.model.layers, 1);
  EXPECT_EQ(o.corpus, "default");
  // Everything the override left out is the base's, the nested model keys included.
  EXPECT_EQ(o.train.model.width, base.train.model.width);
  EXPECT_EQ(o.train.parallel.dp, base.train.parallel.dp);
  EXPECT_EQ(o.train.parallel.schedule, base.train.parallel.schedule);
  EXPECT_EQ(o.train.precision, base.train.precision);
  EXPECT_EQ(o.sample_every, base.sample_every);
  EXPECT_EQ(o.checkpoint, base.checkpoint);
  // parse_config reads the same keys the same way (one parser): its TrainConfig is the options' one.
  EXPECT_TRUE(mc::train::parse_config(mc::train::to_json(base), "x") == base.train);
}

TEST(RunOptions, ABadKeyIsALocatedErrorNamingTheSource) {
  try {
    mc::train::parse_run_options(nlohmann::json{{"sample_every", -1}}, "the command-line options");
    FAIL() << "sample_every -1 was accepted";
  } catch (const mc::LoadError& e) {
    EXPECT_EQ(e.file, "the command-line options");
    EXPECT_EQ(e.key, "sample_every");
  }
  const mc::JsonDoc doc = mc::JsonDoc::parse("{\n  \"steps\": 2,\n  \"resume\": \"yes\"\n}", "lab.json");
  try {
    mc::train::parse_run_options(doc.root());
    FAIL() << "resume \"yes\" was accepted";
  } catch (const mc::LoadError& e) {
    EXPECT_EQ(e.file, "lab.json");
    EXPECT_EQ(e.line, 3);
    EXPECT_EQ(e.key, "resume");
  }
}

TEST(KeptRun, ThePagesRecordReadsBackAsWrittenAndABrokenOneSaysWhere) {
  RunOptions o;
  o.train.steps = 40;
  o.train.parallel.dp = 2;
  o.corpus = "tiny";
  for (const bool running : {false, true}) {
    const mc::train::KeptRun k =
        mc::train::parse_kept_run(mc::train::kept_run_text(mc::train::to_json(o), running), "kept");
    EXPECT_TRUE(k.options == o);
    EXPECT_EQ(k.running, running);
  }
  // A record a newer or broken page wrote: the error names the record, its line and the key, so the lab can
  // say why it starts afresh instead of resuming.
  try {
    mc::train::parse_kept_run("{\"config\": {\"steps\": 2},\n \"runing\": true}", "the run kept by the browser");
    FAIL() << "an unknown key was accepted";
  } catch (const mc::LoadError& e) {
    EXPECT_EQ(e.file, "the run kept by the browser");
    EXPECT_EQ(e.line, 2);
    EXPECT_EQ(e.key, "runing");
  }
  EXPECT_THROW(mc::train::parse_kept_run("{\"config\": {\"steps\": -3}}", "kept"), mc::LoadError);
  EXPECT_THROW(mc::train::parse_kept_run("not json", "kept"), mc::LoadError);
}

TEST(RunResult, ItsJsonTellsWhatTheTrainerDid) {
  RunOptions o;
  o.train.model = {.vocab = 256, .context = 16, .layers = 1, .width = 16, .heads = 2};
  o.train.batch = 4;
  o.train.steps = 6;
  o.train.parallel.dp = 2;
  o.train.device = "cpu";
  o.sample_every = 3;
  o.sample_bytes = 10;
  const mc::train::RunResult r = mc::train::run(o);
  ASSERT_EQ(r.losses.size(), 6u);
  EXPECT_EQ(r.steps_run, 6);
  ASSERT_EQ(r.workers.size(), 2u);
  ASSERT_EQ(r.samples.size(), 2u);  // steps 3 and 6
  EXPECT_EQ(r.samples[1].step, 6);
  const nlohmann::json j = mc::train::to_json(r);
  EXPECT_EQ(j["losses"].size(), 6u);
  EXPECT_DOUBLE_EQ(j["first_loss"].get<double>(), r.losses.front());
  // The mean of the last five losses, computed here independently.
  EXPECT_DOUBLE_EQ(j["final_loss"].get<double>(), std::accumulate(r.losses.begin() + 1, r.losses.end(), 0.0) / 5);
  EXPECT_EQ(j["bytes_sent_per_worker"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["bytes_sent_per_worker"][1].get<double>(), r.workers[1].bytes_sent);
  // Data-parallel workers exchange gradients, so each sent bytes on its links, and the links add up to it.
  double on_links = 0;
  for (const auto& l : r.workers[0].links) on_links += l.bytes;
  EXPECT_GT(r.workers[0].bytes_sent, 0);
  EXPECT_DOUBLE_EQ(on_links, r.workers[0].bytes_sent);
  EXPECT_EQ(j["config"], mc::train::to_json(o.train));
  EXPECT_FALSE(j.contains("transport"));  // one process: no MPI keys
  EXPECT_FALSE(j.contains("mfu"));        // the CPU has no sourced peak
  // run_json is that JSON for the same options written as JSON (timings aside).
  nlohmann::json again = mc::train::run_json(mc::train::to_json(o));
  for (const char* k : {"wall_s", "tokens_per_s", "tokens_per_s_median_step", "step_seconds", "gflops"}) {
    again.erase(k);
  }
  nlohmann::json mine = j;
  for (const char* k : {"wall_s", "tokens_per_s", "tokens_per_s_median_step", "step_seconds", "gflops"}) {
    mine.erase(k);
  }
  EXPECT_EQ(again, mine);
}

}  // namespace
