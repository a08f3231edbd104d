// perf_request.cpp - the codec of an estimate's config: one table of keys per section (name, the member it
// fills, its type and range), read by parse_request and written by to_json.
#include "perf/perf_request.h"

#include <type_traits>
#include <variant>

namespace mc::perf {

namespace {

// One key of a section: the member it fills and what it accepts. Integers and numbers are checked against
// [lo, hi]; a string against `choices` when it has any (catalog ids are checked against the catalog by
// parse_config); a list of integers element by element, `not_list` saying what it is when it is not one.
template <class S>
struct Key {
  using Member = std::variant<std::optional<long long> S::*, std::optional<double> S::*, std::optional<bool> S::*,
                              std::optional<std::string> S::*, std::optional<std::vector<long long>> S::*>;
  Key(const char* name, Member member, double lo = 0, double hi = 0, std::vector<std::string> choices = {},
      const char* not_list = "")
      : name(name), member(member), lo(lo), hi(hi), choices(std::move(choices)), not_list(not_list) {}
  const char* name;
  Member member;
  double lo, hi;
  std::vector<std::string> choices;
  const char* not_list;
};

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

template <class S>
S read_section(const JsonCursor& at, const std::vector<Key<S>>& keys) {
  std::vector<std::string> names;
  for (const Key<S>& k : keys) names.push_back(k.name);
  at.only_keys(names);
  S out;
  for (const Key<S>& k : keys) {
    const std::optional<JsonCursor> v = at.get(k.name);
    if (!v) continue;
    std::visit(
        Overloaded{
            [&](std::optional<long long> S::*m) { out.*m = v->integer_in((long long)k.lo, (long long)k.hi); },
            [&](std::optional<double> S::*m) { out.*m = v->number_in(k.lo, k.hi); },
            [&](std::optional<bool> S::*m) { out.*m = v->boolean(); },
            [&](std::optional<std::string> S::*m) { out.*m = k.choices.empty() ? v->string() : v->one_of(k.choices); },
            [&](std::optional<std::vector<long long>> S::*m) {
              if (!v->is_array()) v->fail(k.not_list);
              std::vector<long long> list;
              for (const JsonCursor& n : v->elements()) list.push_back(n.integer_in((long long)k.lo, (long long)k.hi));
              out.*m = std::move(list);
            },
        },
        k.member);
  }
  return out;
}

template <class S>
nlohmann::json write_section(const S& s, const std::vector<Key<S>>& keys) {
  nlohmann::json j = nlohmann::json::object();
  for (const Key<S>& k : keys)
    std::visit(
        [&](auto S::*m) {
          if (s.*m) j[k.name] = *(s.*m);
        },
        k.member);
  return j;
}

// The ranges are the model's limits, not a study's: 2^16 heads or tp, 2^30 GPUs (parse_config checks the
// product of nodes and node size in 64-bit against the same 2^30).
const std::vector<Key<ModelRequest>>& model_keys() {
  using M = ModelRequest;
  static const std::vector<Key<M>> keys = {
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

const std::vector<Key<ClusterRequest>>& cluster_keys() {
  using C = ClusterRequest;
  static const std::vector<Key<C>> keys = {
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

const std::vector<Key<ParallelRequest>>& parallel_keys() {
  using P = ParallelRequest;
  static const std::vector<Key<P>> keys = {
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

const std::vector<Key<TrainingRequest>>& training_keys() {
  using T = TrainingRequest;
  static const std::vector<Key<T>> keys = {
      {"tokens", &T::tokens, 1, 1e18},
      {"precision", &T::precision, 0, 0, {"fp16", "bf16", "fp32", "tf32"}},
  };
  return keys;
}

template <class S>
std::vector<std::string> names_of(const std::vector<Key<S>>& keys) {
  std::vector<std::string> names;
  for (const Key<S>& k : keys) names.push_back(k.name);
  return names;
}

}  // namespace

const std::vector<std::string>& request_keys(const std::string& section) {
  static const std::vector<std::string> root = {"model", "cluster", "parallel", "training", "software"};
  static const std::vector<std::string> model = names_of(model_keys()), cluster = names_of(cluster_keys()),
                                        parallel = names_of(parallel_keys()), training = names_of(training_keys());
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
