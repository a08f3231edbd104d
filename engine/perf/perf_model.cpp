// perf_model.cpp - the arithmetic of a transformer: parameters, FLOPs, activation and model-state memory,
// pipeline bubbles. Pure formulas from the papers, each cited where it is used.
#include "perf/perf.h"

#include <algorithm>
#include <cmath>

namespace mc::perf {

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::none:
      return "none";
    case Recompute::selective:
      return "selective";
    case Recompute::full:
      return "full";
  }
  return "?";
}
const char* to_string(Precision p) {
  switch (p) {
    case Precision::fp16:
      return "fp16";
    case Precision::bf16:
      return "bf16";
    case Precision::fp32:
      return "fp32";
    case Precision::tf32:
      return "tf32";
  }
  return "?";
}

namespace {
double head_dim(const ModelSpec& m) { return double(m.hidden) / m.heads; }

// Weights of one transformer layer: the GPT-2/3 block (pre-LayerNorm, biases) by default; without biases
// and with RMSNorm (a gain per channel, Zhang & Sennrich 2019) the Llama block (Touvron et al. 2023, Sec. 2.2).
double layer_params(const ModelSpec& m) {
  const double h = m.hidden, f = m.ffn(), kvd = m.kv() * head_dim(m), bias = m.linear_biases ? 1 : 0;
  const double qkv = h * (h + 2 * kvd) + bias * (h + 2 * kvd);
  const double proj = h * h + bias * h;
  const double mlp = (m.gated_mlp ? 3 * h * f : 2 * h * f) + bias * (f + h);
  const double norms = (m.rms_norm ? 2 : 4) * h;  // two norms, a gain (and a bias for LayerNorm) each
  return qkv + proj + mlp + norms;
}

// Weights outside the layers: the token embedding, the position table (learned positions only: RoPE, Su et
// al. 2021, has none), the output matrix when it is not tied to the embedding, and the final norm.
double embedding_params(const ModelSpec& m) {
  const double h = m.hidden;
  return double(m.vocab) * h * (m.tied_output ? 1 : 2) + (m.learned_positions ? double(m.seq_len) * h : 0.0) +
         (m.rms_norm ? 1 : 2) * h;
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

double layer_params_bytes(const ModelSpec& m, int tp, double bytes_per_param) {
  return layer_params(m) / std::max(1, tp) * bytes_per_param;
}

// Exact count: token (+ position) embeddings, layers, final norm (+ the untied output matrix). For the
// standard GPT-2/3 block (learned positions, tied output) this is Narayanan et al. 2021 eq. (2) plus the
// final 2h.
double param_count(const ModelSpec& m) { return m.layers * layer_params(m) + embedding_params(m); }

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
// Flash attention (Dao et al. 2022, Alg. 1-2) never stores the s x s scores: the 5 a s^2 b term (softmax
// output 2, dropout mask 1, dropout output 2 bytes per score) goes, the dropout mask being regenerated from
// the RNG state in the backward; the kernel keeps instead the softmax statistics of each row (one fp32
// logsumexp L = m + log l per query and head, FlashAttention-2, Dao 2023, Alg. 1): 4 a s b bytes. Q, K, V and the
// output it needs for its backward are the inputs of the attention core and of the projection, already in
// the 11 s b h of the linear part.
double activation_bytes_per_layer(const ModelSpec& m, double b, int tp, bool sp, Recompute r, bool flash) {
  const double s = m.seq_len, h = m.hidden, a = m.heads, t = std::max(1, tp);
  const double kvd = m.kv() * head_dim(m), f = m.ffn() * (m.gated_mlp ? 1.5 : 1.0);
  if (r == Recompute::full) return 2 * s * b * h / (sp ? t : 1.0);
  const double replicated = 10 * s * b * h;  // LayerNorm inputs (4), QKV and MLP inputs (4), 2 dropout masks
  const double attention_linear = s * b * (7 * h + 4 * kvd);
  const double mlp = s * b * (3 * h + 4 * f);
  const double norms = 4 * s * b * h;
  const double split = attention_linear + mlp + norms - replicated;  // the part divided by t
  const double core = r == Recompute::selective ? 0.0 : flash ? 4 * a * s * b : 5 * a * s * s * b;
  if (sp) return (replicated + split + core) / t;
  return replicated + (split + core) / t;
}

// Rajbhandari et al. 2020 (ZeRO), Sec. 3.1 and 5: mixed-precision Adam keeps 2 bytes of fp16 weights,
// 2 bytes of fp16 gradients and K = 12 bytes (fp32 master weights, momentum, variance) per parameter.
// Stage 1 partitions the optimizer state over N_d ranks, stage 2 the gradients too, stage 3 the weights.
// fp32 training: 4 + 4 + 8 (Adam moments only).
MemoryBreakdown zero_model_state_bytes(double params, int dp, int zero_stage, Precision p) {
  const bool mixed = !full_width(p);
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
double bubble_over_ideal(PipeSchedule s, int p, int m, int v) {
  if (p <= 1 || m <= 0) return 0;
  const double base = double(p - 1) / m;
  return s == PipeSchedule::interleaved ? base / std::max(1, v) : base;
}

namespace {
// `units` split over `n` slots as evenly as possible: the remainder goes to the middle slots first, the
// end slots (which also hold the embedding and the output layer: their activations and logits) last.
std::vector<int> balanced(int units, int n) {
  std::vector<int> out(size_t(n), units / n);
  int extra = units % n;
  for (int i = 1; i < n - 1 && extra > 0; ++i, --extra) ++out[size_t(i)];
  for (int i : {0, n - 1})
    if (extra > 0) ++out[size_t(i)], --extra;
  return out;
}

int chunks_of(const Layout& L) {
  return L.schedule == PipeSchedule::interleaved && L.pp > 1 ? std::max(1, L.virtual_stages) : 1;
}
}  // namespace

std::vector<int> stage_layers(const ModelSpec& m, const Layout& L) {
  const int p = std::max(1, L.pp);
  if (int(L.layers_per_stage.size()) == p) return L.layers_per_stage;
  if (chunks_of(L) > 1) {  // the interleaved schedule: each rank holds the sum of its chunks
    const std::vector<int> chunks = chunk_layers(m, L);
    std::vector<int> out(size_t(p), 0);
    for (size_t k = 0; k < chunks.size(); ++k) out[k % size_t(p)] += chunks[k];
    return out;
  }
  // Units to balance: the layers, plus the embedding and the output layer when they count as layers.
  const bool as_layers = L.embedding_stages == EmbeddingStages::as_layers && p > 1;
  std::vector<int> out = balanced(m.layers + (as_layers ? 2 : 0), p);
  if (as_layers) --out.front(), --out.back();
  for (int& n : out) n = std::max(0, n);
  return out;
}

// Interleaved 1F1B (Narayanan et al. 2021, Sec. 2.2.2) gives rank r the model chunks r, p + r, ..., (v-1) p
// + r of the p v virtual stages. Megatron-LM splits the layers into p v equal chunks; Llama 3 405B (Dubey et
// al. 2024, "The Llama 3 Herd of Models", Sec. 3.3.2) takes one layer off the first and the last stage so
// that "the first model chunk on the first stage has only the embedding, and the last model chunk on the
// last stage has only output projection and loss calculation": the embedding and the output layer each
// take one layer's slot (EmbeddingStages::as_layers), balanced over the virtual stages.
std::vector<int> chunk_layers(const ModelSpec& m, const Layout& L) {
  const int p = std::max(1, L.pp), v = chunks_of(L);
  if (v == 1) return stage_layers(m, L);
  std::vector<int> out(size_t(p) * size_t(v), 0);
  if (int(L.layers_per_stage.size()) == p) {
    // An explicit count per rank, split over its v chunks as evenly as possible; the chunk that holds the
    // embedding (the first rank's first) or the output layer (the last rank's last) is the one left light.
    for (int r = 0; r < p; ++r) {
      const int n = std::max(0, L.layers_per_stage[size_t(r)]), q = n / v, rem = n % v;
      for (int c = 0; c < v; ++c) {
        const bool gets_extra = r == 0 && p > 1 ? c >= v - rem : c < rem;
        out[size_t(c) * size_t(p) + size_t(r)] = q + (gets_extra ? 1 : 0);
      }
    }
    return out;
  }
  const bool as_layers = L.embedding_stages == EmbeddingStages::as_layers;
  out = balanced(m.layers + (as_layers ? 2 : 0), p * v);
  if (as_layers) --out.front(), --out.back();
  for (int& n : out) n = std::max(0, n);
  return out;
}

namespace {
// Micro-batches whose activations stage `i` holds at its peak: all m under GPipe; p - i under 1F1B
// (Narayanan et al. 2021 Sec. 2.2.1: the first stage p, the last 1), times 1 + (p-1)/(p v) interleaved
// (Korthikanti et al. 2022, Sec. 4.2.3).
double in_flight(const Layout& L, int i) {
  const double p = L.pp, m = L.micro_batches();
  switch (L.schedule) {
    case PipeSchedule::gpipe:
      return m;
    case PipeSchedule::one_f_one_b:
      return std::min(p - i, m);
    case PipeSchedule::interleaved:
      return std::min(p - i, m) * (1 + (p - 1) / (p * std::max(1, L.virtual_stages)));
  }
  return m;
}

// Activations at the peak of rank i under the interleaved schedule, counted op by op: Megatron-LM's
// forward_backward_pipelining_with_interleaving runs its warm-up chunk forwards and one more before its first
// backward (core/pipeline_schedule.h: (p - i - 1) 2 + (v - 1) p of them, all m v when m = p). With equal chunks
// on the first rank that is p v + p - 1 chunks: p (1 + (p-1)/(p v)) stages' worth (Korthikanti et al. 2022,
// Sec. 4.2.3); with uneven chunks each held forward counts its own chunk's layers.
struct InFlight {
  double layer_activations = 0;  // sum over the held chunk forwards of their layers
  double first_chunk = 0;        // held forwards of chunk 0 (the embedding's, on the first rank)
};
InFlight interleaved_in_flight(const Layout& L, const std::vector<int>& chunks, int i) {
  const int p = L.pp, v = chunks_of(L);
  const int m = int(L.micro_batches()), total = m * v;
  const int held = std::min(total, warmup_forwards(PipeSchedule::interleaved, p, i, m, v) + 1);
  InFlight f;
  for (int k = 0; k < held; ++k) {
    const int chunk = nth_forward(PipeSchedule::interleaved, p, v, k).chunk;
    f.layer_activations += chunks[size_t(chunk) * size_t(p) + size_t(i)];
    f.first_chunk += chunk == 0 ? 1 : 0;
  }
  return f;
}

// torchtitan's per-op selective recompute (parallelize_llama.py at 1ea476e, selective_ac_option "op"): the
// checkpoint keeps the block's input, and the policy the outputs of every aten.mm but the second, fourth and
// sixth of the block (wk, wo and w3 of Llama's wq, wk, wv, wo, w1, w3, w2; wk, wo and w2 without a gate) and
// the flash-attention kernel's (its output and an fp32 logsumexp per query and head, FlashAttention-2 Alg. 1).
// At 2 bytes: wq's, wv's and w1's outputs and the attention's, split over the tensor ranks; the block input
// and w2's reduced output, split too only under sequence parallelism.
double every_second_matmul_bytes(const ModelSpec& m, double b, int tp, bool sp) {
  const double s = m.seq_len, h = m.hidden, a = m.heads, t = std::max(1, tp);
  const double kvd = m.kv() * head_dim(m), f = m.ffn();
  const double split = 2 * s * b * (h + kvd + f + h) + 4 * a * s * b;
  const double whole = 2 * s * b * (h + (m.gated_mlp ? h : 0.0));
  return split / t + whole / (sp ? t : 1.0);
}

// ZeRO-3's working set. Each layer's weights are gathered whole before its forward and its backward and
// dropped after (Rajbhandari et al. 2020, Sec. 5.3), and in the backward the unit's gradient is whole too
// until it is reduce-scattered. Which units are whole at once is the stack's (software.json):
//  - FSDP, one unit per block: the unit computing and, where the next one's all-gather is prefetched under
//    it (zero3_overlap), that one too ("the current instance running computation and the next instance
//    whose all-gather is prefetched", PyTorch FSDP docs, limit_all_gathers), plus the running unit's gradient.
//  - DeepSpeed, one gather per module: the module computing and the modules after it that fit the prefetch
//    budget (stage3_prefetch_bucket_size; perf_time.cpp hides the same ones), the module's whole gradient, and
//    the reduce bucket where gradients wait for their reduce-scatter (reduce_bucket_size elements, 0.6's
//    contiguous buffer; at most what the stage holds).
// The embedding and the output matrix are units of their own on the stages that hold them. Not counted, so
// this is a floor: FSDP's root unit (embedding, final norm, output) kept whole through the forward and the
// backward, DeepSpeed's persistent small tensors (under 1e5 elements), and the allocator's slack.
struct WorkingSet {  // bytes whole at once while a layer, the embedding or the output layer computes
  double layer = 0, embed = 0, output = 0;
};
WorkingSet zero3_working_set(const Config& c, int layers, bool first, bool last) {
  const ModelSpec& m = c.model;
  const Layout& L = c.layout;
  const Software& sw = c.software;
  WorkingSet ws;
  if (L.zero < 3 || L.dp_group() <= 1) return ws;
  const double t = std::max(1, L.tp), w = full_width(c.training.precision) ? 4 : 2, h = m.hidden;
  const double table = double(m.vocab) * h / t;  // the embedding's (or the output layer's) weights
  if (!sw.zero3_reshard_after_forward) {
    // Kept whole from forward to backward (reshard_after_forward=False): by the last forward every unit of
    // the stage is, and stays so into the backward, beside the running unit's gradient.
    const double unit = layer_params(m) / t;
    if (layers > 0) ws.layer = w * (layers * unit + unit);
    ws.embed = ws.output = w * 2 * table;
  } else if (sw.zero3_gather == Zero3Gather::per_layer) {
    const double unit = layer_params(m) / t;
    const int whole = sw.zero3_overlap && layers >= 2 ? 2 : 1;
    if (layers > 0) ws.layer = w * (whole * unit + unit);
    ws.embed = ws.output = w * 2 * table;
  } else {
    // The layer's modules in the order they run: QKV, projection, fc1 (with its gate), fc2, then the next
    // layer's QKV. After each, the following ones go out while they fit the budget.
    const double kvd = m.kv() * head_dim(m), f = m.ffn();
    const double mods[] = {h * (h + 2 * kvd) / t, h * h / t, (m.gated_mlp ? 2 : 1) * h * f / t, h * f / t};
    const double budget = sw.zero3_overlap ? sw.zero3_prefetch_params : 0.0;
    double live = 0, biggest = 0;
    for (int k = 0; k < 4; ++k) {
      double ahead = 0;
      for (int j = 1; j < 4; ++j) {
        const double n = mods[(k + j) % 4];
        if (ahead + n > budget) break;
        ahead += n;
      }
      live = std::max(live, mods[k] + ahead);
      biggest = std::max(biggest, mods[k]);
    }
    const double held = layers * layer_params(m) / t + (first ? table : 0.0) + (last ? table : 0.0);
    const double bucket = std::min(sw.zero3_reduce_bucket_params, held);
    if (layers > 0) ws.layer = w * (live + biggest + bucket);
    ws.embed = ws.output = w * (2 * table + bucket);
  }
  if (!first) ws.embed = 0;
  if (!last) ws.output = 0;
  return ws;
}

// Memory of stage i holding `layers` transformer layers.
MemoryBreakdown stage_memory(const Config& c, int i, int layers) {
  const ModelSpec& m = c.model;
  const Layout& L = c.layout;
  const double t = L.tp, h = m.hidden;
  const bool first = i == 0, last = i == L.pp - 1;
  // Weights of the stage's shard: its layers / t, the token embedding / t and the learned positions (if any)
  // on the first stage, the output matrix / t on the last one (one copy of a tied one on a single stage).
  double params = layers * layer_params(m) / t;
  if (first) params += double(m.vocab) * h / t + (m.learned_positions ? double(m.seq_len) * h : 0.0);
  // The output matrix: the tied embedding's copy on the last stage, or its own (untied) one.
  if (last && (!first || !m.tied_output)) params += double(m.vocab) * h / t;
  MemoryBreakdown mb = zero_model_state_bytes(params, L.dp_group(), L.zero, c.training.precision);
  const double act_scale = full_width(c.training.precision) ? 2.0 : 1.0;
  double n = in_flight(L, i), held_layers = layers * n;
  if (chunks_of(L) > 1) {
    const InFlight f = interleaved_in_flight(L, chunk_layers(m, L), i);
    held_layers = f.layer_activations, n = f.first_chunk;
  }
  const double per_layer = L.recompute == Recompute::selective && c.software.selective_every_second_matmul
                               ? every_second_matmul_bytes(m, L.micro_batch, L.tp, L.sequence_parallel)
                               : activation_bytes_per_layer(m, L.micro_batch, L.tp, L.sequence_parallel, L.recompute,
                                                            c.software.flash_attention);
  // Context parallelism: each rank keeps the activations of its s / cp tokens, and the attention scores of
  // its s / cp queries against all s keys (Korthikanti et al. 2022 eq. 2 term by term: every term is linear
  // in the rank's queries), so a layer's activations are 1 / cp of the whole sequence's.
  const double cp = std::max(1, L.cp);
  double held = act_scale * held_layers * per_layer / cp;
  // Checkpoints split over the tensor ranks (DeepSpeed partition-activations: each rank keeps 1/t of a layer's
  // input), unless sequence parallelism has split them already; copied to the host (checkpoint-in-cpu).
  if (L.recompute == Recompute::full && L.partition_activations && !L.sequence_parallel) held /= t;
  double acts = held;
  if (L.recompute == Recompute::full && L.offload_activations) mb.host += held, acts = 0;
  // Embedding output kept for its dropout backward: 2 s b h bytes per in-flight micro-batch.
  if (first) acts += act_scale * n * 2.0 * m.seq_len / cp * L.micro_batch * h / (L.sequence_parallel ? t : 1.0);
  // On top of what is held, the largest of three moments that never meet: the output layer's (fp32 logits
  // and their gradient, 4 + 4 bytes x s b V / t, live from the loss until the output layer's backward has
  // run, before any layer is recomputed), a layer's (its activations whole while it is recomputed), and the
  // embedding's backward; each with what ZeRO-3 holds whole at that moment.
  const WorkingSet ws = zero3_working_set(c, layers, first, last);
  double recomputed = L.recompute == Recompute::full && layers > 0
                          ? act_scale *
                                activation_bytes_per_layer(m, L.micro_batch, L.tp, L.sequence_parallel, Recompute::none,
                                                           c.software.flash_attention) /
                                cp
                          : 0.0;
  // With context parallelism a layer's attention holds the whole sequence's keys and values, gathered, and
  // in its backward their whole-sequence gradients before the reduce-scatter (TransformerEngine's
  // AttnFuncWithCPAndKVAllGather allocates dk and dv for all cp chunks): 4 b s kv_heads d / t elements.
  if (L.cp > 1 && layers > 0)
    recomputed += act_scale * 2.0 * 4 * L.micro_batch * double(m.seq_len) * m.kv() * head_dim(m) / t;
  const double logits = last ? 8.0 * m.seq_len / cp * L.micro_batch * double(m.vocab) / t : 0.0;
  const double moments[][2] = {{recomputed, ws.layer}, {logits, ws.output}, {0.0, ws.embed}};
  const double* peak = moments[0];
  for (const auto& mo : moments)
    if (mo[0] + mo[1] > peak[0] + peak[1]) peak = mo;
  mb.activations = acts + peak[0];
  mb.gathered = peak[1];
  // ZeRO-Offload (Ren et al. 2021, Sec. 4): the fp32 master weights, Adam's moments and the gradients (kept
  // in fp32 for the CPU's step) live on the host; the GPU keeps its fp16 weights. FSDP's CPUOffload and
  // ZeRO-Infinity's parameter offload keep the weight shard there too (Rajbhandari et al. 2021, Sec. 5).
  // (Only where the state is partitioned, as the stacks require: the unsharded copies engine/perf prices for
  // gradient volumes, zero = 0, keep theirs.)
  const bool opt_off = (L.offload_optimizer && L.zero >= 1) || (L.offload_params && L.zero >= 3);
  if (opt_off) {
    const double grad_width = full_width(c.training.precision) ? 4 : 2;
    mb.host += mb.optimizer + mb.gradients * 4 / grad_width;
    mb.optimizer = mb.gradients = 0;
  }
  if (L.offload_params && L.zero >= 3) mb.host += mb.weights, mb.weights = 0;
  mb.total = mb.weights + mb.gradients + mb.optimizer + mb.activations + mb.gathered;
  return mb;
}
}  // namespace

// Memory of the most loaded GPU: every stage is priced (its layers, its embedding or output layer, the
// micro-batches it holds in flight) and the largest returned. With an even split that is the first
// stage (Korthikanti et al. 2022, Sec. 4.2.3), or the last when the logits outweigh the activations.
MemoryBreakdown memory_per_gpu(const Config& c) {
  const std::vector<int> layers = stage_layers(c.model, c.layout);
  MemoryBreakdown worst;
  int prev = -1;
  for (int i = 0; i < int(layers.size()); ++i) {
    // Middle stages with the same layer count as the one before hold less (fewer in flight): skip them.
    const bool end = i == 0 || i == int(layers.size()) - 1;
    if (!end && layers[size_t(i)] <= prev) continue;
    prev = layers[size_t(i)];
    const MemoryBreakdown mb = stage_memory(c, i, layers[size_t(i)]);
    if (mb.total > worst.total) worst = mb;
  }
  return worst;
}

}  // namespace mc::perf
