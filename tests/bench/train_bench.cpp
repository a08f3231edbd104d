// Training lab benchmarks: one optimizer step of the reference model (4 layers, width 256, 4 heads,
// context 256, batch 8, bytes, fp32) and the SGEMM of its largest matmul, so the two rates sit side by side.
#include "train/kernels/gemm.h"
#include "train/train.h"

#include <benchmark/benchmark.h>

#include <vector>

namespace {

mc::train::TrainConfig reference() {
  mc::train::TrainConfig c;
  c.model = {.vocab = 256, .context = 256, .layers = 4, .width = 256, .heads = 4};
  c.batch = 8;
  c.steps = 1000;
  return c;
}

void BM_TrainStepReference(benchmark::State& st) {
  mc::train::Trainer t(reference(), mc::train::default_corpus());
  t.step();  // warm-up: allocation, page faults
  for (auto _ : st) benchmark::DoNotOptimize(t.step().loss);
  const double tokens = 8.0 * 256;
  st.counters["tokens_per_s"] = benchmark::Counter(tokens, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["GFLOP/s"] =
      benchmark::Counter(tokens * t.flops_per_token() / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["threads"] = mc::train::thread_count();  // MC_THREADS, or the CPUs this process may run on
}
BENCHMARK(BM_TrainStepReference)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SgemmLargestShape(benchmark::State& st) {
  const int M = 2048, N = 1024, K = 256;
  std::vector<float> a(size_t(M) * K, 0.01f), b(size_t(K) * N, 0.02f), c(size_t(M) * N);
  for (auto _ : st) mc::train::sgemm(false, false, M, N, K, a.data(), K, b.data(), N, c.data(), N, false);
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * M * N * K / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SgemmLargestShape)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
