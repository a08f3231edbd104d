// `megacluster catalog`: the hardware and systems catalog, as a text table or as JSON.
#include "catalog/catalog.h"
#include "cli/cli.h"
#include "core/format.h"
#include "core/paths.h"

#include <algorithm>
#include <cstdio>

namespace {

int run_catalog(mc::cli::Args& a) {
  bool as_json = a.flag("--json");
  auto only = a.option("--table");
  auto assets = a.option("--assets");
  a.finish();
  mc::Catalog cat = mc::load_catalog(assets ? *assets : mc::find_assets_dir(a.exe_path()));
  if (only && !cat.table(*only)) {
    std::string names;
    for (const auto& t : cat.tables) names += " " + t.name;
    throw mc::cli::UsageError("no table \"" + *only + "\"; tables are:" + names);
  }
  if (as_json) {
    mc::json j = mc::to_json(cat);
    if (only) {
      mc::json t = j["tables"][*only];
      j["tables"] = mc::json::object({{*only, t}});
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  for (const auto& t : cat.tables) {
    if (only && t.name != *only) continue;
    std::printf("== %s (%s, %zu records)\n", t.title.c_str(), t.name.c_str(), t.records.size());
    int label_width = 28;  // the longest label of the table, so its values line up
    for (const auto& f : t.fields) label_width = std::max(label_width, int(f.label.size()));
    for (const auto& r : t.records) {
      std::printf("  %-22s %s\n", r.id.c_str(), r.name.c_str());
      for (const auto& f : t.fields) {
        const mc::Sourced* s = r.find(f.key);
        if (!s) continue;
        std::printf("      %-*s %-16s %-9s %s\n", label_width, f.label.c_str(), mc::display_value(*s, f.unit).c_str(),
                    mc::to_string(s->confidence), s->source.c_str());
      }
    }
  }
  std::printf("(%zu sources; `megacluster catalog --json` for everything, with notes and URLs)\n", cat.sources.size());
  return 0;
}

mc::cli::Registrar reg{{"catalog", "print the hardware/systems catalog with each value's source and confidence",
                        "megacluster catalog [--json] [--table NAME] [--assets DIR]", run_catalog}};

}  // namespace
