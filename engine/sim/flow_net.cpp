// flow_net.cpp - max-min fair sharing of links among the transfers in flight (flow_net.h): rates are
// re-solved for the groups a start or completion touches, and link loads are recorded for the plots.
#include "sim/flow_net.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mc::sim {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

FlowNet::FlowNet(const Topology& topo)
    : topo_(topo),
      links_(int(topo.links().size())),
      link_groups_(topo.links().size() + size_t(topo.limits())),
      link_bytes_(topo.links().size(), 0.0),
      mark_link_(topo.links().size() + size_t(topo.limits()), 0),
      rem_(topo.links().size() + size_t(topo.limits()), 0.0),
      unfrozen_w_(topo.links().size() + size_t(topo.limits()), 0.0) {}

double FlowNet::capacity(int c) const {
  return c < links_ ? topo_.link(c).capacity_Bps : topo_.limit_capacity_Bps(c - links_);
}

int FlowNet::start(double now, FlowGroupSpec spec, long long tag) {
  int id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = int(groups_.size());
    groups_.emplace_back();
    mark_group_.push_back(0);
    comp_index_.push_back(0);
  }
  Group& g = groups_[size_t(id)];
  g.spec = std::move(spec);
  g.tag = tag;
  g.remaining = g.spec.bytes_per_flow;
  g.rate = 0;
  g.last_t = now;
  g.version++;
  g.serial = started_++;
  g.alive = true;
  g.class_weight.fill(0);
  g.cons.clear();
  if (!g.spec.limits.empty()) {  // (most groups have none: they solve on spec.links itself, no copy)
    g.cons = g.spec.links;
    for (auto [k, w] : g.spec.limits) g.cons.push_back({links_ + k, w});
  }
  for (auto [l, w] : g.spec.links) {
    link_bytes_[size_t(l)] += w * g.spec.bytes_per_flow;
    g.class_weight[size_t(topo_.link(l).cls)] += w;
  }
  for (auto [c, w] : g.constraints()) link_groups_[size_t(c)].push_back(id);
  for (auto [l, w] : g.spec.passive_links) {
    link_bytes_[size_t(l)] += w * g.spec.bytes_per_flow;
    g.class_weight[size_t(topo_.link(l).cls)] += w;
  }
  ++active_;
  if (g.constraints().empty() || g.remaining <= 0) {  // (passive links alone never limit a rate)
    // A transfer that crosses no link (same GPU) or moves nothing completes at once.
    g.rate = kInf;
    due_.push({now, id, g.version});
    return id;
  }
  resolve(now, id);
  return id;
}

double FlowNet::next_completion_time() {
  while (!due_.empty()) {
    const Due& d = due_.top();
    const Group& g = groups_[size_t(d.id)];
    if (g.alive && g.version == d.version) return d.t;
    due_.pop();
  }
  return kInf;
}

long long FlowNet::complete_next() {
  next_completion_time();
  const Due d = due_.top();
  due_.pop();
  Group& g = groups_[size_t(d.id)];
  const double now = d.t;
  set_rate(now, g, d.id, 0);
  g.alive = false;
  g.version++;
  --active_;
  // Detach from links and re-solve the groups it shared links with (they may speed up).
  std::vector<int> neighbours;
  for (auto [l, w] : g.constraints()) {
    auto& v = link_groups_[size_t(l)];
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] == d.id) {
        v[i] = v.back();
        v.pop_back();
        break;
      }
    for (int o : v) neighbours.push_back(o);
  }
  free_ids_.push_back(d.id);
  const long long tag = g.tag;
  ++stamp_;
  const int seen = stamp_;
  for (int o : neighbours) {
    if (mark_group_[size_t(o)] == seen || !groups_[size_t(o)].alive) continue;
    resolve(now, o);  // marks its whole component with a newer stamp; skips are by the check below
    for (int c : comp_groups_) mark_group_[size_t(c)] = seen;
  }
  return tag;
}

void FlowNet::set_rate(double now, Group& g, int id, double r) {
  // Settle the bytes moved at the old rate, record the class-rate change for utilisation over time.
  if (std::isfinite(g.rate) && g.rate > 0) g.remaining = std::max(0.0, g.remaining - g.rate * (now - g.last_t));
  g.last_t = now;
  const double old = std::isfinite(g.rate) ? g.rate : 0;
  const double nw = std::isfinite(r) ? r : 0;
  if (nw != old) {
    for (int c = 0; c < kLinkClasses; ++c)
      if (g.class_weight[size_t(c)] > 0)
        changes_.push_back({now, LinkClass(c), g.class_weight[size_t(c)] * (nw - old)});
    group_changes_.push_back({now, g.serial, nw});
  }
  g.rate = r;
  (void)id;
}

void FlowNet::resolve(double now, int seed_group) {
  ++solves_;
  // 1. The connected component of seed_group (groups linked through shared links).
  ++stamp_;
  const int st = stamp_;
  comp_groups_.clear();
  comp_links_.clear();
  comp_groups_.push_back(seed_group);
  mark_group_[size_t(seed_group)] = st;
  for (size_t i = 0; i < comp_groups_.size(); ++i) {
    const Group& g = groups_[size_t(comp_groups_[i])];
    work_ += (long long)g.constraints().size();
    for (auto [l, w] : g.constraints()) {
      if (mark_link_[size_t(l)] == st) continue;
      mark_link_[size_t(l)] = st;
      comp_links_.push_back(l);
      for (int o : link_groups_[size_t(l)])
        if (mark_group_[size_t(o)] != st) {
          mark_group_[size_t(o)] = st;
          comp_groups_.push_back(o);
        }
    }
  }
  work_ += (long long)comp_links_.size();
  // 2. Progressive filling: every unfrozen group's rate rises together; the link whose remaining
  //    capacity per unfrozen flow is smallest saturates first and freezes its groups at that share.
  for (int l : comp_links_) {
    rem_[size_t(l)] = capacity(l);
    unfrozen_w_[size_t(l)] = 0;
  }
  for (int gid : comp_groups_)
    for (auto [l, w] : groups_[size_t(gid)].constraints()) unfrozen_w_[size_t(l)] += w;
  std::vector<double>& new_rate = new_rate_;
  new_rate.assign(comp_groups_.size(), -1);
  for (size_t k = 0; k < comp_groups_.size(); ++k) comp_index_[size_t(comp_groups_[k])] = int(k);
  // Shares only grow as groups freeze (a frozen group's rate is at most every share it crosses), so a
  // lazy min-heap of (share, link) gives the next saturating link in O(log L): stale entries are skipped.
  using Entry = std::pair<double, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  auto share_of = [&](int l) { return std::max(0.0, rem_[size_t(l)]) / unfrozen_w_[size_t(l)]; };
  for (int l : comp_links_)
    if (unfrozen_w_[size_t(l)] > 1e-12) heap.push({share_of(l), l});
  // A group with a per-flow cap (FlowGroupSpec::max_rate_Bps) behaves as if it had a private link of that
  // capacity: an entry -(k + 1) freezes comp group k alone when the filling reaches its cap first.
  for (size_t k = 0; k < comp_groups_.size(); ++k)
    if (const double cap = groups_[size_t(comp_groups_[k])].spec.max_rate_Bps; cap > 0) heap.push({cap, -int(k) - 1});
  size_t frozen = 0;
  auto freeze = [&](size_t k, double share, int best) {
    new_rate[k] = share;
    ++frozen;
    for (auto [l, w] : groups_[size_t(comp_groups_[k])].constraints()) {
      rem_[size_t(l)] -= w * share;
      unfrozen_w_[size_t(l)] -= w;
      if (l != best && unfrozen_w_[size_t(l)] > 1e-12) heap.push({share_of(l), l});
    }
  };
  while (frozen < comp_groups_.size() && !heap.empty()) {
    const auto [share, best] = heap.top();
    heap.pop();
    if (best < 0) {  // a group's own cap
      const size_t k = size_t(-best - 1);
      if (new_rate[k] < 0) freeze(k, share, best);
      continue;
    }
    if (unfrozen_w_[size_t(best)] <= 1e-12 || share != share_of(best)) continue;  // stale
    for (int o : link_groups_[size_t(best)]) {
      const size_t k = size_t(comp_index_[size_t(o)]);
      if (new_rate[k] >= 0) continue;
      freeze(k, share, best);
    }
    unfrozen_w_[size_t(best)] = 0;
  }
  // 3. Apply: settle bytes at the old rate, schedule completion at the new one.
  for (size_t k = 0; k < comp_groups_.size(); ++k) {
    const int gid = comp_groups_[k];
    Group& g = groups_[size_t(gid)];
    const double r = new_rate[k] > 0 ? new_rate[k] : 1e-9;  // a fully starved group still ends, eventually
    if (r == g.rate) continue;
    set_rate(now, g, gid, r);
    g.version++;
    due_.push({now + g.remaining / r, gid, g.version});
  }
}

std::vector<std::vector<LoadPoint>> link_loads(
    const std::vector<GroupRateChange>& changes, int groups, int links,
    const std::function<void(int serial, std::vector<std::pair<int, double>>& out)>& crossings) {
  std::vector<std::vector<LoadPoint>> out(size_t(std::max(0, links)), std::vector<LoadPoint>{{0.0, 0.0}});
  if (links <= 0 || groups <= 0) return out;
  // Which requested links each group crosses (CSR: first[s] .. first[s + 1] in cross).
  std::vector<int> first(size_t(groups) + 1, 0);
  std::vector<std::pair<int, double>> cross, tmp;
  for (int s = 0; s < groups; ++s) {
    tmp.clear();
    crossings(s, tmp);
    for (const auto& c : tmp)
      if (c.first >= 0 && c.first < links && c.second != 0) cross.push_back(c);
    first[size_t(s) + 1] = int(cross.size());
  }
  std::vector<double> rate(size_t(groups), 0.0), load(size_t(links), 0.0);
  std::vector<int> running(size_t(links), 0);  // groups on the link with a nonzero rate
  for (const GroupRateChange& ch : changes) {
    if (ch.serial < 0 || ch.serial >= groups) continue;
    const int b = first[size_t(ch.serial)], e = first[size_t(ch.serial) + 1];
    double& old = rate[size_t(ch.serial)];
    if (b == e || ch.rate_Bps == old) {
      old = ch.rate_Bps;
      continue;
    }
    for (int i = b; i < e; ++i) {
      const auto [k, w] = cross[size_t(i)];
      running[size_t(k)] += (ch.rate_Bps != 0) - (old != 0);
      // Sums of +/- deltas leave rounding residue; an idle link is exactly 0.
      load[size_t(k)] = running[size_t(k)] > 0 ? load[size_t(k)] + w * (ch.rate_Bps - old) : 0.0;
      auto& ser = out[size_t(k)];
      if (ser.back().t_s == ch.t_s) {  // several changes at one instant: the last one holds
        ser.back().load_Bps = load[size_t(k)];
        if (ser.size() > 1 && ser[ser.size() - 2].load_Bps == ser.back().load_Bps) ser.pop_back();
      } else if (ser.back().load_Bps != load[size_t(k)]) {
        ser.push_back({ch.t_s, load[size_t(k)]});
      }
    }
    old = ch.rate_Bps;
  }
  return out;
}

}  // namespace mc::sim
