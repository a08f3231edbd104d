// jobs_test.cpp - the one job runner (ui/jobs.h) both ways it runs: on a worker thread (native) and in
// slices per frame (the browser build, here NullPlatform::threads = false). The reference for each
// job is the engine called directly, once, with no runner.
#include "scenario/player.h"
#include "scenario/scenario.h"
#include "sim/sim.h"
#include "tests/ui/headless.h"
#include "ui/scenario_bindings.h"

#include <stdexcept>

using mc::test::assets;
using mc::test::Headless;
using mc::test::NullPlatform;

namespace {

// Counts to n, k per slice (a slice budget is not a count: that is the job's own business).
class CountJob final : public mc::ui::Job {
 public:
  explicit CountJob(int n, bool fail_at_half = false) : n_(n), fail_(fail_at_half) {}
  bool step(double) override {
    for (int k = 0; k < 10 && count < n_; ++k) {
      if (cancelled()) return true;
      if (fail_ && count == n_ / 2) throw std::runtime_error("half way");
      ++count;
    }
    ++slices;
    set_progress(double(count) / n_);
    return count >= n_;
  }
  int count = 0, slices = 0;

 private:
  int n_;
  bool fail_;
};

}  // namespace

TEST(JobRunner, SlicedJobsAdvanceOnlyInPump) {
  NullPlatform platform;
  platform.threads = false;
  mc::ui::JobRunner runner;
  runner.set_platform(&platform);
  auto job = std::make_shared<CountJob>(95);
  runner.start(job);
  EXPECT_EQ(job->count, 0) << "nothing runs before the first frame";
  runner.pump();
  EXPECT_EQ(job->count, 10);
  EXPECT_FALSE(job->done());
  EXPECT_DOUBLE_EQ(job->progress(), 10.0 / 95);
  for (int f = 0; f < 20 && !job->done(); ++f) runner.pump();
  EXPECT_TRUE(job->done());
  EXPECT_EQ(job->count, 95);
  EXPECT_EQ(job->slices, 10);
  EXPECT_TRUE(job->error().empty());
  EXPECT_DOUBLE_EQ(job->progress(), 1.0);
}

TEST(JobRunner, CancelAndFailureEndTheJobWithASaidReason) {
  for (bool threads : {false, true}) {
    SCOPED_TRACE(threads ? "worker thread" : "sliced");
    NullPlatform platform;
    platform.threads = threads;
    mc::ui::JobRunner runner;
    runner.set_platform(&platform);
    auto failing = std::make_shared<CountJob>(100, true);
    runner.start(failing);
    auto cancelled = std::make_shared<CountJob>(1 << 30);
    runner.start(cancelled);
    cancelled->cancel();
    // Frames until both end (a worker thread ends on its own time: wait by the clock, not a frame count).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!(failing->done() && cancelled->done()) && std::chrono::steady_clock::now() < deadline) {
      runner.pump();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_TRUE(failing->done());
    EXPECT_EQ(failing->error(), "half way") << "a throwing job is a failed job, not a crashed app";
    EXPECT_EQ(failing->count, 50);
    ASSERT_TRUE(cancelled->done());
    EXPECT_EQ(cancelled->error(), "cancelled");
    EXPECT_LT(cancelled->count, 1 << 30);
  }
}

// The sim panel's job (on its default machine, 9,984 GPUs), in slices, gives the report one call gives.
TEST(JobRunner, SlicedSimulationIsTheOneShotSimulation) {
  const mc::Catalog cat = mc::load_catalog(assets());
  NullPlatform platform;
  platform.threads = false;
  mc::ui::JobRunner runner;
  runner.set_platform(&platform);
  const nlohmann::json config = mc::JsonDoc::load(assets() + "/configs/simulate.json").value();  // the panel's default
  auto job = std::make_shared<mc::ui::SimJob>(cat, mc::sim::parse_sim_request(config, "simulate.json"),
                                              std::vector<int>{0, 624}, 5.0, 2);
  runner.start(job);
  int frames = 0;
  while (!job->done() && frames < 100000) runner.pump(0), ++frames;
  ASSERT_TRUE(job->done());
  ASSERT_TRUE(job->error().empty()) << job->error();
  EXPECT_GT(frames, 1) << "the work was spread over frames";
  mc::sim::SimOptions o;
  o.run_days = 5;
  o.seed = 2;
  o.timeline_gpu = -1;
  o.timeline_gpus = {0, 624};
  o.max_timeline_spans = 4000;
  o.include_critical_path_steps = true;
  o.include_link_series = false;
  nlohmann::json want = mc::sim::simulate_json(cat, config, o), got = mc::sim::to_json(*job->result);
  for (auto* j : {&want, &got})
    (*j)["sim"].erase("wall_s"), (*j)["sim"].erase("events_per_s"), (*j)["run"].erase("wall_s");
  EXPECT_EQ(got, want);
}

// A link to a late step runs the steps before it as a job: the app keeps drawing frames (busy, with a
// progress bar) and ends on the state the engine's own player reaches by jumping there in one call.
TEST(JobRunner, ScenarioJumpRunsInSlicesAndEndsWhereThePlayerJumps) {
  Headless h(1440, 900);
  NullPlatform platform;
  platform.threads = false;
  mc::ui::App app({assets(), &platform, ""});
  auto& s = app.state();
  const std::string id = "failures-at-scale";
  s.scenarios.request_id = id;
  s.scenarios.request_step = 99;  // past the end: the last step, as a link with too large a step
  h.frame(app);
  ASSERT_TRUE(s.scenarios.job) << (s.scenarios.errors.empty() ? "" : s.scenarios.errors.front());
  EXPECT_TRUE(mc::ui::panels_busy(s));
  EXPECT_FALSE(s.scenarios.player) << "the player appears when its steps are done";
  int frames = 0;
  while (s.scenarios.job && frames < 10000) h.frame(app), ++frames;
  ASSERT_FALSE(s.scenarios.job);
  ASSERT_TRUE(s.scenarios.player);
  EXPECT_GE(frames, 1);
  mc::scenario::ParseResult r = mc::scenario::load_scenario(std::string(MC_SOURCE_DIR) + "/scenarios/" + id + ".json",
                                                            mc::scenario::default_actions(), &*s.catalog);
  ASSERT_TRUE(r.ok());
  mc::scenario::Player ref(*r.scenario, &*s.catalog);
  ref.jump(99);
  EXPECT_EQ(s.scenarios.player->current(), ref.current());
  EXPECT_EQ(s.scenarios.player->report().digest, ref.report().digest);
  EXPECT_EQ(s.classroom.narration_markdown.rfind(ref.outcome()->title, 0), 0u) << "the step reached the narration pane";
}
