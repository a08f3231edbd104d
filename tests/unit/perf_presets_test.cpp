// perf_presets_test.cpp - presets know their stacks (issue 24, item 3): a model or cluster preset that names a
// published run carries the training stack of record, as a sourced catalog fact, and a config that names no
// "software" runs on it and says which preset chose it and on what source. A preset's layout of record is the
// base a partial "parallel" overrides key by key (issue 39).
#include "catalog/catalog.h"
#include "perf/perf.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

namespace {

using mc::test::catalog;
using nlohmann::json;

json on(const std::string& model, const std::string& cluster, long long gpus, const json& parallel) {
  return {{"model", {{"preset", model}}}, {"cluster", {{"preset", cluster}, {"gpus", gpus}}}, {"parallel", parallel}};
}

}  // namespace

TEST(PerfPresets, EveryPresetStackIsASourcedFact) {
  const mc::Table* sources = catalog().table("sources");
  const mc::Table* software = catalog().table("software");
  ASSERT_NE(software, nullptr);
  int stacks = 0;
  for (const char* table : {"models", "clusters"})
    for (const auto& r : catalog().table(table)->records) {
      const std::string id = r.text_or("software", "");
      if (id.empty()) continue;
      ++stacks;
      EXPECT_NE(software->find(id), nullptr) << table << "/" << r.id;
      const mc::Sourced* s = r.text_source("software");
      ASSERT_NE(s, nullptr) << table << "/" << r.id << " names its stack without a source";
      if (sources) {
        EXPECT_NE(sources->find(s->source), nullptr) << table << "/" << r.id << ": " << s->source;
      }
    }
  EXPECT_GE(stacks, 18);  // the Megatron-LM 2021 models, MT-NLG, Llama 3 405B, their clusters
}

TEST(PerfPresets, PublishedRunsEstimateOnTheirStackWithoutSoftware) {
  // MT-NLG 530B on Selene: 8-way tensor and 35-way pipeline parallelism (Smith et al. 2022), on the stack
  // the model preset names, not Selene's own Megatron-LM 2021.
  const json mtnlg = mc::perf::estimate_json(
      catalog(), on("mt-nlg-530b", "selene-2021", 4480,
                    {{"tp", 8}, {"pp", 35}, {"dp", 16}, {"micro_batch", 1}, {"recompute", "full"}}));
  EXPECT_EQ(mtnlg["software"], "megatron-deepspeed-2022");
  EXPECT_EQ(mtnlg["software_chosen_by"], "models/mt-nlg-530b");
  EXPECT_EQ(mtnlg["software_source"], "mt-nlg-paper, reported");
  // Llama 3 405B on its cluster: Meta's stack, from the Llama 3 paper.
  const json llama = mc::perf::estimate_json(catalog(), on("llama3-405b", "meta-llama3-2024", 16384,
                                                           {{"tp", 8},
                                                            {"pp", 16},
                                                            {"dp", 128},
                                                            {"micro_batch", 1},
                                                            {"schedule", "interleaved"},
                                                            {"virtual_stages", 8},
                                                            {"embedding_stages", "as-layers"}}));
  EXPECT_EQ(llama["software"], "meta-llama3-2024");
  EXPECT_EQ(llama["software_chosen_by"], "models/llama3-405b");
  EXPECT_EQ(llama["software_source"], "llama3-paper, reported");
  // A model without a stack of its own runs on its cluster's; a config's own choice is said to be its.
  json gpt3 = on("gpt3-175b", "selene-2021", 1024, {{"tp", 8}, {"pp", 8}, {"dp", 16}, {"micro_batch", 1}});
  EXPECT_EQ(mc::perf::estimate_json(catalog(), gpt3)["software_chosen_by"], "clusters/selene-2021");
  gpt3["software"] = "megatron-deepspeed-2022";
  const json named = mc::perf::estimate_json(catalog(), gpt3);
  EXPECT_EQ(named["software"], "megatron-deepspeed-2022");
  EXPECT_EQ(named["software_chosen_by"], "config");
  EXPECT_FALSE(named.contains("software_source"));
}

TEST(PerfPresets, PublishedRunsCarryTheirLayoutOfRecord) {
  // "Llama 3 405B on its cluster", nothing else: the paper's layout (Table 4: tp 8, pp 16, and 128-way data
  // parallelism filling 16,384 GPUs; Sec. 3.3.2: interleaved, embedding and output layer in chunks of their
  // own), on Meta's stack.
  const json llama = mc::perf::estimate_json(
      catalog(), {{"model", {{"preset", "llama3-405b"}}}, {"cluster", {{"preset", "meta-llama3-2024"}}}});
  EXPECT_EQ(llama["layout"]["tp"], 8);
  EXPECT_EQ(llama["layout"]["pp"], 16);
  EXPECT_EQ(llama["layout"]["dp"], 128);
  EXPECT_EQ(llama["layout"]["schedule"], "interleaved");
  EXPECT_EQ(llama["layout"]["virtual_stages"], 8);
  EXPECT_EQ(llama["chunk_layers"].front(), 0);  // the first chunk holds only the embedding
  EXPECT_EQ(llama["stage_layers"].front(), 7);
  EXPECT_EQ(llama["software"], "meta-llama3-2024");
  // "MT-NLG on Selene": 8-way tensor slicing, 35 pipeline stages, data parallelism filling Selene's 4,480 GPUs.
  const json mtnlg = mc::perf::estimate_json(
      catalog(), {{"model", {{"preset", "mt-nlg-530b"}}}, {"cluster", {{"preset", "selene-2021"}}}});
  EXPECT_EQ(mtnlg["layout"]["tp"], 8);
  EXPECT_EQ(mtnlg["layout"]["pp"], 35);
  EXPECT_EQ(mtnlg["layout"]["dp"], 16);
  EXPECT_EQ(mtnlg["software"], "megatron-deepspeed-2022");
  // Each transformer block's activations checkpointed and recomputed (Smith et al. 2022, Sec. 2.1.1): with
  // them stored (Korthikanti et al. 2022 Table 2, s b h (10 + 24/t + 5 a s/(h t)) = 0.88 GB per layer), the first
  // stage's 3 layers x 35 micro-batches in flight hold 92 GB; checkpointed (2 s b h each), it fits in 80 GB.
  EXPECT_EQ(mtnlg["layout"]["recompute"], "full");
  EXPECT_TRUE(mtnlg["fits"].get<bool>()) << mtnlg["memory_per_gpu_bytes"].dump();
  // "OPT-175B on 992 A100s" (Zhang et al. 2022; metaseq's launcher): 8-way tensor parallel, fully sharded
  // over the 124 replicas, 8 sequences each, checkpoints split over the tensor ranks, on metaseq.
  const json opt = mc::perf::estimate_json(catalog(), {{"model", {{"preset", "opt-175b"}}},
                                                       {"cluster",
                                                        {{"gpu", "a100-80gb"},
                                                         {"gpus_per_node", 8},
                                                         {"nodes", 124},
                                                         {"node_network_Gbps", 1600},
                                                         {"fabric", "ib-hdr"}}}});
  EXPECT_EQ(opt["layout"]["tp"], 8);
  EXPECT_EQ(opt["layout"]["dp"], 124);
  EXPECT_EQ(opt["layout"]["zero"], 3);
  EXPECT_EQ(opt["layout"]["global_batch"], 992);
  EXPECT_EQ(opt["layout"]["micro_batches"], 1);
  EXPECT_EQ(opt["layout"]["partition_activations"], true);
  EXPECT_EQ(opt["software"], "metaseq-2022");
  EXPECT_TRUE(opt["fits"].get<bool>()) << opt["memory_per_gpu_bytes"].dump();
  // Every layout of record is one its stack can run (software.json), and a model without one still needs
  // "parallel".
  for (const auto& r : catalog().table("models")->records)
    if (r.find("layout_tp")) {
      mc::perf::Layout L;
      L.tp = int(r.get("layout_tp")), L.pp = int(r.get_or("layout_pp", 1)), L.zero = int(r.get_or("layout_zero", 0));
      L.sequence_parallel = r.get_or("layout_sequence_parallel", 0) != 0;
      if (r.text_or("layout_recompute", "none") == "selective") L.recompute = mc::perf::Recompute::selective;
      L.schedule = r.text_or("layout_schedule", "1f1b") == "interleaved" ? mc::PipeSchedule::interleaved
                                                                         : mc::PipeSchedule::one_f_one_b;
      const mc::perf::Software sw = mc::perf::software_from_catalog(catalog(), r.text_or("software", ""), "");
      EXPECT_EQ(mc::perf::stack_refusal(sw, L), "") << r.id;
    }
  try {
    mc::perf::estimate_json(catalog(),
                            {{"model", {{"preset", "gpt3-175b"}}}, {"cluster", {{"preset", "selene-2021"}}}});
    ADD_FAILURE() << "gpt3-175b has no layout of record";
  } catch (const mc::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("missing \"parallel\""), std::string::npos) << e.what();
  }
}

TEST(PerfPresets, APartialParallelOverridesTheLayoutOfRecordKeyByKey) {
  // The degrees the Llama 3 paper states (Table 4: tp 8, pp 16, dp 128, 2,048 sequences a step) and nothing
  // else: the rest is the preset's layout of record (interleaved, v = 8, ZeRO 2, sequence parallelism), as a
  // partial "model" or "cluster" keeps the rest of its preset. Before, the whole record was dropped: 1F1B,
  // ZeRO 0, no sequence parallelism, 26 % MFU, and the model no longer fit in 80 GB.
  const json whole = mc::perf::estimate_json(
      catalog(), {{"model", {{"preset", "llama3-405b"}}}, {"cluster", {{"preset", "meta-llama3-2024"}}}});
  const json degrees = mc::perf::estimate_json(
      catalog(),
      on("llama3-405b", "meta-llama3-2024", 16384, {{"tp", 8}, {"pp", 16}, {"dp", 128}, {"global_batch", 2048}}));
  EXPECT_EQ(degrees["layout"], whole["layout"]);
  EXPECT_DOUBLE_EQ(degrees["iteration_time_s"].get<double>(), whole["iteration_time_s"].get<double>());
  EXPECT_TRUE(degrees["fits"].get<bool>());
  // Llama 3 405B's reported 38-43 % MFU at 8K (Dubey et al. 2024 Table 4) is what the record reaches, not the
  // 26 % of a 1F1B pipeline without ZeRO.
  EXPECT_GT(degrees["mfu"].get<double>(), 0.35);
  // Where each key came from, first among the notes: the record's with their sources, then the config's.
  const std::string said = degrees["notes"].front();
  EXPECT_NE(said.find("layout of record of models.json \"llama3-405b\""), std::string::npos) << said;
  EXPECT_NE(said.find("schedule interleaved (llama3-paper, reported)"), std::string::npos) << said;
  EXPECT_NE(said.find("zero 2 (llama3-paper, inferred)"), std::string::npos) << said;
  EXPECT_NE(said.find("the config set dp, global_batch, pp, tp"), std::string::npos) << said;
  EXPECT_EQ(said.find("tp 8"), std::string::npos) << "the config's tp is not the record's: " << said;
  // One key changed, one key different: the others stay the record's.
  const json zero1 = mc::perf::estimate_json(catalog(), on("llama3-405b", "meta-llama3-2024", 16384, {{"zero", 1}}));
  json expect = whole["layout"];
  expect["zero"] = 1;
  EXPECT_EQ(zero1["layout"], expect);
  // Sequence parallelism of record splits the tensor-parallel activations: without tensor parallelism it is off.
  const json tp1 =
      mc::perf::estimate_json(catalog(), on("llama3-405b", "meta-llama3-2024", 16384,
                                            {{"tp", 1}, {"pp", 16}, {"micro_batch", 1}, {"global_batch", 16384}}));
  EXPECT_EQ(tp1["layout"]["sequence_parallel"], false);
  // A model without a layout of record is unchanged: "parallel" is the whole layout, defaults for the rest.
  const json gpt3 = mc::perf::estimate_json(catalog(), on("gpt3-175b", "selene-2021", 1024, {{"tp", 8}, {"pp", 8}}));
  EXPECT_EQ(gpt3["layout"]["schedule"], "1f1b");
  EXPECT_EQ(gpt3["layout"]["zero"], 0);
  for (const auto& n : gpt3["notes"]) EXPECT_EQ(n.get<std::string>().find("layout of record"), std::string::npos) << n;
}

TEST(PerfPresets, ARefusalAtAKeyOfRecordSaysItIsTheRecords) {
  // 32 stages of the record's 8 virtual stages each: more chunks than Llama 3's 126 layers. The config wrote
  // only the degrees, so the refusal says which keys it did not write and how to change them.
  try {
    mc::perf::estimate_json(catalog(),
                            on("llama3-405b", "meta-llama3-2024", 16384, {{"tp", 8}, {"pp", 32}, {"dp", 64}}));
    ADD_FAILURE() << "pp 32 x virtual_stages 8 should be refused";
  } catch (const mc::LoadError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("more than the 126 layers can fill"), std::string::npos) << what;
    EXPECT_NE(what.find("(schedule and virtual_stages come from the layout of record of models.json \"llama3-405b\"; "
                        "set them in \"parallel\" to change them)"),
              std::string::npos)
        << what;
  }
  // Set in the config, the key is the config's own: no word about the record.
  try {
    mc::perf::estimate_json(
        catalog(), on("llama3-405b", "meta-llama3-2024", 16384,
                      {{"tp", 8}, {"pp", 32}, {"dp", 64}, {"virtual_stages", 8}, {"schedule", "interleaved"}}));
    ADD_FAILURE() << "pp 32 x virtual_stages 8 should be refused";
  } catch (const mc::LoadError& e) {
    EXPECT_EQ(std::string(e.what()).find("layout of record"), std::string::npos) << e.what();
  }
}

TEST(PerfPresets, ThePapersOneNodeBaselinesRunOnPartOfANode) {
  // Shoeybi et al. 2019 (Fig. 1) measured their 1.2B model on one V100 and their 2.5B, 4.2B and 8.3B models
  // 2-, 4- and 8-way tensor parallel, each on part of one 16-GPU DGX-2H, before scaling out to 512 GPUs.
  const auto run = [](long long gpus, int tp, int dp, int hidden, int layers, int heads) {
    const json cfg = {
        {"model", {{"hidden", hidden}, {"layers", layers}, {"heads", heads}, {"seq_len", 1024}, {"vocab", 51200}}},
        {"cluster", {{"preset", "dgx2h-2019"}, {"gpus", gpus}}},
        {"parallel", {{"tp", tp}, {"dp", dp}, {"micro_batch", 8}, {"global_batch", 8 * dp}, {"recompute", "full"}}}};
    return mc::perf::estimate_json(catalog(), cfg);
  };
  const json one = run(1, 1, 1, 1536, 40, 16);
  EXPECT_EQ(one["gpus"], 1);
  EXPECT_EQ(one["software"], "megatron-lm-2019");
  for (const char* part : {"tp_comm", "dp_comm", "pp_comm"}) EXPECT_EQ(one["time_breakdown_s"][part], 0.0) << part;
  // Eight of the sixteen GPUs: the tensor-parallel all-reduces stay on the node's NVSwitch, so they cost
  // what they cost on the whole node running two such replicas.
  const json eight = run(8, 8, 1, 3072, 72, 32), sixteen = run(16, 8, 2, 3072, 72, 32);
  EXPECT_EQ(eight["gpus"], 8);
  EXPECT_GT(eight["time_breakdown_s"]["tp_comm"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(eight["time_breakdown_s"]["tp_comm"].get<double>(),
                   sixteen["time_breakdown_s"]["tp_comm"].get<double>());
  EXPECT_EQ(eight["time_breakdown_s"]["dp_comm"], 0.0);
  // One and a half nodes is neither: the message says what would be accepted.
  try {
    run(24, 8, 3, 3072, 72, 32);
    ADD_FAILURE() << "24 GPUs of 16-GPU nodes were accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("fewer than one node's 16 or a multiple of it"), std::string::npos)
        << e.what();
  }
}
