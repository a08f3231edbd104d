// pipeline_animation.cpp - the simulated iteration's spans, one replica, read back as per-stage blocks
// (pipeline_animation.h says what a block is and why).
#include "sim/pipeline_animation.h"

#include "core/json_doc.h"
#include "sim/sim_config.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>

namespace mc::sim {

const char* to_string(PipeBlockKind k) {
  switch (k) {
    case PipeBlockKind::forward:
      return "forward";
    case PipeBlockKind::backward:
      return "backward";
    case PipeBlockKind::send:
      return "send";
    case PipeBlockKind::idle:
      return "idle";
  }
  return "?";
}

namespace {

// One stage's blocks from its worker's spans: passes (hulls of their compute and tp spans) first, sends
// where no pass runs, idle elsewhere, over [0, total].
std::vector<PipeBlock> stage_blocks(const WorkerTimeline& w, double total) {
  std::map<std::tuple<int, int, bool>, PipeBlock> passes;  // (micro-batch, chunk, backward?)
  for (const Span& sp : w.spans) {
    if (sp.kind != SpanKind::forward && sp.kind != SpanKind::backward) continue;
    const bool bwd = sp.kind == SpanKind::backward;
    auto [it, fresh] = passes.try_emplace({sp.micro_batch, sp.chunk, bwd});
    PipeBlock& b = it->second;
    if (fresh)
      b = {bwd ? PipeBlockKind::backward : PipeBlockKind::forward, sp.micro_batch, sp.chunk, sp.start_s, sp.end_s};
    b.t_start_s = std::min(b.t_start_s, sp.start_s);
    b.t_end_s = std::max(b.t_end_s, sp.end_s);
  }
  // A tp collective outside every pass is the all-gather a scatter/gather receiver runs before its
  // forward (Narayanan et al. 2021, Sec. 4.1): it belongs to that forward.
  for (const Span& sp : w.spans) {
    if (sp.kind != SpanKind::tp_comm) continue;
    auto it = passes.find({sp.micro_batch, sp.chunk, false});
    if (it != passes.end() && sp.end_s <= it->second.t_start_s && it->second.t_start_s - sp.end_s < 1e-12)
      it->second.t_start_s = sp.start_s;
  }
  std::vector<PipeBlock> busy;
  for (const auto& [key, b] : passes) busy.push_back(b);
  std::sort(busy.begin(), busy.end(), [](const PipeBlock& a, const PipeBlock& b) { return a.t_start_s < b.t_start_s; });
  std::vector<PipeBlock> sends;
  for (const Span& sp : w.spans)  // (a send without a micro-batch is the tied embedding's all-reduce)
    if (sp.kind == SpanKind::pp_send && sp.micro_batch >= 0)
      sends.push_back({PipeBlockKind::send, sp.micro_batch, sp.chunk, sp.start_s, sp.end_s});

  // Sweep the elementary intervals between every boundary; label each by what covers its middle.
  std::vector<double> cuts{0, total};
  for (const PipeBlock& b : busy) cuts.insert(cuts.end(), {b.t_start_s, b.t_end_s});
  for (const PipeBlock& b : sends) cuts.insert(cuts.end(), {b.t_start_s, b.t_end_s});
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<PipeBlock> out;
  for (size_t i = 0; i + 1 < cuts.size() && cuts[i] < total; ++i) {
    const double a = cuts[i], b = std::min(cuts[i + 1], total), mid = 0.5 * (a + b);
    PipeBlock label{PipeBlockKind::idle, -1, 0, a, b};
    auto it =
        std::upper_bound(busy.begin(), busy.end(), mid, [](double t, const PipeBlock& x) { return t < x.t_start_s; });
    if (it != busy.begin() && std::prev(it)->t_end_s > mid) {
      label = *std::prev(it);
    } else {
      for (const PipeBlock& s : sends)
        if (s.t_start_s <= mid && mid < s.t_end_s) label = s;
    }
    label.t_start_s = a;
    label.t_end_s = b;
    PipeBlock* last = out.empty() ? nullptr : &out.back();
    if (last && last->kind == label.kind && last->micro_batch == label.micro_batch && last->chunk == label.chunk)
      last->t_end_s = b;
    else
      out.push_back(label);
  }
  return out;
}

std::string pct(double f) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", f * 100);
  return b;
}

}  // namespace

PipelineAnimation animate_pipeline(const PipelineAnimationSpec& spec) {
  PipelineAnimation a;
  a.spec = spec;
  IterationSpec it = spec.iteration;
  if (it.pp < 1 || it.pp > kMaxAnimatedStages)
    throw std::invalid_argument("the animation draws 1 to " + std::to_string(kMaxAnimatedStages) + " stages, not " +
                                std::to_string(it.pp));
  if (it.micro_batches < 1 || it.micro_batches > kMaxAnimatedMicroBatches)
    throw std::invalid_argument("the animation draws 1 to " + std::to_string(kMaxAnimatedMicroBatches) +
                                " micro-batches, not " + std::to_string(it.micro_batches));
  if (it.schedule == PipeSchedule::interleaved && it.micro_batches % it.pp != 0)
    throw std::invalid_argument("the interleaved schedule needs micro-batches divisible by the stages (" +
                                std::to_string(it.micro_batches) + " micro-batches over " + std::to_string(it.pp) +
                                " stages): Megatron-LM runs them in groups of p");
  // One replica: the data-parallel gradients, ZeRO's gathers, the optimizer and stragglers belong to
  // other views; what is left is the pipeline.
  it.dp = 1;
  it.dp_bytes_per_stage = 0;
  it.zero_sharded = false;
  it.zero3_gathers = false;
  it.optimizer_s = 0;
  it.stragglers.clear();
  it.hottest_links = 0;
  if (it.schedule != PipeSchedule::interleaved) it.virtual_stages = 1;
  TopologySpec ts = spec.topology;
  ts.nodes = std::max(ts.nodes, (it.tp * it.pp + ts.gpus_per_node - 1) / std::max(1, ts.gpus_per_node));
  a.spec.topology = ts;
  a.spec.iteration = it;
  const Topology topo(ts);
  const IterationResult r = simulate_iteration(topo, it);

  const int p = it.pp, m = it.micro_batches, v = it.virtual_stages;
  a.stages = p;
  a.micro_batches = m;
  a.virtual_stages = v;
  for (const WorkerTimeline& w : r.workers)
    for (const Span& sp : w.spans)
      if (sp.kind == SpanKind::forward || sp.kind == SpanKind::backward ||
          (sp.kind == SpanKind::pp_send && sp.micro_batch >= 0) || sp.kind == SpanKind::tp_comm)
        a.total_s = std::max(a.total_s, sp.end_s);
  a.rows.resize(size_t(p));
  a.idle_s.assign(size_t(p), 0);
  double idle = 0;
  for (const WorkerTimeline& w : r.workers) {
    if (w.cls != 0) continue;  // one replica: class 0 is it
    a.rows[size_t(w.stage)] = stage_blocks(w, a.total_s);
    for (const PipeBlock& b : a.rows[size_t(w.stage)])
      if (b.kind == PipeBlockKind::idle) a.idle_s[size_t(w.stage)] += b.t_end_s - b.t_start_s;
    idle += a.idle_s[size_t(w.stage)];
  }
  a.bubble_fraction = a.total_s > 0 ? idle / (double(p) * a.total_s) : 0;
  // The fill and drain: p-1 stages' worth of passes, 1/v of a full pass each with v chunks, over the
  // m passes every stage runs plus that fill and drain (pipeline_animation.h).
  const double vm = double(v) * m;
  a.analytic_bubble = double(p - 1) / (vm + p - 1);
  const std::string P = std::to_string(p), M = std::to_string(m), V = std::to_string(v);
  if (v > 1)
    a.rule = "bubble = (p-1) / (v m + p-1) = (" + P + "-1) / (" + V + " x " + M + " + " + P +
             "-1) = " + std::to_string(p - 1) + "/" + std::to_string(int(vm) + p - 1) + " = " + pct(a.analytic_bubble);
  else
    a.rule = "bubble = (p-1) / (m + p-1) = (" + P + "-1) / (" + M + " + " + P + "-1) = " + std::to_string(p - 1) + "/" +
             std::to_string(m + p - 1) + " = " + pct(a.analytic_bubble);
  return a;
}

PipelineAnimationSpec pipeline_spec_of_config(const Catalog& cat, const nlohmann::json& config,
                                              const PipelineSettings& set) {
  Resolved r = resolve(cat, JsonDoc::parse(config.dump(), "the simulator's config"));
  IterationSpec& it = r.iter;
  perf::Layout& L = r.cfg.layout;
  if (set.schedule >= 0) it.schedule = PipeSchedule(set.schedule);
  if (set.stages > 0) it.pp = set.stages;
  if (set.micro_batches > 0) it.micro_batches = set.micro_batches;
  if (set.virtual_stages > 0) it.virtual_stages = set.virtual_stages;
  if (it.schedule != PipeSchedule::interleaved) it.virtual_stages = 1;
  // The layers of the layout asked for, split as the analytic model splits them.
  L.pp = it.pp;
  L.virtual_stages = it.virtual_stages;
  L.schedule = it.schedule;
  if (int(L.layers_per_stage.size()) != L.pp) L.layers_per_stage.clear();
  it.stage_layers.clear();
  it.chunk_layers.clear();
  if (it.pp >= 1 && it.pp <= r.cfg.model.layers) {
    if (it.schedule == PipeSchedule::interleaved)
      it.chunk_layers = perf::chunk_layers(r.cfg.model, L);
    else
      it.stage_layers = perf::stage_layers(r.cfg.model, L);
  }
  return {r.topo, it};
}

double idle_until(const PipelineAnimation& a, int stage, double t) {
  double idle = 0;
  for (const PipeBlock& b : a.rows[size_t(stage)]) {
    if (b.t_start_s >= t) break;
    if (b.kind == PipeBlockKind::idle) idle += std::min(b.t_end_s, t) - b.t_start_s;
  }
  return idle;
}

PipelineFrame frame_at(const PipelineAnimation& a, double t) {
  PipelineFrame f;
  f.t_s = t;
  double idle = 0;
  for (int s = 0; s < a.stages; ++s) {
    const auto& row = a.rows[size_t(s)];
    int at = -1;
    for (size_t i = 0; i < row.size(); ++i)
      if (row[i].t_start_s <= t && t < row[i].t_end_s) at = int(i);
    f.block.push_back(at);
    f.idle_s.push_back(idle_until(a, s, t));
    idle += f.idle_s.back();
  }
  f.bubble_so_far = t > 0 ? idle / (double(a.stages) * std::min(t, a.total_s)) : 0;
  return f;
}

std::vector<double> event_times(const PipelineAnimation& a) {
  std::vector<double> t;
  for (const auto& row : a.rows)
    for (const PipeBlock& b : row) {
      t.push_back(b.t_start_s);
      t.push_back(b.t_end_s);
    }
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

// ---- the description (animation_kind.h) ----

PipelineSettings PipelineAnimationKind::config_base(PipelineSettings held) {
  held.schedule = int(PipeSchedule::one_f_one_b);
  held.follow = 0;
  return held;
}

PipelineAnimation PipelineAnimationKind::make(const Catalog& cat, const PipelineSettings& s,
                                              const nlohmann::json* machine) {
  if (!machine) throw std::invalid_argument("a pipeline is animated on a machine: give its simulate config");
  return animate_pipeline(pipeline_spec_of_config(cat, *machine, s));
}

nlohmann::json PipelineAnimationKind::figures(const PipelineAnimation& a, double t) {
  const PipelineFrame f = frame_at(a, t);
  return {{"stages", a.stages},
          {"micro_batches", a.micro_batches},
          {"virtual_stages", a.virtual_stages},
          {"iteration_s", a.total_s},
          {"bubble_fraction", a.bubble_fraction},
          {"analytic_bubble", a.analytic_bubble},
          {"bubble_so_far", f.bubble_so_far},
          {"t_s", t}};
}

nlohmann::json PipelineAnimationKind::opened(const PipelineSettings& s, const PipelineAnimation& a) {
  if (s.follow > a.micro_batches)
    throw std::runtime_error("follow " + std::to_string(s.follow) + ": the pipeline has only " +
                             std::to_string(a.micro_batches) + " micro-batches");
  return {{"schedule", schedule_name(a.spec.iteration.schedule)},
          {"stages", a.stages},
          {"micro_batches", a.micro_batches},
          {"virtual_stages", a.virtual_stages},
          {"follow", s.follow}};
}

namespace {
const AnimationRegistrar reg{describe_animation<PipelineAnimationKind>()};
}  // namespace

}  // namespace mc::sim
