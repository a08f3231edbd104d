// sim_request.cpp - the codec of a simulation's config: the estimate's keys through perf::parse_request, the
// simulator's sections through one table of keys each.
#include "sim/sim_request.h"

#include "core/json_fields.h"
#include "sim/sim.h"

namespace mc::sim {

namespace {

const std::vector<Field<SimKnobsRequest>>& knob_keys() {
  using K = SimKnobsRequest;
  static const std::vector<Field<K>> keys = {
      // Smaller buckets than 1 MB: millions of collectives, minutes of simulation.
      {"bucket_bytes", &K::bucket_bytes, 1e6, 1e12},
      {"overlap_dp", &K::overlap_dp},
      {"dp_algorithm", &K::dp_algorithm, 0, 0, {"auto", "ring", "tree", "hierarchical"}},
      {"blocking_p2p", &K::blocking_p2p},
      {"spines", &K::spines, 1, 4096},
      {"nics_per_node", &K::nics_per_node, 1, 64},
  };
  return keys;
}

const std::vector<Field<FailuresRequest>>& failure_keys() {
  using F = FailuresRequest;
  static const std::vector<Field<F>> keys = {
      {"profile", &F::profile},
      {"gpu_per_hour", &F::gpu_per_hour, 0, 1},
      {"host_per_hour", &F::host_per_hour, 0, 1},
      {"nic_per_hour", &F::nic_per_hour, 0, 1},
      {"switch_per_hour", &F::switch_per_hour, 0, 1},
      {"software_per_hour", &F::software_per_hour, 0, 1},
      {"detection_s", &F::detection_s, 0, 1e6},
      {"reschedule_s", &F::reschedule_s, 0, 1e6},
      {"restart_s", &F::restart_s, 0, 1e6},
  };
  return keys;
}

const std::vector<Field<CheckpointRequest>>& checkpoint_keys() {
  using C = CheckpointRequest;
  static const std::vector<Field<C>> keys = {
      {"interval_s", &C::interval_s, 0, 1e9},
      {"write_GBps", &C::write_GBps, 1e-6, 1e6},
      {"read_GBps", &C::read_GBps, 1e-6, 1e6},
      {"bytes_per_param", &C::bytes_per_param, 0, 64},
      {"storage_accounts", &C::storage_accounts, 1, 1e4},
  };
  return keys;
}

const std::vector<Field<DataRequest>>& data_keys() {
  using D = DataRequest;
  static const std::vector<Field<D>> keys = {
      {"cpu_cores", &D::cpu_cores, 1, 1e9},
      {"tokens_per_s_per_core", &D::tokens_per_s_per_core, 1, 1e12},
      {"read_GBps", &D::read_GBps, 1e-6, 1e6},
      {"bytes_per_token", &D::bytes_per_token, 0.1, 1e3},
  };
  return keys;
}

}  // namespace

const std::vector<std::string>& sim_section_keys() {
  static const std::vector<std::string> keys = {"stragglers", "degraded_links", "sim",
                                                "failures",   "checkpoint",     "data"};
  return keys;
}

void parse_sim_sections(const JsonCursor& root, SimRequest& out) {
  if (auto st = root.get("stragglers")) {
    out.stragglers.emplace();
    for (const JsonCursor& e : st->elements()) {
      e.only_keys({"gpu", "speed"});
      out.stragglers->push_back({e["gpu"].integer(), e["speed"].number_in(0.01, 1.0)});
    }
  }
  if (auto dl = root.get("degraded_links")) {
    out.degraded_links.emplace();
    for (const JsonCursor& e : dl->elements()) {
      e.only_keys({"node", "bandwidth_fraction"});
      out.degraded_links->push_back({e["node"].integer(), e["bandwidth_fraction"].number_in(0.001, 1.0)});
    }
  }
  if (auto j = root.get("sim")) out.sim = read_section(*j, knob_keys());
  if (auto j = root.get("failures")) out.failures = read_section(*j, failure_keys());
  if (auto j = root.get("checkpoint")) out.checkpoint = read_section(*j, checkpoint_keys());
  if (auto j = root.get("data")) out.data = read_section(*j, data_keys());
}

void check_simulate_keys(const JsonCursor& root) {
  if (!root.is_object())
    root.fail(
        "a simulate config is the estimate config (model, cluster, parallel, training) "
        "plus optional stragglers, degraded_links, sim, failures, checkpoint, data");
  std::vector<std::string> allowed = perf::request_keys("");
  allowed.insert(allowed.end(), sim_section_keys().begin(), sim_section_keys().end());
  root.only_keys(allowed);
}

SimRequest parse_sim_request(const nlohmann::json& config, const std::string& file_for_errors) {
  const JsonDoc doc = JsonDoc::parse(config.dump(2), file_for_errors);
  const JsonCursor root = doc.root();
  check_simulate_keys(root);
  SimRequest r;
  r.estimate = perf::parse_request_sections(root);
  parse_sim_sections(root, r);
  return r;
}

nlohmann::json to_json(const SimRequest& r) {
  nlohmann::json j = perf::to_json(r.estimate);
  if (r.stragglers) {
    j["stragglers"] = nlohmann::json::array();
    for (const StragglerRequest& s : *r.stragglers) j["stragglers"].push_back({{"gpu", s.gpu}, {"speed", s.speed}});
  }
  if (r.degraded_links) {
    j["degraded_links"] = nlohmann::json::array();
    for (const DegradedLinkRequest& d : *r.degraded_links)
      j["degraded_links"].push_back({{"node", d.node}, {"bandwidth_fraction", d.bandwidth_fraction}});
  }
  if (r.sim) j["sim"] = write_section(*r.sim, knob_keys());
  if (r.failures) j["failures"] = write_section(*r.failures, failure_keys());
  if (r.checkpoint) j["checkpoint"] = write_section(*r.checkpoint, checkpoint_keys());
  if (r.data) j["data"] = write_section(*r.data, data_keys());
  return j;
}

RunSettings parse_run_settings(const nlohmann::json& c, const std::string& what) {
  const JsonDoc doc = JsonDoc::parse(c.dump(2), what);
  const JsonCursor at = doc.root();
  at.only_keys({"days", "seed"});
  RunSettings r;
  if (auto v = at.get("days")) r.days = v->number_in(1, kMaxRunDays);
  if (auto v = at.get("seed")) r.seed = (unsigned long long)v->integer_in(0, kMaxRunSeed);
  return r;
}

nlohmann::json to_json(const RunSettings& r) { return {{"days", r.days}, {"seed", r.seed}}; }

}  // namespace mc::sim
