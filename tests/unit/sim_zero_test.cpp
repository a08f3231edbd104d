// ZeRO in the iteration simulator. ZeRO-3's parameter all-gathers (each micro-batch's forward and backward)
// and the reduce-scatter of gradients are real transfers on the fat-tree, checked against
//  - the ZeRO paper's communication volume (Rajbhandari et al. 2020, Sec. 7.2.2: baseline data parallelism
//    moves 2 Psi per step, ZeRO-3 moves 3 Psi with one micro-batch, "1.5x"; with m micro-batches the
//    weights are gathered 2m times: (2m + 1) Psi), measured as bytes over the NICs;
//  - the analytic model (engine/perf) on the same ZeRO-3 config without a pipeline, where both model the
//    same thing, within 5%;
//  - the stack's way of running it (software.json zero3_*, as perf_time.cpp prices it): DeepSpeed 2021
//    reduce-scatters every micro-batch (3 Psi per micro-batch) and gathers the weights again for the
//    recomputed forward, one collective per tensor; each collective pays its ring latency.
// With a pipeline the simulator is slower than the analytic model by design: a stage cannot start a
// micro-batch before its gather, so the gathers also stretch the fill and drain of the pipeline, while
// the analytic model adds the whole ZeRO-3 term once, outside the pipeline (and with overlap on it hides
// the gathers behind one backward pass, which they cannot be, as the compute needs the weights).
#include "catalog/catalog.h"
#include "perf/collectives.h"
#include "perf/perf.h"
#include "sim/sim.h"
#include "sim/sim_config.h"

#include "sim_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using mc::json;

namespace {

using mc::sim::test::catalog;

// GPT-3 2.7B, pure data parallelism over 64 V100s of the 2020 machine (8 nodes), m = global / 64.
json config(int zero, int global_batch, bool overlap, const std::string& software = "",
            const std::string& recompute = "none") {
  json c = {{"model", {{"preset", "gpt3-2.7b"}}},
            {"cluster", {{"preset", "azure-openai-2020"}, {"gpus", 64}}},
            {"parallel",
             {{"tp", 1},
              {"pp", 1},
              {"dp", 64},
              {"micro_batch", 1},
              {"global_batch", global_batch},
              {"zero", zero},
              {"overlap_dp_comm", overlap},
              {"recompute", recompute}}},
            {"sim", {{"dp_algorithm", "ring"}}}};
  if (!software.empty()) c["software"] = software;
  return c;
}

json simulate(const json& cfg) {
  mc::sim::SimOptions o;
  o.timeline_gpu = 0;
  o.include_link_series = false;
  return mc::sim::simulate_json(catalog(), cfg, o);
}

double nic_bytes(const json& out) { return out["sim"]["links"]["classes"]["nic_up"]["bytes"].get<double>(); }

}  // namespace

TEST(SimZero, Zero3VolumeIsThePapers3PsiAndGrowsWithMicroBatches) {
  for (int m : {1, 4}) {
    const json base = simulate(config(0, 64 * m, false)), z3 = simulate(config(3, 64 * m, false));
    // Ring volumes carry the same (p-1)/p factor, so the ratio is exact: (2m + 1) Psi / 2 Psi.
    EXPECT_NEAR(nic_bytes(z3) / nic_bytes(base), (2.0 * m + 1) / 2.0, 1e-6) << "m = " << m;
  }
}

TEST(SimZero, Zero3GathersAreTransfersTheComputeWaitsFor) {
  const json z3 = simulate(config(3, 256, false));  // m = 4
  const json& spans = z3["sim"]["timeline"]["spans"];
  int gathers = 0, waits = 0, reduces = 0;
  for (const json& s : spans) {
    if (s["kind"] == "dp_comm" && s["micro_batch"].get<int>() >= 0) ++gathers;
    if (s["kind"] == "dp_comm" && s["micro_batch"].get<int>() < 0) ++reduces;
    if (s["kind"] == "dp_wait" && s["micro_batch"].get<int>() >= 0) ++waits;
  }
  // The default stack gathers layer by layer (software.json zero3_gather per-layer): each of the 32
  // layers and the embeddings, in the forward and the backward of each of the 4 micro-batches, and the
  // GPU waits for each (no prefetch); gradients are reduce-scattered once, unit by unit, at the end.
  EXPECT_EQ(gathers, 2 * 4 * (32 + 1));
  EXPECT_EQ(waits, 2 * 4 * (32 + 1));
  EXPECT_EQ(reduces, 32 + 1);
  // One collective each, as the analytic model counts them.
  EXPECT_EQ(gathers + reduces, z3["zero3_collectives_per_iteration"].get<double>());
  EXPECT_GT(z3["time_breakdown_s"]["dp_comm"].get<double>(),
            0.5 * z3["analytic"]["time_breakdown_s"]["dp_comm"].get<double>());
}

TEST(SimZero, AgreesWithTheAnalyticModelWithinFivePercent) {
  for (int m : {1, 8}) {
    const json out = simulate(config(3, 64 * m, false));
    const double sim = out["iteration_time_s"], ana = out["analytic"]["iteration_time_s"];
    EXPECT_NEAR(sim / ana, 1.0, 0.05) << "m = " << m << ": sim " << sim << " s, analytic " << ana << " s";
    // The exposed data-parallel time itself (2m gathers + the reduce-scatter) agrees too.
    const double sd = out["time_breakdown_s"]["dp_comm"], ad = out["analytic"]["time_breakdown_s"]["dp_comm"];
    EXPECT_NEAR(sd / ad, 1.0, 0.15) << "m = " << m;
  }
  // ZeRO-1/2 move an all-reduce's volume (reduce-scatter + all-gather) and shard the optimizer step.
  for (int z : {1, 2}) {
    const json out = simulate(config(z, 512, true));
    EXPECT_NEAR(out["iteration_time_s"].get<double>() / out["analytic"]["iteration_time_s"].get<double>(), 1.0, 0.05);
    EXPECT_NEAR(nic_bytes(out), nic_bytes(simulate(config(0, 512, true))), 1e-6 * nic_bytes(out));
  }
}

TEST(SimZero, FollowsTheStacksZero3) {
  // DeepSpeed 0.3.16-0.4 (software.json deepspeed-zero3-2021): gradients reduce-scattered in every
  // micro-batch, so each micro-batch moves gather + gather + reduce-scatter = 3 Psi, against data
  // parallelism's 2 Psi per iteration: exactly 3m / 2 (the same ring factor (p-1)/p on both).
  const std::string ds = "deepspeed-zero3-2021";
  for (int m : {1, 4}) {
    const json base = simulate(config(0, 64 * m, false)), z3 = simulate(config(3, 64 * m, false, ds));
    EXPECT_NEAR(nic_bytes(z3) / nic_bytes(base), 3.0 * m / 2, 1e-6) << "m = " << m;
  }
  // With full recompute its module hooks gather each layer's weights once more for the recomputed
  // forward: the layers' bytes (all but the embeddings and the final norm) once more per micro-batch.
  // The textbook stack (per-layer gathers, the default) does not.
  json analytic_cfg = config(3, 64, false);
  analytic_cfg.erase("sim");
  const mc::perf::ModelSpec gpt = mc::perf::parse_config(catalog(), analytic_cfg, "sim_zero_test").model;
  const double layers_share = gpt.layers * mc::perf::layer_params_bytes(gpt, 1, 1) / mc::perf::param_count(gpt);
  const int m = 4;
  const json none = simulate(config(3, 64 * m, false, ds)), full = simulate(config(3, 64 * m, false, ds, "full"));
  EXPECT_NEAR((nic_bytes(full) - nic_bytes(none)) / nic_bytes(simulate(config(0, 64 * m, false))), m * layers_share / 2,
              1e-5 * m);  // the memory model's weights and param_count agree to 2e-6, not exactly
  EXPECT_NEAR(nic_bytes(simulate(config(3, 64 * m, false, "", "full"))), nic_bytes(simulate(config(3, 64 * m, false))),
              1e-9 * nic_bytes(full));
  // One collective per tensor (12 a layer), each paying its ring latency, and a device sync (no overlap):
  // the simulator and the analytic model agree closely; with prefetch and buckets (DeepSpeed 2022, FSDP)
  // the analytic model hides the gathers behind whole passes, the simulator behind the layer before.
  for (const char* sw : {"deepspeed-zero3-2021", "deepspeed-2022", "pytorch-fsdp-2022"})
    for (const char* rc : {"none", "full"}) {
      const json out = simulate(config(3, 64 * m, false, sw, rc));
      const double sim = out["iteration_time_s"], ana = out["analytic"]["iteration_time_s"];
      EXPECT_NEAR(sim / ana, 1.0, std::string(sw) == ds ? 0.01 : 0.05) << sw << " recompute " << rc;
    }
}

TEST(SimZero, ListFormCollectivesPayOneCopyPerRankInBothModels) {
  // DeepSpeed 0.3.16-0.5.4 called torch.distributed's list forms (software.json zero3_list_collectives):
  // PyTorch 1.8 copies each rank's piece out of (all_gather) or into (reduce_scatter) a flat buffer, one
  // copy kernel per rank, so each collective costs p kernels more and one more pass of its bytes through
  // HBM. Checked by hand on 512 GPUs (GPT-3 2.7B, 4 micro-batches, full recompute; no overlap in this
  // stack, so every copy is on the critical path): the analytic model's extra time is that count times
  // that cost, and the simulator's extra time is the analytic model's.
  const int gpus = 512, m = 4;
  json cfg = config(3, gpus * m, false, "deepspeed-zero3-2021", "full");
  cfg["cluster"]["gpus"] = gpus;
  cfg["parallel"]["dp"] = gpus;
  const mc::sim::Resolved r = mc::sim::resolve(catalog(), mc::JsonDoc::parse(cfg.dump(), "sim_zero_test"));
  ASSERT_TRUE(r.cfg.software.zero3_list_collectives);
  mc::perf::Config off = r.cfg;
  off.software.zero3_list_collectives = false;
  const mc::perf::Estimate with = mc::perf::estimate(r.cfg), without = mc::perf::estimate(off);

  // By hand: per micro-batch each layer's 12 tensors are gathered three times (forward, recomputed forward,
  // backward) and reduce-scattered once, and the embedding gathered twice and reduced once; bytes per GPU
  // are each collective's whole (gathered) size.
  const mc::perf::ModelSpec& g = r.cfg.model;
  const mc::perf::ClusterSpec& c = r.cfg.cluster;
  const double layer = mc::perf::layer_params_bytes(g, 1, 2), embed = double(g.vocab) * g.hidden * 2;
  const double tensors = 4 * 2 + 4;  // QKV, projection, fc1, fc2 with their biases; two norms' gain and bias
  const double collectives = m * (g.layers * tensors * 4 + 3);
  const double bytes = m * (g.layers * layer * 4 + 3 * embed);
  const double hbm = c.hbm_bandwidth_GBps * 1e9 * c.elementwise_hbm_fraction;
  // Each gather also fills its buffer with zeros first (torch.zeros in _allgather_param): its bytes once more.
  const double gathered = m * (g.layers * layer * 3 + 2 * embed);
  const double expected = collectives * gpus * c.kernel_overhead_s + 2 * bytes / hbm + gathered / hbm;
  EXPECT_NEAR(with.zero3_collectives, collectives, 1e-9);
  EXPECT_NEAR(with.iteration_time_s - without.iteration_time_s, expected, 1e-6 * expected);
  EXPECT_GT(expected, 0.05 * without.iteration_time_s);  // a real share of the step at 512 GPUs

  // The simulator, same spec with and without the copies.
  mc::sim::IterationSpec it_off = r.iter;
  it_off.zero3.copy_per_collective_s = it_off.zero3.copy_per_byte_s = it_off.zero3.gather_fill_per_byte_s = 0;
  const mc::sim::Topology topo(r.topo);
  const double sim_with = mc::sim::simulate_iteration(topo, r.iter).iteration_s;
  const double sim_without = mc::sim::simulate_iteration(topo, it_off).iteration_s;
  EXPECT_NEAR((sim_with - sim_without) / expected, 1.0, 0.03)
      << "sim " << sim_with << " vs " << sim_without << " s; by hand " << expected << " s";
  EXPECT_NEAR(sim_with / with.iteration_time_s, 1.0, 0.02);
}

TEST(SimZero, DeepSpeedZero1AllReducesThenGathersInBothModels) {
  // DeepSpeed 0.4-0.6 turns contiguous_gradients off for stage 1 (runtime/engine.py), so ZeRO-1 all-reduces
  // the whole gradient (zero/stage2.py buffered_reduce_fallback) and then, after the step, all-gathers the
  // updated fp16 weights in list form (stage2.py step: dist.all_gather(shard_list, ...), in shards of
  // allgather_bucket_size = 5e8 elements): software.json zero1_full_allreduce. Three passes of the weights
  // over the data-parallel group where the ZeRO paper's reduce-scatter and all-gather make two (Rajbhandari
  // et al. 2020, Sec. 7.2.1: 2 Psi, the baseline's). GPT-3 2.7B on 64 V100s (8 nodes), 4 micro-batches.
  const int m = 4;
  const json ds = simulate(config(1, 64 * m, false, "megatron-deepspeed-2021"));
  const json base = simulate(config(0, 64 * m, false, "megatron-deepspeed-2021"));
  // Over the NICs: 3 Psi against the baseline's 2 Psi (both rings, the same (p-1)/p factor).
  EXPECT_NEAR(nic_bytes(ds) / nic_bytes(base), 1.5, 1e-6);

  const mc::sim::Resolved r =
      mc::sim::resolve(catalog(), mc::JsonDoc::parse(config(1, 64 * m, false, "megatron-deepspeed-2021").dump(), "t"));
  ASSERT_TRUE(r.cfg.software.zero1_full_allreduce);
  mc::perf::Config off = r.cfg;
  off.software.zero1_full_allreduce = false;
  const mc::perf::Estimate with = mc::perf::estimate(r.cfg), without = mc::perf::estimate(off);
  // By hand: the rank's fp16 weights (2 bytes a parameter) in max(1, floor(Psi / 5e8)) ring all-gathers over
  // 64 ranks on 8 nodes: each moves 63/64 of its bytes through the slower of the node's share of the
  // network and NVLink, and pays 7 steps across nodes and 56 within; each list-form collective adds 64 copy
  // kernels and one more read and write of its bytes through HBM.
  const mc::perf::ClusterSpec& c = r.cfg.cluster;
  const mc::perf::Topology t = mc::perf::topology_of(c);
  const double psi = with.params, bytes = 2 * psi;
  const double n = std::max(1.0, std::floor(psi / 5e8));
  EXPECT_EQ(n, 5);
  const double ring = 63.0 / 64 * bytes / std::min(t.node_inter_Bps, t.intra_Bps) +
                      n * (7 * t.inter_latency_s + 56 * t.intra_latency_s);
  const double copies =
      n * 64 * c.kernel_overhead_s + 2 * bytes / (c.hbm_bandwidth_GBps * 1e9 * c.elementwise_hbm_fraction);
  // With the flag off the gradients are reduce-scattered and all-gathered as rings (NCCL 2.x runs neither
  // as a tree); on DeepSpeed's whole all-reduce NCCL may take its tree, whose shorter latency is counted too.
  const mc::perf::Collective whole = mc::perf::all_reduce(t, bytes, 64, 8, 1);
  const double rings =
      mc::perf::reduce_scatter(t, bytes, 64, 8, 1).time_s + mc::perf::all_gather(t, bytes, 64, 8, 1).time_s;
  const double expected = ring + copies + (whole.time_s - rings);
  EXPECT_NEAR(with.time.dp_comm - without.time.dp_comm, expected, 1e-3 * expected);
  EXPECT_NEAR(with.iteration_time_s - without.iteration_time_s, expected, 1e-3 * expected);
  // The simulator runs the same gather after the step: its extra time is the analytic model's.
  mc::sim::IterationSpec it_off = r.iter;
  it_off.zero1_gather = {};
  const mc::sim::Topology topo(r.topo);
  const double sim_with = mc::sim::simulate_iteration(topo, r.iter).iteration_s;
  const double sim_without = mc::sim::simulate_iteration(topo, it_off).iteration_s;
  EXPECT_NEAR((sim_with - sim_without) / expected, 1.0, 0.03);

  // Not for ZeRO-2 (its gradients are reduced to their owners), nor a stack that reduce-scatters (DeepSpeed
  // 0.2-0.3's legacy stage 1), nor without ZeRO.
  for (int zero : {0, 2}) {
    mc::perf::Config z = r.cfg;
    z.layout.zero = zero;
    mc::perf::Config zoff = z;
    zoff.software.zero1_full_allreduce = false;
    EXPECT_DOUBLE_EQ(mc::perf::estimate(z).iteration_time_s, mc::perf::estimate(zoff).iteration_time_s) << zero;
  }
  const mc::sim::Resolved old =
      mc::sim::resolve(catalog(), mc::JsonDoc::parse(config(1, 64 * m, false, "deepspeed-2020").dump(), "t"));
  EXPECT_FALSE(old.cfg.software.zero1_full_allreduce);
  EXPECT_FALSE(old.iter.zero1_gather.on);
}

// OPT-175B's code (metaseq, software.json metaseq-2022) ran FSDP with reshard_after_forward=False: each
// layer is gathered before its forward and stays whole through its backward, so a micro-batch moves one
// gather and one reduce-scatter, 2 Psi: data parallelism's volume, m times (ZeRO-2's, Rajbhandari et al.
// 2020 Sec. 7.2.1), against 3 Psi for the stack that reshards (pytorch-fsdp-2022, also reducing every
// micro-batch). The memory holds every layer of the stage whole by the end of the forward.
TEST(SimZero, WithoutReshardingTheBackwardGathersNothing) {
  const std::string meta = "metaseq-2022", fsdp = "pytorch-fsdp-2022";
  for (int m : {1, 4}) {
    const json base = simulate(config(0, 64 * m, false));
    const json kept = simulate(config(3, 64 * m, false, meta, "full"));
    const json resharded = simulate(config(3, 64 * m, false, fsdp, "full"));
    EXPECT_NEAR(nic_bytes(kept) / nic_bytes(base), double(m), 1e-6) << "m = " << m;
    EXPECT_NEAR(nic_bytes(resharded) / nic_bytes(base), 3.0 * m / 2, 1e-6) << "m = " << m;
    // Gathers only in the forwards: the 32 layers and the embeddings, once a micro-batch; reduce-scatters
    // after each micro-batch's backward. The analytic model counts the same and agrees on the time.
    EXPECT_EQ(kept["zero3_collectives_per_iteration"].get<double>(), m * 2.0 * (32 + 1)) << "m = " << m;
    const double sim = kept["iteration_time_s"], ana = kept["analytic"]["iteration_time_s"];
    EXPECT_NEAR(sim / ana, 1.0, 0.05) << "m = " << m;
  }
  // Memory: the whole stage's layers gathered (fp16: 2 bytes a parameter) and the running one's gradient,
  // where the resharding stack holds the running and the prefetched layer and the gradient.
  json cfg = config(3, 64, false, meta, "full");
  cfg.erase("sim");
  const json kept = mc::perf::estimate_json(catalog(), cfg);
  cfg["software"] = fsdp;
  const json resharded = mc::perf::estimate_json(catalog(), cfg);
  const mc::perf::ModelSpec gpt = mc::perf::parse_config(catalog(), cfg, "sim_zero_test").model;
  const double layer = mc::perf::layer_params_bytes(gpt, 1, 2);
  EXPECT_NEAR(kept["memory_per_gpu_bytes"]["gathered"].get<double>(), (gpt.layers + 1) * layer, 1e-6 * layer);
  // (Its peak is the larger of that and the embedding's moment: the table and its gradient whole.)
  const double table = 2.0 * gpt.vocab * gpt.hidden;
  EXPECT_NEAR(resharded["memory_per_gpu_bytes"]["gathered"].get<double>(), std::max(3 * layer, 2 * table),
              1e-6 * layer);
}
