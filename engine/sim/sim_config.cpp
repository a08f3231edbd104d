// sim_config.cpp - reading the simulator's config sections and mapping the analytic model's inputs to
// the simulator's (per-layer compute, collective sizes, link bandwidths) in one place.
#include "sim/sim_config.h"

#include "perf/collectives.h"
#include "sim/sim_request.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace mc::sim {

namespace {

double catalog_value(const Catalog& cat, const char* table, const std::string& id, const char* key, double fallback) {
  if (const Table* t = cat.table(table))
    if (const Record* r = t->find(id)) return r->get_or(key, fallback);
  return fallback;
}

// `req` holds the sections as written (types and ranges checked); `root` locates what the machine refuses.
void parse_sections(const Catalog& cat, const JsonCursor& root, const SimRequest& req, SimSections& s, int gpus,
                    int nodes) {
  if (req.stragglers) {
    const std::vector<JsonCursor> at = root["stragglers"].elements();
    for (size_t i = 0; i < req.stragglers->size(); ++i) {
      const int gpu = int(at[i]["gpu"].integer_in(0, gpus - 1));
      for (const auto& [g, speed] : s.stragglers)
        if (g == gpu)
          at[i]["gpu"].fail("GPU " + std::to_string(gpu) +
                            " is listed twice in \"stragglers\": keep one entry per GPU "
                            "(its speed relative to the others)");
      s.stragglers.push_back({gpu, (*req.stragglers)[i].speed});
    }
  }
  if (req.degraded_links) {
    const std::vector<JsonCursor> at = root["degraded_links"].elements();
    for (size_t i = 0; i < req.degraded_links->size(); ++i) {
      const int node = int(at[i]["node"].integer_in(0, nodes - 1));
      for (const auto& [n, frac] : s.degraded_nodes)
        if (n == node)
          at[i]["node"].fail("node " + std::to_string(node) +
                             " is listed twice in \"degraded_links\": keep one entry "
                             "per node (the fraction of its NIC bandwidth left)");
      s.degraded_nodes.push_back({node, (*req.degraded_links)[i].bandwidth_fraction});
    }
  }
  if (const std::optional<SimKnobsRequest>& k = req.sim) {
    if (k->bucket_bytes) s.bucket_bytes = *k->bucket_bytes;
    if (k->overlap_dp) s.overlap_dp = *k->overlap_dp ? 1 : 0;
    if (k->dp_algorithm) s.dp_algorithm = *k->dp_algorithm;
    if (k->blocking_p2p) s.blocking_p2p = *k->blocking_p2p;
    if (k->spines) s.spines = int(*k->spines);
    if (k->nics_per_node) s.nics_per_node = int(*k->nics_per_node);
  }
  // Failure rates: a profile from assets/catalog/failures.json, each rate overridable.
  const std::optional<FailuresRequest>& jf = req.failures;
  if (jf && jf->profile) s.failure_profile = *jf->profile;
  const Table* ft = cat.table("failures");
  const Record* fr = ft ? ft->find(s.failure_profile) : nullptr;
  if (!fr) {
    const std::string msg = "unknown failure profile \"" + s.failure_profile +
                            "\"; use an id of assets/catalog/failures.json (e.g. llama3-405b-2024)";
    if (jf && jf->profile) root["failures"]["profile"].fail(msg);
    if (ft) root.fail(msg);  // no table: rates stay 0 unless given
  }
  FailureRates& f = s.failures;
  if (fr) {
    f.gpu_per_gpu_hour = fr->get_or("gpu_per_gpu_hour", 0);
    f.host_per_node_hour = fr->get_or("host_per_node_hour", 0);
    f.nic_per_node_hour = fr->get_or("nic_per_node_hour", 0);
    f.switch_per_node_hour = fr->get_or("switch_per_node_hour", 0);
    f.software_per_node_hour = fr->get_or("software_per_node_hour", 0);
    f.detection_s = fr->get_or("detection_s", f.detection_s);
    f.reschedule_s = fr->get_or("reschedule_s", f.reschedule_s);
    f.restart_s = fr->get_or("restart_s", f.restart_s);
  }
  if (jf) {
    f.gpu_per_gpu_hour = jf->gpu_per_hour.value_or(f.gpu_per_gpu_hour);
    f.host_per_node_hour = jf->host_per_hour.value_or(f.host_per_node_hour);
    f.nic_per_node_hour = jf->nic_per_hour.value_or(f.nic_per_node_hour);
    f.switch_per_node_hour = jf->switch_per_hour.value_or(f.switch_per_node_hour);
    f.software_per_node_hour = jf->software_per_hour.value_or(f.software_per_node_hour);
    f.detection_s = jf->detection_s.value_or(f.detection_s);
    f.reschedule_s = jf->reschedule_s.value_or(f.reschedule_s);
    f.restart_s = jf->restart_s.value_or(f.restart_s);
  }
  // Checkpoints: blob storage of the 2020 machine by default (assets/catalog/storage.json).
  s.checkpoint_write_GBps = catalog_value(cat, "storage", "azure-blob-2020", "write_GBps", 3.125);
  s.checkpoint_read_GBps = catalog_value(cat, "storage", "azure-blob-2020", "read_GBps", 6.25);
  if (const std::optional<CheckpointRequest>& c = req.checkpoint) {
    s.checkpoint_interval_s = c->interval_s.value_or(s.checkpoint_interval_s);
    s.checkpoint_write_GBps = c->write_GBps.value_or(s.checkpoint_write_GBps);
    s.checkpoint_read_GBps = c->read_GBps.value_or(s.checkpoint_read_GBps);
    s.checkpoint_bytes_per_param = c->bytes_per_param.value_or(s.checkpoint_bytes_per_param);
    s.storage_accounts = c->storage_accounts.value_or(s.storage_accounts);
  }
  s.data_tokens_per_s_per_core = catalog_value(cat, "storage", "gpt2-bpe-tokenizer", "tokens_per_s_per_core", 2e5);
  s.data_bytes_per_token = catalog_value(cat, "storage", "gpt2-bpe-tokenizer", "bytes_per_token", 4);
  s.data_read_GBps = s.checkpoint_read_GBps;
  if (const std::optional<DataRequest>& d = req.data) {
    s.data_cpu_cores = d->cpu_cores.value_or(s.data_cpu_cores);
    s.data_tokens_per_s_per_core = d->tokens_per_s_per_core.value_or(s.data_tokens_per_s_per_core);
    s.data_read_GBps = d->read_GBps.value_or(s.data_read_GBps);
    s.data_bytes_per_token = d->bytes_per_token.value_or(s.data_bytes_per_token);
  }
}

}  // namespace

// The simulator's work budget, checked before anything is built (a lower bound of the work the config
// implies) and while it runs (IterationSpec::max_work, the measured work), so no accepted config runs past
// it. Work = the bandwidth solver's link visits + kWorkPerEvent per event: on this project's 2-core
// machine the solver visits ~1e8 links/s and an event costs ~1 us of bookkeeping, so 5e8 is ~5 s natively
// (the browser runs it in slices, one per frame, with a progress bar). The shipped configs need < 4e7.
LeastWork least_work(const IterationSpec& it) {
  LeastWork w;
  const double m = it.micro_batches, v = it.virtual_stages, p = it.pp;
  // Events, at least: every micro-batch's forward and backward of every chunk on every stage is one, and
  // with tp > 1 so is each layer's tp collective (one replica class: the lower bound).
  const double layers_per_chunk = double(it.layers) / std::max(1.0, p * v);
  const double tp_colls = it.tp > 1 ? layers_per_chunk * (it.tp_collectives_forward + it.tp_collectives_backward) : 0;
  // Context parallel: a gather op in each layer's forward and backward, a reduce-scatter op in its backward.
  const double cp_colls = it.cp > 1 && it.cp_buffer_bytes > 0 ? layers_per_chunk * 3 : 0;
  w.compute_events = p * m * v * (2 + tp_colls + cp_colls);
  w.steps_per_chunk = 2 + tp_colls + cp_colls;
  // Gradient buckets per stage, each an all-reduce over dp ranks of every tp rank: a flow group of at
  // least dp * tp links, solved when it starts and when it ends.
  w.buckets = it.dp > 1 && it.dp_bytes_per_stage > 0 ? std::ceil(it.dp_bytes_per_stage / it.bucket_bytes) : 0;
  // ZeRO-3 has no buckets: each layer is gathered in every micro-batch's forward and backward and its
  // gradients reduce-scattered at least once (iteration.cpp build_ops), each collective as costly.
  if (it.zero3_gathers && w.buckets > 0) w.buckets = std::floor(double(it.layers) / p) * (2 * m + 1);
  w.dp_work = 2.0 * p * w.buckets * double(it.dp) * it.tp;
  w.work = double(kWorkPerEvent) * (w.compute_events + p * w.buckets) + w.dp_work;
  return w;
}

namespace {
void check_work_budget(const JsonCursor& root, const IterationSpec& it) {
  const LeastWork lw = least_work(it);
  const double m = it.micro_batches, v = it.virtual_stages, p = it.pp;
  const double work = lw.work, dp_work = lw.dp_work, buckets = lw.buckets, compute_events = lw.compute_events;
  if (work <= double(kMaxSimWork)) return;
  std::ostringstream os;
  os.precision(3);
  os << "the simulator would need at least " << work << " units of work (its budget is " << double(kMaxSimWork)
     << ", a few seconds): ";
  if (dp_work >= work / 2 && it.zero3_gathers) {
    // ZeRO-3 has no gradient buckets (least_work): its collectives are each layer's gathers and reduce-scatters.
    os << p * buckets << " ZeRO-3 gathers and reduce-scatters (" << buckets << " per stage: each layer's weights "
       << "in every micro-batch) over " << double(it.dp) * it.tp << " GPUs each; use a larger micro_batch (fewer "
       << "micro-batches), a smaller dp, a lower ZeRO stage, or `megacluster estimate` (the analytic model has no such "
          "limit)";
    (root["parallel"].has("micro_batch") ? root["parallel"]["micro_batch"]
     : root["parallel"].has("zero")      ? root["parallel"]["zero"]
                                         : root["parallel"])
        .fail(os.str());
  }
  if (dp_work >= work / 2) {
    os << p * buckets << " gradient all-reduces (" << buckets << " buckets of " << it.bucket_bytes
       << " bytes per stage) over " << double(it.dp) * it.tp << " GPUs each; use larger sim.bucket_bytes, a smaller "
       << "dp (more tp or pp), or `megacluster estimate` (the analytic model has no such limit)";
    (root.has("sim") && root["sim"].has("bucket_bytes") ? root["sim"]["bucket_bytes"]
     : root["parallel"].has("dp")                       ? root["parallel"]["dp"]
                                                        : root["parallel"])
        .fail(os.str());
  }
  os << compute_events << " compute and tensor-parallel steps (" << m << " micro-batches x " << p << " stages x " << v
     << " chunks x " << lw.steps_per_chunk << " steps each); use a larger micro_batch or a smaller global_batch, "
     << "fewer layers per stage, or `megacluster estimate` (the analytic model has no such limit)";
  (root["parallel"].has("micro_batch") ? root["parallel"]["micro_batch"] : root["parallel"]).fail(os.str());
}
}  // namespace

Resolved resolve(const Catalog& cat, const JsonDoc& doc) {
  Resolved r;
  JsonCursor root = doc.root();
  check_simulate_keys(root);
  // The analytic model reads its own keys (one parser for both commands).
  json analytic = json::object();
  for (const auto& k : perf::request_keys(""))
    if (doc.value().contains(k)) analytic[k] = doc.value()[k];
  r.cfg = perf::parse_config(cat, analytic, doc.file(), true);
  // The simulator keeps every GPU's and link's state: its budget is 131,072 GPUs (2^17, thirteen times
  // the 2020 machine), about 1 GB and a few seconds; the analytic model (`estimate`) has no such limit.
  constexpr long long kMaxSimGpus = 1LL << 17;
  if (r.cfg.cluster.gpus() > kMaxSimGpus) {
    JsonCursor cl = root["cluster"];
    (cl.has("nodes")  ? cl["nodes"]
     : cl.has("gpus") ? cl["gpus"]
                      : cl)
        .fail("the simulator handles at most 131072 GPUs (its memory and time budget); this cluster has " +
              std::to_string(r.cfg.cluster.gpus()) +
              ": reduce nodes, or use `megacluster estimate` for the "
              "analytic model, which has no such limit");
  }
  r.est = perf::estimate(r.cfg);
  const perf::Config& c = r.cfg;
  const perf::Layout& L = c.layout;
  SimRequest req;  // the simulator's sections, each key's type and range checked
  parse_sim_sections(root, req);
  parse_sections(cat, root, req, r.sec, c.cluster.gpus(), c.cluster.nodes);

  // ---- topology: the analytic model's achievable bandwidths, from the one rule that makes them ----
  // perf::topology_of applies the catalog's bus efficiencies (fabrics.json bus_efficiency: NCCL bus
  // bandwidth / line rate) and, where the cluster has a measured collective bus bandwidth
  // (inter_busbw_GBps: Jean Zay's Omni-Path, 7.27 and 5.07 GB/s of 50 GB/s in BigScience's all-reduce
  // benchmarks of May 2021 and January 2022, experiments/bandwidth of the BigScience repository
  // (sources.json bigscience-repo), as tests/data/validation/run-setups.json records them), prices
  // collectives at it while point-to-point transfers keep the links' rate; where the measurement is one
  // communicator's (inter_busbw_nics), the node carries it per port and each communicator is capped at
  // it. The simulator takes the same figures: links at the point-to-point rates, the node's collective
  // rate as a limit on collective flows only, and the communicator's cap on each collective's flows
  // (topology.h, collectives.cpp).
  // TopologySpec takes the catalog's units (NVLink bidirectional GB/s, NIC Gb/s) and converts them once;
  // these lines undo perf's conversion to hand it the same numbers.
  const perf::Topology pt = perf::topology_of(c.cluster);
  TopologySpec& t = r.topo;
  t.nodes = c.cluster.nodes;
  t.gpus_per_node = pt.gpus_per_node;
  t.nvlink_GBps_per_gpu = pt.intra_Bps * 2 / 1e9;
  t.node_network_Gbps = pt.node_p2p_Bps * 8 / 1e9;
  if (pt.node_inter_Bps < pt.node_p2p_Bps) t.node_collective_GBps = pt.node_inter_Bps / 1e9;
  t.group_collective_GBps = pt.group_inter_Bps / 1e9;
  t.oversubscription = pt.oversubscription;
  t.nodes_per_leaf = pt.leaf_nodes;
  t.spines = r.sec.spines;
  t.nics_per_node = std::min(r.sec.nics_per_node, c.cluster.gpus_per_node);
  t.degraded_nodes = r.sec.degraded_nodes;

  // ---- iteration: per-layer compute from the analytic stage times, minus their tp communication ----
  IterationSpec& it = r.iter;
  const perf::Estimate& e = r.est;
  it.tp = L.tp;
  it.pp = L.pp;
  // Context parallelism (perf.h Layout::cp): the simulator's replicas are the dp x cp ranks of a shard,
  // numbered replica = dp rank x cp + cp rank, so that GPUs go tp, cp, dp, pp as Megatron-Core orders them
  // (or tp, cp, pp, dp as Llama 3 did) and the gradient collectives span all dp x cp of them, as the
  // analytic model prices them. Each cp rank carries s / cp tokens (the buffers below), and each cp group
  // runs the key/value all-gathers and reduce-scatters of every layer as flows (cp_* below).
  it.dp = L.dp_group();
  it.cp = L.cp;
  it.pp_inside_dp = c.software.pipeline_inside_data_parallel;
  it.micro_batches = L.micro_batches();
  it.schedule = L.schedule;
  const int v = it.schedule == PipeSchedule::interleaved ? std::max(1, L.virtual_stages) : 1;
  it.virtual_stages = v;
  it.layers = c.model.layers;
  if (L.schedule != PipeSchedule::interleaved)
    it.stage_layers = e.stage_layers;
  else if (int(e.chunk_layers.size()) == L.pp * v)
    it.chunk_layers = e.chunk_layers;
  const bool full = L.recompute == perf::Recompute::full;
  it.tp_collectives_forward = 2;
  it.tp_collectives_backward = full ? 4 : 2;
  // The analytic model's per-layer times less its tp collectives (the simulator runs those as flows),
  // and its output layer on the last stage.
  const double slow_layers = e.stage_layers.empty() ? 0 : e.stage_layers[size_t(e.slowest_stage)];
  const double tp_per_layer =
      it.micro_batches > 0 && slow_layers > 0 ? e.time.tp_comm / (it.micro_batches * slow_layers) : 0;
  const double tp_fwd = tp_per_layer * 2.0 / (2 + it.tp_collectives_backward);
  const double tp_bwd = tp_per_layer - tp_fwd;
  // The same for the context-parallel collectives (perf_time.cpp: 2 all-gathers forward; 2 all-gathers,
  // 2 more with full recompute, and 2 reduce-scatters backward, each priced alike).
  const bool cp = L.cp > 1;
  it.cp_gathers_forward = 2;
  it.cp_gathers_backward = full ? 4 : 2;
  it.cp_reduces_backward = 2;
  const double cp_per_layer =
      cp && it.micro_batches > 0 && slow_layers > 0 ? e.time.cp_comm / (it.micro_batches * slow_layers) : 0;
  const double cp_fwd = cp_per_layer * 2.0 / (2 + it.cp_gathers_backward + it.cp_reduces_backward);
  const double cp_bwd = cp_per_layer - cp_fwd;
  it.layer_forward_s = std::max(0.0, e.layer_forward_s - tp_fwd - cp_fwd);
  it.layer_backward_s = std::max(0.0, e.layer_backward_s - tp_bwd - cp_bwd);
  it.last_stage_extra_s = e.logits_s;
  const double bytes = perf::full_width(c.training.precision) ? 4 : 2;
  const double bsh = double(L.micro_batch) * c.model.seq_len / std::max(1, L.cp) * c.model.hidden * bytes;
  it.tp_buffer_bytes = bsh;
  // One of K or V of the whole sequence on one tensor rank: b s kv_heads d / t elements.
  if (cp)
    it.cp_buffer_bytes = double(L.micro_batch) * c.model.seq_len * c.model.kv() *
                         (double(c.model.hidden) / c.model.heads) / L.tp * bytes;
  const bool sg = L.scatter_gather && L.tp > 1;
  const bool stack_sg = sg && c.software.pipeline_scatter_gather;
  it.pp_bytes = stack_sg ? bsh / L.tp : bsh;
  if (c.software.pipeline_full_gradients) it.pp_bytes_backward = bsh;
  it.pp_all_gather = stack_sg && L.pp > 1;
  it.blocking_p2p = r.sec.blocking_p2p;
  // DeepSpeed's engine pairs a blocking send with a blocking receive (perf_time.cpp charges both stages
  // for each transfer: p2p x 2).
  it.paired_p2p = c.software.pipeline_blocking_p2p && it.blocking_p2p;
  it.pp_sends_as_collective = c.software.pipeline_p2p_broadcast;
  it.tied_grad_bytes = perf::tied_grad_bytes(c);
  // Gradient bytes of one GPU's shard of one stage: the analytic model's weights per GPU without ZeRO.
  perf::Config shard = c;
  shard.layout.dp = 1;
  shard.layout.cp = 1;
  shard.layout.zero = 0;
  it.dp_bytes_per_stage = perf::memory_per_gpu(shard).weights;
  it.bucket_bytes = r.sec.bucket_bytes;
  it.overlap_dp = r.sec.overlap_dp < 0 ? L.overlap_dp_comm : r.sec.overlap_dp == 1;
  // ZeRO-1/2 (Rajbhandari et al. 2020, Sec. 5.1-5.2, 7.2.1): reduce-scatter of the gradients + all-gather
  // of the updated parameters = one all-reduce's volume and time (ring), simulated as the all-reduce,
  // as engine/perf does. ZeRO-3 (Sec. 5.3): the parameter gathers of every micro-batch's forward and
  // backward are their own transfers (iteration.h), gradients are reduce-scattered.
  it.zero_sharded = L.zero >= 3;
  it.zero3_gathers = L.zero >= 3;
  // DeepSpeed's ZeRO-1 adds the post-step all-gather to the whole all-reduce (perf_time.cpp prices it with
  // the same perf::zero1_step_gather).
  const perf::Zero1Gather z1 = perf::zero1_step_gather(c, it.dp_bytes_per_stage);
  if (z1.bytes > 0) {
    it.zero1_gather.on = true;
    it.zero1_gather.collectives = z1.collectives;
    it.zero1_gather.copy_per_collective_s = z1.copies.per_collective_s;
    it.zero1_gather.copy_per_byte_s = z1.copies.per_byte_s;
  }
  // How the stack issues them (software.json zero3_*), with engine/perf's own counts and shares
  // (perf_time.cpp, the ZeRO-3 block of estimate()): one collective per tensor, per module or per layer,
  // each of layer_params_bytes / per_layer; the weights gathered again for the recomputed forward when the
  // gathers hang on module hooks (full recompute, not per-layer); reduce-scatters after each micro-batch's
  // backward or once at the end; with zero3_overlap, the share of the layer's parameters in modules above
  // the prefetch budget (zero3_prefetch_params) gathered in the open and above the gradient bucket
  // (zero3_reduce_bucket_params) reduced blocking, the rest hidden; without it all of both in the open.
  if (L.zero >= 3) {
    const perf::Software& sw = c.software;
    it.zero3.layer_bytes = perf::layer_params_bytes(c.model, L.tp, bytes);
    it.zero3.collectives_per_layer = perf::zero3_collectives_per_layer(c.model, sw.zero3_gather);
    it.zero3.regather = full && sw.zero3_gather != perf::Zero3Gather::per_layer;
    it.zero3.reshard = sw.zero3_reshard_after_forward;
    it.zero3.reduce_each_microbatch = sw.zero3_reduce_each_microbatch;
    it.zero3.open_share = sw.zero3_overlap ? perf::zero3_share_above(c.model, L.tp, sw.zero3_prefetch_params) : 1.0;
    it.zero3.open_reduce =
        sw.zero3_overlap ? perf::zero3_share_above(c.model, L.tp, sw.zero3_reduce_bucket_params) : 1.0;
    // The list form's copies and an offloaded shard's trip over the host link, as engine/perf adds them.
    const perf::ListCopyCost k = perf::zero3_copies(c);
    it.zero3.copy_per_collective_s = k.per_collective_s;
    it.zero3.copy_per_byte_s = k.per_byte_s;
    it.zero3.gather_fill_per_byte_s = k.gather_fill_per_byte_s;
  }
  const std::string alg = r.sec.dp_algorithm == "auto" ? e.dp_algorithm : r.sec.dp_algorithm;
  it.dp_algorithm = algorithm_from_string(alg);
  it.tp_algorithm = algorithm_from_string(e.tp_algorithm);
  it.optimizer_s = e.time.optimizer;
  it.latency.intra_node_s = pt.intra_latency_s;
  it.latency.inter_node_s = pt.inter_latency_s;
  it.stragglers = r.sec.stragglers;

  check_work_budget(root, it);
  it.max_work = kMaxSimWork;
  return r;
}

RunSpec run_spec(const Catalog& cat, const Resolved& r, double iteration_s, double max_days, unsigned long long seed) {
  const perf::Config& c = r.cfg;
  RunSpec s;
  s.gpus = c.cluster.gpus();
  s.nodes = c.cluster.nodes;
  s.iteration_s = iteration_s;
  s.tokens_per_iteration = double(c.layout.global_batch) * c.model.seq_len;
  s.iterations_total = r.est.iterations;
  s.model_flops_per_iteration = r.est.model_flops_per_iteration;
  s.peak_flops_per_gpu = perf::peak_flops(c.cluster, c.training.precision);
  s.usd_per_gpu_hour = c.cluster.price_per_gpu_hour_usd;
  s.max_days = max_days;
  s.failures = r.sec.failures;
  s.seed = seed;
  // Checkpoint: every parameter's weights and optimizer state once (ZeRO shards it over the data-parallel
  // ranks, pipeline and tensor parallelism over their ranks: the writers together hold one copy).
  s.checkpoint_bytes = r.est.params * r.sec.checkpoint_bytes_per_param;
  // Writers are the GPUs holding distinct shards: tp*pp of them (times dp with ZeRO); their nodes' NICs
  // bound the write as well as the storage account(s).
  const double writers = double(c.layout.tp) * c.layout.pp * (c.layout.zero >= 1 ? c.layout.dp_group() : 1);
  const double writer_nodes = std::max(1.0, std::ceil(writers / c.cluster.gpus_per_node));
  const double node_Bps = c.cluster.node_network_Gbps * 1e9 / 8;
  s.checkpoint_write_Bps =
      std::min(r.sec.checkpoint_write_GBps * 1e9 * r.sec.storage_accounts, writer_nodes * node_Bps);
  s.checkpoint_read_Bps = std::min(r.sec.checkpoint_read_GBps * 1e9 * r.sec.storage_accounts, writer_nodes * node_Bps);
  s.checkpoint_interval_s = r.sec.checkpoint_interval_s;
  // Data pipeline: by default the cluster's CPU cores (clusters.json cpu_cores, pro rata to the GPUs used).
  double cores = r.sec.data_cpu_cores;
  if (cores < 0 && !c.cluster.id.empty()) {
    const double all_cores = catalog_value(cat, "clusters", c.cluster.id, "cpu_cores", 0);
    const double all_gpus = catalog_value(cat, "clusters", c.cluster.id, "gpus", 0);
    if (all_cores > 0 && all_gpus > 0) cores = all_cores * s.gpus / all_gpus;
  }
  s.cpu_cores = std::max(0.0, cores);
  s.tokens_per_s_per_core = r.sec.data_tokens_per_s_per_core;
  s.data_read_Bps = r.sec.data_read_GBps * 1e9 * r.sec.storage_accounts;
  s.bytes_per_token = r.sec.data_bytes_per_token;
  return s;
}

}  // namespace mc::sim
