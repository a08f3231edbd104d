// The training math checked from outside the codebase: the reference pass (engine/train/model/reference_gpt.cpp)
// and the production path (stage.cpp + ops.cpp through the OpsBackend table) against loss, logits and
// gradients that PyTorch's autograd computed (tests/data/golden/reference_gpt.json, written by
// scripts/golden_reference_gpt.py), and against each other on the lab's own model size. A perturbed copy
// of each kernel must make the production path miss the golden file: the comparison has teeth.
#include "train/kernels/ops_backend.h"
#include "train/model/reference_gpt.h"
#include "train/model/worker.h"
#include "train_helpers.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

namespace {

using namespace mc::train;

// The golden file's parameter rule (scripts/golden_reference_gpt.py, value(name, i)), rounded to float.
float golden_value(const std::string& name, int64_t i) {
  double phase = 0;
  for (char ch : name) phase += double(static_cast<unsigned char>(ch));
  phase *= 0.01;
  const bool is_ln = name.rfind("ln", 0) == 0 || name.find(".ln") != std::string::npos;
  const bool ends_w = name.size() > 2 && name.compare(name.size() - 2, 2, "_w") == 0;
  const bool ends_b = name.size() > 2 && name.compare(name.size() - 2, 2, "_b") == 0;
  const double x = double(i);
  if (is_ln && ends_w) return float(1.0 + 0.2 * std::sin(0.37 * x + phase));
  if (ends_b) return float(0.1 * std::cos(0.91 * x + phase));
  return float(0.35 * std::sin(0.7 * x + 0.013 * x * x + phase));
}

struct Golden {
  ModelConfig m;
  int B = 0;
  std::vector<int32_t> tokens;
  std::vector<float> params;  // the engine's flat order
  nlohmann::json j;
  Golden() {
    const std::string path = std::string(MC_SOURCE_DIR) + "/tests/data/golden/reference_gpt.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    j = nlohmann::json::parse(in);
    const auto& c = j.at("config");
    m = ModelConfig{.vocab = c.at("vocab"), .context = c.at("context"), .layers = c.at("layers"),
                    .width = c.at("width"), .heads = c.at("heads")};
    B = j.at("batch");
    tokens = j.at("tokens").get<std::vector<int32_t>>();
    const Layout lay = make_layout(m, 1, 0, 1, 0, 1);
    params.assign(size_t(lay.size), 0.0f);
    for (const TensorSpec& t : lay.tensors)
      for (int64_t i = 0; i < t.size(); ++i) params[size_t(t.offset + i)] = golden_value(t.name, i);
  }
};

// The production path on one worker: loss and gradients of one micro-batch of B sequences.
using Production = mc::test::OneWorkerPass;
Production run_production(const ModelConfig& m, const std::vector<float>& params, const std::vector<int32_t>& tokens,
                          int B, const OpsBackend* ops = nullptr) {
  return mc::test::one_worker_pass(m, params, tokens, B, true, ops);
}

// Worst error of `got` against `want` per tensor, in units of the tensor's allowed error:
// |got - want| <= abs_tol * max|want over the tensor| + rel_tol * |want|. Below 1 passes.
double worst_grad_error(const Layout& lay, const nlohmann::json& want_by_name, const std::vector<double>& got,
                        double abs_tol, double rel_tol, std::string* where) {
  double worst = 0;
  for (const TensorSpec& t : lay.tensors) {
    const std::vector<double> want = want_by_name.at(t.name).get<std::vector<double>>();
    EXPECT_EQ(int64_t(want.size()), t.size()) << t.name;
    double scale = 0;
    for (double v : want) scale = std::max(scale, std::fabs(v));
    for (int64_t i = 0; i < t.size() && size_t(i) < want.size(); ++i) {
      const double err = std::fabs(got[size_t(t.offset + i)] - want[size_t(i)]) /
                         (abs_tol * scale + rel_tol * std::fabs(want[size_t(i)]) + 1e-300);
      if (err > worst) {
        worst = err;
        if (where) *where = t.name + "[" + std::to_string(i) + "]";
      }
    }
  }
  return worst;
}

TEST(ReferenceGpt, MatchesPyTorchAutogradOnTheGoldenFile) {
  Golden g;
  const reference::Pass r = reference::forward_backward(g.m, g.params, g.tokens, g.B);
  // Both sides run in double: only the golden file's 12 printed digits separate them.
  EXPECT_NEAR(r.loss, g.j.at("loss").get<double>(), 1e-11);
  const std::vector<double> logits = g.j.at("logits").get<std::vector<double>>();
  ASSERT_EQ(logits.size(), r.logits.size());
  for (size_t i = 0; i < logits.size(); ++i) EXPECT_NEAR(r.logits[i], logits[i], 1e-10) << "logit " << i;
  std::string where;
  const Layout lay = make_layout(g.m, 1, 0, 1, 0, 1);
  EXPECT_LT(worst_grad_error(lay, g.j.at("grads"), r.grads, 1e-9, 1e-9, &where), 1.0) << where;
}

// float32 against float64: the loss to ~1e-6, each gradient to 1e-4 of its tensor's largest entry.
constexpr double kFloatAbs = 1e-4, kFloatRel = 1e-4;

TEST(ReferenceGpt, ProductionPathMatchesPyTorchAutograd) {
  Golden g;
  const Production p = run_production(g.m, g.params, g.tokens, g.B);
  EXPECT_NEAR(p.loss, g.j.at("loss").get<double>(), 2e-6);
  std::string where;
  const Layout lay = make_layout(g.m, 1, 0, 1, 0, 1);
  const std::vector<double> got(p.grads.begin(), p.grads.end());
  const double worst = worst_grad_error(lay, g.j.at("grads"), got, kFloatAbs, kFloatRel, &where);
  EXPECT_LT(worst, 1.0) << "worst at " << where;
  RecordProperty("worst_error_in_tolerances", std::to_string(worst));
}

// On the lab's default shapes (C = 64, V = 256) with a context past the attention kernel's 64-row block,
// so the blocked attention and the tiled GEMMs run paths the tiny golden model does not reach.
TEST(ReferenceGpt, ProductionPathMatchesTheReferenceOnLabShapes) {
  ModelConfig m;  // the lab's model: V 256, C 64, 4 heads, 2 layers
  m.context = 80;
  const int B = 3;
  std::vector<float> p = init_full_model(m, 7);
  Rng r{11};
  for (float& x : p) x += float(r.normal() * 0.05);  // away from the initialisation's symmetric gains
  std::vector<int32_t> tokens;
  for (int i = 0; i < B * (m.context + 1); ++i) tokens.push_back(int32_t(r.next() % 256));
  const reference::Pass ref = reference::forward_backward(m, p, tokens, B);
  const Production prod = run_production(m, p, tokens, B);
  EXPECT_NEAR(prod.loss, ref.loss, 1e-5 * ref.loss);
  nlohmann::json want;
  const Layout lay = make_layout(m, 1, 0, 1, 0, 1);
  for (const TensorSpec& t : lay.tensors)
    want[t.name] = std::vector<double>(ref.grads.begin() + t.offset, ref.grads.begin() + t.offset + t.size());
  std::string where;
  const std::vector<double> got(prod.grads.begin(), prod.grads.end());
  EXPECT_LT(worst_grad_error(lay, want, got, kFloatAbs, kFloatRel, &where), 1.0) << "worst at " << where;
}

// Each kernel of the table, perturbed by one part in a thousand on one output element, must make the
// production path miss the golden file; the unperturbed table must not.
const OpsBackend* g_base = nullptr;
constexpr float kNudge = 1e-3f;

double golden_miss(const Golden& g, const OpsBackend& ops) {
  const Production p = run_production(g.m, g.params, g.tokens, g.B, &ops);
  const Layout lay = make_layout(g.m, 1, 0, 1, 0, 1);
  const std::vector<double> got(p.grads.begin(), p.grads.end());
  const double loss_err = std::fabs(p.loss - g.j.at("loss").get<double>()) / 2e-6;
  return std::max(loss_err, worst_grad_error(lay, g.j.at("grads"), got, kFloatAbs, kFloatRel, nullptr));
}

TEST(ReferenceGpt, APerturbedKernelMissesTheGoldenFile) {
  Golden g;
  g_base = &cpu_backend();
  EXPECT_LT(golden_miss(g, *g_base), 1.0);
  struct Case {
    const char* kernel;
    void (*patch)(OpsBackend&);
  };
  const Case cases[] = {
      {"layernorm_forward", [](OpsBackend& k) {
         k.layernorm_forward = [](float* out, float* mean, float* rstd, const float* x, const float* w, const float* b,
                                  int N, int C) {
           g_base->layernorm_forward(out, mean, rstd, x, w, b, N, C);
           out[0] += kNudge;
         };
       }},
      {"layernorm_backward", [](OpsBackend& k) {
         k.layernorm_backward = [](float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                                   const float* mean, const float* rstd, int N, int C) {
           g_base->layernorm_backward(dx, dw, db, dout, x, w, mean, rstd, N, C);
           dx[0] += kNudge;
         };
       }},
      {"gelu_forward", [](OpsBackend& k) {
         k.gelu_forward = [](float* out, const float* x, int64_t n) {
           g_base->gelu_forward(out, x, n);
           out[0] += kNudge;
         };
       }},
      {"gelu_backward", [](OpsBackend& k) {
         k.gelu_backward = [](float* dx, const float* x, const float* dout, int64_t n) {
           g_base->gelu_backward(dx, x, dout, n);
           dx[0] += kNudge;
         };
       }},
      {"attention_forward", [](OpsBackend& k) {
         k.attention_forward = [](float* out, float* att, const float* qkv, int B, int T, int Hl, int hs) {
           g_base->attention_forward(out, att, qkv, B, T, Hl, hs);
           out[0] += kNudge;
         };
       }},
      {"attention_backward", [](OpsBackend& k) {
         k.attention_backward = [](float* dqkv, const float* dout, const float* qkv, const float* att, float* s, int B,
                                   int T, int Hl, int hs) {
           g_base->attention_backward(dqkv, dout, qkv, att, s, B, T, Hl, hs);
           dqkv[0] += kNudge;
         };
       }},
      {"linear_forward", [](OpsBackend& k) {
         k.linear_forward = [](float* y, const float* x, const float* w, const float* bias, int N, int K, int M) {
           g_base->linear_forward(y, x, w, bias, N, K, M);
           y[0] += kNudge;
         };
       }},
      {"linear_backward", [](OpsBackend& k) {
         k.linear_backward = [](float* dx, float* dw, float* db, const float* dy, const float* x, const float* w, int N,
                                int K, int M, bool acc) {
           g_base->linear_backward(dx, dw, db, dy, x, w, N, K, M, acc);
           dw[0] += kNudge;
         };
       }},
      {"softmax_xent_forward", [](OpsBackend& k) {
         k.softmax_xent_forward = [](float* logits, const int32_t* targets, int N, int V) {
           return g_base->softmax_xent_forward(logits, targets, N, V) * (1.0 + kNudge);
         };
       }},
      {"softmax_xent_backward", [](OpsBackend& k) {
         k.softmax_xent_backward = [](float* probs, const int32_t* targets, int N, int V, float scale) {
           g_base->softmax_xent_backward(probs, targets, N, V, scale);
           probs[0] += kNudge * scale;
         };
       }},
      {"sgemm", [](OpsBackend& k) {
         k.sgemm = [](bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
                      int ldc, bool acc) {
           g_base->sgemm(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, acc);
           C[0] += kNudge;
         };
       }},
  };
  for (const Case& c : cases) {
    OpsBackend k = *g_base;
    c.patch(k);
    EXPECT_GT(golden_miss(g, k), 1.0) << "perturbing " << c.kernel << " went unnoticed";
  }
}

}  // namespace

namespace {

// The CUDA kernels (ops_backend.h) against the same golden file, on a machine where they can run.
TEST(ReferenceGpt, CudaKernelsMatchPyTorchAutograd) {
  std::string why;
  const OpsBackend* cuda = cuda_backend(&why);
  if (!cuda) GTEST_SKIP() << "no CUDA kernels here: " << why;
  Golden g;
  EXPECT_LT(golden_miss(g, *cuda), 1.0);
}

}  // namespace
