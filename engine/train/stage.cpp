// stage.cpp - forward and backward of one pipeline stage for one micro-batch, with its tensor-parallel
// group in lock step. Megatron-LM (Shoeybi et al. 2019, Sec. 3, Fig. 3): in each block the first linear
// layer is split by columns (attention: by heads; MLP: by hidden units) and the second by rows, so a block
// needs one all-reduce after attention and one after the MLP in the forward pass (operator g) and the
// mirror pair on the inputs' gradients in the backward pass (operator f): 4 per layer per micro-batch.
#include "train/ops.h"
#include "train/gemm.h"
#include "train/worker.h"

#include <algorithm>

namespace mc::train {

namespace {

void tp_all_reduce(Comm& comm, std::vector<Worker*>& g, std::vector<std::vector<float>*> bufs, size_t n) {
  if (g.size() <= 1) return;
  std::vector<int> ids;
  std::vector<float*> ptrs;
  for (size_t i = 0; i < g.size(); ++i) {
    ids.push_back(g[i]->id);
    ptrs.push_back(bufs[i]->data());
  }
  comm.all_reduce(ids, ptrs, n, Traffic::tp);
}

int first_sequence(const Worker& w, int mb, const StepContext& c) { return w.d * c.local_batch + mb * c.micro_batch_size; }

}  // namespace

void stage_forward(Comm& comm, std::vector<Worker*>& g, const std::vector<std::vector<int>>& ids, int mb,
                   const StepContext& c) {
  const ModelConfig& m = *c.model;
  const int T = m.context, C = m.width, V = m.vocab, tp = int(g.size());
  const int B = c.micro_batch_size, N = B * T;
  const int Hl = m.heads / tp, hs = C / m.heads, Dl = Hl * hs, Fl = 4 * C / tp;
  const Layout& lay = g[0]->lay;
  const size_t ntp = static_cast<size_t>(tp);
  std::vector<std::vector<float>> x(ntp), tmp(ntp, std::vector<float>(static_cast<size_t>(N) * C));
  std::vector<std::vector<float>*> tmp_ptrs;
  for (auto& t : tmp) tmp_ptrs.push_back(&t);

  for (int r = 0; r < tp; ++r) {
    Worker& w = *g[size_t(r)];
    MicroActs& A = w.acts[mb];
    A.layers.resize(size_t(lay.layers));
    if (lay.has_embed) {
      x[size_t(r)].assign(size_t(N) * C, 0.0f);
      const float* wte = w.params.data() + lay.wte;
      const float* wpe = w.params.data() + lay.wpe;
      const int s0 = first_sequence(w, mb, c);
      for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t) {
          const int tok = (*c.tokens)[size_t(s0 + b) * (T + 1) + size_t(t)];
          float* o = x[size_t(r)].data() + (int64_t(b) * T + t) * C;
          for (int k = 0; k < C; ++k) o[k] = wte[int64_t(tok) * C + k] + wpe[int64_t(t) * C + k];
        }
    } else {
      x[size_t(r)] = comm.recv(w.id, ids[size_t(lay.pp_rank - 1)][size_t(r)], mb);
    }
  }

  for (int l = 0; l < lay.layers; ++l) {
    for (int r = 0; r < tp; ++r) {
      Worker& w = *g[size_t(r)];
      const float* P = w.params.data();
      const LayerOffsets& o = lay.layer[size_t(l)];
      LayerActs& a = w.acts[mb].layers[size_t(l)];
      a.x_in = std::move(x[size_t(r)]);
      a.ln1.resize(size_t(N) * C);
      a.ln1_mean.resize(size_t(N));
      a.ln1_rstd.resize(size_t(N));
      ops::layernorm_forward(a.ln1.data(), a.ln1_mean.data(), a.ln1_rstd.data(), a.x_in.data(), P + o.ln1_w,
                             P + o.ln1_b, N, C);
      a.qkv.resize(size_t(N) * 3 * Dl);
      ops::linear_forward(a.qkv.data(), a.ln1.data(), P + o.qkv_w, P + o.qkv_b, N, C, 3 * Dl);
      a.att.resize(size_t(B) * Hl * T * T);
      a.atty.resize(size_t(N) * Dl);
      ops::attention_forward(a.atty.data(), a.att.data(), a.qkv.data(), B, T, Hl, hs);
      ops::linear_forward(tmp[size_t(r)].data(), a.atty.data(), P + o.proj_w, nullptr, N, Dl, C);  // partial sum
    }
    tp_all_reduce(comm, g, tmp_ptrs, size_t(N) * C);
    for (int r = 0; r < tp; ++r) {
      Worker& w = *g[size_t(r)];
      const float* P = w.params.data();
      const LayerOffsets& o = lay.layer[size_t(l)];
      LayerActs& a = w.acts[mb].layers[size_t(l)];
      a.x2.resize(size_t(N) * C);
      for (int i = 0; i < N; ++i)
        for (int k = 0; k < C; ++k) {
          const size_t j = size_t(i) * C + size_t(k);
          a.x2[j] = a.x_in[j] + (tmp[size_t(r)][j] + P[o.proj_b + k]);
        }
      a.ln2.resize(size_t(N) * C);
      a.ln2_mean.resize(size_t(N));
      a.ln2_rstd.resize(size_t(N));
      ops::layernorm_forward(a.ln2.data(), a.ln2_mean.data(), a.ln2_rstd.data(), a.x2.data(), P + o.ln2_w,
                             P + o.ln2_b, N, C);
      a.fc.resize(size_t(N) * Fl);
      a.gelu.resize(size_t(N) * Fl);
      ops::linear_forward(a.fc.data(), a.ln2.data(), P + o.fc_w, P + o.fc_b, N, C, Fl);
      ops::gelu_forward(a.gelu.data(), a.fc.data(), int64_t(N) * Fl);
      ops::linear_forward(tmp[size_t(r)].data(), a.gelu.data(), P + o.fcproj_w, nullptr, N, Fl, C);
    }
    tp_all_reduce(comm, g, tmp_ptrs, size_t(N) * C);
    for (int r = 0; r < tp; ++r) {
      Worker& w = *g[size_t(r)];
      const float* P = w.params.data();
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts[mb].layers[size_t(l)];
      x[size_t(r)].resize(size_t(N) * C);
      for (int i = 0; i < N; ++i)
        for (int k = 0; k < C; ++k) {
          const size_t j = size_t(i) * C + size_t(k);
          x[size_t(r)][j] = a.x2[j] + (tmp[size_t(r)][j] + P[o.fcproj_b + k]);
        }
    }
  }

  for (int r = 0; r < tp; ++r) {
    Worker& w = *g[size_t(r)];
    MicroActs& A = w.acts[mb];
    if (lay.has_head) {
      const float* P = w.params.data();
      A.x_out = std::move(x[size_t(r)]);
      A.lnf.resize(size_t(N) * C);
      A.lnf_mean.resize(size_t(N));
      A.lnf_rstd.resize(size_t(N));
      ops::layernorm_forward(A.lnf.data(), A.lnf_mean.data(), A.lnf_rstd.data(), A.x_out.data(), P + lay.lnf_w,
                             P + lay.lnf_b, N, C);
      A.probs.resize(size_t(N) * V);
      sgemm(false, true, N, V, C, A.lnf.data(), C, P + lay.wte, C, A.probs.data(), V, false);  // logits = lnf wte^T
      std::vector<int32_t> targets(static_cast<size_t>(N));
      const int s0 = first_sequence(w, mb, c);
      for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t) targets[size_t(b) * T + size_t(t)] = (*c.tokens)[size_t(s0 + b) * (T + 1) + size_t(t) + 1];
      const double loss = ops::softmax_xent_forward(A.probs.data(), targets.data(), N, V);
      if (r == 0) w.loss_sum += loss;
    } else {
      comm.send(w.id, ids[size_t(lay.pp_rank + 1)][size_t(r)], mb, x[size_t(r)].data(), x[size_t(r)].size(),
                Traffic::pp, c.tick);
    }
    w.act_bytes += A.bytes();
    w.act_peak_bytes = std::max(w.act_peak_bytes, w.act_bytes);
  }
}

void stage_backward(Comm& comm, std::vector<Worker*>& g, const std::vector<std::vector<int>>& ids, int mb,
                    const StepContext& c) {
  const ModelConfig& m = *c.model;
  const int T = m.context, C = m.width, V = m.vocab, tp = int(g.size());
  const int B = c.micro_batch_size, N = B * T;
  const int Hl = m.heads / tp, hs = C / m.heads, Dl = Hl * hs, Fl = 4 * C / tp;
  const Layout& lay = g[0]->lay;
  const size_t ntp = static_cast<size_t>(tp);
  std::vector<std::vector<float>> dx(ntp), dpart(ntp);
  std::vector<std::vector<float>*> dpart_ptrs;
  for (auto& t : dpart) dpart_ptrs.push_back(&t);
  std::vector<float> dgelu(size_t(N) * Fl), datty(size_t(N) * Dl), dqkv(size_t(N) * 3 * Dl), scratch(size_t(T) * T);

  for (int r = 0; r < tp; ++r) {
    Worker& w = *g[size_t(r)];
    MicroActs& A = w.acts.at(mb);
    if (lay.has_head) {
      const float* P = w.params.data();
      float* G = w.grads.data();
      std::vector<int32_t> targets(static_cast<size_t>(N));
      const int s0 = first_sequence(w, mb, c);
      for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t) targets[size_t(b) * T + size_t(t)] = (*c.tokens)[size_t(s0 + b) * (T + 1) + size_t(t) + 1];
      // The loss is the mean over the global batch's tokens, whatever the layout.
      ops::softmax_xent_backward(A.probs.data(), targets.data(), N, V, 1.0f / float(c.global_batch * T));
      sgemm(true, false, V, C, N, A.probs.data(), V, A.lnf.data(), C, G + lay.wte, C, true);  // dwte += dlogits^T lnf
      std::vector<float> dlnf(size_t(N) * C);
      sgemm(false, false, N, C, V, A.probs.data(), V, P + lay.wte, C, dlnf.data(), C, false);
      dx[size_t(r)].assign(size_t(N) * C, 0.0f);
      ops::layernorm_backward(dx[size_t(r)].data(), G + lay.lnf_w, G + lay.lnf_b, dlnf.data(), A.x_out.data(),
                              P + lay.lnf_w, A.lnf_mean.data(), A.lnf_rstd.data(), N, C);
    } else {
      dx[size_t(r)] = comm.recv(w.id, ids[size_t(lay.pp_rank + 1)][size_t(r)], mb);
    }
  }

  for (int l = lay.layers - 1; l >= 0; --l) {
    for (int r = 0; r < tp; ++r) {
      Worker& w = *g[size_t(r)];
      const float* P = w.params.data();
      float* G = w.grads.data();
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      ops::linear_backward(dgelu.data(), G + o.fcproj_w, G + o.fcproj_b, dx[size_t(r)].data(), a.gelu.data(),
                           P + o.fcproj_w, N, Fl, C, false);
      ops::gelu_backward(dgelu.data(), a.fc.data(), dgelu.data(), int64_t(N) * Fl);
      dpart[size_t(r)].resize(size_t(N) * C);
      ops::linear_backward(dpart[size_t(r)].data(), G + o.fc_w, G + o.fc_b, dgelu.data(), a.ln2.data(), P + o.fc_w, N,
                           C, Fl, false);
    }
    tp_all_reduce(comm, g, dpart_ptrs, size_t(N) * C);
    for (int r = 0; r < tp; ++r) {
      Worker& w = *g[size_t(r)];
      const float* P = w.params.data();
      float* G = w.grads.data();
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      ops::layernorm_backward(dx[size_t(r)].data(), G + o.ln2_w, G + o.ln2_b, dpart[size_t(r)].data(), a.x2.data(),
                              P + o.ln2_w, a.ln2_mean.data(), a.ln2_rstd.data(), N, C);  // dx now d(x2)
      ops::linear_backward(datty.data(), G + o.proj_w, G + o.proj_b, dx[size_t(r)].data(), a.atty.data(), P + o.proj_w,
                           N, Dl, C, false);
      ops::attention_backward(dqkv.data(), datty.data(), a.qkv.data(), a.att.data(), scratch.data(), B, T, Hl, hs);
      ops::linear_backward(dpart[size_t(r)].data(), G + o.qkv_w, G + o.qkv_b, dqkv.data(), a.ln1.data(), P + o.qkv_w,
                           N, C, 3 * Dl, false);
    }
    tp_all_reduce(comm, g, dpart_ptrs, size_t(N) * C);
    for (int r = 0; r < tp; ++r) {
      Worker& w = *g[size_t(r)];
      const float* P = w.params.data();
      float* G = w.grads.data();
      const LayerOffsets& o = lay.layer[size_t(l)];
      const LayerActs& a = w.acts.at(mb).layers[size_t(l)];
      ops::layernorm_backward(dx[size_t(r)].data(), G + o.ln1_w, G + o.ln1_b, dpart[size_t(r)].data(), a.x_in.data(),
                              P + o.ln1_w, a.ln1_mean.data(), a.ln1_rstd.data(), N, C);  // dx now d(x_in)
    }
  }

  for (int r = 0; r < tp; ++r) {
    Worker& w = *g[size_t(r)];
    if (lay.has_embed) {
      float* G = w.grads.data();
      const int s0 = first_sequence(w, mb, c);
      for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t) {
          const int tok = (*c.tokens)[size_t(s0 + b) * (T + 1) + size_t(t)];
          const float* d = dx[size_t(r)].data() + (int64_t(b) * T + t) * C;
          for (int k = 0; k < C; ++k) {
            G[lay.wte + int64_t(tok) * C + k] += d[k];
            G[lay.wpe + int64_t(t) * C + k] += d[k];
          }
        }
    } else {
      comm.send(w.id, ids[size_t(lay.pp_rank - 1)][size_t(r)], mb, dx[size_t(r)].data(), dx[size_t(r)].size(),
                Traffic::pp, c.tick);
    }
    w.act_bytes -= w.acts.at(mb).bytes();
    w.acts.erase(mb);
  }
}

}  // namespace mc::train
