// The GPU's column-sum gradients (device/column_sums.h: a bias's db, LayerNorm's dw and db, in two passes
// over row chunks), the code train_kernels.cu runs, executed on the CPU by the block shim (block_shim.h):
// against sums in double precision, on shapes where the columns do not fill the last block and the rows
// do not fill the last chunk, onto gradients that already hold something; and the same bits on a second
// run (fixed order, no atomics). Shared memory starts as NaN, so a slot read before it is written fails.
// CudaKernels.LayerNormForwardBackward and LinearForwardBackward check the kernels on a GPU.
#include "device/column_sums.h"
#include "block_shim.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

namespace cs = mc::device::column_sums;
static_assert(cs::kThreads == mc::test::shim::kThreads, "the shim runs 256-thread blocks");

// dw, db after both passes, starting from the given gradients (x null: db only).
void run(std::vector<float>& dw, std::vector<float>& db, const std::vector<float>& dout, const float* x,
         const float* mean, const float* rstd, int N, int C) {
  const int chunks = cs::chunks_for(N);
  std::vector<float> part_b(size_t(chunks) * C, NAN), part_w(x ? size_t(chunks) * C : 0, NAN);
  mc::test::shim::launch((C + cs::kCols - 1) / cs::kCols, chunks, cs::kSmemFloats, [&](mc::test::shim::CpuCtx& cx) {
    cs::partial_block(cx, x ? part_w.data() : nullptr, part_b.data(), dout.data(), x, mean, rstd, N, C, chunks);
  });
  for (int c = 0; c < C; ++c)
    cs::finish_column(c, x ? dw.data() : nullptr, db.data(), x ? part_w.data() : nullptr, part_b.data(), C, chunks);
}

}  // namespace

TEST(ColumnSums, TwoPassesMatchTheSumsAndRepeatBitForBit) {
  EXPECT_EQ(cs::chunks_for(1), 1);
  EXPECT_EQ(cs::chunks_for(8192), 32);
  EXPECT_EQ(cs::chunks_for(1 << 20), cs::kMaxChunks);
  for (const auto [N, C] : {std::array{1, 5}, std::array{700, 45}, std::array{2053, 70}}) {
    std::mt19937 g(uint32_t(N + C));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> dout(static_cast<size_t>(N) * C), x(static_cast<size_t>(N) * C), mean(static_cast<size_t>(N)),
        rstd(static_cast<size_t>(N));
    for (float& v : dout) v = u(g);
    for (float& v : x) v = u(g);
    for (int i = 0; i < N; ++i) mean[size_t(i)] = 0.1f * u(g), rstd[size_t(i)] = 1.0f + 0.5f * u(g);
    std::vector<float> dw0(static_cast<size_t>(C)), db0(static_cast<size_t>(C));
    for (float& v : dw0) v = u(g);
    for (float& v : db0) v = u(g);

    for (const bool layernorm : {true, false}) {
      std::vector<double> want_w(static_cast<size_t>(C)), want_b(static_cast<size_t>(C));
      for (int c = 0; c < C; ++c) {
        want_w[size_t(c)] = dw0[size_t(c)], want_b[size_t(c)] = db0[size_t(c)];
        for (int i = 0; i < N; ++i) {
          const size_t k = size_t(i) * C + size_t(c);
          want_b[size_t(c)] += dout[k];
          want_w[size_t(c)] += (double(x[k]) - mean[size_t(i)]) * rstd[size_t(i)] * dout[k];
        }
      }
      std::vector<float> dw = dw0, db = db0;
      run(dw, db, dout, layernorm ? x.data() : nullptr, mean.data(), rstd.data(), N, C);
      for (int c = 0; c < C; ++c) {
        // fp32 sums of N terms of size ~1: a few ulps of sqrt(N)-sized partials.
        const double tol = 1e-6 * (4 + std::sqrt(double(N)));
        EXPECT_NEAR(db[size_t(c)], want_b[size_t(c)], tol) << "db N " << N << " C " << C << " col " << c;
        if (layernorm)
          EXPECT_NEAR(dw[size_t(c)], want_w[size_t(c)], tol * 2) << "dw N " << N << " C " << C << " col " << c;
        else
          EXPECT_EQ(dw[size_t(c)], dw0[size_t(c)]) << "a bias's gradient leaves dw alone";
      }
      std::vector<float> dw2 = dw0, db2 = db0;
      run(dw2, db2, dout, layernorm ? x.data() : nullptr, mean.data(), rstd.data(), N, C);
      EXPECT_EQ(std::memcmp(dw.data(), dw2.data(), dw.size() * sizeof(float)), 0);
      EXPECT_EQ(std::memcmp(db.data(), db2.data(), db.size() * sizeof(float)), 0);
    }
  }
}
