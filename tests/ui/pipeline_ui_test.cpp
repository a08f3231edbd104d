// pipeline_ui_test.cpp - "Pipeline in motion" draws the engine's animation (sim/pipeline_animation.h) and
// nothing else: stepping visits exactly the timeline's event times, the figures beside the picture are the
// engine's figures as the formatter writes them, a click follows a micro-batch, playing reaches the end of
// the iteration, and a setting the engine refuses is said in the panel beside the control that changes it.
#include "core/format.h"
#include "sim/pipeline_animation.h"
#include "tests/ui/headless.h"
#include "ui/app.h"
#include "ui/drawn_text.h"
#include "ui/explorer.h"

#include <gtest/gtest.h>

TEST(PipelineUi, StepVisitsTheTimelinesEventsAndTheFiguresAreTheEngines) {
  for (auto [w, hgt] : {std::pair{1440.f, 900.f}, std::pair{1280.f, 720.f}}) {
    for (auto sch : {mc::PipeSchedule::gpipe, mc::PipeSchedule::one_f_one_b, mc::PipeSchedule::interleaved}) {
      SCOPED_TRACE(std::to_string(int(w)) + " schedule " + mc::schedule_name(sch));
      mc::test::Headless h(w, hgt, true);
      mc::test::NullPlatform platform;
      mc::ui::App app({mc::test::assets(), &platform, "pipeline"});
      auto& s = app.state();
      s.pipeline.settings.schedule = int(sch);
      h.frame(app);
      h.frame(app);
      ASSERT_TRUE(s.pipeline.error.empty()) << s.pipeline.error;
      ASSERT_TRUE(s.pipeline.anim.has_value());
      const mc::sim::PipelineAnimation& a = *s.pipeline.anim;
      EXPECT_EQ(a.stages, s.pipeline.settings.stages);
      EXPECT_EQ(a.micro_batches, s.pipeline.settings.micro_batches);
      EXPECT_TRUE(mc::test::overflowing_windows().empty()) << mc::test::overflowing_windows().front();

      // ">" walks the timeline's events one by one, to the end of the iteration.
      const std::vector<double> events = mc::sim::event_times(a);
      s.pipeline.t_s = 0;
      s.pipeline.playing = false;
      for (size_t i = 1; i < events.size(); ++i) {
        mc::test::click_widget(h, app, "pipeline.step");
        ASSERT_EQ(s.pipeline.t_s, events[i]) << "event " << i;
      }
      EXPECT_EQ(s.pipeline.t_s, a.total_s);

      // At the end: the figures are the engine's, formatted as the narration formats them.
      h.frame(app);
      const std::string figures = s.probe.widget_text["pipeline.figures"];
      EXPECT_NE(figures.find(mc::format_seconds(a.total_s)), std::string::npos) << figures;
      EXPECT_NE(figures.find(mc::format_percent(a.bubble_fraction)), std::string::npos) << figures;
      EXPECT_EQ(mc::sim::frame_at(a, a.total_s).bubble_so_far, a.bubble_fraction);
      const std::string rule = s.probe.widget_text["pipeline.rule"];
      EXPECT_NE(rule.find(a.rule), std::string::npos) << rule;
      EXPECT_NE(rule.find(mc::format_percent(a.analytic_bubble)), std::string::npos) << rule;
      EXPECT_NE(h.text.find(a.rule), std::string::npos) << "the rule with its numbers is drawn";
      // A backward block says so where it has room ("B1"), not by its shade alone (a projector washes it out).
      const std::string drawn = mc::test::visible_panels_text();
      EXPECT_TRUE(mc::ui::contains_word(drawn, "B1")) << drawn;

      // Play from the start runs to the end of the iteration and stops there.
      s.pipeline.t_s = 0;
      s.pipeline.playing = true;
      s.pipeline.speed = 4;
      const int frames = int(mc::ui::PipelineView::kSecondsPerIteration / 4 * 60) + 10;
      for (int i = 0; i < frames && s.pipeline.playing; ++i) h.frame(app);
      EXPECT_FALSE(s.pipeline.playing);
      EXPECT_EQ(s.pipeline.t_s, a.total_s);
    }
  }
}

// A click on a forward block follows that micro-batch: the block under the click is found from the
// engine's own rows, so this checks the picture's geometry against the timeline.
TEST(PipelineUi, AClickFollowsTheMicroBatchUnderIt) {
  mc::test::Headless h(1440, 900, true);
  mc::test::NullPlatform platform;
  mc::ui::App app({mc::test::assets(), &platform, "pipeline"});
  auto& s = app.state();
  h.frame(app);
  h.frame(app);
  ASSERT_TRUE(s.pipeline.anim.has_value());
  const mc::sim::PipelineAnimation& a = *s.pipeline.anim;
  s.pipeline.playing = false;
  s.pipeline.t_s = a.total_s;
  h.frame(app);
  // The first stage's first block is micro-batch 1's forward (every schedule starts so).
  const mc::sim::PipeBlock& b = a.rows[0].front();
  ASSERT_EQ(b.kind, mc::sim::PipeBlockKind::forward);
  const mc::ui::Rect r = s.probe.widget_rects["pipeline.picture"];
  const float label_w = ImGui::CalcTextSize("stage 00 ").x + 8, plot_w = r.w - label_w - 12;
  const float row_h = (r.h - ImGui::GetTextLineHeightWithSpacing() - 4 - 8) / float(a.stages);
  const double mid = 0.5 * (b.t_start_s + b.t_end_s);
  mc::test::click_at(h, app, ImVec2(r.x + label_w + float(mid / a.total_s) * plot_w, r.y + 4 + row_h * 0.5f));
  EXPECT_EQ(s.pipeline.settings.follow, b.micro_batch + 1);
  h.frame(app);
  EXPECT_NE(h.text.find("Following micro-batch 1:"), std::string::npos) << h.text;
}

TEST(PipelineUi, ARefusedSettingIsSaidInThePanelWithItsControl) {
  for (auto [w, hgt] : {std::pair{1440.f, 900.f}, std::pair{1280.f, 720.f}}) {
    mc::test::Headless h(w, hgt, true);
    mc::test::NullPlatform platform;
    mc::ui::App app({mc::test::assets(), &platform, "pipeline"});
    auto& s = app.state();
    s.pipeline.settings.schedule = int(mc::PipeSchedule::interleaved);
    s.pipeline.settings.micro_batches = 6;  // Megatron-LM's interleaving runs micro-batches in groups of p = 4
    h.frame(app);
    h.frame(app);
    EXPECT_FALSE(s.pipeline.anim.has_value());
    EXPECT_NE(h.text.find("Cannot animate this"), std::string::npos) << h.text;
    EXPECT_NE(h.text.find("micro-batches divisible by the stages"), std::string::npos) << h.text;
    EXPECT_TRUE(s.probe.widget_rects.count("pipeline.micro_batches")) << "the control that fixes it is drawn";
    EXPECT_TRUE(mc::test::overflowing_windows().empty()) << mc::test::overflowing_windows().front();
  }
}
