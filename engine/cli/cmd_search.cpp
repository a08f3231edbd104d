// `megacluster search CONFIG.json|-`: every parallel layout of the config's model on its cluster, ranked
// by time to train, with counts and examples of rejected layouts and why they fail.
#include "catalog/catalog.h"
#include "cli/cli.h"
#include "core/paths.h"
#include "perf/perf.h"

#include <cstdio>

namespace {

int run_search(mc::cli::Args& a) {
  auto assets = a.option("--assets");
  mc::perf::SearchOptions o;
  o.max_results = int(a.option_int("--top", 20, 1, 100000));
  o.max_micro_batch = int(a.option_int("--max-micro-batch", 16, 1, 1024));
  const bool all = a.flag("--include-unfit");
  o.only_fitting = !all;
  auto pos = a.positionals();
  if (pos.size() != 1) throw mc::cli::UsageError("give exactly one CONFIG.json (or - for standard input)");
  mc::Catalog cat = mc::load_catalog(assets ? *assets : mc::find_assets_dir(a.exe_path()));
  const std::string name = pos[0] == "-" ? "<stdin>" : pos[0];
  mc::JsonDoc doc = mc::JsonDoc::parse(mc::cli::read_input(pos[0]), name, mc::kMaxConfigBytes);
  const mc::perf::Config c = mc::perf::parse_config(cat, doc, false);
  std::printf("%s\n", mc::perf::to_json(mc::perf::search(c, o), c).dump(2).c_str());
  return 0;
}

mc::cli::Registrar reg{{"search", "rank every parallel layout of a model on a cluster (and say why others fail)",
                        "megacluster search CONFIG.json|- [--top N] [--max-micro-batch N] [--include-unfit] "
                        "[--assets DIR]",
                        run_search}};

}  // namespace
