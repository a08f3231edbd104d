// perf_bench.cpp - speed of the performance model: one estimate, and the whole layout search of
// GPT-3 175B on the 2020 Azure machine (the issue asks >= 100,000 layouts/s and < 1 s).
// Run: build/NAME/tests/mc_bench --benchmark_filter=Perf
#include "catalog/catalog.h"
#include "perf/perf.h"

#include <benchmark/benchmark.h>

namespace {

const mc::Catalog& catalog() {
  static const mc::Catalog c = mc::load_catalog(std::string(MC_SOURCE_DIR) + "/assets");
  return c;
}

mc::perf::Config gpt3(const char* cluster) {
  nlohmann::json j = {{"model", {{"preset", "gpt3-175b"}}}, {"cluster", {{"preset", cluster}}}};
  return mc::perf::parse_config(catalog(), j, "bench", false);
}

void BM_PerfEstimateOneLayout(benchmark::State& st) {
  mc::perf::Config c = gpt3("selene-2021");
  c.cluster.nodes = 128;
  c.layout.tp = 8, c.layout.pp = 8, c.layout.dp = 16, c.layout.schedule = mc::PipeSchedule::interleaved;
  c.layout.virtual_stages = 2, c.layout.recompute = mc::perf::Recompute::full;
  for (auto _ : st) benchmark::DoNotOptimize(mc::perf::estimate(c).iteration_time_s);
  st.counters["layouts_per_s"] = benchmark::Counter(double(st.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PerfEstimateOneLayout);

void BM_PerfSearchGpt3OnAzure2020(benchmark::State& st) {
  const mc::perf::Config c = gpt3("azure-openai-2020");
  long long considered = 0, evaluated = 0;
  for (auto _ : st) {
    const auto r = mc::perf::search(c);
    considered += r.considered;
    evaluated += r.evaluated;
  }
  st.counters["layouts_per_s"] = benchmark::Counter(double(considered), benchmark::Counter::kIsRate);
  st.counters["full_estimates_per_s"] = benchmark::Counter(double(evaluated), benchmark::Counter::kIsRate);
  st.counters["layouts_per_search"] = double(considered) / double(st.iterations());
}
BENCHMARK(BM_PerfSearchGpt3OnAzure2020)->Unit(benchmark::kMillisecond);

}  // namespace
