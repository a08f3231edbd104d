// zero_animation.cpp - one ZeRO step, layer by layer, from the iteration simulator (see zero_animation.h).
//
//   animate_zero     builds the data-parallel config, simulates it, reads GPU 0's spans and the stage's
//                    collectives back as events, and walks them for the memory curve
//   frame_at    what is held, moving and computing at one moment
//   event_times the stops of "step one event"
#include "sim/zero_animation.h"

#include "core/json_doc.h"
#include "perf/perf.h"
#include "sim/iteration.h"
#include "sim/sim_config.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace mc::sim {

using nlohmann::json;

ZeroAnimation animate_zero(const Catalog& cat, const ZeroAnimationSpec& spec) {
  if (spec.stage < 0 || spec.stage > 3)
    throw std::invalid_argument("ZeRO stage " + std::to_string(spec.stage) + " does not exist: pick 0 to 3");
  if (spec.gpus < 2 || spec.gpus > 64)
    throw std::invalid_argument("the view shares the model over 2 to 64 GPUs; " + std::to_string(spec.gpus) +
                                " is outside: pick a GPU count in that range");
  if (spec.micro_batches < 1 || spec.micro_batches > 8)
    throw std::invalid_argument("pick 1 to 8 micro-batches (" + std::to_string(spec.micro_batches) + " asked)");
  json cfg = spec.config.is_object() ? spec.config : json::object();
  cfg["parallel"] = {{"tp", 1},
                     {"pp", 1},
                     {"dp", spec.gpus},
                     {"micro_batch", 1},
                     {"global_batch", spec.gpus * spec.micro_batches},
                     {"zero", spec.stage},
                     {"recompute", spec.recompute}};
  if (!cfg.contains("cluster") || !cfg["cluster"].is_object()) cfg["cluster"] = json::object();
  cfg["cluster"]["gpus"] = spec.gpus;
  cfg["cluster"].erase("nodes");
  const Resolved r = resolve(cat, JsonDoc::parse(cfg.dump(), "ZeRO, layer by layer"));
  IterationSpec it = r.iter;
  it.hottest_links = 0;
  const IterationResult res = simulate_iteration(Topology(r.topo), it);

  ZeroAnimation a;
  a.spec = spec;
  a.layers = r.cfg.model.layers;
  a.total_s = res.iteration_s;
  a.software = r.cfg.software.id;
  const perf::MemoryBreakdown& mem = r.est.memory;
  a.weights_bytes = mem.weights;
  a.gradients_bytes = mem.gradients;
  a.hbm_bytes = r.est.hbm_bytes;
  a.optimizer_bytes = mem.optimizer;
  const double bytes = perf::full_width(r.cfg.training.precision) ? 4 : 2;
  a.layer_weights_bytes = perf::layer_params_bytes(r.cfg.model, 1, bytes);
  const double all_weights = perf::param_count(r.cfg.model) * bytes;
  a.outside_weights_bytes = std::max(0.0, all_weights - a.layers * a.layer_weights_bytes);
  // Without a pipeline one micro-batch's activations are kept at a time: the model's figure is all layers'.
  a.activations_per_layer_bytes = a.layers > 0 ? mem.activations / a.layers : 0;

  // GPU 0 is class 0, stage 0 (iteration.h: workers[class * pp + stage]). Its forward spans of a
  // micro-batch are its layers in order, its backward spans the same layers in reverse.
  if (res.workers.empty()) throw std::invalid_argument("the simulator returned no worker for this layout");
  std::map<int, int> fwd_seen, bwd_seen;
  for (const Span& sp : res.workers[0].spans) {
    ZeroEvent e{ZeroEvent::forward};
    if (sp.kind == SpanKind::forward) {
      e.layer = fwd_seen[sp.micro_batch]++;
    } else if (sp.kind == SpanKind::backward) {
      e.kind = ZeroEvent::backward;
      e.layer = a.layers - 1 - bwd_seen[sp.micro_batch]++;
    } else if (sp.kind == SpanKind::optimizer) {
      e.kind = ZeroEvent::optimizer;
    } else {
      continue;  // waits and comm spans: the collectives come from dp_events below
    }
    e.micro_batch = sp.micro_batch;
    e.start_s = sp.start_s;
    e.end_s = sp.end_s;
    a.events.push_back(e);
  }
  for (const IterationResult::DpEvent& d : res.dp_events) {
    ZeroEvent e{ZeroEvent::gradient_bucket};
    switch (d.kind) {
      case IterationResult::DpEvent::bucket:
        e.kind = ZeroEvent::gradient_bucket;
        break;
      case IterationResult::DpEvent::params_all_gather:
        e.kind = ZeroEvent::params_all_gather;
        break;
      case IterationResult::DpEvent::zero3_gather:
        e.kind = ZeroEvent::gather;
        break;
      case IterationResult::DpEvent::zero3_reduce:
        e.kind = ZeroEvent::reduce_scatter;
        break;
    }
    e.layer = d.unit;
    e.micro_batch = d.micro_batch;
    e.backward_pass = d.backward;
    e.bytes = d.bytes;
    e.start_s = d.start_s;
    e.end_s = d.end_s;
    // Volume as ZeRO Sec. 7.2.2 counts it: an all-reduce moves its buffer twice (reduce-scatter, all-gather).
    a.bytes_moved_per_gpu += (e.kind == ZeroEvent::gradient_bucket && spec.stage == 0 ? 2 : 1) * d.bytes;
    a.events.push_back(e);
  }
  std::stable_sort(a.events.begin(), a.events.end(),
                   [](const ZeroEvent& x, const ZeroEvent& y) { return x.start_s < y.start_s; });
  a.data_parallel_bytes = 2 * all_weights;

  // ---- memory over the step: steps (+/- bytes at a time), summed in time order ----
  std::vector<std::pair<double, double>> steps;  // (t, delta bytes)
  // The compute span that ends a unit's use: (micro-batch, backward?, layer) -> end time.
  std::map<std::tuple<int, bool, int>, double> compute_end;
  std::map<std::pair<int, bool>, double> pass_end;  // (micro-batch, backward?) -> its last compute's end
  for (const ZeroEvent& e : a.events) {
    if (e.kind != ZeroEvent::forward && e.kind != ZeroEvent::backward) continue;
    const bool bwd = e.kind == ZeroEvent::backward;
    compute_end[{e.micro_batch, bwd, e.layer}] = e.end_s;
    double& pe = pass_end[{e.micro_batch, bwd}];
    pe = std::max(pe, e.end_s);
    // Activations: saved as a layer's forward ends, freed as its backward ends (Korthikanti et al. 2022).
    steps.push_back({e.end_s, bwd ? -a.activations_per_layer_bytes : a.activations_per_layer_bytes});
  }
  // ZeRO-3: a unit's full weights from the first of its gathers in a pass to the end of the compute that
  // used them (the rest, embeddings and final norm, to the end of the pass); and a layer's full gradients
  // from its backward to the end of their reduce-scatter.
  std::map<std::tuple<int, bool, int>, double> held_from;
  for (const ZeroEvent& e : a.events) {
    if (e.kind == ZeroEvent::gather) {
      auto key = std::make_tuple(e.micro_batch, e.backward_pass, e.layer);
      auto f = held_from.find(key);
      if (f == held_from.end() || e.start_s < f->second) held_from[key] = e.start_s;
    } else if (e.kind == ZeroEvent::reduce_scatter && e.layer >= 0 && e.micro_batch >= 0) {
      auto c = compute_end.find({e.micro_batch, true, e.layer});
      const double from = c != compute_end.end() ? std::min(c->second, e.start_s) : e.start_s;
      steps.push_back({from, a.layer_weights_bytes});
      steps.push_back({e.end_s, -a.layer_weights_bytes});
    }
  }
  for (const auto& [key, from] : held_from) {
    const auto [mb, bwd, layer] = key;
    double until = from;
    if (layer >= 0) {
      auto c = compute_end.find({mb, bwd, layer});
      if (c != compute_end.end()) until = c->second;
    } else {
      auto p = pass_end.find({mb, bwd});
      if (p != pass_end.end()) until = p->second;
    }
    const double b = layer >= 0 ? a.layer_weights_bytes : a.outside_weights_bytes;
    steps.push_back({from, b});
    steps.push_back({std::max(from, until), -b});
  }
  std::stable_sort(steps.begin(), steps.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  a.states_bytes = a.weights_bytes + a.gradients_bytes + a.optimizer_bytes;
  double m = a.states_bytes;
  a.memory_t_s.push_back(0);
  a.memory_bytes.push_back(m);
  a.peak_bytes = m;
  for (const auto& [t, d] : steps) {
    m += d;
    if (t == a.memory_t_s.back()) {
      a.memory_bytes.back() = m;
    } else {
      a.memory_t_s.push_back(t);
      a.memory_bytes.push_back(m);
    }
    a.peak_bytes = std::max(a.peak_bytes, m);
  }
  return a;
}

ZeroFrame frame_at(const ZeroAnimation& a, double t_s) {
  ZeroFrame f;
  f.t_s = t_s;
  for (size_t i = 0; i < a.events.size(); ++i) {
    const ZeroEvent& e = a.events[i];
    if (e.start_s > t_s) {
      if (f.next_event < 0) f.next_event = int(i);
      continue;
    }
    if (t_s >= e.end_s) continue;
    switch (e.kind) {
      case ZeroEvent::forward:
      case ZeroEvent::backward:
        f.computing_layer = e.layer;
        f.computing_backward = e.kind == ZeroEvent::backward;
        break;
      case ZeroEvent::gather:
        f.gathering.push_back(e.layer);
        break;
      case ZeroEvent::reduce_scatter:
        f.reducing.push_back(e.layer);
        break;
      case ZeroEvent::gradient_bucket:
      case ZeroEvent::params_all_gather:
        f.bucket_in_flight = true;
        break;
      case ZeroEvent::optimizer:
        f.optimizer = true;
        break;
    }
  }
  // Held weights: gathered (started) and not yet used up, per the memory walk's rule.
  std::map<std::tuple<int, bool, int>, double> from;
  for (const ZeroEvent& e : a.events)
    if (e.kind == ZeroEvent::gather && e.start_s <= t_s) {
      auto key = std::make_tuple(e.micro_batch, e.backward_pass, e.layer);
      if (!from.count(key)) from[key] = e.start_s;
    }
  for (const auto& [key, start] : from) {
    const auto [mb, bwd, layer] = key;
    bool used = false;
    for (const ZeroEvent& e : a.events) {
      const bool same_pass = e.micro_batch == mb && (e.kind == (bwd ? ZeroEvent::backward : ZeroEvent::forward));
      if (!same_pass || e.end_s > t_s) continue;
      // A layer is used up when its compute ended; the rest when its pass's last layer did.
      if (layer >= 0 ? e.layer == layer : e.layer == (bwd ? 0 : a.layers - 1)) used = true;
    }
    if (!used) f.gathered.push_back(layer);
  }
  std::sort(f.gathered.begin(), f.gathered.end());
  auto it = std::upper_bound(a.memory_t_s.begin(), a.memory_t_s.end(), t_s);
  const size_t i = it == a.memory_t_s.begin() ? 0 : size_t(it - a.memory_t_s.begin() - 1);
  f.memory_bytes = a.memory_bytes.empty() ? 0 : a.memory_bytes[i];
  return f;
}

std::vector<double> event_times(const ZeroAnimation& a) {
  std::vector<double> t{0};
  for (const ZeroEvent& e : a.events) t.push_back(e.start_s), t.push_back(e.end_s);
  t.push_back(a.total_s);
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

// ---- the description (animation_kind.h) ----

ZeroAnimation ZeroAnimationKind::make(const Catalog& cat, const ZeroSettings& s, const nlohmann::json*) {
  ZeroAnimationSpec spec;
  spec.stage = s.stage;
  spec.gpus = s.gpus;
  spec.micro_batches = s.micro_batches;
  spec.config = zero_config(s);
  return animate_zero(cat, spec);
}

nlohmann::json ZeroAnimationKind::figures(const ZeroAnimation& a, double t) {
  const ZeroFrame f = frame_at(a, t);
  return {{"stage", a.spec.stage},
          {"gpus", a.spec.gpus},
          {"layers", a.layers},
          {"iteration_s", a.total_s},
          {"weights_bytes", a.weights_bytes},
          {"gradients_bytes", a.gradients_bytes},
          {"optimizer_bytes", a.optimizer_bytes},
          {"states_bytes", a.states_bytes},
          {"peak_bytes", a.peak_bytes},
          {"hbm_bytes", a.hbm_bytes},
          {"fits", a.peak_bytes <= a.hbm_bytes},
          {"bytes_moved_per_gpu", a.bytes_moved_per_gpu},
          {"data_parallel_bytes", a.data_parallel_bytes},
          {"traffic_ratio", a.bytes_moved_per_gpu / std::max(1.0, a.data_parallel_bytes)},
          {"memory_now_bytes", f.memory_bytes},
          {"computing_layer", f.computing_layer},
          {"t_s", t}};
}

namespace {
const AnimationRegistrar reg{describe_animation<ZeroAnimationKind>()};
}  // namespace

}  // namespace mc::sim
