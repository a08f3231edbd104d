// perf_config.cpp - reading a run config (model, cluster, parallel layout, training, software) with
// catalog presets and per-key overrides; checking it; printing an estimate as JSON.
//
// Sections:
//   catalog records      find_record, apply_gpu, apply_fabric, parse_cluster (64-bit GPU counts)
//   layout of record     record_keys, layout_origin (a preset's published layout, the base of "parallel")
//   parse_config         model, cluster, software (software.json), training, parallel layout
//   layout_problems      what makes a layout meaningless, each message led by its key
//   to_json              what `megacluster estimate` prints
//   software             software_from_catalog, default_software (the preset's own stack)
#include "perf/perf.h"

#include "catalog/accelerator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace mc::perf {

namespace {

const Record& find_record(const Catalog& cat, const std::string& table, const JsonCursor& at) {
  const Table* t = cat.table(table);
  if (!t) at.fail("the catalog has no \"" + table + "\" table (assets/catalog/index.json)");
  const std::string id = at.string();
  if (const Record* r = t->find(id)) return *r;
  std::string ids;
  for (const auto& r : t->records) ids += (ids.empty() ? "" : ", ") + r.id;
  at.fail("unknown " + table + " id \"" + id + "\"; known: " + ids);
}

// Fills the GPU values of `cs` from its catalog record; its link to the host from the PCIe fabric the record
// names (gpus.json host_link): one direction of the link at the fabric's bus efficiency.
void apply_gpu(ClusterSpec& cs, const Record& g, const Catalog& cat) {
  cs.gpu = g.id;
  cs.peak_fp16_flops = g.get_or("peak_fp16_tensor_flops", 0);
  cs.peak_bf16_flops = g.get_or("peak_bf16_tensor_flops", 0);
  cs.peak_tf32_flops = g.get_or("peak_tf32_tensor_flops", 0);
  cs.peak_fp32_flops = g.get_or("peak_fp32_flops", 0);
  cs.hbm_bytes = g.get_or("hbm_bytes", cs.hbm_bytes);
  cs.hbm_bandwidth_GBps = g.get_or("hbm_bandwidth_GBps", cs.hbm_bandwidth_GBps);
  cs.sm_count = int(g.get_or("sm_count", 0));
  cs.matmul_peak_fraction = g.get_or("matmul_peak_fraction", cs.matmul_peak_fraction);
  cs.intra_node_GBps_per_gpu = g.get_or("nvlink_bandwidth_GBps", cs.intra_node_GBps_per_gpu);
  cs.host_link_GBps = 0;
  if (const Table* f = cat.table("fabrics"))
    if (const Record* r = f->find(g.text_or("host_link", "")))
      cs.host_link_GBps = r->get_or("link_GBps", 0) / 2 * r->get_or("bus_efficiency", 1);
}

// The node values of a server (systems.json): GPUs, network, NVLink, and the host memory offloading uses
// (and the host link, where the server's CPUs cap the GPU's own: a PCIe 3.0 CPU behind a Gen4 GPU).
void apply_server(ClusterSpec& cs, const Record& r, const Catalog& cat) {
  if (const Table* f = cat.table("fabrics"))
    if (const Record* l = f->find(r.text_or("host_link", "")))
      cs.host_link_GBps = l->get_or("link_GBps", 0) / 2 * l->get_or("bus_efficiency", 1);
  cs.gpus_per_node = int(r.get_or("gpus_per_node", cs.gpus_per_node));
  cs.node_network_Gbps = r.get_or("network_Gbps", cs.node_network_Gbps);
  cs.intra_node_GBps_per_gpu = r.get_or("intra_node_GBps_per_gpu", cs.intra_node_GBps_per_gpu);
  cs.host_memory_bytes = r.get_or("system_memory_bytes", 0);
  cs.host_memory_GBps = r.get_or("host_memory_GBps", 0);
}

void apply_fabric(ClusterSpec& cs, const Record& f) {
  const bool intra = f.text_or("kind", "") == "intra-node";
  const double lat = f.get_or("latency_us", -1), eff = f.get_or("bus_efficiency", -1);
  if (intra) {
    if (lat > 0) cs.intra_latency_s = lat * 1e-6;
    if (eff > 0) cs.intra_bus_efficiency = eff;
  } else {
    if (lat > 0) cs.inter_latency_s = lat * 1e-6;
    if (eff > 0) cs.inter_bus_efficiency = eff;
    cs.inter_link_Gbps = f.get_or("link_Gbps", cs.inter_link_Gbps);
  }
}

// `req` is the cluster as written (its keys' types and ranges already checked); `j` locates what is refused.
ClusterSpec parse_cluster(const Catalog& cat, const ClusterRequest& req, const JsonCursor& j, long long& gpus_out) {
  ClusterSpec cs;
  long long total = 0;
  if (req.preset) {
    const Record& cl = find_record(cat, "clusters", j["preset"]);
    cs.id = cl.id;
    if (const Table* g = cat.table("gpus"))
      if (const Record* r = g->find(cl.text_or("gpu", ""))) apply_gpu(cs, *r, cat);
    if (const Table* s = cat.table("systems"))
      if (const Record* r = s->find(cl.text_or("server", ""))) apply_server(cs, *r, cat);
    cs.gpus_per_node = int(cl.get_or("gpus_per_node", cs.gpus_per_node));
    cs.node_network_Gbps = cl.get_or("network_per_server_Gbps", cs.node_network_Gbps);
    cs.oversubscription = cl.get_or("oversubscription", cs.oversubscription);
    cs.leaf_nodes = int(cl.get_or("leaf_nodes", cs.leaf_nodes));  // a full-bisection pod (Llama 3's 384 servers)
    cs.price_per_gpu_hour_usd = cl.get_or("usd_per_gpu_hour", 0);
    if (const Table* f = cat.table("fabrics")) {
      if (const Record* r = f->find(cl.text_or("fabric", ""))) apply_fabric(cs, *r);
      if (const Record* r = f->find(cl.text_or("intra_fabric", ""))) apply_fabric(cs, *r);
    }
    cs.inter_busbw_GBps = cl.get_or("inter_busbw_GBps", 0);
    cs.inter_busbw_nics = int(cl.get_or("inter_busbw_nics", 0));
    total = (long long)cl.get_or("gpus", 0);
  } else if (!req.gpu) {
    j.fail(
        "a cluster needs \"preset\" (a clusters.json id) or \"gpu\" (a gpus.json id) with gpus_per_node, nodes "
        "and node_network_Gbps");
  }
  if (req.gpu) apply_gpu(cs, find_record(cat, "gpus", j["gpu"]), cat);
  if (req.server) apply_server(cs, find_record(cat, "systems", j["server"]), cat);
  if (req.host_memory_bytes) cs.host_memory_bytes = *req.host_memory_bytes;
  if (req.host_memory_GBps) cs.host_memory_GBps = *req.host_memory_GBps;
  if (req.host_link_GBps) cs.host_link_GBps = *req.host_link_GBps;
  if (req.fabric) apply_fabric(cs, find_record(cat, "fabrics", j["fabric"]));
  if (req.intra_fabric) apply_fabric(cs, find_record(cat, "fabrics", j["intra_fabric"]));
  if (req.inter_busbw_GBps) cs.inter_busbw_GBps = *req.inter_busbw_GBps;
  if (req.inter_busbw_nics) cs.inter_busbw_nics = int(*req.inter_busbw_nics);
  if (req.gpus_per_node) cs.gpus_per_node = int(*req.gpus_per_node);
  if (req.node_network_Gbps) cs.node_network_Gbps = *req.node_network_Gbps;
  if (req.intra_node_GBps_per_gpu) cs.intra_node_GBps_per_gpu = *req.intra_node_GBps_per_gpu;
  if (req.oversubscription) cs.oversubscription = *req.oversubscription;
  if (req.price_per_gpu_hour_usd) cs.price_per_gpu_hour_usd = *req.price_per_gpu_hour_usd;
  if (req.intra_latency_us) cs.intra_latency_s = *req.intra_latency_us * 1e-6;
  if (req.inter_latency_us) cs.inter_latency_s = *req.inter_latency_us * 1e-6;
  if (req.leaf_nodes) cs.leaf_nodes = int(*req.leaf_nodes);
  if (req.matmul_peak_fraction) cs.matmul_peak_fraction = *req.matmul_peak_fraction;
  if (req.hbm_bytes) cs.hbm_bytes = *req.hbm_bytes;
  if (req.nodes) total = *req.nodes * cs.gpus_per_node;
  if (req.gpus) {
    total = *req.gpus;
    // Fewer GPUs than one node holds run on part of one node, its NICs unused: Shoeybi et al. 2019 measured
    // their single-GPU baseline and their 2-, 4- and 8-way tensor-parallel runs on one DGX-2H (Fig. 1).
    cs.node_gpus = cs.gpus_per_node;
    if (total < cs.gpus_per_node)
      cs.gpus_per_node = int(total);
    else if (total % cs.gpus_per_node != 0)
      j["gpus"].fail("gpus (" + std::to_string(total) + ") must be fewer than one node's " +
                     std::to_string(cs.gpus_per_node) + " or a multiple of it: the model places whole nodes");
  }
  if (total <= 0) total = cs.gpus_per_node;  // one node when nothing says how many
  if (total % cs.gpus_per_node != 0) total = (total / cs.gpus_per_node) * cs.gpus_per_node;
  // The model's limit: 2^30 GPUs (nodes x gpus_per_node is checked here, in 64-bit, not left to wrap).
  if (total > (1LL << 30))
    (req.nodes  ? j["nodes"]
     : req.gpus ? j["gpus"]
                : j)
        .fail("the cluster has " + std::to_string(total) +
              " GPUs; the model handles at most 1073741824 (2^30): "
              "reduce nodes or gpus_per_node");
  cs.nodes = int(total / cs.gpus_per_node);
  if (cs.nodes > 1 && !req.preset && !req.node_network_Gbps)
    j.fail("a custom cluster of several nodes needs \"node_network_Gbps\" (all NICs of one node, gigabits/s)");
  gpus_out = total;
  cs.accelerator = accelerator_words(&cat, cs.gpu).one;  // "GPU", or "TPU v3 chip": what messages call it
  return cs;
}

// ---- a preset's layout of record ----

// The layout keys a models.json preset states (layout_<key>), in the order `estimate` lists them.
constexpr const char* kRecordKeys[] = {"tp",
                                       "pp",
                                       "micro_batch",
                                       "schedule",
                                       "virtual_stages",
                                       "embedding_stages",
                                       "recompute",
                                       "zero",
                                       "sequence_parallel",
                                       "partition_activations"};

// Whether `key` stands in `sentence` as a word (not inside "output" or "applies").
bool names_key(const std::string& sentence, const std::string& key) {
  auto word = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (size_t at = sentence.find(key); at != std::string::npos; at = sentence.find(key, at + 1))
    if ((at == 0 || !word(sentence[at - 1])) &&
        (at + key.size() == sentence.size() || !word(sentence[at + key.size()])))
      return true;
  return false;
}

// The record's keys the config's "parallel" left to it.
std::vector<std::string> record_keys(const Record& preset, const std::optional<ParallelRequest>& rp) {
  Request written_only;
  written_only.parallel = rp;
  const json written = to_json(written_only);
  const json* par = written.contains("parallel") ? &written["parallel"] : nullptr;
  std::vector<std::string> out;
  for (const char* k : kRecordKeys) {
    const std::string field = std::string("layout_") + k;
    if ((preset.find(field) || preset.text_source(field)) && !(par && par->contains(k))) out.push_back(k);
  }
  return out;
}

// One line for the estimate's notes: which keys the record gave (with each one's source and confidence),
// which the config set, and whether dp fills the cluster.
std::string layout_origin(const Record& preset, const Layout& L, const std::optional<ParallelRequest>& rp,
                          const std::vector<std::string>& from_record, bool dp_given) {
  auto value = [&](const std::string& k) -> std::string {
    if (k == "tp") return std::to_string(L.tp);
    if (k == "pp") return std::to_string(L.pp);
    if (k == "micro_batch") return std::to_string(L.micro_batch);
    if (k == "schedule") return schedule_name(L.schedule);
    if (k == "virtual_stages") return std::to_string(L.virtual_stages);
    if (k == "embedding_stages") return L.embedding_stages == EmbeddingStages::as_layers ? "as-layers" : "extra";
    if (k == "recompute") return to_string(L.recompute);
    if (k == "zero") return std::to_string(L.zero);
    if (k == "sequence_parallel") return L.sequence_parallel ? "on" : "off";
    return L.partition_activations ? "on" : "off";
  };
  std::string out = "layout of record of models.json \"" + preset.id + "\" (" + preset.name + "):";
  std::string group_source;
  for (const std::string& k : from_record) {
    const std::string field = "layout_" + k;
    const Sourced* src = preset.find(field) ? preset.find(field) : preset.text_source(field);
    const std::string source = src ? src->source + ", " + to_string(src->confidence) : "no source";
    if (!group_source.empty() && source != group_source) out += " (" + group_source + ");";
    out += (group_source.empty() || source != group_source ? " " : ", ") + k + " " + value(k);
    group_source = source;
  }
  if (!group_source.empty()) out += " (" + group_source + ")";
  if (from_record.empty()) out += " none of it used";
  Request written_only;
  written_only.parallel = rp;
  const json written = to_json(written_only);
  if (written.contains("parallel") && !written["parallel"].empty()) {
    std::string keys;
    for (const auto& [k, v] : written["parallel"].items()) keys += (keys.empty() ? "" : ", ") + k;
    out += "; the config set " + keys;
  }
  if (!dp_given) out += "; dp " + std::to_string(L.dp) + " fills the cluster";
  return out;
}

}  // namespace

Config parse_config(const Catalog& cat, const JsonDoc& doc, bool require_parallel, bool check_stack) {
  // Every key's type and range first (perf_request.cpp); what follows reads the request and uses the
  // document only to locate what it refuses.
  const JsonCursor root = doc.root();
  const Request req = parse_request(root);
  Config c;
  // ---- model ----
  const ModelRequest& rm = req.model;
  JsonCursor jm = root["model"];
  const Record* preset = nullptr;
  if (rm.preset) {
    preset = &find_record(cat, "models", jm["preset"]);
    c.model.id = preset->id;
    c.model.layers = int(preset->get("layers"));
    c.model.hidden = int(preset->get("hidden"));
    c.model.heads = int(preset->get("heads"));
    c.model.seq_len = int(preset->get("seq_len"));
    c.model.vocab = int(preset->get("vocab"));
    c.model.ffn_hidden = int(preset->get_or("ffn_hidden", 0));
    c.model.kv_heads = int(preset->get_or("kv_heads", 0));    // grouped-query attention (Llama 3)
    c.model.gated_mlp = preset->get_or("gated_mlp", 0) != 0;  // SwiGLU
    // The conventions that set the parameter count; absent: GPT-2/3's (learned positions, tied output,
    // biases, LayerNorm).
    c.model.learned_positions = preset->text_or("position_embedding", "learned") == "learned";
    c.model.tied_output = preset->get_or("tied_output", 1) != 0;
    c.model.linear_biases = preset->get_or("linear_biases", 1) != 0;
    c.model.rms_norm = preset->text_or("norm", "layernorm") == "rmsnorm";
  } else {
    for (const char* k : {"layers", "hidden", "heads", "seq_len", "vocab"})
      if (!jm.has(k))  // a key the request has only when the document does
        jm.fail(std::string("missing \"") + k +
                "\": give a \"preset\" (models.json id) or all of "
                "layers, hidden, heads, seq_len, vocab");
  }
  if (rm.layers) c.model.layers = int(*rm.layers);
  if (rm.hidden) c.model.hidden = int(*rm.hidden);
  if (rm.heads) c.model.heads = int(*rm.heads);
  if (rm.seq_len) c.model.seq_len = int(*rm.seq_len);
  if (rm.vocab) c.model.vocab = int(*rm.vocab);
  if (rm.ffn_hidden) c.model.ffn_hidden = int(*rm.ffn_hidden);
  if (rm.kv_heads) c.model.kv_heads = int(*rm.kv_heads);
  if (rm.gated_mlp) c.model.gated_mlp = *rm.gated_mlp;
  if (rm.position_embedding) c.model.learned_positions = *rm.position_embedding == "learned";
  if (rm.tied_output) c.model.tied_output = *rm.tied_output;
  if (rm.linear_biases) c.model.linear_biases = *rm.linear_biases;
  if (rm.norm) c.model.rms_norm = *rm.norm == "rmsnorm";
  if (c.model.hidden % c.model.heads != 0)
    jm.fail("hidden (" + std::to_string(c.model.hidden) + ") must be divisible by heads (" +
            std::to_string(c.model.heads) + ")");
  if (c.model.heads % c.model.kv() != 0) jm["kv_heads"].fail("kv_heads must divide heads");

  // ---- cluster ----
  long long gpus = 0;
  c.cluster = parse_cluster(cat, req.cluster, root["cluster"], gpus);

  // ---- software: the stack that runs it (software.json), by default the one the preset ran with ----
  {
    std::string sw_id, chosen_by = "config";
    if (req.software) {
      sw_id = *req.software;
      find_record(cat, "software", root["software"]);  // unknown ids: located error listing the known ones
    } else {
      sw_id = default_software(cat, c.model.id, req.cluster.preset.value_or(""), &chosen_by);
    }
    if (!sw_id.empty()) c.software = software_from_catalog(cat, sw_id, c.cluster.gpu);
    c.software.chosen_by = chosen_by;
    const size_t slash = chosen_by.find('/');
    if (slash != std::string::npos)
      if (const Table* t = cat.table(chosen_by.substr(0, slash)))
        if (const Record* r = t->find(chosen_by.substr(slash + 1)))
          if (const Sourced* src = r->text_source("software"))
            c.software.chosen_source = src->source + ", " + to_string(src->confidence);
  }

  // ---- training ----
  if (preset && preset->find("tokens")) {
    c.training.tokens = preset->get_or("tokens", c.training.tokens);
    c.training.tokens_from = Training::TokensFrom::model;
  }
  if (c.cluster.peak_fp16_flops <= 0 && c.cluster.peak_bf16_flops > 0) c.training.precision = Precision::bf16;
  if (req.training) {
    if (req.training->tokens) {
      c.training.tokens = *req.training->tokens;
      c.training.tokens_from = Training::TokensFrom::config;
    }
    if (const std::optional<std::string>& p = req.training->precision) {
      c.training.precision = p == "fp16"   ? Precision::fp16
                             : p == "bf16" ? Precision::bf16
                             : p == "tf32" ? Precision::tf32
                                           : Precision::fp32;
      if (peak_flops(c.cluster, c.training.precision) <= 0)
        root["training"]["precision"].fail("GPU \"" + c.cluster.gpu + "\" has no " + *p +
                                           " peak in gpus.json; pick another precision");
    }
  }

  // ---- parallel layout ----
  Layout& L = c.layout;
  if (preset) L.global_batch = int(preset->get_or("global_batch", L.global_batch));
  const std::optional<JsonCursor> jp = root.get("parallel");
  const std::optional<ParallelRequest>& rp = req.parallel;
  // A model preset that names a published run carries its layout of record (models.json layout_*, each
  // sourced): the base a "parallel" overrides key by key, as the model and cluster presets are (a config that
  // gives only the degrees a paper states keeps its schedule, ZeRO stage and memory savers); without
  // "parallel" it runs as published, data parallelism filling the cluster.
  const bool of_record = require_parallel && preset && preset->find("layout_tp");
  if (!jp && require_parallel && !of_record)
    root.fail("missing \"parallel\": {\"tp\", \"pp\", \"dp\", \"micro_batch\", ...}");
  bool sp_of_record = false;
  if (of_record) {
    L.tp = int(preset->get("layout_tp"));
    L.pp = int(preset->get_or("layout_pp", 1));
    L.micro_batch = int(preset->get_or("layout_micro_batch", 1));
    const std::string sch = preset->text_or("layout_schedule", "1f1b");
    L.schedule = sch == "gpipe"         ? PipeSchedule::gpipe
                 : sch == "interleaved" ? PipeSchedule::interleaved
                                        : PipeSchedule::one_f_one_b;
    L.virtual_stages = int(preset->get_or("layout_virtual_stages", 1));
    if (preset->text_or("layout_embedding_stages", "extra") == "as-layers")
      L.embedding_stages = EmbeddingStages::as_layers;
    const std::string rc = preset->text_or("layout_recompute", "none");  // activation checkpointing of record
    L.recompute = rc == "full" ? Recompute::full : rc == "selective" ? Recompute::selective : Recompute::none;
    L.zero = int(preset->get_or("layout_zero", 0));
    sp_of_record = preset->get_or("layout_sequence_parallel", 0) != 0;
    L.partition_activations = preset->get_or("layout_partition_activations", 0) != 0;
  }
  bool dp_given = false;
  if (rp) {
    if (rp->tp) L.tp = int(*rp->tp);
    if (rp->pp) L.pp = int(*rp->pp);
    if (rp->cp) L.cp = int(*rp->cp);
    if (rp->dp) L.dp = int(*rp->dp), dp_given = true;
    if (rp->micro_batch) L.micro_batch = int(*rp->micro_batch);
    if (rp->global_batch) L.global_batch = int(*rp->global_batch);
    if (rp->schedule) L.schedule = schedule_from_string(*rp->schedule);
    if (rp->virtual_stages) L.virtual_stages = int(*rp->virtual_stages);
    if (rp->zero) L.zero = int(*rp->zero);
    if (const std::optional<std::string>& s = rp->recompute)
      L.recompute = *s == "none" ? Recompute::none : *s == "selective" ? Recompute::selective : Recompute::full;
    if (rp->sequence_parallel) L.sequence_parallel = *rp->sequence_parallel;
    if (rp->overlap_dp_comm) L.overlap_dp_comm = *rp->overlap_dp_comm;
    if (rp->scatter_gather) L.scatter_gather = *rp->scatter_gather;
    if (rp->offload_optimizer) L.offload_optimizer = *rp->offload_optimizer;
    if (rp->offload_params) L.offload_params = *rp->offload_params;
    if (rp->offload_activations) L.offload_activations = *rp->offload_activations;
    if (rp->partition_activations) L.partition_activations = *rp->partition_activations;
    if (rp->embedding_stages)
      L.embedding_stages = *rp->embedding_stages == "extra" ? EmbeddingStages::extra : EmbeddingStages::as_layers;
    if (rp->layers_per_stage) {
      const JsonCursor v = (*jp)["layers_per_stage"];
      long long sum = 0;
      for (const long long n : *rp->layers_per_stage) {
        L.layers_per_stage.push_back(int(n));
        sum += n;
      }
      if (sum != c.model.layers)
        v.fail("layers_per_stage adds up to " + std::to_string(sum) + " layers; the model has " +
               std::to_string(c.model.layers) + ": make the counts sum to the layers");
      if (!rp->pp) L.pp = int(L.layers_per_stage.size());
      if (int(L.layers_per_stage.size()) != L.pp)
        v.fail("layers_per_stage has " + std::to_string(L.layers_per_stage.size()) + " entries but pp is " +
               std::to_string(L.pp) + ": give one count per pipeline stage");
    }
  }
  // Sequence parallelism splits the tensor-parallel activations: of record only while tensor parallelism is.
  if (!(rp && rp->sequence_parallel)) L.sequence_parallel = sp_of_record && L.tp > 1;
  if (!dp_given) L.dp = int(std::clamp<long long>(gpus / ((long long)L.tp * L.cp * L.pp), 1, 1 << 24));
  if ((!rp && !of_record) || !require_parallel) return c;  // a search config: the layout is the search's to choose
  const std::vector<std::string> from_record = of_record ? record_keys(*preset, rp) : std::vector<std::string>{};
  if (of_record) c.layout_from = layout_origin(*preset, L, rp, from_record, dp_given);
  // Where a problem is reported: the key, the "parallel" object, or (a layout of record) the config. A key
  // the config did not write says it came from the record, and how to change it.
  auto at = [&](const char* key) { return jp ? (jp->has(key) ? (*jp)[key] : *jp) : root; };
  auto of_record_note = [&](const std::string& sentence) {
    std::string keys;
    int n = 0;
    for (const std::string& k : from_record)
      if (names_key(sentence, k)) keys += (n++ ? " and " : "") + k;
    if (n == 0) return std::string();
    return " (" + keys + (n > 1 ? " come" : " comes") + " from the layout of record of models.json \"" + preset->id +
           "\"; set " + (n > 1 ? "them" : "it") + " in \"parallel\" to change " + (n > 1 ? "them" : "it") + ")";
  };
  if (L.ranks() != gpus) {
    const std::string cp = L.cp > 1 ? "*cp" : "", cpv = L.cp > 1 ? "*" + std::to_string(L.cp) : "";
    at("dp").fail("tp" + cp + "*pp*dp = " + std::to_string(L.tp) + cpv + "*" + std::to_string(L.pp) + "*" +
                  std::to_string(L.dp) + " = " + std::to_string(L.ranks()) + " must equal the cluster's GPUs (" +
                  std::to_string(gpus) + "); change the degrees or cluster.gpus");
  }
  for (const std::string& p : layout_problems(c)) {
    const char* key = p.rfind("global_batch", 0) == 0       ? "global_batch"
                      : p.rfind("pp", 0) == 0               ? "pp"
                      : p.rfind("tp", 0) == 0               ? "tp"
                      : p.rfind("cp", 0) == 0               ? "cp"
                      : p.rfind("virtual_stages", 0) == 0   ? "virtual_stages"
                      : p.rfind("layers_per_stage", 0) == 0 ? "layers_per_stage"
                                                            : "micro_batch";
    for (const char* k : {"offload_optimizer", "offload_params", "offload_activations", "partition_activations"})
      if (p.rfind(k, 0) == 0) key = k;
    // The key the problem names may be one the record set while the config changed another (virtual_stages
    // of record against the config's pp): the record's keys the sentence names are said to be the record's.
    at(key).fail(p + of_record_note(p));
  }
  // A stack the config names cannot be asked for a feature it lacks: refused, at the key. When the stack is
  // only the preset's default (the config names none), the layout is the user's and the stack our guess:
  // estimate() then runs it as a what-if and its notes say which feature that stack lacks.
  if (check_stack && req.software)
    if (const std::vector<std::string> problems = stack_problems(c); !problems.empty()) {
      // Which catalog stacks would run the layout as it is, so the fix names one.
      std::string able;
      if (const Table* t = cat.table("software"))
        for (const Record& r : t->records)
          if (stack_refusal(software_from_catalog(cat, r.id, c.cluster.gpu), c.layout).empty())
            able += (able.empty() ? "" : ", ") + r.id;
      const std::string& p = problems.front();
      at(p.substr(0, p.find(':')).c_str())
          .fail(p + (able.empty() ? std::string() : " (stacks that run this layout: " + able + ")"));
    }
  return c;
}

Config parse_config(const Catalog& cat, const json& config, const std::string& file, bool require_parallel,
                    bool check_stack) {
  JsonDoc doc = JsonDoc::parse(config.dump(2), file);
  return parse_config(cat, doc, require_parallel, check_stack);
}

Config parse_config(const Catalog& cat, const Request& config, const std::string& file, bool require_parallel,
                    bool check_stack) {
  return parse_config(cat, to_json(config), file, require_parallel, check_stack);
}

// ---- what the stack can run ----------------------------------------------------------------------------

std::string stack_refusal(const Software& sw, const Layout& L) {
  const std::string who = sw.name.empty() ? (sw.id.empty() ? std::string("this stack") : sw.id) : sw.name;
  const std::string fix =
      " (software.json \"" + sw.id + "\"); pick another stack with \"software\" or change the layout";
  if (L.tp > 1 && !sw.tensor_parallel)
    return "tp: " + who + " has no tensor parallelism (Shoeybi et al. 2019): it shards data-parallel replicas" + fix;
  if (L.pp > 1 && !sw.pipeline_parallel) return "pp: " + who + " has no pipeline parallelism" + fix;
  if (L.schedule == PipeSchedule::interleaved && L.pp > 1 && !sw.interleaved_schedule)
    return "schedule: " + who + " has no interleaved pipeline schedule (Narayanan et al. 2021 introduced it)" + fix;
  if (L.recompute == Recompute::selective && !sw.selective_recompute)
    return "recompute: " + who +
           " has no selective activation recomputation (Korthikanti et al. 2022), only "
           "full recomputation or none" +
           fix;
  if (L.sequence_parallel && L.tp > 1 && !sw.sequence_parallel)
    return "sequence_parallel: " + who + " has no sequence parallelism (Korthikanti et al. 2022)" + fix;
  if (L.cp > 1 && !sw.context_parallel)
    return "cp: " + who + " has no context parallelism (sequences split over GPUs along their length, Llama 3)" + fix;
  const int zmax = L.pp > 1 ? std::min(sw.max_zero_stage, sw.max_zero_stage_pipeline) : sw.max_zero_stage;
  if (L.zero > zmax) {
    if (sw.max_zero_stage == 0)
      return "zero: " + who + " has no ZeRO (DeepSpeed's optimizer-state sharding, Rajbhandari et al. 2020)" + fix;
    return "zero: " + who + " runs ZeRO up to stage " + std::to_string(zmax) +
           (L.pp > 1 && zmax < sw.max_zero_stage ? " together with pipeline parallelism" : "") + ", not stage " +
           std::to_string(L.zero) + fix;
  }
  return "";
}

std::vector<std::string> stack_problems(const Config& c) {
  // One sentence per feature: check each on a layout with the others switched off.
  std::vector<std::string> out;
  const Layout& L = c.layout;
  // The other features' checks see tp and pp only where the stack has them, so each problem is said once.
  auto only = [&](auto set) {
    Layout x;
    x.tp = c.software.tensor_parallel ? L.tp : 1, x.pp = c.software.pipeline_parallel ? L.pp : 1, x.dp = L.dp;
    set(x);
    const std::string why = stack_refusal(c.software, x);
    if (!why.empty()) out.push_back(why);
  };
  only([&](Layout& x) { x.tp = L.tp; });
  only([&](Layout& x) { x.pp = L.pp; });
  only([&](Layout& x) { x.schedule = L.schedule; });
  only([&](Layout& x) { x.recompute = L.recompute; });
  only([&](Layout& x) { x.sequence_parallel = L.sequence_parallel; });
  only([&](Layout& x) { x.cp = L.cp; });
  only([&](Layout& x) { x.zero = L.zero; });
  return out;
}

// Each message starts with the key it is about (parse_config uses it to point at that key).
std::vector<std::string> layout_problems(const Config& c) {
  std::vector<std::string> out;
  const Layout& L = c.layout;
  const ModelSpec& m = c.model;
  auto s = [](long long x) { return std::to_string(x); };
  if (L.ranks() != (long long)c.cluster.gpus())
    out.push_back(std::string(L.cp > 1 ? "tp*cp*pp*dp (" : "tp*pp*dp (") + s(L.ranks()) +
                  ") must equal the GPU count (" + s(c.cluster.gpus()) + ")");
  // Context parallelism cuts each sequence into 2 cp equal chunks (Llama 3 Sec. 3.3.2; TransformerEngine's
  // all-gather CP asserts the per-GPU length is even).
  if (L.cp > 1 && m.seq_len % (2 * L.cp) != 0)
    out.push_back("cp " + s(L.cp) + ": context parallelism cuts each sequence into 2*cp = " + s(2LL * L.cp) +
                  " equal chunks, which must divide seq_len " + s(m.seq_len) + "; use a cp that does");
  if (L.global_batch % ((long long)L.micro_batch * L.dp) != 0)
    out.push_back("global_batch " + s(L.global_batch) +
                  " is not divisible by micro_batch*dp = " + s((long long)L.micro_batch * L.dp));
  if (m.heads % L.tp != 0) out.push_back("tp " + s(L.tp) + " must divide the " + s(m.heads) + " attention heads");
  // Grouped-query attention splits the key/value heads over the tensor ranks as it does the query heads
  // (Ainslie et al. 2023; Megatron-LM requires num_query_groups % tp == 0): a rank cannot hold part of one.
  else if (m.kv_heads > 0 && m.kv_heads % L.tp != 0)
    out.push_back("tp " + s(L.tp) + " must divide the model's " + s(m.kv_heads) +
                  " key/value heads (kv_heads): each tensor rank holds whole K/V heads; use tp " +
                  s(std::gcd(L.tp, m.kv_heads)) + " or another divisor of " + s(m.kv_heads));
  if (m.ffn() % L.tp != 0) out.push_back("tp " + s(L.tp) + " must divide ffn_hidden " + s(m.ffn()));
  // Any layer count splits over the stages (stage_layers: as evenly as possible, or the explicit list);
  // a stage needs at least one layer, or with the embedding/output layer counted as layers, one unit.
  if (L.pp > m.layers + (L.embedding_stages == EmbeddingStages::as_layers ? 2 : 0))
    out.push_back("pp " + s(L.pp) + " is more stages than the " + s(m.layers) + " layers can fill");
  if (L.schedule == PipeSchedule::interleaved && L.pp > 1) {
    // Any layer count splits into the p v model chunks (chunk_layers), each with at least one layer, or
    // with the embedding and the output layer taking a slot each (as-layers; Llama 3 405B's first and last
    // chunk), one unit. An explicit per-stage list may leave those two end chunks without layers.
    const long long chunks = (long long)L.pp * L.virtual_stages;
    const bool ends_free = L.embedding_stages == EmbeddingStages::as_layers || !L.layers_per_stage.empty();
    const long long units = m.layers + (ends_free ? 2 : 0);
    if (chunks > units)
      out.push_back("virtual_stages: the interleaved schedule splits the layers into pp*virtual_stages = " + s(chunks) +
                    " model chunks, more than the " + s(m.layers) + " layers can fill" +
                    (ends_free ? " (with the embedding and the output layer in the first and last chunk)" : "") +
                    "; use fewer virtual_stages");
    else if (L.global_batch % ((long long)L.micro_batch * L.dp) == 0 && L.micro_batches() % L.pp != 0)
      out.push_back("global_batch: the interleaved schedule needs micro-batches per iteration (" +
                    s(L.micro_batches()) + ") to be a multiple of pp (" + s(L.pp) + ") (Megatron-LM)");
  }
  // Offloading (ZeRO-Offload, Ren et al. 2021; ZeRO-Infinity, Rajbhandari et al. 2021): what each switch
  // needs of the layout, and the host numbers its time is priced with.
  const ClusterSpec& cl = c.cluster;
  const std::string gpu = cl.gpu.empty() ? "the GPU" : "GPU \"" + cl.gpu + "\"";
  if (L.offload_optimizer && L.zero < 1)
    out.push_back(
        "offload_optimizer moves each GPU's partition of the optimizer state, which needs it partitioned "
        "(DeepSpeed offloads under ZeRO stages 1-3): set zero to 1 or more, or offload_optimizer to false");
  if (L.offload_params && L.zero < 3)
    out.push_back(
        "offload_params keeps each GPU's shard of the parameters on the host, which needs them sharded: "
        "set zero to 3 (ZeRO-3 or FSDP), or offload_params to false");
  for (auto [on, key] : {std::pair{L.offload_activations, "offload_activations"},
                         std::pair{L.partition_activations, "partition_activations"}})
    if (on && L.recompute != Recompute::full)
      out.push_back(std::string(key) +
                    " moves the activation checkpoints, which only full recomputation keeps: set recompute to "
                    "\"full\", or " +
                    key + " to false");
  for (auto [on, key] :
       {std::pair{L.offload_optimizer, "offload_optimizer"}, std::pair{L.offload_params, "offload_params"},
        std::pair{L.offload_activations, "offload_activations"}}) {
    if (!on) continue;
    if (cl.host_link_GBps <= 0)
      out.push_back(std::string(key) + ": " + gpu +
                    " has no link to the host in the catalog (gpus.json host_link); set cluster.host_link_GBps "
                    "(one direction, GB/s)");
    else if (key != std::string("offload_activations") && cl.host_memory_GBps <= 0)
      out.push_back(std::string(key) +
                    " runs the optimizer step on the host CPU, and the catalog has no host memory bandwidth for "
                    "this cluster's server (its CPUs are not published for every machine): pick another cluster, "
                    "or set cluster.server (a systems.json id) or cluster.host_memory_GBps");
  }
  return out;
}

json to_json(const Estimate& e, const Config& c) {
  const Layout& L = c.layout;
  json j;
  j["params"] = e.params;
  j["model_flops_per_iteration"] = e.model_flops_per_iteration;
  j["hardware_flops_per_iteration"] = e.hardware_flops_per_iteration;
  j["six_nd_flops_per_iteration"] = e.six_nd_flops_per_iteration;
  j["memory_per_gpu_bytes"] = {{"weights", e.memory.weights},     {"gradients", e.memory.gradients},
                               {"optimizer", e.memory.optimizer}, {"activations", e.memory.activations},
                               {"total", e.memory.total},         {"hbm", e.hbm_bytes}};
  if (L.zero >= 3) j["memory_per_gpu_bytes"]["gathered"] = e.memory.gathered;  // whole weights and gradients
  if (L.offload_optimizer || L.offload_params || L.offload_activations) {
    j["memory_per_gpu_bytes"]["host"] = e.memory.host;  // offloaded, not in total
    j["host_memory_per_node_bytes"] = {{"offloaded", e.host_bytes_per_node}, {"capacity", c.cluster.host_memory_bytes}};
  }
  j["fits"] = e.fits;
  j["iteration_time_s"] = e.iteration_time_s;
  j["time_breakdown_s"] = {{"compute", e.time.compute}, {"tp_comm", e.time.tp_comm}, {"pp_comm", e.time.pp_comm},
                           {"dp_comm", e.time.dp_comm}, {"bubble", e.time.bubble},   {"optimizer", e.time.optimizer},
                           {"offload", e.time.offload}};
  if (L.cp > 1) j["time_breakdown_s"]["cp_comm"] = e.time.cp_comm;
  j["achieved_tflops_per_gpu"] = e.achieved_tflops_per_gpu;  // the name Megatron-LM 2021 and validation use
  j["hardware_tflops_per_gpu"] = e.achieved_tflops_per_gpu;  // the same, named as the panel names it (HFU's)
  j["model_tflops_per_gpu"] = e.model_tflops_per_gpu;
  j["mfu"] = e.mfu;
  j["hfu"] = e.hfu;
  j["tokens_per_s"] = e.tokens_per_s;
  j["iterations"] = e.iterations;
  j["training_days"] = e.training_days;
  j["gpu_hours"] = e.gpu_hours;
  j["cost_usd"] = e.cost_usd;
  j["price_per_gpu_hour_usd"] = c.cluster.price_per_gpu_hour_usd;
  j["gpus"] = c.cluster.gpus();
  j["gemm_efficiency"] = e.gemm_efficiency;
  j["per_micro_batch_s"] = {
      {"stage_forward", e.stage_forward_s}, {"stage_backward", e.stage_backward_s}, {"p2p", e.p2p_s}};
  // Included in time_breakdown_s.pp_comm: the tied embedding's gradient summed between the first and the
  // last stage once an iteration (perf.h tied_grad_bytes).
  if (e.tied_grad_s > 0) j["tied_embedding_allreduce_s"] = e.tied_grad_s;
  j["algorithms"] = {{"tp", e.tp_algorithm}, {"dp", e.dp_algorithm}};
  j["software"] = c.software.id.empty() ? "megatron-lm-2021" : c.software.id;
  j["software_chosen_by"] = c.software.chosen_by;  // "config", the preset of record, or "default"
  if (!c.software.chosen_source.empty()) j["software_source"] = c.software.chosen_source;
  j["stage_layers"] = e.stage_layers;
  j["slowest_stage"] = e.slowest_stage;
  if (e.chunk_layers.size() > e.stage_layers.size()) j["chunk_layers"] = e.chunk_layers;  // interleaved
  if (L.zero >= 3) j["zero3_collectives_per_iteration"] = e.zero3_collectives;
  j["layout"] = {{"tp", L.tp},
                 {"pp", L.pp},
                 {"dp", L.dp},
                 {"micro_batch", L.micro_batch},
                 {"global_batch", L.global_batch},
                 {"micro_batches", L.micro_batches()},
                 {"schedule", schedule_name(L.schedule)},
                 {"virtual_stages", L.virtual_stages},
                 {"zero", L.zero},
                 {"recompute", to_string(L.recompute)},
                 {"sequence_parallel", L.sequence_parallel}};
  for (auto [on, key] :
       {std::pair{L.offload_optimizer, "offload_optimizer"}, std::pair{L.offload_params, "offload_params"},
        std::pair{L.offload_activations, "offload_activations"},
        std::pair{L.partition_activations, "partition_activations"}})
    if (on) j["layout"][key] = true;
  if (L.cp > 1) j["layout"]["cp"] = L.cp;  // context parallel (absent: 1, as for every run before 2024)
  j["precision"] = to_string(c.training.precision);
  j["notes"] = e.notes;
  return j;
}

Software software_from_catalog(const Catalog& cat, const std::string& id, const std::string& gpu_id) {
  const Table* t = cat.table("software");
  const Record* r = t ? t->find(id) : nullptr;
  if (!r) {
    std::string ids;
    if (t)
      for (const auto& x : t->records) ids += (ids.empty() ? "" : ", ") + x.id;
    throw std::out_of_range("unknown software id \"" + id + "\"; known: " + ids);
  }
  Software sw;
  sw.id = r->id;
  sw.name = r->name;
  // What the stack can run at all; a row without the field runs it (a stack added without them).
  sw.tensor_parallel = r->get_or("tensor_parallel", 1) != 0;
  sw.pipeline_parallel = r->get_or("pipeline_parallel", 1) != 0;
  sw.interleaved_schedule = r->get_or("interleaved_schedule", 1) != 0;
  sw.selective_recompute = r->get_or("selective_recompute", 1) != 0;
  sw.sequence_parallel = r->get_or("sequence_parallel", 1) != 0;
  // Context parallelism came in 2023-2024 (Megatron-Core, Llama 3): a stack row without the field has none.
  sw.context_parallel = r->get_or("context_parallel", 0) != 0;
  sw.max_zero_stage = int(r->get_or("max_zero_stage", 3));
  sw.max_zero_stage_pipeline = int(r->get_or("max_zero_stage_pipeline", sw.max_zero_stage));
  // The stack's achieved large-GEMM fraction on this GPU's generation (gemm_fraction_volta, ...).
  std::string arch;
  if (const Table* g = cat.table("gpus"))
    if (const Record* gr = g->find(gpu_id)) arch = gr->text_or("architecture", "");
  for (char& ch : arch) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (!arch.empty()) sw.gemm_fraction = r->get_or("gemm_fraction_" + arch, 0);
  sw.elementwise_factor = r->get_or("elementwise_factor", sw.elementwise_factor);
  sw.flash_attention = r->get_or("flash_attention", 0) != 0;
  sw.nccl_version = int(r->get_or("nccl_version", sw.nccl_version));
  const std::string g = r->text_or("zero3_gather", "per-layer");
  sw.zero3_gather = g == "per-tensor"   ? Zero3Gather::per_tensor
                    : g == "per-module" ? Zero3Gather::per_module
                                        : Zero3Gather::per_layer;
  sw.zero3_overlap = r->get_or("zero3_overlap", 0) != 0;
  sw.zero3_reduce_each_microbatch = r->get_or("zero3_reduce_each_microbatch", 0) != 0;
  sw.zero3_reshard_after_forward = r->get_or("zero3_reshard_after_forward", 1) != 0;
  sw.zero3_prefetch_params = r->get_or("zero3_prefetch_params", 0);
  sw.zero3_reduce_bucket_params = r->get_or("zero3_reduce_bucket_params", 0);
  sw.zero3_list_collectives = r->get_or("zero3_list_collectives", 0) != 0;
  sw.zero1_full_allreduce = r->get_or("zero1_full_allreduce", 0) != 0;
  sw.selective_every_second_matmul = r->get_or("selective_recompute_every_second_matmul", 0) != 0;
  sw.grad_accumulation_bytes = r->get_or("grad_accumulation_bytes", 0);
  sw.optimizer_bytes_per_param = r->get_or("optimizer_bytes_per_param", sw.optimizer_bytes_per_param);
  sw.loss_bytes_per_logit = r->get_or("loss_bytes_per_logit", sw.loss_bytes_per_logit);
  sw.grad_accumulation_every_microbatch = r->get_or("grad_accumulation_every_microbatch", 0) != 0;
  sw.optimizer_host_ops_per_tensor = r->get_or("optimizer_host_ops_per_tensor", 0);
  sw.host_op_dispatch_s = r->get_or("host_op_dispatch_us", 0) * 1e-6;
  sw.dp_overlap = r->get_or("dp_overlap", 0) != 0;
  sw.pipeline_scatter_gather = r->get_or("pipeline_scatter_gather", 1) != 0;
  sw.pipeline_full_gradients = r->get_or("pipeline_full_gradients", 0) != 0;
  sw.pipeline_blocking_p2p = r->get_or("pipeline_blocking_p2p", 0) != 0;
  sw.pipeline_p2p_broadcast = r->get_or("pipeline_p2p_broadcast", 0) != 0;
  sw.pipeline_inside_data_parallel = r->get_or("pipeline_inside_data_parallel", 0) != 0;
  return sw;
}

std::string default_software(const Catalog& cat, const std::string& model_id, const std::string& cluster_id,
                             std::string* chosen_by) {
  for (const auto& [table, id] : {std::pair<const char*, std::string>{"models", model_id}, {"clusters", cluster_id}})
    if (const Table* t = cat.table(table))
      if (const Record* r = t->find(id)) {
        const std::string sw = r->text_or("software", "");
        if (!sw.empty()) {
          if (chosen_by) *chosen_by = std::string(table) + "/" + id;
          return sw;
        }
      }
  if (chosen_by) *chosen_by = "default";
  const Table* t = cat.table("software");
  return t && t->find("megatron-lm-2021") ? "megatron-lm-2021" : "";
}

json estimate_json(const Catalog& cat, const json& config, const std::string& file) {
  Config c = parse_config(cat, config, file, true);
  return to_json(estimate(c), c);
}

}  // namespace mc::perf
