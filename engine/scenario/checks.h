// checks.h - load-time checks of a scenario that span its steps (parse_scenario runs them once every step
// is read), so that an author meets every problem when the file is opened, located, and never in class:
//
//   check_references: every {{result.path|format}} of a narration, every result an expectation, question
//     or action ("set" from a result, "ratio", "fit_power_law") names, is produced by an action of this
//     step or an earlier one (its "as", else the action's own result name); narration formats exist.
//   check_configs: the configs the engine actions read ("estimate", "simulate", "train", "scaling") are
//     followed through the file's "set" actions and handed to the engine's own parsers where an action
//     reads them; a refusal (gpus -8, an unknown preset) is reported at the "set" that wrote the key.
#pragma once

#include "core/json_doc.h"

#include <vector>

namespace mc {
struct Catalog;
}

namespace mc::scenario {

struct Scenario;
class ActionRegistry;

void check_references(const JsonDoc& doc, const Scenario& s, const ActionRegistry& reg, std::vector<LoadError>& errors);
// Needs the catalog (presets); does nothing without one.
void check_configs(const JsonDoc& doc, const Scenario& s, const ActionRegistry& reg, const Catalog* cat,
                   std::vector<LoadError>& errors);

}  // namespace mc::scenario
