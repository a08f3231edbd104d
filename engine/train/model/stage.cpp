// stage.cpp - forward and backward of one pipeline stage for one micro-batch, with its tensor-parallel
// group in lock step. Megatron-LM (Shoeybi et al. 2019, Sec. 3, Fig. 3): in each block the first linear
// layer is split by columns (attention: by heads; MLP: by hidden units) and the second by rows, so a block
// needs one all-reduce after attention and one after the MLP in the forward pass (operator g) and the
// mirror pair on the inputs' gradients in the backward pass (operator f): 4 per layer per micro-batch.
//
// Across processes (comm.h, Transport) every process runs these passes for the whole group, but computes
// only for its own worker: for the others it books their pipeline messages' envelopes and moves on.
//
// Every tensor is device memory (device/compute.h); the kernels, the embedding, the residual adds and the
// loss all run on the worker's device, so nothing crosses to the host here.
//
// Sections: helpers (tp all-reduce, targets, residual add, activation buffers); stage_forward (embedding or
// receive, the blocks, the head and loss or send); stage_backward (the same in reverse, then the embedding's
// scatter-add or the send to the previous stage).
#include "train/model/worker.h"

#include <algorithm>
#include <stdexcept>

namespace mc::train {

namespace {

// One all-reduce per tensor-parallel group: `g` holds one or more replicas, each a run of tp workers.
void tp_all_reduce(Comm& comm, std::vector<Worker*>& g, int tp, DPtr<float> Worker::*buf, size_t n) {
  if (tp <= 1) return;
  for (size_t first = 0; first < g.size(); first += size_t(tp)) {
    std::vector<int> ids;
    Comm::Bufs ptrs;
    for (size_t i = first; i < first + size_t(tp); ++i) {
      ids.push_back(g[i]->id);
      ptrs.push_back(comm.local(g[i]->id) ? g[i]->*buf : DPtr<float>());  // another process's: not here
    }
    comm.all_reduce(ids, ptrs, n, Traffic::tp);
  }
}

// This micro-batch's rows of the worker's token ids (Worker::tokens holds its dp rank's sequences).
DPtr<const int32_t> micro_tokens(const Worker& w, int mb, const StepContext& c) {
  return w.tokens.ptr() + int64_t(mb) * c.micro_batch_size * (c.model->context + 1);
}

// The worker's scratch, allocated once at the micro-batch's shapes (Worker::scratch).
void ensure_scratch(Worker& w, const StepContext& c) {
  const ModelConfig& m = *c.model;
  const int64_t N = int64_t(c.micro_batch_size) * m.context, C = m.width;
  const int tp = w.lay.tp;
  const int64_t Dl = C / tp, Fl = 4 * C / tp;
  const int64_t need = 4 * N * C + N * Fl + N * Dl + N * 3 * Dl;
  if (w.scratch.size() == need && w.targets.size() == N) return;
  w.scratch = Buffer<float>(*w.dev, need);
  w.targets = Buffer<int32_t>(*w.dev, N);
  int64_t at = 0;
  auto carve = [&](int64_t n) {
    const DPtr<float> p = w.scratch.ptr() + at;
    at += n;
    return p;
  };
  w.s_a = carve(N * C);
  w.s_b = carve(N * C);
  w.s_send = carve(N * C);
  w.s_dlnf = carve(N * C);
  w.s_dgelu = carve(N * Fl);
  w.s_datty = carve(N * Dl);
  w.s_dqkv = carve(N * 3 * Dl);
  if (at != need) throw std::logic_error("stage scratch: the allocation and its tensors disagree");
}

// A micro-batch's activations: a spare set from an earlier micro-batch, or one new allocation carved into
// the tensors this stage keeps (the head's only on the last stage).
MicroActs& take_acts(Worker& w, int mb, const StepContext& c) {
  auto it = w.acts.find(mb);
  if (it != w.acts.end()) return it->second;
  MicroActs fresh;
  if (!w.spare_acts.empty()) {
    fresh = std::move(w.spare_acts.back());
    w.spare_acts.pop_back();
    return w.acts.emplace(mb, std::move(fresh)).first->second;
  }
  const ModelConfig& m = *c.model;
  const Layout& lay = w.lay;
  const int B = c.micro_batch_size, T = m.context;
  const int64_t N = int64_t(B) * T, C = m.width, V = m.vocab;
  const int Hl = m.heads / lay.tp;
  const int64_t Dl = int64_t(Hl) * (C / m.heads), Fl = 4 * C / lay.tp;
  const int64_t att = w.dev->attention_state_floats(B, T, Hl, int(C / m.heads));
  const int64_t per_layer = 4 * N * C + 4 * N + N * 3 * Dl + att + N * Dl + 2 * N * Fl;
  const int64_t head = lay.has_head ? 2 * N * C + 2 * N + N * V : 0;
  fresh.arena = Buffer<float>(*w.dev, per_layer * lay.layers + head);
  int64_t at = 0;
  auto carve = [&](int64_t n) {
    const DPtr<float> p = fresh.arena.ptr() + at;
    at += n;
    return p;
  };
  fresh.layers.resize(size_t(lay.layers));
  for (LayerActs& a : fresh.layers) {
    a.x_in = carve(N * C);
    a.ln1 = carve(N * C);
    a.ln1_mean = carve(N);
    a.ln1_rstd = carve(N);
    a.qkv = carve(N * 3 * Dl);
    a.att = carve(att);
    a.atty = carve(N * Dl);
    a.x2 = carve(N * C);
    a.ln2 = carve(N * C);
    a.ln2_mean = carve(N);
    a.ln2_rstd = carve(N);
    a.fc = carve(N * Fl);
    a.gelu = carve(N * Fl);
  }
  if (lay.has_head) {
    fresh.x_out = carve(N * C);
    fresh.lnf = carve(N * C);
    fresh.lnf_mean = carve(N);
    fresh.lnf_rstd = carve(N);
    fresh.probs = carve(N * V);
  }
  if (at != fresh.arena.size()) throw std::logic_error("stage activations: the arena and its tensors disagree");
  return w.acts.emplace(mb, std::move(fresh)).first->second;
}

}  // namespace

void stage_forward(Comm& comm, std::vector<Worker*>& g, const std::vector<std::vector<int>>& ids, int mb,
                   const StepContext& c) {
  const ModelConfig& m = *c.model;
  const Layout& lay = g[0]->lay;
  const int T = m.context, C = m.width, V = m.vocab, tp = lay.tp, R = int(g.size());
  const int B = c.micro_batch_size, N = B * T;
  const int Hl = m.heads / tp, hs = C / m.heads, Dl = Hl * hs, Fl = 4 * C / tp;
  UnitHooks* H = c.units;
  const size_t NC = size_t(N) * C;
  for (int r = 0; r < R; ++r)
    if (comm.local(g[size_t(r)]->id)) ensure_scratch(*g[size_t(r)], c);
  // Where layer l's input (l = layers: the stage's output) lives for rank r.
  auto stream = [&](int r, int l) -> DPtr<float> {
    Worker& w = *g[size_t(r)];
    MicroActs& A = w.acts.at(mb);
    if (l < lay.layers) return A.layers[size_t(l)].x_in;
    return lay.has_head ? A.x_out : w.s_send;
  };

  // The embedding stays gathered until the head has used it too (tied weights): gathering it twice
  // would move |wte| more per pass than the paper's 3 Psi.
  if (H && lay.has_embed) H->begin(lay.embed_unit, false);
  for (int r = 0; r < R; ++r) {
    Worker& w = *g[size_t(r)];
    if (!comm.local(w.id)) {  // another process computes it; the envelope keeps the mailboxes in step
      if (!lay.has_embed) comm.recv(w.id, ids[size_t(lay.pp_rank - 1)][size_t(w.t)], mb, DPtr<float>(), NC);
      continue;
    }
    device::Device& K = *w.dev;
    K.bind_worker(w.id);
    take_acts(w, mb, c);
    const DPtr<float> x = stream(r, 0);
    if (lay.has_embed)
      K.embedding_forward(x, w.P(lay.wte), w.P(lay.wpe), micro_tokens(w, mb, c), B, T, C);
    else
      comm.recv(w.id, ids[size_t(lay.pp_rank - 1)][size_t(w.t)], mb, x, NC);
  }

  for (int l = 0; l < lay.layers; ++l) {
    if (H) H->begin(lay.layer_unit(l), false);
    for (int r = 0; r < R; ++r) {
      Worker& w = *g[size_t(r)];
      if (!comm.local(w.id)) continue;
      device::Device& K = *w.dev;
      K.bind_worker(w.id);
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      K.layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, a.x_in, w.P(o.ln1_w), w.P(o.ln1_b), N, C);
      K.linear_forward(a.qkv, a.ln1, w.P(o.qkv_w), w.P(o.qkv_b), N, C, 3 * Dl);
      K.attention_forward(a.atty, a.att, a.qkv, B, T, Hl, hs);
      K.linear_forward(w.s_a, a.atty, w.P(o.proj_w), nullptr, N, Dl, C);  // partial sum
    }
    tp_all_reduce(comm, g, tp, &Worker::s_a, NC);
    for (int r = 0; r < R; ++r) {
      Worker& w = *g[size_t(r)];
      if (!comm.local(w.id)) continue;
      device::Device& K = *w.dev;
      K.bind_worker(w.id);
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      K.residual(a.x2, a.x_in, w.s_a, w.P(o.proj_b), N, C);
      K.layernorm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.x2, w.P(o.ln2_w), w.P(o.ln2_b), N, C);
      K.linear_forward(a.fc, a.ln2, w.P(o.fc_w), w.P(o.fc_b), N, C, Fl);
      K.gelu_forward(a.gelu, a.fc, int64_t(N) * Fl);
      K.linear_forward(w.s_a, a.gelu, w.P(o.fcproj_w), nullptr, N, Fl, C);
    }
    tp_all_reduce(comm, g, tp, &Worker::s_a, NC);
    for (int r = 0; r < R; ++r) {
      Worker& w = *g[size_t(r)];
      if (!comm.local(w.id)) continue;
      device::Device& K = *w.dev;
      K.bind_worker(w.id);
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      K.residual(stream(r, l + 1), a.x2, w.s_a, w.P(o.fcproj_b), N, C);
    }
    if (H) H->end_params(lay.layer_unit(l));
  }

  if (H && lay.has_head) H->begin(lay.head_unit, false);

  for (int r = 0; r < R; ++r) {
    Worker& w = *g[size_t(r)];
    if (!comm.local(w.id)) {
      if (!lay.has_head)
        comm.send(w.id, ids[size_t(lay.pp_rank + 1)][size_t(w.t)], mb, DPtr<const float>(), NC, Traffic::pp, c.tick);
      continue;
    }
    device::Device& K = *w.dev;
    K.bind_worker(w.id);
    MicroActs& A = w.acts.at(mb);
    if (lay.has_head) {
      K.layernorm_forward(A.lnf, A.lnf_mean, A.lnf_rstd, A.x_out, w.P(lay.lnf_w), w.P(lay.lnf_b), N, C);
      K.sgemm(false, true, N, V, C, A.lnf, C, w.P(lay.wte), C, A.probs, V, false);  // logits = lnf wte^T
      K.targets_from_tokens(w.targets.ptr(), micro_tokens(w, mb, c), B, T);
      // The loss counts once per tensor-parallel group (every tp rank computes the same full-vocabulary head).
      K.softmax_xent_forward(A.probs, w.targets.ptr(), w.t == 0 ? w.scalars.ptr() : DPtr<double>(), N, V);
    } else {
      comm.send(w.id, ids[size_t(lay.pp_rank + 1)][size_t(w.t)], mb, stream(r, lay.layers), NC, Traffic::pp, c.tick);
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
  const Layout& lay = g[0]->lay;
  const int T = m.context, C = m.width, V = m.vocab, tp = lay.tp, R = int(g.size());
  const int B = c.micro_batch_size, N = B * T;
  const int Hl = m.heads / tp, hs = C / m.heads, Dl = Hl * hs, Fl = 4 * C / tp;
  UnitHooks* H = c.units;
  const size_t NC = size_t(N) * C;
  // s_b: d(residual stream) per rank; s_a: partial input gradients per rank (all-reduced).
  for (int r = 0; r < R; ++r)
    if (comm.local(g[size_t(r)]->id)) ensure_scratch(*g[size_t(r)], c);

  // The head needs the tied embedding's parameters and adds into its gradient, which then waits for
  // the embedding's own backward at the end before its reduce-scatter.
  if (H && lay.has_head) H->begin(lay.head_unit, true);
  if (H && lay.has_embed) H->begin(lay.embed_unit, true);
  for (int r = 0; r < R; ++r) {
    Worker& w = *g[size_t(r)];
    if (!comm.local(w.id)) {
      if (!lay.has_head) comm.recv(w.id, ids[size_t(lay.pp_rank + 1)][size_t(w.t)], mb, DPtr<float>(), NC);
      continue;
    }
    device::Device& K = *w.dev;
    K.bind_worker(w.id);
    MicroActs& A = w.acts.at(mb);
    if (lay.has_head) {
      K.targets_from_tokens(w.targets.ptr(), micro_tokens(w, mb, c), B, T);
      // The loss is the mean over the global batch's tokens, whatever the layout.
      K.softmax_xent_backward(A.probs, w.targets.ptr(), N, V, 1.0f / float(c.global_batch * T));
      K.sgemm(true, false, V, C, N, A.probs, V, A.lnf, C, w.G(lay.wte), C, true);  // dwte += dlogits^T lnf
      K.sgemm(false, false, N, C, V, A.probs, V, w.P(lay.wte), C, w.s_dlnf, C, false);
      K.zero(w.s_b, int64_t(NC));
      K.layernorm_backward(w.s_b, w.G(lay.lnf_w), w.G(lay.lnf_b), w.s_dlnf, A.x_out, w.P(lay.lnf_w), A.lnf_mean,
                           A.lnf_rstd, N, C);
    } else {
      comm.recv(w.id, ids[size_t(lay.pp_rank + 1)][size_t(w.t)], mb, w.s_b, NC);
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
      device::Device& K = *w.dev;
      K.bind_worker(w.id);
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      K.linear_backward(w.s_dgelu, w.G(o.fcproj_w), w.G(o.fcproj_b), w.s_b, a.gelu, w.P(o.fcproj_w), N, Fl, C, false);
      K.gelu_backward(w.s_dgelu, a.fc, w.s_dgelu, int64_t(N) * Fl);
      K.linear_backward(w.s_a, w.G(o.fc_w), w.G(o.fc_b), w.s_dgelu, a.ln2, w.P(o.fc_w), N, C, Fl, false);
    }
    tp_all_reduce(comm, g, tp, &Worker::s_a, NC);
    for (int r = 0; r < R; ++r) {
      Worker& w = *g[size_t(r)];
      if (!comm.local(w.id)) continue;
      device::Device& K = *w.dev;
      K.bind_worker(w.id);
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      K.layernorm_backward(w.s_b, w.G(o.ln2_w), w.G(o.ln2_b), w.s_a, a.x2, w.P(o.ln2_w), a.ln2_mean, a.ln2_rstd, N,
                           C);  // s_b now d(x2)
      K.linear_backward(w.s_datty, w.G(o.proj_w), w.G(o.proj_b), w.s_b, a.atty, w.P(o.proj_w), N, Dl, C, false);
      K.attention_backward(w.s_dqkv, w.s_datty, a.qkv, a.atty, a.att, B, T, Hl, hs);
      K.linear_backward(w.s_a, w.G(o.qkv_w), w.G(o.qkv_b), w.s_dqkv, a.ln1, w.P(o.qkv_w), N, C, 3 * Dl, false);
    }
    tp_all_reduce(comm, g, tp, &Worker::s_a, NC);
    for (int r = 0; r < R; ++r) {
      Worker& w = *g[size_t(r)];
      if (!comm.local(w.id)) continue;
      device::Device& K = *w.dev;
      K.bind_worker(w.id);
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      K.layernorm_backward(w.s_b, w.G(o.ln1_w), w.G(o.ln1_b), w.s_a, a.x_in, w.P(o.ln1_w), a.ln1_mean, a.ln1_rstd, N,
                           C);  // s_b now d(x_in)
    }
    if (H) {
      H->end_params(lay.layer_unit(l));
      H->end_grads(lay.layer_unit(l));
    }
  }

  for (int r = 0; r < R; ++r) {
    Worker& w = *g[size_t(r)];
    if (!comm.local(w.id)) {
      if (!lay.has_embed)
        comm.send(w.id, ids[size_t(lay.pp_rank - 1)][size_t(w.t)], mb, DPtr<const float>(), NC, Traffic::pp, c.tick);
      continue;
    }
    device::Device& K = *w.dev;
    K.bind_worker(w.id);
    if (lay.has_embed)
      K.embedding_backward(w.G(lay.wte), w.G(lay.wpe), w.s_b, micro_tokens(w, mb, c), B, T, C, V);
    else
      comm.send(w.id, ids[size_t(lay.pp_rank - 1)][size_t(w.t)], mb, w.s_b, NC, Traffic::pp, c.tick);
    auto it = w.acts.find(mb);
    w.act_bytes -= it->second.bytes();
    w.spare_acts.push_back(std::move(it->second));  // its buffers serve a later micro-batch
    w.acts.erase(it);
  }
  if (H && lay.has_embed) H->end_grads(lay.embed_unit);
}

}  // namespace mc::train
