// capital_state.h - view state of the Capital panel: the three capital-model configs as JSON (the same
// JSON a scenario's "plan", "waterfall" and "partnership" configs hold), so a scenario can set any key and
// the panel recomputes on the next frame. Empty objects mean "the defaults, with prices from the catalog".
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace mc::ui {

struct CapitalView {
  nlohmann::json plan = nlohmann::json::object();         // capital::PlanConfig keys
  nlohmann::json waterfall = nlohmann::json::object();    // capital::WaterfallConfig keys
  nlohmann::json partnership = nlohmann::json::object();  // capital::PartnershipConfig keys
  std::string error;                                      // why a config was refused
};

}  // namespace mc::ui
