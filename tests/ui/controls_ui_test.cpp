// controls_ui_test.cpp - issue 23, "controls that stay valid": every position of a control is a layout the
// engine runs (the nodes slider of "Train a transformer" was valid only at multiples of 16 nodes, and at its
// maximum, the 10,000-GPU machine, said "tp*pp*dp = 8*16*78 = 9984 must equal the cluster's GPUs (10000);
// change the degrees or cluster.gpus"); an error names the control on screen, not a JSON key, and shows in
// the panel that owns the control ("NIC 0 Gb/s" of "One iteration" was shown by "A whole run").
#include "tests/ui/headless.h"

#include "core/format.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

using mc::test::assets;
using mc::test::click_at;
using mc::test::frames_until;
using mc::test::Headless;
using mc::test::NullPlatform;

namespace {

// Types `value` into the slider tracked as `id` the way a class does (Ctrl+click, type, click away).
void type_into(Headless& h, mc::ui::App& app, const std::string& id, const std::string& value) {
  auto rects = app.state().probe.widget_rects;
  ASSERT_TRUE(rects.count(id)) << id << " is not on screen";
  const mc::ui::Rect r = rects[id];
  ImGuiIO& io = ImGui::GetIO();
  io.KeyCtrl = true;
  click_at(h, app, ImVec2(r.x + 4, r.y + r.h / 2));  // inside the frame (the label is on its right)
  io.KeyCtrl = false;
  io.AddInputCharactersUTF8(value.c_str());
  for (int i = 0; i < 3; ++i) h.frame(app);
  click_at(h, app, ImVec2(5, ImGui::GetIO().DisplaySize.y - 5));  // click away: the edit ends
  for (int i = 0; i < 3; ++i) h.frame(app);
}

// The training stack combo's preview: the text drawn after "Training stack".
std::string stack_shown(const std::string& text) {
  const size_t a = text.find("Training stack ");
  if (a == std::string::npos) return "";
  const size_t b = text.find(" software", a);
  return text.substr(a + 15, b == std::string::npos ? 40 : b - a - 15);
}

// Clicks the first visible line of an open popup (a combo's list) that contains `text`; the panel behind it
// may draw the same words (the warning names the row to pick).
bool click_in_popup(Headless& h, mc::ui::App& app, const std::string& text) {
  std::vector<ImDrawList*> lists;
  for (ImGuiWindow* w : GImGui->Windows)
    if (w->WasActive && !w->Hidden && (w->Flags & ImGuiWindowFlags_Popup)) lists.push_back(w->DrawList);
  for (const mc::ui::DrawnLine& l : mc::ui::drawn_lines(lists)) {
    const size_t at = l.text.find(text);
    if (at == std::string::npos) continue;
    for (const mc::ui::DrawnGlyph& g : l.glyphs)
      if (g.at >= at && g.visible) {
        click_at(h, app, ImVec2((g.x0 + g.x1) / 2, (g.y0 + g.y1) / 2));
        return true;
      }
  }
  return false;
}

// The Parallelism chapter open on its default config, after the frames that estimate it.
struct PerfPanelOpen {
  Headless h{1440, 900};
  NullPlatform platform;
  mc::ui::App app{{assets(), &platform, "perf"}};
  PerfPanelOpen() {
    for (int i = 0; i < 3; ++i) h.frame(app);
  }
};

}  // namespace

// The nodes slider at its maximum (1,250 nodes of the 10,000-GPU Azure machine) and at counts that are no
// multiple of 16 nodes: each is a valid layout (dp follows, the estimate uses the GPUs the layout needs and
// the headline says how many of the machine's), and the chosen training stack stays.
TEST(PerfControls, EveryNodeCountIsAValidLayoutAndKeepsTheStack) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  for (int i = 0; i < 3; ++i) h.frame(app);
  auto& v = app.state().perf;
  ASSERT_TRUE(v.valid) << v.error;
  const std::string stack = stack_shown(h.text);
  ASSERT_FALSE(stack.empty()) << h.text;
  ASSERT_EQ(stack.find("preset default"), std::string::npos) << stack;
  for (const char* nodes : {"1250", "77", "3", "1", "1249"}) {
    SCOPED_TRACE(std::string("nodes typed: ") + nodes);
    type_into(h, app, "perf.nodes", nodes);
    const long long machine = std::stoll(nodes) * 8;
    ASSERT_TRUE(v.valid) << v.error;
    EXPECT_EQ(h.text.find("must equal"), std::string::npos) << h.text;
    EXPECT_EQ(h.text.find("not valid"), std::string::npos) << h.text;
    EXPECT_NE(h.text.find(std::string(nodes) + (machine == 8 ? " node " : " nodes ")), std::string::npos)
        << "the slider shows the count chosen: " << h.text;
    // The estimate runs on the GPUs the layout uses: at most the machine, whole nodes.
    const long long used = v.parsed.cluster.gpus();
    EXPECT_LE(used, machine);
    EXPECT_EQ(used, (long long)v.parsed.layout.tp * v.parsed.layout.pp * v.parsed.layout.dp);
    EXPECT_EQ(v.parsed.layout.global_batch % (v.parsed.layout.micro_batch * v.parsed.layout.dp), 0);
    if (used < machine) {
      const std::string says = "uses " + mc::with_thousands(double(used)) + " of the " +
                               mc::with_thousands(double(machine)) + " GPUs the nodes slider offers";
      EXPECT_NE(h.text.find(says), std::string::npos) << "headline must say which GPUs it estimates: " << h.text;
    }
    EXPECT_EQ(stack_shown(h.text), stack) << "moving the nodes changed the training stack shown";
  }
  // At the maximum the search ranks layouts of the whole machine, as the headline's layout was fitted to it.
  type_into(h, app, "perf.nodes", "1250");
  ASSERT_TRUE(frames_until(h, app, [&] { return v.search_done; }));
  EXPECT_EQ(v.search_config.cluster.gpus(), 10000);
  EXPECT_NE(h.text.find("up to 10000 GPUs"), std::string::npos) << h.text;
}

// Typing into a slider applies the number when the entry is confirmed, not at each keystroke (issue 41): on
// the way to "100" nodes the estimate never runs on 1 node or 10 (at "1" the pipeline used to drop from 16
// stages to 1 and stay there), and what runs at the end is 100 nodes' layout.
TEST(PerfControls, ATypedValueAppliesWhenConfirmed) {
  PerfPanelOpen p;
  Headless& h = p.h;
  mc::ui::App& app = p.app;
  auto& v = app.state().perf;
  ASSERT_TRUE(v.valid) << v.error;
  const mc::perf::Request before = v.config;
  const int pp_before = v.parsed.layout.pp;
  ASSERT_GT(pp_before, 1);
  const mc::ui::Rect r = app.state().probe.widget_rects.at("perf.nodes");
  ImGuiIO& io = ImGui::GetIO();
  io.KeyCtrl = true;
  click_at(h, app, ImVec2(r.x + 4, r.y + r.h / 2));
  io.KeyCtrl = false;
  for (const char* digit : {"1", "0", "0"}) {
    SCOPED_TRACE(std::string("after typing ") + digit);
    io.AddInputCharactersUTF8(digit);
    for (int i = 0; i < 3; ++i) h.frame(app);
    EXPECT_TRUE(v.config == before) << mc::perf::to_json(v.config).dump();
    EXPECT_EQ(v.parsed.layout.pp, pp_before);
  }
  click_at(h, app, ImVec2(5, io.DisplaySize.y - 5));  // click away: the entry is confirmed
  for (int i = 0; i < 3; ++i) h.frame(app);
  ASSERT_TRUE(v.valid) << v.error;
  EXPECT_EQ(v.machine_gpus, 800) << "100 nodes of 8 GPUs";
  EXPECT_LE(v.parsed.cluster.gpus(), 800);
  EXPECT_NE(h.text.find("100 nodes"), std::string::npos) << h.text;
}

// Every numeric control in ui/ goes through the widget layer's apply_when_confirmed (ui/widgets.h): a slider or
// input field drawn with ImGui's own call elsewhere would apply each keystroke again, and neither it nor a
// combo box, radio button or table drawn that way would have its value, name or role in the accessibility
// mirror (ui/access.h).
TEST(PerfControls, EveryNumericControlGoesThroughTheWidgetLayer) {
  const std::regex raw(
      R"(ImGui::(Slider|Input(Int|Float|Double|Scalar)|Drag|BeginCombo|Combo|RadioButton|EndTable)\w*\()");
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(MC_SOURCE_DIR) + "/ui")) {
    const std::string path = e.path().string();
    if (!e.is_regular_file() || path.size() < 2 || e.path().filename() == "widgets.cpp") continue;
    if (e.path().extension() != ".cpp" && e.path().extension() != ".h") continue;
    ++files;
    std::ifstream in(path);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      EXPECT_FALSE(std::regex_search(line, raw))
          << path << ":" << n << ": " << line
          << "\n  use slider_int/slider_float/input_double/begin_combo/combo/radio/end_table (ui/widgets.h)";
  }
  EXPECT_GT(files, 20);
}

// On one node the job may use part of it (the literature's single-GPU baselines): the GPUs-in-use list
// offers the node's divisors, and one GPU is a valid estimate with no communication, said as such.
TEST(PerfControls, OneNodeCanBeUsedInPart) {
  PerfPanelOpen p;
  Headless& h = p.h;
  mc::ui::App& app = p.app;
  auto& v = app.state().perf;
  ASSERT_TRUE(v.valid) << v.error;
  EXPECT_EQ(app.state().probe.widget_rects.count("perf.gpus"), 0u) << "no such list on many nodes";
  type_into(h, app, "perf.nodes", "1");
  ASSERT_TRUE(v.valid) << v.error;
  ASSERT_TRUE(app.state().probe.widget_rects.count("perf.gpus")) << h.text;
  {  // the combo's frame, left of its label
    const mc::ui::Rect r = app.state().probe.widget_rects.at("perf.gpus");
    click_at(h, app, ImVec2(r.x + 4, r.y + r.h / 2));
  }
  for (int i = 0; i < 2; ++i) h.frame(app);
  for (const char* k : {"perf.gpus.1", "perf.gpus.2", "perf.gpus.4", "perf.gpus.8"})
    EXPECT_TRUE(app.state().probe.widget_rects.count(k)) << k;
  EXPECT_EQ(app.state().probe.widget_rects.count("perf.gpus.3"), 0u) << "3 does not divide an 8-GPU node";
  click_widget(h, app, "perf.gpus.1");
  for (int i = 0; i < 3; ++i) h.frame(app);
  ASSERT_TRUE(v.valid) << v.error;
  EXPECT_EQ(v.parsed.cluster.gpus(), 1);
  EXPECT_EQ(v.config.cluster.gpus, 1);
  EXPECT_NE(h.text.find("1 GPU of one 8-GPU node"), std::string::npos) << h.text;
  EXPECT_EQ(v.estimate.time.tp_comm + v.estimate.time.dp_comm + v.estimate.time.pp_comm, 0.0);
}

// Context parallelism from its slider: on the stack of record of GPT-3's machine (Megatron-LM 2020, which
// had none) it is a what-if the notes name; on Llama 3's stack, with a long sequence, the layout's cp ranks
// split each sequence, dp follows the machine, and the time bar shows the key/value gathers.
TEST(PerfControls, ContextParallelSliderSplitsTheSequence) {
  PerfPanelOpen p;
  Headless& h = p.h;
  mc::ui::App& app = p.app;
  auto& v = app.state().perf;
  ASSERT_TRUE(v.valid) << v.error;
  // 1F1B: one micro-batch a replica before cp (the record's interleaved schedule needs a multiple of pp).
  v.config = mc::perf::parse_request(nlohmann::json::parse(R"({
      "model": {"preset": "llama3-405b", "seq_len": 131072},
      "cluster": {"preset": "meta-llama3-2024", "gpus": 16384},
      "parallel": {"tp": 8, "pp": 16, "dp": 128, "micro_batch": 1, "global_batch": 128, "zero": 2,
                   "sequence_parallel": true, "schedule": "1f1b"}})"),
                                     "test");
  for (int i = 0; i < 3; ++i) h.frame(app);
  ASSERT_TRUE(v.valid) << v.error;
  ASSERT_TRUE(app.state().probe.widget_rects.count("perf.cp")) << h.text;
  EXPECT_EQ(v.estimate.time.cp_comm, 0.0);
  const double one = v.estimate.memory.activations;
  // The slider steps in powers of two: its position 4 is cp 16 (typed as a class would, Ctrl+click).
  type_into(h, app, "perf.cp", "4");
  for (int i = 0; i < 3; ++i) h.frame(app);
  ASSERT_TRUE(v.valid) << v.error;
  EXPECT_EQ(v.parsed.layout.cp, 16) << mc::perf::to_json(v.config).dump();
  EXPECT_EQ(v.parsed.layout.dp, 8);  // dp follows: 8 x 16 x 16 x 8 = 16,384
  EXPECT_GT(v.estimate.time.cp_comm, 0.0);
  // Each micro-batch holds 1/16 of a sequence, and 16 micro-batches now run a replica where one did.
  EXPECT_EQ(v.parsed.layout.micro_batches(), 16);
  EXPECT_NEAR(v.estimate.memory.activations, one, 0.2 * one);
  EXPECT_NE(h.text.find("cp comm"), std::string::npos) << h.text;
}

// A layout refused (a scenario's config: dp 7 on 1,024 GPUs) is named by the controls on screen: "data (dp)"
// and "nodes", not the keys "parallel/dp" and "cluster.gpus".
TEST(PerfControls, ErrorNamesTheControlNotTheJsonKey) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  auto& v = app.state().perf;
  v.config.parallel.value().dp = 7;
  for (int i = 0; i < 3; ++i) h.frame(app);
  ASSERT_FALSE(v.valid);
  EXPECT_NE(h.text.find("'data (dp)': tp*pp*dp = 8*16*7 = 896 must equal"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("change the degrees or 'nodes'"), std::string::npos) << h.text;
  EXPECT_EQ(h.text.find("cluster.gpus"), std::string::npos) << h.text;
  EXPECT_EQ(h.text.find("parallel/dp"), std::string::npos) << h.text;
}

// A NIC typed as 0 Gb/s in "One iteration" is held to the slider's range (25 Gb/s), so nothing is refused.
TEST(SimControls, TypedZeroNicIsClampedToTheSlider) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "sim"});
  for (int i = 0; i < 3; ++i) h.frame(app);
  type_into(h, app, "sim.nic", "0");
  const std::optional<double>& nic = app.state().sim.config.estimate.cluster.node_network_Gbps;
  ASSERT_TRUE(nic.has_value());
  EXPECT_EQ(*nic, 25.0);
}

// A new result shows whole (issue 41): the timeline kept its zoom after a slower network, so it read "15.8 s
// shown of 20.4 s" and cut off the wait the change was made to show. Another slice of rows keeps the zoom.
TEST(SimControls, ANewResultShowsTheWholeIteration) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "sim"});
  auto& v = app.state().sim;
  ASSERT_TRUE(frames_until(h, app, [&] { return v.iteration && !v.iteration_job; }));
  h.frame(app);
  const double before = v.iteration->simulated.iteration_time_s;
  v.view_span_s = 0.75 * before;  // zoomed in, as the wheel leaves it
  h.frame(app);
  v.slice_count = 8;
  ASSERT_TRUE(
      frames_until(h, app, [&] { return v.iteration_for && v.iteration_for->slice_count == 8 && !v.iteration_job; }));
  h.frame(app);
  EXPECT_DOUBLE_EQ(v.view_span_s, 0.75 * before) << "fewer rows keep the window";
  v.config.estimate.cluster.node_network_Gbps = 100;
  ASSERT_TRUE(frames_until(
      h, app, [&] { return v.iteration && !v.iteration_job && v.iteration->simulated.iteration_time_s != before; }));
  h.frame(app);
  const double after = v.iteration->simulated.iteration_time_s;
  EXPECT_GT(after, before) << "a slower network waits longer";
  EXPECT_DOUBLE_EQ(v.view_span_s, after);
  EXPECT_EQ(v.view_start_s, 0.0);
  const std::string whole = mc::format_quantity(after, "s");
  EXPECT_NE(h.text.find(whole + " shown of " + whole), std::string::npos) << h.text;
}

// A NIC of 0 Gb/s set by a config: "One iteration" shows the refusal under its label; "A whole run", which
// has no NIC control, does not show that message but names the control and the panel that has it.
TEST(SimControls, RefusalShowsInThePanelThatOwnsTheControl) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "sim"});
  auto& v = app.state().sim;
  v.config.estimate.cluster.node_network_Gbps = 0;
  ASSERT_TRUE(frames_until(h, app, [&] { return !v.iteration_error.empty() && !v.iteration_job; }));
  h.frame(app);
  EXPECT_NE(h.text.find("'NIC Gb/s per node'"), std::string::npos) << h.text;
  EXPECT_EQ(h.text.find("node_network_Gbps"), std::string::npos) << h.text;
  const std::string raw = v.iteration_error;
  app.state().active_panel = "run";
  ASSERT_TRUE(frames_until(h, app, [&] { return !v.run_error.empty() && !v.run_job; }));
  h.frame(app);
  EXPECT_EQ(h.text.find(raw), std::string::npos) << "the iteration's error shown by the run panel: " << h.text;
  EXPECT_NE(h.text.find("'NIC Gb/s per node'"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("is refused in \"One iteration, event by event\""), std::string::npos) << h.text;
  mc::test::click_widget(h, app, "run.refused");
  EXPECT_EQ(app.state().active_panel, "sim");
}

// Every message of "Train a transformer" names a control the class can act on (issue 23): a NIC slower than
// one link of the cluster's fabric was told to "set cluster.fabric", a key no control set. The warning now
// sends the class to the "network fabric" combo beside it, and picking Ethernet there clears it.
TEST(PerfControls, SlowNetworkWarningNamesTheFabricControlThatClearsIt) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  auto& v = app.state().perf;
  for (int i = 0; i < 3; ++i) h.frame(app);
  v.config.cluster.node_network_Gbps = 25;  // network-matters step 3's config, before its fabric
  for (int i = 0; i < 3; ++i) h.frame(app);
  ASSERT_TRUE(v.valid) << v.error;
  EXPECT_NE(h.text.find("pick it in 'network fabric' above"), std::string::npos) << h.text;
  EXPECT_EQ(h.text.find("cluster.fabric"), std::string::npos) << h.text;
  ASSERT_TRUE(app.state().probe.widget_rects.count("perf.fabric")) << "the control the warning names is not on screen";
  {  // the combo's frame, left of its label (the tracked rect holds both: its middle can be the label)
    const mc::ui::Rect r = app.state().probe.widget_rects.at("perf.fabric");
    click_at(h, app, ImVec2(r.x + 4, r.y + r.h / 2));
  }
  for (int i = 0; i < 2; ++i) h.frame(app);
  ASSERT_TRUE(click_in_popup(h, app, "Commodity Ethernet, 25 Gb/s")) << "the combo does not offer Ethernet";
  for (int i = 0; i < 3; ++i) h.frame(app);
  EXPECT_EQ(v.config.cluster.fabric.value_or(""), "ethernet-25g-tcp");
  EXPECT_EQ(h.text.find("is less than one"), std::string::npos) << "the warning stays after its fix: " << h.text;
  EXPECT_NE(h.text.find("over Commodity Ethernet"), std::string::npos) << h.text;
}

// A cluster without a price asked the class to "set cluster.price_per_gpu_hour_usd"; it now names the price
// control beside the nodes, and a price typed there prices the run.
TEST(PerfControls, NoPriceNamesThePriceControlThatSetsIt) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  auto& v = app.state().perf;
  for (int i = 0; i < 3; ++i) h.frame(app);
  type_into(h, app, "perf.price", "0");
  ASSERT_TRUE(v.valid) << v.error;
  EXPECT_NE(h.text.find("type one in 'price, USD per hour' under Cluster"), std::string::npos) << h.text;
  EXPECT_EQ(h.text.find("price_per_gpu_hour_usd"), std::string::npos) << h.text;
  type_into(h, app, "perf.price", "2.5");
  ASSERT_TRUE(v.valid) << v.error;
  EXPECT_EQ(v.parsed.cluster.price_per_gpu_hour_usd, 2.5);
  EXPECT_EQ(h.text.find("(no price"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find(", $" + mc::format_si(v.estimate.cost_usd)), std::string::npos) << h.text;
  // A model the catalog has no token count for asks for one in the control that sets it, not by its key.
  v.config.model = {};
  v.config.model.preset = "gpt2-1.5b";
  v.config.parallel.value().tp = 1;  // its 25 heads split over no tensor-parallel group: 1 x 16 x 64 = 1,024
  v.config.parallel.value().dp = 64;
  v.config.training.value().tokens.reset();
  for (int i = 0; i < 3; ++i) h.frame(app);
  ASSERT_TRUE(v.valid) << v.error;
  EXPECT_NE(h.text.find("type its own in 'tokens (billions)'"), std::string::npos) << h.text;
  EXPECT_EQ(h.text.find("set \""), std::string::npos) << "a JSON key named as the fix: " << h.text;
  // A refused price is named by its control too.
  v.config.cluster.price_per_gpu_hour_usd = -1;
  for (int i = 0; i < 3; ++i) h.frame(app);
  ASSERT_FALSE(v.valid);
  EXPECT_NE(v.error.find("'price, USD per hour'"), std::string::npos) << v.error;
}
