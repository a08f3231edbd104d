// The "Train a transformer" panel says what the engine estimated: the GPU count perf::estimate used (not a
// guess from the config's keys), model and hardware FLOPs named apart (MFU, HFU), a TPU's own unit words,
// and only layouts the selected training stack can run.
#include "tests/ui/headless.h"

#include "perf/perf.h"

#include <regex>

using mc::test::assets;
using mc::test::Headless;
using mc::test::NullPlatform;

namespace {

// Sets the perf panel's config and draws until the estimate and its search are done.
void show(Headless& h, mc::ui::App& app, const nlohmann::json& cfg) {
  app.state().active_panel = "perf";
  app.state().perf.config = mc::perf::parse_request(cfg, "test");
  for (int i = 0; i < 3; ++i) h.frame(app);
  ASSERT_TRUE(mc::test::frames_until(h, app, [&] { return app.state().perf.search_done; }));
  h.frame(app);
}

}  // namespace

// A1: turing-nlg-zero-2020-1's config, one V100 alone ("gpus_per_node": 1, "nodes": 1): the engine estimates
// 1 GPU, so the panel must say 1 node and 1 GPU (it said "8 nodes", "8 GPUs, 1 per node").
TEST(PerfTruth, NodesControlShowsTheEnginesGpuCount) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  const nlohmann::json cfg = nlohmann::json::parse(R"({"model": {"preset": "gpt3-2.7b"},
      "cluster": {"gpu": "v100-32gb", "gpus_per_node": 1, "nodes": 1},
      "parallel": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 1, "global_batch": 8}})");
  show(h, app, cfg);
  const auto& v = app.state().perf;
  ASSERT_TRUE(v.valid) << v.error;
  ASSERT_EQ(v.parsed.cluster.gpus(), 1);  // the engine's count, the truth the panel must repeat
  EXPECT_NE(h.text.find("1 node "), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("on 1 GPU,"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("(up to 1 GPU)"), std::string::npos) << h.text;
  EXPECT_EQ(h.text.find("8 nodes"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("1 GPU, 1 per node"), std::string::npos) << h.text;
  EXPECT_EQ(h.text.find("8 GPUs"), std::string::npos) << h.text;
  // "nodes": 4 of 2-GPU nodes: 8 GPUs, the same count `megacluster estimate` reports.
  nlohmann::json four = cfg;
  four["cluster"]["gpus_per_node"] = 2, four["cluster"]["nodes"] = 4, four["parallel"]["dp"] = 8;
  four["cluster"]["node_network_Gbps"] = 100;
  show(h, app, four);
  ASSERT_TRUE(app.state().perf.valid) << app.state().perf.error;
  EXPECT_NE(h.text.find("8 GPUs, 2 per node"), std::string::npos) << h.text;
  EXPECT_EQ(mc::perf::estimate_json(*app.state().catalog, four)["gpus"].get<long long>(), 8);
}

// A4: GPT-3 on 1,024 V100s with full recompute: the panel names model FLOP/s with MFU and hardware FLOP/s
// with HFU, and each pair agrees with the peak (125 TFLOP/s): TFLOP/s / 125 = the utilisation printed.
TEST(PerfTruth, HeadlineNamesModelAndHardwareFlops) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  show(h, app, nlohmann::json::parse(R"({"model": {"preset": "gpt3-175b"},
      "cluster": {"preset": "azure-openai-2020", "gpus": 1024},
      "parallel": {"tp": 8, "pp": 16, "dp": 8, "micro_batch": 1, "global_batch": 1536, "schedule": "1f1b",
                   "recompute": "full"}})"));
  const auto& v = app.state().perf;
  ASSERT_TRUE(v.valid) << v.error;
  const std::regex re(
      R"(model FLOPs (\d+) TFLOP/s per GPU \(MFU (\d+\.\d)%\); with full recompute the GPUs do (\d+) TFLOP/s \(HFU (\d+\.\d)%\))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(h.text, m, re)) << h.text;
  const double model = std::stod(m[1]), mfu = std::stod(m[2]), hw = std::stod(m[3]), hfu = std::stod(m[4]);
  const double peak = v.parsed.cluster.peak_fp16_flops / 1e12;
  EXPECT_NEAR(model / peak * 100, mfu, 1.0) << "model FLOP/s and MFU disagree";
  EXPECT_NEAR(hw / peak * 100, hfu, 1.0) << "hardware FLOP/s and HFU disagree";
  // Full recompute runs the forward twice: 4/3 of the model FLOPs in the layers (Korthikanti et al. 2022).
  EXPECT_GT(hw, model * 1.2);
  EXPECT_EQ(h.text.find("TFLOP/s per GPU, MFU"), std::string::npos) << "the old mixed headline is back";
  // No recompute: one number, and the panel says HFU = MFU.
  app.state().perf.config.parallel.value().recompute = "none";
  app.state().perf.config.parallel.value().micro_batch = 1;
  for (int i = 0; i < 3; ++i) h.frame(app);
  EXPECT_NE(h.text.find("nothing recomputed, so HFU = MFU"), std::string::npos) << h.text;
}

// A2: a TPU v3 cluster is counted and priced in TPU chips, never "GPUs" or "GPU-hours".
TEST(PerfTruth, TpuIsNotCalledAGpu) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  show(h, app, nlohmann::json::parse(R"({"model": {"preset": "gpt2-1.5b"},
      "cluster": {"gpu": "tpu-v3", "gpus_per_node": 4, "nodes": 32, "node_network_Gbps": 400,
                  "price_per_gpu_hour_usd": 2.0},
      "parallel": {"tp": 1, "pp": 1, "dp": 128, "micro_batch": 4, "global_batch": 512}})"));
  ASSERT_TRUE(app.state().perf.valid) << app.state().perf.error;
  EXPECT_NE(h.text.find("128 TPU v3 chips, 4 per node"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("TPU v3 chip-hours"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("Memory per TPU v3 chip"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("up to 128 TPU v3 chips"), std::string::npos) << h.text;
  for (const char* wrong : {"GPU-hour", "GPUs", "per GPU"})
    EXPECT_EQ(h.text.find(wrong), std::string::npos) << "\"" << wrong << "\" drawn for a TPU: " << h.text;
}

// C18: with OpenAI's 2020 code selected (the Azure machine's), the search lists no interleaved schedule, no
// selective recompute and no ZeRO, and says why it left them out; an explicit interleaved layout is refused by
// name, as is a pipeline on Megatron-LM v1.0 (it had none: tag v1.0, April 2020).
TEST(PerfTruth, SearchProposesOnlyWhatTheStackRuns) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  nlohmann::json cfg = nlohmann::json::parse(R"({"model": {"preset": "gpt3-175b"},
      "cluster": {"preset": "azure-openai-2020", "gpus": 1024}, "software": "openai-gpt3-2020",
      "parallel": {"tp": 8, "pp": 16, "dp": 8, "micro_batch": 1, "global_batch": 1536, "schedule": "1f1b",
                   "recompute": "full"}})");
  show(h, app, cfg);
  const auto& v = app.state().perf;
  ASSERT_TRUE(v.valid) << v.error;
  ASSERT_FALSE(v.search.ranked.empty());
  for (const auto& c : v.search.ranked) {
    EXPECT_NE(c.layout.schedule, mc::PipeSchedule::interleaved);
    EXPECT_NE(c.layout.recompute, mc::perf::Recompute::selective);
    EXPECT_EQ(c.layout.zero, 0);
    EXPECT_FALSE(c.layout.sequence_parallel);
  }
  EXPECT_NE(h.text.find("OpenAI GPT-3 code (2020) has no interleaved pipeline schedule"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("OpenAI GPT-3 code (2020) has no ZeRO"), std::string::npos) << h.text;
  // The same search under Megatron-LM (2021) does use the interleaved schedule it introduced.
  cfg["software"] = "megatron-lm-2021";
  show(h, app, cfg);
  bool interleaved = false;
  for (const auto& c : app.state().perf.search.ranked)
    interleaved |= c.layout.schedule == mc::PipeSchedule::interleaved;
  EXPECT_TRUE(interleaved);
  // Megatron-LM (2021)'s own interleaved layout, compared on every stack: Megatron-LM v1.0 and OpenAI's 2020
  // code "cannot run it".
  cfg["parallel"]["schedule"] = "interleaved", cfg["parallel"]["virtual_stages"] = 2;
  show(h, app, cfg);
  ASSERT_TRUE(app.state().perf.valid) << app.state().perf.error;
  const auto rects = app.state().probe.widget_rects;
  ASSERT_TRUE(rects.count("perf.stack"));
  const mc::ui::Rect r = rects.at("perf.stack");  // the tree node "The same layout on every stack" is next
  mc::test::click_at(h, app, ImVec2(r.x + 40, r.y + r.h + ImGui::GetFrameHeight() / 2 + 2));
  EXPECT_NE(h.text.find("Megatron-LM v1.0 (2020) | cannot run it"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("OpenAI GPT-3 code (2020) | cannot run it"), std::string::npos) << h.text;
  EXPECT_EQ(h.text.find("Megatron-LM (2021) | cannot run it"), std::string::npos) << h.text;
  // An explicit interleaved layout on OpenAI's 2020 code is refused, naming the stack and the feature.
  cfg["software"] = "openai-gpt3-2020";
  cfg["parallel"]["schedule"] = "interleaved", cfg["parallel"]["virtual_stages"] = 2;
  show(h, app, cfg);
  EXPECT_FALSE(app.state().perf.valid);
  EXPECT_NE(h.text.find("OpenAI GPT-3 code (2020) has no interleaved pipeline schedule"), std::string::npos) << h.text;
  // So is any pipeline on Megatron-LM v1.0.
  cfg["software"] = "megatron-lm-2020";
  cfg["parallel"]["schedule"] = "1f1b", cfg["parallel"]["virtual_stages"] = 1;
  show(h, app, cfg);
  EXPECT_FALSE(app.state().perf.valid);
  EXPECT_NE(h.text.find("Megatron-LM v1.0 (2020) has no pipeline parallelism"), std::string::npos) << h.text;
}

// C23: network-matters-3 lowers the node network to 25 Gb/s on the Azure preset: the panel shows the rate
// in use (and the preset's), the fabric whose efficiency the collectives keep, and that 25 Gb/s cannot be an
// InfiniBand EDR link; with the Ethernet fabric named, its own (assumed) efficiency applies.
TEST(PerfTruth, NetworkOverrideIsShownWithItsFabric) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  nlohmann::json cfg = nlohmann::json::parse(R"({"model": {"preset": "gpt3-175b"},
      "cluster": {"preset": "azure-openai-2020", "gpus": 1024, "node_network_Gbps": 25},
      "parallel": {"tp": 8, "pp": 16, "dp": 8, "micro_batch": 1, "global_batch": 1536, "schedule": "1f1b",
                   "recompute": "full"}})");
  show(h, app, cfg);
  ASSERT_TRUE(app.state().perf.valid) << app.state().perf.error;
  EXPECT_NE(h.text.find("Network: 25 Gb/s per node (set here; the preset has 400) over InfiniBand EDR"),
            std::string::npos)
      << h.text;
  EXPECT_NE(h.text.find("collectives at 97% of it"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("25 Gb/s is less than one InfiniBand EDR (fat-tree) link (100 Gb/s)"), std::string::npos)
      << h.text;
  const double t_ib = app.state().perf.estimate.iteration_time_s;
  cfg["cluster"]["fabric"] = "ethernet-25g-tcp";
  show(h, app, cfg);
  ASSERT_TRUE(app.state().perf.valid) << app.state().perf.error;
  EXPECT_NE(h.text.find("over Commodity Ethernet, 25 Gb/s per node (NCCL over TCP sockets), collectives at 50% of it"),
            std::string::npos)
      << h.text;
  EXPECT_EQ(h.text.find("is less than one"), std::string::npos) << h.text;
  EXPECT_GT(app.state().perf.estimate.iteration_time_s, t_ib) << "Ethernet kept InfiniBand's efficiency";
}

// The Capital panel beside gpt2-tpu-2019's "The bill": a TPU v3 core-hour is priced and counted as such,
// in the words the narration uses, never as a GPU-hour.
TEST(PerfTruth, CapitalPanelPricesTpuCoreHours) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "capital"});
  ASSERT_TRUE(mc::test::open_scenario_step(h, app, "gpt2-tpu-2019", 1));
  app.state().active_panel = "capital";
  for (int i = 0; i < 3; ++i) h.frame(app);
  EXPECT_NE(h.text.find("per TPU v3 core-hour"), std::string::npos) << h.text.substr(0, 600);
  EXPECT_NE(h.text.find("26 thousand TPU v3 core-hours at"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("256 TPU v3 cores"), std::string::npos);
  EXPECT_EQ(h.text.find("GPU-hours at"), std::string::npos) << "a TPU plan printed as GPU-hours";
}

// "days for 300 B tokens" under GPT-1 read as if GPT-1 had trained on GPT-3's tokens: a count the catalog
// does not hold for the model is said to be an assumption; GPT-3's own (catalog) and a typed one are not.
TEST(PerfTruth, AnAssumedTokenCountIsSaidToBeOne) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  const char* assumed = "is an assumption, GPT-3's count";
  show(h, app, nlohmann::json::parse(R"({"model": {"preset": "gpt1"},
      "cluster": {"gpu": "p100-16gb", "gpus_per_node": 8, "nodes": 1},
      "parallel": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 8, "global_batch": 64}})"));
  ASSERT_TRUE(app.state().perf.valid) << app.state().perf.error;
  EXPECT_NE(h.text.find(assumed), std::string::npos) << "GPT-1's token count is not in the catalog";
  nlohmann::json typed = mc::perf::to_json(app.state().perf.config);
  typed["training"] = {{"tokens", 1e9}};
  show(h, app, typed);
  EXPECT_EQ(h.text.find(assumed), std::string::npos) << "a count the user typed is theirs";
  show(h, app, nlohmann::json::parse(R"({"model": {"preset": "gpt3-175b"},
      "cluster": {"preset": "azure-openai-2020", "gpus": 1024},
      "parallel": {"tp": 8, "pp": 16, "dp": 8, "micro_batch": 1, "global_batch": 1536}})"));
  EXPECT_EQ(h.text.find(assumed), std::string::npos) << "GPT-3's 300B is the catalog's";
}

// At a projector's 1280x720 the stack combo is narrower than its name: the preview shortens it at its end
// ("OpenAI GPT-3 cod..."), read from its start, not from the left ("...uilt for OpenAI (2020)"); the list
// it opens shows every name whole.
TEST(PerfTruth, NarrowCombosShortenNamesAtTheirEnd) {
  Headless h(1280, 720, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  for (int i = 0; i < 3; ++i) h.frame(app);
  ASSERT_TRUE(app.state().perf.valid) << app.state().perf.error;
  EXPECT_EQ(app.state().perf.parsed.software.id, "openai-gpt3-2020");
  // The headless text shows a combo as "{ preview } label".
  auto preview_of = [&](const std::string& label) {
    const size_t end = h.text.find(" } " + label);
    if (end == std::string::npos) return std::string();
    const size_t start = h.text.rfind("{ ", end);
    return h.text.substr(start + 2, end - start - 2);
  };
  const std::string sw = preview_of("software");
  const std::string name = app.state().catalog->table("software")->find("openai-gpt3-2020")->name;
  ASSERT_GT(sw.size(), 3u) << "no software combo drawn";
  EXPECT_EQ(sw.substr(sw.size() - 3), "...") << "the name fits at this width? " << sw;
  EXPECT_EQ(name.rfind(sw.substr(0, sw.size() - 3), 0), 0u) << sw << " is not the start of " << name;
  EXPECT_GE(sw.size(), 12u) << "too little of the name is left: " << sw;
  const std::string cluster = preview_of("cluster");
  EXPECT_NE(cluster.rfind("...", 0), 0u) << "a name cut from the left: " << cluster;
}

// The stack's efficiencies carry their confidence as catalog cells do: OpenAI's 2020 code published no
// kernels, so its GEMM fraction and memory-bound traffic are assumptions (" ?"); Megatron-LM v1.0's GEMM
// fraction is reported and its traffic counted from its code (" ~").
TEST(PerfTruth, AssumedStackEfficienciesAreMarked) {
  Headless h(1440, 900);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, "perf"});
  for (int i = 0; i < 3; ++i) h.frame(app);
  ASSERT_EQ(app.state().perf.parsed.software.id, "openai-gpt3-2020");
  EXPECT_NE(h.text.find("Large GEMMs at 66% ? of peak"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("x2.0 ? the traffic"), std::string::npos) << h.text;
  nlohmann::json cfg = nlohmann::json::parse(R"({"model": {"preset": "gpt3-175b"},
      "cluster": {"preset": "azure-openai-2020", "gpus": 1024}, "software": "megatron-lm-2020",
      "parallel": {"tp": 8, "pp": 1, "dp": 128, "micro_batch": 1, "global_batch": 1536, "recompute": "full"}})");
  show(h, app, cfg);
  EXPECT_NE(h.text.find("Large GEMMs at 66% of peak"), std::string::npos) << h.text;
  EXPECT_NE(h.text.find("x2.0 ~ the traffic"), std::string::npos) << h.text;
  // A layout without a pipeline is not called a 1-stage pipeline with a bubble.
  EXPECT_NE(h.text.find("One stage, no pipeline (pp = 1)"), std::string::npos) << h.text;
  EXPECT_EQ(h.text.find("1 stages"), std::string::npos) << h.text;
}
