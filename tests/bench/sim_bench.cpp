// Benchmarks of the simulator (figures printed as counters): one iteration of GPT-3 175B on
// tp 8 x pp 16 x dp 78 = 9,984 GPUs of azure-openai-2020 (target <= 100 ms natively), and a 30-day run at
// 10,000 GPUs with the default failure rates (target < 1 s). The same figure from the command line (and
// under node for the browser build): `megacluster simulate assets/configs/simulate.json --bench`.
#include "catalog/catalog.h"
#include "sim/sim.h"
#include "sim/sim_config.h"

#include <benchmark/benchmark.h>

namespace {

const mc::Catalog& catalog() {
  static const mc::Catalog c = mc::load_catalog(MC_SOURCE_DIR "/assets");
  return c;
}

// The simulator panels' default machine (assets/configs/simulate.json), the figure the README quotes.
mc::json gpt3_config() { return mc::JsonDoc::load(MC_SOURCE_DIR "/assets/configs/simulate.json").value(); }

void BM_IterationGpt3On9984Gpus(benchmark::State& st) {
  const mc::JsonDoc doc = mc::JsonDoc::parse(gpt3_config().dump(), "bench");
  const mc::sim::Resolved r = mc::sim::resolve(catalog(), doc);
  const mc::sim::Topology topo(r.topo);
  long long events = 0;
  double sim_s = 0;
  for (auto _ : st) {
    mc::sim::IterationResult it = mc::sim::simulate_iteration(topo, r.iter);
    events += it.events;
    sim_s = it.iteration_s;
    benchmark::DoNotOptimize(it.iteration_s);
  }
  st.counters["events_per_s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
  st.counters["events_per_iteration"] = double(events) / double(st.iterations());
  st.counters["simulated_iteration_s"] = sim_s;
}
BENCHMARK(BM_IterationGpt3On9984Gpus)->Unit(benchmark::kMillisecond);

// The same in slices of 2,000 events (what the browser build runs per frame): the slicing overhead.
void BM_IterationGpt3On9984GpusSliced(benchmark::State& st) {
  const mc::JsonDoc doc = mc::JsonDoc::parse(gpt3_config().dump(), "bench");
  const mc::sim::Resolved r = mc::sim::resolve(catalog(), doc);
  const mc::sim::Topology topo(r.topo);
  long long events = 0, slices = 0;
  for (auto _ : st) {
    mc::sim::IterationSim sim(topo, r.iter);
    while (!sim.step(2000)) ++slices;
    events += sim.events();
    benchmark::DoNotOptimize(sim.take_result().iteration_s);
  }
  st.counters["events_per_s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
  st.counters["slices_per_iteration"] = double(slices) / double(st.iterations());
}
BENCHMARK(BM_IterationGpt3On9984GpusSliced)->Unit(benchmark::kMillisecond);

// A straggler in one replica: that replica becomes its own class, so about twice the events.
void BM_IterationGpt3On9984GpusOneStraggler(benchmark::State& st) {
  mc::json cfg = gpt3_config();
  cfg["stragglers"] = {{{"gpu", (15 * 78 + 5) * 8 + 3}, {"speed", 0.8}}};  // replica 5, last stage
  const mc::JsonDoc doc = mc::JsonDoc::parse(cfg.dump(), "bench");
  const mc::sim::Resolved r = mc::sim::resolve(catalog(), doc);
  const mc::sim::Topology topo(r.topo);
  long long events = 0;
  for (auto _ : st) {
    mc::sim::IterationResult it = mc::sim::simulate_iteration(topo, r.iter);
    events += it.events;
    benchmark::DoNotOptimize(it.iteration_s);
  }
  st.counters["events_per_s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
  st.counters["events_per_iteration"] = double(events) / double(st.iterations());
}
BENCHMARK(BM_IterationGpt3On9984GpusOneStraggler)->Unit(benchmark::kMillisecond);

void BM_Run30DaysOn10000Gpus(benchmark::State& st) {
  mc::json cfg = gpt3_config();
  cfg["cluster"]["gpus"] = 10000;
  cfg["parallel"] = {{"tp", 8}, {"pp", 1}, {"dp", 1250}, {"micro_batch", 1}, {"global_batch", 1250}};
  cfg["model"] = {{"preset", "gpt3-13b"}};
  const mc::JsonDoc doc = mc::JsonDoc::parse(cfg.dump(), "bench");
  const mc::sim::Resolved r = mc::sim::resolve(catalog(), doc);
  mc::sim::RunSpec rs = mc::sim::run_spec(catalog(), r, 10.0, 30.0, 1);
  rs.iterations_total = 1e12;  // the whole 30-day window is simulated
  int interruptions = 0;
  for (auto _ : st) {
    mc::sim::RunResult rr = mc::sim::simulate_run(rs);
    interruptions = rr.interruptions;
    benchmark::DoNotOptimize(rr.goodput);
    ++rs.seed;
  }
  st.counters["interruptions"] = interruptions;
}
BENCHMARK(BM_Run30DaysOn10000Gpus)->Unit(benchmark::kMillisecond);

}  // namespace
