// validate.cpp - evaluates the model on the published cases and formats the error table.
#include "perf/validate.h"

#include "perf/comm_volume.h"
#include "perf/scaling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace mc::perf {

json table1_config(const json& in) {
  const int layers = in.at("num_layers").get<int>(), pp = in.at("pipeline_parallel").get<int>();
  int v = 1;
  if (pp > 1) {
    const int per_stage = layers / pp;
    for (v = 2; v < per_stage && per_stage % v != 0; ++v) {
    }
    if (per_stage < 2) v = 1;
  }
  // Without a pipeline nothing gains from splitting a replica's batch, so it runs as one micro-batch
  // (B/d sequences, halved while it does not fit); with one, micro-batch 1 as in Megatron-LM's scripts.
  const int per_replica = in.at("global_batch_size").get<int>() / in.at("data_parallel").get<int>();
  int mb = pp > 1 ? 1 : per_replica;
  json par = {{"tp", in.at("tensor_parallel")},
              {"pp", pp},
              {"dp", in.at("data_parallel")},
              {"micro_batch", mb},
              {"global_batch", in.at("global_batch_size")},
              {"schedule", v > 1 ? "interleaved" : "1f1b"},
              {"virtual_stages", v},
              {"recompute", "full"},
              {"zero", 0}};
  json cfg = {{"model",
           {{"layers", layers},
            {"hidden", in.at("hidden_size")},
            {"heads", in.at("attention_heads")},
            {"seq_len", in.at("seq_len")},
            {"vocab", in.at("vocab_size")}}},
          {"cluster", {{"preset", "selene-2021"}, {"gpus", in.at("num_gpus")}}},
          {"parallel", par},
          {"training", {{"precision", "fp16"}, {"tokens", 300e9}}}};
  return cfg;
}

namespace {

// The bar for predicted throughput: every Table 1 row within 10% (and 5% median).
constexpr double kThroughputTolerance = 0.10;

struct Ctx {
  std::vector<ValidationRow>* out;
  std::string id, group;
  std::map<std::string, const json*> expected;
  // tol_override >= 0 replaces the case's tolerance (the throughput rows are held to the 10%).
  void add(const std::string& quantity, double predicted, double tol_override = -1) {
    auto it = expected.find(quantity);
    if (it == expected.end()) return;
    const json& e = *it->second;
    ValidationRow r;
    r.case_id = id, r.quantity = quantity, r.group = group;
    r.units = e.value("units", "");
    r.published = e.at("value").get<double>();
    r.predicted = predicted;
    const json& tol = e.at("tolerance");
    r.relative = tol.value("type", "relative") == "relative";
    r.tolerance = tol_override >= 0 ? tol_override : tol.at("value").get<double>();
    if (tol_override >= 0) r.relative = true;
    r.error = r.relative ? (predicted - r.published) / r.published : predicted - r.published;
    r.within = std::fabs(r.error) <= r.tolerance + 1e-12;
    out->push_back(r);
  }
};

ModelSpec model_of(const Catalog& cat, const std::string& id) {
  ModelSpec m;
  const Table* t = cat.table("models");
  const Record* r = t ? t->find(id) : nullptr;
  if (!r) return m;
  m.id = id;
  m.layers = int(r->get("layers")), m.hidden = int(r->get("hidden")), m.heads = int(r->get("heads"));
  m.seq_len = int(r->get("seq_len")), m.vocab = int(r->get("vocab")), m.ffn_hidden = int(r->get_or("ffn_hidden", 0));
  return m;
}

}  // namespace

std::vector<ValidationRow> validate_cases(const Catalog& cat, const std::string& path) {
  JsonDoc doc = JsonDoc::load(path);
  const json& all = doc.value();
  if (!all.is_array()) doc.root().fail("expected an array of cases");
  std::vector<ValidationRow> rows;
  for (const json& c : all) {
    Ctx x{&rows, c.value("id", ""), "arithmetic", {}};
    if (c.contains("expected") && c["expected"].is_array())
      for (const json& e : c["expected"]) x.expected[e.value("quantity", "")] = &e;
    const json& in = c.contains("inputs") ? c["inputs"] : json::object();
    const std::string& id = x.id;
    if (id.rfind("gpt3-", 0) == 0 && id.find("-config-and-compute") != std::string::npos) {
      const std::string preset = id.substr(0, id.find("-config-and-compute"));
      const ModelSpec m = model_of(cat, preset);
      const double n = param_count(m), tokens = in.value("training_tokens", 300e9);
      x.add("n_params (Table D.1)", n);
      x.add("total_training_compute", six_nd_flops(n, tokens));
      x.add("total_training_compute_pf_days", six_nd_flops(n, tokens) / kPetaflopDay);
    } else if (id == "gpt3-pf-day-unit") {
      x.add("pf_day", kPetaflopDay);
    } else if (id == "gpt3-training-hparams") {
      const Table* t = cat.table("models");
      const Record* r = t ? t->find("gpt3-175b") : nullptr;
      if (r) x.add("steps_at_full_batch_175b (upper bound, ignores batch ramp)",
                   r->get("tokens") / (r->get("global_batch") * r->get("seq_len")));
    } else if (id.rfind("megatron21-table1-", 0) == 0) {
      x.group = "throughput";
      json cfg = table1_config(in);
      Config conf = parse_config(cat, cfg, id);
      Estimate e = estimate(conf);
      while (!e.fits && conf.layout.micro_batch > 1) {  // halve the micro-batch until it fits
        cfg["parallel"]["micro_batch"] = conf.layout.micro_batch / 2;
        conf = parse_config(cat, cfg, id);
        e = estimate(conf);
      }
      // The paper's derived quantities (percent of peak, aggregate PFLOP/s) follow from these two.
      x.add("n_params (eq. 2)", megatron_param_count(conf.model));
      x.add("achieved_tflops_per_gpu", e.achieved_tflops_per_gpu, kThroughputTolerance);
      x.add("iteration_time (F_eq3 / (n*X))", e.iteration_time_s, kThroughputTolerance);
    } else if (id.rfind("megatron21-train-time-", 0) == 0) {
      // Narayanan et al. 2021 eq. (4) is eq. (3) per token with the small terms dropped; we keep them.
      ModelSpec m;
      m.layers = in.at("num_layers").get<int>(), m.hidden = in.at("hidden_size").get<int>();
      m.heads = m.hidden / 128, m.seq_len = in.at("seq_len").get<int>(), m.vocab = 51200;
      const double B = in.at("batch_size").get<double>();
      const double per_token = hardware_flops_per_iteration(m, B, Recompute::full) / (B * m.seq_len);
      const double P = in.at("params_P").get<double>(), T = in.at("tokens_T").get<double>();
      // eq. (3) / (B s) is 8 x (12 l h^2) (1 + ...); scale to the published P the paper plugs in.
      const double scaled = per_token * P / megatron_param_count(m);
      x.add("training_time", T * scaled / (in.at("num_gpus_n").get<double>() * in.at("achieved_flops_per_gpu_X").get<double>()) / 86400);
    } else if (id == "megatron21-pipeline-bubble") {
      const int p = in.at("p"), m = in.at("m"), v = in.at("v");
      x.add("bubble_over_ideal (p-1)/m", bubble_over_ideal(Schedule::one_f_one_b, p, m, 1));
      x.add("bubble_over_ideal_interleaved (p-1)/(v m)", bubble_over_ideal(Schedule::interleaved, p, m, v));
      const double f = bubble_over_ideal(Schedule::gpipe, p, m, 1);
      x.add("bubble_over_total (p-1)/(m+p-1)", f / (1 + f));
    } else if (id == "megatron21-comm-volumes") {
      const double b = in.at("b"), s = in.at("s"), h = in.at("h");
      const int t = in.at("t");
      x.add("tp_allreduce_volume_per_layer", tp_layer_volume(b, s, h, 1.0, t, false).bytes_sent_per_rank);
      x.add("pp_p2p_volume_per_microbatch", pp_boundary_bytes(b, s, h, 1.0));
      x.add("pp_p2p_with_scatter_gather", pp_boundary_bytes(b, s, h, 1.0) / t);
    } else if (id == "zero-fig1-7p5b-nd64" || id == "zero-table1-7p5b") {
      const double psi = in.at("psi_params"), GB = 1e9;
      auto mem = [&](int nd, int stage) { return zero_model_state_bytes(psi, nd, stage, Precision::fp16).total / GB; };
      x.add("baseline_DP", mem(64, 0));
      x.add("P_os (stage 1)", mem(64, 1));
      x.add("P_os+g (stage 2)", mem(64, 2));
      x.add("P_os+g+p (stage 3)", mem(64, 3));
      for (int stage = 1; stage <= 3; ++stage)
        for (int nd : {1, 4, 16, 64, 256, 1024})
          x.add("stage" + std::to_string(stage) + "_Nd" + std::to_string(nd), mem(nd, stage));
    } else if (id == "zero-communication-volume") {
      // In units of Psi once the ring factor (N_d - 1)/N_d is taken out, as Sec. 7 states them.
      const int nd = 64;
      const double ring = double(nd - 1) / nd;
      x.add("baseline_DP_allreduce", dp_gradient_volume(1, 1, nd, 0).bytes_sent_per_rank / ring);
      x.add("P_os+g (reduce-scatter + all-gather)", dp_gradient_volume(1, 1, nd, 2).bytes_sent_per_rank / ring);
      x.add("P_os+g+p (2 all-gathers + reduce-scatter)", dp_gradient_volume(1, 1, nd, 3).bytes_sent_per_rank / ring);
    } else if (id == "kaplan-power-laws") {
      KaplanLaw k;
      x.add("L(N=1e9)", kaplan_loss_of_params(k, 1e9));
      x.add("L(D=3e11)", kaplan_loss_of_tokens(k, 3e11));
      x.add("L(C_min=3640 PF-days)", kaplan_loss_of_compute(k, 3640));
      x.add("B_crit(L=2.0)", kaplan_critical_batch_tokens(k, 2.0));
      x.add("loss factor for doubling N (2^-alpha_N)", kaplan_loss_of_params(k, 2e9) / kaplan_loss_of_params(k, 1e9));
    } else if (id == "chinchilla-parametric-loss") {
      ChinchillaLaw ch;
      x.add("L(70e9, 1.4e12) Chinchilla", chinchilla_loss(ch, 70e9, 1.4e12));
      x.add("L(280e9, 300e9) Gopher", chinchilla_loss(ch, 280e9, 300e9));
      x.add("a = beta/(alpha+beta) from rounded constants", chinchilla_a(ch));
      x.add("G = (alpha A/(beta B))^(1/(alpha+beta))", chinchilla_G(ch));
      x.add("N_opt(C=5.76e23) via Approach-3 closed form", chinchilla_optimal_params(ch, 5.76e23));
    } else if (id == "korthikanti-activation-formulas-gpt3") {
      ModelSpec m;
      m.seq_len = in.at("s"), m.hidden = in.at("h"), m.heads = in.at("a"), m.layers = 1;
      const double b = in.at("b");
      const int t = in.at("t");
      x.add("no_parallelism sbh(34+5as/h)", activation_bytes_per_layer(m, b, 1, false, Recompute::none));
      x.add("tensor_parallel sbh(10+24/t+5as/(ht))", activation_bytes_per_layer(m, b, t, false, Recompute::none));
      x.add("tensor+sequence_parallel sbh(34/t+5as/(ht))", activation_bytes_per_layer(m, b, t, true, Recompute::none));
      x.add("tensor_parallel+selective sbh(10+24/t)", activation_bytes_per_layer(m, b, t, false, Recompute::selective));
      x.add("tensor+sequence+selective sbh(34/t)", activation_bytes_per_layer(m, b, t, true, Recompute::selective));
      x.add("full_recompute 2sbh", activation_bytes_per_layer(m, b, t, false, Recompute::full));
      x.add("5as/h (GPT-3)", 5.0 * m.heads * m.seq_len / m.hidden);
    }
  }
  return rows;
}

ThroughputSummary throughput_summary(const std::vector<ValidationRow>& rows) {
  std::vector<double> errs;
  for (const auto& r : rows)
    if (r.group == "throughput" && r.quantity == "achieved_tflops_per_gpu") errs.push_back(std::fabs(r.error));
  ThroughputSummary s;
  s.rows = int(errs.size());
  if (errs.empty()) return s;
  std::sort(errs.begin(), errs.end());
  const size_t n = errs.size();
  s.median_abs_error = n % 2 ? errs[n / 2] : 0.5 * (errs[n / 2 - 1] + errs[n / 2]);
  s.max_abs_error = errs.back();
  return s;
}

namespace {
std::string num(double v) {
  char buf[64];
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-2)) std::snprintf(buf, sizeof buf, "%.4g", v);
  else std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}
std::string err(const ValidationRow& r) {
  char buf[64];
  if (r.relative) std::snprintf(buf, sizeof buf, "%+.2f%% (tol %.3g%%)", 100 * r.error, 100 * r.tolerance);
  else std::snprintf(buf, sizeof buf, "%+.3g (tol %.3g)", r.error, r.tolerance);
  return buf;
}
}  // namespace

std::string validation_markdown(const std::vector<ValidationRow>& rows) {
  std::string s =
      "# Validation of the performance model\n\n"
      "Generated by `megacluster validate --markdown > docs/validation.md` from "
      "`tests/data/validation/public-cases.json`; `tests/unit/perf_estimate_test.cpp` fails if a row leaves its "
      "tolerance.\n\n"
      "**How the throughput rows are predicted.** Megatron-LM 2021 Table 1 gives, per row, the model (l, h, a, "
      "s = 2048, V = 51200), the GPUs n, the degrees t, p, d and the batch B. We run `megacluster estimate` on "
      "the `selene-2021` preset (DGX A100 80GB, 8 x HDR per node, NVSwitch) with full activation recomputation "
      "and the interleaved schedule. Two inputs the paper does not print are fixed by rule, not per row: the "
      "micro-batch is 1 with a pipeline (Megatron-LM's scripts) and B/d without one (nothing gains from "
      "splitting a replica's batch; halved until it fits), and the interleaving depth is the smallest v >= 2 "
      "dividing the layers per stage. The published throughput is never an input: time comes from the catalog "
      "peak (312 TFLOP/s), HBM bandwidth and NVLink/NIC rates, a GEMM model (tile and wave quantization over "
      "108 SMs, a large-GEMM ceiling `matmul_peak_fraction` of 0.75 for sustained clocks, a roofline), "
      "memory-bound kernels at 80% of HBM bandwidth, alpha-beta collectives (ring/tree/hierarchical) and the "
      "pipeline bubble. The derived columns of the cases (percent of peak, aggregate PFLOP/s) follow from the "
      "achieved TFLOP/s and are not repeated. Throughput rows are held to the issue's 10% (the cases allow "
      "15%).\n\n";
  const ThroughputSummary t = throughput_summary(rows);
  char head[256];
  std::snprintf(head, sizeof head,
                "Megatron-LM 2021 Table 1, achieved TFLOP/s per GPU predicted from physics: median |error| "
                "%.1f%%, max %.1f%% over %d rows.\n\n",
                100 * t.median_abs_error, 100 * t.max_abs_error, t.rows);
  s += head;
  s += "| case | quantity | published | predicted | error | ok |\n|---|---|---:|---:|---:|:-:|\n";
  for (const auto& r : rows)
    s += "| " + r.case_id + " | " + r.quantity + " | " + num(r.published) + " " + r.units + " | " + num(r.predicted) +
         " | " + err(r) + " | " + (r.within ? "yes" : "**no**") + " |\n";
  return s;
}

std::string validation_text(const std::vector<ValidationRow>& rows) {
  std::string s;
  char line[512];
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "%-38s %-44s %12s %12s  %-24s %s\n", r.case_id.c_str(), r.quantity.c_str(),
                  num(r.published).c_str(), num(r.predicted).c_str(), err(r).c_str(), r.within ? "ok" : "OUT");
    s += line;
  }
  const ThroughputSummary t = throughput_summary(rows);
  std::snprintf(line, sizeof line, "Table 1 achieved TFLOP/s: median |error| %.2f%%, max %.2f%% (%d rows)\n",
                100 * t.median_abs_error, 100 * t.max_abs_error, t.rows);
  s += line;
  return s;
}

}  // namespace mc::perf
