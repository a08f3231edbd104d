// perf_offload_test.cpp - offloading to the host (ZeRO-Offload, Ren et al. 2021; DeepSpeed's partitioned and
// CPU activation checkpoints; FSDP's CPUOffload): every published run fits in the memory its source gives
// it, and what each switch moves and costs is derived here by hand from the catalog's host numbers.
#include "catalog/catalog.h"
#include "perf/collectives.h"
#include "perf/perf.h"
#include "perf/validate.h"
#include "perf_helpers.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using mc::test::catalog;
using nlohmann::json;

// A 64-layer, h = 8192 model on 16 Azure NDm A100 v4 servers (128 A100 80GB), ZeRO-3, micro-batch 4.
json azure_config(const json& extra_parallel) {
  json par = {
      {"tp", 1}, {"pp", 1}, {"dp", 128}, {"micro_batch", 4}, {"zero", 3}, {"recompute", "full"}, {"global_batch", 512}};
  par.update(extra_parallel);
  return {{"model", {{"layers", 64}, {"hidden", 8192}, {"heads", 64}, {"seq_len", 2048}, {"vocab", 51200}}},
          {"cluster",
           {{"gpu", "a100-80gb"},
            {"gpus", 128},
            {"gpus_per_node", 8},
            {"node_network_Gbps", 1600},
            {"fabric", "ib-hdr"},
            {"server", "azure-ndm-a100-v4"}}},
          {"parallel", par},
          {"software", "deepspeed-2022"}};
}

using mc::test::config_of;
using mc::test::error_of;

}  // namespace

// A run that was trained fitted in its GPUs' memory (and its offloaded state in its hosts'): every published
// run of both validation files, built as its source describes it, must fit in the model's memory too. Six
// did not before offloading was modelled: the Azure 1T and 2T (optimizer and checkpoints in main memory),
// BigScience's 52B ZeRO-3 benchmarks (partitioned checkpoints in CPU memory) and FSDP's 175B (parameters on
// the CPU).
TEST(PerfOffload, EveryPublishedRunFitsInTheMemoryItsSourceGivesIt) {
  const std::string dir = MC_VALIDATION_DIR;
  const json cases = mc::JsonDoc::load(dir + "/more-public-cases.json").value();
  const json setups = mc::JsonDoc::load(dir + "/run-setups.json").value();
  int checked = 0;
  for (const json& st : setups.at("runs")) {
    if (!st.value("predict", true)) continue;
    for (const json& c : cases) {
      if (c.at("id") != st.at("id")) continue;
      const std::string id = st.at("id");
      const mc::perf::Config cfg = config_of(mc::perf::run_config(catalog(), c, st, "run-setups.json"));
      const mc::perf::Estimate e = mc::perf::estimate(cfg);
      EXPECT_TRUE(e.fits) << id << ": " << e.memory.total / (1 << 30) << " GiB of " << e.hbm_bytes / (1 << 30)
                          << " GiB; host " << e.host_bytes_per_node / 1e9 << " GB a node of "
                          << cfg.cluster.host_memory_bytes / 1e9;
      ++checked;
    }
  }
  EXPECT_GE(checked, 30);
  // Megatron-LM 2021's Table 1: whatever micro-batch the paper ran, its smallest, 1, fits.
  int table1 = 0;
  for (const json& c : mc::test::public_cases()) {
    if (c.value("id", "").rfind("megatron21-table1-", 0) != 0) continue;
    json cfg = mc::perf::table1_config(c.at("inputs"));
    cfg["parallel"]["micro_batch"] = 1;
    const mc::perf::Estimate e = mc::perf::estimate(config_of(cfg));
    EXPECT_TRUE(e.fits) << c.at("id") << ": " << e.memory.total / (1 << 30) << " GiB";
    ++table1;
  }
  EXPECT_EQ(table1, 10);
}

// ZeRO-Offload (Ren et al. 2021, Sec. 4): the optimizer state and the gradients (fp32 on the host) leave the
// GPU; the step runs on the CPUs at the node's memory bandwidth, shared by its 8 GPUs; the fp16 weights come
// back over PCIe 4.0 (63 GB/s both ways at 0.75: 23.6 GB/s one way, below the 8 GPUs' share of 409.6 x 0.8
// GB/s of DRAM).
TEST(PerfOffload, TheOptimizerStepMovesToTheHostAndIsPricedThere) {
  const mc::perf::Config base = config_of(azure_config(json::object()));
  const mc::perf::Config off = config_of(azure_config({{"offload_optimizer", true}}));
  ASSERT_DOUBLE_EQ(off.cluster.host_link_GBps, 63.0 / 2 * 0.75);
  ASSERT_DOUBLE_EQ(off.cluster.host_memory_GBps, 409.6);
  const mc::perf::Estimate e0 = mc::perf::estimate(base), e1 = mc::perf::estimate(off);
  const double shard = mc::perf::param_count(base.model) / 128;  // parameters a GPU steps
  // GPU: the same weights and activations; no optimizer state, no gradient partition.
  EXPECT_DOUBLE_EQ(e1.memory.weights, e0.memory.weights);
  EXPECT_DOUBLE_EQ(e1.memory.activations, e0.memory.activations);
  EXPECT_EQ(e1.memory.optimizer, 0.0);
  EXPECT_EQ(e1.memory.gradients, 0.0);
  EXPECT_NEAR(e1.memory.host, 16 * shard, 1e-6 * 16 * shard);  // 12 bytes of Adam state + fp32 gradient
  EXPECT_NEAR(e1.host_bytes_per_node, 8 * 16 * shard, 1e-6 * 8 * 16 * shard);
  EXPECT_TRUE(e1.fits);
  // Time: 28 bytes a parameter for 8 GPUs' shards at 409.6 x 0.8 GB/s, plus 2 bytes a parameter back.
  const double step = 28 * shard * 8 / (409.6e9 * 0.8) + 2 * shard / (23.625e9);
  EXPECT_NEAR(e1.time.optimizer, step, 1e-5 * step);  // the shard: the model's exact count / 128
  EXPECT_GT(e1.time.optimizer, 10 * e0.time.optimizer);
  EXPECT_NEAR(e1.iteration_time_s - e0.iteration_time_s, e1.time.optimizer - e0.time.optimizer, 1e-9);
}

// ZeRO-Offload's headline (Ren et al. 2021, zero-offload-paper): a 10-billion-parameter GPT on one V100 of
// a DGX-2, the optimizer step on the host. One GPU of the 16 has the node's DRAM to itself: the step reads
// and writes its 28 bytes a parameter at both sockets' six DDR4-2666 channels (256 GB/s x the streaming
// fraction), and the fp16 weights come back over the GPU's PCIe 3.0 link.
TEST(PerfOffload, OneGpuOfADgx2StepsOnTheWholeHost) {
  const json cfg = {{"model", {{"hidden", 4096}, {"layers", 50}, {"heads", 32}, {"seq_len", 512}, {"vocab", 50257}}},
                    {"cluster", {{"gpu", "v100-32gb"}, {"server", "dgx2"}, {"gpus_per_node", 16}, {"gpus", 1}}},
                    {"parallel",
                     {{"tp", 1},
                      {"dp", 1},
                      {"micro_batch", 8},
                      {"global_batch", 8},
                      {"zero", 2},
                      {"recompute", "full"},
                      {"offload_optimizer", true}}},
                    {"software", "deepspeed-2020"}};
  const mc::perf::Config c = config_of(cfg);
  ASSERT_DOUBLE_EQ(c.cluster.host_memory_GBps, 256.0);
  ASSERT_EQ(c.cluster.gpus_per_node, 1);
  const mc::perf::Estimate e = mc::perf::estimate(c);
  EXPECT_TRUE(e.fits);
  EXPECT_GT(mc::perf::param_count(c.model), 1e10);
  EXPECT_GT(e.memory.host, 16 * 1e10);  // Adam's 12 bytes and the fp32 gradient, on the host
  const double params = mc::perf::param_count(c.model);
  const double step =
      28 * params / (256e9 * c.cluster.host_memory_fraction) + 2 * params / (c.cluster.host_link_GBps * 1e9);
  EXPECT_NEAR(e.time.optimizer, step, 1e-5 * step);
}

// DeepSpeed's CPU checkpointing copies each layer's input (2 s b h bytes in fp16) out with a blocking
// .to(device) in the forward and back before the recompute: two copies a layer a micro-batch at the host
// link. Partitioned over t tensor ranks each rank moves 1/t and the ranks all-gather the whole again.
TEST(PerfOffload, CheckpointsToTheHostCostTwoBlockingCopiesALayer) {
  const mc::perf::Config base = config_of(azure_config(json::object()));
  const mc::perf::Config off = config_of(azure_config({{"offload_activations", true}}));
  const mc::perf::Estimate e0 = mc::perf::estimate(base), e1 = mc::perf::estimate(off);
  const double ckpt = 2.0 * 2048 * 4 * 8192;  // bytes of one layer's input, micro-batch 4
  const double m = 1, layers = 64;            // micro-batches, layers on the GPU
  EXPECT_NEAR(e1.time.offload, m * layers * 2 * ckpt / 23.625e9, 1e-9);
  EXPECT_NEAR(e1.iteration_time_s - e0.iteration_time_s, e1.time.offload, 1e-9);
  // The 64 held checkpoints leave the GPU (the one recomputed layer's activations stay).
  EXPECT_NEAR(e0.memory.activations - e1.memory.activations, layers * ckpt, 1e-3 * ckpt);
  EXPECT_NEAR(e1.memory.host, layers * ckpt, 1e-3 * ckpt);

  // Partitioned over tp = 8 inside a node: 1/8 each way, plus an all-gather of the whole over NVLink.
  json tp8 = azure_config({{"offload_activations", true}, {"partition_activations", true}});
  tp8["parallel"]["tp"] = 8, tp8["parallel"]["dp"] = 16, tp8["parallel"]["global_batch"] = 64;
  const mc::perf::Config c8 = config_of(tp8);
  const mc::perf::Estimate e8 = mc::perf::estimate(c8);
  const double gather = mc::perf::all_gather(mc::perf::topology_of(c8.cluster), ckpt, 8, 8, 1).time_s;
  EXPECT_NEAR(e8.time.offload, layers * (2 * ckpt / 8 / 23.625e9 + gather), 1e-9);
  EXPECT_NEAR(e8.memory.host, layers * ckpt / 8, 1e-3 * ckpt);
}

// FSDP's CPUOffload(offload_params=True): the weight shard lives on the host, so each gather first copies
// this rank's 1/dp of the layer in and each reduce-scatter copies it out; the step runs on the CPU in place
// (no weights to send back).
TEST(PerfOffload, ParametersOnTheHostCrossPcieAtEveryGather) {
  const mc::perf::Config on = config_of(azure_config({{"offload_params", true}}));
  const mc::perf::Estimate e = mc::perf::estimate(on);
  EXPECT_EQ(e.memory.weights, 0.0);
  EXPECT_EQ(e.memory.gradients, 0.0);
  EXPECT_EQ(e.memory.optimizer, 0.0);
  const mc::perf::ListCopyCost k = mc::perf::zero3_copies(on);
  EXPECT_DOUBLE_EQ(k.per_byte_s, 1.0 / (128 * 23.625e9));  // deepspeed-2022 does not use the list form
  const double shard = mc::perf::param_count(on.model) / 128;
  EXPECT_NEAR(e.time.optimizer, 28 * shard * 8 / (409.6e9 * 0.8), 1e-5 * e.time.optimizer);
}

// Each switch says what it needs, at its key.
TEST(PerfOffload, RefusedWithTheKeyAndTheFix) {
  json no_recompute = azure_config({{"offload_activations", true}, {"recompute", "none"}});
  EXPECT_NE(error_of(no_recompute).find("offload_activations"), std::string::npos);
  EXPECT_NE(error_of(no_recompute).find("recompute to \"full\""), std::string::npos);
  EXPECT_NE(error_of(azure_config({{"offload_params", true}, {"zero", 1}})).find("set zero to 3"), std::string::npos);
  EXPECT_NE(error_of(azure_config({{"offload_optimizer", true}, {"zero", 0}})).find("set zero to 1 or more"),
            std::string::npos);
  json no_server = azure_config({{"offload_optimizer", true}});
  no_server["cluster"].erase("server");
  const std::string e = error_of(no_server);
  EXPECT_NE(e.find("offload_optimizer"), std::string::npos) << e;
  EXPECT_NE(e.find("cluster.server"), std::string::npos) << e;
  // The checkpoints need only the link: the A100's PCIe 4.0 from gpus.json.
  json ckpt_only = azure_config({{"offload_activations", true}});
  ckpt_only["cluster"].erase("server");
  EXPECT_EQ(error_of(ckpt_only), "");
  // A GPU with no host link in the catalog (the TPU) names the key to set.
  json tpu = ckpt_only;
  tpu["cluster"]["gpu"] = "tpu-v3";
  tpu["training"] = {{"precision", "bf16"}};
  EXPECT_NE(error_of(tpu).find("host_link_GBps"), std::string::npos) << error_of(tpu);
}
