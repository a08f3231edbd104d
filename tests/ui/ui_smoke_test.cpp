// Every registered panel, drawn headless (Dear ImGui with no renderer, as in its example_null) for a few
// frames at two window sizes: no ImGui assert, no sanitizer report, and the catalog panel reacts to a
// simulated click the way a user's click would.
#include "catalog/catalog.h"
#include "device/device.h"
#include "tests/ui/headless.h"
#include "train/train.h"
#include "ui/app.h"
#include "ui/explorer.h"
#include "ui/scenario_bindings.h"

#include <imgui.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <unistd.h>

using mc::test::assets;
using mc::test::click_at;
using mc::test::click_widget;
using mc::test::Headless;
using mc::test::NullPlatform;

TEST(UiSmoke, EveryPanelDrawsAtTwoSizes) {
  ASSERT_FALSE(mc::ui::panel_registry().empty());
  for (auto size : {ImVec2(1440, 900), ImVec2(800, 600)}) {
    Headless h(size.x, size.y);
    NullPlatform platform;
    mc::ui::App app({assets(), &platform, ""});
    ASSERT_TRUE(app.state().catalog.has_value()) << app.state().catalog_error;
    for (const auto& p : mc::ui::panel_registry()) {
      SCOPED_TRACE(p.id);
      EXPECT_EQ(app.command({{"panel", p.id}}), "");
      for (int i = 0; i < 4; ++i) h.frame(app);
      EXPECT_EQ(app.state().active_panel, p.id);
    }
  }
}

TEST(UiSmoke, ClickingAHeaderSortsAndARowSelects) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "catalog"});
  for (int i = 0; i < 3; ++i) h.frame(app);
  // Click near the left edge: a row spans all columns, most of them scrolled out of view.
  auto click = [&](const mc::ui::Rect& r) { click_at(h, app, ImVec2(r.x + std::min(r.w / 2, 30.0f), r.y + r.h / 2)); };
  auto rects = app.state().probe.widget_rects;
  ASSERT_TRUE(rects.count("catalog.header.hbm_bytes"));
  click(rects["catalog.header.hbm_bytes"]);
  EXPECT_EQ(app.state().catalog_view.sort_key, "hbm_bytes");
  rects = app.state().probe.widget_rects;
  ASSERT_TRUE(rects.count("catalog.row.a100-40gb"));
  click(rects["catalog.row.a100-40gb"]);
  EXPECT_EQ(app.state().selection.record, "a100-40gb");
  // Export goes through the platform: CSV with a header line and one line per GPU.
  rects = app.state().probe.widget_rects;
  click(rects["catalog.export_csv"]);
  ASSERT_TRUE(platform.saved.count("catalog-gpus.csv"));
  const std::string& csv = platform.saved["catalog-gpus.csv"];
  EXPECT_EQ(size_t(std::count(csv.begin(), csv.end(), '\n')), app.state().catalog->table("gpus")->records.size() + 1);
  EXPECT_NE(csv.find("v100-32gb"), std::string::npos);
}

TEST(UiSmoke, BrokenCatalogIsShownNotFatal) {
  Headless h(1024, 768);
  NullPlatform platform;
  mc::ui::App app({"/nonexistent", &platform, ""});
  EXPECT_FALSE(app.state().catalog.has_value());
  EXPECT_NE(app.state().catalog_error.find("cannot open"), std::string::npos);
  for (int i = 0; i < 3; ++i) h.frame(app);
  // Every panel that reads the catalog shows why it cannot, in its place (the frame draws it once for all,
  // Panel::needs_catalog), and none of them is drawn or throws.
  int needing = 0;
  for (const mc::ui::Panel& p : mc::ui::panel_registry()) {
    if (!p.needs_catalog) continue;
    ++needing;
    ASSERT_TRUE(mc::ui::open_panel(app.state(), p.id)) << p.id;
    h.frame(app);
    h.frame(app);
    EXPECT_TRUE(app.state().probe.widget_rects.count(p.id + ".catalog_error"))
        << p.id << " does not say why it is empty";
    EXPECT_FALSE(app.state().panel_errors.count(p.id)) << p.id << ": " << app.state().panel_errors[p.id];
  }
  EXPECT_GE(needing, 9);
}

TEST(UiSmoke, AFileNobodyOpensIsReportedInTheStatusLine) {
  Headless h(1024, 768);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  EXPECT_FALSE(app.open_file("photo.png", std::string("\x89PNG", 4)));
  EXPECT_NE(app.state().status.find("photo.png"), std::string::npos);
  h.frame(app);
}

// Every step of every shipped scenario, played in the app: the panels it drives draw without an error.
TEST(UiSmoke, EveryShippedScenarioStepDrawsCleanly) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  std::ifstream idx(std::string(MC_SOURCE_DIR) + "/scenarios/index.json");
  ASSERT_TRUE(idx.good());
  nlohmann::json index = nlohmann::json::parse(idx);
  int scenarios = 0;
  for (const auto& e : index["scenarios"]) {
    std::string id = e.is_string() ? e.get<std::string>() : e.value("file", e.value("id", ""));
    if (id.size() > 5 && id.substr(id.size() - 5) == ".json") id.resize(id.size() - 5);
    if (id == "predictable-scaling") continue;  // trains real models: covered by the scenario replay test
    SCOPED_TRACE(id);
    auto& sv = app.state().scenarios;
    ASSERT_TRUE(mc::test::open_scenario_step(h, app, id, 0));
    ASSERT_TRUE(sv.player) << (sv.errors.empty() ? "" : sv.errors.front());
    const int n = sv.player->step_count();
    for (int k = 0; k < n; ++k) {
      app.state().status.clear();
      ASSERT_TRUE(mc::test::open_scenario_step(h, app, id, k)) << "step " << k + 1;
      for (int f = 0; f < 3; ++f) h.frame(app);
      EXPECT_TRUE(sv.errors.empty()) << "step " << k + 1 << ": " << sv.errors.front();
      EXPECT_FALSE(app.state().classroom.narration_title.empty());
      const std::string& st = app.state().status;
      EXPECT_EQ(st.find("exception"), std::string::npos) << "step " << k + 1 << ": " << st;
    }
    ++scenarios;
  }
  EXPECT_GE(scenarios, 10);
}

// The training lab's buttons, clicked as a user would: it starts live, Pause stops the steps, Step trains
// exactly one, Reset starts over at step 0 and keeps the finished curve for comparison. Training runs as a
// job (a worker thread here, as natively; frame slices with threads off, as on the web), and the panel
// shows what the job published: after a pause that is exactly the trainer's own state.
void lab_start_pause_step_reset(bool threads) {
  SCOPED_TRACE(threads ? "worker thread" : "frame slices");
  Headless h(1440, 900);
  NullPlatform platform;
  platform.threads = threads;
  mc::ui::App app({assets(), &platform, "lab"});
  auto& lab = app.state().lab;
  // The buttons' logic on a smaller model than the lab's own (its steps are ~30x slower under the sanitizers).
  lab.config.model.context = 16, lab.config.model.width = 16, lab.config.batch = 2;
  // More steps than a click's four frames can train: a slice trains for 20 ms, which on an idle machine was a
  // third of the 300 steps, so the run ended before Pause landed.
  lab.config.steps = 100000;
  ASSERT_TRUE(frames_until(h, app, [&] { return lab.shown.report.step > 0 || !lab.error.empty(); })) << "no step";
  ASSERT_TRUE(lab.trainer) << lab.error;
  EXPECT_TRUE(lab.running);
  EXPECT_TRUE(lab.train_job) << "the lab trains while it is open";
  auto click = [&](const char* id) { click_widget(h, app, id); };
  click("lab.start");  // "Pause"
  EXPECT_FALSE(lab.running);
  ASSERT_TRUE(frames_until(h, app, [&] { return !lab.train_job; })) << "the job stops between two steps";
  const int paused_at = lab.shown.report.step;
  EXPECT_EQ(paused_at, lab.trainer->step_index()) << "the panel shows where the trainer stopped";
  EXPECT_EQ(lab.shown.report.losses, lab.trainer->losses());
  for (int i = 0; i < 5; ++i) h.frame(app);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  h.frame(app);
  EXPECT_EQ(lab.trainer->step_index(), paused_at) << "no steps while paused";
  click("lab.step");
  ASSERT_TRUE(frames_until(h, app, [&] { return !lab.train_job && !lab.step_once; }));
  EXPECT_EQ(lab.trainer->step_index(), paused_at + 1);
  EXPECT_EQ(lab.shown.report.step, paused_at + 1);
  EXPECT_FALSE(lab.running);
  // Step while running pauses first, then trains one step.
  click("lab.start");
  ASSERT_TRUE(frames_until(h, app, [&] { return lab.shown.report.step > paused_at + 1; }));
  click("lab.step");
  ASSERT_TRUE(frames_until(h, app, [&] { return !lab.train_job && !lab.step_once; }));
  EXPECT_FALSE(lab.running);
  const int stepped_at = lab.trainer->step_index();
  for (int i = 0; i < 5; ++i) h.frame(app);
  EXPECT_EQ(lab.trainer->step_index(), stepped_at) << "Step left the run paused";
  const size_t curves = lab.curves.size();
  click("lab.reset");
  ASSERT_TRUE(lab.trainer);
  EXPECT_EQ(lab.trainer->step_index(), 0);
  EXPECT_EQ(lab.shown.report.step, 0);
  EXPECT_FALSE(lab.running);
  EXPECT_EQ(lab.curves.size(), curves + 1) << "the run so far stays on the chart";
  EXPECT_EQ(lab.curves.back().losses.size(), size_t(stepped_at));
  click("lab.start");
  EXPECT_TRUE(lab.running);
  ASSERT_TRUE(frames_until(h, app, [&] { return lab.shown.report.step > 0; }));
}

TEST(UiSmoke, LabStartPauseStepReset) {
  lab_start_pause_step_reset(true);
  lab_start_pause_step_reset(false);
}

// The same run trained in the lab (as a job, in slices of whatever length the machine gives it) and by
// `megacluster train`'s engine call: the same losses, bit for bit, and the same bytes per worker.
TEST(UiSmoke, LabJobTrainsWhatTheCliTrains) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "lab"});
  auto& lab = app.state().lab;
  lab.config.steps = 12;
  ASSERT_TRUE(frames_until(h, app, [&] { return lab.shown.report.step == 12 && !lab.train_job; })) << lab.error;
  EXPECT_FALSE(lab.running) << "the run ends at its step count";
  nlohmann::json cfg = mc::train::to_json(lab.config);
  cfg["corpus"] = lab.corpus_id;
  const nlohmann::json r = mc::train::run_json(cfg);
  EXPECT_EQ(r["losses"].get<std::vector<double>>(), lab.shown.report.losses);
  EXPECT_EQ(r["memory_per_worker"], mc::train::to_json(lab.shown.report)["memory_per_worker"]);
  EXPECT_EQ(r["bytes_sent_per_worker"].get<std::vector<double>>(), lab.shown.report.bytes_sent);
}

// "panel/tab" (the web page's ?panel=, native --panel, a scenario's focus_panel) opens a panel at a tab.
TEST(UiSmoke, PanelSlashTabOpensThatTab) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App lab({assets(), &platform, "lab/scaling"});
  for (int i = 0; i < 3; ++i) h.frame(lab);
  EXPECT_EQ(lab.state().active_panel, "lab");
  EXPECT_TRUE(lab.state().probe.widget_rects.count("lab.sweep")) << "the scaling tab is shown";
  EXPECT_FALSE(lab.state().probe.widget_rects.count("lab.start")) << "the train tab is not";
  EXPECT_NE(lab.command({{"panel", "nope/links"}}).find("no panel has the id \"nope\""), std::string::npos);
  EXPECT_NE(lab.command({{"panel", "sim/linsk"}}).find("did you mean \"links\"?"), std::string::npos)
      << "a misspelt tab is refused, with the tab meant";
  EXPECT_EQ(lab.state().active_panel, "lab") << "and changes nothing";
  EXPECT_EQ(lab.command({{"panel", "sim/links"}}), "");
  EXPECT_EQ(lab.state().active_panel, "sim");
}

// The scaling tab's sweep takes the irreducible loss from what the lab knows about its corpus: the
// built-in language's entropy, and none for a dropped file, even one byte-identical to the built-in text.
TEST(UiSmoke, LabSweepTakesTheCorpusEntropyFromTheLab) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "lab/scaling"});
  for (int i = 0; i < 3; ++i) h.frame(app);
  auto& lab = app.state().lab;
  ASSERT_GT(lab.corpus_entropy, 0) << lab.corpus_error;
  click_widget(h, app, "lab.sweep");  // "Run sweep"
  ASSERT_TRUE(lab.sweep);
  EXPECT_EQ(lab.sweep_shown.result.entropy_floor, lab.corpus_entropy);
  click_widget(h, app, "lab.sweep");  // "Pause sweep"
  ASSERT_TRUE(frames_until(h, app, [&] { return !lab.sweep_job; })) << "the sweep's job stops between two steps";
  EXPECT_FALSE(lab.sweep_running);
  const std::string same = lab.corpus_text;
  ASSERT_TRUE(app.open_file("same.txt", same));
  EXPECT_EQ(lab.corpus_entropy, 0) << "a user's file: its entropy is not known";
  lab.sweep.reset();  // as if the paused sweep had finished: the next click starts a new one
  for (int i = 0; i < 2; ++i) h.frame(app);
  click_widget(h, app, "lab.sweep");
  ASSERT_TRUE(lab.sweep);
  EXPECT_EQ(lab.sweep_shown.result.entropy_floor, 0.0);
  lab.sweep_running = false;
}

// After a cancelled simulation the same configuration does not run again by itself, the Simulate button
// runs it, and a new configuration runs at once.
TEST(UiSmoke, SimCancelledThenSimulateAgain) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "sim"});
  auto& v = app.state().sim;
  // The simulation runs on a worker thread natively: wait for it by the clock (a loaded CI machine may
  // take a while), not by a count of frames, which pass in microseconds here.
  auto settle = [&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while ((v.iteration_job || !v.iteration) && std::chrono::steady_clock::now() < deadline) {
      h.frame(app);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  settle();
  ASSERT_TRUE(v.iteration.has_value()) << v.iteration_error;
  const std::optional<mc::ui::IterationKey> key = v.iteration_for;
  // What poll() leaves after the worker reports "cancelled".
  v.iteration_cancelled = true;
  v.cancelled_for = key;
  v.iteration_for.reset();
  for (int i = 0; i < 3; ++i) h.frame(app);
  EXPECT_FALSE(v.iteration_job) << "a cancelled configuration does not restart by itself";
  click_widget(h, app, "sim.restart");
  EXPECT_FALSE(v.iteration_cancelled);
  EXPECT_EQ(v.iteration_for, key) << "Simulate runs the cancelled configuration again";
  settle();
  // Cancelled, then a knob moves: the new configuration runs without a click.
  v.iteration_cancelled = true;
  v.cancelled_for = v.iteration_for;
  v.iteration_for.reset();
  v.config.sim.emplace().bucket_bytes = 40e6;
  h.frame(app);
  EXPECT_FALSE(v.iteration_cancelled);
  EXPECT_NE(v.iteration_for, key);
  settle();
}

// The status bar speaks to a class: the web build says "WebAssembly, CPU", never how it was configured.
TEST(UiSmoke, StatusBarSaysWhatComputesInPlainWords) {
  class WebLike : public NullPlatform {
   public:
    const char* name() const override { return "web"; }
    std::string compute_label() const override { return "WebAssembly, CPU"; }
  };
  Headless h(1280, 720);
  WebLike web;
  mc::ui::App app({assets(), &web, ""});
  h.frame(app);
  const std::string line = app.state_json()["status_bar"];
  EXPECT_NE(line.find("web | WebAssembly, CPU"), std::string::npos) << line;
  NullPlatform plain;
  mc::ui::App native({assets(), &plain, ""});
  h.frame(native);
  for (const std::string& l : {line, native.state_json()["status_bar"].get<std::string>()}) {
    EXPECT_EQ(l.find("nvcc"), std::string::npos) << l;
    EXPECT_EQ(l.find("configure"), std::string::npos) << l;
    if (!mc::device_info().gpu_available) {
      EXPECT_NE(l.find("CPU"), std::string::npos) << l;
    }
  }
}

// Changing a layout through an invalid one (tp 3 on the way to 4) shows why it cannot run and then goes
// on training: it neither pauses silently nor shows "loss nan".
TEST(UiSmoke, LabKeepsTrainingThroughAnInvalidLayout) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "lab"});
  auto& lab = app.state().lab;
  ASSERT_TRUE(frames_until(h, app, [&] { return lab.shown.report.step > 0 || !lab.error.empty(); }));
  ASSERT_TRUE(lab.trainer) << lab.error;
  ASSERT_TRUE(lab.running);
  lab.config.parallel.tp = 3;  // 4 heads do not split 3 ways
  for (int i = 0; i < 3; ++i) h.frame(app);
  EXPECT_FALSE(lab.error.empty());
  EXPECT_TRUE(lab.running) << "an invalid layout on the way must not pause the run";
  EXPECT_EQ(mc::test::non_finite_word(h.text), "");
  lab.config.parallel.tp = 2;
  h.frame(app);
  ASSERT_TRUE(lab.trainer) << lab.error;
  EXPECT_TRUE(lab.error.empty());
  EXPECT_TRUE(frames_until(h, app, [&] { return lab.shown.report.step > 0; })) << "training went on by itself";
  EXPECT_EQ(lab.shown.report.config.parallel.tp, 2);
  EXPECT_EQ(mc::test::non_finite_word(h.text), "");
}

// A class types 999999999999 into the nodes slider (Ctrl+click, as ImGui offers): the count is clamped to
// the machine, never wrapped to "-5819039752 GPUs", and the layout search header follows the cluster.
TEST(UiSmoke, TypedHugeNodeCountIsClampedNotWrapped) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  for (int i = 0; i < 3; ++i) h.frame(app);
  auto rects = app.state().probe.widget_rects;
  ASSERT_TRUE(rects.count("perf.nodes"));
  const mc::ui::Rect r = rects["perf.nodes"];
  ImGuiIO& io = ImGui::GetIO();
  io.KeyCtrl = true;
  click_at(h, app, ImVec2(r.x + r.w / 2, r.y + r.h / 2));
  io.KeyCtrl = false;
  io.AddInputCharactersUTF8("999999999999");
  for (int i = 0; i < 3; ++i) h.frame(app);
  click_at(h, app, ImVec2(5, 895));  // click away: the edit ends
  for (int i = 0; i < 3; ++i) h.frame(app);
  const std::optional<long long>& gpus = app.state().perf.config.cluster.gpus;
  ASSERT_TRUE(gpus.has_value());
  EXPECT_GT(*gpus, 1024) << "the typed value took effect (clamped to the cluster's size)";
  EXPECT_LE(*gpus, 10000);
  const std::string& t = h.text;
  for (size_t at = t.find(" GPUs"); at != std::string::npos; at = t.find(" GPUs", at + 1)) {
    size_t b = at;
    while (b > 0 && (std::isdigit(static_cast<unsigned char>(t[b - 1])) || t[b - 1] == ',')) --b;
    EXPECT_FALSE(b > 0 && t[b - 1] == '-') << "negative GPU count drawn: " << t.substr(b - 1, at - b + 6);
  }
  // The search header names the machine now configured (the nodes slider's, which the layout was fitted to).
  ASSERT_TRUE(frames_until(h, app, [&] { return app.state().perf.search_done; }));
  EXPECT_EQ((long long)app.state().perf.search_config.cluster.gpus(), app.state().perf.machine_gpus);
  EXPECT_GE(app.state().perf.machine_gpus, *gpus);
}

// Readable on a projector (1280x720, and an old one's 1024x768) and a big screen (1920x1080), and in
// presenter mode (larger type, narration first) on both projectors: on every panel, with a scenario's
// narration beside it, no window's content ends past its right edge (text wraps instead of being cut).
TEST(UiSmoke, NothingIsCutOffAtProjectorAndDesktopSizes) {
  struct Screen {
    ImVec2 size;
    bool presenter;
  };
  for (const Screen screen : {Screen{{1280, 720}, false}, Screen{{1920, 1080}, false}, Screen{{1024, 768}, false},
                              Screen{{1280, 720}, true}, Screen{{1024, 768}, true}}) {
    const ImVec2 size = screen.size;
    Headless h(size.x, size.y, /*app_look=*/true);
    NullPlatform platform;
    mc::ui::App app({assets(), &platform, ""});
    app.state().classroom.presenter = screen.presenter;
    app.state().scenarios.request_id = "failures-at-scale";  // a narration pane with a question
    app.state().scenarios.request_step = 1;
    h.frame(app);
    for (const auto& p : mc::ui::panel_registry()) {
      SCOPED_TRACE(p.id + " at " + std::to_string(int(size.x)) + "x" + std::to_string(int(size.y)) +
                   (screen.presenter ? " presenting" : ""));
      for (const std::string& tab : p.tabs.empty() ? std::vector<std::string>{""} : p.tabs) {
        EXPECT_EQ(app.command({{"panel", tab.empty() ? p.id : p.id + "/" + tab}}), "");
        for (int i = 0; i < 4; ++i) h.frame(app);
        // Wait for what the panel computes (a run, a training): its results are text to lay out too.
        mc::test::frames_until(
            h, app, [&] { return !mc::ui::panels_busy(app.state()); }, 60);
        for (int i = 0; i < 2; ++i) h.frame(app);
        const auto over = mc::test::overflowing_windows();
        EXPECT_TRUE(over.empty()) << tab << ": " << testing::PrintToString(over);
      }
    }
  }
}

// The lab shows its speed, exports its loss curves (CSV, and a PNG request the shell fulfils) and the trained
// model as the checkpoint `megacluster train --resume` reads, and a page reload resumes the run.
TEST(UiSmoke, LabSpeedExportsAndAReloadResumes) {
  class KeepingPlatform : public NullPlatform {
   public:
    bool persistent() const override { return true; }
    void store(const std::string& k, const std::string& v) override { kept[k] = v; }
    std::string stored(const std::string& k) const override { return kept.count(k) ? kept.at(k) : ""; }
    std::map<std::string, std::string> kept;
  };
  KeepingPlatform platform;
  int step_before = 0;
  std::vector<double> losses_before;
  {
    Headless h(1440, 900);
    mc::ui::App app({assets(), &platform, "lab"});
    auto& lab = app.state().lab;
    lab.persist_every_s = 0;
    ASSERT_TRUE(frames_until(h, app, [&] { return lab.shown.report.step >= 3; })) << lab.error;
    // While it trains (the job holds the trainer), the run is kept for a reload through the job.
    ASSERT_TRUE(frames_until(h, app, [&] { return platform.kept.count("lab.checkpoint") > 0; }));
    EXPECT_GT(lab.persisted_step, 0);
    EXPECT_TRUE(app.state().probe.widget_rects.count("lab.speed"));
    EXPECT_NE(h.text.find("tokens/s"), std::string::npos);
    click_widget(h, app, "lab.start");  // pause, so the exports and the kept run describe one step
    ASSERT_TRUE(frames_until(h, app, [&] { return !lab.train_job; }));
    h.frame(app);
    click_widget(h, app, "lab.export_csv");
    ASSERT_TRUE(platform.saved.count("loss-curves.csv"));
    const std::string& csv = platform.saved["loss-curves.csv"];
    EXPECT_EQ(size_t(std::count(csv.begin(), csv.end(), '\n')), lab.trainer->losses().size() + 1);
    click_widget(h, app, "lab.export_png");
    ASSERT_TRUE(platform.saved.count("loss-curves.png")) << app.state().status;
    {
      // Drawn for print, not read off the 440-pixel widget: at least 1200 pixels wide (IHDR's width).
      const std::string& png = platform.saved["loss-curves.png"];
      ASSERT_GT(png.size(), 24u);
      EXPECT_EQ(png.substr(0, 8), "\x89PNG\r\n\x1a\n");
      const auto byte = [&](size_t i) { return uint32_t(uint8_t(png[i])); };
      EXPECT_GE(byte(16) << 24 | byte(17) << 16 | byte(18) << 8 | byte(19), 1200u);
    }
    const size_t downloads = platform.saved.size();
    click_widget(h, app, "lab.export_model");
    ASSERT_TRUE(frames_until(h, app, [&] { return !lab.export_requested; }));
    step_before = lab.trainer->step_index();
    losses_before = lab.trainer->losses();
    // One download: a tar of the config and the checkpoint, as `megacluster train --resume` reads them.
    EXPECT_EQ(platform.saved.size(), downloads + 1) << app.state().status;
    const std::string tar = "lab-model-step" + std::to_string(step_before) + ".tar";
    ASSERT_TRUE(platform.saved.count(tar)) << app.state().status;
    const std::string dir = testing::TempDir() + "/mc-lab-export-" + std::to_string(::getpid());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/" + tar, std::ios::binary) << platform.saved[tar];
    ASSERT_EQ(std::system(("cd " + dir + " && tar xf " + tar).c_str()), 0);
    std::string ck;
    for (const auto& e : std::filesystem::directory_iterator(dir + "/lab-model/checkpoint")) ck = e.path().filename();
    ASSERT_EQ(ck.substr(ck.size() - 5), ".mcck");
    // The exported pair resumes with `megacluster train` (run_json is that command's engine call).
    std::ifstream cfg_file(dir + "/lab-model/lab-config.json");
    nlohmann::json cfg = nlohmann::json::parse(cfg_file);
    cfg["checkpoint"] = dir + "/lab-model/checkpoint";
    cfg["resume"] = true;
    cfg["steps"] = step_before + 2;
    const nlohmann::json r = mc::train::run_json(cfg);
    EXPECT_EQ(r.value("resumed_from", std::string()), dir + "/lab-model/checkpoint/" + ck);
    ASSERT_EQ(r["losses"].size(), size_t(step_before + 2));
    for (int i = 0; i < step_before; ++i) EXPECT_EQ(r["losses"][size_t(i)].get<double>(), losses_before[size_t(i)]);
    std::filesystem::remove_all(dir);
    for (int i = 0; i < 3; ++i) h.frame(app);
    ASSERT_TRUE(platform.kept.count("lab.checkpoint"));
  }
  // A reload: a new app on the same storage resumes at the kept step.
  Headless h(1440, 900);
  mc::ui::App app({assets(), &platform, "lab"});
  h.frame(app);
  auto& lab = app.state().lab;
  ASSERT_TRUE(lab.trainer) << lab.error << app.state().status;
  EXPECT_FALSE(lab.running) << "it was kept paused";
  for (int i = 0; i < 2; ++i) h.frame(app);
  EXPECT_FALSE(lab.train_job);
  EXPECT_EQ(lab.trainer->step_index(), step_before);
  EXPECT_EQ(lab.shown.report.losses, losses_before);
  EXPECT_NE(lab.resume_note.find("resumed at step"), std::string::npos);
}

// The panels open on the configs under assets/configs (the files tests and benchmarks read too); a broken
// one is named with its line and column in the status bar, the other panels open as usual, and the app
// keeps running (its panel's failure is caught and listed with the errors).
TEST(UiSmoke, DefaultConfigsComeFromTheAssetsFolder) {
  Headless h(1440, 900);
  NullPlatform platform;
  {
    mc::ui::App app({assets(), &platform, ""});
    const auto file = [&](const char* name) {
      return mc::JsonDoc::load(assets() + "/configs/" + name + ".json").value();
    };
    EXPECT_EQ(mc::perf::to_json(app.state().perf.config), file("estimate"));
    EXPECT_EQ(mc::sim::to_json(app.state().sim.config), file("simulate"));
    EXPECT_EQ(app.state().lab.config, mc::train::parse_config(file("train")));
    EXPECT_TRUE(app.state().status.empty()) << app.state().status;
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "mc_ui_bad_configs";
  std::filesystem::remove_all(dir);
  std::filesystem::copy(assets(), dir, std::filesystem::copy_options::recursive);
  std::ofstream(dir / "configs" / "simulate.json") << "{\n  \"model\": {\"preset\": \"gpt3-175b\"},\n  oops\n}\n";
  mc::ui::App app({dir.string(), &platform, "sim"});
  const std::string& st = app.state().status;
  EXPECT_NE(st.find("simulate.json:3:"), std::string::npos) << st;
  EXPECT_NE(st.find("simulate panel's default"), std::string::npos) << st;
  EXPECT_EQ(mc::perf::to_json(app.state().perf.config), mc::JsonDoc::load(assets() + "/configs/estimate.json").value());
  for (int i = 0; i < 3; ++i) h.frame(app);  // the sim panel draws with no machine and says why
  EXPECT_FALSE(mc::ui::explorer_errors(app.state()).empty()) << "the empty config is reported";
  // The panel itself says which file and where, long after the status line has moved on.
  EXPECT_TRUE(app.state().probe.widget_rects.count("sim.config_error"));
  EXPECT_NE(h.text.find("simulate.json:3:"), std::string::npos) << h.text.substr(0, 400);
  EXPECT_NE(h.text.find("Restore it from the release"), std::string::npos);
  app.state().active_panel = "perf";
  for (int i = 0; i < 2; ++i) h.frame(app);
  EXPECT_FALSE(app.state().probe.widget_rects.count("perf.config_error")) << "the estimate's file is sound";
  app.state().active_panel = "run";
  h.frame(app);
  EXPECT_TRUE(app.state().probe.widget_rects.count("run.config_error"))
      << "the run panel starts from simulate.json too";
  std::filesystem::remove_all(dir);
}
