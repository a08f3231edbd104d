// iteration_results.cpp - the iteration engine's work estimate (before the first event, to refuse what is
// over budget) and its results (spans, link loads, the hottest links' series, the critical path). See
// iteration_engine.h.
//
// Sections: work estimate; results.
#include "sim/iteration_engine.h"

namespace mc::sim::detail {

// ---- work estimate ----
//
// The work (iteration.h: FlowNet::work + kWorkPerEvent per event) the built op streams and cached phases
// imply, counted before the first event from what the engine will do with them:
//   events: one per compute op; per flow group a latency timer and its completion (tp phases, sends,
//     data-parallel item phases);
//   solver: FlowNet::start re-solves the new group's connected component (groups sharing a link): it visits
//     each member group's constraints and each component link once, 2 c for a group of c constraints alone;
//     FlowNet::complete_next re-solves the component the ending group leaves behind.
// Components are found from the phases' links: the data-parallel streams of the stages and the pipeline
// sends of each (class, stage, destination) are joined where they share a constraint (one spine switch, an
// oversubscribed or degraded uplink, a collective limit); each member counts one group in flight (a stage's
// dp stream runs one collective at a time, a blocking sender one send). Sends meet the dp collectives only
// while these overlap the last micro-batch's backward (IterationSpec::overlap_dp): 1/m of the sends.
double Engine::estimate_work() {
  const int p = s_.pp, m = s_.micro_batches;
  auto size_of = [](const CollectivePhase& ph) { return double(ph.flows.links.size() + ph.flows.limits.size()); };
  double events = 0, solver = 0;
  // Members of the components: p data-parallel streams, then one per send key.
  std::vector<double> c_member;                                // constraints of one group in flight
  std::vector<double> groups_member;                           // groups the member starts over the iteration
  std::vector<std::vector<const FlowGroupSpec*>> spec_member;  // the links it may cross
  std::vector<bool> is_dp;
  for (int st = 0; st < p; ++st) {
    double groups = 0, crossings = 0;
    const DpStream& ds = dp_[size_t(st)];
    for (int item = 0; item < int(ds.items.size()); ++item) {
      if (item == ag_item() && !post_step_gather()) continue;
      if (s_.dp < 2) continue;
      for (const CollectivePhase& ph : item_phases(st, item)) groups += 1, crossings += size_of(ph);
    }
    c_member.push_back(groups > 0 ? crossings / groups : 0);
    groups_member.push_back(groups);
    spec_member.emplace_back();
    for (const auto* phases : {&dp_phase_[size_t(st)], &ag_phase_[size_t(st)]})
      for (const CollectivePhase& ph : *phases) spec_member.back().push_back(&ph.flows);
    is_dp.push_back(true);
  }
  std::map<std::tuple<int, int, int>, int> send_member;
  for (size_t wi = 0; wi < workers_.size(); ++wi) {
    const Worker& w = workers_[wi];
    for (const Op& op : w.ops) {
      if (op.type == OpType::compute) events += 1;
      if (op.type == OpType::tp) {
        for (const CollectivePhase& ph : coll_phases(int(wi), op.a)) events += 2, solver += 2 * size_of(ph);
      }
      if (op.type != OpType::send) continue;
      events += 2;
      const auto key = std::make_tuple(w.cls, w.stage, op.vs % p);
      auto it = send_member.find(key);
      if (it == send_member.end()) {
        // The phase start_send will build for this key (cached there, so built once either way).
        auto ph = send_phase_.find(key);
        if (ph == send_phase_.end()) {
          std::vector<std::pair<int, int>> pairs;
          for (int d : class_replicas_[size_t(w.cls)])
            for (int t = 0; t < s_.tp; ++t) pairs.push_back({gpu_id(s_, d, w.stage, t), gpu_id(s_, d, op.vs % p, t)});
          ph = send_phase_.emplace(key, build_sends(topo_, pairs, 1.0, s_.latency, s_.pp_sends_as_collective)).first;
        }
        it = send_member.emplace(key, int(c_member.size())).first;
        c_member.push_back(size_of(ph->second));
        groups_member.push_back(0);
        spec_member.push_back({&ph->second.flows});
        is_dp.push_back(false);
      }
      groups_member[size_t(it->second)] += 1;
    }
  }
  for (int st = 0; st < p; ++st) events += 2 * groups_member[size_t(st)];
  // Components: members joined through the constraints (links and collective limits) they share.
  const int n = int(c_member.size());
  std::vector<int> parent(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) parent[size_t(i)] = i;
  auto find = [&](int x) {
    while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
    return x;
  };
  std::map<int, int> first_on;  // constraint -> a member on it (limits offset past the links)
  const int links = int(topo_.links().size());
  for (int i = 0; i < n; ++i) {
    auto join = [&](int constraint) {
      auto [it, fresh] = first_on.emplace(constraint, i);
      if (!fresh) parent[size_t(find(i))] = find(it->second);
    };
    for (const FlowGroupSpec* f : spec_member[size_t(i)]) {
      for (auto [l, w] : f->links) join(l);
      for (auto [l, w] : f->limits) join(links + l);
    }
  }
  std::map<int, double> dp_in, sends_in;  // constraints in flight per component, by kind
  for (int i = 0; i < n; ++i) (is_dp[size_t(i)] ? dp_in : sends_in)[find(i)] += c_member[size_t(i)];
  for (int i = 0; i < n; ++i) {
    const int root = find(i);
    const double c = c_member[size_t(i)], g = groups_member[size_t(i)];
    // Others in flight beside it: visited when it starts and again when it ends.
    double others = is_dp[size_t(i)] ? dp_in[root] - c : sends_in[root] - c;
    if (!is_dp[size_t(i)] && s_.overlap_dp) others += dp_in[root] / std::max(1, m);
    solver += g * (2 * c + 4 * std::max(0.0, others));
  }
  return solver + double(kWorkPerEvent) * events;
}

// ---- results ----

void Engine::finish() {
  for (size_t wi = 0; wi < workers_.size(); ++wi)
    if (workers_[wi].pc < workers_[wi].ops.size())
      throw std::logic_error("simulate_iteration: deadlock at stage " + std::to_string(workers_[wi].stage));
  finished_ = true;
  const int p = s_.pp, C = int(class_replicas_.size());
  res_.events = events_;
  res_.rate_solves = net_.rate_solves();
  res_.work = work();
  res_.link_bytes = net_.link_bytes();
  res_.class_rate_changes = net_.class_rate_changes();
  // Add the NVLink bytes of the representative replica's tp rings to every other replica of its class
  // (which ran no tp rings of its own), on top of the data-parallel bytes those replicas did simulate.
  if (s_.tp > 1 && tp_in_node_ && !tp_link_bytes_.empty())
    for (int c = 0; c < C; ++c) {
      const auto& reps = class_replicas_[size_t(c)];
      for (int st = 0; st < p; ++st)
        for (int t = 0; t < s_.tp; ++t) {
          const int g0 = gpu_id(s_, reps.front(), st, t);
          for (size_t k = 1; k < reps.size(); ++k) {
            const int g = gpu_id(s_, reps[k], st, t);
            res_.link_bytes[size_t(topo_.nvlink_up(g))] += tp_link_bytes_[size_t(topo_.nvlink_up(g0))];
            res_.link_bytes[size_t(topo_.nvlink_down(g))] += tp_link_bytes_[size_t(topo_.nvlink_down(g0))];
          }
        }
    }
  if (s_.hottest_links > 0) hottest_series();
  int crit = 0;
  for (size_t wi = 0; wi < res_.workers.size(); ++wi) {
    auto& tl = res_.workers[wi];
    std::stable_sort(tl.spans.begin(), tl.spans.end(),
                     [](const Span& a, const Span& b) { return a.start_s < b.start_s; });
    if (tl.end_s > res_.workers[size_t(crit)].end_s) crit = int(wi);
  }
  // Stage 0's data-parallel collectives in the order they ran (IterationResult::dp_events).
  if (!dp_.empty())
    for (int item : dp_[0].order) {
      const DpItem& it = dp_[0].items[size_t(item)];
      IterationResult::DpEvent ev{IterationResult::DpEvent::bucket};
      ev.bytes = item_bytes(0, item);
      ev.start_s = it.start_s;
      ev.end_s = it.end_s;
      if (const Z3Item* z = z3_item(0, item)) {
        ev.kind = z->reduce ? IterationResult::DpEvent::zero3_reduce : IterationResult::DpEvent::zero3_gather;
        ev.micro_batch = z->mb;
        ev.unit = z->unit;
        ev.backward = z->backward;
      } else if (item == ag_item()) {
        ev.kind = IterationResult::DpEvent::params_all_gather;
      }
      res_.dp_events.push_back(ev);
    }
  const WorkerTimeline& ct = res_.workers[size_t(crit)];
  res_.iteration_s = ct.end_s;
  res_.critical_stage = ct.stage;
  res_.critical_class = ct.cls;
  for (const Span& sp : ct.spans) {
    const double d = sp.end_s - sp.start_s;
    switch (sp.kind) {
      case SpanKind::forward:
      case SpanKind::backward:
        res_.compute_s += d;
        break;
      case SpanKind::tp_comm:
        res_.tp_comm_s += d;
        break;
      case SpanKind::cp_comm:
        res_.cp_comm_s += d;
        break;
      case SpanKind::pp_wait:
        res_.pp_wait_s += d;
        break;
      case SpanKind::pp_send:
        if (s_.blocking_p2p || paired_) res_.pp_send_s += d;
        break;
      case SpanKind::dp_wait:
        res_.dp_exposed_s += d;
        break;
      case SpanKind::optimizer:
        res_.optimizer_s += d;
        break;
      default:
        break;  // dp_comm and pp_send run on other streams
    }
  }
  res_.idle_s = std::max(0.0, res_.iteration_s - res_.compute_s - res_.tp_comm_s - res_.cp_comm_s - res_.pp_send_s -
                                  res_.pp_wait_s - res_.dp_exposed_s - res_.optimizer_s);
  critical_path(crit);
}

// The NVLink port of the representative replica whose tensor-parallel bytes finish() copied onto `link`
// (an NVLink port of another replica of its class, which ran no tp rings of its own), or -1.
int Engine::tp_copy_source(int link) const {
  if (!(s_.tp > 1 && tp_in_node_ && !tp_link_bytes_.empty())) return -1;
  const Link& L = topo_.link(link);
  if (L.cls != LinkClass::nvlink_up && L.cls != LinkClass::nvlink_down) return -1;
  const int g = L.index;  // NVLink ports are numbered by GPU
  if (g < 0 || g >= s_.tp * s_.pp * s_.dp) return -1;
  const GpuCoord c = gpu_coord(s_, g);
  const auto& reps = class_replicas_[size_t(res_.replica_class[size_t(c.replica)])];
  if (reps.front() == c.replica) return -1;
  const int g0 = gpu_id(s_, reps.front(), c.stage, c.tp_rank);
  return L.cls == LinkClass::nvlink_up ? topo_.nvlink_up(g0) : topo_.nvlink_down(g0);
}

// Utilisation over time of the links that carried the most bytes. Which links those are is known only
// now, so the run recorded one entry per group rate change (not per link per change, which would cost a
// multiple of the rate solves themselves on 10^4 GPUs); the loads of the few chosen links are rebuilt from
// it: load(t) = sum over the groups crossing the link of flows_on_link * rate(t) (link_loads). Groups
// made from one cached phase share its link list, so what each phase puts on the chosen links is found
// once. A link of a replica that only stands in a symmetric class (its tp bytes were copied in finish())
// follows its representative's tp groups, so its series integrates to its link_bytes as well.
void Engine::hottest_series() {
  const auto& bytes = res_.link_bytes;
  std::vector<int> hot;
  for (size_t l = 0; l < bytes.size(); ++l)
    if (bytes[l] > 0 && (s_.hottest_include_passive || !topo_.passive(int(l)))) hot.push_back(int(l));
  const size_t k = std::min(hot.size(), size_t(s_.hottest_links));
  // Busiest first: bytes / capacity is the mean utilisation times the iteration time, the same for all.
  auto busy = [&](int l) { return bytes[size_t(l)] / topo_.link(l).capacity_Bps; };
  std::partial_sort(hot.begin(), hot.begin() + long(k), hot.end(),
                    [&](int a, int b) { return busy(a) > busy(b) || (busy(a) == busy(b) && a < b); });
  hot.resize(k);
  if (hot.empty()) return;
  std::vector<int> hot_index(bytes.size(), -1);
  std::map<int, std::vector<int>> tp_src;  // representative's NVLink port -> hot links that copy its tp bytes
  for (size_t i = 0; i < k; ++i) {
    hot_index[size_t(hot[i])] = int(i);
    const int src = tp_copy_source(hot[i]);
    if (src >= 0) tp_src[src].push_back(int(i));
  }
  std::map<std::pair<const FlowGroupSpec*, bool>, std::vector<std::pair<int, double>>> per_phase;
  auto crossings = [&](int serial, std::vector<std::pair<int, double>>& out) {
    const auto [spec, kind] = group_src_[size_t(serial)];
    const bool tp = kind == kFlowTp;
    auto it = per_phase.find({spec, tp});
    if (it == per_phase.end()) {
      std::vector<std::pair<int, double>> v;
      for (const auto* ls : {&spec->links, &spec->passive_links})
        for (auto [l, n] : *ls) {
          if (hot_index[size_t(l)] >= 0) v.push_back({hot_index[size_t(l)], n});
          if (!tp) continue;
          auto s = tp_src.find(l);
          if (s != tp_src.end())
            for (int i : s->second) v.push_back({i, n});
        }
      it = per_phase.emplace(std::make_pair(spec, tp), std::move(v)).first;
    }
    out.insert(out.end(), it->second.begin(), it->second.end());
  };
  if (int(group_src_.size()) != net_.groups_started())
    throw std::logic_error("simulate_iteration: flow groups started outside the engine's record");
  const auto loads = link_loads(net_.group_rate_changes(), net_.groups_started(), int(k), crossings);
  res_.hottest_series.resize(k);
  for (size_t i = 0; i < k; ++i) {
    LinkSeries& ls = res_.hottest_series[i];
    ls.link = hot[i];
    ls.bytes = bytes[size_t(hot[i])];
    ls.capacity_Bps = topo_.link(hot[i]).capacity_Bps;
    ls.t_s.reserve(loads[i].size());
    ls.utilisation.reserve(loads[i].size());
    for (const LoadPoint& p : loads[i]) {
      ls.t_s.push_back(p.t_s);
      ls.utilisation.push_back(p.load_Bps / ls.capacity_Bps);
    }
  }
}

// A dp_wait span `sp` of worker w ending at t: the collective that released it ran at the end of a chain
// of back-to-back items on the stage's dp stream; the chain began when its first item became ready,
// i.e. when the last class joined it. When that class is another worker, the path records the chain as
// dp_comm steps and continues on that worker at the join time (true); otherwise it stays (false).
bool Engine::follow_dp_wait(int& w, double& t, const Span& sp) {
  const double eps = 1e-12 + 1e-12 * std::abs(t);
  const DpStream& st = dp_[size_t(res_.workers[size_t(w)].stage)];
  int j = int(st.order.size()) - 1;
  while (j >= 0 && std::abs(st.items[size_t(st.order[size_t(j)])].end_s - sp.end_s) > eps) --j;
  if (j < 0) return false;
  const int last = j;
  while (j > 0) {
    const DpItem& it = st.items[size_t(st.order[size_t(j)])];
    if (it.start_s <= it.ready_s + eps) break;  // started when it became ready: the join gated it
    --j;                                        // else it waited for the item before it
  }
  const DpItem& first = st.items[size_t(st.order[size_t(j)])];
  const int g = first.ready_worker;
  if (g < 0 || g == w || first.ready_s > t + eps) return false;
  for (int i = last; i >= j; --i) {
    const DpItem& it = st.items[size_t(st.order[size_t(i)])];
    res_.critical_path.push_back({w, SpanKind::dp_comm, it.start_s, std::min(it.end_s, t)});
  }
  w = g;
  t = first.ready_s;
  return true;
}

void Engine::critical_path(int crit) {
  constexpr double eps = 1e-12;
  int w = crit;
  double t = res_.workers[size_t(crit)].end_s;
  const int p = s_.pp;
  for (int guard = 0; guard < 4000000 && t > eps; ++guard) {
    const auto& spans = res_.workers[size_t(w)].spans;
    // The latest compute-stream span ending at or before t (dp_comm runs on another stream).
    int k = -1;
    // Spans are sorted by start: begin at the last one starting before t (binary search), walk back.
    const int hi = int(
        std::upper_bound(spans.begin(), spans.end(), t + eps, [](double x, const Span& a) { return x < a.start_s; }) -
        spans.begin());
    for (int i = hi - 1; i >= 0; --i) {
      const Span& sp = spans[size_t(i)];
      // A send the sender did not wait for is off its path; the tied all-reduce (no micro-batch) it waits out.
      if (sp.kind == SpanKind::dp_comm ||
          (sp.kind == SpanKind::pp_send && sp.micro_batch >= 0 && !s_.blocking_p2p && !paired_))
        continue;
      if (sp.end_s <= t + eps) {
        k = i;
        break;
      }
    }
    if (k < 0) break;
    const Span& sp = spans[size_t(k)];
    if (sp.kind == SpanKind::pp_wait && sp.micro_batch < 0 && sp.end_s >= t - eps) {
      // Waiting for the other stage of the tied all-reduce: the path goes on there, where it called.
      res_.critical_path.push_back({w, SpanKind::pp_wait, sp.end_s, sp.end_s});
      const int stage = res_.workers[size_t(w)].stage;
      w = res_.workers[size_t(w)].cls * p + (stage == 0 ? p - 1 : 0);
      continue;
    }
    if (sp.kind == SpanKind::pp_wait && sp.end_s >= t - eps) {
      // Jump to the sender: the next compute span says the direction (forward waits for activations;
      // a tp all-gather or ZeRO-3 gather may come between the receive and the compute).
      bool fwd = true;
      for (size_t i = size_t(k) + 1; i < spans.size(); ++i)
        if (spans[i].kind == SpanKind::forward || spans[i].kind == SpanKind::backward) {
          fwd = spans[i].kind == SpanKind::forward;
          break;
        }
      const int vs = sp.chunk * p + res_.workers[size_t(w)].stage;
      const int src_vs = fwd ? vs - 1 : vs + 1;
      if (src_vs < 0 || src_vs >= V_) break;
      res_.critical_path.push_back({w, SpanKind::pp_wait, sp.end_s, sp.end_s});
      w = res_.workers[size_t(w)].cls * p + src_vs % p;
      continue;  // same t: the sender's transfer ended when the wait did
    }
    if (sp.kind == SpanKind::dp_wait && sp.end_s >= t - eps && follow_dp_wait(w, t, sp)) continue;
    res_.critical_path.push_back({w, sp.kind, sp.start_s, std::min(sp.end_s, t)});
    t = sp.start_s;
  }
  std::reverse(res_.critical_path.begin(), res_.critical_path.end());
}

}  // namespace mc::sim::detail
