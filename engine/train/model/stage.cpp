// stage.cpp - forward and backward of one pipeline stage for one micro-batch, with its tensor-parallel
// group in lock step. Megatron-LM (Shoeybi et al. 2019, Sec. 3, Fig. 3): in each block the first linear
// layer is split by columns (attention: by heads; MLP: by hidden units) and the second by rows, so a block
// needs one all-reduce after attention and one after the MLP in the forward pass (operator g) and the
// mirror pair on the inputs' gradients in the backward pass (operator f): 4 per layer per micro-batch.
//
// Across processes (comm.h, Transport) every process runs these passes for the whole group, but computes
// only for its own worker: for the others it books their pipeline messages' envelopes and moves on.
//
// Sections: helpers (tp all-reduce, targets, residual add, activation buffers); stage_forward (embedding or
// receive, the blocks, the head and loss or send); stage_backward (the same in reverse, then the embedding's
// scatter-add or the send to the previous stage).
#include "train/kernels/gemm.h"
#include "train/kernels/ops.h"
#include "train/kernels/ops_backend.h"
#include "train/model/worker.h"

#include <algorithm>

namespace mc::train {

namespace {

// Makes `w`'s GPU current for the kernels that follow (several GPUs share the workers; ops_backend.h).
inline void bind(const OpsBackend& K, const Worker& w) {
  if (K.bind_worker) K.bind_worker(w.id);
}

// One all-reduce per tensor-parallel group: `g` holds one or more replicas, each a run of tp workers.
void tp_all_reduce(Comm& comm, std::vector<Worker*>& g, int tp, std::vector<std::vector<float>*> bufs, size_t n) {
  if (tp <= 1) return;
  for (size_t first = 0; first < g.size(); first += size_t(tp)) {
    std::vector<int> ids;
    std::vector<float*> ptrs;
    for (size_t i = first; i < first + size_t(tp); ++i) {
      ids.push_back(g[i]->id);
      ptrs.push_back(comm.local(g[i]->id) ? bufs[i]->data() : nullptr);  // another process's: not here
    }
    comm.all_reduce(ids, ptrs, n, Traffic::tp);
  }
}

int first_sequence(const Worker& w, int mb, const StepContext& c) {
  return w.d * c.local_batch + mb * c.micro_batch_size;
}

// Scratch that lives across micro-batches and steps (one set per thread that runs stages): the
// activations a stage keeps come from Worker::spare_acts, everything else from here, so a step
// allocates nothing once the first one has run.
struct Scratch {
  std::vector<std::vector<float>> a, b, send;  // per worker of the group: partial sums / gradients / stage output
  std::vector<float> dgelu, datty, dqkv, dlnf;
  std::vector<int32_t> targets;
};
Scratch& scratch(size_t tp) {
  thread_local Scratch s;
  if (s.a.size() < tp) s.a.resize(tp), s.b.resize(tp), s.send.resize(tp);
  return s;
}

void fill_targets(std::vector<int32_t>& targets, const Worker& w, int mb, const StepContext& c) {
  const int T = c.model->context, B = c.micro_batch_size;
  targets.resize(size_t(B) * T);
  const int s0 = first_sequence(w, mb, c);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      targets[size_t(b) * T + size_t(t)] = (*c.tokens)[size_t(s0 + b) * (T + 1) + size_t(t) + 1];
}

// out = x + (part + bias) row by row, on the pool (element-wise: the same bits however it is cut).
void residual(float* out, const float* x, const float* part, const float* bias, int N, int C) {
  const int pieces = std::clamp(int(int64_t(N) * C / 16384), 1, 64);
  parallel_for(pieces, [&](int p) {
    int64_t i0, i1;
    piece_range(N, pieces, p, 1, i0, i1);
    for (int64_t i = i0; i < i1; ++i)
      for (int k = 0; k < C; ++k) {
        const int64_t j = i * C + k;
        out[j] = x[j] + (part[j] + bias[k]);
      }
  });
}

MicroActs& take_acts(Worker& w, int mb) {
  auto it = w.acts.find(mb);
  if (it != w.acts.end()) return it->second;
  MicroActs fresh;
  if (!w.spare_acts.empty()) {
    fresh = std::move(w.spare_acts.back());
    w.spare_acts.pop_back();
  }
  return w.acts.emplace(mb, std::move(fresh)).first->second;
}

}  // namespace

void stage_forward(Comm& comm, std::vector<Worker*>& g, const std::vector<std::vector<int>>& ids, int mb,
                   const StepContext& c) {
  const ModelConfig& m = *c.model;
  const OpsBackend& K = c.ops ? *c.ops : cpu_backend();  // the CPU reference or the CUDA kernels (ops_backend.h)
  const Layout& lay = g[0]->lay;
  const int T = m.context, C = m.width, V = m.vocab, tp = lay.tp, R = int(g.size());
  const int B = c.micro_batch_size, N = B * T;
  const int Hl = m.heads / tp, hs = C / m.heads, Dl = Hl * hs, Fl = 4 * C / tp;
  UnitHooks* H = c.units;
  const size_t NC = size_t(N) * C;
  Scratch& S = scratch(size_t(R));
  std::vector<std::vector<float>*> tmp_ptrs;
  for (int r = 0; r < R; ++r) {
    if (comm.local(g[size_t(r)]->id)) S.a[size_t(r)].resize(NC);
    tmp_ptrs.push_back(&S.a[size_t(r)]);
  }
  // Where layer l's input (l = layers: the stage's output) lives for rank r.
  auto stream = [&](int r, int l) -> std::vector<float>& {
    MicroActs& A = g[size_t(r)]->acts.at(mb);
    if (l < lay.layers) return A.layers[size_t(l)].x_in;
    return lay.has_head ? A.x_out : S.send[size_t(r)];
  };

  // The embedding stays gathered until the head has used it too (tied weights): gathering it twice
  // would move |wte| more per pass than the paper's 3 Psi.
  if (H && lay.has_embed) H->begin(lay.embed_unit, false);
  for (int r = 0; r < R; ++r) {
    Worker& w = *g[size_t(r)];
    if (!comm.local(w.id)) {  // another process computes it; the envelope keeps the mailboxes in step
      if (!lay.has_embed) comm.recv(w.id, ids[size_t(lay.pp_rank - 1)][size_t(w.t)], mb);
      continue;
    }
    bind(K, w);
    MicroActs& A = take_acts(w, mb);
    A.layers.resize(size_t(lay.layers));
    std::vector<float>& x = stream(r, 0);
    if (lay.has_embed) {
      x.resize(NC);
      const float* wte = w.P(lay.wte);
      const float* wpe = w.P(lay.wpe);
      const int s0 = first_sequence(w, mb, c);
      parallel_for(B, [&](int b) {
        for (int t = 0; t < T; ++t) {
          const int tok = (*c.tokens)[size_t(s0 + b) * (T + 1) + size_t(t)];
          float* o = x.data() + (int64_t(b) * T + t) * C;
          for (int k = 0; k < C; ++k) o[k] = wte[int64_t(tok) * C + k] + wpe[int64_t(t) * C + k];
        }
      });
    } else {
      const std::vector<float> in = comm.recv(w.id, ids[size_t(lay.pp_rank - 1)][size_t(w.t)], mb);
      x.assign(in.begin(), in.end());
    }
  }

  for (int l = 0; l < lay.layers; ++l) {
    if (H) H->begin(lay.layer_unit(l), false);
    for (int r = 0; r < R; ++r) {
      Worker& w = *g[size_t(r)];
      if (!comm.local(w.id)) continue;
      bind(K, w);
      const LayerOffsets& o = lay.layer[size_t(l)];
      LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      a.ln1.resize(NC);
      a.ln1_mean.resize(size_t(N));
      a.ln1_rstd.resize(size_t(N));
      K.layernorm_forward(a.ln1.data(), a.ln1_mean.data(), a.ln1_rstd.data(), a.x_in.data(), w.P(o.ln1_w), w.P(o.ln1_b),
                          N, C);
      a.qkv.resize(size_t(N) * 3 * Dl);
      K.linear_forward(a.qkv.data(), a.ln1.data(), w.P(o.qkv_w), w.P(o.qkv_b), N, C, 3 * Dl);
      a.att.resize(size_t(B) * Hl * T * T);
      a.atty.resize(size_t(N) * Dl);
      K.attention_forward(a.atty.data(), a.att.data(), a.qkv.data(), B, T, Hl, hs);
      K.linear_forward(S.a[size_t(r)].data(), a.atty.data(), w.P(o.proj_w), nullptr, N, Dl, C);  // partial sum
    }
    tp_all_reduce(comm, g, tp, tmp_ptrs, NC);
    for (int r = 0; r < R; ++r) {
      Worker& w = *g[size_t(r)];
      if (!comm.local(w.id)) continue;
      bind(K, w);
      const LayerOffsets& o = lay.layer[size_t(l)];
      LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      a.x2.resize(NC);
      residual(a.x2.data(), a.x_in.data(), S.a[size_t(r)].data(), w.P(o.proj_b), N, C);
      a.ln2.resize(NC);
      a.ln2_mean.resize(size_t(N));
      a.ln2_rstd.resize(size_t(N));
      K.layernorm_forward(a.ln2.data(), a.ln2_mean.data(), a.ln2_rstd.data(), a.x2.data(), w.P(o.ln2_w), w.P(o.ln2_b), N,
                          C);
      a.fc.resize(size_t(N) * Fl);
      a.gelu.resize(size_t(N) * Fl);
      K.linear_forward(a.fc.data(), a.ln2.data(), w.P(o.fc_w), w.P(o.fc_b), N, C, Fl);
      K.gelu_forward(a.gelu.data(), a.fc.data(), int64_t(N) * Fl);
      K.linear_forward(S.a[size_t(r)].data(), a.gelu.data(), w.P(o.fcproj_w), nullptr, N, Fl, C);
    }
    tp_all_reduce(comm, g, tp, tmp_ptrs, NC);
    for (int r = 0; r < R; ++r) {
      Worker& w = *g[size_t(r)];
      if (!comm.local(w.id)) continue;
      bind(K, w);
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      std::vector<float>& next = stream(r, l + 1);
      next.resize(NC);
      residual(next.data(), a.x2.data(), S.a[size_t(r)].data(), w.P(o.fcproj_b), N, C);
    }
    if (H) H->end_params(lay.layer_unit(l));
  }

  if (H && lay.has_head) H->begin(lay.head_unit, false);

  for (int r = 0; r < R; ++r) {
    Worker& w = *g[size_t(r)];
    if (!comm.local(w.id)) {
      if (!lay.has_head) comm.send(w.id, ids[size_t(lay.pp_rank + 1)][size_t(w.t)], mb, nullptr, NC, Traffic::pp, c.tick);
      continue;
    }
    bind(K, w);
    MicroActs& A = w.acts.at(mb);
    if (lay.has_head) {
      A.lnf.resize(NC);
      A.lnf_mean.resize(size_t(N));
      A.lnf_rstd.resize(size_t(N));
      K.layernorm_forward(A.lnf.data(), A.lnf_mean.data(), A.lnf_rstd.data(), A.x_out.data(), w.P(lay.lnf_w),
                          w.P(lay.lnf_b), N, C);
      A.probs.resize(size_t(N) * V);
      K.sgemm(false, true, N, V, C, A.lnf.data(), C, w.P(lay.wte), C, A.probs.data(), V, false);  // logits = lnf wte^T
      fill_targets(S.targets, w, mb, c);
      const double loss = K.softmax_xent_forward(A.probs.data(), S.targets.data(), N, V);
      if (w.t == 0) w.loss_sum += loss;
    } else {
      const std::vector<float>& out = stream(r, lay.layers);
      comm.send(w.id, ids[size_t(lay.pp_rank + 1)][size_t(w.t)], mb, out.data(), out.size(), Traffic::pp, c.tick);
    }
    w.act_bytes += A.bytes();
    w.act_peak_bytes = std::max(w.act_peak_bytes, w.act_bytes);
  }
  if (H && lay.has_head) H->end_params(lay.head_unit);
  if (H && lay.has_embed) H->end_params(lay.embed_unit);
}

void stage_backward(Comm& comm, std::vector<Worker*>& g, const std::vector<std::vector<int>>& ids, int mb,
                    const StepContext& c) {
  const ModelConfig& m = *c.model;
  const OpsBackend& K = c.ops ? *c.ops : cpu_backend();  // the CPU reference or the CUDA kernels (ops_backend.h)
  const Layout& lay = g[0]->lay;
  const int T = m.context, C = m.width, V = m.vocab, tp = lay.tp, R = int(g.size());
  const int B = c.micro_batch_size, N = B * T;
  const int Hl = m.heads / tp, hs = C / m.heads, Dl = Hl * hs, Fl = 4 * C / tp;
  UnitHooks* H = c.units;
  const size_t NC = size_t(N) * C;
  Scratch& S = scratch(size_t(R));
  std::vector<std::vector<float>>& dx = S.b;     // d(residual stream) per rank
  std::vector<std::vector<float>>& dpart = S.a;  // partial input gradients per rank (all-reduced)
  std::vector<std::vector<float>*> dpart_ptrs;
  for (int r = 0; r < R; ++r) dpart_ptrs.push_back(&dpart[size_t(r)]);  // tp_all_reduce skips others' ranks
  S.dgelu.resize(size_t(N) * Fl);
  S.datty.resize(size_t(N) * Dl);
  S.dqkv.resize(size_t(N) * 3 * Dl);
  float* dgelu = S.dgelu.data();

  // The head needs the tied embedding's parameters and adds into its gradient, which then waits for
  // the embedding's own backward at the end before its reduce-scatter.
  if (H && lay.has_head) H->begin(lay.head_unit, true);
  if (H && lay.has_embed) H->begin(lay.embed_unit, true);
  for (int r = 0; r < R; ++r) {
    Worker& w = *g[size_t(r)];
    if (!comm.local(w.id)) {
      if (!lay.has_head) comm.recv(w.id, ids[size_t(lay.pp_rank + 1)][size_t(w.t)], mb);
      continue;
    }
    bind(K, w);
    MicroActs& A = w.acts.at(mb);
    if (lay.has_head) {
      fill_targets(S.targets, w, mb, c);
      // The loss is the mean over the global batch's tokens, whatever the layout.
      K.softmax_xent_backward(A.probs.data(), S.targets.data(), N, V, 1.0f / float(c.global_batch * T));
      K.sgemm(true, false, V, C, N, A.probs.data(), V, A.lnf.data(), C, w.G(lay.wte), C, true);  // dwte += dlogits^T lnf
      S.dlnf.resize(NC);
      K.sgemm(false, false, N, C, V, A.probs.data(), V, w.P(lay.wte), C, S.dlnf.data(), C, false);
      dx[size_t(r)].assign(NC, 0.0f);
      K.layernorm_backward(dx[size_t(r)].data(), w.G(lay.lnf_w), w.G(lay.lnf_b), S.dlnf.data(), A.x_out.data(),
                           w.P(lay.lnf_w), A.lnf_mean.data(), A.lnf_rstd.data(), N, C);
    } else {
      const std::vector<float> in = comm.recv(w.id, ids[size_t(lay.pp_rank + 1)][size_t(w.t)], mb);
      dx[size_t(r)].assign(in.begin(), in.end());
    }
  }
  if (H && lay.has_head) {
    H->end_params(lay.head_unit);
    H->end_grads(lay.head_unit);
  }
  if (H && lay.has_embed) H->end_params(lay.embed_unit);

  for (int l = lay.layers - 1; l >= 0; --l) {
    if (H) H->begin(lay.layer_unit(l), true);
    for (int r = 0; r < R; ++r) {
      Worker& w = *g[size_t(r)];
      if (!comm.local(w.id)) continue;
      bind(K, w);
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      K.linear_backward(dgelu, w.G(o.fcproj_w), w.G(o.fcproj_b), dx[size_t(r)].data(), a.gelu.data(), w.P(o.fcproj_w), N,
                        Fl, C, false);
      K.gelu_backward(dgelu, a.fc.data(), dgelu, int64_t(N) * Fl);
      dpart[size_t(r)].resize(NC);
      K.linear_backward(dpart[size_t(r)].data(), w.G(o.fc_w), w.G(o.fc_b), dgelu, a.ln2.data(), w.P(o.fc_w), N, C, Fl,
                        false);
    }
    tp_all_reduce(comm, g, tp, dpart_ptrs, NC);
    for (int r = 0; r < R; ++r) {
      Worker& w = *g[size_t(r)];
      if (!comm.local(w.id)) continue;
      bind(K, w);
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      K.layernorm_backward(dx[size_t(r)].data(), w.G(o.ln2_w), w.G(o.ln2_b), dpart[size_t(r)].data(), a.x2.data(),
                           w.P(o.ln2_w), a.ln2_mean.data(), a.ln2_rstd.data(), N, C);  // dx now d(x2)
      K.linear_backward(S.datty.data(), w.G(o.proj_w), w.G(o.proj_b), dx[size_t(r)].data(), a.atty.data(), w.P(o.proj_w),
                        N, Dl, C, false);
      K.attention_backward(S.dqkv.data(), S.datty.data(), a.qkv.data(), a.att.data(), nullptr, B, T, Hl, hs);
      K.linear_backward(dpart[size_t(r)].data(), w.G(o.qkv_w), w.G(o.qkv_b), S.dqkv.data(), a.ln1.data(), w.P(o.qkv_w), N,
                        C, 3 * Dl, false);
    }
    tp_all_reduce(comm, g, tp, dpart_ptrs, NC);
    for (int r = 0; r < R; ++r) {
      Worker& w = *g[size_t(r)];
      if (!comm.local(w.id)) continue;
      bind(K, w);
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      K.layernorm_backward(dx[size_t(r)].data(), w.G(o.ln1_w), w.G(o.ln1_b), dpart[size_t(r)].data(), a.x_in.data(),
                           w.P(o.ln1_w), a.ln1_mean.data(), a.ln1_rstd.data(), N, C);  // dx now d(x_in)
    }
    if (H) {
      H->end_params(lay.layer_unit(l));
      H->end_grads(lay.layer_unit(l));
    }
  }

  for (int r = 0; r < R; ++r) {
    Worker& w = *g[size_t(r)];
    if (!comm.local(w.id)) {
      if (!lay.has_embed) comm.send(w.id, ids[size_t(lay.pp_rank - 1)][size_t(w.t)], mb, nullptr, NC, Traffic::pp, c.tick);
      continue;
    }
    bind(K, w);
    if (lay.has_embed) {
      // Scatter-add by columns: every element still sums its rows in order (tokens repeat within a batch).
      float* gwte = w.G(lay.wte);
      float* gwpe = w.G(lay.wpe);
      const int s0 = first_sequence(w, mb, c);
      const float* d0 = dx[size_t(r)].data();
      const int pieces = std::clamp(C / 64, 1, 8);
      parallel_for(pieces, [&](int p) {
        int64_t k0, k1;
        piece_range(C, pieces, p, 16, k0, k1);
        for (int b = 0; b < B; ++b)
          for (int t = 0; t < T; ++t) {
            const int tok = (*c.tokens)[size_t(s0 + b) * (T + 1) + size_t(t)];
            const float* d = d0 + (int64_t(b) * T + t) * C;
            for (int64_t k = k0; k < k1; ++k) {
              gwte[int64_t(tok) * C + k] += d[k];
              gwpe[int64_t(t) * C + k] += d[k];
            }
          }
      });
    } else {
      comm.send(w.id, ids[size_t(lay.pp_rank - 1)][size_t(w.t)], mb, dx[size_t(r)].data(), NC, Traffic::pp, c.tick);
    }
    auto it = w.acts.find(mb);
    w.act_bytes -= it->second.bytes();
    w.spare_acts.push_back(std::move(it->second));  // its buffers serve a later micro-batch
    w.acts.erase(it);
  }
  if (H && lay.has_embed) H->end_grads(lay.embed_unit);
}

}  // namespace mc::train
