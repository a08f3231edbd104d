// perf_helpers.h - what the performance-model tests share: a config parsed against the shipped catalog, and
// the message a config is refused with ("" when `megacluster estimate` accepts it).
#pragma once

#include "perf/perf.h"
#include "test_helpers.h"

#include <string>

namespace mc::test {

inline mc::perf::Config config_of(const nlohmann::json& cfg) {
  return mc::perf::parse_config(catalog(), cfg, "cfg.json");
}

inline std::string error_of(const nlohmann::json& cfg) {
  try {
    mc::perf::estimate_json(catalog(), cfg, "cfg.json");
  } catch (const mc::LoadError& e) {
    return e.what();
  }
  return "";
}

}  // namespace mc::test
