// screen_basis.cpp - what each screen assumes about a run, one line each, read from the state
// (screen_basis.h).
#include "ui/screen_basis.h"

#include "capital/compute_cost.h"
#include "catalog/accelerator.h"
#include "core/format.h"
#include "ui/widgets.h"

#include <cmath>
#include <cstdio>
#include <deque>

namespace mc::ui {

std::string price_basis(const Catalog& cat, double usd_per_gpu_hour, const std::string& gpu) {
  const Table* t = cat.table("prices");
  if (!t || !(usd_per_gpu_hour > 0)) return "";
  // Two rows may have the same price ($1.00: a TPU v3 core-hour in 2019, an A100-hour in 2022): the row of
  // the accelerator priced wins, named by its hour ("TPU v3 core-hour") or, for a GPU, any row not a TPU's.
  const AcceleratorWords w = accelerator_words(&cat, gpu);
  const Record* best = nullptr;
  int best_rank = -1;
  for (const Record& r : t->records) {
    const Sourced* p = r.find("usd_per_gpu_hour");
    if (!p || std::abs(p->value - usd_per_gpu_hour) > 1e-9 * usd_per_gpu_hour) continue;
    const bool tpu_row = r.name.find("TPU") != std::string::npos;
    const int rank = gpu.empty() ? 0 : r.name.find(w.hour) != std::string::npos ? 2 : tpu_row != w.is_gpu ? 1 : 0;
    if (rank > best_rank) best = &r, best_rank = rank;
  }
  if (!best) return "";
  const Source* so = cat.source(best->find("usd_per_gpu_hour")->source);
  return best->name + (so && !so->publisher.empty() ? ", per " + so->publisher : "");
}

namespace {

std::string price_words(const Catalog& cat, double usd, const std::string& gpu) {
  const std::string basis = price_basis(cat, usd, gpu);
  // Per the accelerator's own hour ("TPU v3 chip-hour"), as the panels price it.
  return format_usd(usd) + " per " + accelerator_words(&cat, gpu).hour +
         (basis.empty() ? " (set in the config, not a catalog price)" : " (" + basis + ")");
}

std::string gpus_words(const Catalog& cat, const std::string& gpu, double n) {
  const AcceleratorWords w = accelerator_words(&cat, gpu);
  return with_thousands(n) + " " + (n == 1 ? w.one : w.many);
}

}  // namespace

namespace {

// The estimate config (and its estimate) of a panel's request, computed once per config: the lines must not
// depend on which panels were drawn before (a link to a step and the steps before it show the same screen),
// so they come from each panel's config, never from results a visit left behind.
struct Parsed {
  bool ok = false;
  perf::Config config;
  perf::Estimate estimate;
};
const Parsed& parsed(const Catalog& cat, const perf::Request& config, bool with_estimate) {
  struct Entry {
    const Catalog* cat;
    bool with_estimate;
    perf::Request config;
    Parsed parsed;
  };
  static std::deque<Entry> cache;  // appending keeps the references handed out valid
  for (const Entry& e : cache)
    if (e.cat == &cat && e.with_estimate == with_estimate && e.config == config) return e.parsed;
  if (cache.size() > 64) cache.clear();  // a class moving a slider makes a config a frame
  Parsed p;
  try {
    p.config = perf::parse_config(cat, config, "screen basis");
    if (with_estimate) p.estimate = perf::estimate(p.config);
    p.ok = true;
  } catch (const std::exception&) {
    // The panel itself says why its config is refused; it then has no basis to compare.
  }
  cache.push_back({&cat, with_estimate, config, std::move(p)});
  return cache.back().parsed;
}

}  // namespace

std::vector<ScreenBasis> screen_bases(const ExplorerState& s) {
  std::vector<ScreenBasis> out;
  if (!s.catalog) return out;
  const Catalog& cat = *s.catalog;
  auto add = [&](const char* id, const std::string& gpu, std::string line) {
    const Panel* p = find_panel(id);
    out.push_back({id, p ? p->title : id, gpu, std::move(line)});
  };
  char b[512];
  if (const Parsed& p = parsed(cat, s.perf.config, true); p.ok) {
    const perf::Config& c = p.config;
    const perf::Layout& L = c.layout;
    std::snprintf(b, sizeof b, "%s in the layout %s, MFU %s estimated from it",
                  gpus_words(cat, c.cluster.gpu, double(c.cluster.gpus())).c_str(), L.degrees().c_str(),
                  format_percent(p.estimate.mfu).c_str());
    std::string line = b;
    if (c.cluster.price_per_gpu_hour_usd > 0)
      line += ", " + price_words(cat, c.cluster.price_per_gpu_hour_usd, c.cluster.gpu);
    add("perf", c.cluster.gpu, line);
  }
  try {
    const capital::PlanConfig c = capital_plan(cat, s.capital);
    std::snprintf(b, sizeof b, "%s at an assumed MFU of %.2f, ", gpus_words(cat, c.gpu, c.cluster_gpus).c_str(),
                  c.utilisation);
    std::string line = b;
    if (c.pricing == capital::Pricing::rent)
      line += price_words(cat, c.rent_usd_per_gpu_hour, c.gpu);
    else
      line += format_usd(capital::build_cost(c.build).usd_per_gpu_hour) + " per " +
              accelerator_words(&cat, c.gpu).hour + " to build and run";
    add("capital", c.gpu, line);
  } catch (const std::exception&) {
    // The Capital panel shows why its config is refused; it then assumes nothing to compare.
  }
  if (const Parsed& p = parsed(cat, s.sim.config.estimate, false); p.ok) {
    const perf::Config& c = p.config;
    const perf::Layout& L = c.layout;
    std::snprintf(b, sizeof b, "%s simulated event by event (%s), with their waits",
                  gpus_words(cat, c.cluster.gpu, double(c.cluster.gpus())).c_str(), L.degrees().c_str());
    add("sim", c.cluster.gpu, b);
    // Not its "days at most" (a view setting a scenario step leaves behind): the line must read the same
    // however the step was reached.
    std::snprintf(b, sizeof b, "%s (%s) over a whole run, with failures, restarts and checkpoints",
                  gpus_words(cat, c.cluster.gpu, double(c.cluster.gpus())).c_str(), L.degrees().c_str());
    add("run", c.cluster.gpu, b);
  }
  return out;
}

void draw_screen_basis(ExplorerState& s, const std::string& id) {
  for (const ScreenBasis& b : screen_bases(s))
    if (b.panel == id) {
      wrapped_text(true, "This screen assumes %s.", b.line.c_str());
      track(s, id + ".basis");
    }
}

void draw_other_screens(ExplorerState& s, const std::string& id) {
  const std::vector<ScreenBasis> all = screen_bases(s);
  const ScreenBasis* self = nullptr;
  for (const ScreenBasis& b : all)
    if (b.panel == id) self = &b;
  // Only screens of the same accelerator are the same run: a TPU estimate is not compared with V100 prices.
  std::string others;
  for (const ScreenBasis& b : all)
    if (self && &b != self && b.gpu == self->gpu) others += (others.empty() ? "" : "; ") + b.title + ": " + b.line;
  if (others.empty()) return;
  ImGui::Spacing();
  wrapped_text(true, "Why other screens give other days and dollars for this run: they assume other machines. %s.",
               others.c_str());
  track(s, id + ".other_screens");
}

}  // namespace mc::ui
