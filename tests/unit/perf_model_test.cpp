// perf_model_test.cpp - the arithmetic of the performance model against published numbers
// (tests/data/validation/public-cases.json) and against independent derivations.
#include "capital/scaling_laws.h"
#include "catalog/catalog.h"
#include "perf/comm_volume.h"
#include "perf/perf.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

namespace {

using mc::test::catalog;

// (id, quantity, got), the order this file's checks read best in.
void expect_published_at(const std::string& id, const std::string& quantity, double got) {
  mc::test::expect_published(got, id, quantity);
}

mc::perf::ModelSpec preset(const std::string& id) {
  const mc::Record* r = catalog().table("models")->find(id);
  EXPECT_NE(r, nullptr) << id;
  mc::perf::ModelSpec m;
  m.layers = int(r->get("layers")), m.hidden = int(r->get("hidden")), m.heads = int(r->get("heads"));
  m.seq_len = int(r->get("seq_len")), m.vocab = int(r->get("vocab")), m.ffn_hidden = int(r->get("ffn_hidden"));
  return m;
}

}  // namespace

TEST(PerfModel, Gpt3ParamsAndComputeOfAllEightModels) {
  for (const char* id :
       {"gpt3-small", "gpt3-medium", "gpt3-large", "gpt3-xl", "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b", "gpt3-175b"}) {
    const std::string cid = std::string(id) + "-config-and-compute";
    const mc::perf::ModelSpec m = preset(id);
    const double n = mc::perf::param_count(m);
    expect_published_at(cid, "n_params (Table D.1)", n);
    expect_published_at(cid, "total_training_compute", mc::perf::six_nd_flops(n, 300e9));
    expect_published_at(cid, "total_training_compute_pf_days", mc::perf::six_nd_flops(n, 300e9) / mc::kFlopsPerPfDay);
  }
}

TEST(PerfModel, Gpt3TableTypos) {
  // Table 2.1 prints d_model 5140 for 13B and 24 heads of 128 for XL; the presets hold the consistent values
  // and mark them inferred.
  const mc::Record* b13 = catalog().table("models")->find("gpt3-13b");
  EXPECT_EQ(b13->get("hidden"), 5120);
  EXPECT_EQ(b13->find("hidden")->confidence, mc::Confidence::inferred);
  const mc::Record* xl = catalog().table("models")->find("gpt3-xl");
  EXPECT_EQ(xl->get("hidden") / xl->get("heads"), 128);
  EXPECT_EQ(xl->find("heads")->confidence, mc::Confidence::inferred);
  // The printed 5140 is not a whole number of 128-wide heads (40 x 128 = 5120).
  EXPECT_NE(5140 % 128, 0);
  EXPECT_EQ(b13->get("heads") * 128, b13->get("hidden"));
}

TEST(PerfModel, PfDayAndStepsOfGpt3) {
  expect_published_at("gpt3-pf-day-unit", "pf_day", mc::kFlopsPerPfDay);
  const mc::Record* r = catalog().table("models")->find("gpt3-175b");
  expect_published_at("gpt3-training-hparams", "steps_at_full_batch_175b (upper bound, ignores batch ramp)",
                      r->get("tokens") / (r->get("global_batch") * r->get("seq_len")));
}

TEST(PerfModel, MegatronEq2AgreesWithTheExactCount) {
  for (const char* id : {"megatron21-1.7b", "megatron21-145.6b", "megatron21-1t"}) {
    const mc::perf::ModelSpec m = preset(id);
    // eq. (2) omits only the final LayerNorm's 2h parameters.
    EXPECT_NEAR(mc::perf::megatron_param_count(m) + 2.0 * m.hidden, mc::perf::param_count(m), 1.0) << id;
  }
}

TEST(PerfModel, FlopsOfEq3WithAndWithoutRecompute) {
  // Narayanan et al. 2021 eq. (3): F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), computed independently here.
  const mc::perf::ModelSpec m = preset("megatron21-1t");
  const double B = 3072, s = m.seq_len, l = m.layers, h = m.hidden, V = m.vocab;
  const double eq3 = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  EXPECT_NEAR(mc::perf::hardware_flops_per_iteration(m, B, mc::perf::Recompute::full) / eq3, 1.0, 1e-12);
  const double no_recompute = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(mc::perf::model_flops_per_iteration(m, B) / no_recompute, 1.0, 1e-12);
  // 6ND is the no-recompute count without the attention-score and logit terms.
  const double six = mc::perf::six_nd_flops(mc::perf::param_count(m), B * s);
  EXPECT_NEAR(mc::perf::model_flops_per_iteration(m, B) / six, 1.0, 0.05);
}

TEST(PerfModel, KorthikantiActivationFormulas) {
  const auto& in = mc::test::public_case("korthikanti-activation-formulas-gpt3")["inputs"];
  mc::perf::ModelSpec m;
  m.seq_len = in["s"], m.hidden = in["h"], m.heads = in["a"];
  const int t = in["t"];
  using mc::perf::Recompute;
  const std::string id = "korthikanti-activation-formulas-gpt3";
  expect_published_at(id, "no_parallelism sbh(34+5as/h)",
                      mc::perf::activation_bytes_per_layer(m, 1, 1, false, Recompute::none));
  expect_published_at(id, "tensor_parallel sbh(10+24/t+5as/(ht))",
                      mc::perf::activation_bytes_per_layer(m, 1, t, false, Recompute::none));
  expect_published_at(id, "tensor+sequence_parallel sbh(34/t+5as/(ht))",
                      mc::perf::activation_bytes_per_layer(m, 1, t, true, Recompute::none));
  expect_published_at(id, "tensor_parallel+selective sbh(10+24/t)",
                      mc::perf::activation_bytes_per_layer(m, 1, t, false, Recompute::selective));
  expect_published_at(id, "tensor+sequence+selective sbh(34/t)",
                      mc::perf::activation_bytes_per_layer(m, 1, t, true, Recompute::selective));
  expect_published_at(id, "full_recompute 2sbh", mc::perf::activation_bytes_per_layer(m, 1, t, false, Recompute::full));
  // Linear in the micro-batch.
  EXPECT_DOUBLE_EQ(mc::perf::activation_bytes_per_layer(m, 4, t, true, Recompute::none),
                   4 * mc::perf::activation_bytes_per_layer(m, 1, t, true, Recompute::none));
}

TEST(PerfModel, ZeroMemoryTable1) {
  const auto& in = mc::test::public_case("zero-table1-7p5b")["inputs"];
  const double psi = in["psi_params"];
  for (int stage = 1; stage <= 3; ++stage)
    for (int nd : in["DP_degrees"]) {
      const double gb = mc::perf::zero_model_state_bytes(psi, nd, stage, mc::perf::Precision::fp16).total / 1e9;
      expect_published_at("zero-table1-7p5b", "stage" + std::to_string(stage) + "_Nd" + std::to_string(nd), gb);
    }
  expect_published_at("zero-fig1-7p5b-nd64", "baseline_DP",
                      mc::perf::zero_model_state_bytes(psi, 64, 0, mc::perf::Precision::fp16).total / 1e9);
}

TEST(PerfModel, PipelineBubbles) {
  const auto& in = mc::test::public_case("megatron21-pipeline-bubble")["inputs"];
  const int p = in["p"], m = in["m"], v = in["v"];
  using mc::PipeSchedule;
  expect_published_at("megatron21-pipeline-bubble", "bubble_over_ideal (p-1)/m",
                      mc::perf::bubble_over_ideal(PipeSchedule::one_f_one_b, p, m, 1));
  expect_published_at("megatron21-pipeline-bubble", "bubble_over_ideal_interleaved (p-1)/(v m)",
                      mc::perf::bubble_over_ideal(PipeSchedule::interleaved, p, m, v));
  const double f = mc::perf::bubble_over_ideal(PipeSchedule::gpipe, p, m, 1);
  expect_published_at("megatron21-pipeline-bubble", "bubble_over_total (p-1)/(m+p-1)", f / (1 + f));
}

TEST(PerfModel, CommVolumesOfMegatronAndZero) {
  const auto& in = mc::test::public_case("megatron21-comm-volumes")["inputs"];
  const double b = in["b"], s = in["s"], h = in["h"];
  const int t = in["t"];
  expect_published_at("megatron21-comm-volumes", "tp_allreduce_volume_per_layer",
                      mc::perf::tp_layer_volume(b, s, h, 1, t, false).bytes_sent_per_rank);
  expect_published_at("megatron21-comm-volumes", "pp_p2p_volume_per_microbatch",
                      mc::perf::pp_boundary_bytes(b, s, h, 1));
  expect_published_at("megatron21-comm-volumes", "pp_p2p_with_scatter_gather",
                      mc::perf::pp_boundary_bytes(b, s, h, 1) / t);
  // ZeRO Sec. 7: in units of Psi with the ring factor (N_d-1)/N_d taken out.
  const int nd = 16;
  const double ring = double(nd - 1) / nd;
  expect_published_at("zero-communication-volume", "baseline_DP_allreduce",
                      mc::perf::dp_gradient_volume(1, 1, nd, 0).bytes_sent_per_rank / ring);
  expect_published_at("zero-communication-volume", "P_os+g (reduce-scatter + all-gather)",
                      mc::perf::dp_gradient_volume(1, 1, nd, 2).bytes_sent_per_rank / ring);
  expect_published_at("zero-communication-volume", "P_os+g+p (2 all-gathers + reduce-scatter)",
                      mc::perf::dp_gradient_volume(1, 1, nd, 3).bytes_sent_per_rank / ring);
  // NCCL: all-reduce = reduce-scatter + all-gather, in volume and message count.
  const auto ar = mc::perf::ring_all_reduce(1e6, 8), rs = mc::perf::ring_reduce_scatter(1e6, 8);
  EXPECT_DOUBLE_EQ(ar.bytes_sent_per_rank, 2 * rs.bytes_sent_per_rank);
  EXPECT_DOUBLE_EQ(ar.messages_per_rank, 14);
  EXPECT_DOUBLE_EQ(mc::perf::ring_all_reduce(1e6, 1).bytes_sent_per_rank, 0);
}

TEST(PerfModel, TrainingTimeEq4) {
  // Narayanan et al. 2021 eq. (4): 8 T P / (n X), e.g. GPT-3 on 1024 A100s at 140 TFLOP/s: 34 days.
  for (const char* id : {"megatron21-train-time-gpt3-175b-1024", "megatron21-train-time-1t-3072"}) {
    const auto& in = mc::test::public_case(id)["inputs"];
    mc::perf::ModelSpec m;
    m.layers = in["num_layers"], m.hidden = in["hidden_size"], m.heads = m.hidden / 128, m.seq_len = in["seq_len"];
    m.vocab = 51200;
    const double B = in["batch_size"];
    const double per_param_token = mc::perf::hardware_flops_per_iteration(m, B, mc::perf::Recompute::full) /
                                   (B * m.seq_len * mc::perf::megatron_param_count(m));
    EXPECT_NEAR(per_param_token, 8.0, 0.3);  // "8" = 6 + 2 for the recomputed forward
    const double days = double(in["tokens_T"]) * double(in["params_P"]) * per_param_token /
                        (double(in["num_gpus_n"]) * double(in["achieved_flops_per_gpu_X"])) / 86400;
    expect_published_at(id, "training_time", days);
  }
}

TEST(PerfScaling, KaplanAndChinchillaLaws) {
  // Constants come from the cases' inputs, so the test checks the formulas, not our defaults.
  using namespace mc::capital;
  const auto& ki = mc::test::public_case("kaplan-power-laws")["inputs"];
  KaplanConstants k;
  k.alpha_N = ki["alpha_N"], k.N_c = ki["N_c"], k.alpha_D = ki["alpha_D"], k.D_c = ki["D_c"];
  k.alpha_C_min = ki["alpha_C_min"], k.C_c_min_pf_days = ki["C_c_min_pf_days"];
  k.alpha_B = ki["alpha_B"], k.B_star_tokens = ki["B_star_tokens"];
  expect_published_at("kaplan-power-laws", "L(N=1e9)", kaplan_loss_N(ki["example_N"], k));
  expect_published_at("kaplan-power-laws", "L(D=3e11)", kaplan_loss_D(ki["example_D"], k));
  expect_published_at("kaplan-power-laws", "L(C_min=3640 PF-days)",
                      kaplan_loss_C(pf_days_to_flops(ki["example_C_pf_days"]), k));
  expect_published_at("kaplan-power-laws", "B_crit(L=2.0)", kaplan_critical_batch_tokens(ki["example_L_for_Bcrit"], k));
  // L(N, D) tends to L(N) with unlimited data and to L(D) with unlimited parameters (eq. 1.5).
  EXPECT_NEAR(kaplan_loss_ND(1e9, 1e30, k), kaplan_loss_N(1e9, k), 1e-9);
  EXPECT_NEAR(kaplan_loss_ND(1e30, 3e11, k), kaplan_loss_D(3e11, k), 1e-6);

  const auto& ci = mc::test::public_case("chinchilla-parametric-loss")["inputs"];
  ChinchillaConstants ch;
  ch.E = ci["E"], ch.A = ci["A"], ch.B = ci["B"], ch.alpha = ci["alpha"], ch.beta = ci["beta"];
  const std::string id = "chinchilla-parametric-loss";
  expect_published_at(id, "L(70e9, 1.4e12) Chinchilla", chinchilla_loss(70e9, 1.4e12, ch));
  expect_published_at(id, "L(280e9, 300e9) Gopher", chinchilla_loss(280e9, 300e9, ch));
  expect_published_at(id, "G = (alpha A/(beta B))^(1/(alpha+beta))", chinchilla_G(ch));
  const double c = 5.76e23;
  const Allocation opt = allocate_chinchilla(c, ChinchillaApproach::parametric, ch);
  expect_published_at(id, "N_opt(C=5.76e23) via Approach-3 closed form", opt.params);
  // The optimum spends the whole budget (6 N D = C) and is a minimum of the loss along that budget.
  EXPECT_NEAR(6 * opt.params * opt.tokens / c, 1.0, 1e-9);
  const double l0 = chinchilla_loss(opt.params, opt.tokens, ch);
  EXPECT_LT(l0, chinchilla_loss(opt.params * 1.1, opt.tokens / 1.1, ch));
  EXPECT_LT(l0, chinchilla_loss(opt.params / 1.1, opt.tokens * 1.1, ch));
}
