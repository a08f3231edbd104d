// collective_ui_test.cpp - "Collectives in motion" draws the engine's animation (sim/collective_animation.h)
// and nothing else: stepping visits exactly the simulator's event times, the figures beside the picture are
// the engine's figures as the formatter writes them, playing reaches the end of the call, and a setting the
// engine refuses is said in the panel; each GPU's buffer ends as the collective promises.
#include "core/format.h"
#include "sim/collective_animation.h"
#include "tests/ui/headless.h"
#include "ui/access.h"
#include "ui/app.h"
#include "ui/drawn_text.h"
#include "ui/explorer.h"

#include <gtest/gtest.h>

#include <imgui_internal.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

TEST(CollectiveUi, StepVisitsTheSimulatorsEventsAndTheFiguresAreTheEngines) {
  for (auto [w, hgt] : {std::pair{1440.f, 900.f}, std::pair{1280.f, 720.f}}) {
    mc::test::Headless h(w, hgt, true);
    mc::test::NullPlatform platform;
    mc::ui::App app({mc::test::assets(), &platform, "collective"});
    auto& s = app.state();
    s.collective.settings.gpus = 16;  // two servers of the default cluster: NVLink and the NICs
    h.frame(app);
    h.frame(app);
    ASSERT_TRUE(s.collective.error.empty()) << s.collective.error;
    ASSERT_TRUE(s.collective.anim.has_value());
    const mc::sim::CollectiveAnimation& a = *s.collective.anim;
    EXPECT_TRUE(mc::test::overflowing_windows().empty()) << mc::test::overflowing_windows().front();

    // The figures are the engine's, formatted as the panel's neighbours format them.
    const std::string figures = s.probe.widget_text["collective.figures"];
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.3g ms", a.total_s * 1e3);  // a 16-GPU all-reduce of 64 MiB: milliseconds
    EXPECT_NE(figures.find(ms), std::string::npos) << figures;
    EXPECT_NE(figures.find(mc::format_quantity(a.busbw_GBps * 1e9, "B/s")), std::string::npos) << figures;
    EXPECT_NE(figures.find(mc::format_quantity(a.bytes_sent_per_gpu, "bytes")), std::string::npos) << figures;
    EXPECT_NE(s.probe.widget_text["collective.rule"].find("2(p-1)/p"), std::string::npos);
    // Which way the ring turns, from the engine's ring order: the first GPUs, then back to the first.
    std::string ring = std::to_string(a.ranks[0]) + " -> " + std::to_string(a.ranks[1]) + " -> ";
    EXPECT_NE(figures.find("Ring order, each GPU sending to the next: " + ring), std::string::npos) << figures;
    EXPECT_NE(figures.find(std::to_string(a.ranks.back()) + " -> " + std::to_string(a.ranks[0])), std::string::npos)
        << figures;

    // ">" walks the simulator's events one by one, to the end of the call.
    const std::vector<double> events = mc::sim::event_times(a);
    s.collective.t_s = 0;
    s.collective.playing = false;
    for (double t : events) {
      mc::test::click_widget(h, app, "collective.step");
      ASSERT_DOUBLE_EQ(s.collective.t_s, t);
    }
    EXPECT_DOUBLE_EQ(s.collective.t_s, a.total_s);

    // Play from the start runs to the end of the call and stops there.
    s.collective.t_s = 0;
    s.collective.playing = true;
    s.collective.speed = 4;
    const int frames = int(mc::ui::CollectiveView::kSecondsPerCall / 4 * 60) + 10;
    for (int i = 0; i < frames && s.collective.playing; ++i) h.frame(app);
    EXPECT_FALSE(s.collective.playing);
    EXPECT_DOUBLE_EQ(s.collective.t_s, a.total_s);
  }
}

TEST(CollectiveUi, ARefusedSettingIsSaidInThePanel) {
  mc::test::Headless h(1280, 720, true);
  mc::test::NullPlatform platform;
  mc::ui::App app({mc::test::assets(), &platform, "collective"});
  auto& s = app.state();
  s.collective.settings.algorithm = mc::sim::Algorithm::hierarchical;
  s.collective.settings.gpus = 12;  // a server and a half: hierarchical needs whole servers
  h.frame(app);
  h.frame(app);
  EXPECT_FALSE(s.collective.anim.has_value());
  EXPECT_NE(h.text.find("pick a group that fills whole servers"), std::string::npos) << h.text;
}

// Each GPU's buffer, as the figure beside the picture gives it, holds what the collective promises
// (Patarasuk & Yuan 2009; nccl-tests PERFORMANCE.md): before the call every piece holds one GPU's data; after
// a reduce-scatter each GPU holds one piece summed over all p GPUs, after a ring all-reduce every piece, and
// after an all-gather every GPU holds all p pieces.
TEST(CollectiveUi, EachGpusBufferEndsAsTheCollectiveSays) {
  using mc::sim::CollectiveKind;
  struct Case {
    CollectiveKind kind;
    int complete_at_end;  // pieces complete: summing every GPU's data (all-gather: pieces held), per GPU
  };
  const int p = 8;
  for (const Case c : {Case{CollectiveKind::reduce_scatter, 1}, Case{CollectiveKind::all_reduce, p},
                       Case{CollectiveKind::all_gather, p}}) {
    for (auto [w, hgt] : {std::pair{1440.f, 900.f}, std::pair{1024.f, 768.f}}) {
      SCOPED_TRACE(std::to_string(int(c.kind)) + " at " + std::to_string(int(w)));
      mc::test::Headless h(w, hgt, true);
      mc::test::NullPlatform platform;
      mc::ui::App app({mc::test::assets(), &platform, "collective"});
      auto& s = app.state();
      s.collective.settings.kind = c.kind;
      s.collective.settings.algorithm = mc::sim::Algorithm::ring;
      s.collective.settings.gpus = p;
      s.collective.playing = false;
      h.frame(app);
      h.frame(app);
      ASSERT_TRUE(s.collective.anim.has_value()) << s.collective.error;
      EXPECT_TRUE(mc::test::overflowing_windows().empty()) << mc::test::overflowing_windows().front();
      // The table under the figure: a header, then a row a GPU: its name, then the counts.
      auto rows = [&] {
        const auto& nodes = app.access_tree().nodes;
        std::vector<std::vector<double>> out;
        for (size_t i = 0; i + 1 < nodes.size(); ++i) {
          if (nodes[i].role != mc::ui::access::Role::figure || nodes[i].name != "Each GPU's buffer") continue;
          std::istringstream lines(nodes[i + 1].value);
          std::string line;
          std::getline(lines, line);  // the header
          while (std::getline(lines, line)) {
            std::istringstream cells(line);
            std::string cell;
            std::vector<double> row;
            std::getline(cells, cell, '\t');  // "GPU n"
            while (std::getline(cells, cell, '\t')) row.push_back(std::stod(cell));
            out.push_back(row);
          }
        }
        return out;
      };
      // The mirror is read at most every 100 ms (App::frame): a frame after that reads the moment set.
      auto show = [&](double t) {
        s.collective.t_s = t;
        h.frame(app);
        std::this_thread::sleep_for(std::chrono::milliseconds(120));
        h.frame(app);
      };
      show(0);
      // The figure's sentence at the call's start, as a screen reader gets it.
      if (c.kind != CollectiveKind::all_gather) {
        std::string summary;
        for (const auto& n : app.access_tree().nodes)
          if (n.role == mc::ui::access::Role::figure && n.name == "Each GPU's buffer") summary = n.value;
        EXPECT_NE(summary.find("pieces complete is 0 at every GPU"), std::string::npos) << summary;
        EXPECT_NE(summary.find("fewest GPUs in a piece is 1 at every GPU"), std::string::npos) << summary;
      }
      auto start = rows();
      ASSERT_EQ(start.size(), size_t(p));
      for (const auto& r : start) {
        EXPECT_EQ(r[0], c.kind == CollectiveKind::all_gather ? 1 : 0);
        if (c.kind != CollectiveKind::all_gather) {
          EXPECT_EQ(r[2], 1);  // no piece holds another GPU's data yet
        }
      }
      show(s.collective.anim->total_s);
      auto end = rows();
      ASSERT_EQ(end.size(), size_t(p));
      for (const auto& r : end) {
        EXPECT_EQ(r[0], c.complete_at_end);
        if (c.kind != CollectiveKind::all_gather) {
          EXPECT_EQ(r[2], p);
        }
      }
    }
  }
}

// The picture's words (each GPU's number, a server's and a switch's name) are never drawn over one another: at a
// phone's 320 px, where side by side two servers left a GPU 16 px and "9101112131415" ran together, the servers
// stack, a row each, and a number that would touch its neighbour's is left out; at 1280 and 1440 px nothing
// changes. Read from the glyphs the frame draws (ui/drawn_text.h), for two servers and for three.
TEST(CollectiveUi, NoWordOfThePictureIsDrawnOverAnotherAtAnyWidth) {
  for (auto [w, hgt] : {std::pair{320.f, 1600.f}, std::pair{1280.f, 720.f}, std::pair{1440.f, 900.f}}) {
    for (int first : {0, 4}) {
      SCOPED_TRACE(std::to_string(int(w)) + " px, from GPU " + std::to_string(first));
      mc::test::Headless h(w, hgt, true);
      mc::test::NullPlatform platform;
      mc::ui::App app({mc::test::assets(), &platform, "collective"});
      auto& s = app.state();
      s.collective.settings.gpus = 16;
      s.collective.settings.first_gpu = first;  // from GPU 4: half a server, a server, half a server
      s.collective.playing = false;
      for (int f = 0; f < 3; ++f) h.frame(app);
      ASSERT_TRUE(s.collective.anim.has_value()) << s.collective.error;
      const auto r = s.probe.widget_rects.find("collective.picture");
      ASSERT_NE(r, s.probe.widget_rects.end());
      const ImRect picture(r->second.x, r->second.y, r->second.x + r->second.w, r->second.y + r->second.h);
      ASSERT_LE(picture.Max.y, hgt) << "the picture is below the fold: nothing to read";
      const auto lists = mc::test::window_lists("###main");
      EXPECT_GE(mc::test::visible_glyphs(lists, picture), 20u) << "the GPUs' numbers and the servers' names";
      for (const std::string& o : mc::test::glyphs_over_each_other(lists, picture))
        ADD_FAILURE() << o << " are drawn over each other in the picture";
    }
  }
}
