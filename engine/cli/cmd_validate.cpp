// `megacluster validate`: the performance model against published numbers, as a table (or Markdown,
// which is what docs/validation.md holds). Exits 1 if a case is outside its tolerance.
#include "catalog/catalog.h"
#include "cli/cli.h"
#include "core/paths.h"
#include "perf/validate.h"

#include <cstdio>

namespace {

int run_validate(mc::cli::Args& a) {
  const bool markdown = a.flag("--markdown");
  auto cases = a.option("--cases");
  auto runs = a.option("--runs");
  auto setups = a.option("--setups");
  auto assets = a.option("--assets");
  auto show = a.option("--config");
  a.finish();
  const std::string dir = assets ? *assets : mc::find_assets_dir(a.exe_path());
  mc::Catalog cat = mc::load_catalog(dir);
  const std::string data = dir + "/../tests/data/validation/";
  const std::string path = cases ? *cases : data + "public-cases.json";
  if (!mc::file_exists(path))
    throw mc::cli::UsageError("no cases file at " + path +
                              "; pass --cases PATH (tests/data/validation/public-cases.json)");
  if (show) {  // the `megacluster estimate` config a published run becomes
    const std::string runs_path = runs ? *runs : data + "more-public-cases.json";
    const std::string setups_path = setups ? *setups : data + "run-setups.json";
    const mc::json cases = mc::JsonDoc::load(runs_path).value();
    const mc::json setup_doc = mc::JsonDoc::load(setups_path).value();
    for (const mc::json& st : setup_doc.at("runs"))
      if (st.value("id", "") == *show)
        for (const mc::json& c : cases)
          if (c.value("id", "") == *show) {
            std::puts(mc::perf::run_config(cat, c, st, setups_path).dump(2).c_str());
            return 0;
          }
    throw mc::cli::UsageError("no published run \"" + *show + "\" in " + setups_path);
  }
  auto rows = mc::perf::validate_cases(cat, path);
  // The published runs of 2019-2024 unless only --cases was given.
  const std::string runs_path = runs ? *runs : data + "more-public-cases.json";
  const std::string setups_path = setups ? *setups : data + "run-setups.json";
  if (runs || setups || !cases) {
    for (const std::string& f : {runs_path, setups_path})
      if (!mc::file_exists(f))
        throw mc::cli::UsageError("no file at " + f + "; pass --runs more-public-cases.json --setups run-setups.json");
    auto more = mc::perf::validate_runs(cat, runs_path, setups_path);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  std::fputs((markdown ? mc::perf::validation_markdown(rows) : mc::perf::validation_text(rows)).c_str(), stdout);
  for (const auto& r : rows)
    if (!r.within) return 1;
  return 0;
}

mc::cli::Registrar reg{
    {"validate", "compare the performance model with published measurements (error table)",
     "megacluster validate [--markdown] [--cases FILE] [--runs FILE --setups FILE] [--config RUN_ID] [--assets DIR]",
     run_validate}};

}  // namespace
