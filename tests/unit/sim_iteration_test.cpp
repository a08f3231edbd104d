// The iteration simulator against closed forms (pipeline bubble of Narayanan et al. 2021 Sec. 2.2,
// schedule orders), the analytic model on the published Megatron-LM 2021 Table 1 configurations, and
// its own symmetry claims (replicated classes give the same answer as per-replica simulation).
#include "catalog/catalog.h"
#include "core/paths.h"
#include "perf/collectives.h"
#include "perf/perf.h"
#include "perf/validate.h"
#include "sim/iteration.h"
#include "sim/sim.h"

#include "sim_test_util.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace mc::sim;
using mc::PipeOp;
using mc::PipeSchedule;
using mc::stage_order;

namespace {

IterationSpec compute_only(int pp, int m, PipeSchedule s, int v = 1) {
  IterationSpec it;
  it.pp = pp;
  it.micro_batches = m;
  it.schedule = s;
  it.virtual_stages = v;
  it.layers = pp * v * 2;
  it.layer_forward_s = 1.0;
  it.layer_backward_s = 2.0;
  it.latency = {0, 0};  // compute only: no per-message latency either
  return it;
}

Topology one_node_per_stage(int pp) {
  TopologySpec t;
  t.nodes = pp;
  t.gpus_per_node = 1;
  return Topology(t);
}

using mc::sim::test::catalog;

}  // namespace

TEST(SimSchedule, OneFOneBWarmupAndOrder) {
  // Stage 0 of 4 with 8 micro-batches: 3 warm-up forwards, then F/B pairs, then 3 backwards.
  auto ops = stage_order(PipeSchedule::one_f_one_b, 4, 0, 8, 1);
  ASSERT_EQ(ops.size(), 16u);
  EXPECT_FALSE(ops[2].backward);
  EXPECT_FALSE(ops[3].backward);
  EXPECT_TRUE(ops[4].backward);
  EXPECT_EQ(ops[4].micro_batch, 0);
  // Every micro-batch runs forward and backward exactly once on every stage of every schedule.
  for (auto s : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b, PipeSchedule::interleaved})
    for (int st = 0; st < 4; ++st) {
      auto o = stage_order(s, 4, st, 8, 2);
      const int v = s == PipeSchedule::interleaved ? 2 : 1;
      EXPECT_EQ(int(o.size()), 2 * 8 * v);
    }
}

TEST(SimSchedule, DeepSpeedTrainScheduleOrderAndPairing) {
  // Two stages, two micro-batches, worked by hand from TrainSchedule's step rules (schedule.py: six
  // lockstep steps; even stages run forwards on even steps; each step first exchanges the previous
  // step's output): stage 0 sends micro-batch 0's activation in the step after its forward.
  using C = PipeCmd;
  auto kinds = [](const std::vector<PipeCmd>& v) {
    std::vector<std::pair<int, int>> out;
    for (const PipeCmd& c : v) out.push_back({int(c.kind), c.micro_batch});
    return out;
  };
  const std::vector<std::pair<int, int>> s0 = {{C::forward, 0},  {C::send_act, 0}, {C::forward, 1},   {C::recv_grad, 0},
                                               {C::send_act, 1}, {C::backward, 0}, {C::recv_grad, 1}, {C::backward, 1}};
  const std::vector<std::pair<int, int>> s1 = {{C::recv_act, 0}, {C::forward, 0}, {C::backward, 0}, {C::send_grad, 0},
                                               {C::recv_act, 1}, {C::forward, 1}, {C::backward, 1}, {C::send_grad, 1}};
  EXPECT_EQ(kinds(deepspeed_schedule(2, 0, 2)), s0);
  EXPECT_EQ(kinds(deepspeed_schedule(2, 1, 2)), s1);
  // For any size: every micro-batch's forward then backward once, in order; and between neighbours each
  // blocking call meets its partner in the same order on both sides (what keeps blocking pairs from
  // deadlocking): stage s's sends of activations and receives of gradients, in order, are stage s + 1's
  // receives of activations and sends of gradients.
  for (int p = 1; p <= 6; ++p)
    for (int m = 1; m <= 9; ++m) {
      std::vector<std::vector<std::pair<int, int>>> up(static_cast<size_t>(p)),
          down(static_cast<size_t>(p));  // to s + 1, from s - 1
      for (int st = 0; st < p; ++st) {
        int f = 0, b = 0;
        for (const PipeCmd& c : deepspeed_schedule(p, st, m)) {
          if (c.kind == C::forward) {
            EXPECT_EQ(c.micro_batch, f++);
          }
          if (c.kind == C::backward) {
            EXPECT_EQ(c.micro_batch, b++) << "p " << p << " m " << m;
            EXPECT_LT(c.micro_batch, f);
          }
          if (c.kind == C::send_act || c.kind == C::recv_grad)
            up[size_t(st)].push_back({c.kind == C::send_act, c.micro_batch});
          if (c.kind == C::recv_act || c.kind == C::send_grad)
            down[size_t(st)].push_back({c.kind == C::recv_act, c.micro_batch});
        }
        EXPECT_EQ(f, m);
        EXPECT_EQ(b, m);
      }
      for (int st = 0; st + 1 < p; ++st) EXPECT_EQ(up[size_t(st)], down[size_t(st + 1)]) << "p " << p << " m " << m;
    }
  // Simulated: without transfers the lockstep order costs 1F1B's (m + p - 1)(t_f + t_b). With them it
  // finishes (no deadlock), and each transfer holds both ends: the receiver is already waiting when it
  // starts and is released when it ends, so every send span has a receive wait on a neighbour that
  // covers it.
  const int p = 4, m = 8;
  IterationSpec paired = compute_only(p, m, PipeSchedule::one_f_one_b);
  paired.paired_p2p = true;
  EXPECT_NEAR(simulate_iteration(one_node_per_stage(p), paired).iteration_s, (m + p - 1) * 6.0, 1e-9);
  paired.pp_bytes = 5e9;
  const IterationResult r = simulate_iteration(one_node_per_stage(p), paired);
  EXPECT_GT(r.iteration_s, (m + p - 1) * 6.0);
  int sends = 0;
  for (const WorkerTimeline& w : r.workers)
    for (const Span& snd : w.spans) {
      if (snd.kind != SpanKind::pp_send) continue;
      ++sends;
      bool covered = false;
      for (const WorkerTimeline& o : r.workers)
        if (std::abs(o.stage - w.stage) == 1)
          for (const Span& rcv : o.spans)
            covered |= rcv.kind == SpanKind::pp_wait && rcv.micro_batch == snd.micro_batch &&
                       std::abs(rcv.end_s - snd.end_s) < 1e-9 && rcv.start_s <= snd.start_s + 1e-9;
      EXPECT_TRUE(covered) << "stage " << w.stage << " micro-batch " << snd.micro_batch << " sent at " << snd.start_s;
    }
  EXPECT_EQ(sends, 2 * m * (p - 1));
}

TEST(SimIteration, PipelineBubbleMatchesClosedForm) {
  // Compute only (no communication): iteration = (m + p - 1)(t_f + t_b) for GPipe and 1F1B, and
  // (m + (p-1)/v)(t_f + t_b) for interleaved (Narayanan et al. 2021, Sec. 2.2, eq. for t_pb).
  const int p = 4, m = 8;
  const double tf = 2, tb = 4;  // 2 layers per stage (per chunk when interleaved) at 1 s / 2 s each
  for (auto s : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b}) {
    auto r = simulate_iteration(one_node_per_stage(p), compute_only(p, m, s));
    EXPECT_NEAR(r.iteration_s, (m + p - 1) * (tf + tb), 1e-9);
    // The critical path is contiguous: it covers the whole iteration with no gap, and it is exactly the
    // bubble formula's path: p - 1 stage hops of fill and drain plus all m micro-batches on one stage.
    double covered = 0;
    for (const auto& st : r.critical_path) covered += st.end_s - st.start_s;
    EXPECT_NEAR(covered, r.iteration_s, 1e-9);
  }
  const int v = 2;
  auto r = simulate_iteration(one_node_per_stage(p), compute_only(p, m, PipeSchedule::interleaved, v));
  // Each chunk has 2 layers (2 s forward, 4 s backward): ideal m v (t_f + t_b), bubble (p-1)(t_f + t_b).
  EXPECT_NEAR(r.iteration_s, (m * v + p - 1) * (tf + tb), 1e-9);
}

TEST(SimIteration, StragglerSlowsEveryoneAndIsReplicatedCorrectly) {
  const Topology topo = mc::sim::test::nodes_of_4(8);
  IterationSpec it = mc::sim::test::tp2_pp2_dp8(1.0);
  it.latency = {0, 0};
  auto base = simulate_iteration(topo, it);
  EXPECT_EQ(base.workers.size(), 2u);  // one class of 8 replicas x 2 stages
  it.stragglers = {{gpu_id(it, 5, 1, 1), 0.5}};
  auto slow = simulate_iteration(topo, it);
  // The straggler's replica is its own class, and so is replica 4, which shares its stage-0 node (GPUs
  // are numbered tp first, then replica, then stage: replicas 4 and 5 of a stage sit on one 4-GPU node).
  EXPECT_EQ(slow.workers.size(), 6u);
  EXPECT_GT(slow.iteration_s, base.iteration_s * 1.3);
  // Every replica waits for the straggler's at its stage's gradient all-reduce: per stage, all classes
  // finish together.
  for (const auto& w : slow.workers) EXPECT_NEAR(w.end_s, slow.workers[size_t(w.stage)].end_s, 1e-9);
  // A degraded NIC on one node slows the gradient collectives that cross it.
  TopologySpec td = topo.spec();
  td.degraded_nodes = {{3, 0.1}};
  it.stragglers.clear();
  auto deg = simulate_iteration(Topology(td), it);
  EXPECT_GT(deg.iteration_s, base.iteration_s);
}

TEST(SimIteration, MergingSymmetricReplicasChangesNoAnswer) {
  // The shortcut (one class for all ordinary replicas) against every replica simulated on its own: the
  // iteration time, every GPU's timeline and the bytes on every link (NVLink included: tp rings run only
  // in the representative replica, the dp collectives in all) must agree. Also with context parallelism:
  // the 8 replicas are then 4 dp ranks x 2 cp ranks, each cp group gathering its keys and values over the
  // links in every layer and simulated as one class (a straggler's whole group becomes a class of its own).
  const Topology topo = mc::sim::test::nodes_of_4(8);
  IterationSpec it = mc::sim::test::tp2_pp2_dp8(1.0);
  it.latency = {0, 0};
  for (const int cp : {1, 2})
    for (const bool with_straggler : {false, true}) {
      it.cp = cp;
      it.cp_buffer_bytes = cp > 1 ? 4e6 : 0;
      it.stragglers.clear();
      if (with_straggler) it.stragglers = {{gpu_id(it, 5, 1, 1), 0.5}};
      it.merge_symmetric_replicas = true;
      const IterationResult merged = simulate_iteration(topo, it);
      it.merge_symmetric_replicas = false;
      const IterationResult each = simulate_iteration(topo, it);
      EXPECT_EQ(each.workers.size(), size_t(it.dp / cp * it.pp));  // a class per replica, or per cp group
      EXPECT_LT(merged.workers.size(), each.workers.size());
      if (cp > 1) {
        EXPECT_EQ(merged.replica_class[4], merged.replica_class[5]) << "a cp group is one class";
        EXPECT_GT(merged.cp_comm_s, 0.0);
      }
      EXPECT_NEAR(merged.iteration_s, each.iteration_s, 1e-9 * each.iteration_s)
          << "cp " << cp << " straggler " << with_straggler;
      ASSERT_EQ(merged.link_bytes.size(), each.link_bytes.size());
      double nvlink_bytes = 0;
      for (size_t l = 0; l < each.link_bytes.size(); ++l) {
        EXPECT_NEAR(merged.link_bytes[l], each.link_bytes[l], 1e-9 * std::max(1.0, each.link_bytes[l]))
            << "link " << l << " (" << to_string(topo.link(int(l)).cls) << "), straggler " << with_straggler;
        if (topo.link(int(l)).cls == LinkClass::nvlink_up) nvlink_bytes += each.link_bytes[l];
      }
      EXPECT_GT(nvlink_bytes, 0);
      // Any GPU's timeline (its class's stage timeline when merged) equals its own when simulated alone.
      for (int d = 0; d < it.dp; ++d)
        for (int st = 0; st < it.pp; ++st) {
          const auto& a = merged.workers[size_t(merged.replica_class[size_t(d)] * it.pp + st)];
          const auto& b = each.workers[size_t(each.replica_class[size_t(d)] * it.pp + st)];
          SCOPED_TRACE("replica " + std::to_string(d) + " stage " + std::to_string(st) + " straggler " +
                       std::to_string(with_straggler));
          ASSERT_EQ(a.spans.size(), b.spans.size());
          for (size_t k = 0; k < a.spans.size(); ++k) {
            EXPECT_NEAR(a.spans[k].start_s, b.spans[k].start_s, 1e-9) << to_string(a.spans[k].kind) << " #" << k;
            EXPECT_NEAR(a.spans[k].end_s, b.spans[k].end_s, 1e-9);
          }
        }
    }
}

TEST(SimIteration, AgreesWithTheAnalyticModelOnMegatronTable1) {
  // Narayanan et al. 2021, Table 1 rows (public-cases.json): the simulator takes its compute times from
  // the analytic model and adds the network by flows; both model the same iteration, within 5%.
  int checked = 0;
  for (const auto& c : mc::test::public_cases()) {
    const std::string id = c["id"];
    if (id.rfind("megatron21-table1-", 0) != 0) continue;
    const auto& in = c["inputs"];
    // Rows above 1,536 GPUs run 10^5..10^6 events (same code path; `megacluster simulate` checks them in
    // seconds): kept out so the suite stays fast under the sanitizers.
    if (in["num_gpus"].get<int>() > 1536) continue;
    std::string preset = "megatron21-" + id.substr(18);
    for (auto& ch : preset)
      if (ch == 'p') ch = '.';
    const mc::json cfg = {{"model", {{"preset", preset}}},
                          {"cluster", {{"preset", "selene-2021"}, {"gpus", in["num_gpus"]}}},
                          {"parallel",
                           {{"tp", in["tensor_parallel"]},
                            {"pp", in["pipeline_parallel"]},
                            {"dp", in["data_parallel"]},
                            {"micro_batch", 1},
                            {"global_batch", in["global_batch_size"]},
                            {"schedule", "1f1b"},
                            {"recompute", "full"}}}};
    SimOptions o;
    o.timeline_gpu = -1;
    o.include_link_series = false;
    mc::json out;
    try {
      out = simulate_json(catalog(), cfg, o, id);
    } catch (const std::exception& e) {
      ADD_FAILURE() << id << ": " << e.what();
      continue;
    }
    const double sim = out["iteration_time_s"], ana = out["analytic"]["iteration_time_s"];
    EXPECT_NEAR(sim / ana, 1.0, 0.05) << id << " sim " << sim << " s, analytic " << ana << " s";
    ++checked;
  }
  EXPECT_GE(checked, 7);
}

TEST(SimIteration, OversubscribedFabricSlowsPipelineSendsInBothModels) {
  // Megatron-LM 2021's 18.4B row on 256 A100s (tp 8 x pp 2 x dp 16): a stage is tp x dp = 128 GPUs, 16
  // nodes, one whole leaf of 16, so every send of the stage boundary leaves its leaf. With the uplinks
  // oversubscribed 4:1 (the Run chapter's knob) a leaf's 16 nodes share 4 nodes' worth of uplink: each send
  // moves at a quarter of its line rate. By hand in the analytic model, and the simulator's flows meet the
  // same uplinks: the two agree within 5% (the analytic model once left the sends at line rate, 11% below
  // the simulator on the 2020 machine at 4:1).
  mc::json cfg = {
      {"model", {{"preset", "megatron21-18.4b"}}},
      {"cluster", {{"preset", "selene-2021"}, {"gpus", 256}}},
      {"parallel",
       {{"tp", 8}, {"pp", 2}, {"dp", 16}, {"micro_batch", 1}, {"global_batch", 1024}, {"recompute", "full"}}}};
  const mc::perf::Config base = mc::perf::parse_config(catalog(), cfg, "t", true);
  ASSERT_EQ(base.cluster.leaf_nodes, 16);
  cfg["cluster"]["oversubscription"] = 4;
  const mc::perf::Config over = mc::perf::parse_config(catalog(), cfg, "t", true);
  const mc::perf::Topology t = mc::perf::topology_of(base.cluster);
  // One send: s b h / t bytes of 2 (scatter/gather) at the GPU's share of the node's NICs, plus a step.
  const double bytes = 2048.0 * 6144 * 2 / 8, line = t.node_p2p_Bps / 8;
  const double gather = mc::perf::estimate(base).p2p_s - (bytes / line + t.inter_latency_s);
  EXPECT_NEAR(mc::perf::estimate(over).p2p_s, 4 * bytes / line + t.inter_latency_s + gather, 1e-12);
  SimOptions o;
  o.timeline_gpu = -1;
  o.include_link_series = false;
  const mc::json out = simulate_json(catalog(), cfg, o);
  const double sim = out["iteration_time_s"], ana = out["analytic"]["iteration_time_s"];
  EXPECT_NEAR(sim / ana, 1.0, 0.05) << "sim " << sim << " s, analytic " << ana << " s";
}

TEST(SimIteration, TheRunChaptersNetworkKnobsMoveBothModelsAlike) {
  // The Run chapter opens on GPT-3 on 9,984 GPUs of the 2020 machine (assets/configs/simulate.json) and
  // offers the NICs' rate and the fat-tree's oversubscription as knobs; the Parallelism chapter prices the
  // same config analytically. Over the knobs' range the two screens agree within 5% (one fabric: the same
  // bandwidth rules, the same uplinks) as long as a pipeline send stays under half a micro-batch's compute.
  // Past that (25-50 Gb/s at 4:1 or worse: sends of 0.27-1.06 s against 0.41 s of compute) a stage's sends
  // both ways leave its leaf through the same uplinks and the pipeline turns transfer-bound: the simulator
  // runs 5-10% above the analytic model, which adds the sends rather than replaying them.
  const mc::json base = mc::JsonDoc::load(MC_SOURCE_DIR "/assets/configs/simulate.json").value();
  SimOptions o;
  o.timeline_gpu = -1;
  o.include_link_series = false;
  for (const double nic : {100.0, 400.0, 1600.0})
    for (const double over : {1.0, 2.0, 4.0, 8.0}) {
      if (nic == 100 && over == 8) continue;  // sends of 0.27 s: the edge of the regime above (+4.9%)
      mc::json cfg = base;
      cfg["cluster"]["node_network_Gbps"] = nic;
      cfg["cluster"]["oversubscription"] = over;
      const mc::json out = simulate_json(catalog(), cfg, o);
      const double sim = out["iteration_time_s"], ana = out["analytic"]["iteration_time_s"];
      EXPECT_NEAR(sim / ana, 1.0, 0.05) << nic << " Gb/s, " << over << ":1: sim " << sim << " s, analytic " << ana;
    }
}

TEST(SimIteration, TimelineOfAnyGpuIsItsReplicaClassTimeline) {
  const mc::json cfg = {{"model", {{"preset", "gpt3-2.7b"}}},
                        {"cluster", {{"preset", "azure-openai-2020"}, {"gpus", 64}}},
                        {"parallel", {{"tp", 4}, {"pp", 2}, {"dp", 8}, {"micro_batch", 1}, {"global_batch", 64}}},
                        {"stragglers", {{{"gpu", 13}, {"speed", 0.8}}}}};
  SimOptions o;
  o.include_link_series = false;
  o.timeline_gpu = 13;
  const mc::json a = simulate_json(catalog(), cfg, o);
  EXPECT_DOUBLE_EQ(a["sim"]["timeline"]["speed"].get<double>(), 0.8);
  // GPU 12 shares the straggler's tp group (same stage, same replica): the same timeline.
  o.timeline_gpu = 12;
  const mc::json b = simulate_json(catalog(), cfg, o);
  EXPECT_EQ(a["sim"]["timeline"]["spans"], b["sim"]["timeline"]["spans"]);
  // Asking for another GPU never changes the answer.
  EXPECT_EQ(a["iteration_time_s"], b["iteration_time_s"]);
}

// Each knob of issue 4 moves the answer the way the physics says. A GPT-3 2.7B layout on 256 GPUs of the
// 2020 machine whose gradients cross the fabric (dp 32 over 32 nodes), so the network knobs matter.
TEST(SimIteration, EveryNetworkKnobMovesTheAnswerTheRightWay) {
  const mc::json base = {{"model", {{"preset", "gpt3-2.7b"}}},
                         {"cluster", {{"preset", "azure-openai-2020"}, {"gpus", 256}}},
                         {"parallel", {{"tp", 8}, {"pp", 1}, {"dp", 32}, {"micro_batch", 1}, {"global_batch", 64}}}};
  SimOptions o;
  o.timeline_gpu = -1;
  o.include_link_series = false;
  auto t = [&](const mc::json& cfg) { return simulate_json(catalog(), cfg, o)["iteration_time_s"].get<double>(); };
  const double t0 = t(base);
  mc::json slow_nic = base;
  slow_nic["cluster"]["node_network_Gbps"] = 25;  // a sixteenth of the 400 Gb/s
  EXPECT_GT(t(slow_nic), t0 * 1.05) << "a slower NIC slows the gradient all-reduce";
  mc::json fast_nic = base;
  fast_nic["cluster"]["node_network_Gbps"] = 1600;
  EXPECT_LE(t(fast_nic), t0);
  // A measured collective bus bandwidth below the line rate (5 of the NICs' 45 GB/s, as on Jean Zay's
  // Omni-Path) slows the gradient all-reduce, which is a collective ...
  mc::json slow_coll = base;
  slow_coll["cluster"]["inter_busbw_GBps"] = 5;
  EXPECT_GT(t(slow_coll), t0 * 1.05) << "collectives between nodes run at the measured bus bandwidth";
  // ... but not pipeline sends: a pipeline across nodes with nothing else crossing them (tp 8 fills each
  // node, dp 1, an untied output layer) keeps the line rate, as engine/perf's point_to_point does.
  mc::json pipe = base;
  pipe["cluster"]["gpus"] = 32;
  pipe["parallel"] = {{"tp", 8}, {"pp", 4}, {"dp", 1}, {"micro_batch", 1}, {"global_batch", 8}};
  pipe["model"]["tied_output"] = false;
  mc::json pipe_slow_coll = pipe;
  pipe_slow_coll["cluster"]["inter_busbw_GBps"] = 5;
  EXPECT_DOUBLE_EQ(t(pipe_slow_coll), t(pipe));
  // A tied one is summed between the first and the last stage by an all-reduce: a collective, slowed.
  mc::json tied = pipe, tied_slow_coll = pipe_slow_coll;
  tied["model"]["tied_output"] = true, tied_slow_coll["model"]["tied_output"] = true;
  EXPECT_GT(t(tied_slow_coll), t(tied));
  mc::json oversub = base;
  oversub["cluster"]["oversubscription"] = 4;
  oversub["cluster"]["leaf_nodes"] = 4;  // the 32 nodes span 8 leaves: the spine is crossed
  EXPECT_GT(t(oversub), t0) << "an oversubscribed spine slows traffic that crosses it";
  // Without overlap the whole all-reduce follows the backward; with it, buckets hide behind backward.
  mc::json no_overlap = base, overlap = base;
  no_overlap["sim"]["overlap_dp"] = false;
  overlap["sim"]["overlap_dp"] = true;
  EXPECT_LT(t(overlap), t(no_overlap));
  // Smaller buckets: more collectives, each paying its latency; with overlap on, larger than the whole
  // gradient means nothing overlaps (one bucket at the end).
  mc::json small_b = overlap, huge_b = overlap;
  small_b["sim"]["bucket_bytes"] = 1e6;
  huge_b["sim"]["bucket_bytes"] = 1e12;
  EXPECT_GT(t(small_b), t(overlap)) << "1 MB buckets pay more latency than 80 MB ones";
  EXPECT_GT(t(huge_b), t(overlap)) << "one bucket for everything cannot overlap the backward";
  // Below 1 MB the input is refused (millions of collectives), naming the key.
  mc::json tiny = base;
  tiny["sim"]["bucket_bytes"] = 1e3;
  try {
    simulate_json(catalog(), tiny, o);
    ADD_FAILURE() << "a 1 kB bucket was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("bucket_bytes"), std::string::npos) << e.what();
  }
}

TEST(SimIteration, AgreesWithTheAnalyticModelOnPublishedRunsOfOtherStacks) {
  // Published runs of more-public-cases.json built by run-setups.json (other GPUs, stacks and fabrics
  // than Table 1): GPT-NeoX-20B (Megatron-DeepSpeed, A100-40GB), DeepSpeed's BERT kernels, FSDP, MosaicML,
  // torchtitan, llm.c's GPT-2 on one node; and DeepSpeed 0.6's ZeRO-3 on Azure's A100s
  // (175B to 2T on 256-1024 GPUs), whose per-module gathers are prefetched and whose gradients are
  // bucketed (software.json deepspeed-2022 zero3_*): the simulator hides each prefetch behind the layer
  // before, the analytic model behind whole passes, and both leave the big matrices' gathers in the open.
  const std::string dir = MC_VALIDATION_DIR;
  const mc::json cases = mc::JsonDoc::load(dir + "/more-public-cases.json").value();
  const mc::json setups = mc::JsonDoc::load(dir + "/run-setups.json").value();
  // Every predicted run not on Jean Zay (those are the next test's): 14 of the 31.
  int checked = 0;
  for (const mc::json& st : setups.at("runs")) {
    if (!st.value("predict", true) || st.at("cluster").value("inter_busbw_GBps", 0.0) > 0) continue;
    for (const mc::json& c : cases)
      if (c.at("id") == st.at("id")) {
        const std::string id = st.at("id");
        SimOptions o;
        o.timeline_gpu = -1;
        o.include_link_series = false;
        const mc::json out = simulate_json(catalog(), mc::perf::run_config(catalog(), c, st, "run-setups.json"), o, id);
        const double sim = out["iteration_time_s"], ana = out["analytic"]["iteration_time_s"];
        EXPECT_NEAR(sim / ana, 1.0, 0.05) << id << " sim " << sim << " s, analytic " << ana << " s";
        ++checked;
      }
  }
  EXPECT_EQ(checked, 14);
}

TEST(SimIteration, AgreesWithTheAnalyticModelOnJeanZay) {
  // BigScience's runs on Jean Zay (tr1, tr8 and the 52B benchmarks on the V100 partition, BLOOM's layout
  // experiments on the A100 one; more-public-cases.json built by run-setups.json): Omni-Path, where NCCL's
  // all-reduce reached a measured 7.27 (V100, May 2021) or 5.07 GB/s (A100, January 2022) of the NICs'
  // 50 GB/s (inter_busbw_GBps; BigScience repository, experiments/bandwidth). On the A100 partition's
  // dedicated NCCL subnet that is one communicator's rate (its rings crossed each node through one of the
  // four ports: inter_busbw_nics), on the shared V100 network the whole node's. Both models must price
  // collectives so (the simulator as a per-NIC limit and a per-communicator cap on its flows) and
  // point-to-point transfers at the line rate; the simulator once sent every flow at the line rate and ran
  // 8-27% faster than the analytic model here (48% on ZeRO-3 rows).
  //
  // What the two still model differently, stated rather than absorbed in a wider tolerance:
  // What the two once modelled differently:
  //  - DeepSpeed's pipeline engine (software.json pipeline_blocking_p2p) pairs a blocking send with a
  //    blocking receive: the simulator runs DeepSpeed's TrainSchedule order with each transfer starting once
  //    both ends have called (deepspeed_schedule, IterationSpec::paired_p2p), the analytic model charges
  //    each stage its own transfers (perf_time.cpp: four a micro-batch on a middle stage, two on the first
  //    and the last). Where the last stage, with the logits, sets the pace (tr1, tr8 with tp 2) the analytic
  //    model used to add a middle stage's four transfers to its compute and was checked against a range
  //    (the simulator at 0.89-0.90 of it on tr8); now every row is held to 5%.
  //  - BLOOM's embedding-as-layer splits, whose fuller stages come first: the analytic model charged the
  //    pacing stage the passes of every other stage as its bubble, where its own warm-up forwards hide part
  //    of the first micro-batch's trip through the later stages; the simulator ran 4.3% under it on tp 1 x
  //    pp 48. The analytic model now replays the schedule there (perf_time.cpp, hidden_path): within 1.5%.
  //  - Nothing on the ZeRO-3 rows (DeepSpeed 0.3.16-0.4 / HF, the 52B on 64 V100s): both models run the
  //    stack's ZeRO-3 (software.json zero3_*: one collective per tensor, the weights gathered again for the
  //    recomputed forward, gradients reduce-scattered after every micro-batch, no overlap) with the same
  //    counts, sizes and ring latencies (sim_zero_test.cpp). They agree within 1% (the tp = 4 row's 1%
  //    is its in-node tensor-parallel all-reduce: NCCL's tree, which the analytic model prices at the
  //    ring's bandwidth and the simulator runs as chains whose inner GPUs send both ways, 4/3 the bytes
  //    per NVLink port, engine/sim/collectives.cpp). The simulator used to run textbook ZeRO-3 (a chunk
  //    gathered twice per micro-batch, one reduce-scatter) and was 9-14% faster here.
  const std::string dir = MC_VALIDATION_DIR;
  const mc::json cases = mc::JsonDoc::load(dir + "/more-public-cases.json").value();
  const mc::json setups = mc::JsonDoc::load(dir + "/run-setups.json").value();
  const mc::Table* software = catalog().table("software");
  ASSERT_NE(software, nullptr);
  int checked = 0, zero3 = 0, last_paced = 0;
  for (const mc::json& st : setups.at("runs")) {
    if (st.at("cluster").value("inter_busbw_GBps", 0.0) <= 0) continue;
    for (const mc::json& c : cases) {
      if (c.at("id") != st.at("id")) continue;
      const std::string id = st.at("id");
      const mc::json cfg = mc::perf::run_config(catalog(), c, st, "run-setups.json");
      zero3 += cfg.at("parallel").value("zero", 0) >= 3;
      SimOptions o;
      o.timeline_gpu = -1;
      o.include_link_series = false;
      const mc::json out = simulate_json(catalog(), cfg, o, id);
      const double sim = out["iteration_time_s"], ana = out["analytic"]["iteration_time_s"];
      const mc::Record* sw = software->find(cfg.at("software").get<std::string>());
      ASSERT_NE(sw, nullptr) << id;
      const bool paired = sw->get_or("pipeline_blocking_p2p", 0) != 0;
      const int pp = cfg.at("parallel").value("pp", 1);
      last_paced += paired && pp > 1 && out["slowest_stage"].get<int>() == pp - 1;
      std::printf("%-36s sim %8.3f s  analytic %8.3f s  %+.1f%%  slowest %d/%d\n", id.c_str(), sim, ana,
                  100 * (sim / ana - 1), out["slowest_stage"].get<int>(), pp);
      EXPECT_NEAR(sim / ana, 1.0, 0.05) << id << ": sim " << sim << " s, analytic " << ana << " s";
      ++checked;
    }
  }
  // BigScience tr1, tr8 x 2, the 52B with Megatron-DeepSpeed, with Megatron, with DeepSpeed ZeRO-3 at tp
  // 1, 2, 4 and with HF + ZeRO-3; BLOOM x 8.
  EXPECT_EQ(checked, 17);
  EXPECT_EQ(zero3, 4);
  EXPECT_EQ(last_paced, 2);  // tr1, tr8 with tp 2: the last stage paces at two transfers
}

TEST(SimIteration, UnevenStagesRunTheirOwnLayers) {
  // 78 layers on 12 stages split 7 x 11 + 1 (BigScience's 182B benchmark): the last stage computes one
  // layer and the logits, the others seven; the simulator runs each stage's own count.
  const mc::json cfg = {
      {"model", {{"layers", 78}, {"hidden", 4096}, {"heads", 32}, {"seq_len", 2048}, {"vocab", 51200}}},
      {"cluster", {{"preset", "selene-2021"}, {"gpus", 96}}},
      {"parallel",
       {{"tp", 8},
        {"pp", 12},
        {"dp", 1},
        {"micro_batch", 1},
        {"global_batch", 24},
        {"schedule", "1f1b"},
        {"recompute", "full"},
        {"layers_per_stage", {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 1}}}}};
  SimOptions o;
  o.timeline_gpu = -1;
  const mc::json out = simulate_json(catalog(), cfg, o, "uneven");
  const double sim = out["iteration_time_s"], ana = out["analytic"]["iteration_time_s"];
  EXPECT_NEAR(sim / ana, 1.0, 0.05);
  // Same model split 7,7,7,7,7,7,6,6,6,6,6,6 (as even as possible) runs faster in both.
  mc::json even = cfg;
  even["parallel"].erase("layers_per_stage");
  const mc::json out_even = simulate_json(catalog(), even, o, "even");
  EXPECT_LT(out_even["iteration_time_s"].get<double>(), sim);
  EXPECT_LT(out_even["analytic"]["iteration_time_s"].get<double>(), ana);
}
