// flow_net.h - flow-level bandwidth sharing: transfers in flight share every link they cross with
// max-min fairness (Bertsekas & Gallager, Data Networks, Sec. 6.5.2, "progressive filling"), the
// standard flow-level model of TCP/InfiniBand congestion control (no packets).
//
// The unit is a flow GROUP: `flows` identical transfers of `bytes_per_flow` that start together and
// advance at one common rate, e.g. all hops of one ring collective (a ring is pipelined, so every hop
// moves at the speed of its slowest hop: NCCL's ring runs at its bottleneck link) or the pipeline sends
// of all replicas that are symmetric. A group lists each link it crosses with how many of its flows
// cross it; the link's load is sum(flows_on_link * rate). A collective's group also lists the collective
// limits it counts against (topology.h: a measured collective rate below the NICs' line rate), which the
// solver treats as links of their own. Progressive filling raises all rates together
// and freezes a group when one of its links is full, which gives each group the max-min fair rate.
//
// Event-driven and incremental: starting or ending a group re-solves only its connected component
// (groups that share a link, transitively); a group's remaining bytes are settled lazily.
#pragma once

#include "sim/topology.h"

#include <array>
#include <functional>
#include <queue>
#include <vector>

namespace mc::sim {

struct FlowGroupSpec {
  std::vector<std::pair<int, double>> links;          // (link id, number of the group's flows on it)
  std::vector<std::pair<int, double>> passive_links;  // crossed but never a bottleneck (Topology::passive)
  double flows = 1;                                   // transfers in the group
  double bytes_per_flow = 0;
  // (Topology limit id, flows on it): collective-rate limits the group counts against (topology.h);
  // solved like links, but they carry no bytes and appear in no link report.
  std::vector<std::pair<int, double>> limits;
  double max_rate_Bps = 0;  // most bytes/s each flow may take (a communicator's cap shared by its flows); 0: none
};

// One rate change of the bytes/s a link class carries (for utilisation over time).
struct ClassRateChange {
  double t_s;
  LinkClass cls;
  double delta_Bps;
};

// One change of a group's per-flow rate. Groups are named by `serial`: the order in which they were
// started (0, 1, 2, ...), which unlike the group id is never reused. One entry per change (not per link)
// keeps the record as cheap as the class record above; a link's load over time is rebuilt afterwards for
// the few links asked about (link_loads below), since which links are the hottest is only known at the end.
struct GroupRateChange {
  double t_s;
  int serial;
  double rate_Bps;  // per flow, from t_s on; 0 once the group has completed
};

// A piecewise-constant load: load_Bps from t_s until the next point's t_s.
struct LoadPoint {
  double t_s;
  double load_Bps;
};

// The bytes/s on `links` requested links over time, rebuilt from a FlowNet's group rate history: with
// every group's rate piecewise constant (it changes only when a rate solve changes it), a link's load is
// load(t) = sum over groups g crossing it of flows_on_link(g) * rate_g(t), exactly the sum progressive
// filling (max-min fairness, Bertsekas & Gallager Sec. 6.5.2) bounds by the capacity on active links.
// `crossings(serial, out)` appends (k, flows) for each requested link k in [0, links) that group `serial`
// puts `flows` of its transfers on (active and passive links alike; nothing for a group that crosses none).
// Each series starts at (0, 0), has one point per distinct time its load changed (equal consecutive values
// merged), and is exactly 0 whenever no group on it is running (no cancellation residue); its integral
// over time is the bytes its groups moved across the link.
std::vector<std::vector<LoadPoint>> link_loads(
    const std::vector<GroupRateChange>& changes, int groups, int links,
    const std::function<void(int serial, std::vector<std::pair<int, double>>& out)>& crossings);

class FlowNet {
 public:
  explicit FlowNet(const Topology& topo);

  // Starts a group at time `now`; `tag` is returned on completion. Returns the group id.
  int start(double now, FlowGroupSpec spec, long long tag);
  // Earliest completion time (infinity when nothing is in flight) and its group id.
  double next_completion_time();
  // Removes the earliest-completing group (call when next_completion_time() is the next event); returns
  // its tag.
  long long complete_next();
  int active() const { return active_; }

  // Bytes each link carried so far (counted when a group starts: a group moves all its bytes).
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  const std::vector<ClassRateChange>& class_rate_changes() const { return changes_; }
  // Every group's rate changes in time order, by serial (start order); see link_loads.
  const std::vector<GroupRateChange>& group_rate_changes() const { return group_changes_; }
  int groups_started() const { return started_; }
  long long rate_solves() const { return solves_; }
  // The simulator's cost measure: links and group-link crossings visited by rate solves so far (a solve
  // costs about that many steps; the iteration's work budget, IterationSpec::max_work, counts these).
  long long work() const { return work_; }
  double rate(int group) const { return groups_[size_t(group)].rate; }

 private:
  struct Group {
    FlowGroupSpec spec;
    long long tag = 0;
    double remaining = 0;  // bytes per flow still to move
    double rate = 0;       // bytes/s per flow
    double last_t = 0;     // remaining is exact at last_t
    int version = 0;
    int serial = 0;  // start order (GroupRateChange::serial)
    bool alive = false;
    std::array<double, kLinkClasses> class_weight{};  // flows on links of each class
    // What the rate solver sees: spec.links, then spec.limits as constraint links.size() + limit id
    // (only built when the group has limits; otherwise the solver reads spec.links).
    std::vector<std::pair<int, double>> cons;
    const std::vector<std::pair<int, double>>& constraints() const { return spec.limits.empty() ? spec.links : cons; }
  };
  struct Due {
    double t;
    int id, version;
    bool operator>(const Due& o) const { return t > o.t || (t == o.t && id > o.id); }
  };
  void resolve(double now, int seed_group);
  void set_rate(double now, Group& g, int id, double r);
  double capacity(int constraint) const;

  const Topology& topo_;
  std::vector<Group> groups_;
  std::vector<int> free_ids_;
  int links_ = 0;                              // topo.links().size(); constraints past it are limits
  std::vector<std::vector<int>> link_groups_;  // active groups per constraint (link or limit)
  std::vector<double> link_bytes_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  std::vector<ClassRateChange> changes_;
  std::vector<GroupRateChange> group_changes_;
  int started_ = 0;
  // scratch for resolve()
  std::vector<int> mark_link_, mark_group_;
  int stamp_ = 0;
  std::vector<double> rem_, unfrozen_w_;
  std::vector<int> comp_links_, comp_groups_, comp_index_;
  std::vector<double> new_rate_;
  int active_ = 0;
  double now_ = 0;
  long long solves_ = 0;
  long long work_ = 0;
};

}  // namespace mc::sim
