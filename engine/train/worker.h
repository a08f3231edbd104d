// worker.h - one virtual worker of the training lab (internal to engine/train): its slice of the model
// (a pipeline stage's layers, a tensor-parallel shard of each), its buffers, and the activations it keeps
// between a micro-batch's forward and backward.
#pragma once

#include "train/comm.h"
#include "train/train.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mc::train {

struct OpsBackend;  // ops_backend.h

// How a local tensor maps onto the full model's tensor (Megatron-LM, Shoeybi et al. 2019, Sec. 3):
// replicated on every tp rank; column-split (each of `groups` blocks of columns cut in tp pieces, so q, k
// and v stay head-aligned); row-split.
enum class Split { replicated, cols, rows };

struct TensorSpec {
  std::string name;   // e.g. "h1.fc_w", "wte"
  int64_t offset = 0, rows = 1, cols = 1;  // local, in the worker's flat buffer
  int64_t full_rows = 1, full_cols = 1;
  Split split = Split::replicated;
  int groups = 1;
  bool decay = false;    // AdamW weight decay applies (matrices)
  bool in_norm = true;   // counted once in the global gradient norm (false for replicas of a tensor)
  int64_t size() const { return rows * cols; }
};

struct LayerOffsets {
  int64_t ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fcproj_w, fcproj_b;
};

struct Layout {
  int tp = 1, tp_rank = 0, pp = 1, pp_rank = 0;
  int first_layer = 0, layers = 0;  // [first_layer, first_layer + layers)
  bool has_embed = false, has_head = false;
  int64_t wte = -1, wpe = -1, lnf_w = -1, lnf_b = -1;  // offsets, -1 when absent
  std::vector<LayerOffsets> layer;
  std::vector<TensorSpec> tensors;
  int64_t size = 0;    // floats
  int64_t padded = 0;  // size rounded up to a multiple of dp (ring chunks of equal size)
};

// Layers are spread over stages as evenly as possible, earlier stages taking the remainder.
Layout make_layout(const ModelConfig& m, int tp, int tp_rank, int pp, int pp_rank, int dp);
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
  std::vector<float> x_in, ln1, ln1_mean, ln1_rstd, qkv, att, atty, x2, ln2, ln2_mean, ln2_rstd, fc, gelu;
};

struct MicroActs {
  std::vector<LayerActs> layers;
  std::vector<float> x_out, lnf, lnf_mean, lnf_rstd, probs;
  double bytes() const;
};

struct Worker {
  int id = 0, d = 0, p = 0, t = 0;
  Layout lay;
  std::vector<float> params, grads;  // full local buffers (released between steps by ZeRO-2/3)
  std::vector<float> param_shard, grad_shard;  // ZeRO: this rank's 1/dp of the flat buffer
  std::vector<float> m, v;                     // Adam moments (full, or the shard with ZeRO >= 1)
  int64_t shard_begin = 0, shard_end = 0;
  std::map<int, MicroActs> acts;  // by micro-batch
  std::vector<MicroActs> spare_acts;  // finished micro-batches' buffers, reused (not counted in act_bytes)
  double act_bytes = 0, act_peak_bytes = 0;
  double loss_sum = 0;  // nats summed over this step's tokens (last stage, tp rank 0)
};

// What a stage's forward/backward needs to know about the step.
struct StepContext {
  const ModelConfig* model = nullptr;
  const std::vector<int32_t>* tokens = nullptr;  // (B_global, T+1)
  int micro_batch_size = 0;   // sequences
  int local_batch = 0;        // sequences per dp rank
  int global_batch = 0;
  int tick = 0;
  const OpsBackend* ops = nullptr;  // the kernels (ops_backend.h); nullptr = the CPU reference
};

// Forward / backward of one micro-batch on one stage, the tensor-parallel group `g` in lock step.
// Activations arrive from / leave for the neighbouring stages through comm (tag = micro-batch).
void stage_forward(Comm& comm, std::vector<Worker*>& g, const std::vector<std::vector<int>>& stage_ids, int mb,
                   const StepContext& ctx);
void stage_backward(Comm& comm, std::vector<Worker*>& g, const std::vector<std::vector<int>>& stage_ids, int mb,
                    const StepContext& ctx);

}  // namespace mc::train
