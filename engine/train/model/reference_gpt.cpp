// reference_gpt.cpp - a GPT-2-style forward and backward pass to read top to bottom (see reference_gpt.h).
//
// The model (Radford et al. 2019; the lab's stage.cpp computes the same thing in parallel pieces):
//   x0 = wte[token] + wpe[t]
//   per block:  x2 = x + proj(attention(qkv(LN1(x))))      (pre-LayerNorm residual blocks)
//               x' = x2 + fcproj(GELU(fc(LN2(x2))))
//   logits = LN_f(x_L) wte^T                                 (head tied to the token embedding)
//   loss = mean over tokens of -log softmax(logits)[target]
// Linear weights are stored input-major, (K rows, M cols): y = x w + b. qkv's 3C columns are [q | k | v],
// head h owning columns [h*hs, (h+1)*hs) of each.
//
// Sections: 1. small helpers (linear, LayerNorm, GELU), 2. forward, 3. backward in reverse order.
// Everything is double precision and sequential, so the result is exact to ~1e-15 and independent of any
// thread count or kernel choice.
#include "train/model/reference_gpt.h"

#include "train/model/worker.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mc::train::reference {

namespace {

using Vec = std::vector<double>;

// ---- 1. helpers ---------------------------------------------------------------------------------------

// y(N,M) = x(N,K) w(K,M) + b(M)   (b may be null)
void linear(Vec& y, const Vec& x, const double* w, const double* b, int N, int K, int M) {
  y.assign(size_t(N) * M, 0.0);
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < M; ++m) {
      double s = b ? b[m] : 0.0;
      for (int k = 0; k < K; ++k) s += x[size_t(n) * K + k] * w[size_t(k) * M + m];
      y[size_t(n) * M + m] = s;
    }
}

// Given dy(N,M): dx(N,K) = dy w^T (overwritten), dw(K,M) += x^T dy, db(M) += column sums of dy.
void linear_back(Vec& dx, double* dw, double* db, const Vec& dy, const Vec& x, const double* w, int N, int K, int M) {
  dx.assign(size_t(N) * K, 0.0);
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < M; ++m) {
      const double g = dy[size_t(n) * M + m];
      if (db) db[m] += g;
      for (int k = 0; k < K; ++k) {
        dx[size_t(n) * K + k] += g * w[size_t(k) * M + m];
        dw[size_t(k) * M + m] += x[size_t(n) * K + k] * g;
      }
    }
}

// LayerNorm (Ba et al. 2016) over each row of x(N,C): y = (x - mean) / sqrt(var + 1e-5) * g + b, with the
// biased variance; keeps the normalised rows xhat and 1/sqrt(var + eps) for the backward pass.
void layernorm(Vec& y, Vec& xhat, Vec& rstd, const Vec& x, const double* g, const double* b, int N, int C) {
  y.assign(size_t(N) * C, 0.0);
  xhat.assign(size_t(N) * C, 0.0);
  rstd.assign(size_t(N), 0.0);
  for (int n = 0; n < N; ++n) {
    const double* r = &x[size_t(n) * C];
    double mean = 0, var = 0;
    for (int c = 0; c < C; ++c) mean += r[c];
    mean /= C;
    for (int c = 0; c < C; ++c) var += (r[c] - mean) * (r[c] - mean);
    var /= C;
    rstd[size_t(n)] = 1.0 / std::sqrt(var + 1e-5);
    for (int c = 0; c < C; ++c) {
      xhat[size_t(n) * C + c] = (r[c] - mean) * rstd[size_t(n)];
      y[size_t(n) * C + c] = xhat[size_t(n) * C + c] * g[c] + b[c];
    }
  }
}

// Given dy: dx (added to), dg and db (added to). With d = dy * g per row:
//   dx = rstd * (d - mean(d) - xhat * mean(d * xhat))
void layernorm_back(Vec& dx, double* dg, double* db, const Vec& dy, const Vec& xhat, const Vec& rstd, const double* g,
                    int N, int C) {
  for (int n = 0; n < N; ++n) {
    double mean_d = 0, mean_dx = 0;
    for (int c = 0; c < C; ++c) {
      const double d = dy[size_t(n) * C + c] * g[c];
      mean_d += d;
      mean_dx += d * xhat[size_t(n) * C + c];
    }
    mean_d /= C;
    mean_dx /= C;
    for (int c = 0; c < C; ++c) {
      const size_t i = size_t(n) * C + c;
      dg[c] += dy[i] * xhat[i];
      db[c] += dy[i];
      dx[i] += rstd[size_t(n)] * (dy[i] * g[c] - mean_d - xhat[i] * mean_dx);
    }
  }
}

// GELU, tanh form (Hendrycks & Gimpel 2016, Sec. 2): 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))).
constexpr double kGeluA = 0.7978845608028654;  // sqrt(2/pi)
double gelu(double u) { return 0.5 * u * (1.0 + std::tanh(kGeluA * (u + 0.044715 * u * u * u))); }
double gelu_grad(double u) {
  const double th = std::tanh(kGeluA * (u + 0.044715 * u * u * u));
  return 0.5 * (1.0 + th) + 0.5 * u * (1.0 - th * th) * kGeluA * (1.0 + 3.0 * 0.044715 * u * u);
}

// Where each tensor lives in the flat buffer (names of make_layout).
struct Block {
  size_t ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fcproj_w, fcproj_b;
};

// What one block keeps from its forward pass for its backward pass.
struct BlockActs {
  Vec x;  // (N,C)    input of the block (the residual stream)
  Vec ln1, ln1_hat, ln1_rstd;
  Vec qkv;   // (N,3C)
  Vec att;   // (B,H,T,T) softmax probabilities, 0 above the diagonal
  Vec atty;  // (N,C)    attention output, heads side by side
  Vec x2;    // (N,C)    x + attention branch
  Vec ln2, ln2_hat, ln2_rstd;
  Vec fc, ge;  // (N,4C)   before and after GELU
};

}  // namespace

Pass forward_backward(const ModelConfig& m, const std::vector<float>& params, const std::vector<int32_t>& tokens,
                      int B) {
  const int T = m.context, C = m.width, V = m.vocab, L = m.layers, H = m.heads;
  if (B < 1 || H < 1 || C % H != 0) throw std::invalid_argument("reference GPT: need B >= 1 and width % heads == 0");
  const int hs = C / H, N = B * T;
  const Layout lay = make_layout(m, 1, 0, 1, 0, 1);
  if (params.size() != size_t(lay.size))
    throw std::invalid_argument("reference GPT: " + std::to_string(params.size()) +
                                " parameters given, the config has " + std::to_string(lay.size));
  if (tokens.size() != size_t(B) * (T + 1))
    throw std::invalid_argument("reference GPT: tokens must be B rows of context + 1");
  for (int32_t tok : tokens)
    if (tok < 0 || tok >= V)
      throw std::invalid_argument("reference GPT: token " + std::to_string(tok) + " outside the vocabulary");

  const Vec p(params.begin(), params.end());  // double copies of the weights
  Pass out;
  out.grads.assign(p.size(), 0.0);
  Vec& dp = out.grads;
  auto at = [&](const std::string& name) {
    const TensorSpec* t = find_tensor(lay, name);
    if (!t) throw std::logic_error("reference GPT: no tensor " + name);
    return size_t(t->offset);
  };
  const size_t wte = at("wte"), wpe = at("wpe"), lnf_w = at("lnf_w"), lnf_b = at("lnf_b");
  std::vector<Block> blk;
  for (int l = 0; l < L; ++l) {
    const std::string h = "h" + std::to_string(l) + ".";
    blk.push_back({at(h + "ln1_w"), at(h + "ln1_b"), at(h + "qkv_w"), at(h + "qkv_b"), at(h + "proj_w"),
                   at(h + "proj_b"), at(h + "ln2_w"), at(h + "ln2_b"), at(h + "fc_w"), at(h + "fc_b"),
                   at(h + "fcproj_w"), at(h + "fcproj_b")});
  }
  auto tok_in = [&](int b, int t) { return tokens[size_t(b) * (T + 1) + size_t(t)]; };
  auto tok_out = [&](int b, int t) { return tokens[size_t(b) * (T + 1) + size_t(t) + 1]; };
  const double scale = 1.0 / std::sqrt(double(hs));

  // ---- 2. forward ---------------------------------------------------------------------------------------

  // x(N,C) = wte[token] + wpe[position]
  Vec x(size_t(N) * C);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < C; ++c)
        x[(size_t(b) * T + t) * C + c] = p[wte + size_t(tok_in(b, t)) * C + c] + p[wpe + size_t(t) * C + c];

  std::vector<BlockActs> acts(static_cast<size_t>(L));
  for (int l = 0; l < L; ++l) {
    const Block& o = blk[size_t(l)];
    BlockActs& a = acts[size_t(l)];
    a.x = x;
    layernorm(a.ln1, a.ln1_hat, a.ln1_rstd, a.x, &p[o.ln1_w], &p[o.ln1_b], N, C);
    linear(a.qkv, a.ln1, &p[o.qkv_w], &p[o.qkv_b], N, C, 3 * C);  // (N,3C)

    // Causal self-attention, head by head: att[b,h,i,j] = softmax_{j<=i}(q_i . k_j / sqrt(hs)).
    a.att.assign(size_t(B) * H * T * T, 0.0);
    a.atty.assign(size_t(N) * C, 0.0);
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < T; ++i) {
          const double* q = &a.qkv[(size_t(b) * T + i) * 3 * C + size_t(h) * hs];
          double* row = &a.att[((size_t(b) * H + h) * T + i) * T];
          double mx = -INFINITY;
          for (int j = 0; j <= i; ++j) {
            const double* k = &a.qkv[(size_t(b) * T + j) * 3 * C + C + size_t(h) * hs];
            double s = 0;
            for (int d = 0; d < hs; ++d) s += q[d] * k[d];
            row[j] = s * scale;
            mx = std::max(mx, row[j]);
          }
          double sum = 0;
          for (int j = 0; j <= i; ++j) sum += (row[j] = std::exp(row[j] - mx));
          for (int j = 0; j <= i; ++j) row[j] /= sum;
          double* y = &a.atty[(size_t(b) * T + i) * C + size_t(h) * hs];  // y_i = sum_j att_ij v_j
          for (int j = 0; j <= i; ++j) {
            const double* v = &a.qkv[(size_t(b) * T + j) * 3 * C + 2 * C + size_t(h) * hs];
            for (int d = 0; d < hs; ++d) y[d] += row[j] * v[d];
          }
        }

    Vec branch;
    linear(branch, a.atty, &p[o.proj_w], &p[o.proj_b], N, C, C);
    a.x2.resize(size_t(N) * C);
    for (size_t i = 0; i < a.x2.size(); ++i) a.x2[i] = a.x[i] + branch[i];

    layernorm(a.ln2, a.ln2_hat, a.ln2_rstd, a.x2, &p[o.ln2_w], &p[o.ln2_b], N, C);
    linear(a.fc, a.ln2, &p[o.fc_w], &p[o.fc_b], N, C, 4 * C);  // (N,4C)
    a.ge.resize(a.fc.size());
    for (size_t i = 0; i < a.fc.size(); ++i) a.ge[i] = gelu(a.fc[i]);
    linear(branch, a.ge, &p[o.fcproj_w], &p[o.fcproj_b], N, 4 * C, C);
    for (size_t i = 0; i < x.size(); ++i) x[i] = a.x2[i] + branch[i];
  }

  // Final LayerNorm, then logits(N,V) = lnf wte^T.
  Vec lnf, lnf_hat, lnf_rstd;
  layernorm(lnf, lnf_hat, lnf_rstd, x, &p[lnf_w], &p[lnf_b], N, C);
  out.logits.assign(size_t(N) * V, 0.0);
  for (int n = 0; n < N; ++n)
    for (int v = 0; v < V; ++v) {
      double s = 0;
      for (int c = 0; c < C; ++c) s += lnf[size_t(n) * C + c] * p[wte + size_t(v) * C + c];
      out.logits[size_t(n) * V + v] = s;
    }

  // Cross-entropy: loss = mean_n (logsumexp(logits_n) - logits_n[target]); keep the probabilities.
  Vec probs(size_t(N) * V);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const size_t n = size_t(b) * T + t;
      const double* z = &out.logits[n * V];
      double mx = -INFINITY, sum = 0;
      for (int v = 0; v < V; ++v) mx = std::max(mx, z[v]);
      for (int v = 0; v < V; ++v) sum += std::exp(z[v] - mx);
      for (int v = 0; v < V; ++v) probs[n * V + v] = std::exp(z[v] - mx) / sum;
      out.loss += (mx + std::log(sum) - z[tok_out(b, t)]) / N;
    }

  // ---- 3. backward, in reverse ----------------------------------------------------------------------------

  // dlogits = (probs - onehot(target)) / N
  Vec dlogits = probs;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) dlogits[(size_t(b) * T + t) * V + size_t(tok_out(b, t))] -= 1.0;
  for (double& g : dlogits) g /= N;

  // logits = lnf wte^T: dwte += dlogits^T lnf, dlnf = dlogits wte
  Vec dlnf(size_t(N) * C, 0.0);
  for (int n = 0; n < N; ++n)
    for (int v = 0; v < V; ++v) {
      const double g = dlogits[size_t(n) * V + v];
      for (int c = 0; c < C; ++c) {
        dp[wte + size_t(v) * C + c] += g * lnf[size_t(n) * C + c];
        dlnf[size_t(n) * C + c] += g * p[wte + size_t(v) * C + c];
      }
    }
  Vec dx(size_t(N) * C, 0.0);  // d loss / d residual stream, walking down the blocks
  layernorm_back(dx, &dp[lnf_w], &dp[lnf_b], dlnf, lnf_hat, lnf_rstd, &p[lnf_w], N, C);

  for (int l = L - 1; l >= 0; --l) {
    const Block& o = blk[size_t(l)];
    const BlockActs& a = acts[size_t(l)];
    // x' = x2 + fcproj(GELU(fc(LN2(x2)))): the residual passes dx to x2 unchanged, plus the MLP branch.
    Vec dge, dfc(a.fc.size()), dln2, dx2 = dx;
    linear_back(dge, &dp[o.fcproj_w], &dp[o.fcproj_b], dx, a.ge, &p[o.fcproj_w], N, 4 * C, C);
    for (size_t i = 0; i < dfc.size(); ++i) dfc[i] = dge[i] * gelu_grad(a.fc[i]);
    linear_back(dln2, &dp[o.fc_w], &dp[o.fc_b], dfc, a.ln2, &p[o.fc_w], N, C, 4 * C);
    layernorm_back(dx2, &dp[o.ln2_w], &dp[o.ln2_b], dln2, a.ln2_hat, a.ln2_rstd, &p[o.ln2_w], N, C);

    // x2 = x + proj(attention(qkv(LN1(x)))).
    Vec datty, dqkv(a.qkv.size(), 0.0), dln1, dxin = dx2;
    linear_back(datty, &dp[o.proj_w], &dp[o.proj_b], dx2, a.atty, &p[o.proj_w], N, C, C);
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < T; ++i) {
          const double* row = &a.att[((size_t(b) * H + h) * T + i) * T];
          const double* dy = &datty[(size_t(b) * T + i) * C + size_t(h) * hs];
          // y_i = sum_j att_ij v_j: datt_ij = dy_i . v_j, dv_j += att_ij dy_i
          Vec datt(size_t(i) + 1);
          for (int j = 0; j <= i; ++j) {
            const double* v = &a.qkv[(size_t(b) * T + j) * 3 * C + 2 * C + size_t(h) * hs];
            double* dv = &dqkv[(size_t(b) * T + j) * 3 * C + 2 * C + size_t(h) * hs];
            double s = 0;
            for (int d = 0; d < hs; ++d) {
              s += dy[d] * v[d];
              dv[d] += row[j] * dy[d];
            }
            datt[size_t(j)] = s;
          }
          // softmax: dscore_ij = att_ij (datt_ij - sum_k att_ik datt_ik), then the 1/sqrt(hs) scale
          double dot = 0;
          for (int j = 0; j <= i; ++j) dot += row[j] * datt[size_t(j)];
          const double* q = &a.qkv[(size_t(b) * T + i) * 3 * C + size_t(h) * hs];
          double* dq = &dqkv[(size_t(b) * T + i) * 3 * C + size_t(h) * hs];
          for (int j = 0; j <= i; ++j) {
            const double ds = row[j] * (datt[size_t(j)] - dot) * scale;
            const double* k = &a.qkv[(size_t(b) * T + j) * 3 * C + C + size_t(h) * hs];
            double* dk = &dqkv[(size_t(b) * T + j) * 3 * C + C + size_t(h) * hs];
            for (int d = 0; d < hs; ++d) {
              dq[d] += ds * k[d];
              dk[d] += ds * q[d];
            }
          }
        }
    linear_back(dln1, &dp[o.qkv_w], &dp[o.qkv_b], dqkv, a.ln1, &p[o.qkv_w], N, C, 3 * C);
    layernorm_back(dxin, &dp[o.ln1_w], &dp[o.ln1_b], dln1, a.ln1_hat, a.ln1_rstd, &p[o.ln1_w], N, C);
    dx = std::move(dxin);
  }

  // x0 = wte[token] + wpe[t]: scatter-add into both tables (tokens repeat; the sums add up).
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < C; ++c) {
        const double g = dx[(size_t(b) * T + t) * C + c];
        dp[wte + size_t(tok_in(b, t)) * C + c] += g;
        dp[wpe + size_t(t) * C + c] += g;
      }
  return out;
}

}  // namespace mc::train::reference
