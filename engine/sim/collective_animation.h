// collective_animation.h - one collective call, step by step, as the flow simulator runs it: which chunk
// crosses which link when, and how loaded every link is at each moment. The "watch it move" view draws
// this; nothing in it is hand-made motion.
//
// The iteration simulator (iteration.cpp) runs a ring collective as ONE flow group per phase: a ring is
// pipelined, so its hops advance together at the speed of the slowest (collectives.h). Here the same phase
// is unrolled into the algorithm's steps (Patarasuk & Yuan 2009 for the ring; NCCL's double binary tree,
// Sanders, Speck & Traeff 2009): step s of a ring all-reduce over p ranks moves one chunk of N/p bytes
// from every rank to the next, reduce-scatter for s < p-1 and all-gather after. Each step is a flow group
// over the very links of the phase's group (build_collective), solved by the same max-min fair FlowNet,
// with the phase's latency spread evenly over its steps, so the steps add up to the phase's time exactly:
// the animation is the simulator's timeline, unrolled.
//
//   CollectiveAnimationSpec s;   s.topology = ...; s.gpus = 8; s.message_bytes = 64 << 20;
//   CollectiveAnimation a = animate_collective(s);          // throws std::invalid_argument on bad input
//   CollectiveFrame f = frame_at(a, 0.5 * a.total_s);        // chunks in flight and link loads at that time
//
// Tree all-reduce is pipelined through every edge at once (NCCL splits the buffer into many small chunks),
// so each of its edges shows one transfer over the whole phase. Figures are those the narration can quote:
// bytes each GPU sends, time, algorithm bandwidth N/t and bus bandwidth (nccl-tests PERFORMANCE.md:
// busbw = algbw * 2(p-1)/p for all-reduce, (p-1)/p for reduce-scatter and all-gather, 1 for a send).
#pragma once

#include "catalog/catalog.h"
#include "core/chart_data.h"
#include "sim/animation_kind.h"
#include "sim/animation_settings.h"
#include "sim/collectives.h"
#include "sim/flow_net.h"
#include "sim/topology.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mc::sim {

struct CollectiveAnimationSpec {
  TopologySpec topology;  // the cluster's links (nodes is raised to hold the group when smaller)
  CollectiveKind kind = CollectiveKind::all_reduce;
  Algorithm algorithm = Algorithm::ring;      // all-reduce only; the others are rings, a send is one transfer
  int gpus = 8;                               // ranks in the group, 2..kMaxAnimatedGpus (a send: 2)
  int first_gpu = 0;                          // the group is GPUs first_gpu, first_gpu+1, ... filling nodes in order
  double message_bytes = 64.0 * 1024 * 1024;  // N: the buffer every rank holds (a send: the bytes sent)
  LatencySpec latency;
};
constexpr int kMaxAnimatedGpus = 64;

// One chunk crossing from one GPU to another in one step.
struct ChunkMove {
  int phase = 0;         // index into CollectiveAnimation::phases
  int step = 0;          // step within the whole call, 0-based
  int chunk = 0;         // which N/p piece of the buffer (ring), which tree (tree: 0 or 1)
  int src = 0, dst = 0;  // GPU ids
  bool reduces = false;  // the receiver adds it into its own copy (reduce-scatter half); else it overwrites
  double bytes = 0;
  double t_start_s = 0;    // when the bytes start moving (after the step's latency)
  double t_end_s = 0;      // when the last byte has arrived: a FlowNet completion event
  std::vector<int> links;  // Topology link ids crossed, in order
};

struct AnimatedLink {
  int link = 0;  // Topology link id
  LinkClass cls = LinkClass::nvlink_up;
  double capacity_Bps = 0;
  std::vector<LoadPoint> load;  // bytes/s over time (flow_net.h link_loads), piecewise constant
  double bytes = 0;             // what crossed it during the call
};

struct AnimatedPhase {
  std::string name;  // "reduce-scatter inside nodes", "all-reduce ring", ...
  int first_step = 0, steps = 0;
  double t_start_s = 0, t_end_s = 0;
  // An all-reduce ring: its first half of steps reduce-scatter, the second all-gather (Patarasuk and Yuan
  // 2009: p-1 steps each).
  bool reduce_then_gather = false;
};

struct CollectiveAnimation {
  CollectiveAnimationSpec spec;
  Topology topology{TopologySpec{}};
  std::vector<int> ranks;  // the group's GPU ids, in ring order
  std::vector<AnimatedPhase> phases;
  std::vector<ChunkMove> moves;     // by step, then by sender
  std::vector<AnimatedLink> links;  // every link the call crosses, by link id
  int steps = 0;
  double total_s = 0;             // the call, first latency to last byte
  double bytes_sent_per_gpu = 0;  // the most any rank sends
  double algbw_GBps = 0;          // N / total_s
  double busbw_GBps = 0;          // algbw * the algorithm's factor (above)
  double bus_factor = 1;          // 2(p-1)/p, (p-1)/p or 1
  std::string rule;               // the bytes rule with these numbers written out
};

CollectiveAnimation animate_collective(const CollectiveAnimationSpec& spec);
// The spec of `settings` (what a view or a scenario asks for) on `topology` (the animated config's links).
CollectiveAnimationSpec collective_spec(const CollectiveSettings& settings, const TopologySpec& topology);

// The links of the cluster a `megacluster simulate` config describes (sim_config.h resolve: the same
// achievable rates the iteration simulator uses), so the view animates on the machine the Run chapter
// simulates. Throws LoadError for a config the simulator refuses.
TopologySpec topology_of_config(const Catalog& cat, const nlohmann::json& simulate_config);

// What the view draws at time t: the moves in flight (with how far along they are) and each link's load.
struct MoveInFlight {
  int move = 0;         // index into CollectiveAnimation::moves
  double progress = 0;  // 0..1 of its bytes delivered (linear in time: a step's rate is constant)
};
struct CollectiveFrame {
  double t_s = 0;
  int step = -1;  // the step in progress (-1 before the first, steps after the last)
  std::vector<MoveInFlight> in_flight;
  std::vector<double> link_utilisation;  // per CollectiveAnimation::links entry, load / capacity at t
};
CollectiveFrame frame_at(const CollectiveAnimation& a, double t_s);
// The picture's links at frame `f` as a chart, its text alternative: each drawn link's load in % of its
// capacity (the spine, a crossbar, is not a link of the picture).
ChartData link_load_chart(const CollectiveAnimation& a, const CollectiveFrame& f);
// What the collective does at step `step` (0-based): its phase's name, and in an all-reduce ring which half
// runs ("ring all-reduce: all-gather, step 3 of 7"), so a class is told the moment the sums are complete and
// start travelling back. "" outside every phase.
std::string step_activity(const CollectiveAnimation& a, int step);

// The times at which something starts or ends (every move's start and end), sorted and unique: what
// "step one event" walks through.
std::vector<double> event_times(const CollectiveAnimation& a);

// The animation described once (animation_kind.h), registered by collective_animation.cpp.
struct CollectiveAnimationKind {
  using Settings = CollectiveSettings;
  using Animation = CollectiveAnimation;
  static constexpr const char* kKind = "collective";
  static constexpr const char* kTitle = "Collectives in motion";
  static constexpr const char* kSummary =
      "one collective, chunk by chunk, on the simulate (or estimate) config's cluster (sim::animate_collective)";
  static constexpr const char* kNoun = "collective";
  static constexpr int kOrder = 10;
  static constexpr bool kOnMachine = true;
  static Settings view_start() { return {}; }
  static Settings config_base(Settings held);  // an all-reduce by ring unless the config says otherwise
  // On the cluster of `machine`, a simulate config (topology_of_config).
  static Animation make(const Catalog& cat, const Settings& s, const nlohmann::json* machine);
  static double total_s(const Animation& a) { return a.total_s; }
  // The figures at t: the call's, and the step in progress as the view writes "Step k of n".
  static nlohmann::json figures(const Animation& a, double t_s);
  static nlohmann::json opened(const Settings& s, const Animation&) { return to_json(s); }
};

}  // namespace mc::sim
