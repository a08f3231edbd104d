// The GPT's backward pass against central finite differences of its own forward pass, tensor by tensor,
// and the layers' building blocks against closed forms.
#include "train/kernels/ops.h"
#include "train/model/worker.h"
#include "train_helpers.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace mc::train;

struct Tiny {
  ModelConfig m{.vocab = 16, .context = 5, .layers = 2, .width = 8, .heads = 2};
  int B = 2;
  std::vector<int32_t> tokens;
  Tiny() {
    Rng r{3};
    for (int i = 0; i < B * (m.context + 1); ++i) tokens.push_back(int32_t(r.next() % uint64_t(m.vocab)));
  }
  // Mean loss and, when grads != null, its gradient.
  double run(const std::vector<float>& params, std::vector<float>* grads) const {
    mc::test::OneWorkerPass r = mc::test::one_worker_pass(m, params, tokens, B, grads != nullptr);
    if (grads) *grads = std::move(r.grads);
    return r.loss;
  }
};

TEST(TrainGrad, BackwardMatchesFiniteDifferences) {
  Tiny t;
  std::vector<float> p = init_full_model(t.m, 5);
  // Larger weights than the initialisation so every path carries gradient well above float noise.
  Rng r{9};
  for (float& x : p) x += float(r.normal() * 0.3);
  std::vector<float> g;
  t.run(p, &g);
  const Layout lay = make_layout(t.m, 1, 0, 1, 0, 1);
  int checked = 0;
  for (const TensorSpec& ts : lay.tensors) {
    for (int k = 0; k < 4; ++k) {
      const int64_t i = ts.offset + int64_t(r.next() % uint64_t(ts.size()));
      const float h = 2e-3f;
      std::vector<float> q = p;
      q[size_t(i)] = p[size_t(i)] + h;
      const double up = t.run(q, nullptr);
      q[size_t(i)] = p[size_t(i)] - h;
      const double down = t.run(q, nullptr);
      const double fd = (up - down) / (2.0 * h);
      EXPECT_NEAR(g[size_t(i)], fd, 2e-3 + 3e-2 * std::fabs(fd)) << ts.name << " element " << (i - ts.offset);
      ++checked;
    }
  }
  EXPECT_EQ(checked, int(lay.tensors.size()) * 4);
}

TEST(TrainGrad, GeluAndLayerNormMatchClosedForms) {
  // GELU(x) = x Phi(x) is approximated within 1e-3 by the tanh form (Hendrycks & Gimpel 2016).
  std::vector<float> x = {-3.0f, -1.0f, -0.1f, 0.0f, 0.5f, 2.0f}, y(x.size());
  ops::gelu_forward(y.data(), x.data(), int64_t(x.size()));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i] * 0.5 * std::erfc(-x[i] / std::sqrt(2.0)), 1e-3) << x[i];
  // LayerNorm output has zero mean and unit variance before the gain and bias.
  std::vector<float> in = {1, 2, 3, 4, 10, 0, -5, 2}, w(4, 1.0f), b(4, 0.0f), out(8), mean(2), rstd(2);
  ops::layernorm_forward(out.data(), mean.data(), rstd.data(), in.data(), w.data(), b.data(), 2, 4);
  for (int row = 0; row < 2; ++row) {
    double s = 0, s2 = 0;
    for (int c = 0; c < 4; ++c)
      s += out[size_t(row * 4 + c)], s2 += out[size_t(row * 4 + c)] * out[size_t(row * 4 + c)];
    EXPECT_NEAR(s / 4, 0.0, 1e-5);
    EXPECT_NEAR(s2 / 4, 1.0, 1e-3);
  }
}

TEST(TrainGrad, GeluDerivativeKeepsItsRelativeAccuracyInTheTails) {
  // gelu'(x) of the tanh form, in double: 0.5 (1 + tanh u) + 0.5 x sech^2(u) k (1 + 3 c x^2), u = k (x + c x^3),
  // with 0.5 (1 + tanh u) = 1 / (1 + exp(-2u)) and sech^2 = 1 / cosh^2 (no cancellation, even in double). fp32 must
  // stay within a few ulp of it relative, also where tanh saturates in fp32 (|u| near 8, x near -4.4): there 1 - tanh^2
  // in fp32 is 0 or a few ulp of 1, and an implementation built on it is off by the whole value (the GPU-vs-CPU GELU
  // failure of issue 22).
  const double k = std::sqrt(2.0 / 3.141592653589793), c = 0.044715;
  std::vector<float> x, dout, dx;
  for (float v = -9.0f; v <= 9.0f; v += 0.01f) x.push_back(v), dout.push_back(1.0f);
  dx.resize(x.size());
  ops::gelu_backward(dx.data(), x.data(), dout.data(), int64_t(x.size()));
  double worst = 0;
  float at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i], u = k * (v + c * v * v * v), ch = std::cosh(u);
    const double a = 1.0 / (1.0 + std::exp(-2.0 * u)), b = 0.5 * v / (ch * ch) * k * (1.0 + 3.0 * c * v * v);
    const double want = a + b;
    // Relative to the size of the two terms (the derivative crosses zero near x = -0.75, where they cancel).
    const double err = std::fabs(dx[i] - want) / (std::fabs(a) + std::fabs(b) + 1e-300);
    if (err > worst) worst = err, at = x[i];
  }
  EXPECT_LT(worst, 1e-5) << "worst relative error at x = " << at;
}

TEST(TrainGrad, UntrainedModelPredictsNearlyUniformBytes) {
  // With N(0, 0.02) weights the logits are near zero: the loss is close to ln(V).
  Tiny t;
  const double loss = t.run(init_full_model(t.m, 1), nullptr);
  EXPECT_NEAR(loss, std::log(double(t.m.vocab)), 0.05);
}

}  // namespace
