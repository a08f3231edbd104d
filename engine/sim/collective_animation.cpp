// collective_animation.cpp - a collective unrolled into its algorithm's steps on the flow simulator
// (collective_animation.h).
//
// Sections: checks and placement; the steps of each algorithm (ring, hierarchical, tree, send); running
// the steps through FlowNet; figures; frames.
#include "sim/collective_animation.h"

#include "core/format.h"
#include "core/json_doc.h"
#include "sim/sim_config.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace mc::sim {

namespace {

// One step before it is run: a flow group (the phase's links, the step's bytes) and its moves.
struct PlannedStep {
  int phase = 0;
  FlowGroupSpec group;
  double latency_s = 0;
  std::vector<ChunkMove> moves;  // times filled in when run
};

// ---- checks and placement ------------------------------------------------------------------------------

void check(const CollectiveAnimationSpec& s) {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  if (s.gpus < 2 || s.gpus > kMaxAnimatedGpus)
    fail("GPUs in the group: " + std::to_string(s.gpus) + " (pick 2 to " + std::to_string(kMaxAnimatedGpus) + ")");
  if (!(s.message_bytes > 0) || !std::isfinite(s.message_bytes) || s.message_bytes > 1e13)
    fail("message size: pick a size between 1 byte and 10 TB");
  if (s.first_gpu < 0) fail("first GPU of the group: " + std::to_string(s.first_gpu) + " (pick 0 or more)");
  if (s.topology.gpus_per_node < 1)
    fail("GPUs per server: " + std::to_string(s.topology.gpus_per_node) + " (pick 1 or more)");
  if (!(s.topology.nvlink_GBps_per_gpu > 0) || !(s.topology.node_network_Gbps > 0) || s.topology.nics_per_node < 1)
    fail("the cluster has a link of zero bandwidth (NVLink, NIC): pick a cluster whose links all carry bytes");
  if (s.topology.nodes_per_leaf < 1 || s.topology.spines < 1) fail("the fabric needs at least one leaf and one spine");
}

// Ring step s of a pass: rank i sends chunk (i - s) mod p (Patarasuk & Yuan 2009, reduce-scatter); in the
// all-gather pass it sends the chunk it completed, (i + 1 - s) mod p.
int ring_chunk(int i, int s, int p, bool all_gather_pass) {
  return (((i + (all_gather_pass ? 1 : 0) - s) % p) + p) % p;
}

// `rounds` passes of a ring phase, unrolled: each step moves bytes_per_hop / steps over the phase's links.
void ring_steps(const Topology& topo, const CollectivePhase& ph, int phase, const std::vector<std::vector<int>>& rings,
                bool reduce_pass, bool gather_pass, std::vector<PlannedStep>& out) {
  const int p = int(rings.front().size());
  const int passes = (reduce_pass ? 1 : 0) + (gather_pass ? 1 : 0);
  const int steps = passes * (p - 1);
  const double bytes = ph.flows.bytes_per_flow / steps;
  for (int s = 0; s < steps; ++s) {
    const bool gathering = !reduce_pass || s >= p - 1;
    const int s_in_pass = reduce_pass && gathering ? s - (p - 1) : s;
    PlannedStep st;
    st.phase = phase;
    st.group = ph.flows;
    st.group.bytes_per_flow = bytes;
    st.latency_s = ph.latency_s / steps;
    for (const auto& r : rings) {
      for (int i = 0; i < p; ++i) {
        ChunkMove m;
        m.phase = phase;
        m.chunk = ring_chunk(i, s_in_pass, p, gathering && reduce_pass);
        m.src = r[size_t(i)];
        m.dst = r[size_t((i + 1) % p)];
        m.reduces = !gathering;
        m.bytes = bytes;
        topo.path(m.src, m.dst, m.links);
        st.moves.push_back(std::move(m));
      }
    }
    out.push_back(std::move(st));
  }
}

// ---- the steps of each algorithm -------------------------------------------------------------------------

std::vector<PlannedStep> plan(const CollectiveAnimationSpec& s, const Topology& topo, const std::vector<int>& ranks,
                              std::vector<AnimatedPhase>& phases) {
  std::vector<PlannedStep> steps;
  const double N = s.message_bytes;
  auto add_phase = [&](std::string name) {
    phases.push_back({std::move(name), int(steps.size()), 0, 0, 0});
    return int(phases.size()) - 1;
  };
  if (s.kind == CollectiveKind::send) {
    const int ph = add_phase("pipeline send");
    const CollectivePhase cp = build_sends(topo, {{ranks.front(), ranks.back()}}, N, s.latency);
    PlannedStep st{ph, cp.flows, cp.latency_s, {}};
    ChunkMove m;
    m.phase = ph;
    m.src = ranks.front();
    m.dst = ranks.back();
    m.bytes = N;
    topo.path(m.src, m.dst, m.links);
    st.moves.push_back(std::move(m));
    steps.push_back(std::move(st));
    return steps;
  }
  const std::vector<std::vector<int>> ring{ranks};
  const Algorithm alg = s.kind == CollectiveKind::all_reduce ? s.algorithm : Algorithm::ring;
  const std::vector<CollectivePhase> built = build_collective(topo, s.kind, alg, ring, N, s.latency);
  if (built.empty()) throw std::invalid_argument("the group needs at least 2 GPUs");
  if (alg == Algorithm::tree && s.kind == CollectiveKind::all_reduce) {
    // Every edge of both trees carries its half of the buffer each way for the whole (pipelined) call,
    // the edges as build_collective lays them: a chain inside each node, two complementary binary trees
    // over the nodes' first ranks.
    const int ph = add_phase("double binary tree: reduce up, broadcast down (pipelined)");
    PlannedStep st{ph, built.front().flows, built.front().latency_s, {}};
    const auto nodes = ranks_by_node(topo, ranks);
    const size_t q = nodes.size();
    auto edge = [&](int tree, int child, int parent) {
      for (int dir = 0; dir < 2; ++dir) {
        ChunkMove m;
        m.phase = ph;
        m.chunk = tree;
        m.src = dir == 0 ? child : parent;
        m.dst = dir == 0 ? parent : child;
        m.reduces = dir == 0;
        m.bytes = N / 2;
        topo.path(m.src, m.dst, m.links);
        st.moves.push_back(std::move(m));
      }
    };
    for (int tree = 0; tree < 2; ++tree) {
      for (const auto& local : nodes)
        for (size_t i = 1; i < local.size(); ++i) edge(tree, local[i], local[i - 1]);
      for (size_t i = 1; i < q; ++i) {
        const size_t child = tree == 0 ? i : q - 1 - i;
        const size_t parent = tree == 0 ? (i - 1) / 2 : q - 1 - (i - 1) / 2;
        edge(tree, nodes[child].front(), nodes[parent].front());
      }
    }
    steps.push_back(std::move(st));
    return steps;
  }
  if (built.size() == 3) {
    // Hierarchical (build_collective): reduce-scatter inside each node, an all-reduce ring across nodes
    // per local index, all-gather inside. Unrolled only for a group that fills its servers equally (the
    // layouts the iteration uses it for); build_collective's estimate for ragged groups has no step list.
    const auto nodes = ranks_by_node(topo, ranks);
    size_t g = nodes.front().size();
    for (const auto& v : nodes) g = std::min(g, v.size());
    for (const auto& v : nodes)
      if (v.size() != g)
        throw std::invalid_argument(
            "hierarchical all-reduce: the group's servers hold " + std::to_string(nodes.front().size()) + " and " +
            std::to_string(v.size()) + " of its GPUs; pick a group that fills whole servers (a multiple of " +
            std::to_string(topo.spec().gpus_per_node) + " GPUs starting at a server's first GPU)");
    std::vector<std::vector<int>> cross;
    for (size_t k = 0; k < g; ++k) {
      cross.emplace_back();
      for (const auto& v : nodes) cross.back().push_back(v[k]);
    }
    ring_steps(topo, built[0], add_phase("reduce-scatter inside each server"), nodes, true, false, steps);
    const int across = add_phase("all-reduce ring across servers");
    phases[size_t(across)].reduce_then_gather = true;
    ring_steps(topo, built[1], across, cross, true, true, steps);
    ring_steps(topo, built[2], add_phase("all-gather inside each server"), nodes, false, true, steps);
    return steps;
  }
  const bool ar = s.kind == CollectiveKind::all_reduce;
  const char* name = ar                                         ? "ring all-reduce"
                     : s.kind == CollectiveKind::reduce_scatter ? "ring reduce-scatter"
                                                                : "ring all-gather";
  const int ph = add_phase(name);
  phases[size_t(ph)].reduce_then_gather = ar;
  ring_steps(topo, built.front(), ph, ring, s.kind != CollectiveKind::all_gather,
             s.kind != CollectiveKind::reduce_scatter, steps);
  return steps;
}

std::string bytes_text(double b) { return format_quantity(b, "bytes"); }

}  // namespace

// ---- running the steps through FlowNet ------------------------------------------------------------------

CollectiveAnimation animate_collective(const CollectiveAnimationSpec& spec_in) {
  check(spec_in);
  CollectiveAnimation a;
  a.spec = spec_in;
  CollectiveAnimationSpec& s = a.spec;
  TopologySpec ts = s.topology;
  const int needed_nodes = (s.first_gpu + s.gpus + ts.gpus_per_node - 1) / ts.gpus_per_node;
  ts.nodes = std::max(ts.nodes, needed_nodes);
  s.topology = ts;
  a.topology = Topology(ts);
  for (int i = 0; i < s.gpus; ++i) a.ranks.push_back(s.first_gpu + i);

  std::vector<PlannedStep> planned = plan(s, a.topology, a.ranks, a.phases);
  FlowNet net(a.topology);
  double t = 0;
  for (size_t k = 0; k < planned.size(); ++k) {
    PlannedStep& st = planned[k];
    t += st.latency_s;
    net.start(t, st.group, (long long)k);
    const double end = net.next_completion_time();
    net.complete_next();
    for (ChunkMove& m : st.moves) {
      m.step = int(k);
      m.t_start_s = t;
      m.t_end_s = end;
      a.moves.push_back(m);
    }
    AnimatedPhase& ph = a.phases[size_t(st.phase)];
    if (ph.steps == 0) ph.t_start_s = t - st.latency_s;
    ph.steps += 1;
    ph.t_end_s = end;
    t = end;
  }
  a.steps = int(planned.size());
  a.total_s = t;

  // Every link any step crosses, with its load over time rebuilt from the groups' rate history.
  std::map<int, int> index;  // link id -> position in a.links
  for (const PlannedStep& st : planned) {
    for (const auto& e : st.group.links) index.emplace(e.first, 0);
    for (const auto& e : st.group.passive_links) index.emplace(e.first, 0);
  }
  for (auto& [link, pos] : index) {
    pos = int(a.links.size());
    AnimatedLink l;
    l.link = link;
    l.cls = a.topology.link(link).cls;
    l.capacity_Bps = a.topology.link(link).capacity_Bps;
    l.bytes = net.link_bytes()[size_t(link)];
    a.links.push_back(std::move(l));
  }
  const auto loads = link_loads(net.group_rate_changes(), net.groups_started(), int(a.links.size()),
                                [&](int serial, std::vector<std::pair<int, double>>& out) {
                                  const PlannedStep& st = planned[size_t(serial)];
                                  for (const auto& e : st.group.links) out.emplace_back(index.at(e.first), e.second);
                                  for (const auto& e : st.group.passive_links)
                                    out.emplace_back(index.at(e.first), e.second);
                                });
  for (size_t i = 0; i < a.links.size(); ++i) a.links[i].load = loads[i];

  // ---- figures -----------------------------------------------------------------------------------------
  std::map<int, double> sent;
  for (const ChunkMove& m : a.moves) sent[m.src] += m.bytes;
  for (const auto& e : sent) a.bytes_sent_per_gpu = std::max(a.bytes_sent_per_gpu, e.second);
  const double p = double(s.gpus), N = s.message_bytes;
  a.bus_factor = s.kind == CollectiveKind::all_reduce ? 2 * (p - 1) / p
                 : s.kind == CollectiveKind::send     ? 1
                                                      : (p - 1) / p;
  a.algbw_GBps = a.total_s > 0 ? N / a.total_s / 1e9 : 0;
  a.busbw_GBps = a.algbw_GBps * a.bus_factor;
  const std::string pN = std::to_string(s.gpus - 1) + "/" + std::to_string(s.gpus);
  switch (s.kind) {
    case CollectiveKind::all_reduce:
      a.rule = "all-reduce: every GPU sends and receives 2(p-1)/p x N = 2 x " + pN + " x " + bytes_text(N) + " = " +
               bytes_text(2 * (p - 1) / p * N) +
               (s.algorithm == Algorithm::ring
                    ? " (ring: " + std::to_string(a.steps) + " steps of N/p = " + bytes_text(N / p) + ")"
                    : " at the least (this algorithm: " + bytes_text(a.bytes_sent_per_gpu) + " from the busiest GPU)");
      break;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
      a.rule = std::string(s.kind == CollectiveKind::reduce_scatter ? "reduce-scatter" : "all-gather") +
               ": every GPU sends (p-1)/p x N = " + pN + " x " + bytes_text(N) + " = " + bytes_text((p - 1) / p * N) +
               " in " + std::to_string(a.steps) + " steps of N/p = " + bytes_text(N / p);
      break;
    case CollectiveKind::send:
      a.rule = "send: " + bytes_text(N) + " from one GPU to the other, once";
      break;
  }
  return a;
}

TopologySpec topology_of_config(const Catalog& cat, const nlohmann::json& config) {
  return resolve(cat, JsonDoc::parse(config.dump(), "the simulator's config")).topo;
}

// ---- frames ---------------------------------------------------------------------------------------------

std::string step_activity(const CollectiveAnimation& a, int step) {
  for (const AnimatedPhase& ph : a.phases) {
    const int k = step - ph.first_step;
    if (k < 0 || k >= ph.steps) continue;
    if (!ph.reduce_then_gather || ph.steps < 2) return ph.name;
    const int half = ph.steps / 2;
    const bool reducing = k < half;
    return ph.name + (reducing ? ": reduce-scatter, step " : ": all-gather, step ") +
           std::to_string((reducing ? k : k - half) + 1) + " of " + std::to_string(reducing ? half : ph.steps - half);
  }
  return "";
}

CollectiveFrame frame_at(const CollectiveAnimation& a, double t) {
  CollectiveFrame f;
  f.t_s = t;
  for (size_t i = 0; i < a.moves.size(); ++i) {
    const ChunkMove& m = a.moves[i];
    if (t >= m.t_start_s && t < m.t_end_s) {
      f.in_flight.push_back({int(i), (t - m.t_start_s) / (m.t_end_s - m.t_start_s)});
      f.step = m.step;
    }
  }
  if (f.step < 0) {
    // Between steps (a latency gap) or outside the call: the last step that has ended.
    for (const ChunkMove& m : a.moves)
      if (m.t_end_s <= t) f.step = std::max(f.step, m.step);
    if (!a.moves.empty() && t >= a.total_s) f.step = a.steps;
  }
  f.link_utilisation.reserve(a.links.size());
  for (const AnimatedLink& l : a.links) {
    double load = 0;
    for (const LoadPoint& p : l.load) {
      if (p.t_s > t) break;
      load = p.load_Bps;
    }
    f.link_utilisation.push_back(l.capacity_Bps > 0 ? load / l.capacity_Bps : 0);
  }
  return f;
}

ChartData link_load_chart(const CollectiveAnimation& a, const CollectiveFrame& f) {
  ChartData d{.title = "Links of the collective", .x_name = "link", .levels = true};
  ChartSeries load{"load at " + format_short_time(f.t_s), "%", {}};
  for (size_t i = 0; i < a.links.size() && i < f.link_utilisation.size(); ++i) {
    if (a.links[i].cls == LinkClass::spine) continue;  // a crossbar, never the bottleneck (topology.h passive)
    d.x_labels.push_back(link_name(a.topology, a.links[i].link));
    load.y.push_back(100 * f.link_utilisation[i]);
  }
  d.series.push_back(std::move(load));
  return d;
}

std::vector<double> event_times(const CollectiveAnimation& a) {
  std::vector<double> t;
  for (const ChunkMove& m : a.moves) {
    t.push_back(m.t_start_s);
    t.push_back(m.t_end_s);
  }
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

CollectiveAnimationSpec collective_spec(const CollectiveSettings& settings, const TopologySpec& topology) {
  CollectiveAnimationSpec spec;
  spec.topology = topology;
  spec.kind = settings.kind;
  spec.algorithm = settings.algorithm;
  spec.gpus = settings.gpus;
  spec.first_gpu = settings.first_gpu;
  spec.message_bytes = settings.message_bytes;
  return spec;
}

// ---- the description (animation_kind.h) ----

CollectiveSettings CollectiveAnimationKind::config_base(CollectiveSettings held) {
  held.kind = CollectiveKind::all_reduce;
  held.algorithm = Algorithm::ring;
  return held;
}

CollectiveAnimation CollectiveAnimationKind::make(const Catalog& cat, const CollectiveSettings& s,
                                                  const nlohmann::json* machine) {
  if (!machine) throw std::invalid_argument("a collective is animated on a machine: give its simulate config");
  return animate_collective(collective_spec(s, topology_of_config(cat, *machine)));
}

nlohmann::json CollectiveAnimationKind::figures(const CollectiveAnimation& a, double t) {
  const CollectiveFrame f = frame_at(a, t);
  return {{"gpus", a.spec.gpus},
          {"message_bytes", a.spec.message_bytes},
          {"steps", a.steps},
          {"step", std::clamp(f.step + 1, 0, a.steps)},  // as the view writes "Step k of n"
          {"time_s", a.total_s},
          {"time_ms", a.total_s * 1e3},
          {"time_us", a.total_s * 1e6},
          {"bytes_sent_per_gpu", a.bytes_sent_per_gpu},
          {"algbw_Bps", a.algbw_GBps * 1e9},
          {"busbw_Bps", a.busbw_GBps * 1e9},
          {"bus_factor", a.bus_factor},
          {"network_bps", a.spec.topology.node_network_Gbps * 1e9},  // per server, achievable (as the view writes)
          {"t_s", t}};
}

namespace {
const AnimationRegistrar reg{describe_animation<CollectiveAnimationKind>()};
}  // namespace

}  // namespace mc::sim
