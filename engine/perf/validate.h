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
  double tolerance = 0;  // as the case states it
  bool relative = true;  // tolerance type
  double error = 0;      // (predicted - published) / published, or absolute difference
  bool within = false;
  std::string group;       // "throughput" (Table 1), "runs" (more-public-cases) or "arithmetic"
  std::string software;    // the training stack the prediction used (runs)
  std::string unmodelled;  // what the setup says the model does not price for this run (runs), or ""
};

// The layout Megatron-LM 2021 used for a Table 1 row, as a `megacluster estimate` config. The paper gives
// t, p, d, n and B; the micro-batch (1) and interleaving depth (2 model chunks per rank, or the smallest
// divisor >= 2 of the layers per stage) are our assumptions, stated in docs/validation.md.
nlohmann::json table1_config(const nlohmann::json& case_inputs);

// Evaluates every case of the file this model can reproduce. Throws LoadError for a malformed file.
std::vector<ValidationRow> validate_cases(const Catalog& cat, const std::string& cases_path);

// Published training runs of 2019-2024 (more-public-cases.json) predicted as `megacluster estimate`
// configs built by run-setups.json (the cluster each ran on, its training stack, the FLOP convention of
// its TFLOP/s or MFU, and our rule for every input the source leaves open). Rows are group "runs";
// their tolerance is the setup's band (the noisy Jean Zay V100 runs) or 25%. Runs the setups mark as
// not predictable (no model shape published) are skipped and listed by `unpredicted`.
std::vector<ValidationRow> validate_runs(const Catalog& cat, const std::string& cases_path,
                                         const std::string& setups_path,
                                         std::vector<std::string>* unpredicted = nullptr);
// The config a run setup builds (exposed for tests and for `megacluster estimate` users who want to
// start from a published run). Throws LoadError naming the setups file for a malformed entry.
nlohmann::json run_config(const Catalog& cat, const nlohmann::json& run_case, const nlohmann::json& setup,
                          const std::string& setups_path);

// Median and max |error| of throughput rows: `table1` = Megatron-LM 2021 Table 1's achieved TFLOP/s;
// `all` = every throughput row of both files (Table 1 and the runs, every quantity).
struct ThroughputSummary {
  int rows = 0;
  double median_abs_error = 0, max_abs_error = 0;
};
ThroughputSummary throughput_summary(const std::vector<ValidationRow>& rows);      // Table 1 TFLOP/s
ThroughputSummary all_throughput_summary(const std::vector<ValidationRow>& rows);  // both files
// The throughput row (of those all_throughput_summary counts) with the largest |error|, or nullptr.
const ValidationRow* widest_miss(const std::vector<ValidationRow>& rows);
// "fast" when the prediction runs faster than the published run (a shorter time, a higher rate), else "slow".
const char* miss_direction(const ValidationRow& r);

std::string validation_markdown(const std::vector<ValidationRow>& rows);
std::string validation_text(const std::vector<ValidationRow>& rows);

}  // namespace mc::perf
