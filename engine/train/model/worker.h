// worker.h - one virtual worker of the training lab (internal to engine/train): its slice of the model
// (a pipeline stage's layers, a tensor-parallel shard of each), its buffers, and the activations it keeps
// between a micro-batch's forward and backward.
//
// Everything a worker computes with lives on its device (device/compute.h) for the whole run: its
// parameters, gradients, shards and Adam moments are carved from one allocation (llm.c's
// malloc_and_point_parameters), each micro-batch's activations from one more, its scratch from another.
// The host holds only DPtr handles into them, which it cannot dereference; copies to and from the host
// happen at the edges (the batch's token ids, the loss and norm partials, checkpoints, samples).
#pragma once

#include "device/compute.h"
#include "train/parallel/comm.h"
#include "train/train.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mc::train {

using device::Buffer;
using device::DPtr;

// How a local tensor maps onto the full model's tensor (Megatron-LM, Shoeybi et al. 2019, Sec. 3):
// replicated on every tp rank; column-split (each of `groups` blocks of columns cut in tp pieces, so q, k
// and v stay head-aligned); row-split.
enum class Split { replicated, cols, rows };

struct TensorSpec {
  std::string name;                        // e.g. "h1.fc_w", "wte"
  int64_t offset = 0, rows = 1, cols = 1;  // local, in the worker's flat buffer
  int64_t full_rows = 1, full_cols = 1;
  Split split = Split::replicated;
  int groups = 1;
  bool decay = false;   // AdamW weight decay applies (matrices)
  bool in_norm = true;  // counted once in the global gradient norm (false for replicas of a tensor)
  int64_t size() const { return rows * cols; }
};

struct LayerOffsets {
  int64_t ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fcproj_w, fcproj_b;
};

// A unit of ZeRO-2/3's partitioning: the embeddings, one transformer block, or the final LayerNorm (with
// a pipeline's copy of the tied embedding). ZeRO-3 gathers a unit's parameters just before the module runs
// and frees them after, and reduce-scatters its gradients as soon as its backward is done (Rajbhandari et
// al. 2020, Sec. 5.2-5.3; DeepSpeed partitions every tensor and fetches them submodule by submodule, as
// here unit by unit), so a worker never holds more than a few units in full. Each unit is padded to a multiple of dp:
// rank d owns the d-th equal piece of every unit.
struct ParamUnit {
  int64_t begin = 0, end = 0;  // its tensors: [begin, end) of the flat buffer
  int64_t padded = 0;          // floats including its padding: a multiple of dp, [begin, begin + padded)
};

struct Layout {
  int tp = 1, tp_rank = 0, pp = 1, pp_rank = 0, dp = 1;
  int first_layer = 0, layers = 0;  // [first_layer, first_layer + layers)
  bool has_embed = false, has_head = false;
  int64_t wte = -1, wpe = -1, lnf_w = -1, lnf_b = -1;  // offsets, -1 when absent
  std::vector<LayerOffsets> layer;
  std::vector<TensorSpec> tensors;
  std::vector<ParamUnit> units;                               // in order, covering [0, padded)
  int embed_unit = -1, head_unit = -1, first_layer_unit = 0;  // indices into units (-1: absent)
  bool sharded_by_unit = false;  // each unit padded to a multiple of dp (ZeRO-2/3); else one pad at the end
  int64_t size = 0;              // floats, including the units' padding when sharded by unit
  int64_t padded = 0;            // size rounded up to a multiple of dp (ring chunks of equal size)
  int layer_unit(int l) const { return first_layer_unit + l; }
  int unit_of(int64_t offset) const;  // the unit holding a flat offset
};

// Layers are spread over stages as evenly as possible, earlier stages taking the remainder. With
// `shard_by_unit` every unit is padded to a multiple of dp (ZeRO-2/3 partition unit by unit).
Layout make_layout(const ModelConfig& m, int tp, int tp_rank, int pp, int pp_rank, int dp, bool shard_by_unit = false);
// Maps local element (r, c) of `t` to the flat index in the full model's layout `full` (same tensor name).
int64_t full_index(const TensorSpec& t, const Layout& local, const TensorSpec& full_t, int64_t r, int64_t c);
const TensorSpec* find_tensor(const Layout& l, const std::string& name);
// GPT-2 initialisation (Radford et al. 2019): N(0, 0.02), residual projections scaled by 1/sqrt(2L).
std::vector<float> init_full_model(const ModelConfig& m, uint64_t seed);

// splitmix64 (Steele et al. 2014): portable, so runs reproduce on every platform and build.
struct Rng {
  uint64_t state = 0;
  uint64_t next();
  double uniform();  // [0, 1)
  double normal();   // Box-Muller
};

struct LayerActs {
  DPtr<float> x_in, ln1, ln1_mean, ln1_rstd, qkv, att, atty, x2, ln2, ln2_mean, ln2_rstd, fc, gelu;
};

// One micro-batch's activations on one stage: one allocation carved into its tensors (att holds the
// device's attention state, Device::attention_state_floats).
struct MicroActs {
  Buffer<float> arena;
  std::vector<LayerActs> layers;
  DPtr<float> x_out, lnf, lnf_mean, lnf_rstd, probs;  // the last stage's head (null elsewhere)
  double bytes() const { return double(arena.size()) * sizeof(float); }
};

// A piece of the flat buffer this worker updates: [lo, hi), stored from shard_off on in its shards (and
// in m and v). Without ZeRO one piece, the whole buffer; ZeRO-1 one contiguous 1/dp; ZeRO-2/3 the d-th
// 1/dp of every unit.
struct OwnedRange {
  int64_t lo = 0, hi = 0, shard_off = 0;
};

// A worker's persistent state as the host sees it at the edges (checkpoints, the gathered model).
struct HostState {
  std::vector<float> params, param_shard, m, v;
};

struct Worker {
  int id = 0, d = 0, p = 0, t = 0;
  Layout lay;
  device::Device* dev = nullptr;  // where everything below lives (not owned)
  // One allocation: params | grads | param_shard | grad_shard | m | v (sizes below; 0 = absent).
  // Full local buffers (ZeRO-3 holds no params, ZeRO-2/3 no grads); ZeRO's shards are this rank's 1/dp
  // (of the buffer, or of every unit); Adam moments are full, or the shard with ZeRO >= 1.
  Buffer<float> state;
  DPtr<float> params, grads, param_shard, grad_shard, m, v;
  int64_t n_params = 0, n_grads = 0, n_param_shard = 0, n_grad_shard = 0, n_moments = 0;
  // ZeRO-2/3 during a step: the units gathered now (params, ZeRO-3) and the units whose gradients are
  // being computed (both); empty buffers for the others.
  std::vector<Buffer<float>> unit_params, unit_grads;
  std::vector<OwnedRange> owned;
  int64_t shard_size = 0;                                // floats of param_shard / grad_shard / m / v with ZeRO >= 1
  double transient_bytes = 0, transient_peak_bytes = 0;  // unit buffers alive now / at most this step
  // The parameter / gradient at a flat offset, wherever it lives now (the full buffer or its unit's).
  // Throws std::logic_error when its unit is not gathered: a schedule bug, never a read of freed memory.
  DPtr<float> P(int64_t offset) const;
  DPtr<float> G(int64_t offset);
  std::map<int, MicroActs> acts;      // by micro-batch
  std::vector<MicroActs> spare_acts;  // finished micro-batches' buffers, reused (not counted in act_bytes)
  double act_bytes = 0, act_peak_bytes = 0;
  // Scratch of the stage passes (allocated on first use, kept across steps): partial sums and gradients
  // of the residual stream, the stage's output when it is sent, the backward's intermediate gradients.
  Buffer<float> scratch;
  DPtr<float> s_a, s_b, s_send, s_dgelu, s_datty, s_dqkv, s_dlnf;
  Buffer<int32_t> tokens;   // this dp rank's sequences of the step, (local batch, T + 1) ids
  Buffer<int32_t> targets;  // one micro-batch's next-token ids
  Buffer<double> scalars;   // [0] loss summed over this step's tokens (nats; last stage, tp rank 0),
                            // [1] sum of the squared gradients this worker owns

  // Carves the persistent state (zeroed) on `d`.
  void allocate_state(device::Device& d, int64_t params_n, int64_t grads_n, int64_t param_shard_n, int64_t grad_shard_n,
                      int64_t moments_n);
  // The step's token rows (n ids) onto the device: the one upload of a step.
  void set_tokens(const int32_t* ids, int64_t n);
  HostState download_state() const;       // the edge: params, param_shard, m, v to the host
  void upload_state(const HostState& h);  // and back (sizes must match)
};
// ZeRO-2/3's fetch and release of units around the modules that use them (trainer.cpp), called by the
// stage passes for every worker of the group at once (the dp ranks must run each collective together).
struct UnitHooks {
  virtual ~UnitHooks() = default;
  virtual void begin(int unit, bool backward) = 0;  // gather its params (ZeRO-3); backward: zeroed grads
  virtual void end_params(int unit) = 0;            // free its gathered params (ZeRO-3)
  virtual void end_grads(int unit) = 0;             // reduce-scatter its grads into the shards and free them
};

// What a stage's forward/backward needs to know about the step.
// Each worker's Worker::tokens holds its dp rank's sequences; micro-batch mb is rows
// [mb * micro_batch_size, (mb + 1) * micro_batch_size) of it.
struct StepContext {
  const ModelConfig* model = nullptr;
  int micro_batch_size = 0;  // sequences
  int local_batch = 0;       // sequences per dp rank
  int global_batch = 0;
  int tick = 0;
  UnitHooks* units = nullptr;  // ZeRO-2/3's per-unit fetch and reduce; nullptr = buffers are whole
};

// Forward / backward of one micro-batch on one stage, the tensor-parallel group `g` in lock step. `g` may
// hold several data-parallel replicas of the stage, each a run of lay.tp workers (ZeRO-2/3 run the dp
// ranks unit by unit together). Activations arrive from / leave for the neighbouring stages through comm
// (tag = micro-batch; stage_ids[stage][tp rank]).
void stage_forward(Comm& comm, std::vector<Worker*>& g, const std::vector<std::vector<int>>& stage_ids, int mb,
                   const StepContext& ctx);
void stage_backward(Comm& comm, std::vector<Worker*>& g, const std::vector<std::vector<int>>& stage_ids, int mb,
                    const StepContext& ctx);

}  // namespace mc::train
