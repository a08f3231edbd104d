// perf.h - the analytic model of training a transformer on a GPU cluster: memory per GPU, time per
// iteration (and why), achieved FLOP/s, days, GPU-hours and dollars; plus the layout search.
//
// Conventions (as in Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM", and Korthikanti et al. 2022): l layers, h hidden, a heads, s sequence
// length, V vocabulary, B global batch (sequences), b micro-batch, t/p/d tensor/pipeline/data degrees,
// m = B/(b d) micro-batches per iteration, v virtual stages (interleaved schedule).
//
// Usage:
//   mc::perf::Config c = mc::perf::parse_config(catalog, mc::JsonDoc::load("run.json"));  // LoadError
//   mc::perf::Estimate e = mc::perf::estimate(c);
//   nlohmann::json out = mc::perf::estimate_json(catalog, config_json);  // what `megacluster estimate` prints
//
// The model is built from physics only: peak FLOP/s and HBM bandwidth from the catalog, a GEMM
// efficiency curve (tile/wave quantization and a roofline), latency + bandwidth collectives over NVLink,
// the NICs and a fat-tree (ring, tree, hierarchical; the fastest is taken, as NCCL does). The published
// throughputs are only compared against (engine/perf/validate.h), never fed in.
#pragma once

#include "catalog/catalog.h"
#include "core/json_doc.h"
#include "core/pipeline_schedule.h"
#include "core/units.h"
#include "perf/perf_request.h"

#include <string>
#include <vector>

namespace mc::perf {

// ---- inputs ---------------------------------------------------------------------------------------

struct ModelSpec {
  std::string id;  // preset id ("gpt3-175b") or "" for a custom model
  int layers = 24;
  int hidden = 1024;
  int heads = 16;
  int seq_len = 2048;
  int vocab = 50257;
  int ffn_hidden = 0;      // 0 -> 4 * hidden
  int kv_heads = 0;        // 0 -> heads (multi-head attention); fewer -> grouped-query attention
  bool gated_mlp = false;  // SwiGLU-style MLP: three ffn matrices instead of two
  // Architecture conventions that change the parameter count (GPT-2/3 defaults; Llama: Touvron et al. 2023).
  bool learned_positions = true;  // a learned s x h position table (GPT); false: rotary embeddings (RoPE), no table
  bool tied_output = true;        // the output layer shares the token embedding (GPT); false: its own V x h matrix
  bool linear_biases = true;      // biases on the QKV, projection and MLP matrices (GPT); false: none (Llama)
  bool rms_norm = false;          // RMSNorm, a gain only (Llama); false: LayerNorm, gain and bias (GPT)
  int ffn() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
  int kv() const { return kv_heads > 0 ? kv_heads : heads; }
};

struct ClusterSpec {
  std::string id;                   // preset id or ""
  std::string gpu;                  // catalog gpu id
  std::string accelerator = "GPU";  // what one is called (catalog/accelerator.h): "GPU", "TPU v3 chip"
  // GPU (from the catalog record of `gpu`, overridable).
  double peak_fp16_flops = 125e12;  // dense tensor-core peak for fp16
  double peak_bf16_flops = 0;       // 0 -> no bf16 support
  double peak_fp32_flops = 15.7e12;
  double peak_tf32_flops = 0;  // 0 -> no TF32 tensor cores (before Ampere)
  double hbm_bytes = 32.0 * (1ull << 30);
  double hbm_bandwidth_GBps = 900;
  int sm_count = 80;  // streaming multiprocessors (for GEMM wave quantization)
  // Node and network.
  int gpus_per_node = 8;  // the job's GPUs on each node: fewer than node_gpus only on one partly used node
  int nodes = 1;
  int node_gpus = 0;                      // GPUs one node of the machine holds (0: gpus_per_node)
  double intra_node_GBps_per_gpu = 300;   // NVLink/NVSwitch, bidirectional as NVIDIA quotes it
  double node_network_Gbps = 400;         // all NICs of one node together, one direction
  double oversubscription = 1;            // fat-tree: 1 = full bisection, 2 = half, ...
  double intra_latency_s = 5e-6;          // one NCCL step inside a node (fabrics.json latency_us)
  double inter_latency_s = 8e-6;          // one NCCL step across the InfiniBand fabric
  double intra_bus_efficiency = 0.8;      // NCCL bus bandwidth / one-way NVLink rate (fabrics.json)
  double inter_bus_efficiency = 0.9;      // NCCL bus bandwidth / NIC line rate (fabrics.json)
  double inter_busbw_GBps = 0;            // measured all-reduce bus bandwidth across nodes (>0 replaces the above)
  int inter_busbw_nics = 0;               // NICs per direction the measured collective crossed each node through
                                          // (NCCL's log); 0: all of them, the measurement is the whole node's
  double inter_link_Gbps = 0;             // one NIC port's line rate (fabrics.json link_Gbps); 0: not known
  int leaf_nodes = 16;                    // nodes under one leaf switch; beyond it oversubscription applies
  double matmul_peak_fraction = 0.85;     // large-GEMM FLOP/s / peak (gpus.json matmul_peak_fraction)
  double elementwise_hbm_fraction = 0.8;  // achieved / peak HBM bandwidth of memory-bound kernels
  double kernel_overhead_s = 2e-6;        // ramp-up and tail of each kernel (launches overlap)
  double price_per_gpu_hour_usd = 0;      // cloud price (0 -> cost not computed)
  // The host side of a node, for offloading (ZeRO-Offload, Ren et al. 2021): each GPU's own link to the CPU
  // (gpus.json host_link: a PCIe fabric, one direction at its bus efficiency), and the node's memory
  // (systems.json of the cluster's server: capacity and peak bandwidth). 0: not known.
  double host_link_GBps = 0;          // GPU <-> host, one direction, per GPU
  double host_memory_bytes = 0;       // DRAM of one node
  double host_memory_GBps = 0;        // peak DRAM bandwidth of one node, all sockets
  double host_memory_fraction = 0.8;  // achieved / peak of a streaming pass (assumed, as for HBM above)
  long long gpus() const { return (long long)gpus_per_node * nodes; }  // 64-bit: nodes x GPUs can pass 2^31
};

// How a training stack (framework, kernels, NCCL) runs a layout: software.json in the catalog, each value
// sourced. Defaults are Megatron-LM 2021 on NCCL 2.8, the stack the model was first checked against.
enum class Zero3Gather { per_tensor, per_module, per_layer };
struct Software {
  std::string id;  // software.json id ("" = these defaults)
  // Who chose it: "config" (the config's "software"), the preset whose stack of record it is
  // ("models/mt-nlg-530b", "clusters/selene-2021": their sourced "software" attribute), or "default".
  std::string chosen_by = "default";
  std::string chosen_source;      // that attribute's source and confidence ("mt-nlg-paper, reported"); "" if none
  double gemm_fraction = 0;       // large-GEMM FLOP/s / peak in this stack on this GPU; 0 -> the GPU's own
  double elementwise_factor = 1;  // HBM traffic of the memory-bound kernels relative to Megatron's fused ones
  bool flash_attention = false;   // attention scores never written to HBM (Dao et al. 2022)
  int nccl_version = 20800;       // major*10000 + minor*100: all-gather/reduce-scatter are ring-only < 2.23
  Zero3Gather zero3_gather = Zero3Gather::per_layer;  // how ZeRO-3/FSDP issues its parameter collectives
  bool zero3_overlap = false;                  // gathers prefetched under compute (false: the GPU waits for each)
  bool zero3_reshard_after_forward = true;     // false: a unit's gathered weights stay whole from its forward
                                               // to its backward, which gathers nothing (fairscale/PyTorch FSDP
                                               // reshard_after_forward=False, SHARD_GRAD_OP)
  bool zero3_reduce_each_microbatch = false;   // gradients reduce-scattered after every micro-batch's
                                               // backward (DeepSpeed, FSDP) or once per iteration
  double zero3_prefetch_params = 0;            // prefetch budget: a module with more parameters is not prefetched
                                               // and its gather waits in the open (DeepSpeed); 0 = no budget (FSDP)
  double zero3_reduce_bucket_params = 0;       // gradient bucket: a module with more parameters overflows it and
                                               // its reduce-scatter holds up the backward (DeepSpeed); 0 = none
  bool zero3_list_collectives = false;         // ZeRO-3 gathers and reduce-scatters through torch.distributed's
                                               // list form: one device copy per rank around each (DeepSpeed < 0.5.5)
  bool selective_every_second_matmul = false;  // "selective" recompute re-runs every second matmul of each layer
                                               // and its element-wise ops, keeping attention (torchtitan's per-op
                                               // policy), not the attention core (Korthikanti et al. 2022)
  bool zero1_full_allreduce = false;           // ZeRO-1 all-reduces whole gradients, then all-gathers the updated
                                               // weights after the step (DeepSpeed 0.4-0.6): 3 passes, not 2
  double grad_accumulation_bytes = 0;          // HBM bytes a parameter to add each micro-batch's weight gradient
                                               // into the accumulated ones (autograd or a hook; 0 when fused)
  bool grad_accumulation_every_microbatch = false;  // the add runs for the first micro-batch too (a hook adding
                                                    // into a zeroed buffer), not from the second (autograd)
  double optimizer_bytes_per_param = 28;            // HBM bytes a parameter in the step: Adam's 28, plus the stack's
                                                    // own passes (flattening, overflow check, fp32 copies, norm)
  double optimizer_host_ops_per_tensor = 0;         // ops dispatched per parameter tensor in step loops that wait for
                                                    // the GPU after each tensor (.item() of a per-tensor sum or norm)
  double host_op_dispatch_s = 0;                    // host time to dispatch one eager operation
  double loss_bytes_per_logit = 0;                  // HBM bytes per logit element of the loss, forward and backward
                                                    // (Megatron's fp32 cross-entropy: 52); 0: 3 passes, 9 x precision
  bool dp_overlap = false;                          // gradient reduction overlapped with the backward pass
  bool pipeline_scatter_gather = true;              // Megatron-LM Sec. 4.1: activations split over the tensor ranks
  bool pipeline_full_gradients = false;             // activation gradients sent back whole (DeepSpeed's engine)
  bool pipeline_p2p_broadcast = false;              // transfers made as two-rank NCCL broadcasts (DeepSpeed < 0.5.4):
                                                    // they run at the fabric's collective, not point-to-point, rate
  bool pipeline_blocking_p2p = false;               // separate blocking send and receive: both stages wait out each
                                                    // transfer (DeepSpeed); Megatron pairs them in one batched call
  bool pipeline_inside_data_parallel = false;       // ranks ordered tp, cp, pp, dp (Llama 3's [TP, CP, PP, DP]): a
                                                    // replica's stages on neighbouring GPUs; false: tp, cp, dp, pp
                                                    // (Megatron-LM), each stage's replicas together
  // What the stack can run at all (software.json; permissive for a config without a catalog stack). The
  // layout search proposes only these; an explicit layout that needs more is refused (stack_problems).
  std::string name;                  // software.json name, for the messages that refuse a layout
  bool tensor_parallel = true;       // Megatron-style tensor parallelism (Shoeybi et al. 2019)
  bool pipeline_parallel = true;     // pipeline stages (GPipe / 1F1B); FSDP-only stacks have neither
  bool interleaved_schedule = true;  // Narayanan et al. 2021's interleaved 1F1B (virtual stages)
  bool selective_recompute = true;   // Korthikanti et al. 2022's selective activation recomputation
  bool sequence_parallel = true;     // Korthikanti et al. 2022's sequence parallelism
  bool context_parallel = true;      // sequences split over ranks along their length (Llama 3's all-gather CP)
  int max_zero_stage = 3;            // highest ZeRO stage (or FSDP sharding equivalent) it implements
  int max_zero_stage_pipeline = 3;   // ... together with pipeline parallelism (DeepSpeed's engine: 1)
};

enum class Recompute { none, selective, full };
// Pipeline stage work besides the transformer layers: the embedding (first stage) and the output layer
// (last stage) as extra work on top of their layers (Megatron-LM), or counted as one layer each when the
// layers are balanced over the stages (BLOOM's Megatron-DeepSpeed partition method).
enum class EmbeddingStages { extra, as_layers };
// The arithmetic of the matrix products, as the training lab's --precision means it (device/compute.h):
// fp16 / bf16 mixed precision (2-byte weights, gradients and activations, fp32 master weights; Micikevicius
// et al. 2018), fp32, and tf32 (fp32 storage everywhere, products on TF32 tensor cores; A100 whitepaper).
enum class Precision { fp16, bf16, fp32, tf32 };
const char* to_string(Recompute r);
const char* to_string(Precision p);
// Weights, gradients and activations stored in 4 bytes (fp32 and tf32) rather than 2.
inline bool full_width(Precision p) { return p == Precision::fp32 || p == Precision::tf32; }
struct ClusterSpec;
// The GPU's peak for the products in this precision (0 when the part has none).
double peak_flops(const ClusterSpec& c, Precision p);

struct Layout {
  int tp = 1, pp = 1, dp = 1;
  // Context parallelism (Llama 3, Dubey et al. 2024, Sec. 3.3.2): each sequence split over cp ranks along
  // its length, each rank holding 2 of 2 cp chunks (the i-th and the (2 cp - 1 - i)-th, so every rank has
  // the same share of the causal mask); the ranks all-gather the keys and values of each layer before its
  // attention. Ranks are ordered tp, cp, dp, pp (Megatron-Core's default order): the cp ranks of one
  // group are tp apart. The cp ranks hold the same parameters, so gradients are reduced (and ZeRO/FSDP
  // shards) over the dp x cp ranks (dp_group), as Megatron-Core and torchtitan do.
  int cp = 1;
  int micro_batch = 1;     // sequences per micro-batch
  int global_batch = 512;  // sequences per iteration
  PipeSchedule schedule = PipeSchedule::one_f_one_b;
  int virtual_stages = 1;  // model chunks per pipeline rank (interleaved only)
  int zero = 0;            // ZeRO stage 0-3 over the data-parallel group
  Recompute recompute = Recompute::none;
  bool sequence_parallel = false;
  bool overlap_dp_comm = false;       // bucketed gradient all-reduce overlapped with the last backward pass
  bool scatter_gather = true;         // Megatron-LM 2021 Sec. 4.1: split pipeline sends over the t ranks
  std::vector<int> layers_per_stage;  // explicit split (pp entries summing to the layers); empty = even
  EmbeddingStages embedding_stages = EmbeddingStages::extra;
  // Offloading to the host (DeepSpeed's ZeRO-Offload, Ren et al. 2021; FSDP's CPUOffload):
  bool offload_optimizer = false;      // fp32 master weights, Adam moments and the step on the CPU
  bool offload_params = false;         // the parameter (and gradient) shards kept on the CPU too (ZeRO-3)
  bool offload_activations = false;    // activation checkpoints copied to the CPU (DeepSpeed checkpoint-in-cpu)
  bool partition_activations = false;  // checkpoints split over the tensor ranks, gathered before the
                                       // recompute (DeepSpeed partition-activations; Rajbhandari et al.
                                       // 2020, Sec. 6.1, "Pa")
  // The ranks that hold the same parameter shard and reduce its gradients: data and context parallel.
  int dp_group() const { return dp * cp; }
  long long ranks() const { return (long long)tp * cp * pp * dp; }  // GPUs the layout uses
  // "tp 8 x pp 16 x dp 8", with "cp 16 x " after tp when context parallel: how the panels name a layout.
  std::string degrees() const {
    return "tp " + std::to_string(tp) + " x " + (cp > 1 ? "cp " + std::to_string(cp) + " x " : std::string()) + "pp " +
           std::to_string(pp) + " x dp " + std::to_string(dp);
  }
  // m, in 64-bit so that an unchecked micro_batch x dp cannot wrap (to zero: a division by zero)
  int micro_batches() const {
    const long long per = (long long)micro_batch * dp;
    return per > 0 ? int(global_batch / per) : 0;
  }
};

struct Training {
  // Where `tokens` came from: the config ("training.tokens"), the model preset's catalog row, or neither (the
  // default, GPT-3's 300B, an assumption the panel states).
  enum class TokensFrom { config, model, assumed };
  double tokens = 300e9;
  TokensFrom tokens_from = TokensFrom::assumed;
  Precision precision = Precision::fp16;
};

struct Config {
  ModelSpec model;
  ClusterSpec cluster;
  Layout layout;
  Training training;
  Software software;
  // Where the layout's keys came from when a model preset's layout of record is its base (the keys the
  // record gave with their sources, the ones the config set, dp filling the cluster); empty otherwise.
  // estimate() lists it first among its notes.
  std::string layout_from;
};

// The transformer layers each pipeline stage holds: the layout's explicit list, or the layers split as
// evenly as possible (the first stages take one more when they do not divide; with EmbeddingStages::
// as_layers the embedding and the output layer count as one layer each on the first and last stage).
std::vector<int> stage_layers(const ModelSpec& m, const Layout& L);
// The layers of each model chunk under the interleaved schedule, p v entries indexed by virtual stage
// (chunk * pp + rank; rank r holds chunks r, p + r, ...): the layers balanced over the virtual stages
// (Megatron-LM's p v equal chunks when they divide; with as_layers the first and last chunk give a slot to
// the embedding and the output layer, Llama 3 405B's split), or each rank's explicit count split over its
// chunks. Other schedules: stage_layers (one chunk per rank). Sums per rank equal stage_layers.
std::vector<int> chunk_layers(const ModelSpec& m, const Layout& L);

// ---- outputs --------------------------------------------------------------------------------------

struct MemoryBreakdown {  // bytes on the most loaded GPU (the first pipeline stage)
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, total = 0;
  double gathered = 0;  // ZeRO-3/FSDP: the whole weights and gradients of the units in use (in total)
  double host = 0;      // what that GPU's process keeps in host memory instead (offloading), not in total
};

struct TimeBreakdown {   // seconds per iteration, exposed (not hidden by overlap)
  double compute = 0;    // forward + backward (+ recompute) matmuls and element-wise kernels
  double tp_comm = 0;    // tensor-parallel all-reduces (or reduce-scatter/all-gather with sequence parallel)
  double cp_comm = 0;    // context-parallel key/value all-gathers and their gradients' reduce-scatters
  double pp_comm = 0;    // pipeline send/recv
  double dp_comm = 0;    // data-parallel gradient exchange (and ZeRO-3 parameter gathers), not overlapped part
  double bubble = 0;     // pipeline fill and drain
  double optimizer = 0;  // Adam update (memory bound; on the CPU with offload_optimizer)
  double offload = 0;    // host copies the GPU waits for: checkpoints out and back, gathered partitions,
                         // offloaded shards in and out (the CPU step is in `optimizer`)
  double total = 0;
};

struct Estimate {
  double params = 0;                        // exact count of the model
  double model_flops_per_iteration = 0;     // no recompute (Megatron-LM 2021 eq. 3 with 72 instead of 96)
  double hardware_flops_per_iteration = 0;  // with the recomputation actually done
  double six_nd_flops_per_iteration = 0;    // 6 * params * tokens per iteration (Kaplan et al. 2020)
  MemoryBreakdown memory;
  double hbm_bytes = 0;
  double host_bytes_per_node = 0;  // offloaded state of a node's GPUs together (memory.host x GPUs per node)
  bool fits = false;               // in HBM, and (when known) the offloaded state in the node's memory
  double iteration_time_s = 0;
  TimeBreakdown time;
  // Two utilisations, named as in Chowdhery et al. 2022 (PaLM), Appendix B, and Korthikanti et al. 2022:
  // model FLOPs utilisation counts only the FLOPs the model needs (no recompute); hardware FLOPs
  // utilisation counts what the GPUs execute, recomputed activations included. HFU >= MFU.
  double achieved_tflops_per_gpu = 0;  // hardware FLOPs / time / GPUs (Narayanan et al. 2021's figure)
  double model_tflops_per_gpu = 0;     // model FLOPs / time / GPUs
  double mfu = 0;                      // model FLOPs / time / (GPUs * peak)
  double hfu = 0;                      // hardware FLOPs / time / (GPUs * peak)
  double tokens_per_s = 0;
  double iterations = 0;  // training tokens / (global batch * seq_len)
  double training_days = 0, gpu_hours = 0, cost_usd = 0;
  // Per micro-batch, per pipeline stage (for the Gantt and the simulator).
  double stage_forward_s = 0, stage_backward_s = 0;  // backward includes recompute
  double p2p_s = 0;                                  // one boundary transfer
  double tied_grad_s = 0;  // the tied embedding's gradient all-reduced between the first and last stage
  double layer_forward_s = 0, layer_backward_s = 0;  // one layer, one micro-batch, with its tp collectives
  double logits_s = 0;                               // the output layer's forward + backward (last stage)
  double gemm_efficiency = 0;                        // achieved / peak for this layer's matmuls
  int slowest_stage = 0;                             // the stage that sets the pipeline's pace
  std::vector<int> stage_layers;                     // transformer layers per stage
  std::vector<int> chunk_layers;                     // per virtual stage (chunk * pp + rank; = stage_layers if v = 1)
  std::vector<double> chunk_forward_s, chunk_backward_s;  // per virtual stage, one micro-batch (logits included)
  double zero3_collectives = 0;                           // parameter gathers + gradient reduce-scatters per step
  std::string dp_algorithm, tp_algorithm;                 // "ring", "tree", "hierarchical", "none"
  std::vector<std::string> notes;                         // assumptions applied (e.g. ZeRO-3 with pp > 1)
};

// ---- model arithmetic (each cites its formula in perf_model.cpp) -----------------------------------

double param_count(const ModelSpec& m);                                         // exact: embeddings, layers, final norm
double layer_params_bytes(const ModelSpec& m, int tp, double bytes_per_param);  // one layer's shard
// ZeRO-3 as a stack runs it (software.json zero3_*; perf_time.cpp prices it, the simulator replays it):
// how many collectives gather one layer's parameters (one per tensor, per module, or one), and the share
// of a layer's parameters (its tp shard) in modules larger than `limit_params` (0: none), which a
// prefetch budget or gradient bucket of that size leaves in the open.
int zero3_collectives_per_layer(const ModelSpec& m, Zero3Gather g);
double zero3_share_above(const ModelSpec& m, int tp, double limit_params);
// What a collective issued in torch.distributed's list form adds on each rank (software.json
// zero3_list_collectives): PyTorch's ProcessGroupNCCL all_gather copies each of the p ranks' pieces out
// of a flat buffer after NCCL, reduce_scatter copies them in before (one copy kernel per rank, in order on
// the NCCL stream), so each collective pays p kernels' ramp and tail and one more read and write of its
// bytes through HBM. Seconds = per_collective_s + per_byte_s * bytes.
struct ListCopyCost {
  double per_collective_s = 0, per_byte_s = 0;
  // A gather's own buffer, filled with zeros before the transfer (DeepSpeed 0.3.13-0.5.4 partition_parameters.py
  // _allgather_param: torch.zeros of the whole tensor): one more write of its bytes. 0 for reduce-scatters.
  double gather_fill_per_byte_s = 0;
  double seconds(double bytes, double collectives = 1) const {
    return collectives * per_collective_s + per_byte_s * bytes;
  }
  double gather_seconds(double bytes, double collectives = 1) const {
    return seconds(bytes, collectives) + gather_fill_per_byte_s * bytes;
  }
};
ListCopyCost list_collective_copies(const ClusterSpec& c, int ranks);
// Everything a ZeRO-3 collective adds on each rank beside NCCL's transfer: the list form's copies (and its
// gathers' zero-filled buffers), and with
// offload_params the shard's trip over the host link (perf_time.cpp; the simulator adds the same).
ListCopyCost zero3_copies(const Config& c);
// DeepSpeed's ZeRO-1 after its step (software.json zero1_full_allreduce; zero/stage2.py step): the updated
// fp16 weights all-gathered over the dp ranks in list form, max(1, shard / allgather_bucket_size (5e8
// elements)) collectives. `bytes` the rank's whole shard of weights (0 when the stack or layout has no such
// gather); `copies` the list form's copies around them (list_collective_copies).
struct Zero1Gather {
  double bytes = 0, collectives = 0;
  ListCopyCost copies;
};
Zero1Gather zero1_step_gather(const Config& c, double shard_bytes);
// The tied embedding split over a pipeline: the first stage holds the token embedding, the last stage a
// copy of it as the output layer, and the two gradients must be summed before the step. Both codes that
// pipeline a tied GPT do it as one all-reduce of the whole gradient (vocab x h / t, in the gradients'
// precision) between the two stages, per data-parallel replica and tensor rank, after the last backward
// and before the optimizer, on the compute stream: DeepSpeed's pipeline engine (runtime/pipe/schedule.py
// TrainSchedule issues ReduceTiedGrads after the last micro-batch, engine.py _exec_reduce_tied_grads ->
// module.py allreduce_tied_weight_gradients, since 0.3.0) and Megatron-LM (megatron/training.py
// train_step at aed2f75, 2021: all_reduce of word_embeddings' grad over the embedding group, after the
// data-parallel all-reduce). Bytes per GPU; 0 without a pipeline or with an untied output layer.
double tied_grad_bytes(const Config& c);
// Bytes a second one GPU moves to or from host memory (its link, or its share of the node's DRAM).
double host_rate_Bps(const ClusterSpec& c);
double megatron_param_count(const ModelSpec& m);                            // Narayanan et al. 2021 eq. (2)
double model_flops_per_iteration(const ModelSpec& m, double global_batch);  // eq. (3) without recompute
double hardware_flops_per_iteration(const ModelSpec& m, double global_batch, Recompute r);
double six_nd_flops(double params, double tokens);  // Kaplan et al. 2020: C = 6 N D

// Korthikanti et al. 2022, Table 2: activation bytes of one transformer layer for micro-batch b; with
// flash_attention (Dao et al. 2022) no s x s scores are kept, only a fp32 logsumexp per query and head.
double activation_bytes_per_layer(const ModelSpec& m, double micro_batch, int tp, bool sequence_parallel, Recompute r,
                                  bool flash_attention = false);
// ZeRO (Rajbhandari et al. 2020, Sec. 5): model-state bytes per GPU for `params` spread over dp ranks,
// 2 bytes weights + 2 bytes gradients + K = 12 bytes of fp32 Adam state per parameter (mixed precision).
MemoryBreakdown zero_model_state_bytes(double params, int dp, int zero_stage, Precision p);
// Fraction of ideal time spent in the bubble: (p-1)/m (GPipe, 1F1B), (p-1)/(v m) interleaved
// (Narayanan et al. 2021, Sec. 2.2).
double bubble_over_ideal(PipeSchedule s, int p, int m, int v);
MemoryBreakdown memory_per_gpu(const Config& c);

// ---- the estimate -----------------------------------------------------------------------------------

// Problems with a config that make it meaningless (tp*pp*dp != GPUs, batch not divisible, ...), each a
// sentence naming the key and the rule. Empty when valid. Not fitting in memory is NOT a problem.
std::vector<std::string> layout_problems(const Config& c);
// What the config's training stack cannot run (interleaved schedule, selective recompute, sequence
// parallelism, a ZeRO stage), each a sentence led by the key, naming the stack and the feature. Empty when
// the stack runs it. parse_config refuses such a layout when the config names its "software" (unless
// check_stack = false); with the preset's default stack, estimate() runs it and says so in its notes.
std::vector<std::string> stack_problems(const Config& c);
// Why the stack cannot run layout L ("" when it can): the first of stack_problems, for the search.
std::string stack_refusal(const Software& sw, const Layout& L);
Estimate estimate(const Config& c);  // call only when layout_problems(c) is empty
nlohmann::json to_json(const Estimate& e, const Config& c);

// Reads a config (the `megacluster estimate` format, see README) resolving model and cluster presets
// from the catalog, with per-key overrides. Throws LoadError naming file, line, column, key and rule
// (unknown key or preset, wrong type, out of range, tp*pp*dp != GPUs, batch not divisible).
// require_parallel = false for `search` configs (the "parallel" object is then optional).
// check_stack = false: a layout the stack cannot run is accepted (stack_problems then lists why).
Config parse_config(const Catalog& cat, const JsonDoc& doc, bool require_parallel = true, bool check_stack = true);
Config parse_config(const Catalog& cat, const nlohmann::json& config, const std::string& file_for_errors,
                    bool require_parallel = true, bool check_stack = true);
// A request as the panels hold it (perf_request.h), read the same way.
Config parse_config(const Catalog& cat, const Request& config, const std::string& file_for_errors,
                    bool require_parallel = true, bool check_stack = true);
// A software.json record as the model uses it (unknown ids throw std::out_of_range naming the known ones).
Software software_from_catalog(const Catalog& cat, const std::string& id, const std::string& gpu_id);
// The stack a config runs when it names none: the model preset's own (models.json "software"), else the
// cluster preset's, else Megatron-LM 2021.
// `chosen_by` (optional) receives "models/<id>", "clusters/<id>" or "default".
std::string default_software(const Catalog& cat, const std::string& model_id, const std::string& cluster_id,
                             std::string* chosen_by = nullptr);

// Exactly the object `megacluster estimate` prints. Throws LoadError for invalid configs.
nlohmann::json estimate_json(const Catalog& cat, const nlohmann::json& config,
                             const std::string& file_for_errors = "<config>");

// ---- the pipeline schedule of one iteration (for the Gantt chart and the simulator) -------------------

struct PipelineOp {
  int stage = 0;  // pipeline rank
  int micro_batch = 0;
  int chunk = 0;  // model chunk (0 unless interleaved)
  bool backward = false;
  double start_s = 0, end_s = 0;
};
// Replays the schedule (GPipe, 1F1B, interleaved 1F1B as in Megatron-LM) with the estimate's per-stage
// forward/backward times and p2p latency. At most `max_ops` ops (the UI passes a few thousand).
std::vector<PipelineOp> pipeline_timeline(const Config& c, const Estimate& e, int max_ops = 20000);
// The end of the same replay for p ranks, m micro-batches and v chunks per rank, with each virtual stage's
// (chunk * p + rank) forward and backward time and transfers of comm_s: what estimate() takes as ideal time
// plus bubble when the interleaved chunks are uneven.
double pipeline_end_s(PipeSchedule s, int p, int m, int v, const std::vector<double>& forward_s,
                      const std::vector<double>& backward_s, double comm_s = 0);

// ---- the layout search ------------------------------------------------------------------------------

struct SearchOptions {
  int max_results = 20;      // ranked layouts kept
  int max_rejected = 50;     // rejected layouts kept as examples (all are counted)
  int max_micro_batch = 16;  // powers of two up to this
  int max_virtual_stages = 8;
  bool include_zero = true;      // try ZeRO stages 1-3 as well as 0
  bool only_fitting = true;      // ranked list holds only layouts that fit in memory
  int only_tp = 0, only_pp = 0;  // > 0: enumerate only this degree (the UI searches in slices, one per frame)
};

struct SearchCandidate {
  Layout layout;
  Estimate estimate;
};
struct Rejected {
  Layout layout;
  std::string reason;
};
struct SearchResult {
  std::vector<SearchCandidate> ranked;                                // fastest time-to-train first
  std::vector<Rejected> rejected;                                     // examples
  std::vector<std::pair<std::string, long long>> rejected_by_reason;  // counts
  long long evaluated = 0;                                            // layouts whose estimate was computed
  long long considered = 0;  // layouts enumerated (evaluated + rejected before estimating)
  double elapsed_s = 0;
};

// Every (tp, pp, dp, micro_batch, zero, recompute, schedule, virtual_stages) for the config's model on its
// cluster with its global batch (c.layout.global_batch), ranked; c.layout's other fields are ignored.
SearchResult search(const Config& c, const SearchOptions& o = {});
// Adds the results of another slice of the same search (ranked lists merged, counts summed).
void merge(SearchResult& into, SearchResult&& slice, const SearchOptions& o);
nlohmann::json to_json(const SearchResult& r, const Config& c);
// What `megacluster search` prints. Throws LoadError for invalid configs.
nlohmann::json search_json(const Catalog& cat, const nlohmann::json& config, const SearchOptions& o = {},
                           const std::string& file_for_errors = "<config>");

}  // namespace mc::perf
