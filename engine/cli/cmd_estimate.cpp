// `megacluster estimate CONFIG.json|-`: memory, time, throughput, days and dollars of one layout, as one
// JSON object (see engine/perf/perf.h for the keys). Invalid configs exit 1 naming the key and rule.
#include "catalog/catalog.h"
#include "cli/cli.h"
#include "core/paths.h"
#include "perf/perf.h"

#include <cstdio>

namespace {

int run_estimate(mc::cli::Args& a) {
  auto assets = a.option("--assets");
  auto pos = a.positionals();
  if (pos.size() != 1) throw mc::cli::UsageError("give exactly one CONFIG.json (or - for standard input)");
  mc::Catalog cat = mc::load_catalog(assets ? *assets : mc::find_assets_dir(a.exe_path()));
  const std::string name = pos[0] == "-" ? "<stdin>" : pos[0];
  mc::JsonDoc doc = mc::JsonDoc::parse(mc::cli::read_input(pos[0]), name, mc::kMaxConfigBytes);
  const mc::perf::Config c = mc::perf::parse_config(cat, doc, true);
  std::printf("%s\n", mc::perf::to_json(mc::perf::estimate(c), c).dump(2).c_str());
  return 0;
}

mc::cli::Registrar reg{{"estimate", "memory, iteration time, MFU, days and dollars of one training layout",
                        "megacluster estimate CONFIG.json|- [--assets DIR]", run_estimate}};

}  // namespace
