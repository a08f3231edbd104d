// collectives.cpp - a collective (ring, tree, hierarchical) expanded into the phases of point-to-point
// transfers its algorithm makes on a topology (collectives.h), for the flow simulator.
#include "sim/collectives.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace mc::sim {

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::ring:
      return "ring";
    case Algorithm::tree:
      return "tree";
    case Algorithm::hierarchical:
      return "hierarchical";
  }
  return "?";
}

Algorithm algorithm_from_string(const std::string& s) {
  if (s == "tree") return Algorithm::tree;
  if (s == "hierarchical") return Algorithm::hierarchical;
  return Algorithm::ring;
}

namespace {

// Accumulates (link, flows) pairs without duplicates. A collective's transfers between nodes also count
// against the collective limits of the NICs they leave and enter (topology.h: the measured collective
// rate where it is below the line rate); point-to-point transfers (`collective` false) do not.
// Where one communicator's rate across a node boundary is capped (Topology::group_cap_Bps), the flows one
// communicator (`comm`: a ring of the caller's list, or one send pair) sends out of or into one node share
// that cap: every flow of the group is held to the cap over the most such flows.
struct LinkAcc {
  bool collective = true;
  std::unordered_map<int, double> w, lim;
  std::map<std::pair<int, int>, double> comm_out, comm_in;  // (communicator, node) -> flows leaving/entering
  std::vector<int> scratch;
  bool crosses_nodes = false;
  void add(const Topology& t, int a, int b, double flows = 1, int comm = 0) {
    if (a == b) return;
    scratch.clear();
    t.path(a, b, scratch);
    if (t.node_of(a) != t.node_of(b)) {
      crosses_nodes = true;
      if (collective && t.limits() > 0) {
        lim[t.collective_limit_up(a)] += flows;
        lim[t.collective_limit_down(b)] += flows;
      }
      if (collective && t.group_cap_Bps() > 0) {
        comm_out[{comm, t.node_of(a)}] += flows;
        comm_in[{comm, t.node_of(b)}] += flows;
      }
    }
    for (int l : scratch) w[l] += flows;
  }
  FlowGroupSpec spec(const Topology& t, double flows, double bytes) const {
    FlowGroupSpec s;
    double most = 0;
    for (const auto* m : {&comm_out, &comm_in})
      for (const auto& e : *m) most = std::max(most, e.second);
    if (most > 0) s.max_rate_Bps = t.group_cap_Bps() / most;
    for (const auto& e : w) (t.passive(e.first) ? s.passive_links : s.links).push_back(e);
    s.limits.assign(lim.begin(), lim.end());
    std::sort(s.links.begin(), s.links.end());  // deterministic order
    std::sort(s.passive_links.begin(), s.passive_links.end());
    std::sort(s.limits.begin(), s.limits.end());
    s.flows = flows;
    s.bytes_per_flow = bytes;
    return s;
  }
};

// `rounds` passes of p - 1 steps (1: reduce-scatter or all-gather, 2: all-reduce). A ring over p ranks on
// n nodes pays n - 1 steps at the fabric's latency and p - n at NVLink's per pass, as engine/perf prices a
// flat ring (perf/collectives.cpp time_collective), so both models charge the same per collective.
// `comm[k]`: the communicator ring k belongs to (default: each ring its own).
CollectivePhase ring_phase(const Topology& topo, const std::vector<std::vector<int>>& rings, double bytes_per_hop,
                           int rounds, const LatencySpec& lat, const std::vector<int>* comm = nullptr) {
  LinkAcc acc;
  double flows = 0, latency = 0;
  std::vector<int> nodes;
  for (size_t k = 0; k < rings.size(); ++k) {
    const auto& r = rings[k];
    const size_t p = r.size();
    if (p < 2) continue;
    const int c = comm ? (*comm)[k] : int(k);
    for (size_t i = 0; i < p; ++i) acc.add(topo, r[i], r[(i + 1) % p], 1, c);
    flows += double(p);
    nodes.clear();
    for (int g : r) nodes.push_back(topo.node_of(g));
    std::sort(nodes.begin(), nodes.end());
    const double n = double(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
    latency = std::max(latency, (n - 1) * lat.inter_node_s + (double(p) - n) * lat.intra_node_s);
  }
  CollectivePhase ph;
  ph.flows = acc.spec(topo, flows, flows > 0 ? bytes_per_hop : 0);
  ph.latency_s = rounds * latency;
  return ph;
}

}  // namespace

std::vector<std::vector<int>> ranks_by_node(const Topology& topo, const std::vector<int>& ranks) {
  std::vector<std::vector<int>> out;
  std::unordered_map<int, size_t> idx;
  for (int gpu : ranks) {
    auto [it, fresh] = idx.try_emplace(topo.node_of(gpu), out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(gpu);
  }
  return out;
}

std::vector<CollectivePhase> build_collective(const Topology& topo, CollectiveKind kind, Algorithm alg,
                                              const std::vector<std::vector<int>>& rings, double N,
                                              const LatencySpec& lat) {
  size_t p = 0;
  for (const auto& r : rings) p = std::max(p, r.size());
  if (p < 2) return {};
  const double pd = double(p);
  if (kind != CollectiveKind::all_reduce || alg == Algorithm::ring) {
    const bool ar = kind == CollectiveKind::all_reduce;
    return {ring_phase(topo, rings, (ar ? 2.0 : 1.0) * (pd - 1) / pd * N, ar ? 2 : 1, lat)};
  }
  if (alg == Algorithm::tree) {
    // NCCL's tree (Sanders, Speck & Traeff 2009; NCCL 2.4 release notes): inside a node the local ranks
    // form a chain; across nodes two complementary binary trees (heap numbering on the nodes, and on the
    // nodes reversed) join the chains. Each tree reduces then broadcasts half the buffer, so every edge
    // carries N/2 each way in each tree.
    LinkAcc acc;
    double flows = 0;
    int max_nodes = 1, max_local = 1;
    for (size_t ri = 0; ri < rings.size(); ++ri) {
      const std::vector<std::vector<int>> by_node = ranks_by_node(topo, rings[ri]);
      const int c = int(ri);
      const size_t q = by_node.size();
      max_nodes = std::max(max_nodes, int(q));
      for (int tree = 0; tree < 2; ++tree) {
        for (const auto& local : by_node) {
          max_local = std::max(max_local, int(local.size()));
          for (size_t i = 1; i < local.size(); ++i) {
            acc.add(topo, local[i], local[i - 1]);
            acc.add(topo, local[i - 1], local[i]);
            flows += 2;
          }
        }
        for (size_t i = 1; i < q; ++i) {
          const size_t child = tree == 0 ? i : q - 1 - i;
          const size_t parent = tree == 0 ? (i - 1) / 2 : q - 1 - (i - 1) / 2;
          acc.add(topo, by_node[child].front(), by_node[parent].front(), 1, c);
          acc.add(topo, by_node[parent].front(), by_node[child].front(), 1, c);
          flows += 2;
        }
      }
    }
    CollectivePhase ph;
    ph.flows = acc.spec(topo, flows, N / 2);
    // Depth: log2 of the nodes across the fabric and of the local ranks inside (as the analytic model).
    ph.latency_s = 2 * (std::ceil(std::log2(double(max_nodes))) * lat.inter_node_s +
                        std::ceil(std::log2(double(max_local))) * lat.intra_node_s);
    return {ph};
  }
  // Hierarchical: split every ring into its nodes' local ranks.
  // The rings across nodes of one communicator (its local ranks' k-th members) share its cap.
  std::vector<std::vector<int>> local, cross;
  std::vector<int> cross_comm;
  for (size_t ri = 0; ri < rings.size(); ++ri) {
    const std::vector<std::vector<int>> by_node = ranks_by_node(topo, rings[ri]);
    size_t g = by_node.front().size();
    for (const auto& v : by_node) g = std::min(g, v.size());
    for (const auto& v : by_node) local.push_back(v);
    for (size_t k = 0; k < g; ++k) {
      std::vector<int> c;
      for (const auto& v : by_node) c.push_back(v[k]);
      cross.push_back(std::move(c));
      cross_comm.push_back(int(ri));
    }
  }
  size_t g = 0;
  for (const auto& v : local) g = std::max(g, v.size());
  if (g < 2 || cross.empty() || cross.front().size() < 2)
    return build_collective(topo, kind, Algorithm::ring, rings, N, lat);
  const double gd = double(g);
  const double nodes = double(cross.front().size());
  std::vector<CollectivePhase> out;
  out.push_back(ring_phase(topo, local, (gd - 1) / gd * N, 1, lat));
  out.push_back(ring_phase(topo, cross, 2 * (nodes - 1) / nodes * (N / gd), 2, lat, &cross_comm));
  out.push_back(ring_phase(topo, local, (gd - 1) / gd * N, 1, lat));
  return out;
}

CollectivePhase build_sends(const Topology& topo, const std::vector<std::pair<int, int>>& pairs, double bytes,
                            const LatencySpec& lat, bool as_collective) {
  LinkAcc acc;
  acc.collective = as_collective;
  for (size_t k = 0; k < pairs.size(); ++k) acc.add(topo, pairs[k].first, pairs[k].second, 1, int(k));  // a pair each
  CollectivePhase ph;
  ph.flows = acc.spec(topo, double(pairs.size()), bytes);
  ph.latency_s = acc.crosses_nodes ? lat.inter_node_s : lat.intra_node_s;
  return ph;
}

}  // namespace mc::sim
