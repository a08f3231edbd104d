// perf_request.h - an estimate's config as it is written (the `megacluster estimate` format): the presets it
// names and the keys that override them, nothing resolved. One codec to and from JSON holds each key's name,
// type and range; what needs the catalog (preset ids, the layout against the cluster, the stack) is
// perf::parse_config's, which reads a Request.
//
// A panel holds a Request, a scenario's `set` and a link's edits go through parse_request once, and
// to_json writes back exactly the keys that were set, so a preset stays a preset (to_json(parse_request(j))
// == j for every config parse_request accepts).
#pragma once

#include "core/json_doc.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace mc::perf {

// "model": a models.json preset and/or the shape (all of layers, hidden, heads, seq_len, vocab without one).
struct ModelRequest {
  std::optional<std::string> preset;  // models.json id
  std::optional<long long> layers, hidden, heads, seq_len, vocab, ffn_hidden, kv_heads;
  std::optional<bool> gated_mlp;
  std::optional<std::string> position_embedding;  // learned | rope
  std::optional<bool> tied_output, linear_biases;
  std::optional<std::string> norm;  // layernorm | rmsnorm
  bool operator==(const ModelRequest&) const = default;
};

// "cluster": a clusters.json preset and/or a GPU, server and fabrics of the catalog, with overrides.
struct ClusterRequest {
  std::optional<std::string> preset;  // clusters.json id
  std::optional<long long> gpus;
  std::optional<std::string> gpu;  // gpus.json id
  std::optional<long long> gpus_per_node, nodes;
  std::optional<double> node_network_Gbps, intra_node_GBps_per_gpu, oversubscription, price_per_gpu_hour_usd;
  std::optional<std::string> fabric, intra_fabric;  // fabrics.json ids
  std::optional<double> intra_latency_us, inter_latency_us;
  std::optional<long long> leaf_nodes;
  std::optional<double> matmul_peak_fraction, hbm_bytes, inter_busbw_GBps;
  std::optional<long long> inter_busbw_nics;
  std::optional<std::string> server;  // systems.json id
  std::optional<double> host_memory_bytes, host_memory_GBps, host_link_GBps;
  bool operator==(const ClusterRequest&) const = default;
};

// "parallel": the layout (degrees, batch, schedule, memory savers).
struct ParallelRequest {
  std::optional<long long> tp, cp, pp, dp, micro_batch, global_batch;
  std::optional<std::string> schedule;  // gpipe | 1f1b | interleaved
  std::optional<long long> virtual_stages, zero;
  std::optional<std::string> recompute;  // none | selective | full
  std::optional<bool> sequence_parallel, overlap_dp_comm, scatter_gather;
  std::optional<std::vector<long long>> layers_per_stage;
  std::optional<std::string> embedding_stages;  // extra | as-layers
  std::optional<bool> offload_optimizer, offload_params, offload_activations, partition_activations;
  bool operator==(const ParallelRequest&) const = default;
};

// "training": how many tokens, in which precision.
struct TrainingRequest {
  std::optional<double> tokens;
  std::optional<std::string> precision;  // fp16 | bf16 | fp32 | tf32
  bool operator==(const TrainingRequest&) const = default;
};

struct Request {
  ModelRequest model;
  ClusterRequest cluster;
  std::optional<ParallelRequest> parallel;  // none: a search config, or a model preset's layout of record
  std::optional<TrainingRequest> training;
  std::optional<std::string> software;  // software.json id; none: the preset's own stack
  bool operator==(const Request&) const = default;
};

// Reads a config's keys, each checked for its type and range and located on failure (LoadError: file, line,
// column, key, rule). Keys the format does not have are refused, with the nearest known one suggested.
Request parse_request(const JsonCursor& root);
Request parse_request(const nlohmann::json& config, const std::string& file_for_errors);
// The estimate's sections of a config that has others too (a simulate config); the caller checks its keys.
Request parse_request_sections(const JsonCursor& root);
// The keys that were set, and only those.
nlohmann::json to_json(const Request& r);

// The keys of each section, in the order the format documents them (what `only_keys` accepts).
const std::vector<std::string>& request_keys(const std::string& section);

}  // namespace mc::perf
