// capital_state.h - view state of the Capital panel: the three capital-model configs (capital/compute_cost.h,
// capital/waterfall.h), each read once by its codec from a scenario's "plan", "waterfall" or "partnership"
// config or a link, so the panel recomputes on the next frame. None means "the defaults, with prices from the
// catalog" (the panel holds them once drawn).
#pragma once

#include "capital/compute_cost.h"
#include "capital/waterfall.h"

#include <optional>
#include <string>

namespace mc::ui {

struct CapitalView {
  std::optional<capital::PlanConfig> plan;
  std::optional<capital::WaterfallConfig> waterfall;
  std::optional<capital::PartnershipConfig> partnership;
  std::string error;  // why a scenario's config was refused
};

// The budget the panel plans with when a plan has none: $10M, a seed round of the time, small enough that the
// slider's whole range (thousands to a hundred billion dollars) sits either side of it.
constexpr double kCapitalBudgetUsd = 1e7;

// The configs the panel computes with: the view's, else the catalog's defaults; a plan with no budget gets
// kCapitalBudgetUsd.
capital::PlanConfig capital_plan(const Catalog& cat, const CapitalView& v);
capital::WaterfallConfig capital_waterfall(const Catalog& cat, const CapitalView& v);
// The partnership's defaults price GPU-hours at `plan`'s rent and deliver its sustained FLOP/s.
capital::PartnershipConfig capital_partnership(const Catalog& cat, const CapitalView& v,
                                               const capital::PlanConfig& plan);

}  // namespace mc::ui
