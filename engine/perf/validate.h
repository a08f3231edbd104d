// validate.h - the model against published numbers (tests/data/validation/public-cases.json): the
// Megatron-LM 2021 Table 1 throughputs predicted from physics, and the arithmetic cases (GPT-3 Table
// 2.1/D.1, ZeRO Table 1, Korthikanti Table 2, pipeline bubbles, communication volumes, PF-day).
#pragma once

#include "catalog/catalog.h"
#include "perf/perf.h"

#include <string>
#include <vector>

namespace mc::perf {

struct ValidationRow {
  std::string case_id, quantity, units;
  double published = 0, predicted = 0;
  double tolerance = 0;        // as the case states it
  bool relative = true;        // tolerance type
  double error = 0;            // (predicted - published) / published, or absolute difference
  bool within = false;
  std::string group;           // "throughput" or "arithmetic"
};

// The layout Megatron-LM 2021 used for a Table 1 row, as a `megacluster estimate` config. The paper gives
// t, p, d, n and B; the micro-batch (1) and interleaving depth (2 model chunks per rank, or the smallest
// divisor >= 2 of the layers per stage) are our assumptions, stated in docs/validation.md.
nlohmann::json table1_config(const nlohmann::json& case_inputs);

// Evaluates every case of the file this model can reproduce. Throws LoadError for a malformed file.
std::vector<ValidationRow> validate_cases(const Catalog& cat, const std::string& cases_path);

// Median and max |error| of the Table 1 achieved-TFLOP/s rows.
struct ThroughputSummary {
  int rows = 0;
  double median_abs_error = 0, max_abs_error = 0;
};
ThroughputSummary throughput_summary(const std::vector<ValidationRow>& rows);

std::string validation_markdown(const std::vector<ValidationRow>& rows);
std::string validation_text(const std::vector<ValidationRow>& rows);

}  // namespace mc::perf
