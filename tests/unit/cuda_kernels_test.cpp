// The CUDA device against the CPU reference device (device/compute.h; engine/train/kernels/cpu_device.cpp),
// kernel by kernel and for a whole transformer-block step, through a host-vector adapter of the device
// interface (HostOps, device_host_ops.h: upload, run, download). The GPU is the first registered device kind
// other than the reference that opens (device/registry.h); without one, or in a build without CUDA, the GPU
// tests skip with the kinds' reasons. What can be checked without a GPU runs everywhere: the row-major ->
// column-major cuBLAS argument mapping (against a BLAS-semantics reference), the CPU table, and the
// whole-step harness itself (against finite differences), so a GPU run compares the GPU with a harness
// already known to be right. Every device, the CPU included, is also held to naive references kernel by
// kernel in device_conformance_test.cpp.
#include "attention_check.h"
#include "cuda/train_kernels.h"  // plain C++ (no CUDA types): the mapping helpers are tested in every build
#include "device/registry.h"
#include "device_host_ops.h"
#include "train/kernels/cpu_device.h"
#include "train/kernels/gemm.h"
#include "train/kernels/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

using mc::device::Device;
using mc::test::expect_close;
using mc::test::HostOps;
using mc::test::Rand;
using mc::test::Vec;

float bias_correction(double beta, int t) { return float(1.0 / (1.0 - std::pow(beta, double(t)))); }

mc::train::CpuDevice& cpu_device() {
  static mc::train::CpuDevice d;
  return d;
}

// The first registered kind other than the reference (the CPU) that opens a device, or nullptr and *why
// listing each kind's reason (no GPU, no driver, cuBLAS not loadable; none registered: built without CUDA).
std::unique_ptr<Device> open_gpu(std::string* why) {
  std::string reasons;
  for (const mc::device::DeviceKind& k : mc::device::device_kinds()) {
    if (k.reference) continue;
    std::string r;
    if (std::unique_ptr<Device> d = k.open(&r)) return d;
    reasons += (reasons.empty() ? "" : "; ") + k.name + ": " + (r.empty() ? "refused without a reason" : r);
  }
  *why = reasons.empty() ? "no device kind other than the CPU reference is registered (built without CUDA)" : reasons;
  return nullptr;
}

// The GPU device or a skip with the reason.
#define REQUIRE_GPU(var)                                          \
  std::string why_##var;                                          \
  const std::unique_ptr<Device> var##_dev = open_gpu(&why_##var); \
  if (!var##_dev) GTEST_SKIP() << why_##var;                      \
  HostOps var##_ops(*var##_dev);                                  \
  HostOps* var = &var##_ops;

// ---- runs everywhere ----------------------------------------------------------------------------------

// cublasSgemm's documented semantics, column-major: C(m,n) = op(A) op(B) + beta C.
void colmajor_reference(const mc::cuda::ColMajorGemm& g, float* C, int ldc) {
  for (int j = 0; j < g.n; ++j)
    for (int i = 0; i < g.m; ++i) {
      double s = 0;
      for (int l = 0; l < g.k; ++l) {
        const float a = g.trans_first ? g.first[l + int64_t(i) * g.ld_first] : g.first[i + int64_t(l) * g.ld_first];
        const float b =
            g.trans_second ? g.second[j + int64_t(l) * g.ld_second] : g.second[l + int64_t(j) * g.ld_second];
        s += double(a) * b;
      }
      float& c = C[i + int64_t(j) * ldc];
      c = float(s + double(g.beta) * c);
    }
}

TEST(CudaHostLogic, RowMajorGemmMapsOntoColumnMajorCublas) {
  // Every transpose combination, padded leading dimensions, with and without accumulation: the arguments
  // handed to cuBLAS, run through cuBLAS's column-major semantics, give mc::train::sgemm's answer.
  Rand r(11);
  const int M = 7, N = 5, K = 9;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int acc = 0; acc < 2; ++acc) {
        const int lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 2, ldc = N + 4;
        const Vec A = r.vec(static_cast<size_t>(mc::cuda::rowmajor_span(ta ? K : M, ta ? M : K, lda)));
        const Vec B = r.vec(static_cast<size_t>(mc::cuda::rowmajor_span(tb ? N : K, tb ? K : N, ldb)));
        const Vec C0 = r.vec(static_cast<size_t>(M) * ldc);
        Vec ref = C0, got = C0;
        mc::train::sgemm(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, ref.data(), ldc, acc);
        const auto g = mc::cuda::colmajor_gemm_for_rowmajor(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, acc);
        EXPECT_EQ(g.m, N);
        EXPECT_EQ(g.n, M);
        colmajor_reference(g, got.data(), ldc);
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j)
            EXPECT_NEAR(ref[size_t(i) * ldc + j], got[size_t(i) * ldc + j], 1e-5f)
                << "ta " << ta << " tb " << tb << " acc " << acc << " at " << i << "," << j;
        for (int i = 0; i < M; ++i)  // padding between C's rows untouched
          for (int j = N; j < ldc && int64_t(i) * ldc + j < int64_t(ref.size()); ++j)
            EXPECT_EQ(got[size_t(i) * ldc + j], C0[size_t(i) * ldc + j]);
      }
  EXPECT_EQ(mc::cuda::rowmajor_span(3, 4, 10), 24);
  EXPECT_EQ(mc::cuda::rowmajor_span(0, 4, 10), 0);
}

TEST(CudaHostLogic, DevicesAreNamedOrExplained) {
  // The reference always opens, as "cpu"; every other registered kind either opens a device that carries its
  // kind's name or says why not.
  EXPECT_STREQ(cpu_device().name(), "cpu");
  const mc::device::DeviceKind& ref = mc::device::reference_device_kind();
  EXPECT_TRUE(ref.reference);
  std::string ref_why;
  const std::unique_ptr<Device> ref_dev = ref.open(&ref_why);
  ASSERT_NE(ref_dev, nullptr) << "the reference refused: " << ref_why;
  EXPECT_STREQ(ref_dev->name(), "cpu");
  EXPECT_EQ(ref.name, "cpu");
  int others = 0;
  for (const mc::device::DeviceKind& k : mc::device::device_kinds()) {
    if (k.reference) continue;
    ++others;
    EXPECT_EQ(mc::device::find_device_kind(k.name), &k) << k.name;
    std::string why;
    const std::unique_ptr<Device> dev = k.open(&why);
    if (dev) {
      EXPECT_EQ(std::string(dev->name()), k.name);
      std::printf("    %s device: %s\n", k.name.c_str(), dev->description().c_str());
    } else {
      EXPECT_FALSE(why.empty()) << k.name << " refused without a reason";  // the reason the CPU is used
      std::printf("    no %s device: %s\n", k.name.c_str(), why.c_str());
    }
  }
  if (others == 0) std::printf("    no device kind other than the CPU reference is registered\n");
}

TEST(CudaHostLogic, AdamWReferenceFollowsTheFormula) {
  // One element by hand (Loshchilov & Hutter 2019, Alg. 2), first step: m = (1-b1) g, v = (1-b2) g^2,
  // bias-corrected m_hat = g, v_hat = g^2, so the step is lr * (sign(g) * |g|/(|g|+eps) + wd p).
  float p = 0.5f, m = 0, v = 0;
  const float g = -0.2f, lr = 0.01f, wd = 0.1f;
  const float c1 = bias_correction(0.9, 1), c2 = bias_correction(0.95, 1);
  EXPECT_NEAR(c1, 10.0f, 1e-4f);
  EXPECT_NEAR(c2, 20.0f, 1e-4f);
  HostOps(cpu_device()).adamw(&p, &g, &m, &v, 1, lr, 0.9f, 0.95f, c1, c2, 1e-8f, wd, 1.0f);
  EXPECT_NEAR(p, 0.5f - lr * (-1.0f + wd * 0.5f), 1e-6f);
  EXPECT_NEAR(m, 0.1f * g, 1e-7f);
  EXPECT_NEAR(v, 0.05f * g * g, 1e-8f);
}

// ---- one transformer block, forward + backward + AdamW, on any backend --------------------------------
// Pre-LN block (GPT-2): x1 = x + Attn(LN1(x)); x2 = x1 + MLP(LN2(x1)); logits = LNf(x2) Wout; mean
// cross-entropy. Parameter order in Block::params and Block::grads: see names().
struct Block {
  int B = 2, T = 12, C = 32, H = 4, V = 48;
  int N() const { return B * T; }
  int F() const { return 4 * C; }
  std::vector<Vec> params;  // g1 b1 Wqkv bqkv Wo bo g2 b2 Wfc bfc Wp bp gf bf Wout
  Vec x;
  std::vector<int32_t> targets;

  static std::vector<std::string> names() {
    return {"ln1.w", "ln1.b", "qkv.w", "qkv.b", "proj.w", "proj.b", "ln2.w", "ln2.b",
            "fc.w",  "fc.b",  "mlp.w", "mlp.b", "lnf.w",  "lnf.b",  "out.w"};
  }
  explicit Block(uint32_t seed) {
    Rand r(seed);
    const int C3 = 3 * C;
    auto gain = [&](int n) { return r.vec(static_cast<size_t>(n), 0.8f, 1.2f); };
    auto small = [&](int n, float s) { return r.vec(static_cast<size_t>(n), -s, s); };
    params = {gain(C), small(C, 0.1f), small(C * C3, 0.3f),  small(C3, 0.1f),  small(C * C, 0.3f),   small(C, 0.1f),
              gain(C), small(C, 0.1f), small(C * F(), 0.3f), small(F(), 0.1f), small(F() * C, 0.2f), small(C, 0.1f),
              gain(C), small(C, 0.1f), small(C * V, 0.3f)};
    x = r.vec(static_cast<size_t>(N()) * C);
    targets = r.ints(static_cast<size_t>(N()), V);
  }

  struct Result {
    double loss = 0;
    Vec dx;
    std::vector<Vec> grads;
  };

  // Mean loss; with backward, every parameter's gradient and dx.
  Result run(HostOps& K, bool backward) const {
    const int n = N(), c = C, f = F(), hs = C / H, c3 = 3 * C;
    const auto& P = params;
    auto z = [](int64_t k) { return Vec(static_cast<size_t>(k), 0.0f); };
    Vec ln1 = z(n * c), m1 = z(n), r1 = z(n), qkv = z(n * c3), ao = z(n * c), att = z(int64_t(B) * H * T * T);
    Vec x1 = z(n * c), ln2 = z(n * c), m2 = z(n), r2 = z(n), h = z(n * f), hg = z(n * f), x2 = z(n * c);
    Vec lnf = z(n * c), mf = z(n), rf = z(n), logits = z(int64_t(n) * V), proj = z(n * c), mlp = z(n * c);
    K.layernorm_forward(ln1.data(), m1.data(), r1.data(), x.data(), P[0].data(), P[1].data(), n, c);
    K.linear_forward(qkv.data(), ln1.data(), P[2].data(), P[3].data(), n, c, c3);
    K.attention_forward(ao.data(), att.data(), qkv.data(), B, T, H, hs);
    K.linear_forward(proj.data(), ao.data(), P[4].data(), P[5].data(), n, c, c);
    for (size_t i = 0; i < x1.size(); ++i) x1[i] = x[i] + proj[i];
    K.layernorm_forward(ln2.data(), m2.data(), r2.data(), x1.data(), P[6].data(), P[7].data(), n, c);
    K.linear_forward(h.data(), ln2.data(), P[8].data(), P[9].data(), n, c, f);
    K.gelu_forward(hg.data(), h.data(), int64_t(n) * f);
    K.linear_forward(mlp.data(), hg.data(), P[10].data(), P[11].data(), n, f, c);
    for (size_t i = 0; i < x2.size(); ++i) x2[i] = x1[i] + mlp[i];
    K.layernorm_forward(lnf.data(), mf.data(), rf.data(), x2.data(), P[12].data(), P[13].data(), n, c);
    K.linear_forward(logits.data(), lnf.data(), P[14].data(), nullptr, n, c, V);
    Result res;
    res.loss = K.softmax_xent_forward(logits.data(), targets.data(), n, V) / n;
    if (!backward) return res;

    res.grads.resize(P.size());
    for (size_t i = 0; i < P.size(); ++i) res.grads[i] = z(int64_t(P[i].size()));
    auto& G = res.grads;
    K.softmax_xent_backward(logits.data(), targets.data(), n, V, 1.0f / float(n));
    Vec dlnf = z(n * c), dx2 = z(n * c), dhg = z(n * f), dh = z(n * f), dln2 = z(n * c), dao = z(n * c);
    Vec dqkv = z(n * c3), dln1 = z(n * c);
    K.linear_backward(dlnf.data(), G[14].data(), nullptr, logits.data(), lnf.data(), P[14].data(), n, c, V, false);
    K.layernorm_backward(dx2.data(), G[12].data(), G[13].data(), dlnf.data(), x2.data(), P[12].data(), mf.data(),
                         rf.data(), n, c);
    Vec dx1 = dx2;  // residual
    K.linear_backward(dhg.data(), G[10].data(), G[11].data(), dx2.data(), hg.data(), P[10].data(), n, f, c, false);
    K.gelu_backward(dh.data(), h.data(), dhg.data(), int64_t(n) * f);
    K.linear_backward(dln2.data(), G[8].data(), G[9].data(), dh.data(), ln2.data(), P[8].data(), n, c, f, false);
    K.layernorm_backward(dx1.data(), G[6].data(), G[7].data(), dln2.data(), x1.data(), P[6].data(), m2.data(),
                         r2.data(), n, c);
    res.dx = dx1;  // residual
    K.linear_backward(dao.data(), G[4].data(), G[5].data(), dx1.data(), ao.data(), P[4].data(), n, c, c, false);
    K.attention_backward(dqkv.data(), dao.data(), qkv.data(), ao.data(), att.data(), B, T, H, hs);
    K.linear_backward(dln1.data(), G[2].data(), G[3].data(), dqkv.data(), ln1.data(), P[2].data(), n, c, c3, false);
    K.layernorm_backward(res.dx.data(), G[0].data(), G[1].data(), dln1.data(), x.data(), P[0].data(), m1.data(),
                         r1.data(), n, c);
    return res;
  }

  // One AdamW step (t = 1) of every tensor with the given gradients; decay on matrices only.
  std::vector<Vec> adamw_step(HostOps& K, const std::vector<Vec>& grads) const {
    std::vector<Vec> p = params;
    const float c1 = bias_correction(0.9, 1), c2 = bias_correction(0.95, 1);
    for (size_t i = 0; i < p.size(); ++i) {
      Vec m(p[i].size(), 0.0f), v(p[i].size(), 0.0f);
      const bool matrix = names()[i].ends_with(".w") && names()[i].rfind("ln", 0) != 0;
      K.adamw(p[i].data(), grads[i].data(), m.data(), v.data(), int64_t(p[i].size()), 3e-3f, 0.9f, 0.95f, c1, c2, 1e-8f,
              matrix ? 0.1f : 0.0f, 0.7f);
    }
    return p;
  }
};

TEST(CudaHostLogic, WholeStepHarnessMatchesFiniteDifferences) {
  // The block above, on the CPU, against central differences of its own loss: the harness that the GPU
  // whole-step test relies on computes true gradients.
  Block blk(5);
  HostOps cpu(cpu_device());
  const Block::Result an = blk.run(cpu, true);
  EXPECT_NEAR(an.loss, std::log(double(blk.V)), 1.0);  // near uniform at initialisation
  Rand pick(9);
  const float eps = 1e-2f;
  for (size_t t = 0; t < blk.params.size(); ++t)
    for (int probe = 0; probe < 3; ++probe) {
      const size_t i = size_t(pick.g() % uint32_t(blk.params[t].size()));
      Block b2 = blk;
      b2.params[t][i] += eps;
      const double up = b2.run(cpu, false).loss;
      b2.params[t][i] -= 2 * eps;
      const double down = b2.run(cpu, false).loss;
      const double fd = (up - down) / (2 * eps);
      const double g = an.grads[t][i];
      EXPECT_NEAR(g, fd, 2e-3 + 0.05 * std::fabs(fd)) << Block::names()[t] << "[" << i << "]";
    }
}

// ---- GPU against CPU, kernel by kernel ----------------------------------------------------------------
// Tolerances (fp32): element-wise kernels differ only by tanhf/expf ulps and fused multiply-adds (1e-5
// relative); reductions over C or T in a different order (1e-4); products through cuBLAS with K up to a
// few hundred (1e-4 absolute on O(1) values).

TEST(CudaKernels, LayerNormForwardBackward) {
  REQUIRE_GPU(gpu);
  HostOps cpu(cpu_device());
  Rand r(21);
  for (int C : {32, 256, 77}) {  // 77: not a multiple of the warp
    const int N = 300;
    const Vec x = r.vec(static_cast<size_t>(N) * C, -2, 2), w = r.vec(static_cast<size_t>(C), 0.5f, 1.5f),
              b = r.vec(static_cast<size_t>(C));
    Vec o1(x.size()), m1(static_cast<size_t>(N)), s1(static_cast<size_t>(N)), o2 = o1, m2 = m1, s2 = s1;
    cpu.layernorm_forward(o1.data(), m1.data(), s1.data(), x.data(), w.data(), b.data(), N, C);
    gpu->layernorm_forward(o2.data(), m2.data(), s2.data(), x.data(), w.data(), b.data(), N, C);
    expect_close(o1, o2, 1e-5f, 1e-4f, "layernorm out C=" + std::to_string(C));
    expect_close(m1, m2, 1e-6f, 1e-5f, "layernorm mean");
    expect_close(s1, s2, 1e-5f, 1e-5f, "layernorm rstd");
    const Vec dout = r.vec(x.size());
    Vec dx1 = r.vec(x.size()), dw1 = r.vec(static_cast<size_t>(C)),
        db1 = r.vec(static_cast<size_t>(C));  // accumulated into
    Vec dx2 = dx1, dw2 = dw1, db2 = db1;
    cpu.layernorm_backward(dx1.data(), dw1.data(), db1.data(), dout.data(), x.data(), w.data(), m1.data(), s1.data(), N,
                           C);
    gpu->layernorm_backward(dx2.data(), dw2.data(), db2.data(), dout.data(), x.data(), w.data(), m1.data(), s1.data(),
                            N, C);
    expect_close(dx1, dx2, 1e-4f, 1e-4f, "layernorm dx");
    expect_close(dw1, dw2, 1e-3f, 1e-4f, "layernorm dw (sum of 300)");
    expect_close(db1, db2, 1e-3f, 1e-4f, "layernorm db (sum of 300)");
  }
}

TEST(CudaKernels, GeluForwardBackward) {
  REQUIRE_GPU(gpu);
  HostOps cpu(cpu_device());
  Rand r(22);
  const int64_t n = 100003;  // odd: exercises the tail of the grid
  const Vec x = r.vec(static_cast<size_t>(n), -6, 6), dout = r.vec(static_cast<size_t>(n));
  Vec y1(static_cast<size_t>(n)), y2(static_cast<size_t>(n)), d1(static_cast<size_t>(n)), d2(static_cast<size_t>(n));
  cpu.gelu_forward(y1.data(), x.data(), n);
  gpu->gelu_forward(y2.data(), x.data(), n);
  expect_close(y1, y2, 1e-6f, 1e-5f, "gelu forward");
  cpu.gelu_backward(d1.data(), x.data(), dout.data(), n);
  gpu->gelu_backward(d2.data(), x.data(), dout.data(), n);
  expect_close(d1, d2, 1e-6f, 1e-5f, "gelu backward");
}

TEST(CudaKernels, SoftmaxCrossEntropy) {
  REQUIRE_GPU(gpu);
  HostOps cpu(cpu_device());
  Rand r(23);
  for (int V : {256, 1000}) {
    const int N = 129;
    const Vec logits = r.vec(static_cast<size_t>(N) * V, -8, 8);
    const auto t = r.ints(static_cast<size_t>(N), V);
    Vec p1 = logits, p2 = logits;
    const double l1 = cpu.softmax_xent_forward(p1.data(), t.data(), N, V);
    const double l2 = gpu->softmax_xent_forward(p2.data(), t.data(), N, V);
    EXPECT_NEAR(l1, l2, 1e-5 * std::fabs(l1)) << "V " << V;
    std::printf("    xent loss V=%d: cpu %.9g gpu %.9g\n", V, l1, l2);
    expect_close(p1, p2, 1e-7f, 1e-5f, "softmax probs V=" + std::to_string(V));
    cpu.softmax_xent_backward(p1.data(), t.data(), N, V, 1.0f / N);
    gpu->softmax_xent_backward(p2.data(), t.data(), N, V, 1.0f / N);
    expect_close(p1, p2, 1e-8f, 1e-4f, "softmax xent backward");
  }
}

TEST(CudaKernels, CausalAttentionForwardBackward) {
  REQUIRE_GPU(gpu);
  HostOps cpu(cpu_device());
  Rand r(24);
  struct Shape {
    int B, T, Hl, hs;
  };
  // hs 8 takes the GPU's cuBLAS path (probabilities kept), 16 and 64 its fused kernels (log-sum-exp kept);
  // T 67 is not a multiple of the fused kernels' 32-row tiles.
  for (Shape s : {Shape{2, 16, 2, 8}, Shape{3, 67, 4, 16}, Shape{1, 256, 4, 64}, Shape{2, 100, 3, 32}}) {
    const int D = s.Hl * s.hs;
    const Vec qkv = r.vec(static_cast<size_t>(s.B) * s.T * 3 * D), dout = r.vec(static_cast<size_t>(s.B) * s.T * D);
    Vec o1(static_cast<size_t>(s.B) * s.T * D), o2 = o1, a1(static_cast<size_t>(s.B) * s.Hl * s.T * s.T), a2 = a1;
    cpu.attention_forward(o1.data(), a1.data(), qkv.data(), s.B, s.T, s.Hl, s.hs);
    gpu->attention_forward(o2.data(), a2.data(), qkv.data(), s.B, s.T, s.Hl, s.hs);
    const std::string tag = " T=" + std::to_string(s.T) + " hs=" + std::to_string(s.hs);
    if (gpu->keeps_probabilities(s.B, s.T, s.Hl, s.hs)) expect_close(a1, a2, 1e-6f, 1e-4f, "attention probs" + tag);
    expect_close(o1, o2, 1e-5f, 1e-4f, "attention out" + tag);
    Vec g1(qkv.size(), 7.0f), g2(qkv.size(), -7.0f);  // overwritten, not added to
    cpu.attention_backward(g1.data(), dout.data(), qkv.data(), o1.data(), a1.data(), s.B, s.T, s.Hl, s.hs);
    gpu->attention_backward(g2.data(), dout.data(), qkv.data(), o2.data(), a2.data(), s.B, s.T, s.Hl, s.hs);
    expect_close(g1, g2, 1e-5f, 1e-3f, "attention dqkv" + tag);
  }
}

// Attention on the tensor cores (device/flash_mma.h, GPUs of compute capability 8.0 on), bf16 and TF32:
// against the CPU reference run on the same inputs rounded to the format (FlashMma.* checks the block code
// so on the CPU, with the same bounds), and the same call twice gives the same bits. On older GPUs the calls
// take the fp32 kernels, which meet the same bounds; so do TF32 steps unless MC_ATTENTION_TF32=mma asks for
// the tensor cores (scripts/gpu-lease.sh runs this test so).
TEST(CudaKernels, AttentionOnTensorCores) {
  REQUIRE_GPU(gpu);
  HostOps cpu(cpu_device());
  Rand r(25);
  using mc::test::attention::worst;
  struct Shape {
    int B, T, Hl, hs;
  };
  using mc::device::Precision;
  struct Format {
    Precision p;
    double bound_out, bound_dqkv;
  };
  for (const Format f : {Format{Precision::bf16, 4e-3, 8e-3}, Format{Precision::tf32, 5e-4, 1e-3}}) {
    const Precision p = f.p;  // (clang 14 lambdas take no structured bindings)
    const double bound_out = f.bound_out, bound_dqkv = f.bound_dqkv;
    auto rounded = [&](size_t n) {
      Vec v = r.vec(n);
      for (float& x : v) x = mc::device::round_to(p, x);
      return v;
    };
    gpu_dev->set_precision(p);
    for (Shape s : {Shape{2, 67, 2, 16}, Shape{1, 256, 4, 64}, Shape{2, 130, 3, 32}, Shape{1, 1024, 2, 64}}) {
      const int D = s.Hl * s.hs;
      const Vec qkv = rounded(size_t(s.B) * s.T * 3 * D), dout = rounded(size_t(s.B) * s.T * D);
      Vec o1(size_t(s.B) * s.T * D), o2 = o1, o3 = o1, a1(size_t(s.B) * s.Hl * s.T * s.T), a2 = a1, a3 = a1;
      cpu.attention_forward(o1.data(), a1.data(), qkv.data(), s.B, s.T, s.Hl, s.hs);
      gpu->attention_forward(o2.data(), a2.data(), qkv.data(), s.B, s.T, s.Hl, s.hs);
      gpu->attention_forward(o3.data(), a3.data(), qkv.data(), s.B, s.T, s.Hl, s.hs);
      Vec g1(qkv.size(), 7.0f), g2(qkv.size(), -7.0f), g3(qkv.size(), 5.0f);
      cpu.attention_backward(g1.data(), dout.data(), qkv.data(), o1.data(), a1.data(), s.B, s.T, s.Hl, s.hs);
      gpu->attention_backward(g2.data(), dout.data(), qkv.data(), o2.data(), a2.data(), s.B, s.T, s.Hl, s.hs);
      gpu->attention_backward(g3.data(), dout.data(), qkv.data(), o3.data(), a3.data(), s.B, s.T, s.Hl, s.hs);
      const double eo = worst(o1, o2, o1.size()), eg = worst(g1, g2, g1.size());
      const std::string tag =
          std::string(" ") + mc::device::to_string(p) + " T=" + std::to_string(s.T) + " hs=" + std::to_string(s.hs);
      std::printf("    attention%s: out %.2e, dqkv %.2e of the largest\n", tag.c_str(), eo, eg);
      EXPECT_LT(eo, bound_out) << "attention out" << tag;
      EXPECT_LT(eg, bound_dqkv) << "attention dqkv" << tag;
      EXPECT_EQ(0, std::memcmp(o2.data(), o3.data(), o2.size() * sizeof(float))) << "out repeats" << tag;
      EXPECT_EQ(0, std::memcmp(g2.data(), g3.data(), g2.size() * sizeof(float))) << "dqkv repeats" << tag;
    }
  }
  gpu_dev->set_precision(Precision::fp32);
}

TEST(CudaKernels, LinearForwardBackward) {
  REQUIRE_GPU(gpu);
  HostOps cpu(cpu_device());
  Rand r(25);
  const int N = 96, K = 64, M = 80;
  const Vec x = r.vec(static_cast<size_t>(N) * K), w = r.vec(static_cast<size_t>(K) * M),
            bias = r.vec(static_cast<size_t>(M)), dy = r.vec(static_cast<size_t>(N) * M);
  for (bool with_bias : {true, false}) {
    Vec y1(static_cast<size_t>(N) * M), y2 = y1;
    cpu.linear_forward(y1.data(), x.data(), w.data(), with_bias ? bias.data() : nullptr, N, K, M);
    gpu->linear_forward(y2.data(), x.data(), w.data(), with_bias ? bias.data() : nullptr, N, K, M);
    expect_close(y1, y2, 1e-4f, 1e-4f, with_bias ? "linear forward (bias)" : "linear forward");
  }
  for (bool acc : {false, true}) {
    Vec dx1 = r.vec(static_cast<size_t>(N) * K), dw1 = r.vec(static_cast<size_t>(K) * M),
        db1 = r.vec(static_cast<size_t>(M));
    Vec dx2 = dx1, dw2 = dw1, db2 = db1;
    cpu.linear_backward(dx1.data(), dw1.data(), db1.data(), dy.data(), x.data(), w.data(), N, K, M, acc);
    gpu->linear_backward(dx2.data(), dw2.data(), db2.data(), dy.data(), x.data(), w.data(), N, K, M, acc);
    expect_close(dx1, dx2, 1e-4f, 1e-4f, acc ? "linear dx (+=)" : "linear dx (=)");
    expect_close(dw1, dw2, 2e-4f, 1e-4f, "linear dw (+=)");
    expect_close(db1, db2, 2e-4f, 1e-4f, "linear db (+=)");
  }
  Vec dw1(static_cast<size_t>(K) * M, 0.0f), dw2 = dw1;  // dx and db may be null
  cpu.linear_backward(nullptr, dw1.data(), nullptr, dy.data(), x.data(), w.data(), N, K, M, false);
  gpu->linear_backward(nullptr, dw2.data(), nullptr, dy.data(), x.data(), w.data(), N, K, M, false);
  expect_close(dw1, dw2, 2e-4f, 1e-4f, "linear dw (null dx, db)");
}

TEST(CudaKernels, SgemmAllTransposesAndPadding) {
  REQUIRE_GPU(gpu);
  Rand r(26);
  const int M = 70, N = 45, K = 130;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int acc = 0; acc < 2; ++acc) {
        const int lda = (ta ? M : K) + 5, ldb = (tb ? K : N) + 3, ldc = N + 7;
        const Vec A = r.vec(static_cast<size_t>(mc::cuda::rowmajor_span(ta ? K : M, ta ? M : K, lda)));
        const Vec B = r.vec(static_cast<size_t>(mc::cuda::rowmajor_span(tb ? N : K, tb ? K : N, ldb)));
        Vec c1 = r.vec(static_cast<size_t>(mc::cuda::rowmajor_span(M, N, ldc))), c2 = c1;
        mc::train::sgemm(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, c1.data(), ldc, acc);
        gpu->sgemm(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, c2.data(), ldc, acc);
        expect_close(c1, c2, 1e-4f, 1e-4f,
                     "sgemm ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) + " acc=" + std::to_string(acc));
      }
}

TEST(CudaKernels, AdamW) {
  REQUIRE_GPU(gpu);
  HostOps cpu(cpu_device());
  Rand r(27);
  const int64_t n = 50001;
  const Vec g = r.vec(static_cast<size_t>(n), -0.1f, 0.1f);
  Vec p1 = r.vec(static_cast<size_t>(n)), m1 = r.vec(static_cast<size_t>(n), -0.01f, 0.01f),
      v1 = r.vec(static_cast<size_t>(n), 0.0f, 1e-3f);
  Vec p2 = p1, m2 = m1, v2 = v1;
  for (int t = 1; t <= 3; ++t) {
    const float c1 = bias_correction(0.9, t), c2 = bias_correction(0.95, t);
    cpu.adamw(p1.data(), g.data(), m1.data(), v1.data(), n, 3e-3f, 0.9f, 0.95f, c1, c2, 1e-8f, 0.1f, 0.5f);
    gpu->adamw(p2.data(), g.data(), m2.data(), v2.data(), n, 3e-3f, 0.9f, 0.95f, c1, c2, 1e-8f, 0.1f, 0.5f);
  }
  expect_close(p1, p2, 1e-6f, 1e-5f, "adamw params");
  expect_close(m1, m2, 1e-8f, 1e-5f, "adamw m");
  expect_close(v1, v2, 1e-10f, 1e-5f, "adamw v");
}

// ---- GPU against CPU: a whole step ---------------------------------------------------------------------
TEST(CudaKernels, WholeBlockStepMatchesCpu) {
  REQUIRE_GPU(gpu);
  HostOps cpu(cpu_device());
  Block blk(31);
  const Block::Result a = blk.run(cpu, true), b = blk.run(*gpu, true);
  EXPECT_NEAR(a.loss, b.loss, 1e-5 * a.loss);
  std::printf("    block loss: cpu %.9g gpu %.9g\n", a.loss, b.loss);
  expect_close(a.dx, b.dx, 1e-5f, 1e-3f, "block dx");
  for (size_t t = 0; t < a.grads.size(); ++t) {
    float scale = 0;  // gradients differ in size by orders of magnitude between tensors
    for (float v : a.grads[t]) scale = std::max(scale, std::fabs(v));
    expect_close(a.grads[t], b.grads[t], 1e-4f * scale + 1e-8f, 1e-3f, "block grad " + Block::names()[t]);
  }
  const auto p1 = blk.adamw_step(cpu, a.grads), p2 = blk.adamw_step(*gpu, a.grads);
  for (size_t t = 0; t < p1.size(); ++t) expect_close(p1[t], p2[t], 1e-6f, 1e-5f, "block adamw " + Block::names()[t]);
}

#ifdef MC_HAVE_CUDA
// The device-pointer API: a step resident on the GPU (no copies between kernels) and its errors.
// The token embedding's gradient, in both of its kernels (a small vocabulary: one block per row scanning
// the tokens, device/embedding_grad.h; a large one: one thread per column), is the CPU's to the bit: the
// same additions in the same order (CpuDevice::embedding_backward), onto a gradient that already holds a
// micro-batch's.
TEST(CudaKernels, EmbeddingBackwardIsTheCpusToTheBit) {
  REQUIRE_GPU(gpu);
  (void)gpu;
  namespace cu = mc::cuda;
  Rand r(7);
  const int B = 3, T = 67, C = 300;
  for (const int V : {50, 9000}) {
    std::vector<int32_t> tok(size_t(B) * (T + 1));
    for (size_t i = 0; i < tok.size(); ++i) tok[i] = int32_t((i * 7919 + i / 5) % size_t(V < 60 ? V : 97));
    const Vec dout = r.vec(size_t(B) * T * C), start = r.vec(size_t(V) * C);
    Vec want = start, wpe(size_t(T) * C, 0.0f);
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t)
        for (int k = 0; k < C; ++k) {
          want[size_t(tok[size_t(b) * (T + 1) + t]) * C + k] += dout[(size_t(b) * T + t) * C + k];
          wpe[size_t(t) * C + k] += dout[(size_t(b) * T + t) * C + k];
        }
    float* d_wte = cu::device_alloc(int64_t(V) * C);
    float* d_wpe = cu::device_alloc(int64_t(T) * C);
    float* d_out = cu::device_alloc(int64_t(dout.size()));
    float* d_tok = cu::device_alloc(int64_t(tok.size()));  // 4-byte slots for the int32 ids
    cu::to_device(d_wte, start.data(), int64_t(start.size() * sizeof(float)));
    const Vec zeros(wpe.size(), 0.0f);
    cu::to_device(d_wpe, zeros.data(), int64_t(zeros.size() * sizeof(float)));
    cu::to_device(d_out, dout.data(), int64_t(dout.size() * sizeof(float)));
    cu::to_device(d_tok, tok.data(), int64_t(tok.size() * sizeof(int32_t)));
    cu::dev::embedding_backward(d_wte, d_wpe, d_out, reinterpret_cast<const int32_t*>(d_tok), B, T, C, V);
    Vec got(want.size()), got_wpe(wpe.size());
    cu::to_host(got.data(), d_wte, int64_t(got.size() * sizeof(float)));
    cu::to_host(got_wpe.data(), d_wpe, int64_t(got_wpe.size() * sizeof(float)));
    for (float* p : {d_wte, d_wpe, d_out, d_tok}) cu::device_free(p);
    EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0) << "dwte, V " << V;
    EXPECT_EQ(std::memcmp(wpe.data(), got_wpe.data(), wpe.size() * sizeof(float)), 0) << "dwpe, V " << V;
  }
}

// The optimizer's one-launch passes over a worker's slices (sum_squares_many, adamw_many) give the bits
// of one call per slice: the gradient norm and the update do not change when the launches do.
TEST(CudaKernels, ManySlicesInOneLaunchAreTheCallsPerSlice) {
  REQUIRE_GPU(gpu);
  (void)gpu;
  namespace cu = mc::cuda;
  Rand r(43);
  const std::vector<int64_t> sizes = {1, 700, 40000, 3000000, 100000, 32768};
  int64_t total = 0;
  for (int64_t n : sizes) total += n;
  const Vec p0 = r.vec(size_t(total)), g0 = r.vec(size_t(total)), m0 = r.vec(size_t(total), 0.0f, 0.1f),
            v0 = r.vec(size_t(total), 0.0f, 0.01f);
  auto upload = [&](const Vec& h) {
    float* d = cu::device_alloc(int64_t(h.size()));
    cu::to_device(d, h.data(), int64_t(h.size() * sizeof(float)));
    return d;
  };
  float *P1 = upload(p0), *P2 = upload(p0), *G = upload(g0), *M1 = upload(m0), *M2 = upload(m0), *V1 = upload(v0),
        *V2 = upload(v0);
  double* acc = reinterpret_cast<double*>(cu::device_alloc(4));
  const double start[2] = {0.25, 0.25};
  cu::to_device(acc, start, sizeof start);
  std::vector<cu::dev::SquaresSlice> sq;
  std::vector<cu::dev::AdamWSlice> ad;
  int64_t off = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const float wd = i % 2 ? 0.1f : 0.0f;
    cu::dev::sum_squares(acc, G + off, sizes[i]);
    cu::dev::adamw(P1 + off, G + off, M1 + off, V1 + off, sizes[i], 1e-3f, 0.9f, 0.95f, 1.1f, 1.3f, 1e-8f, wd, 0.7f);
    sq.push_back({G + off, sizes[i]});
    ad.push_back({P2 + off, G + off, M2 + off, V2 + off, sizes[i], wd});
    off += sizes[i];
  }
  cu::dev::sum_squares_many(acc + 1, sq.data(), int(sq.size()));
  cu::dev::adamw_many(ad.data(), int(ad.size()), 1e-3f, 0.9f, 0.95f, 1.1f, 1.3f, 1e-8f, 0.7f);
  double sums[2];
  cu::to_host(sums, acc, sizeof sums);
  EXPECT_EQ(sums[0], sums[1]) << "sum of squares, one call per slice against one launch";
  double want = 0.25;
  for (float g : g0) want += double(g) * double(g);
  EXPECT_NEAR(sums[1], want, 1e-9 * want);
  for (auto [a, b, before, what] : {std::tuple{P1, P2, &p0, "params"}, {M1, M2, &m0, "m"}, {V1, V2, &v0, "v"}}) {
    Vec ha(static_cast<size_t>(total)), hb(static_cast<size_t>(total));
    cu::to_host(ha.data(), a, total * int64_t(sizeof(float)));
    cu::to_host(hb.data(), b, total * int64_t(sizeof(float)));
    EXPECT_EQ(0, std::memcmp(ha.data(), hb.data(), ha.size() * sizeof(float))) << what;
    EXPECT_NE(0, std::memcmp(ha.data(), before->data(), ha.size() * sizeof(float))) << what << " was updated";
  }
  for (float* d : {P1, P2, G, M1, M2, V1, V2, reinterpret_cast<float*>(acc)}) cu::device_free(d);
}

TEST(CudaKernels, DevicePointerApiChainsWithoutCopies) {
  REQUIRE_GPU(gpu);
  (void)gpu;
  Rand r(41);
  const int N = 64, C = 48;
  const Vec x = r.vec(static_cast<size_t>(N) * C), w = r.vec(static_cast<size_t>(C), 0.5f, 1.5f),
            b = r.vec(static_cast<size_t>(C));
  Vec ref(x.size()), m(static_cast<size_t>(N)), s(static_cast<size_t>(N)), h(x.size());
  mc::train::ops::layernorm_forward(h.data(), m.data(), s.data(), x.data(), w.data(), b.data(), N, C);
  mc::train::ops::gelu_forward(ref.data(), h.data(), int64_t(h.size()));
  namespace cu = mc::cuda;
  float* dx = cu::device_alloc(int64_t(x.size()));
  float* dw = cu::device_alloc(C);
  float* db = cu::device_alloc(C);
  float* dh = cu::device_alloc(int64_t(x.size()));
  float* dm = cu::device_alloc(N);
  float* ds = cu::device_alloc(N);
  cu::to_device(dx, x.data(), int64_t(x.size() * sizeof(float)));
  cu::to_device(dw, w.data(), C * int64_t(sizeof(float)));
  cu::to_device(db, b.data(), C * int64_t(sizeof(float)));
  cu::dev::layernorm_forward(dh, dm, ds, dx, dw, db, N, C);
  cu::dev::gelu_forward(dx, dh, int64_t(x.size()));  // in place of x: the chain never leaves the GPU
  Vec got(x.size());
  cu::to_host(got.data(), dx, int64_t(got.size() * sizeof(float)));
  for (float* p : {dx, dw, db, dh, dm, ds}) cu::device_free(p);
  expect_close(ref, got, 1e-5f, 1e-4f, "device chain layernorm+gelu");
  // An impossible allocation is an exception naming the call, never an exit.
  try {
    cu::device_alloc(int64_t(1) << 50);
    ADD_FAILURE() << "a 4 PiB allocation succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cudaMalloc"), std::string::npos) << e.what();
  }
}
#endif

}  // namespace
