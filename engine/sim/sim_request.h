// sim_request.h - a simulation's config as it is written (the `megacluster simulate` format): the estimate's
// request (perf/perf_request.h) and the simulator's own sections, each key with its type and range, nothing
// resolved. The catalog's defaults (failure profiles, storage) and the checks that need the machine (a
// straggler's GPU, a degraded node) are sim::resolve's, which reads a SimRequest.
//
// The simulator panels hold a SimRequest; a scenario's `set` and a link's edits go through parse_sim_request
// once, and to_json writes back exactly the keys that were set.
#pragma once

#include "core/json_doc.h"
#include "perf/perf_request.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace mc::sim {

// "stragglers": a GPU that runs at a fraction of its peers' speed.
struct StragglerRequest {
  long long gpu = 0;   // 0 .. GPUs - 1 (checked against the machine by resolve)
  double speed = 1.0;  // 0.01 .. 1
  bool operator==(const StragglerRequest&) const = default;
};

// "degraded_links": a node whose NICs carry a fraction of their bandwidth.
struct DegradedLinkRequest {
  long long node = 0;  // 0 .. nodes - 1 (checked against the machine by resolve)
  double bandwidth_fraction = 1.0;
  bool operator==(const DegradedLinkRequest&) const = default;
};

// "sim": the simulator's knobs.
struct SimKnobsRequest {
  std::optional<double> bucket_bytes;
  std::optional<bool> overlap_dp;
  std::optional<std::string> dp_algorithm;  // auto | ring | tree | hierarchical
  std::optional<bool> blocking_p2p;
  std::optional<long long> spines, nics_per_node;
  bool operator==(const SimKnobsRequest&) const = default;
};

// The failure profile a run takes when its config names none (Meta's Llama 3 405B run, failures.json).
inline constexpr const char* kDefaultFailureProfile = "llama3-405b-2024";

// "failures": a profile of assets/catalog/failures.json, each rate overridable.
struct FailuresRequest {
  std::optional<std::string> profile;
  std::optional<double> gpu_per_hour, host_per_hour, nic_per_hour, switch_per_hour, software_per_hour;
  std::optional<double> detection_s, reschedule_s, restart_s;
  bool operator==(const FailuresRequest&) const = default;
};

// "checkpoint": how often and how fast (storage.json's blob storage by default).
struct CheckpointRequest {
  std::optional<double> interval_s, write_GBps, read_GBps, bytes_per_param, storage_accounts;
  bool operator==(const CheckpointRequest&) const = default;
};

// "data": the input pipeline (tokenizing cores and reads).
struct DataRequest {
  std::optional<double> cpu_cores, tokens_per_s_per_core, read_GBps, bytes_per_token;
  bool operator==(const DataRequest&) const = default;
};

struct SimRequest {
  perf::Request estimate;  // model, cluster, parallel, training, software
  std::optional<std::vector<StragglerRequest>> stragglers;
  std::optional<std::vector<DegradedLinkRequest>> degraded_links;
  std::optional<SimKnobsRequest> sim;
  std::optional<FailuresRequest> failures;
  std::optional<CheckpointRequest> checkpoint;
  std::optional<DataRequest> data;
  bool operator==(const SimRequest&) const = default;
};

// A simulate config is an object of the estimate's sections and the simulator's, nothing else (LoadError).
void check_simulate_keys(const JsonCursor& root);
// The simulator's own sections of a config whose keys were checked (the estimate's are perf::parse_request's).
void parse_sim_sections(const JsonCursor& root, SimRequest& out);
// A whole simulate config: every key's type and range, located (LoadError), unknown keys refused.
SimRequest parse_sim_request(const nlohmann::json& config, const std::string& file_for_errors);
nlohmann::json to_json(const SimRequest& r);

// A run's length and seed (the Run chapter's "days at most" and "seed"; `megacluster simulate`'s --days and
// --seed), as a link carries them.
struct RunSettings {
  double days = 30;             // 1 .. kMaxRunDays
  unsigned long long seed = 1;  // 0 .. kMaxRunSeed
  bool operator==(const RunSettings&) const = default;
};
inline constexpr long long kMaxRunSeed = 1LL << 30;  // an int's worth: what a person types in a seed field
RunSettings parse_run_settings(const nlohmann::json& c, const std::string& what);
nlohmann::json to_json(const RunSettings& r);

// The sections a simulate config adds to the estimate's.
const std::vector<std::string>& sim_section_keys();

}  // namespace mc::sim
