// zero_ui_test.cpp - "ZeRO, layer by layer" draws the engine's step (sim/zero_animation.h) and nothing
// else: stepping visits exactly the simulator's event times, the figures are the engine's as the
// formatter writes them, the layer GPU 0 computes is the one the engine says, and a step that does not fit
// in the GPU's memory is said with what to change.
#include "core/format.h"
#include "sim/zero_animation.h"
#include "tests/ui/headless.h"
#include "ui/app.h"
#include "ui/explorer.h"

#include <gtest/gtest.h>

TEST(ZeroUi, StepVisitsTheSimulatorsEventsAndTheFiguresAreTheEngines) {
  for (auto [w, hgt] : {std::pair{1440.f, 900.f}, std::pair{1280.f, 720.f}}) {
    mc::test::Headless h(w, hgt, true);
    mc::test::NullPlatform platform;
    mc::ui::App app({mc::test::assets(), &platform, "zero"});
    auto& s = app.state();
    h.frame(app);
    h.frame(app);
    ASSERT_TRUE(s.zero.error.empty()) << s.zero.error;
    ASSERT_TRUE(s.zero.anim.has_value());
    const mc::sim::ZeroAnimation& a = *s.zero.anim;
    EXPECT_TRUE(mc::test::overflowing_windows().empty()) << mc::test::overflowing_windows().front();
    const std::string figures = s.probe.widget_text["zero.figures"];
    EXPECT_NE(figures.find(mc::format_gib(a.states_bytes)), std::string::npos) << figures;
    EXPECT_NE(figures.find(mc::format_gib(a.peak_bytes)), std::string::npos) << figures;
    EXPECT_NE(figures.find(mc::format_gib(a.bytes_moved_per_gpu)), std::string::npos) << figures;
    // With the GPU's memory far above the step's peak, the bars are drawn to the peak (what rises and falls
    // with the layers is then a part of each bar that moves), and the picture says so.
    if (a.hbm_bytes > 1.5 * a.peak_bytes) {
      const std::string drawn = mc::test::visible_panels_text();
      EXPECT_NE(drawn.find("dashed: the step's peak, " + mc::format_gib(a.peak_bytes)), std::string::npos) << drawn;
      EXPECT_NE(drawn.find("GPU memory " + mc::format_gib(a.hbm_bytes) + ", above the bars"), std::string::npos);
    }

    // ">" walks the simulator's events one by one to the end of the step; at each stop the text names the
    // layer the engine's frame computes.
    const std::vector<double> events = mc::sim::event_times(a);
    s.zero.t_s = 0;
    s.zero.playing = false;
    for (size_t i = 1; i < events.size(); ++i) {
      mc::test::click_widget(h, app, "zero.step");
      ASSERT_DOUBLE_EQ(s.zero.t_s, events[i]);
      if (i % 37 == 0) {
        h.frame(app);
        const mc::sim::ZeroFrame f = mc::sim::frame_at(a, s.zero.t_s);
        if (f.computing_layer >= 0 && !f.optimizer) {
          const std::string now = std::string(f.computing_backward ? "backward" : "forward") + " of layer " +
                                  std::to_string(f.computing_layer);
          EXPECT_NE(s.probe.widget_text["zero.figures"].find(now), std::string::npos)
              << s.probe.widget_text["zero.figures"];
        }
      }
    }
    EXPECT_DOUBLE_EQ(s.zero.t_s, a.total_s);
  }
}

TEST(ZeroUi, AStepThatDoesNotFitSaysWhatToChange) {
  mc::test::Headless h(1280, 720, true);
  mc::test::NullPlatform platform;
  mc::ui::App app({mc::test::assets(), &platform, "zero"});
  auto& s = app.state();
  s.zero.settings.stage = 0;  // GPT-3 2.7B with plain data parallelism: 16 bytes a parameter, 42 GB, on 32 GB V100s
  h.frame(app);
  h.frame(app);
  ASSERT_TRUE(s.zero.anim.has_value()) << s.zero.error;
  EXPECT_GT(s.zero.anim->peak_bytes, s.zero.anim->hbm_bytes);
  EXPECT_NE(h.text.find("does not fit in the GPU's"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("choose a higher ZeRO stage or more GPUs"), std::string::npos);
  s.zero.settings.stage = 3;
  h.frame(app);
  h.frame(app);
  EXPECT_NE(h.text.find("The peak fits"), std::string::npos) << h.text;
}
