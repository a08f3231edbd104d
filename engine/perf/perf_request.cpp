// perf_request.cpp - the codec of an estimate's config: one table of keys per section (name, the member it
// fills, its type and range), read by parse_request and written by to_json.
#include "perf/perf_request.h"

#include "core/json_fields.h"

namespace mc::perf {

namespace {

// The ranges are the model's limits, not a study's: 2^16 heads or tp, 2^30 GPUs (parse_config checks the
// product of nodes and node size in 64-bit against the same 2^30).
const std::vector<Field<ModelRequest>>& model_keys() {
  using M = ModelRequest;
  static const std::vector<Field<M>> keys = {
      {"preset", &M::preset},
      {"layers", &M::layers, 1, 100000},
      {"hidden", &M::hidden, 1, 1 << 20},
      {"heads", &M::heads, 1, 1 << 16},
      {"seq_len", &M::seq_len, 1, 1 << 24},
      {"vocab", &M::vocab, 1, 1 << 26},
      {"ffn_hidden", &M::ffn_hidden, 1, 1 << 24},
      {"kv_heads", &M::kv_heads, 1, 1 << 16},
      {"gated_mlp", &M::gated_mlp},
      {"position_embedding", &M::position_embedding, 0, 0, {"learned", "rope"}},
      {"tied_output", &M::tied_output},
      {"linear_biases", &M::linear_biases},
      {"norm", &M::norm, 0, 0, {"layernorm", "rmsnorm"}},
  };
  return keys;
}

const std::vector<Field<ClusterRequest>>& cluster_keys() {
  using C = ClusterRequest;
  static const std::vector<Field<C>> keys = {
      {"preset", &C::preset},
      {"gpus", &C::gpus, 1, double(1LL << 30)},
      {"gpu", &C::gpu},
      {"gpus_per_node", &C::gpus_per_node, 1, 1024},
      {"nodes", &C::nodes, 1, 1 << 22},
      {"node_network_Gbps", &C::node_network_Gbps, 0.001, 1e6},
      {"intra_node_GBps_per_gpu", &C::intra_node_GBps_per_gpu, 0.001, 1e6},
      {"oversubscription", &C::oversubscription, 1, 64},
      {"price_per_gpu_hour_usd", &C::price_per_gpu_hour_usd, 0, 1e4},
      {"fabric", &C::fabric},
      {"intra_fabric", &C::intra_fabric},
      {"intra_latency_us", &C::intra_latency_us, 0, 1e5},
      {"inter_latency_us", &C::inter_latency_us, 0, 1e5},
      {"leaf_nodes", &C::leaf_nodes, 1, 1 << 20},
      {"matmul_peak_fraction", &C::matmul_peak_fraction, 0.01, 1},
      {"hbm_bytes", &C::hbm_bytes, 1, 1e15},
      {"inter_busbw_GBps", &C::inter_busbw_GBps, 0.001, 1e5},
      {"inter_busbw_nics", &C::inter_busbw_nics, 1, 64},
      {"server", &C::server},
      {"host_memory_bytes", &C::host_memory_bytes, 1, 1e18},
      {"host_memory_GBps", &C::host_memory_GBps, 0.001, 1e6},
      {"host_link_GBps", &C::host_link_GBps, 0.001, 1e6},
  };
  return keys;
}

const std::vector<Field<ParallelRequest>>& parallel_keys() {
  using P = ParallelRequest;
  static const std::vector<Field<P>> keys = {
      {"tp", &P::tp, 1, 1 << 16},
      {"cp", &P::cp, 1, 1 << 16},
      {"pp", &P::pp, 1, 1 << 16},
      {"dp", &P::dp, 1, 1 << 24},
      {"micro_batch", &P::micro_batch, 1, 1 << 20},
      {"global_batch", &P::global_batch, 1, 1 << 26},
      {"schedule", &P::schedule, 0, 0, {"gpipe", "1f1b", "interleaved"}},
      {"virtual_stages", &P::virtual_stages, 1, 1024},
      {"zero", &P::zero, 0, 3},
      {"recompute", &P::recompute, 0, 0, {"none", "selective", "full"}},
      {"sequence_parallel", &P::sequence_parallel},
      {"overlap_dp_comm", &P::overlap_dp_comm},
      {"scatter_gather", &P::scatter_gather},
      {"layers_per_stage",
       &P::layers_per_stage,
       0,
       100000,
       {},
       "layers_per_stage is a list of layer counts, one per pipeline stage"},
      {"embedding_stages", &P::embedding_stages, 0, 0, {"extra", "as-layers"}},
      {"offload_optimizer", &P::offload_optimizer},
      {"offload_params", &P::offload_params},
      {"offload_activations", &P::offload_activations},
      {"partition_activations", &P::partition_activations},
  };
  return keys;
}

const std::vector<Field<TrainingRequest>>& training_keys() {
  using T = TrainingRequest;
  static const std::vector<Field<T>> keys = {
      {"tokens", &T::tokens, 1, 1e18},
      {"precision", &T::precision, 0, 0, {"fp16", "bf16", "fp32", "tf32"}},
  };
  return keys;
}

}  // namespace

const std::vector<std::string>& request_keys(const std::string& section) {
  static const std::vector<std::string> root = {"model", "cluster", "parallel", "training", "software"};
  static const std::vector<std::string> model = field_names(model_keys()), cluster = field_names(cluster_keys()),
                                        parallel = field_names(parallel_keys()),
                                        training = field_names(training_keys());
  static const std::vector<std::string> none;
  return section.empty()         ? root
         : section == "model"    ? model
         : section == "cluster"  ? cluster
         : section == "parallel" ? parallel
         : section == "training" ? training
                                 : none;
}

Request parse_request(const JsonCursor& root) {
  if (!root.is_object()) root.fail("a config is a JSON object with \"model\", \"cluster\", \"parallel\", \"training\"");
  root.only_keys(request_keys(""));
  return parse_request_sections(root);
}

Request parse_request_sections(const JsonCursor& root) {
  Request r;
  r.model = read_section(root["model"], model_keys());
  r.cluster = read_section(root["cluster"], cluster_keys());
  if (auto v = root.get("parallel")) r.parallel = read_section(*v, parallel_keys());
  if (auto v = root.get("training")) r.training = read_section(*v, training_keys());
  if (auto v = root.get("software")) r.software = v->string();
  return r;
}

Request parse_request(const nlohmann::json& config, const std::string& file_for_errors) {
  const JsonDoc doc = JsonDoc::parse(config.dump(2), file_for_errors);
  return parse_request(doc.root());
}

nlohmann::json to_json(const Request& r) {
  nlohmann::json j = {{"model", write_section(r.model, model_keys())},
                      {"cluster", write_section(r.cluster, cluster_keys())}};
  if (r.parallel) j["parallel"] = write_section(*r.parallel, parallel_keys());
  if (r.training) j["training"] = write_section(*r.training, training_keys());
  if (r.software) j["software"] = *r.software;
  return j;
}

}  // namespace mc::perf
