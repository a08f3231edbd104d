// iteration.h - one training iteration, event by event, on every GPU of the cluster.
//
// GPUs are numbered as Megatron-LM orders its process groups (Narayanan et al. 2021, Sec. 3 and the
// initialize_model_parallel docstring): tensor-parallel ranks are consecutive (inside a node), then data
// parallel, then pipeline outermost:  gpu = (stage * dp + replica) * tp + tp_rank; or, as Llama 3 ordered
// them ([TP, CP, PP, DP], Dubey et al. 2024, Sec. 3.3.2; IterationSpec::pp_inside_dp), each replica's
// pipeline on consecutive GPUs: gpu = (replica * pp + stage) * tp + tp_rank.
//
// Each pipeline stage of each data-parallel replica runs, in its schedule's order (GPipe: all forwards
// then all backwards; 1F1B / PipeDream-Flush: p - s - 1 warm-up forwards, then one forward one backward;
// interleaved 1F1B: Narayanan et al. 2021 Sec. 2.2.2, chunks of p micro-batches per model chunk), for
// every layer of every micro-batch: its compute, then its tensor-parallel collectives (blocking, as in
// Megatron). Activations and gradients cross stage boundaries as asynchronous sends; a stage waits for
// what it receives. DeepSpeed's pipeline engine instead pairs blocking sends and receives in its own
// lockstep order (paired_p2p, deepspeed_schedule): a transfer holds both stages. Gradient buckets start their
// data-parallel collective once every replica has produced them (during the last micro-batch's backward when overlap is
// on, after it when off), on a separate communication stream; the optimizer step waits for all buckets.
//
// Symmetry: replicas with no straggler and no degraded link behave identically, so they are simulated
// once (class 0) and every special replica on its own; the transfers of a class still cross the links
// of all its replicas, so link sharing is exact. Any GPU's timeline is its class's stage timeline.
#pragma once

#include "core/pipeline_schedule.h"
#include "sim/collectives.h"
#include "sim/topology.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mc::sim {

struct IterationSpec {
  int tp = 1, pp = 1, dp = 1;
  // Context parallelism (engine/perf Layout::cp) is folded into the replicas: dp counts dp x cp of them,
  // replica = dp rank x cp + cp rank, so gradients reduce over all and the cp ranks follow the tp ranks.
  int cp = 1;
  // The cp ranks of a group (replicas d cp .. d cp + cp - 1) gather each layer's keys and values before its
  // attention, `cp_gathers_*` all-gathers of `cp_buffer_bytes` (one of K or V, whole, per GPU), and the
  // backward reduce-scatters their gradients (engine/perf perf_time.cpp prices the same collectives). The
  // whole group waits for each (Llama 3 Sec. 3.3.2: exposed); a straggler's group goes at its pace.
  double cp_buffer_bytes = 0;
  int cp_gathers_forward = 2, cp_gathers_backward = 2, cp_reduces_backward = 2;
  bool pp_inside_dp = false;  // GPUs ordered tp, cp, pp, dp (Llama 3) rather than tp, cp, dp, pp (Megatron-LM)
  int micro_batches = 1;      // m per replica
  int virtual_stages = 1;     // v (interleaved only)
  PipeSchedule schedule = PipeSchedule::one_f_one_b;
  int layers = 1;  // transformer layers of the model (divisible by pp * v unless chunk_layers says)
  // Layers of each pipeline stage (engine/perf stage_layers: uneven splits, BLOOM's embedding-as-layer,
  // explicit lists); empty = layers / pp each. Interleaved schedules split evenly.
  std::vector<int> stage_layers;
  // Layers of each model chunk, pp * virtual_stages entries by virtual stage (chunk * pp + stage): engine/perf
  // chunk_layers, interleaved pipelines with uneven chunks (Llama 3 405B's embedding-only first chunk and
  // output-only last chunk); empty = stage_layers, or layers / (pp v). Takes precedence over stage_layers.
  std::vector<int> chunk_layers;
  // Compute of one micro-batch through one layer on one GPU (the tp shard), in seconds.
  double layer_forward_s = 0;
  double layer_backward_s = 0;     // includes the recomputed forward when activations are recomputed
  double first_stage_extra_s = 0;  // embedding (forward + backward) per micro-batch
  double last_stage_extra_s = 0;   // logits + loss (forward + backward) per micro-batch
  // Tensor parallelism: collectives of `tp_buffer_bytes` per layer per micro-batch.
  int tp_collectives_forward = 2;   // Megatron: one after attention, one after the MLP
  int tp_collectives_backward = 2;  // + 2 when the forward is recomputed
  double tp_buffer_bytes = 0;       // b * s * h * bytes per element
  Algorithm tp_algorithm = Algorithm::ring;
  // Pipeline: bytes per boundary per micro-batch per GPU (b s h * bytes; / tp with scatter-gather).
  double pp_bytes = 0;
  double pp_bytes_backward = 0;  // > 0: the backward's gradients are this size (DeepSpeed sends them whole)
  // Megatron-LM's p2p (batched isend/irecv, then wait) holds the sender until its message has left.
  bool blocking_p2p = true;
  // DeepSpeed's pipeline engine (software.json pipeline_blocking_p2p; 1F1B only): a blocking send met by
  // a blocking receive (in 2021 a two-rank broadcast), in its TrainSchedule order (deepspeed_schedule):
  // the transfer starts once both stages have called, and both wait until it ends.
  bool paired_p2p = false;
  // Transfers made as two-rank NCCL broadcasts (DeepSpeed < 0.5.4, software.json pipeline_p2p_broadcast):
  // between nodes they count against the collective limits (topology.h), as engine/perf prices them.
  bool pp_sends_as_collective = false;
  // Scatter/gather (Narayanan et al. 2021, Sec. 4.1): the receiver all-gathers the b s h activation
  // over its tp ranks (an all-gather of tp_buffer_bytes) after each receive.
  bool pp_all_gather = false;
  // Data parallelism: gradient bytes per GPU of one stage (its params / tp * bytes per gradient).
  double dp_bytes_per_stage = 0;
  double bucket_bytes = 80e6;  // Megatron-LM DDP default: 40M fp16 elements per bucket
  bool overlap_dp = true;
  bool zero_sharded = false;  // ZeRO >= 1: reduce-scatter gradients, all-gather params after the step
  // DeepSpeed's ZeRO-1 (software.json zero1_full_allreduce, perf::zero1_step_gather): the gradient buckets
  // stay whole all-reduces, and the updated weights are all-gathered after the step in `collectives`
  // list-form collectives, each paying its latency steps and its copies (per collective and per byte).
  struct Zero1Gather {
    bool on = false;
    double collectives = 1, copy_per_collective_s = 0, copy_per_byte_s = 0;
  } zero1_gather;
  // ZeRO-3 (Rajbhandari et al. 2020, Sec. 5.3 and 7.2.2): parameters stay partitioned over the dp ranks,
  // so every micro-batch's forward and backward gathers each layer's parameters on the dp stream before
  // the layer computes, and gradients are reduce-scattered; no all-gather after the step (the next forward
  // gathers). The stage's parameters outside its layers (embeddings, final norm: dp_bytes_per_stage less
  // the layers') are one more unit, gathered with its first chunk. How the stack issues these collectives
  // is `zero3` below, filled from software.json's zero3_* fields by sim_config.cpp exactly as engine/perf
  // (perf_time.cpp) prices them; its defaults are textbook ZeRO-3 (one collective per layer, no prefetch,
  // gradients reduce-scattered once after the last micro-batch). Volume per iteration of the defaults
  // with m = 1: RS + 2 AG = 3 Psi (Sec. 7.2.2).
  bool zero3_gathers = false;
  struct Zero3Stack {
    double layer_bytes = 0;               // one layer's parameters per GPU (perf::layer_params_bytes); 0: even share
    double collectives_per_layer = 1;     // perf::zero3_collectives_per_layer: per tensor, per module or one
    bool regather = false;                // gathered again for the recomputed forward (full recompute, module hooks)
    bool reshard = true;                  // false: kept whole from the forward, so the backward gathers nothing
    bool reduce_each_microbatch = false;  // reduce-scatter after each layer's backward in every micro-batch
    // Share of each gather the GPU waits for where it is needed (the rest is prefetched on the dp stream
    // while the previous layer computes), and of each reduce-scatter the backward waits for (the rest
    // runs behind it): 1 and 1 without overlap (software.json zero3_overlap off).
    double open_share = 1, open_reduce = 1;
    // The device copies a list-form collective adds around its transfer (perf::list_collective_copies:
    // DeepSpeed < 0.5.5 through torch.distributed's list forms): per collective and per byte it carries.
    double copy_per_collective_s = 0, copy_per_byte_s = 0;
    double gather_fill_per_byte_s = 0;  // a gather's zero-filled buffer (perf::ListCopyCost), gathers only
  } zero3;
  // The tied embedding's gradient (perf::tied_grad_bytes, bytes per GPU; 0: none): after its last backward
  // pass the first stage and the last stage of each replica meet and all-reduce it between them, every
  // tensor rank with its peer, before their data-parallel reduction; both wait until it ends (DeepSpeed's
  // ReduceTiedGrads, Megatron-LM's embedding group). A two-rank ring moves the whole gradient each way.
  double tied_grad_bytes = 0;
  Algorithm dp_algorithm = Algorithm::ring;
  double optimizer_s = 0;
  LatencySpec latency;
  std::vector<std::pair<int, double>> stragglers;  // (gpu, speed relative to the others)
  // false: simulate every replica on its own (slow; what the symmetry shortcut must reproduce, for tests).
  bool merge_symmetric_replicas = true;
  // Report: utilisation over time of this many links, the busiest ones (highest mean utilisation,
  // bytes / capacity) (IterationResult::hottest_series); 0 = none. Changes nothing in the simulation.
  int hottest_links = 8;
  // Passive links (spine crossbars; leaf uplinks without oversubscription) never limit a rate, so their
  // "utilisation" against a nominal capacity can pass 100% and says nothing about contention: left out
  // of the ranking unless asked for (tests check their bytes too).
  bool hottest_include_passive = false;
  // Work budget (kWorkPerEvent below); 0 = none. Past it, step() throws
  // WorkBudgetExceeded: the config asked for more than the simulator promises to do (sim_config.cpp).
  long long max_work = 0;
  // The work estimated from the built op streams (IterationSim::estimated_work) over max_work refuses the
  // iteration before its first event; false: run until the measured work passes it (tests of that guard).
  bool refuse_estimated_over_budget = true;
};

// The work measure: FlowNet::work (link visits of the bandwidth solver) + kWorkPerEvent per event (an
// event's own bookkeeping costs about as much as 100 link visits, measured: see sim_config.cpp).
constexpr long long kWorkPerEvent = 100;

// Thrown by the iteration simulation when it passes IterationSpec::max_work; the message says what to reduce.
struct WorkBudgetExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class SpanKind : uint8_t { forward, backward, tp_comm, pp_wait, dp_comm, dp_wait, optimizer, pp_send, cp_comm };
const char* to_string(SpanKind k);

struct Span {
  double start_s, end_s;
  SpanKind kind;
  int micro_batch;  // -1 when not per micro-batch
  int chunk;        // model chunk; for dp_comm: bucket number
};

struct WorkerTimeline {  // one pipeline stage of one class of replicas
  int cls = 0, stage = 0;
  int replicas = 1;         // how many replicas this class stands for
  double speed = 1;         // compute speed (slowest GPU of the stage's tp group)
  std::vector<Span> spans;  // compute stream, plus pp_send/dp_comm spans of its streams
  double end_s = 0;
};

// Utilisation over time of one link: piecewise constant, utilisation[i] (bytes/s over the link's capacity)
// from t_s[i] until t_s[i + 1], the last value (0: every transfer on it has ended) until the iteration's
// end. Exact (one point per change of the link's load, equal consecutive values merged), so
// sum(utilisation[i] * (t_s[i + 1] - t_s[i])) * capacity_Bps == bytes up to rounding. A passive link
// (Topology::passive) is never a bottleneck, so its utilisation may exceed 1 (uneven ECMP spreading).
struct LinkSeries {
  int link = 0;
  double bytes = 0;  // = IterationResult::link_bytes[link]
  double capacity_Bps = 0;
  std::vector<double> t_s, utilisation;
};

struct IterationResult {
  double iteration_s = 0;
  // Breakdown on the GPU that finishes last (the critical GPU), seconds; sums to iteration_s.
  double compute_s = 0, tp_comm_s = 0, pp_send_s = 0, pp_wait_s = 0, dp_exposed_s = 0, optimizer_s = 0, idle_s = 0;
  double cp_comm_s = 0;  // context-parallel gathers and reduce-scatters
  int critical_stage = 0, critical_class = 0;
  // The critical path, walked back from the last GPU to finish: each step is a span of some worker (class
  // and stage); a wait for a pipeline message jumps to the stage that sent it (so the path crosses the
  // pipeline); a wait on a data-parallel collective (gradient buckets, ZeRO gathers) follows the
  // collective's chain back to the replica class that joined it last (so the path crosses replicas, e.g.
  // onto a straggler in another replica), with the collective's own time as dp_comm steps; when the
  // last to join is the waiting worker itself the wait stays a dp_wait step on it.
  struct PathStep {
    int worker;
    SpanKind kind;
    double start_s, end_s;
  };
  std::vector<PathStep> critical_path;
  std::vector<WorkerTimeline> workers;  // [class * pp + stage]
  // The data-parallel collectives of pipeline stage 0, in the order they ran: ZeRO's traffic as the
  // simulator moved it (sim/zero_animation.h draws it layer by layer).
  struct DpEvent {
    enum Kind : uint8_t { bucket, params_all_gather, zero3_gather, zero3_reduce } kind;
    int micro_batch = -1;   // ZeRO-3: the micro-batch whose pass issued it
    int unit = -1;          // ZeRO-3: layer within the chunk, -1 the parameters outside the layers
    bool backward = false;  // ZeRO-3: issued by the backward pass
    double bytes = 0;       // per GPU, the collective's whole size (gathered, or reduced before scattering)
    double start_s = 0, end_s = 0;
  };
  std::vector<DpEvent> dp_events;
  std::vector<int> replica_class;  // class of each data-parallel replica
  // Links
  std::vector<double> link_bytes;  // per link id, bytes over the iteration
  std::vector<ClassRateChange> class_rate_changes;
  // The spec.hottest_links busiest links: mean utilisation (bytes / capacity) descending, ties by lower
  // link id; links that carried nothing, and passive links unless spec.hottest_include_passive, left out. Rebuilt after
  // the run from the flow groups' rate history (FlowNet::group_rate_changes, link_loads), so the simulation pays one
  // record per rate change.
  std::vector<LinkSeries> hottest_series;
  long long events = 0, flow_groups = 0, rate_solves = 0;
  long long work = 0;  // FlowNet::work of the whole iteration (the budget's measure)
  double wall_s = 0;   // host time the simulation took
  std::vector<std::string> notes;
};

// Ops of one stage in schedule order: (micro_batch, chunk, backward?) - exposed for tests.

// DeepSpeed's TrainSchedule (deepspeed/runtime/pipe/schedule.py) for one stage: 2 (m + p - 1) lockstep
// steps, forward and backward alternating with the stage's parity; each step sends the previous step's
// output next to its own receive (a forward step: send gradient, receive activation; a backward step:
// receive gradient, send activation), then computes. Steps with no valid micro-batch only send.
struct PipeCmd {
  enum Kind : uint8_t { send_grad, recv_act, recv_grad, send_act, forward, backward } kind;
  int micro_batch;
};
std::vector<PipeCmd> deepspeed_schedule(int pp, int stage, int m);

// Throws std::invalid_argument for inconsistent specs (sizes that do not divide, GPU count mismatch).
IterationResult simulate_iteration(const Topology& topo, const IterationSpec& spec);

// The same simulation in bounded slices (the browser build is single-threaded: it advances the
// iteration a slice per frame so the page keeps drawing):
//   IterationSim sim(topo, spec);            // builds the op streams; throws like simulate_iteration
//   while (!sim.step(20000)) draw_progress(sim.progress());
//   IterationResult r = sim.take_result();   // identical to simulate_iteration(topo, spec)
// `topo` must outlive the object (the spec is copied). Slicing happens between events, so the result
// does not depend on the slice sizes (wall_s, the host time, sums the slices).
class IterationSim {
 public:
  IterationSim(const Topology& topo, const IterationSpec& spec);
  ~IterationSim();
  IterationSim(const IterationSim&) = delete;
  IterationSim& operator=(const IterationSim&) = delete;
  bool step(long long max_events);  // processes at most max_events events; true once finished
  bool done() const;
  double progress() const;   // fraction of all GPUs' ops done, 0..1 (1 once finished)
  long long events() const;  // processed so far
  long long work() const;    // FlowNet::work so far (the budget's measure)
  // The work the whole iteration will take, estimated when the op streams are built (before any event)
  // from their ops and the links of their collectives (iteration.cpp estimate_work). When it is over
  // spec.max_work the first step() throws WorkBudgetExceeded having processed no event (events() == 0).
  double estimated_work() const;
  IterationResult take_result();  // after done(); throws std::logic_error before
 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Which replica, stage and tp rank a GPU is, and back (the ordering above).
struct GpuCoord {
  int replica, stage, tp_rank;
};
GpuCoord gpu_coord(const IterationSpec& s, int gpu);
int gpu_id(const IterationSpec& s, int replica, int stage, int tp_rank);

}  // namespace mc::sim
