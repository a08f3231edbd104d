// device_conformance_test.cpp - the kernel conformance suite: every registered device kind (device/registry.h;
// the CPU reference always, CUDA where a GPU answers) against naive references written here, in double
// precision, as straight loops from the papers' formulas. Nothing here calls ops.h, gemm.h or the CPU device,
// so the CPU reference is held to the same standard as any other device, and a new kind that registers
// itself inherits every test. A kind that does not open here (no GPU) skips with its reason.
//
// Small odd shapes and seeded inputs, on the host through HostOps (device_host_ops.h) with outputs
// prefilled with garbage (a kernel that adds where it should overwrite fails). Each test states its
// tolerance and prints the worst errors it measured. DeviceConformance runs at fp32;
// DeviceConformancePrecision checks, for each reduced precision a kind lists, that its products really
// round their inputs.
#include "device/compute.h"
#include "device/registry.h"
#include "device_host_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace {

using mc::device::Device;
using mc::device::DeviceKind;
using mc::device::Precision;
using mc::test::HostOps;
using mc::test::Rand;
using mc::test::Vec;
using Ref = std::vector<double>;  // a reference result, in double

// What a garbage-filled output holds before the kernel runs: a kernel that adds to it instead of overwriting
// it is off by this much.
constexpr float kGarbage = 1000.0f;

// The LayerNorm epsilon inside the square root, the constant the CPU reference uses (ops.cpp) and GPT-2's.
constexpr double kLayerNormEps = 1e-5;

Ref to_ref(const Vec& v) { return Ref(v.begin(), v.end()); }
Vec to_float(const Ref& v) {
  Vec f(v.size());
  for (size_t i = 0; i < v.size(); ++i) f[i] = float(v[i]);
  return f;
}

// A test name's parameter part: letters, digits and '_' only.
std::string test_name_of(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// Every element of got within atol + rtol * |ref| of the reference; the worst errors are printed as the
// figures measured, with the device's name.
template <class G>
void expect_matches(const char* device, const Ref& ref, const std::vector<G>& got, double atol, double rtol,
                    const std::string& what) {
  ASSERT_EQ(ref.size(), got.size()) << what;
  double max_abs = 0, max_rel = 0;
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(ref[i] - double(got[i]));
    max_abs = std::max(max_abs, d);
    if (std::fabs(ref[i]) > 1e-6) max_rel = std::max(max_rel, d / std::fabs(ref[i]));
    if (!(d <= atol + rtol * std::fabs(ref[i])) && bad++ == 0) first_bad = i;  // NaN fails too
  }
  EXPECT_EQ(bad, 0u) << device << ", " << what << ": " << bad << " of " << ref.size()
                     << " elements out of tolerance (atol " << atol << ", rtol " << rtol << "); first at " << first_bad
                     << ": reference " << ref[first_bad] << ", " << device << " " << double(got[first_bad]);
  std::printf("    [%s] %-34s n=%-5zu max abs err %.3g, max rel err %.3g (tol %.0e + %.0e|ref|)\n", device,
              what.c_str(), ref.size(), max_abs, max_rel, atol, rtol);
}

// Every registered kind's name, the reference last (device_kinds' order). Evaluated when the tests are
// registered (after static initialisation, so every kind's registrar has run).
std::vector<std::string> kind_names() {
  std::vector<std::string> names;
  for (const DeviceKind& k : mc::device::device_kinds()) names.push_back(k.name);
  return names;
}

// Opens the kind of that name, or says why not (nullptr and *why).
std::unique_ptr<Device> open_kind(const std::string& name, std::string* why) {
  const DeviceKind* k = mc::device::find_device_kind(name);
  if (!k) {
    *why = "no device kind named \"" + name + "\" is registered";
    return nullptr;
  }
  std::unique_ptr<Device> d = k->open(why);
  if (!d && why->empty()) *why = name + " refused without a reason";
  return d;
}

// ---- the naive references ---------------------------------------------------------------------------------

// LayerNorm forward (Ba et al. 2016, Sec. 3: the statistics of Eq. 3 over a row's C features, then a gain and a
// bias): mu = mean(x), sigma^2 = mean((x-mu)^2) (biased, 1/C), y = (x - mu) / sqrt(sigma^2 + eps) * w + b.
void ref_layernorm_forward(const Vec& x, const Vec& w, const Vec& b, int N, int C, Ref* out, Ref* mean, Ref* rstd) {
  out->assign(size_t(N) * C, 0.0);
  mean->assign(size_t(N), 0.0);
  rstd->assign(size_t(N), 0.0);
  for (int i = 0; i < N; ++i) {
    const float* xi = x.data() + size_t(i) * C;
    double mu = 0, var = 0;
    for (int c = 0; c < C; ++c) mu += xi[c];
    mu /= C;
    for (int c = 0; c < C; ++c) var += (xi[c] - mu) * (xi[c] - mu);
    var /= C;
    const double rs = 1.0 / std::sqrt(var + kLayerNormEps);
    for (int c = 0; c < C; ++c) (*out)[size_t(i) * C + c] = (xi[c] - mu) * rs * w[size_t(c)] + b[size_t(c)];
    (*mean)[size_t(i)] = mu;
    (*rstd)[size_t(i)] = rs;
  }
}

// LayerNorm backward by the chain rule through y = n w + b, n = (x - mu) r, r = 1/sqrt(sigma^2 + eps): with
// g = dout * w, dx = r (g - mean(g) - n mean(g n)); dw = sum over rows of dout n; db = sum of dout. All three
// accumulate (compute.h). mean and rstd are the inputs the device is given.
void ref_layernorm_backward(const Vec& dout, const Vec& x, const Vec& w, const Vec& mean, const Vec& rstd, int N, int C,
                            Ref* dx, Ref* dw, Ref* db) {
  for (int i = 0; i < N; ++i) {
    const size_t o = size_t(i) * C;
    const double mu = mean[size_t(i)], r = rstd[size_t(i)];
    double g_mean = 0, gn_mean = 0;
    for (int c = 0; c < C; ++c) {
      const double n = (x[o + c] - mu) * r, g = double(dout[o + c]) * w[size_t(c)];
      g_mean += g;
      gn_mean += g * n;
    }
    g_mean /= C;
    gn_mean /= C;
    for (int c = 0; c < C; ++c) {
      const double n = (x[o + c] - mu) * r, g = double(dout[o + c]) * w[size_t(c)];
      (*dx)[o + c] += r * (g - g_mean - n * gn_mean);
      (*dw)[size_t(c)] += double(dout[o + c]) * n;
      (*db)[size_t(c)] += dout[o + c];
    }
  }
}

// GELU, tanh form (Hendrycks & Gimpel 2016, Sec. 2): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), and its
// derivative 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2).
constexpr double kSqrt2OverPi = 0.79788456080286535588;
double ref_gelu(double x) { return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x))); }
double ref_gelu_grad(double x) {
  const double t = std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3.0 * 0.044715 * x * x);
}

// Causal self-attention (Vaswani et al. 2017, Eq. 1, with GPT's causal mask): per sequence b and head h,
// S = q k^T / sqrt(hs) over keys j <= i, P = softmax(S) by rows, out = P v. Backward through the same:
// dv = P^T dout, dP = dout v^T, dS = P * (dP - rowsum(dP * P)) (the softmax Jacobian), dq = dS k / sqrt(hs),
// dk = dS^T q / sqrt(hs). qkv(B,T,3D) = [q | k | v], head h at columns h*hs; out(B,T,D), D = Hl*hs.
void ref_attention(const Vec& qkv, const Vec& dout, int B, int T, int Hl, int hs, Ref* out, Ref* dqkv) {
  const int D = Hl * hs;
  const double scale = 1.0 / std::sqrt(double(hs));
  out->assign(size_t(B) * T * D, 0.0);
  dqkv->assign(size_t(B) * T * 3 * D, 0.0);
  auto q = [&](int b, int t, int h, int d) { return double(qkv[(size_t(b) * T + t) * 3 * D + h * hs + d]); };
  auto k = [&](int b, int t, int h, int d) { return double(qkv[(size_t(b) * T + t) * 3 * D + D + h * hs + d]); };
  auto v = [&](int b, int t, int h, int d) { return double(qkv[(size_t(b) * T + t) * 3 * D + 2 * D + h * hs + d]); };
  auto dy = [&](int b, int t, int h, int d) { return double(dout[(size_t(b) * T + t) * D + h * hs + d]); };
  auto dq = [&](int b, int t, int h, int d) -> double& { return (*dqkv)[(size_t(b) * T + t) * 3 * D + h * hs + d]; };
  auto dk = [&](int b, int t, int h, int d) -> double& {
    return (*dqkv)[(size_t(b) * T + t) * 3 * D + D + h * hs + d];
  };
  auto dv = [&](int b, int t, int h, int d) -> double& {
    return (*dqkv)[(size_t(b) * T + t) * 3 * D + 2 * D + h * hs + d];
  };
  std::vector<double> P(size_t(T) * T), dS(size_t(T) * T);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hl; ++h) {
      std::fill(P.begin(), P.end(), 0.0);
      for (int i = 0; i < T; ++i) {
        double mx = -INFINITY;
        for (int j = 0; j <= i; ++j) {
          double s = 0;
          for (int d = 0; d < hs; ++d) s += q(b, i, h, d) * k(b, j, h, d);
          P[size_t(i) * T + j] = s * scale;
          mx = std::max(mx, s * scale);
        }
        double sum = 0;
        for (int j = 0; j <= i; ++j) sum += (P[size_t(i) * T + j] = std::exp(P[size_t(i) * T + j] - mx));
        for (int j = 0; j <= i; ++j) P[size_t(i) * T + j] /= sum;
        for (int d = 0; d < hs; ++d) {
          double o = 0;
          for (int j = 0; j <= i; ++j) o += P[size_t(i) * T + j] * v(b, j, h, d);
          (*out)[(size_t(b) * T + i) * D + h * hs + d] = o;
        }
      }
      for (int i = 0; i < T; ++i) {
        double row = 0;  // rowsum(dP * P)
        for (int j = 0; j <= i; ++j) {
          double dp = 0;
          for (int d = 0; d < hs; ++d) dp += dy(b, i, h, d) * v(b, j, h, d);
          dS[size_t(i) * T + j] = dp;
          row += dp * P[size_t(i) * T + j];
        }
        for (int j = 0; j <= i; ++j) dS[size_t(i) * T + j] = P[size_t(i) * T + j] * (dS[size_t(i) * T + j] - row);
      }
      for (int i = 0; i < T; ++i)
        for (int j = 0; j <= i; ++j)
          for (int d = 0; d < hs; ++d) {
            dv(b, j, h, d) += P[size_t(i) * T + j] * dy(b, i, h, d);
            dq(b, i, h, d) += dS[size_t(i) * T + j] * k(b, j, h, d) * scale;
            dk(b, j, h, d) += dS[size_t(i) * T + j] * q(b, i, h, d) * scale;
          }
    }
}

// y(N,M) = x(N,K) w(K,M) + bias (w stored input-major: K rows of M).
Ref ref_linear_forward(const Vec& x, const Vec& w, const float* bias, int N, int K, int M) {
  Ref y(size_t(N) * M);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < M; ++j) {
      double s = bias ? double(bias[j]) : 0.0;
      for (int l = 0; l < K; ++l) s += double(x[size_t(i) * K + l]) * w[size_t(l) * M + j];
      y[size_t(i) * M + j] = s;
    }
  return y;
}

// ---- the fp32 suite ------------------------------------------------------------------------------------------

class DeviceConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    dev_ = open_kind(GetParam(), &why);
    if (!dev_) GTEST_SKIP() << GetParam() << " does not open here: " << why;
    dev_->set_precision(Precision::fp32);
    ops_ = std::make_unique<HostOps>(*dev_);
    ops_->set_upload_outputs(true);
  }
  HostOps& ops() { return *ops_; }
  Device& device() { return *dev_; }
  template <class G>
  void check(const Ref& ref, const std::vector<G>& got, double atol, double rtol, const std::string& what) {
    expect_matches(dev_->name(), ref, got, atol, rtol, what);
  }

 private:
  std::unique_ptr<Device> dev_;
  std::unique_ptr<HostOps> ops_;
};

TEST_P(DeviceConformance, LayerNormForwardBackward) {
  // Tolerances: C = 12 sums in fp32, values O(1): 1e-5 relative + 1e-5 absolute (1e-6 for the mean). dx is
  // r times a difference of O(1) terms: 1e-5 absolute where r is O(1), 1e-3 on the near-constant row, where r
  // is ~300 (a few fp32 ulps of its O(1) terms, times r).
  const int N = 7, C = 12;
  Rand r(101);
  Vec x = r.vec(size_t(N) * C, -2, 2);
  // Row 0 nearly constant: its variance (~3e-7) is far below eps, so the output pins eps's value and place
  // (inside the square root), and the biased variance (1/C, not 1/(C-1)) shows on the other rows.
  for (int c = 0; c < C; ++c) x[size_t(c)] = r.uniform(-1e-3f, 1e-3f);
  const Vec w = r.vec(size_t(C), 0.5f, 1.5f), b = r.vec(size_t(C));
  Ref out, mean, rstd;
  ref_layernorm_forward(x, w, b, N, C, &out, &mean, &rstd);
  Vec o(size_t(N) * C, kGarbage), m(size_t(N), kGarbage), s(size_t(N), kGarbage);
  ops().layernorm_forward(o.data(), m.data(), s.data(), x.data(), w.data(), b.data(), N, C);
  check(out, o, 1e-5, 1e-5, "layernorm out");
  check(mean, m, 1e-6, 1e-5, "layernorm mean");
  check(rstd, s, 1e-5, 1e-5, "layernorm rstd");

  // Backward accumulates into what dx, dw, db already hold; it is given the reference's mean and rstd (in
  // fp32), so it is checked apart from the forward.
  const Vec dout = r.vec(size_t(N) * C), dx0 = r.vec(size_t(N) * C), dw0 = r.vec(size_t(C)), db0 = r.vec(size_t(C));
  const Vec mf = to_float(mean), sf = to_float(rstd);
  Ref dx = to_ref(dx0), dw = to_ref(dw0), db = to_ref(db0);
  ref_layernorm_backward(dout, x, w, mf, sf, N, C, &dx, &dw, &db);
  Vec gdx = dx0, gdw = dw0, gdb = db0;
  ops().layernorm_backward(gdx.data(), gdw.data(), gdb.data(), dout.data(), x.data(), w.data(), mf.data(), sf.data(), N,
                           C);
  const auto row0 = [&](const auto& v) { return std::vector(v.begin(), v.begin() + C); };
  const auto rest = [&](const auto& v) { return std::vector(v.begin() + C, v.end()); };
  check(row0(dx), row0(gdx), 1e-3, 1e-5, "layernorm dx (+=), row r~300");
  check(rest(dx), rest(gdx), 1e-5, 1e-5, "layernorm dx (+=), other rows");
  check(dw, gdw, 1e-5, 1e-5, "layernorm dw (+=)");
  check(db, gdb, 1e-5, 1e-5, "layernorm db (+=)");
}

TEST_P(DeviceConformance, GeluForwardBackward) {
  // Tolerances 1e-5 relative (fp32 tanh and exp are within a few ulps) plus an absolute term. Forward 2e-6:
  // for negative x, 1 + tanh cancels, so the error is |x|/2 (up to 3) times tanh's near -1, a few ulps of 6e-8
  // (~7e-7 measured on the CPU, at x = -4.8). Backward, in its cancellation-free form: 1e-6. The large |x|
  // check the saturation.
  Rand r(102);
  Vec x = r.vec(1001, -6, 6);
  for (float v : {0.0f, 1e-4f, -1e-4f, 0.5f, -0.5f, 3.0f, -3.0f, 10.0f, -10.0f, 20.0f, -20.0f}) x.push_back(v);
  const int64_t n = int64_t(x.size());
  const Vec dout = r.vec(x.size());
  Ref y(x.size()), dx(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    y[i] = ref_gelu(x[i]);
    dx[i] = dout[i] * ref_gelu_grad(x[i]);
  }
  Vec gy(x.size(), kGarbage), gdx(x.size(), kGarbage);
  ops().gelu_forward(gy.data(), x.data(), n);
  check(y, gy, 2e-6, 1e-5, "gelu forward");
  ops().gelu_backward(gdx.data(), x.data(), dout.data(), n);
  check(dx, gdx, 1e-6, 1e-5, "gelu backward");

  // dx may alias dout (compute.h): the trainer overwrites the upstream gradient in place.
  Device& d = device();
  mc::device::Buffer<float> bx(d, n), bd(d, n);
  d.upload(bx.ptr(), x.data(), n);
  d.upload(bd.ptr(), dout.data(), n);
  d.gelu_backward(bd.ptr(), bx.ptr(), bd.ptr(), n);
  Vec in_place(x.size());
  d.download(in_place.data(), mc::device::DPtr<const float>(bd.ptr()), n);
  check(dx, in_place, 1e-6, 1e-5, "gelu backward (dx aliases dout)");
}

TEST_P(DeviceConformance, CausalAttentionForwardBackward) {
  // Only out and dqkv are compared: the state between forward and backward is the device's own (the CPU keeps
  // the probabilities, a fused GPU kernel each row's log-sum-exp). Tolerances: out 1e-5 + 1e-4 relative
  // (softmax and products over T and hs in fp32), dqkv 1e-5 + 1e-3 relative (two more products and the
  // softmax Jacobian's cancellation).
  struct Shape {
    int B, T, Hl, hs;
  };
  Rand r(103);
  // hs 4: every device's general path; hs 16 with T 37: a GPU's fused kernels, T not a multiple of a tile.
  for (const Shape sh : {Shape{2, 5, 2, 4}, Shape{1, 37, 2, 16}}) {
    const int D = sh.Hl * sh.hs;
    const Vec qkv = r.vec(size_t(sh.B) * sh.T * 3 * D), dout = r.vec(size_t(sh.B) * sh.T * D);
    Ref out, dqkv;
    ref_attention(qkv, dout, sh.B, sh.T, sh.Hl, sh.hs, &out, &dqkv);
    Vec o(size_t(sh.B) * sh.T * D, kGarbage);
    Vec state(size_t(ops().attention_state_floats(sh.B, sh.T, sh.Hl, sh.hs)), 0.0f);  // the device's own
    ops().attention_forward(o.data(), state.data(), qkv.data(), sh.B, sh.T, sh.Hl, sh.hs);
    const std::string tag = " B=" + std::to_string(sh.B) + " T=" + std::to_string(sh.T) +
                            " Hl=" + std::to_string(sh.Hl) + " hs=" + std::to_string(sh.hs);
    check(out, o, 1e-5, 1e-4, "attention out" + tag);
    Vec g(qkv.size(), kGarbage);  // overwritten, not added to
    ops().attention_backward(g.data(), dout.data(), qkv.data(), o.data(), state.data(), sh.B, sh.T, sh.Hl, sh.hs);
    check(dqkv, g, 1e-5, 1e-3, "attention dqkv" + tag);
  }
}

TEST_P(DeviceConformance, LinearForwardBackward) {
  // Tolerance 1e-5 absolute + 1e-5 relative: sums of K or N = 7..13 fp32 products of O(1) values.
  const int N = 7, K = 13, M = 9;
  Rand r(104);
  const Vec x = r.vec(size_t(N) * K), w = r.vec(size_t(K) * M), bias = r.vec(size_t(M)), dy = r.vec(size_t(N) * M);
  for (const bool with_bias : {true, false}) {
    const float* bp = with_bias ? bias.data() : nullptr;
    Vec y(size_t(N) * M, kGarbage);
    ops().linear_forward(y.data(), x.data(), w.data(), bp, N, K, M);
    check(ref_linear_forward(x, w, bp, N, K, M), y, 1e-5, 1e-5, with_bias ? "linear y (bias)" : "linear y");
  }
  // dw += x^T dy, db += colsum(dy), dx = dy w^T or dx += dy w^T.
  for (const bool acc : {false, true}) {
    const Vec dx0 = acc ? r.vec(size_t(N) * K) : Vec(size_t(N) * K, kGarbage);
    const Vec dw0 = r.vec(size_t(K) * M), db0 = r.vec(size_t(M));
    Ref dx = acc ? to_ref(dx0) : Ref(dx0.size(), 0.0), dw = to_ref(dw0), db = to_ref(db0);
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < M; ++j) {
        const double g = dy[size_t(i) * M + j];
        db[size_t(j)] += g;
        for (int l = 0; l < K; ++l) {
          dw[size_t(l) * M + j] += double(x[size_t(i) * K + l]) * g;
          dx[size_t(i) * K + l] += g * w[size_t(l) * M + j];
        }
      }
    Vec gdx = dx0, gdw = dw0, gdb = db0;
    ops().linear_backward(gdx.data(), gdw.data(), gdb.data(), dy.data(), x.data(), w.data(), N, K, M, acc);
    check(dx, gdx, 1e-5, 1e-5, acc ? "linear dx (+=)" : "linear dx (=)");
    check(dw, gdw, 1e-5, 1e-5, "linear dw (+=)");
    check(db, gdb, 1e-5, 1e-5, "linear db (+=)");
  }
}

TEST_P(DeviceConformance, SgemmAllTransposesPaddedAndAccumulated) {
  // Row-major C(M,N) (+)= op(A) op(B) with leading dimensions wider than the rows (compute.h; the BLAS
  // definition, Dongarra et al. 1990, on row-major storage). The padding between C's rows must come back
  // untouched. Tolerance 1e-5 absolute + 1e-5 relative: K = 9 fp32 products of O(1) values.
  const int M = 7, N = 5, K = 9;
  Rand r(105);
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int acc = 0; acc < 2; ++acc) {
        const int lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 2, ldc = N + 4;
        const Vec A = r.vec(size_t(mc::test::matrix_span(ta ? K : M, ta ? M : K, lda)));
        const Vec B = r.vec(size_t(mc::test::matrix_span(tb ? N : K, tb ? K : N, ldb)));
        const Vec C0 = r.vec(size_t(mc::test::matrix_span(M, N, ldc)));
        Ref want = to_ref(C0);
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) {
            double s = acc ? double(C0[size_t(i) * ldc + j]) : 0.0;
            for (int l = 0; l < K; ++l) {
              const double a = ta ? A[size_t(l) * lda + i] : A[size_t(i) * lda + l];
              const double b = tb ? B[size_t(j) * ldb + l] : B[size_t(l) * ldb + j];
              s += a * b;
            }
            want[size_t(i) * ldc + j] = s;
          }
        Vec got = C0;
        ops().sgemm(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, got.data(), ldc, acc);
        check(want, got, 1e-5, 1e-5,
              "sgemm ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) + " acc=" + std::to_string(acc));
      }
}

TEST_P(DeviceConformance, SoftmaxCrossEntropyForwardBackward) {
  // p = softmax(logits) by rows, loss = sum over rows of -log p[target] (nats), added to *loss_sum in double;
  // backward (p - onehot(target)) * scale in place. Tolerances: probabilities 1e-7 absolute + 1e-5 relative
  // (fp32 exp and a sum over V = 11); the loss 1e-5 relative (each row's -log of an fp32 probability);
  // backward 1e-7 absolute + 1e-5 relative (p - 1 cancels near p = 1).
  const int N = 7, V = 11;
  Rand r(106);
  const Vec logits = r.vec(size_t(N) * V, -8, 8);
  std::vector<int32_t> t = r.ints(size_t(N), V);
  t[1] = int32_t(V - 1);  // the last class too
  Ref p(logits.size());
  double loss = 0.25;  // *loss_sum accumulates
  for (int i = 0; i < N; ++i) {
    const size_t o = size_t(i) * V;
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < V; ++j) mx = std::max(mx, double(logits[o + j]));
    for (int j = 0; j < V; ++j) sum += std::exp(logits[o + j] - mx);
    for (int j = 0; j < V; ++j) p[o + j] = std::exp(logits[o + j] - mx) / sum;
    loss += -std::log(p[o + size_t(t[size_t(i)])]);
  }
  Vec probs = logits;
  std::vector<double> got_loss{0.25};
  ops().softmax_xent_forward(probs.data(), t.data(), got_loss.data(), N, V);
  check(p, probs, 1e-7, 1e-5, "softmax probabilities");
  check(Ref{loss}, got_loss, 0.0, 1e-5, "cross-entropy loss sum (+=)");
  Vec probs_no_loss = logits;  // a null loss_sum is allowed: only the probabilities
  ops().softmax_xent_forward(probs_no_loss.data(), t.data(), nullptr, N, V);
  check(p, probs_no_loss, 1e-7, 1e-5, "softmax probabilities (no loss)");

  // Backward from the reference's probabilities (in fp32), so it is checked apart from the forward.
  const float scale = 1.0f / float(N);
  Vec g = to_float(p);
  Ref dlogits(g.size());
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < V; ++j) {
      const size_t e = size_t(i) * V + j;
      dlogits[e] = (double(g[e]) - (j == t[size_t(i)] ? 1.0 : 0.0)) * scale;
    }
  ops().softmax_xent_backward(g.data(), t.data(), N, V, scale);
  check(dlogits, g, 1e-7, 1e-5, "cross-entropy backward");
}

TEST_P(DeviceConformance, TargetsAndEmbeddingForwardBackward) {
  // tokens: B rows of T + 1 ids. targets = each row shifted by one (the next token to predict); out =
  // wte[token] + wpe[position] (learned token and position embeddings, Radford et al. 2018, Eq. 2:
  // h0 = U We + Wp); backward scatters dout into both, adding where a token repeats.
  const int B = 2, T = 5, C = 12, V = 11;
  Rand r(107);
  std::vector<int32_t> tok = r.ints(size_t(B) * (T + 1), V);
  tok[2] = tok[0];  // repeats within a row and across rows: the backward must add, not store
  tok[size_t(T) + 1 + 3] = tok[0];
  std::vector<int32_t> want_t(size_t(B) * T), got_t(size_t(B) * T, -1);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) want_t[size_t(b) * T + t] = tok[size_t(b) * (T + 1) + t + 1];
  ops().targets_from_tokens(got_t.data(), tok.data(), B, T);
  EXPECT_EQ(want_t, got_t) << device().name() << ": targets_from_tokens";

  // Forward: one fp32 addition per element, correctly rounded (IEEE 754): the reference is the exact sum
  // rounded once to fp32, and the device must give it to the bit (tolerance 0).
  const Vec wte = r.vec(size_t(V) * C), wpe = r.vec(size_t(T) * C);
  Ref out(size_t(B) * T * C);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < C; ++c)
        out[(size_t(b) * T + t) * C + c] =
            float(double(wte[size_t(tok[size_t(b) * (T + 1) + t]) * C + c]) + wpe[size_t(t) * C + c]);
  Vec got(out.size(), kGarbage);
  ops().embedding_forward(got.data(), wte.data(), wpe.data(), tok.data(), B, T, C, V);
  check(out, got, 0.0, 0.0, "embedding forward");

  // Backward accumulates onto gradients that already hold something. Tolerance 1e-6 absolute + 1e-6
  // relative: at most B*T = 10 fp32 additions per element.
  const Vec dout = r.vec(size_t(B) * T * C), dwte0 = r.vec(size_t(V) * C), dwpe0 = r.vec(size_t(T) * C);
  Ref dwte = to_ref(dwte0), dwpe = to_ref(dwpe0);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < C; ++c) {
        const double g = dout[(size_t(b) * T + t) * C + c];
        dwte[size_t(tok[size_t(b) * (T + 1) + t]) * C + c] += g;
        dwpe[size_t(t) * C + c] += g;
      }
  Vec gwte = dwte0, gwpe = dwpe0;
  ops().embedding_backward(gwte.data(), gwpe.data(), dout.data(), tok.data(), B, T, C, V);
  check(dwte, gwte, 1e-6, 1e-6, "embedding dwte (+=)");
  check(dwpe, gwpe, 1e-6, 1e-6, "embedding dwpe (+=)");
}

TEST_P(DeviceConformance, ResidualAndAdd) {
  // residual: out = x + (part + bias) row by row; add: dst += src. add is one correctly rounded fp32
  // addition (tolerance 0 against the exact sum rounded once); residual two (1e-6 absolute on |values| < 3).
  const int N = 7, C = 12;
  Rand r(108);
  const Vec x = r.vec(size_t(N) * C), part = r.vec(size_t(N) * C), bias = r.vec(size_t(C));
  Ref want(x.size());
  for (int i = 0; i < N; ++i)
    for (int c = 0; c < C; ++c) {
      const size_t e = size_t(i) * C + c;
      want[e] = double(x[e]) + part[e] + bias[size_t(c)];
    }
  Vec got(x.size(), kGarbage);
  ops().residual(got.data(), x.data(), part.data(), bias.data(), N, C);
  check(want, got, 1e-6, 0.0, "residual");

  const int64_t n = 1001;
  const Vec dst0 = r.vec(size_t(n)), src = r.vec(size_t(n));
  Ref sum(static_cast<size_t>(n));
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = float(double(dst0[i]) + src[i]);
  Vec dst = dst0;
  ops().add(dst.data(), src.data(), n);
  check(sum, dst, 0.0, 0.0, "add");
}

TEST_P(DeviceConformance, SumSquaresAccumulatesInDouble) {
  // *acc += sum of x^2, in double (compute.h). Tolerance 1e-11 relative: what double accumulation of 70001
  // terms allows, and ~1e4 times tighter than an fp32 accumulation would meet, so the test pins the
  // double. 70001 elements: more than one of the CPU's 32768-element pieces.
  Rand r(109);
  const int64_t n = 70001;
  const Vec x = r.vec(size_t(n));
  double want = 0.5;  // accumulates onto what acc holds
  for (const float v : x) want += double(v) * double(v);
  std::vector<double> acc{0.5};
  ops().sum_squares(acc.data(), x.data(), n);
  check(Ref{want}, acc, 0.0, 1e-11, "sum of squares (+=)");
}

TEST_P(DeviceConformance, AdamW) {
  // AdamW (Loshchilov & Hutter 2019, Alg. 2, decoupled weight decay) as compute.h states it: g = grads *
  // grad_scale; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t)
  // (the corrections passed as their reciprocals); params -= lr * (m_hat / (sqrt(v_hat) + eps) + wd params).
  // Three steps, the reference in double throughout. Tolerances: params 2e-7 absolute + 1e-6 relative (a few
  // fp32 roundings of O(1) values), m 1e-8 + 1e-6 (m ~ 1e-2 cancels: ulps of 1e-9), v 1e-12 + 1e-6.
  Rand r(110);
  const int64_t n = 1003;
  const Vec g = r.vec(size_t(n), -0.1f, 0.1f);
  Vec p = r.vec(size_t(n)), m = r.vec(size_t(n), -0.01f, 0.01f), v = r.vec(size_t(n), 0.0f, 1e-3f);
  Vec gg = g;
  for (int i = 0; i < 5; ++i) {  // fresh moments of tiny gradients: there eps decides the step's size
    gg[size_t(i)] = (i % 2 ? -1.0f : 1.0f) * 1e-8f * float(i + 1);
    m[size_t(i)] = 0;
    v[size_t(i)] = 0;
  }
  gg[5] = 0;  // no gradient: only the decay moves it
  const float lr = 3e-3f, b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.1f, gs = 0.5f;
  Ref rp = to_ref(p), rm = to_ref(m), rv = to_ref(v);
  for (int t = 1; t <= 3; ++t) {
    const float c1 = float(1.0 / (1.0 - std::pow(double(b1), t))), c2 = float(1.0 / (1.0 - std::pow(double(b2), t)));
    for (size_t i = 0; i < rp.size(); ++i) {
      const double gi = double(gg[i]) * gs;
      rm[i] = double(b1) * rm[i] + (1.0 - double(b1)) * gi;
      rv[i] = double(b2) * rv[i] + (1.0 - double(b2)) * gi * gi;
      const double mh = rm[i] * c1, vh = rv[i] * c2;
      rp[i] -= double(lr) * (mh / (std::sqrt(vh) + eps) + double(wd) * rp[i]);
    }
    ops().adamw(p.data(), gg.data(), m.data(), v.data(), n, lr, b1, b2, c1, c2, eps, wd, gs);
  }
  check(rp, p, 2e-7, 1e-6, "adamw params (3 steps)");
  check(rm, m, 1e-8, 1e-6, "adamw m");
  check(rv, v, 1e-12, 1e-6, "adamw v");
}

INSTANTIATE_TEST_SUITE_P(, DeviceConformance, ::testing::ValuesIn(kind_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return test_name_of(info.param); });

// ---- reduced precisions ----------------------------------------------------------------------------------------

// One kind and one of the reduced precisions it lists.
struct KindPrecision {
  std::string kind;
  Precision precision;
};
void PrintTo(const KindPrecision& k, std::ostream* os) { *os << k.kind << "/" << mc::device::to_string(k.precision); }

std::vector<KindPrecision> reduced_precisions() {
  std::vector<KindPrecision> all;
  for (const DeviceKind& k : mc::device::device_kinds())
    for (const Precision p : k.precisions)
      if (p != Precision::fp32) all.push_back({k.name, p});
  return all;
}

class DeviceConformancePrecision : public ::testing::TestWithParam<KindPrecision> {};

// The mantissa bits a precision drops from an fp32 input (compute.h: tf32 keeps 10 of 23, bf16 7).
int dropped_bits(Precision p) { return p == Precision::tf32 ? 13 : p == Precision::bf16 ? 16 : 0; }

// x with the bits the precision drops set to `frac` of its last kept bit.
float with_dropped_fraction(float x, int drop, double frac) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u &= ~((1u << drop) - 1u);
  u |= uint32_t(frac * double(1u << drop));
  std::memcpy(&x, &u, sizeof x);
  return x;
}

TEST_P(DeviceConformancePrecision, LinearForwardRoundsItsInputs) {
  // A linear forward at tf32 or bf16 is the product of the inputs rounded to that format (round_to, compute.h:
  // nearest, ties to even), accumulated in fp32, plus the bias in fp32. The reference multiplies the rounded
  // inputs in double. Tolerance per element: 2 K 2^-24 (|bias| + sum |x w|), twice the worst case of fp32
  // accumulation (products of tf32 or bf16 values are exact in fp32), plus 1e-7.
  // tf32 inputs drop between 0.3 and 0.45 of their last kept bit, so every rounding rule (nearest, or the
  // truncation tensor cores may apply to fp32 operands) agrees; bf16 inputs are random, so nearest is checked.
  // The unrounded product must miss this tolerance by far, or the test could not tell the two apart.
  const KindPrecision kp = GetParam();
  std::string why;
  const std::unique_ptr<Device> dev = open_kind(kp.kind, &why);
  if (!dev) GTEST_SKIP() << kp.kind << " does not open here: " << why;
  dev->set_precision(kp.precision);
  HostOps ops(*dev);
  ops.set_upload_outputs(true);

  const int N = 31, K = 32, M = 24;  // K, M multiples of 8: shapes a GPU runs on its tensor cores
  const int drop = dropped_bits(kp.precision);
  Rand r(111);
  Vec x = r.vec(size_t(N) * K), w = r.vec(size_t(K) * M);
  const Vec bias = r.vec(size_t(M));
  if (kp.precision == Precision::tf32) {
    for (float& e : x) e = with_dropped_fraction(e, drop, 0.3 + 0.15 * r.uniform(0, 1));
    for (float& e : w) e = with_dropped_fraction(e, drop, 0.3 + 0.15 * r.uniform(0, 1));
  }
  Vec xr = x, wr = w;
  for (float& e : xr) e = mc::device::round_to(kp.precision, e);
  for (float& e : wr) e = mc::device::round_to(kp.precision, e);
  const Ref want = ref_linear_forward(xr, wr, bias.data(), N, K, M);
  const Ref unrounded = ref_linear_forward(x, w, bias.data(), N, K, M);
  Vec got(size_t(N) * M, kGarbage);
  ops.linear_forward(got.data(), x.data(), w.data(), bias.data(), N, K, M);

  const char* name = mc::device::to_string(kp.precision);
  double max_err = 0, max_ratio = 0, max_unrounded_ratio = 0;
  size_t bad = 0, unrounded_out = 0;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < M; ++j) {
      double mag = std::fabs(double(bias[size_t(j)]));
      for (int l = 0; l < K; ++l) mag += std::fabs(double(xr[size_t(i) * K + l]) * wr[size_t(l) * M + j]);
      const double tol = 2.0 * K * std::ldexp(1.0, -24) * mag + 1e-7;
      const size_t e = size_t(i) * M + j;
      const double err = std::fabs(double(got[e]) - want[e]);
      max_err = std::max(max_err, err);
      max_ratio = std::max(max_ratio, err / tol);
      if (!(err <= tol)) ++bad;
      const double u = std::fabs(unrounded[e] - want[e]) / tol;
      max_unrounded_ratio = std::max(max_unrounded_ratio, u);
      if (u > 1) ++unrounded_out;
    }
  EXPECT_EQ(bad, 0u) << dev->name() << " at " << name << ": " << bad << " of " << N * M
                     << " outputs are not the product of inputs rounded to " << name << " (worst at " << max_ratio
                     << " times the tolerance)";
  EXPECT_GT(max_unrounded_ratio, 10.0) << "the inputs do not tell rounded products from unrounded ones";
  EXPECT_GT(unrounded_out, size_t(N) * M / 2) << "the inputs do not tell rounded products from unrounded ones";
  std::printf(
      "    [%s] linear y at %s: n=%d max abs err %.3g, %.3g of the tolerance; unrounded products would miss it "
      "at %zu of %d outputs, by up to %.3g times\n",
      dev->name(), name, N * M, max_err, max_ratio, unrounded_out, N * M, max_unrounded_ratio);
}

INSTANTIATE_TEST_SUITE_P(, DeviceConformancePrecision, ::testing::ValuesIn(reduced_precisions()),
                         [](const ::testing::TestParamInfo<KindPrecision>& info) {
                           return test_name_of(info.param.kind + "_" + mc::device::to_string(info.param.precision));
                         });
// A build whose kinds list no reduced precision generates no test here, and that is not an error.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DeviceConformancePrecision);

}  // namespace
