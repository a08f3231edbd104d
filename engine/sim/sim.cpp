// sim.cpp - the simulator's surface: its report (sim_report.h) assembled from the simulated iteration
// (the estimate's figures for it, the per-GPU timelines, link utilisation, the critical path) and the
// run, the sliced Simulation, the benchmark and the Chrome trace. The report's JSON is in sim_report.cpp.
//
// Sections: spans, link names and capped series | links_report | make_report (the report of an iteration
// and its run) | sliced simulation (Simulation, simulate, simulate_json) | bench_iteration |
// simulate_trace_json.
#include "sim/sim.h"

#include "sim/sim_config.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>

namespace mc::sim {

namespace {

constexpr int kSeriesBins = 100;

std::vector<SpanReport> spans_report(const WorkerTimeline& w, int max_spans) {
  std::vector<SpanReport> a;
  for (const Span& s : w.spans) {
    if (int(a.size()) >= max_spans) break;
    a.push_back({s.kind, s.start_s, s.end_s, s.micro_batch, s.chunk});
  }
  return a;
}

// A piecewise-constant series (v[i] from t[i] until t[i + 1], the last until `end`) in at most
// `max_points` points: as it is when short enough; else the time-average over max_points equal bins of
// [0, end], each bin holding exactly the area under the series inside it, so the integral (a link's
// bytes) is kept while spikes shorter than a bin are spread over it. Equal consecutive values are merged
// either way. Returns the bin width (0 when exact).
double cap_series(std::vector<double>& t, std::vector<double>& v, double end, int max_points) {
  double bin = 0;
  if (max_points > 0 && t.size() > size_t(max_points)) {
    const int n = max_points;
    end = std::max(end, t.back());
    bin = end / n;
    std::vector<double> area(size_t(n), 0.0);
    for (size_t i = 0; i < t.size(); ++i) {
      double a = t[i];
      const double e = i + 1 < t.size() ? t[i + 1] : end;
      while (a < e) {
        int b = std::min(n - 1, int(a / bin));
        if ((b + 1) * bin <= a && b < n - 1) ++b;  // a sits on a bin edge (rounding)
        const double be = b == n - 1 ? e : std::min(e, (b + 1) * bin);
        area[size_t(b)] += v[i] * (be - a);
        a = be;
      }
    }
    t.resize(size_t(n));
    v.resize(size_t(n));
    for (int b = 0; b < n; ++b) t[size_t(b)] = b * bin, v[size_t(b)] = area[size_t(b)] / bin;
  }
  size_t w = 0;
  for (size_t i = 0; i < t.size(); ++i)
    if (w == 0 || v[i] != v[w - 1]) t[w] = t[i], v[w] = v[i], ++w;
  t.resize(w);
  v.resize(w);
  return bin;
}

LinksReport links_report(const Topology& topo, const IterationResult& it, const SimOptions& o) {
  LinksReport out;
  const double T = std::max(1e-12, it.iteration_s);
  std::array<double, kLinkClasses> bytes{}, cap{};
  const auto& links = topo.links();
  for (size_t l = 0; l < links.size(); ++l) {
    bytes[size_t(links[l].cls)] += it.link_bytes[l];
    cap[size_t(links[l].cls)] += links[l].capacity_Bps;
  }
  for (int c = 0; c < kLinkClasses; ++c)
    out.classes[size_t(c)] = {bytes[size_t(c)], cap[size_t(c)] > 0 ? bytes[size_t(c)] / (cap[size_t(c)] * T) : 0};
  // Hottest links: busiest fraction of the iteration.
  std::vector<int> order(links.size());
  std::iota(order.begin(), order.end(), 0);
  auto util = [&](int l) { return it.link_bytes[size_t(l)] / (links[size_t(l)].capacity_Bps * T); };
  const size_t k = std::min<size_t>(10, order.size());
  std::partial_sort(order.begin(), order.begin() + long(k), order.end(),
                    [&](int a, int b) { return util(a) > util(b) || (util(a) == util(b) && a < b); });
  for (size_t i = 0; i < k; ++i) {
    const Link& L = links[size_t(order[i])];
    out.hottest.push_back({order[i], link_name(topo, order[i]), L.cls, L.index, util(order[i]), L.capacity_Bps / 1e9});
  }
  // Per node: NIC (up) utilisation, the heat map of the cluster.
  const auto& sp = topo.spec();
  out.node_nic_utilisation.assign(size_t(sp.nodes), 0.0);
  for (size_t l = 0; l < links.size(); ++l)
    if (links[l].cls == LinkClass::nic_up)
      out.node_nic_utilisation[size_t(links[l].index / sp.nics_per_node)] += util(int(l)) / sp.nics_per_node;
  if (o.include_link_series) {
    out.has_series = true;
    // Utilisation over time per class: integrate the piecewise-constant class rates into bins.
    std::vector<std::array<double, kLinkClasses>> bins(kSeriesBins);
    std::array<double, kLinkClasses> rate{};
    auto changes = it.class_rate_changes;
    std::stable_sort(changes.begin(), changes.end(), [](const auto& a, const auto& b) { return a.t_s < b.t_s; });
    double t = 0;
    const double w = T / kSeriesBins;
    auto integrate = [&](double t1) {
      while (t < t1 - 1e-15) {
        int b = std::min(kSeriesBins - 1, int(t / w));
        if ((b + 1) * w <= t && b < kSeriesBins - 1) ++b;  // t sits on a bin edge (rounding)
        const double e = b == kSeriesBins - 1 ? t1 : std::min(t1, (b + 1) * w);
        for (int c = 0; c < kLinkClasses; ++c) bins[size_t(b)][size_t(c)] += rate[size_t(c)] * (e - t);
        t = e;
      }
    };
    for (const auto& ch : changes) {
      integrate(std::min(ch.t_s, T));
      rate[size_t(ch.cls)] += ch.delta_Bps;
    }
    integrate(T);
    for (int c = 0; c < kLinkClasses; ++c) {
      std::vector<double>& v = out.class_series[size_t(c)];
      v.resize(kSeriesBins);
      for (int b = 0; b < kSeriesBins; ++b)
        v[size_t(b)] = cap[size_t(c)] > 0 ? bins[size_t(b)][size_t(c)] / (w * cap[size_t(c)]) : 0;
    }
    out.series_bin_s = w;
    // The links that carried the most bytes, over time (IterationResult::hottest_series): utilisation[i]
    // of the link's capacity from t_s[i] until t_s[i + 1], the last value until the iteration's end.
    for (const LinkSeries& ls : it.hottest_series) {
      LinkSeriesReport r;
      r.t_s = ls.t_s, r.utilisation = ls.utilisation;
      r.bucket_s = cap_series(r.t_s, r.utilisation, it.iteration_s, o.max_link_series_points);
      const Link& L = links[size_t(ls.link)];
      r.link = ls.link, r.name = link_name(topo, ls.link), r.cls = L.cls, r.index = L.index;
      r.capacity_Bps = ls.capacity_Bps, r.bytes = ls.bytes, r.passive = topo.passive(ls.link);
      r.mean_utilisation = util(ls.link);
      out.hottest_series.push_back(std::move(r));
    }
  }
  return out;
}

struct Simulated {
  Resolved r;
  IterationResult it;
};

Simulated run_iteration(const Catalog& cat, const JsonDoc& doc) {
  Simulated s{resolve(cat, doc), {}};
  s.r.iter.hottest_links = 0;  // the trace draws no link series
  Topology topo(s.r.topo);
  s.it = simulate_iteration(topo, s.r.iter);
  return s;
}

void check_timeline_gpus(const Resolved& r, const SimOptions& o, const std::string& file) {
  const int used = r.iter.tp * r.iter.pp * r.iter.dp;
  if (o.timeline_gpu >= used)
    throw LoadError(file, 0, 0, "",
                    "--gpu " + std::to_string(o.timeline_gpu) + " is out of range: the layout uses GPUs 0.." +
                        std::to_string(used - 1));
}

// The report of a simulated iteration (and the run, when asked): simulate_json prints to_json of it.
SimReport make_report(const Catalog& cat, const Resolved& r, const Topology& topo, const IterationResult& it,
                      const SimOptions& o) {
  SimReport out;
  out.config = r.cfg;
  out.analytic = r.est;
  // The estimate's figures, for the simulated iteration.
  perf::Estimate& e = out.simulated;
  e = r.est;
  const double T = it.iteration_s;
  const double gpus = r.cfg.cluster.gpus();
  const double peak = perf::peak_flops(r.cfg.cluster, r.cfg.training.precision);
  e.iteration_time_s = T;
  e.time = {.compute = it.compute_s,
            .tp_comm = it.tp_comm_s,
            .cp_comm = it.cp_comm_s,
            .pp_comm = it.pp_send_s,
            .dp_comm = it.dp_exposed_s,
            .bubble = it.pp_wait_s + it.idle_s,
            .optimizer = it.optimizer_s,
            .total = T};
  e.achieved_tflops_per_gpu = r.est.hardware_flops_per_iteration / (T * gpus) / 1e12;
  e.model_tflops_per_gpu = r.est.model_flops_per_iteration / (T * gpus) / 1e12;
  e.mfu = r.est.model_flops_per_iteration / (T * gpus * peak);
  e.hfu = r.est.hardware_flops_per_iteration / (T * gpus * peak);
  e.tokens_per_s = double(r.cfg.layout.global_batch) * r.cfg.model.seq_len / T;
  e.training_days = r.est.iterations * T / 86400;
  e.gpu_hours = r.est.iterations * T / 3600 * gpus;
  e.cost_usd = e.gpu_hours * r.cfg.cluster.price_per_gpu_hour_usd;
  // The simulation itself.
  IterationReport& sim = out.sim;
  for (size_t c = 0; c * size_t(r.iter.pp) < it.workers.size(); ++c)
    sim.replica_class_replicas.push_back(it.workers[c * size_t(r.iter.pp)].replicas);
  sim.events = it.events;
  sim.flow_groups = it.flow_groups;
  sim.rate_solves = it.rate_solves;
  sim.wall_s = it.wall_s;
  sim.events_per_s = it.wall_s > 0 ? double(it.events) / it.wall_s : 0;
  sim.critical_stage = it.critical_stage;
  sim.critical_class = it.critical_class;
  sim.critical_gpu_breakdown = {it.compute_s,    it.tp_comm_s,   it.pp_send_s, it.pp_wait_s,
                                it.dp_exposed_s, it.optimizer_s, it.idle_s,    it.cp_comm_s};
  sim.dp_algorithm = to_string(r.iter.dp_algorithm);
  // ZeRO-3 reduce-scatters layer by layer (iteration.cpp build_ops), in no buckets.
  sim.buckets_per_stage = r.iter.dp_bytes_per_stage > 0 && r.iter.dp > 1 && !r.iter.zero3_gathers
                              ? int(std::ceil(r.iter.dp_bytes_per_stage / r.iter.bucket_bytes - 1e-9))
                              : 0;
  sim.links = links_report(topo, it, o);
  sim.topology = {r.topo.nodes,  r.topo.gpus_per_node,  topo.leaves(),
                  r.topo.spines, r.topo.nodes_per_leaf, r.topo.oversubscription};
  {
    // Critical path: seconds by kind, and the stages it crosses.
    CriticalPathReport& cp = sim.critical_path;
    int last = -1, last_cls = -1;
    double covered = 0;
    for (const auto& st : it.critical_path) {
      cp.seconds_by_kind[to_string(st.kind)] += st.end_s - st.start_s;
      covered += st.end_s - st.start_s;
      const int stage = it.workers[size_t(st.worker)].stage;
      if (stage != last) cp.stages.push_back(stage), last = stage;
      const int cls = it.workers[size_t(st.worker)].cls;
      if (cls != last_cls) cp.replica_classes.push_back(cls), last_cls = cls;  // replica classes crossed, in order
    }
    // The steps themselves (the panel overlays them on the Gantt rows of their class and stage).
    cp.has_steps = o.include_critical_path_steps;
    for (const auto& st : it.critical_path) {
      if (!o.include_critical_path_steps || int(cp.steps.size()) >= o.max_timeline_spans) break;
      const WorkerTimeline& w = it.workers[size_t(st.worker)];
      cp.steps.push_back({w.cls, w.stage, st.kind, st.start_s, st.end_s});
    }
    cp.idle_s = std::max(0.0, it.iteration_s - covered);
  }
  const int used = r.iter.tp * r.iter.pp * r.iter.dp;
  auto timeline_of = [&](int gpu) {
    const GpuCoord g = gpu_coord(r.iter, gpu);
    const int cls = it.replica_class[size_t(g.replica)];
    const WorkerTimeline& w = it.workers[size_t(cls * r.iter.pp + g.stage)];
    return TimelineReport{gpu, g.replica, g.stage, g.tp_rank,
                          cls, w.speed,   w.end_s, spans_report(w, o.max_timeline_spans)};
  };
  if (o.timeline_gpu >= 0 && o.timeline_gpu < used) sim.timeline = timeline_of(o.timeline_gpu);
  sim.has_timelines = !o.timeline_gpus.empty();
  for (int gpu : o.timeline_gpus)
    if (gpu >= 0 && gpu < used) sim.timelines.push_back(timeline_of(gpu));
  if (o.run_days > 0) {
    const RunSpec rs = run_spec(cat, r, T, o.run_days, o.seed);
    const auto t0 = std::chrono::steady_clock::now();
    RunReport run;
    static_cast<RunResult&>(run) = simulate_run(rs, o.progress, o.cancel);
    run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    run.seed = o.seed;
    run.failure_profile = r.sec.failure_profile;
    out.run = std::move(run);
  }
  return out;
}

}  // namespace

// ---- sliced simulation ----

struct Simulation::Impl {
  const Catalog* cat = nullptr;
  SimOptions o;
  Resolved r;
  std::unique_ptr<Topology> topo;
  std::unique_ptr<IterationSim> sim;
  bool done = false;
  std::string file;  // the config, for messages
};

Simulation::Simulation(const Catalog& cat, const JsonDoc& doc, SimOptions o) : impl_(std::make_unique<Impl>()) {
  impl_->cat = &cat;
  impl_->file = doc.file();
  impl_->o = std::move(o);
  impl_->r = resolve(cat, doc);
  check_timeline_gpus(impl_->r, impl_->o, doc.file());
  // Only the report reads the hottest links' series: skip rebuilding them when it draws none.
  impl_->r.iter.hottest_links = impl_->o.include_link_series ? std::max(0, impl_->o.hottest_links) : 0;
  impl_->topo = std::make_unique<Topology>(impl_->r.topo);
  impl_->sim = std::make_unique<IterationSim>(*impl_->topo, impl_->r.iter);
  // Over the budget by the work estimated from the layout (iteration.h IterationSim::estimated_work): the
  // config is refused here, as a config error, before any event runs.
  if (impl_->r.iter.refuse_estimated_over_budget && impl_->r.iter.max_work > 0 &&
      impl_->sim->estimated_work() > double(impl_->r.iter.max_work))
    step(1);
}

Simulation::Simulation(const Catalog& cat, const json& config, SimOptions o, const std::string& file)
    : Simulation(cat, JsonDoc::parse(config.dump(2), file), std::move(o)) {}

Simulation::~Simulation() = default;

bool Simulation::step(long long max_events) {
  try {
    if (!impl_->done) impl_->done = impl_->sim->step(max_events);
  } catch (const WorkBudgetExceeded& e) {  // the panel shows it like any config error, naming the file
    throw LoadError(impl_->file, 0, 0, "", e.what());
  }
  return impl_->done;
}

bool Simulation::done() const { return impl_->done; }

double Simulation::progress() const { return impl_->done ? 1.0 : impl_->sim->progress(); }

SimReport Simulation::report() {
  if (!impl_->done || !impl_->sim) throw std::logic_error("Simulation::report: call once, after step() returned true");
  const IterationResult it = impl_->sim->take_result();
  impl_->sim.reset();
  return make_report(*impl_->cat, impl_->r, *impl_->topo, it, impl_->o);
}

json Simulation::result() { return to_json(report()); }

json simulate_json(const Catalog& cat, const json& config, const SimOptions& o, const std::string& file) {
  return simulate_json(cat, JsonDoc::parse(config.dump(2), file), o);
}

SimReport simulate(const Catalog& cat, const JsonDoc& doc, const SimOptions& o) {
  Simulation s(cat, doc, o);
  while (!s.step(1LL << 40)) {
  }
  return s.report();
}

SimReport simulate(const Catalog& cat, const json& config, const SimOptions& o, const std::string& file) {
  return simulate(cat, JsonDoc::parse(config.dump(2), file), o);
}

json simulate_json(const Catalog& cat, const JsonDoc& doc, const SimOptions& o) {
  return to_json(simulate(cat, doc, o));
}

IterationBench bench_iteration(const Catalog& cat, const JsonDoc& doc, int repeats) {
  using clock = std::chrono::steady_clock;
  IterationBench b;
  const auto t0 = clock::now();
  const Resolved r = resolve(cat, doc);
  b.setup_wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  b.repeats = std::max(1, repeats);
  b.gpus = r.iter.tp * r.iter.pp * r.iter.dp;
  double sum = 0;
  for (int i = 0; i < b.repeats; ++i) {
    const auto t1 = clock::now();
    const Topology topo(r.topo);
    IterationSim sim(topo, r.iter);
    b.estimated_work = sim.estimated_work();
    while (!sim.step(1 << 20)) {
    }
    const IterationResult it = sim.take_result();
    const double w = std::chrono::duration<double>(clock::now() - t1).count();
    sum += w;
    b.best_wall_s = i == 0 ? w : std::min(b.best_wall_s, w);
    b.worst_wall_s = std::max(b.worst_wall_s, w);
    b.events = it.events;
    b.work = it.work;
    b.iteration_s = it.iteration_s;
    b.replica_classes = int(it.workers.size()) / std::max(1, r.iter.pp);
  }
  b.mean_wall_s = sum / b.repeats;
  b.events_per_s = b.best_wall_s > 0 ? double(b.events) / b.best_wall_s : 0;
  return b;
}

json simulate_trace_json(const Catalog& cat, const json& config, const SimOptions& o, const std::string& file) {
  return simulate_trace_json(cat, JsonDoc::parse(config.dump(2), file), o);
}

json simulate_trace_json(const Catalog& cat, const JsonDoc& doc, const SimOptions& o) {
  Simulated s = run_iteration(cat, doc);
  const IterationResult& it = s.it;
  // Chrome trace-event format ("X" complete events, microseconds): pid = replica class, tid = stage;
  // communication streams get their own tid so overlapping spans do not nest wrongly.
  json ev = json::array();
  for (size_t c = 0; c * size_t(s.r.iter.pp) < it.workers.size(); ++c) {
    const WorkerTimeline& w0 = it.workers[c * size_t(s.r.iter.pp)];
    ev.push_back(
        {{"name", "process_name"},
         {"ph", "M"},
         {"pid", int(c)},
         {"args",
          {{"name", "replica class " + std::to_string(c) + " (" + std::to_string(w0.replicas) + " replicas)"}}}});
  }
  // At most max_timeline_spans * 10 spans in all, shared evenly by the workers (stages of every class),
  // so a straggler's class is never the one left out; what is dropped is counted and said.
  const size_t per_worker =
      std::max<size_t>(200, size_t(o.max_timeline_spans) * 10 / std::max<size_t>(1, it.workers.size()));
  long long dropped = 0;
  for (const WorkerTimeline& w : it.workers) {
    size_t n = 0;
    for (int stream = 0; stream < 3; ++stream) {
      const int tid = w.stage * 3 + stream;
      static const char* names[] = {"compute", "pp send", "dp collectives"};
      ev.push_back({{"name", "thread_name"},
                    {"ph", "M"},
                    {"pid", w.cls},
                    {"tid", tid},
                    {"args", {{"name", "stage " + std::to_string(w.stage) + " " + names[stream]}}}});
    }
    for (const Span& sp : w.spans) {
      if (n++ >= per_worker) {
        ++dropped;
        continue;
      }
      const int stream = sp.kind == SpanKind::pp_send   ? (s.r.iter.blocking_p2p ? 0 : 1)
                         : sp.kind == SpanKind::dp_comm ? 2
                                                        : 0;
      std::string name = to_string(sp.kind);
      if (sp.micro_batch >= 0) name += " mb" + std::to_string(sp.micro_batch);
      if (sp.micro_batch < 0 && (sp.kind == SpanKind::pp_send || sp.kind == SpanKind::pp_wait))
        name += " (tied embedding all-reduce)";  // iteration.cpp tied_done
      if (sp.kind == SpanKind::dp_comm)          // see iteration.cpp dp_item_done: what ran on the dp stream
        name = sp.micro_batch >= 0
                   ? "ZeRO-3 param gather mb" + std::to_string(sp.micro_batch) + " chunk " + std::to_string(sp.chunk)
               : sp.chunk < 0 ? std::string("param all-gather")
                              : "dp_comm bucket " + std::to_string(sp.chunk);
      ev.push_back({{"name", name},
                    {"cat", to_string(sp.kind)},
                    {"ph", "X"},
                    {"pid", w.cls},
                    {"tid", w.stage * 3 + stream},
                    {"ts", sp.start_s * 1e6},
                    {"dur", (sp.end_s - sp.start_s) * 1e6},
                    {"args", {{"chunk", sp.chunk}}}});
    }
  }
  (void)cat;
  json out = {{"traceEvents", ev}, {"displayTimeUnit", "ms"}};
  // "otherData" is the trace format's place for metadata (chrome://tracing shows it under "Metadata").
  out["otherData"] = {{"spans_per_worker_limit", per_worker}, {"dropped_spans", dropped}};
  if (dropped > 0)
    out["otherData"]["note"] = "each worker's first " + std::to_string(per_worker) + " spans are kept; " +
                               std::to_string(dropped) + " later spans were left out (SimOptions.max_timeline_spans)";
  return out;
}

}  // namespace mc::sim
