// capital_state.h - view state of the Capital panel: the three capital-model configs as JSON (the same
// JSON a scenario's "plan", "waterfall" and "partnership" configs hold), so a scenario can set any key and
// the panel recomputes on the next frame. Empty objects mean "the defaults, with prices from the catalog".
#pragma once

#include "capital/compute_cost.h"
#include "capital/waterfall.h"

#include <nlohmann/json.hpp>

#include <string>

namespace mc::ui {

struct CapitalView {
  nlohmann::json plan = nlohmann::json::object();         // capital::PlanConfig keys
  nlohmann::json waterfall = nlohmann::json::object();    // capital::WaterfallConfig keys
  nlohmann::json partnership = nlohmann::json::object();  // capital::PartnershipConfig keys
  std::string error;                                      // why a config was refused
};

// The budget the panel plans with when a plan has none: $10M, a seed round of the time, small enough that the
// slider's whole range (thousands to a hundred billion dollars) sits either side of it.
constexpr double kCapitalBudgetUsd = 1e7;

// The configs the panel computes with: each of the view's JSON over the catalog's defaults; a plan with no
// budget gets kCapitalBudgetUsd. Throw LoadError naming the key for a config the codec refuses.
capital::PlanConfig capital_plan(const Catalog& cat, const CapitalView& v);
capital::WaterfallConfig capital_waterfall(const Catalog& cat, const CapitalView& v);
// The partnership's defaults price GPU-hours at `plan`'s rent and deliver its sustained FLOP/s.
capital::PartnershipConfig capital_partnership(const Catalog& cat, const CapitalView& v,
                                               const capital::PlanConfig& plan);

}  // namespace mc::ui
