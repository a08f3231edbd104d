// perf_model.cpp - the arithmetic of a transformer: parameters, FLOPs, activation and model-state memory,
// pipeline bubbles. Pure formulas from the papers, each cited where it is used.
#include "perf/perf.h"

#include <algorithm>
#include <cmath>

namespace mc::perf {

const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::gpipe: return "gpipe";
    case Schedule::one_f_one_b: return "1f1b";
    case Schedule::interleaved: return "interleaved";
  }
  return "?";
}
const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}
const char* to_string(Precision p) {
  switch (p) {
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    case Precision::fp32: return "fp32";
  }
  return "?";
}

namespace {
double head_dim(const ModelSpec& m) { return double(m.hidden) / m.heads; }

// Weights of one transformer layer (GPT-2/3 block: pre-LayerNorm, biases, learned positions).
double layer_params(const ModelSpec& m) {
  const double h = m.hidden, f = m.ffn(), kvd = m.kv() * head_dim(m);
  const double qkv = h * (h + 2 * kvd) + (h + 2 * kvd);
  const double proj = h * h + h;
  const double mlp = m.gated_mlp ? 3 * h * f + f + h : 2 * h * f + f + h;
  const double norms = 4 * h;  // two LayerNorms, gain and bias each
  return qkv + proj + mlp + norms;
}

// Matmul FLOPs of one layer's forward pass for one sequence (2 FLOPs per multiply-add):
// Narayanan et al. 2021 Sec. 5.1 count 24 s h^2 + 4 s^2 h for the standard block; generalized here to
// any MLP width, gated MLPs and grouped-query attention.
double layer_forward_flops_per_seq(const ModelSpec& m) {
  const double s = m.seq_len, h = m.hidden, f = m.ffn(), kvd = m.kv() * head_dim(m);
  const double dense = 2 * s * (h * (h + 2 * kvd) + h * h + (m.gated_mlp ? 3 : 2) * h * f);
  const double attention = 4 * s * s * h;  // QK^T and attention-over-V
  return dense + attention;
}
}  // namespace

// Exact count: token + position embeddings, layers, final LayerNorm; the output layer shares the token
// embedding (GPT-2/3). For the standard block this is Narayanan et al. 2021 eq. (2) plus the final 2h.
double param_count(const ModelSpec& m) {
  const double h = m.hidden;
  return m.layers * layer_params(m) + double(m.vocab) * h + double(m.seq_len) * h + 2 * h;
}

// Narayanan et al. 2021, eq. (2): P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)).
double megatron_param_count(const ModelSpec& m) {
  const double l = m.layers, h = m.hidden, V = m.vocab, s = m.seq_len;
  return 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
}

// Training FLOPs without recomputation: 3 x forward (backward = 2 x forward) for the layers and the
// logit layer (2 B s h V forward). For the standard block this is eq. (3) of Narayanan et al. 2021 with
// 72 in place of 96: F = 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
double model_flops_per_iteration(const ModelSpec& m, double global_batch) {
  const double layers = m.layers * layer_forward_flops_per_seq(m);
  const double logits = 2.0 * m.seq_len * m.hidden * double(m.vocab);
  return global_batch * 3 * (layers + logits);
}

// With recomputation the layers' forward runs twice: full recompute gives eq. (3),
// F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)); selective recompute (Korthikanti et al. 2022, Sec. 5) redoes
// only the attention core, whose matmuls are the 4 s^2 h term.
double hardware_flops_per_iteration(const ModelSpec& m, double global_batch, Recompute r) {
  double extra = 0;
  if (r == Recompute::full) extra = m.layers * layer_forward_flops_per_seq(m);
  if (r == Recompute::selective) extra = m.layers * 4.0 * m.seq_len * double(m.seq_len) * m.hidden;
  return model_flops_per_iteration(m, global_batch) + global_batch * extra;
}

// Kaplan et al. 2020, Sec. 2.1: C ~= 6 N D (forward 2 N D, backward 4 N D); GPT-3 Table D.1 uses it.
double six_nd_flops(double params, double tokens) { return 6.0 * params * tokens; }

// Korthikanti et al. 2022, Table 2 (bytes, 16-bit activations, 1-byte dropout masks), generalized to an
// MLP of width f (19 s b h = s b (3h + 4f) with f = 4h) and grouped-query K/V (11 s b h = s b (7h + 4 kv d)):
//   no parallelism          s b h (34 + 5 a s / h)
//   tensor parallel         s b h (10 + 24/t + 5 a s/(h t))   (10 s b h stay replicated on every rank)
//   tensor + sequence par.  s b h (34/t + 5 a s/(h t))
//   selective recompute     drops the 5 a s^2 b term;  full recompute keeps only the layer input 2 s b h.
double activation_bytes_per_layer(const ModelSpec& m, double b, int tp, bool sp, Recompute r) {
  const double s = m.seq_len, h = m.hidden, a = m.heads, t = std::max(1, tp);
  const double kvd = m.kv() * head_dim(m), f = m.ffn() * (m.gated_mlp ? 1.5 : 1.0);
  if (r == Recompute::full) return 2 * s * b * h / (sp ? t : 1.0);
  const double replicated = 10 * s * b * h;  // LayerNorm inputs (4), QKV and MLP inputs (4), 2 dropout masks
  const double attention_linear = s * b * (7 * h + 4 * kvd);
  const double mlp = s * b * (3 * h + 4 * f);
  const double norms = 4 * s * b * h;
  const double split = attention_linear + mlp + norms - replicated;  // the part divided by t
  const double core = r == Recompute::selective ? 0.0 : 5 * a * s * s * b;
  if (sp) return (replicated + split + core) / t;
  return replicated + (split + core) / t;
}

// Rajbhandari et al. 2020 (ZeRO), Sec. 3.1 and 5: mixed-precision Adam keeps 2 bytes of fp16 weights,
// 2 bytes of fp16 gradients and K = 12 bytes (fp32 master weights, momentum, variance) per parameter.
// Stage 1 partitions the optimizer state over N_d ranks, stage 2 the gradients too, stage 3 the weights.
// fp32 training: 4 + 4 + 8 (Adam moments only).
MemoryBreakdown zero_model_state_bytes(double params, int dp, int zero_stage, Precision p) {
  const bool mixed = p != Precision::fp32;
  const double wb = mixed ? 2 : 4, gb = mixed ? 2 : 4, k = mixed ? 12 : 8, nd = std::max(1, dp);
  MemoryBreakdown mb;
  mb.weights = params * wb / (zero_stage >= 3 ? nd : 1.0);
  mb.gradients = params * gb / (zero_stage >= 2 ? nd : 1.0);
  mb.optimizer = params * k / (zero_stage >= 1 ? nd : 1.0);
  mb.total = mb.weights + mb.gradients + mb.optimizer;
  return mb;
}

// Narayanan et al. 2021, Sec. 2.2.1 (GPipe and PipeDream-Flush/1F1B): bubble / ideal = (p-1)/m;
// Sec. 2.2.2 (interleaved with v chunks per rank): (p-1)/(v m).
double bubble_over_ideal(Schedule s, int p, int m, int v) {
  if (p <= 1 || m <= 0) return 0;
  const double base = double(p - 1) / m;
  return s == Schedule::interleaved ? base / std::max(1, v) : base;
}

// Memory of the most loaded GPU. The first pipeline stage holds the most in-flight micro-batches
// (Korthikanti et al. 2022, Sec. 4.2.3: p micro-batches of l/p layers under 1F1B = l layers' worth,
// times 1 + (p-1)/(p v) when interleaved; GPipe keeps all m). The last stage holds the logits instead.
MemoryBreakdown memory_per_gpu(const Config& c) {
  const ModelSpec& m = c.model;
  const Layout& L = c.layout;
  const double t = L.tp, p = L.pp;
  const double layers_per_stage = double(m.layers) / p;
  const double h = m.hidden;
  // Weights of a stage shard: its layers / t, plus the embeddings (token / t and positions) on the first
  // stage and the tied output embedding on the last one.
  const double layer_w = layers_per_stage * layer_params(m) / t;
  const double embed = double(m.vocab) * h / t + (p == 1 ? double(m.seq_len) * h : 0);
  const double first_params = layer_w + embed + (p > 1 ? double(m.seq_len) * h : 0);
  MemoryBreakdown mb = zero_model_state_bytes(first_params, L.dp, L.zero, c.training.precision);

  const int micro = L.micro_batches();
  double in_flight = 0;
  switch (L.schedule) {
    case Schedule::gpipe: in_flight = micro; break;
    case Schedule::one_f_one_b: in_flight = std::min<double>(p, micro); break;
    case Schedule::interleaved:
      in_flight = std::min<double>(p, micro) * (1 + (p - 1) / (p * std::max(1, L.virtual_stages)));
      break;
  }
  const double act_scale = c.training.precision == Precision::fp32 ? 2.0 : 1.0;
  double acts = act_scale * layers_per_stage * in_flight *
                activation_bytes_per_layer(m, L.micro_batch, L.tp, L.sequence_parallel, L.recompute);
  if (L.recompute == Recompute::full)  // one layer's full activations while it is recomputed
    acts += act_scale * activation_bytes_per_layer(m, L.micro_batch, L.tp, L.sequence_parallel, Recompute::none);
  // Embedding output kept for its dropout backward: 2 s b h bytes per in-flight micro-batch (first stage).
  acts += act_scale * in_flight * 2.0 * m.seq_len * L.micro_batch * h / (L.sequence_parallel ? t : 1.0);
  // Last stage: fp32 logits and their gradient, 4 + 4 bytes x s b V / t for the micro-batch in flight.
  const double logits = 8.0 * m.seq_len * L.micro_batch * double(m.vocab) / t;
  if (p == 1) acts += logits;
  mb.activations = acts;
  mb.total = mb.weights + mb.gradients + mb.optimizer + mb.activations;
  if (p > 1) {  // compare with the last stage: 1 micro-batch of activations... at most, plus the logits
    MemoryBreakdown last = zero_model_state_bytes(layer_w + double(m.vocab) * h / t, L.dp, L.zero, c.training.precision);
    last.activations = act_scale * layers_per_stage *
                           activation_bytes_per_layer(m, L.micro_batch, L.tp, L.sequence_parallel, L.recompute) +
                       logits;
    last.total = last.weights + last.gradients + last.optimizer + last.activations;
    if (last.total > mb.total) return last;
  }
  return mb;
}

}  // namespace mc::perf
