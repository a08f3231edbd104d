// fuzz_catalog.cpp - libFuzzer harness of the catalog's files (engine/catalog/catalog.cpp): the input as
// one table file (gpus.json, clusters.json, ...) checked against the shipped sources, and as the sources
// file itself. Invariants: an accepted table's records have ids, each id once; every value cites a source
// that exists; display_value and to_json work on whatever was accepted.
#include "fuzz_common.h"

#include <set>

MC_FUZZ_TARGET(catalog) {
  const std::string path = mc::fuzz::scratch_file(data, size, ".json");
  const mc::Catalog& cat = mc::fuzz::catalog();
  mc::fuzz::expect_refusal_or_success("table", [&] {
    const mc::Table t = mc::load_table(path, cat.sources);
    std::set<std::string> ids;
    for (const mc::Record& r : t.records) {
      if (!ids.insert(r.id).second) mc::fuzz::finding("a table accepted with the id \"" + r.id + "\" twice");
      for (const auto& [key, v] : r.values) {
        const mc::FieldDef* f = t.field(key);
        (void)mc::display_value(v, f ? f->unit : "");
        (void)mc::to_json(v).dump();
      }
    }
  });
  mc::fuzz::expect_refusal_or_success("sources", [&] {
    const std::vector<mc::Source> s = mc::load_sources(path);
    (void)s.size();
  });
  return 0;
}
