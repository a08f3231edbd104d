// ZeRO in the iteration simulator. ZeRO-3's parameter all-gathers (each micro-batch's forward and backward)
// and the reduce-scatter of gradients are real transfers on the fat-tree, checked against
//  - the ZeRO paper's communication volume (Rajbhandari et al. 2020, Sec. 7.2.2: baseline data parallelism
//    moves 2 Psi per step, ZeRO-3 moves 3 Psi with one micro-batch, "1.5x"; with m micro-batches the
//    weights are gathered 2m times: (2m + 1) Psi), measured as bytes over the NICs;
//  - the analytic model (engine/perf) on the same ZeRO-3 config without a pipeline, where both model the
//    same thing, within 5%.
// With a pipeline the simulator is slower than the analytic model by design: a stage cannot start a
// micro-batch before its gather, so the gathers also stretch the fill and drain of the pipeline, while
// the analytic model adds the whole ZeRO-3 term once, outside the pipeline (and with overlap on it hides
// the gathers behind one backward pass, which they cannot be, as the compute needs the weights).
#include "catalog/catalog.h"
#include "sim/sim.h"

#include "sim_test_util.h"

#include <gtest/gtest.h>

using mc::json;

namespace {

using mc::sim::test::catalog;

// GPT-3 2.7B, pure data parallelism over 64 V100s of the 2020 machine (8 nodes), m = global / 64.
json config(int zero, int global_batch, bool overlap) {
  return {{"model", {{"preset", "gpt3-2.7b"}}},
          {"cluster", {{"preset", "azure-openai-2020"}, {"gpus", 64}}},
          {"parallel",
           {{"tp", 1}, {"pp", 1}, {"dp", 64}, {"micro_batch", 1}, {"global_batch", global_batch}, {"zero", zero},
            {"overlap_dp_comm", overlap}}},
          {"sim", {{"dp_algorithm", "ring"}}}};
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
  int gathers = 0, waits = 0;
  for (const json& s : spans) {
    if (s["kind"] == "dp_comm" && s["micro_batch"].get<int>() >= 0) ++gathers;
    if (s["kind"] == "dp_wait" && s["micro_batch"].get<int>() >= 0) ++waits;
  }
  EXPECT_EQ(gathers, 2 * 4);  // forward and backward of each micro-batch
  EXPECT_EQ(waits, 2 * 4);    // and the GPU waits for each (no prefetch)
  EXPECT_GT(z3["time_breakdown_s"]["dp_comm"].get<double>(), 0.5 * z3["analytic"]["time_breakdown_s"]["dp_comm"].get<double>());
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
