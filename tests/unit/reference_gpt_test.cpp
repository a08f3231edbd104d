// The training math checked from outside the codebase: the reference pass (engine/train/model/reference_gpt.cpp)
// and the production path (stage.cpp on a compute device, device/compute.h) against loss, logits and
// gradients that PyTorch's autograd computed (tests/data/golden/reference_gpt.json, written by
// scripts/golden_reference_gpt.py), and against each other on the lab's own model size. A perturbed copy
// of each kernel must make the production path miss the golden file: the comparison has teeth.
#include "train/model/reference_gpt.h"
#include "train/kernels/cpu_device.h"
#include "train/model/worker.h"
#include "train_helpers.h"

#include "device/registry.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

namespace {

using namespace mc::train;
using mc::device::DPtr;

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
    m = ModelConfig{.vocab = c.at("vocab"),
                    .context = c.at("context"),
                    .layers = c.at("layers"),
                    .width = c.at("width"),
                    .heads = c.at("heads")};
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
                          int B, mc::device::Device* dev = nullptr) {
  return mc::test::one_worker_pass(m, params, tokens, B, true, dev);
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

// Each kernel of the device, perturbed by one part in a thousand on one output element, must make the
// production path miss the golden file; the unperturbed device must not.
constexpr float kNudge = 1e-3f;

double golden_miss(const Golden& g, mc::device::Device& dev) {
  const Production p = run_production(g.m, g.params, g.tokens, g.B, &dev);
  const Layout lay = make_layout(g.m, 1, 0, 1, 0, 1);
  const std::vector<double> got(p.grads.begin(), p.grads.end());
  const double loss_err = std::fabs(p.loss - g.j.at("loss").get<double>()) / 2e-6;
  return std::max(loss_err, worst_grad_error(lay, g.j.at("grads"), got, kFloatAbs, kFloatRel, nullptr));
}

// The CPU reference with one kernel's first output element nudged. A Device implementation, so it may
// reach its own memory through Raw.
class Nudged : public CpuDevice {
 public:
  explicit Nudged(std::string k) : k_(std::move(k)) {}
  void layernorm_forward(DPtr<float> out, DPtr<float> mean, DPtr<float> rstd, DPtr<const float> x, DPtr<const float> w,
                         DPtr<const float> b, int N, int C) override {
    CpuDevice::layernorm_forward(out, mean, rstd, x, w, b, N, C);
    nudge("layernorm_forward", out);
  }
  void layernorm_backward(DPtr<float> dx, DPtr<float> dw, DPtr<float> db, DPtr<const float> dout, DPtr<const float> x,
                          DPtr<const float> w, DPtr<const float> mean, DPtr<const float> rstd, int N, int C) override {
    CpuDevice::layernorm_backward(dx, dw, db, dout, x, w, mean, rstd, N, C);
    nudge("layernorm_backward", dx);
  }
  void gelu_forward(DPtr<float> out, DPtr<const float> x, int64_t n) override {
    CpuDevice::gelu_forward(out, x, n);
    nudge("gelu_forward", out);
  }
  void gelu_backward(DPtr<float> dx, DPtr<const float> x, DPtr<const float> dout, int64_t n) override {
    CpuDevice::gelu_backward(dx, x, dout, n);
    nudge("gelu_backward", dx);
  }
  void attention_forward(DPtr<float> out, DPtr<float> state, DPtr<const float> qkv, int B, int T, int Hl,
                         int hs) override {
    CpuDevice::attention_forward(out, state, qkv, B, T, Hl, hs);
    nudge("attention_forward", out);
  }
  void attention_backward(DPtr<float> dqkv, DPtr<const float> dout, DPtr<const float> qkv, DPtr<const float> out,
                          DPtr<const float> state, int B, int T, int Hl, int hs) override {
    CpuDevice::attention_backward(dqkv, dout, qkv, out, state, B, T, Hl, hs);
    nudge("attention_backward", dqkv);
  }
  void linear_forward(DPtr<float> y, DPtr<const float> x, DPtr<const float> w, DPtr<const float> bias, int N, int K,
                      int M) override {
    CpuDevice::linear_forward(y, x, w, bias, N, K, M);
    nudge("linear_forward", y);
  }
  void linear_backward(DPtr<float> dx, DPtr<float> dw, DPtr<float> db, DPtr<const float> dy, DPtr<const float> x,
                       DPtr<const float> w, int N, int K, int M, bool acc) override {
    CpuDevice::linear_backward(dx, dw, db, dy, x, w, N, K, M, acc);
    nudge("linear_backward", dw);
  }
  void softmax_xent_forward(DPtr<float> logits, DPtr<const int32_t> targets, DPtr<double> loss_sum, int N,
                            int V) override {
    CpuDevice::softmax_xent_forward(logits, targets, loss_sum, N, V);
    if (k_ == "softmax_xent_forward" && loss_sum) *mc::device::Raw::ptr(loss_sum) *= 1.0 + kNudge;
  }
  void softmax_xent_backward(DPtr<float> probs, DPtr<const int32_t> targets, int N, int V, float scale) override {
    CpuDevice::softmax_xent_backward(probs, targets, N, V, scale);
    nudge("softmax_xent_backward", probs, scale);
  }
  void sgemm(bool ta, bool tb, int M, int N, int K, DPtr<const float> A, int lda, DPtr<const float> B, int ldb,
             DPtr<float> C, int ldc, bool acc) override {
    CpuDevice::sgemm(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, acc);
    nudge("sgemm", C);
  }
  void embedding_forward(DPtr<float> out, DPtr<const float> wte, DPtr<const float> wpe, DPtr<const int32_t> tokens,
                         int B, int T, int C) override {
    CpuDevice::embedding_forward(out, wte, wpe, tokens, B, T, C);
    nudge("embedding_forward", out);
  }
  void embedding_backward(DPtr<float> dwte, DPtr<float> dwpe, DPtr<const float> dout, DPtr<const int32_t> tokens, int B,
                          int T, int C, int V) override {
    CpuDevice::embedding_backward(dwte, dwpe, dout, tokens, B, T, C, V);
    nudge("embedding_backward", dwpe);
  }
  void residual(DPtr<float> out, DPtr<const float> x, DPtr<const float> part, DPtr<const float> bias, int N,
                int C) override {
    CpuDevice::residual(out, x, part, bias, N, C);
    nudge("residual", out);
  }

 private:
  std::string k_;
  void nudge(const char* kernel, DPtr<float> p, float scale = 1.0f) {
    if (k_ == kernel) *mc::device::Raw::ptr(p) += kNudge * scale;
  }
};

TEST(ReferenceGpt, APerturbedKernelMissesTheGoldenFile) {
  Golden g;
  CpuDevice base;
  EXPECT_LT(golden_miss(g, base), 1.0);
  for (const char* k : {"layernorm_forward", "layernorm_backward", "gelu_forward", "gelu_backward", "attention_forward",
                        "attention_backward", "linear_forward", "linear_backward", "softmax_xent_forward",
                        "softmax_xent_backward", "sgemm", "embedding_forward", "embedding_backward", "residual"}) {
    Nudged dev(k);
    EXPECT_GT(golden_miss(g, dev), 1.0) << "perturbing " << k << " went unnoticed";
  }
}

}  // namespace

namespace {

// The GPU device (device/compute.h) against the same golden file, on a machine where it can run.
TEST(ReferenceGpt, CudaKernelsMatchPyTorchAutograd) {
  std::string why;
  const std::unique_ptr<mc::device::Device> gpu = mc::device::open_kind("cuda", &why);
  if (!gpu) GTEST_SKIP() << "no GPU device here: " << why;
  Golden g;
  EXPECT_LT(golden_miss(g, *gpu), 1.0);
}

}  // namespace
