// `megacluster simulate`: the discrete-event simulation of one iteration on every GPU (and, with --run,
// of a whole training run) for an estimate config; one JSON object on stdout.
#include "catalog/catalog.h"
#include "cli/cli.h"
#include "core/paths.h"
#include "sim/sim.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

// `--bench`: wall time of one iteration's simulation, best of --repeat runs (the browser build is timed
// with the same command under node: `node build/web/engine/megacluster.js simulate CONFIG --bench`).
int print_bench(const mc::sim::IterationBench& b, const std::string& file, bool as_json) {
  if (as_json) {
    const mc::json j = {{"config", file},
                        {"gpus", b.gpus},
                        {"replica_classes", b.replica_classes},
                        {"repeats", b.repeats},
                        {"iteration_s", b.iteration_s},
                        {"events", b.events},
                        {"work", b.work},
                        {"estimated_work", b.estimated_work},
                        {"setup_ms", b.setup_wall_s * 1e3},
                        {"best_ms", b.best_wall_s * 1e3},
                        {"mean_ms", b.mean_wall_s * 1e3},
                        {"worst_ms", b.worst_wall_s * 1e3},
                        {"events_per_s", b.events_per_s}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("simulate --bench %s\n", file.c_str());
  std::printf("  %d GPUs, %d replica class(es), simulated iteration %.3f s\n", b.gpus, b.replica_classes,
              b.iteration_s);
  std::printf("  setup (resolve the config + analytic estimate): %.2f ms\n", b.setup_wall_s * 1e3);
  std::printf("  wall per iteration: best %.2f ms, mean %.2f ms, worst %.2f ms (%d runs)\n", b.best_wall_s * 1e3,
              b.mean_wall_s * 1e3, b.worst_wall_s * 1e3, b.repeats);
  std::printf("  events: %lld per iteration, %.0f events/s (best)\n", b.events, b.events_per_s);
  return 0;
}

int run_simulate(mc::cli::Args& a) {
  const auto run = a.option("--run");
  // -1: not given (the fallbacks are not range-checked), so that --bench can refuse what it would ignore.
  const long long seed_arg = a.option_int("--seed", -1, 0, (1LL << 62));
  const auto trace = a.option("--trace");
  const long long gpu_arg = a.option_int("--gpu", -1, 0, 1LL << 30);
  const auto assets = a.option("--assets");
  const bool quiet = a.flag("--quiet");
  const bool bench = a.flag("--bench");
  const bool bench_json = a.flag("--json");
  const long long repeats_arg = a.option_int("--repeat", -1, 1, 1000);
  auto pos = a.positionals();
  a.finish();
  if (pos.size() != 1) throw mc::cli::UsageError("expected one CONFIG.json (or - for standard input)");
  if (bench_json && !bench) throw mc::cli::UsageError("--json goes with --bench (the simulation always prints JSON)");
  if (repeats_arg >= 0 && !bench) throw mc::cli::UsageError("--repeat goes with --bench (how many timed runs)");
  if (bench) {
    // The bench times one iteration and prints only timings: a run (--run, seeded by --seed), a trace and
    // a GPU's timeline (--gpu) are never computed, so accepting them would silently do nothing.
    std::vector<std::string> given;
    for (const auto& [on, name] : {std::pair{bool(run), "--run"}, std::pair{bool(trace), "--trace"},
                                   std::pair{seed_arg >= 0, "--seed"}, std::pair{gpu_arg >= 0, "--gpu"}})
      if (on) given.push_back(name);
    std::string ignored;  // "--seed", "--seed and --gpu", "--trace, --seed and --gpu"
    for (size_t i = 0; i < given.size(); ++i)
      ignored += (i == 0 ? "" : i + 1 == given.size() ? " and " : ", ") + given[i];
    if (!ignored.empty())
      throw mc::cli::UsageError("--bench times one iteration and prints only its wall time, so " + ignored +
                                " would change nothing: leave out " + ignored + ", or drop --bench to simulate with " +
                                ignored);
  }
  const long long seed = seed_arg >= 0 ? seed_arg : 1, gpu = gpu_arg >= 0 ? gpu_arg : 0;
  const long long repeats = repeats_arg >= 0 ? repeats_arg : 5;
  double days = 0;
  if (run) {
    try {
      size_t used = 0;
      days = std::stod(*run, &used);
      if (used != run->size() || !(days > 0) || days > 3650) throw std::invalid_argument("range");
    } catch (const std::exception&) {
      throw mc::cli::UsageError("--run takes a number of days in (0, 3650], got \"" + *run + "\"");
    }
  }
  const mc::Catalog cat = mc::load_catalog(assets ? *assets : mc::find_assets_dir(a.exe_path()));
  const std::string file = pos[0] == "-" ? "<stdin>" : pos[0];
  const mc::JsonDoc doc = mc::JsonDoc::parse(mc::cli::read_input(pos[0]), file, mc::kMaxConfigBytes);
  if (bench) return print_bench(mc::sim::bench_iteration(cat, doc, int(repeats)), file, bench_json);
  mc::sim::SimOptions o;
  o.run_days = days;
  o.seed = static_cast<unsigned long long>(seed);
  o.timeline_gpu = int(gpu);
  // A progress bar on stderr for runs, redrawn once per percent.
  int last = -1;
  if (days > 0 && !quiet)
    o.progress = [&last](double f) {
      const int pct = int(f * 100);
      if (pct == last) return;
      last = pct;
      mc::cli::progress_bar(f, "simulating the run");
    };
  const mc::json out = mc::sim::simulate_json(cat, doc, o);
  if (trace) {
    std::ofstream f(*trace);
    if (!f) throw std::runtime_error("cannot write trace file \"" + *trace + "\"");
    const mc::json tr = mc::sim::simulate_trace_json(cat, doc, o);
    f << tr.dump();
    if (tr["otherData"].value("dropped_spans", 0ll) > 0)
      std::fprintf(stderr, "megacluster simulate: warning: %s: %s\n", trace->c_str(),
                   tr["otherData"]["note"].get<std::string>().c_str());
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

mc::cli::Registrar reg{{"simulate",
                        "simulate one iteration on every GPU (flow-level network), and optionally a whole run",
                        "megacluster simulate CONFIG.json|- [--run DAYS] [--seed N] [--trace out.json] [--gpu N] "
                        "[--quiet] [--assets DIR] | CONFIG.json|- --bench [--repeat N] [--json]",
                        run_simulate}};

}  // namespace
