// fuzz_perf_config.cpp - libFuzzer harness of the analytic model's config (`megacluster estimate` and
// `search`, engine/perf/perf_config.cpp): parse, check the layout, estimate, replay the pipeline schedule,
// and search the layouts. Invariants: a parsed cluster has GPUs; the search keeps no more than asked.
#include "fuzz_common.h"
#include "perf/perf.h"

#include <cmath>

MC_FUZZ_TARGET(perf_config) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const mc::Catalog& cat = mc::fuzz::catalog();
  mc::fuzz::expect_refusal_or_success("estimate", [&] {
    const mc::JsonDoc doc = mc::JsonDoc::parse(text, "fuzz-estimate.json");
    const mc::perf::Config c = mc::perf::parse_config(cat, doc, true);
    if (c.cluster.gpus() <= 0) mc::fuzz::finding("a parsed cluster without GPUs");
    if (!mc::perf::layout_problems(c).empty()) return;
    const mc::perf::Estimate e = mc::perf::estimate(c);
    const mc::json j = mc::perf::to_json(e, c);
    (void)j.dump();
    (void)mc::perf::pipeline_timeline(c, e, 2000);
  });
  mc::fuzz::expect_refusal_or_success("search", [&] {
    const mc::JsonDoc doc = mc::JsonDoc::parse(text, "fuzz-search.json");
    const mc::perf::Config c = mc::perf::parse_config(cat, doc, false);
    mc::perf::SearchOptions o;
    o.max_results = 3;
    o.max_rejected = 3;
    o.max_micro_batch = 4;  // fewer choices per layout than the CLI's search: one execution stays fast
    o.max_virtual_stages = 2;
    const mc::perf::SearchResult r = mc::perf::search(c, o);
    if (r.ranked.size() > 3 || r.rejected.size() > 3) mc::fuzz::finding("search kept more than it was asked to");
    (void)mc::perf::to_json(r, c).dump();
  });
  return 0;
}
