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
  auto assets = a.option("--assets");
  a.finish();
  const std::string dir = assets ? *assets : mc::find_assets_dir(a.exe_path());
  mc::Catalog cat = mc::load_catalog(dir);
  const std::string path = cases ? *cases : dir + "/../tests/data/validation/public-cases.json";
  if (!mc::file_exists(path))
    throw mc::cli::UsageError("no cases file at " + path + "; pass --cases PATH (tests/data/validation/public-cases.json)");
  const auto rows = mc::perf::validate_cases(cat, path);
  std::fputs((markdown ? mc::perf::validation_markdown(rows) : mc::perf::validation_text(rows)).c_str(), stdout);
  for (const auto& r : rows)
    if (!r.within) return 1;
  return 0;
}

mc::cli::Registrar reg{{"validate", "compare the performance model with published measurements (error table)",
                        "megacluster validate [--markdown] [--cases FILE] [--assets DIR]", run_validate}};

}  // namespace
