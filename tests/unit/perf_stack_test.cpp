// perf_stack_test.cpp - what the analytic model reports and allows, named as the literature names it:
// model vs hardware FLOPs utilisation (MFU, HFU), the training stack's capabilities (software.json) in the
// search and in an explicit layout, and the accelerator's unit words.
#include "catalog/accelerator.h"
#include "catalog/catalog.h"
#include "perf/collectives.h"
#include "perf/perf.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

using mc::test::catalog;
using nlohmann::json;

namespace {

json gpt3_azure(const char* software, const json& parallel) {
  json c = {{"model", {{"preset", "gpt3-175b"}}},
            {"cluster", {{"preset", "azure-openai-2020"}, {"gpus", 1024}}},
            {"parallel", {{"tp", 8}, {"pp", 16}, {"dp", 8}, {"micro_batch", 1}, {"global_batch", 1536}}}};
  if (software) c["software"] = software;
  c["parallel"].update(parallel);
  return c;
}

std::string refusal(const json& cfg) {
  try {
    mc::perf::parse_config(catalog(), cfg, "cfg.json");
  } catch (const mc::LoadError& e) {
    return e.key + ": " + e.message;
  }
  return "";
}

}  // namespace

// PaLM (Chowdhery et al. 2022), App. B: MFU counts model FLOPs, HFU the FLOPs executed with recomputation.
// Narayanan et al. 2021 eq. (3): full recompute is 4/3 of the layers' model FLOPs (96 vs 72 B s l h^2), the
// logit term (not recomputed) pulls the ratio slightly below 4/3.
TEST(PerfUtilisation, HfuCountsRecomputeMfuDoesNot) {
  const auto c = mc::perf::parse_config(catalog(), gpt3_azure(nullptr, {{"recompute", "full"}}), "cfg");
  const auto e = mc::perf::estimate(c);
  const double gpus = 1024, peak = c.cluster.peak_fp16_flops;
  EXPECT_NEAR(e.model_tflops_per_gpu * 1e12 * gpus * e.iteration_time_s, e.model_flops_per_iteration,
              1e-9 * e.model_flops_per_iteration);
  EXPECT_NEAR(e.mfu, e.model_tflops_per_gpu * 1e12 / peak, 1e-12);
  EXPECT_NEAR(e.hfu, e.achieved_tflops_per_gpu * 1e12 / peak, 1e-12);
  EXPECT_GT(e.hfu / e.mfu, 1.3);
  EXPECT_LT(e.hfu / e.mfu, 4.0 / 3.0);
  // Without recompute the two are one number.
  const auto n =
      mc::perf::estimate(mc::perf::parse_config(catalog(), gpt3_azure(nullptr, {{"recompute", "none"}}), "cfg"));
  EXPECT_DOUBLE_EQ(n.hfu, n.mfu);
  EXPECT_DOUBLE_EQ(n.model_tflops_per_gpu, n.achieved_tflops_per_gpu);
  // `megacluster estimate` prints both under these names.
  const json j = mc::perf::estimate_json(catalog(), gpt3_azure(nullptr, {{"recompute", "full"}}));
  EXPECT_DOUBLE_EQ(j.at("hfu").get<double>(), e.hfu);
  EXPECT_DOUBLE_EQ(j.at("model_tflops_per_gpu").get<double>(), e.model_tflops_per_gpu);
}

// Megatron-LM v1.0 (2020) had no pipeline (tag v1.0; pipelines came in v2.0, 2021), no interleaved schedule
// (Narayanan et al. 2021), no selective recompute and no sequence parallelism (Korthikanti et al. 2022), and
// no ZeRO (DeepSpeed's): each refused by name and key. OpenAI's 2020 code split layers (GPT-3 paper, Sec.
// 2.3) but had no interleaved schedule either.
TEST(PerfStack, ExplicitLayoutTheStackLacksIsRefusedByName) {
  const char* v1 = "megatron-lm-2020";
  const json no_pipeline = {{"tp", 8}, {"pp", 1}, {"dp", 128}};
  auto v1_layout = [&](const json& more) {
    json p = no_pipeline;
    p.update(more);
    return gpt3_azure(v1, p);
  };
  std::string r = refusal(gpt3_azure(v1, json::object()));  // tp 8 x pp 16
  EXPECT_NE(r.find("parallel/pp"), std::string::npos) << r;
  EXPECT_NE(r.find("Megatron-LM v1.0 (2020) has no pipeline parallelism"), std::string::npos) << r;
  r = refusal(gpt3_azure("openai-gpt3-2020", {{"schedule", "interleaved"}, {"virtual_stages", 2}}));
  EXPECT_NE(r.find("parallel/schedule"), std::string::npos) << r;
  EXPECT_NE(r.find("OpenAI GPT-3 code (2020) has no interleaved pipeline schedule"), std::string::npos) << r;
  r = refusal(v1_layout({{"recompute", "selective"}}));
  EXPECT_NE(r.find("parallel/recompute"), std::string::npos) << r;
  EXPECT_NE(r.find("no selective activation recomputation"), std::string::npos) << r;
  r = refusal(v1_layout({{"zero", 1}}));
  EXPECT_NE(r.find("parallel/zero"), std::string::npos) << r;
  EXPECT_NE(r.find("Megatron-LM v1.0 (2020) has no ZeRO"), std::string::npos) << r;
  r = refusal(v1_layout({{"sequence_parallel", true}}));
  EXPECT_NE(r.find("no sequence parallelism"), std::string::npos) << r;
  // DeepSpeed's pipeline engine runs ZeRO-1 only (stages 2 and 3 are incompatible with it).
  r = refusal(gpt3_azure("megatron-deepspeed-2021", {{"zero", 2}}));
  EXPECT_NE(r.find("up to stage 1 together with pipeline parallelism"), std::string::npos) << r;
  // What the stacks do run is accepted.
  EXPECT_EQ(refusal(v1_layout({{"recompute", "full"}})), "");
  EXPECT_EQ(refusal(gpt3_azure("openai-gpt3-2020", {{"schedule", "1f1b"}, {"recompute", "full"}})), "");
  EXPECT_EQ(refusal(gpt3_azure("megatron-lm-2021", {{"schedule", "interleaved"}, {"virtual_stages", 2}})), "");
  EXPECT_EQ(refusal(gpt3_azure("megatron-deepspeed-2021", {{"zero", 1}})), "");
  // check_stack = false (validate): accepted, and stack_problems says why it would be refused, each once.
  const auto c =
      mc::perf::parse_config(catalog(), gpt3_azure(v1, {{"zero", 1}, {"recompute", "selective"}}), "cfg", true, false);
  const auto p = mc::perf::stack_problems(c);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].rfind("pp:", 0), 0u) << p[0];
  EXPECT_EQ(p[1].rfind("recompute:", 0), 0u) << p[1];
  EXPECT_EQ(p[2].rfind("zero:", 0), 0u) << p[2];
}

// Korthikanti et al. 2022 ran sequence parallelism with selective recomputation on Selene (Table 3: 8-way
// tensor parallel; 22B alone, 175B on 8 stages, 530B on 35, 1T on 64). Their code is the 2022 stack: the
// layouts run on it as published, and the 2021 stack, which lacks both, is refused with the stacks that
// run the layout named, the 2022 code among them.
TEST(PerfStack, KorthikantisLayoutsRunOnTheirCode) {
  struct Run {
    json model;
    int pp;
  };
  const json mt530 = {{"preset", "megatron21-529.6b"}}, t1 = {{"preset", "megatron21-1t"}};
  const json b22 = {{"hidden", 6144}, {"layers", 48}, {"heads", 64}, {"seq_len", 2048}, {"vocab", 51200}};
  for (const Run& r : {Run{b22, 1}, Run{{{"preset", "gpt3-175b"}}, 8}, Run{mt530, 35}, Run{t1, 64}}) {
    json cfg = {{"model", r.model},
                {"cluster", {{"preset", "selene-2021"}, {"gpus", 8 * r.pp}}},
                {"parallel",
                 {{"tp", 8},
                  {"pp", r.pp},
                  {"dp", 1},
                  {"micro_batch", 1},
                  {"global_batch", 64},
                  {"sequence_parallel", true},
                  {"recompute", "selective"}}},
                {"software", "megatron-lm-2022"}};
    EXPECT_EQ(refusal(cfg), "") << r.model;
    const json e = mc::perf::estimate_json(catalog(), cfg);
    EXPECT_TRUE(e.at("notes").empty()) << e.at("notes");
    EXPECT_TRUE(e.at("fits").get<bool>()) << r.model << " on 80 GB A100s, as the paper ran it";
    // Selective recomputation re-runs only the attention core: far less than a whole forward (eq. 3's 4/3).
    EXPECT_GT(e.at("hfu").get<double>(), e.at("mfu").get<double>());
    EXPECT_LT(e.at("hfu").get<double>() / e.at("mfu").get<double>(), 1.05);
    cfg["software"] = "megatron-lm-2021";
    const std::string why = refusal(cfg);
    EXPECT_NE(why.find("no selective activation recomputation"), std::string::npos) << why;
    EXPECT_NE(why.find("stacks that run this layout: megatron-lm-2022"), std::string::npos) << why;
  }
}

// OPT-175B (Zhang et al. 2022, opt-paper): 992 80 GB A100s, fully sharded data parallelism with Megatron's
// 8-way tensor parallelism, as metaseq's launcher ran it (GPT-3 175B's shape; 8 sequences a replica).
// PyTorch's FSDP of 2022 has no tensor split, so naming it is refused, with metaseq among the stacks that
// run the layout; on metaseq it runs and fits, every layer held whole from its forward to its backward.
TEST(PerfStack, OptsLayoutRunsOnItsCode) {
  json cfg = {
      {"model", {{"preset", "gpt3-175b"}}},
      {"cluster",
       {{"gpu", "a100-80gb"}, {"gpus_per_node", 8}, {"nodes", 124}, {"node_network_Gbps", 1600}, {"fabric", "ib-hdr"}}},
      {"parallel",
       {{"tp", 8},
        {"dp", 124},
        {"micro_batch", 8},
        {"global_batch", 992},
        {"zero", 3},
        {"recompute", "full"},
        {"partition_activations", true}}},
      {"software", "metaseq-2022"}};
  EXPECT_EQ(refusal(cfg), "");
  const json e = mc::perf::estimate_json(catalog(), cfg);
  EXPECT_TRUE(e.at("fits").get<bool>());
  const auto c = mc::perf::parse_config(catalog(), cfg, "cfg");
  EXPECT_GT(e["memory_per_gpu_bytes"]["gathered"].get<double>(),
            c.model.layers * mc::perf::layer_params_bytes(c.model, 8, 2));
  cfg["software"] = "pytorch-fsdp-2022";
  const std::string why = refusal(cfg);
  EXPECT_NE(why.find("has no tensor parallelism"), std::string::npos) << why;
  EXPECT_NE(why.find("metaseq-2022"), std::string::npos) << why;
}

// A config that names no stack gets the preset's (azure-openai-2020: OpenAI's 2020 code): its layout is not
// refused, but the estimate says the stack could not run it.
TEST(PerfStack, DefaultStackLayoutIsAWhatIfSaidSo) {
  const json cfg = gpt3_azure(nullptr, {{"zero", 1}});
  EXPECT_EQ(refusal(cfg), "");
  const json j = mc::perf::estimate_json(catalog(), cfg);
  EXPECT_EQ(j.at("software"), "openai-gpt3-2020");
  ASSERT_EQ(j.at("notes").size(), 1u) << j.at("notes");
  const std::string n = j.at("notes")[0];
  EXPECT_NE(n.find("what-if: OpenAI GPT-3 code (2020) has no ZeRO"), std::string::npos) << n;
  EXPECT_TRUE(mc::perf::estimate_json(catalog(), gpt3_azure(nullptr, json::object())).at("notes").empty());
}

// The search proposes only what the stack runs, and counts what it left out under a reason naming both.
TEST(PerfStack, SearchKeepsToTheStack) {
  mc::perf::SearchOptions o;
  o.max_results = 40;
  o.only_tp = 8;  // one slice keeps the test quick; the filter does not depend on tp
  const auto c = mc::perf::parse_config(catalog(), gpt3_azure("openai-gpt3-2020", json::object()), "cfg", false);
  const auto r = mc::perf::search(c, o);
  ASSERT_FALSE(r.ranked.empty());
  bool pipelined = false;
  for (const auto& sc : r.ranked) {
    EXPECT_NE(sc.layout.schedule, mc::PipeSchedule::interleaved);
    EXPECT_NE(sc.layout.recompute, mc::perf::Recompute::selective);
    EXPECT_EQ(sc.layout.zero, 0);
    EXPECT_FALSE(sc.layout.sequence_parallel);
    pipelined |= sc.layout.pp > 1;
  }
  EXPECT_TRUE(pipelined);
  long long interleaved = 0, zero = 0;
  for (const auto& [reason, n] : r.rejected_by_reason) {
    if (reason.find("OpenAI GPT-3 code (2020) has no interleaved pipeline schedule") != std::string::npos)
      interleaved += n;
    if (reason.find("OpenAI GPT-3 code (2020) has no ZeRO") != std::string::npos) zero += n;
  }
  EXPECT_GT(interleaved, 0);
  EXPECT_GT(zero, 0);
  // Megatron-LM v1.0 alone could not train GPT-3 on V100s: without a pipeline no layout fits in 32 GB, and
  // the search says that the stack's missing pipeline is why.
  const auto v1 = mc::perf::parse_config(catalog(), gpt3_azure("megatron-lm-2020", json::object()), "cfg", false);
  const auto rv1 = mc::perf::search(v1, o);
  EXPECT_TRUE(rv1.ranked.empty()) << rv1.ranked.size() << " layouts, the first with pp " << rv1.ranked[0].layout.pp;
  long long no_pipeline = 0;
  for (const auto& [reason, n] : rv1.rejected_by_reason)
    if (reason.find("Megatron-LM v1.0 (2020) has no pipeline parallelism") != std::string::npos) no_pipeline += n;
  EXPECT_GT(no_pipeline, 0);
  // The same search on Megatron-LM (2021) ranks interleaved layouts (the paper's own schedule).
  const auto c21 = mc::perf::parse_config(catalog(), gpt3_azure("megatron-lm-2021", json::object()), "cfg", false);
  bool any = false;
  for (const auto& sc : mc::perf::search(c21, o).ranked) any |= sc.layout.schedule == mc::PipeSchedule::interleaved;
  EXPECT_TRUE(any);
}

// FSDP-only and data-parallel-only stacks (PyTorch FSDP 2022, llm-foundry, llm.c, HF + DeepSpeed) split
// no layer and run no pipeline: the search keeps to tp = pp = 1 for them and says why, an explicit tp or pp is
// refused by name, and a problem is said once however many features a layout asks for.
TEST(PerfStack, ShardedDataParallelStacksHaveNoTensorOrPipelineSplit) {
  for (const char* sw : {"pytorch-fsdp-2022", "llm-foundry-2023", "llm-c-2024", "hf-deepspeed-2021"}) {
    SCOPED_TRACE(sw);
    EXPECT_NE(refusal(gpt3_azure(sw, {{"tp", 8}, {"pp", 1}, {"dp", 128}})).find("has no tensor parallelism"),
              std::string::npos);
    EXPECT_NE(refusal(gpt3_azure(sw, {{"tp", 1}, {"pp", 16}, {"dp", 64}})).find("has no pipeline parallelism"),
              std::string::npos);
  }
  const auto c = mc::perf::parse_config(catalog(), gpt3_azure("pytorch-fsdp-2022", json::object()), "cfg", false);
  mc::perf::SearchOptions o;
  o.max_results = 40;
  const auto r = mc::perf::search(c, o);
  for (const auto& sc : r.ranked) {
    EXPECT_EQ(sc.layout.tp, 1);
    EXPECT_EQ(sc.layout.pp, 1);
  }
  long long tp = 0, pp = 0;
  for (const auto& [reason, n] : r.rejected_by_reason) {
    if (reason.find("has no tensor parallelism") != std::string::npos) tp += n;
    if (reason.find("has no pipeline parallelism") != std::string::npos) pp += n;
  }
  EXPECT_GT(tp, 0);
  EXPECT_GT(pp, 0);
  // A what-if layout on the preset's default stack lists each missing feature once.
  mc::perf::Config what_if = mc::perf::parse_config(catalog(), gpt3_azure(nullptr, json::object()), "cfg");
  what_if.software = mc::perf::software_from_catalog(catalog(), "llm-c-2024", what_if.cluster.gpu);
  what_if.layout.schedule = mc::PipeSchedule::interleaved;
  const auto problems = mc::perf::stack_problems(what_if);
  ASSERT_EQ(problems.size(), 2u) << "tp and pp, and nothing said twice";
  EXPECT_EQ(problems[0].rfind("tp: ", 0), 0u) << problems[0];
  EXPECT_EQ(problems[1].rfind("pp: ", 0), 0u) << problems[1];
}

// The search names the accelerator it ran out of: a TPU v3 chip's memory, not a GPU's.
TEST(PerfStack, SearchSaysWhoseMemoryIsShort) {
  const json cfg = json::parse(R"({"model": {"preset": "gpt3-175b"},
      "cluster": {"gpu": "tpu-v3", "gpus_per_node": 4, "nodes": 64, "node_network_Gbps": 400},
      "parallel": {"global_batch": 512}})");
  const auto c = mc::perf::parse_config(catalog(), cfg, "cfg", false);
  EXPECT_EQ(c.cluster.accelerator, "TPU v3 chip");
  mc::perf::SearchOptions o;
  o.only_tp = 1;
  o.only_pp = 1;
  const auto r = mc::perf::search(c, o);
  bool tpu = false, gpu = false;
  for (const auto& [reason, n] : r.rejected_by_reason) {
    tpu |= reason == "does not fit in TPU v3 chip memory" && n > 0;
    gpu |= reason.find("GPU") != std::string::npos;
  }
  EXPECT_TRUE(tpu);
  EXPECT_FALSE(gpu);
}

// Every stack in software.json states each capability, with a source and a confidence like its other values.
TEST(PerfStack, EveryStackStatesItsCapabilities) {
  const mc::Table* t = catalog().table("software");
  ASSERT_NE(t, nullptr);
  for (const auto& r : t->records)
    for (const char* k : {"interleaved_schedule", "selective_recompute", "sequence_parallel", "max_zero_stage"}) {
      const mc::Sourced* s = r.find(k);
      ASSERT_NE(s, nullptr) << r.id << " has no " << k;
      EXPECT_FALSE(s->source.empty()) << r.id << "." << k;
    }
}

TEST(AcceleratorWords, TpuIsNotAGpu) {
  EXPECT_EQ(mc::accelerator_words(&catalog(), "v100-32gb").hour, "GPU-hour");
  const auto chip = mc::accelerator_words(&catalog(), "tpu-v3");
  EXPECT_EQ(chip.many, "TPU v3 chips");
  EXPECT_EQ(chip.hour, "TPU v3 chip-hour");
  EXPECT_FALSE(chip.is_gpu);
  // The capital plan prices TPU v3 per core (prices.json tpu-v3-core-hour) under the id "tpu-v3-core".
  const auto core = mc::accelerator_words(&catalog(), "tpu-v3-core");
  EXPECT_EQ(core.one, "TPU v3 core");
  EXPECT_EQ(core.hour, "TPU v3 core-hour");
  EXPECT_EQ(mc::accelerator_words(nullptr, "").many, "GPUs");
}

// An Ethernet fabric brings its own bus efficiency and latency (fabrics.json), not InfiniBand's.
TEST(PerfFabric, EthernetDoesNotInheritInfinibandEfficiency) {
  json cfg = gpt3_azure(nullptr, {{"schedule", "1f1b"}, {"recompute", "full"}});
  cfg["cluster"]["node_network_Gbps"] = 25;
  const auto ib = mc::perf::parse_config(catalog(), cfg, "cfg");
  cfg["cluster"]["fabric"] = "ethernet-25g-tcp";
  const auto eth = mc::perf::parse_config(catalog(), cfg, "cfg");
  const mc::Record* row = catalog().table("fabrics")->find("ethernet-25g-tcp");
  ASSERT_NE(row, nullptr);
  EXPECT_DOUBLE_EQ(eth.cluster.inter_bus_efficiency, row->get("bus_efficiency"));
  EXPECT_DOUBLE_EQ(eth.cluster.inter_latency_s, row->get("latency_us") * 1e-6);
  EXPECT_LT(eth.cluster.inter_bus_efficiency, ib.cluster.inter_bus_efficiency);
  // Same 25 Gb/s line rate, lower efficiency: the data-parallel exchange takes longer.
  EXPECT_GT(mc::perf::estimate(eth).time.dp_comm, mc::perf::estimate(ib).time.dp_comm);
}

// A measured collective bandwidth whose NCCL log shows the rings crossing each node through fewer ports
// than it has (cluster inter_busbw_nics; BigScience's A100 benchmark of January 2022: 5.07 GB/s, one of
// four Omni-Path ports each way) is one communicator's rate: concurrent data-parallel groups on a node
// each keep it until the node's four ports are shared (by hand: 1 or 4 groups take the same time, 8 twice
// as long); read as the whole node's (no inter_busbw_nics), 4 groups took 4 times as long.
TEST(PerfFabric, AMeasuredBusBandwidthIsOneCommunicatorsWhereItsLogSaysSo) {
  const json cluster = {{"gpu", "a100-80gb"},       {"gpus", 64},          {"gpus_per_node", 8},
                        {"node_network_Gbps", 400}, {"fabric", "opa-100"}, {"inter_busbw_GBps", 5.07},
                        {"inter_busbw_nics", 1}};
  json cfg = {{"model", {{"preset", "gpt3-13b"}}},
              {"cluster", cluster},
              {"parallel", {{"tp", 8}, {"pp", 1}, {"dp", 8}, {"micro_batch", 1}, {"global_batch", 8}}}};
  const auto c = mc::perf::parse_config(catalog(), cfg, "cfg");
  ASSERT_EQ(c.cluster.inter_busbw_nics, 1);
  ASSERT_EQ(c.cluster.inter_link_Gbps, 100);  // fabrics.json opa-100
  const mc::perf::Topology t = mc::perf::topology_of(c.cluster);
  EXPECT_NEAR(t.node_inter_Bps, 4 * 5.07e9, 1e3);
  EXPECT_NEAR(t.group_inter_Bps, 5.07e9, 1e3);
  const double bytes = 10e9;  // large: the bandwidth term dominates the latencies
  auto ring = [&](const mc::perf::Topology& tp, int groups) { return mc::perf::all_reduce(tp, bytes, 8, 1, groups); };
  const double one = ring(t, 1).time_s, four = ring(t, 4).time_s, eight = ring(t, 8).time_s;
  EXPECT_NEAR(one, 2.0 * 7 / 8 * bytes / 5.07e9, 0.01 * one);
  EXPECT_NEAR(four, one, 1e-9 * one);
  EXPECT_NEAR(eight, 2 * one, 0.01 * eight);
  json whole = cfg;
  whole["cluster"].erase("inter_busbw_nics");
  const mc::perf::Topology tw = mc::perf::topology_of(mc::perf::parse_config(catalog(), whole, "cfg").cluster);
  EXPECT_EQ(tw.group_inter_Bps, 0);
  EXPECT_NEAR(ring(tw, 4).time_s, 4 * ring(tw, 1).time_s, 0.01 * ring(tw, 4).time_s);
  EXPECT_NEAR(ring(tw, 1).time_s, one, 1e-9 * one);
}

// The 2019 Megatron-LM release (software.json megatron-lm-2019, read from its code) all-reduces every
// gradient after the whole backward pass (model/distributed.py; its hooks are commented out), and so does
// v1.0 by default (megatron/arguments.py: --DDP-impl local). The 8.3B preset on its DGX-2H cluster names
// the 2019 stack, so the data-parallel all-reduce is all exposed: the same layout with the reduction
// overlapped differs by exactly the part the backward would hide, and nothing else.
TEST(PerfStack, Megatron2019AllReducesAfterTheBackward) {
  const json cfg = {{"model", {{"preset", "megatron-lm-8.3b"}}},
                    {"cluster", {{"preset", "dgx2h-2019"}}},
                    {"parallel", {{"tp", 8}, {"pp", 1}, {"dp", 64}, {"micro_batch", 8}, {"recompute", "full"}}}};
  const mc::perf::Config c19 = mc::perf::parse_config(catalog(), cfg, "cfg", false);
  EXPECT_EQ(c19.software.id, "megatron-lm-2019");
  EXPECT_EQ(c19.software.chosen_by, "models/megatron-lm-8.3b");
  EXPECT_FALSE(c19.software.dp_overlap);
  mc::perf::Config overlapped = c19;
  overlapped.software.dp_overlap = true;
  const mc::perf::Estimate e19 = mc::perf::estimate(c19), eo = mc::perf::estimate(overlapped);
  EXPECT_DOUBLE_EQ(e19.time.compute, eo.time.compute);
  EXPECT_GT(e19.time.dp_comm, eo.time.dp_comm);
  EXPECT_NEAR(e19.iteration_time_s - eo.iteration_time_s, e19.time.dp_comm - eo.time.dp_comm,
              1e-9 * e19.iteration_time_s);
  // The exposed time is the whole ring all-reduce of the tp shard's fp16 gradients over the 64 replicas.
  const double shard = 2.0 * e19.params / 8;
  EXPECT_GT(e19.time.dp_comm, 2.0 * 63 / 64 * shard / (c19.cluster.node_network_Gbps / 8 * 1e9 / 2));
  // v1.0 reduces the same way.
  json v1 = cfg;
  v1["software"] = "megatron-lm-2020";
  const mc::perf::Config c20 = mc::perf::parse_config(catalog(), v1, "cfg", false);
  EXPECT_FALSE(c20.software.dp_overlap);
  EXPECT_DOUBLE_EQ(mc::perf::estimate(c20).time.dp_comm, e19.time.dp_comm);
}

// The optimizer step of Megatron-LM 2019 and v1.0 (fp16/fp16.py FP16_Optimizer, apex FusedAdam), counted
// from the code in software.json: besides Adam's 28 bytes a parameter, the gradients are flattened and
// copied back around the all-reduce, cast to fp32 and summed for the overflow check, copied into fp32,
// unscaled and read for the norm, and the weights copied back to fp16 (80 bytes in 2019, 74 in v1.0, which
// sets gradients to None instead of zeroing them: 6 bytes fewer). The overflow check and the norm wait for
// the GPU after every tensor (five operations a tensor), so the GPU idles while the host dispatches them.
// By hand for the 8.3B model on 8 tensor ranks: 72 layers of 12 tensors plus 4 (embeddings, final
// LayerNorm), and the rank's parameters: 72 layers of 12 h^2 / 8 (and their biases), the vocabulary's
// embedding split 8 ways and the position embedding whole.
TEST(PerfStack, Megatron2019StepPassesOverEveryTensor) {
  const json cfg = {{"model", {{"preset", "megatron-lm-8.3b"}}},
                    {"cluster", {{"preset", "dgx2h-2019"}}},
                    {"parallel", {{"tp", 8}, {"pp", 1}, {"dp", 64}, {"micro_batch", 8}, {"recompute", "full"}}}};
  const mc::perf::Config c19 = mc::perf::parse_config(catalog(), cfg, "cfg", false);
  ASSERT_EQ(c19.software.optimizer_bytes_per_param, 80);
  ASSERT_EQ(c19.software.optimizer_host_ops_per_tensor, 5);
  ASSERT_NEAR(c19.software.host_op_dispatch_s, 4.5e-6, 1e-12);
  mc::perf::Config adam_only = c19;
  adam_only.software.optimizer_bytes_per_param = 28;
  adam_only.software.optimizer_host_ops_per_tensor = 0;
  const mc::perf::Estimate e19 = mc::perf::estimate(c19), ea = mc::perf::estimate(adam_only);
  const mc::perf::ModelSpec& m = c19.model;
  const double h = m.hidden;
  const double rank_params = 72 * mc::perf::layer_params_bytes(m, 8, 1.0) + double(m.vocab) * h / 8 + m.seq_len * h;
  EXPECT_NEAR(rank_params, 8.3e9 / 8 + m.seq_len * h, 0.02 * rank_params);
  const double rate = c19.cluster.hbm_bandwidth_GBps * 1e9 * c19.cluster.elementwise_hbm_fraction;
  const double host_s = (72 * 12 + 4) * 5 * 4.5e-6;
  EXPECT_NEAR(e19.time.optimizer - ea.time.optimizer, 52 * rank_params / rate + host_s, 0.01 * host_s);
  EXPECT_NEAR(ea.time.optimizer, 28 * rank_params / rate, 0.01 * ea.time.optimizer);
  EXPECT_NEAR(e19.iteration_time_s - ea.iteration_time_s, e19.time.optimizer - ea.time.optimizer, 1e-12);
  // v1.0: 6 bytes fewer, the same host round trips.
  json v1 = cfg;
  v1["software"] = "megatron-lm-2020";
  const mc::perf::Estimate e20 = mc::perf::estimate(mc::perf::parse_config(catalog(), v1, "cfg", false));
  EXPECT_NEAR(e19.time.optimizer - e20.time.optimizer, 6 * rank_params / rate, 0.01 * 6 * rank_params / rate);
  // Megatron-LM 2021 runs the same passes as multi-tensor kernels over all tensors at once, in fewer bytes
  // (58: the fp32 cast and the unscale write once each, nothing is flattened) and with no round trip a
  // tensor: its step is the bytes alone.
  json v21 = cfg;
  v21["software"] = "megatron-lm-2021";
  const mc::perf::Config c21 = mc::perf::parse_config(catalog(), v21, "cfg", false);
  EXPECT_EQ(c21.software.optimizer_bytes_per_param, 58);
  EXPECT_EQ(c21.software.optimizer_host_ops_per_tensor, 0);
  EXPECT_NEAR(mc::perf::estimate(c21).time.optimizer, 58 * rank_params / rate, 0.01 * 58 * rank_params / rate);
}

// Gradient accumulation over micro-batches (software.json grad_accumulation_bytes): a stack that adds each
// micro-batch's weight gradient into the accumulated ones (Megatron-LM's main_grad hook of 2021, commit
// b4bc51b; autograd's param.grad += g in DeepSpeed's engine) reads and writes its parameters once more: 6
// bytes a parameter with 2-byte gradients, at the memory-bound kernels' HBM rate, on the layers and on the
// last stage's output layer. Autograd keeps the first micro-batch's gradient and adds the other m - 1; the
// hook adds all m into a buffer cleared each iteration. A stack that reduce-scatters every micro-batch
// (DeepSpeed 0.6's ZeRO-3) keeps no full accumulation and pays nothing.
TEST(PerfStack, EachMicroBatchAddsItsWeightGradientOnce) {
  auto cfg = [](const char* software, int micro_batches) {
    return json{{"model", {{"preset", "gpt3-175b"}}},
                {"cluster", {{"preset", "selene-2021"}, {"gpus", 64}}},
                {"parallel",
                 {{"tp", 8},
                  {"pp", 8},
                  {"dp", 1},
                  {"micro_batch", 1},
                  {"global_batch", micro_batches},
                  {"schedule", "1f1b"},
                  {"recompute", "full"}}},
                {"software", software}};
  };
  // Autograd (DeepSpeed's engine): the first micro-batch's gradient is kept, the next m - 1 are added.
  const auto c8 = mc::perf::parse_config(catalog(), cfg("megatron-deepspeed-2022", 8), "cfg");
  ASSERT_EQ(c8.software.grad_accumulation_bytes, 6);
  ASSERT_FALSE(c8.software.grad_accumulation_every_microbatch);
  const auto one = mc::perf::estimate(mc::perf::parse_config(catalog(), cfg("megatron-deepspeed-2022", 1), "cfg"));
  const auto eight = mc::perf::estimate(c8);
  const double rate = c8.cluster.hbm_bandwidth_GBps * 1e9 * c8.cluster.elementwise_hbm_fraction;
  const mc::perf::ModelSpec& m = c8.model;
  // By hand: the layer's parameters on one tensor rank, 12 h^2 / t plus the biases and LayerNorms.
  const double layer_params = mc::perf::layer_params_bytes(m, 8, 1.0);
  EXPECT_NEAR(layer_params, 12.0 * m.hidden * m.hidden / 8, 0.01 * layer_params);
  EXPECT_NEAR(eight.layer_backward_s - one.layer_backward_s, 7.0 / 8 * 6 * layer_params / rate, 1e-12);
  EXPECT_NEAR(eight.logits_s - one.logits_s, 7.0 / 8 * 6 * double(m.vocab) * m.hidden / 8 / rate, 1e-12);
  EXPECT_DOUBLE_EQ(eight.layer_forward_s, one.layer_forward_s);
  // Megatron-LM 2021's hook adds every micro-batch into the zeroed main_grad buffer, the first too: one
  // full pass a micro-batch whatever m, where a fused stack (no add) pays none.
  for (int mb : {1, 8}) {
    const auto c21 = mc::perf::parse_config(catalog(), cfg("megatron-lm-2021", mb), "cfg");
    ASSERT_TRUE(c21.software.grad_accumulation_every_microbatch);
    mc::perf::Config fused = c21;
    fused.software.grad_accumulation_bytes = 0;
    const auto e = mc::perf::estimate(c21), f = mc::perf::estimate(fused);
    EXPECT_NEAR(e.layer_backward_s - f.layer_backward_s, 6 * layer_params / rate, 1e-12) << mb;
  }
  // No accumulation pass where gradients are reduce-scattered after every micro-batch.
  json z1 = cfg("deepspeed-2022", 1), z8 = cfg("deepspeed-2022", 8);
  for (json* z : {&z1, &z8}) (*z)["parallel"].update({{"tp", 1}, {"pp", 1}, {"dp", 64}, {"zero", 3}});
  z1["parallel"]["global_batch"] = 64, z8["parallel"]["global_batch"] = 512;
  const auto d1 = mc::perf::estimate(mc::perf::parse_config(catalog(), z1, "cfg"));
  const auto d8 = mc::perf::estimate(mc::perf::parse_config(catalog(), z8, "cfg"));
  EXPECT_DOUBLE_EQ(d1.layer_backward_s, d8.layer_backward_s);
}

// Megatron-LM's loss (megatron/model/gpt_model.py at aed2f75; pretrain_gpt2.py in 2019 and v1.0) casts the
// logits to fp32 before mpu/cross_entropy.py unless --fp16-lm-cross-entropy: per element, the cast (2 + 4),
// max (4), subtract (4 + 4), exp (4 + 4), sum (4), divide (4 + 4); backward multiply (4 + 4) and the cast back
// (4 + 2): 52 bytes, against the three fused fp16 passes (18) the model charges a stack that does not say.
// On one stage (pp 1) the whole difference is in the iteration: m micro-batches x 34 bytes x b s V / t.
TEST(PerfStack, MegatronComputesTheLossInFp32) {
  const json cfg = {{"model", {{"preset", "gpt3-2.7b"}}},
                    {"cluster", {{"preset", "selene-2021"}, {"gpus", 64}}},
                    {"parallel", {{"tp", 2}, {"pp", 1}, {"dp", 32}, {"micro_batch", 4}, {"global_batch", 512}}},
                    {"software", "megatron-lm-2021"}};
  const mc::perf::Config c21 = mc::perf::parse_config(catalog(), cfg, "cfg");
  ASSERT_EQ(c21.software.loss_bytes_per_logit, 52);
  mc::perf::Config fused = c21;
  fused.software.loss_bytes_per_logit = 0;
  const mc::perf::Estimate e = mc::perf::estimate(c21), f = mc::perf::estimate(fused);
  const double rate = c21.cluster.hbm_bandwidth_GBps * 1e9 * c21.cluster.elementwise_hbm_fraction;
  const double logits = 4.0 * c21.model.seq_len * c21.model.vocab / 2.0;  // b s V / t
  const double m = 512 / (4 * 32);
  EXPECT_NEAR(e.iteration_time_s - f.iteration_time_s, m * 34 * logits / rate, 1e-9);
  EXPECT_NEAR(e.logits_s - f.logits_s, 34 * logits / rate, 1e-12);
  // The pipeline engine's last layer adds a transpose copy each way (60); a stack with a fused loss says
  // nothing and keeps the 18.
  const json ds = {{"model", {{"preset", "gpt3-2.7b"}}},
                   {"cluster", {{"preset", "selene-2021"}, {"gpus", 64}}},
                   {"parallel", {{"tp", 2}, {"pp", 1}, {"dp", 32}, {"micro_batch", 4}, {"global_batch", 512}}},
                   {"software", "megatron-deepspeed-2022"}};
  EXPECT_EQ(mc::perf::parse_config(catalog(), ds, "cfg").software.loss_bytes_per_logit, 60);
  json llmc = ds;
  llmc["software"] = "llm-c-2024";
  llmc["parallel"]["tp"] = 1, llmc["parallel"]["dp"] = 64, llmc["parallel"]["global_batch"] = 256;
  EXPECT_EQ(mc::perf::parse_config(catalog(), llmc, "cfg").software.loss_bytes_per_logit, 0);
}
