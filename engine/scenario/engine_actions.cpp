// engine_actions.cpp - scenario actions that run the analytic model (engine/perf), the simulator
// (engine/sim) and the training lab (engine/train) on the scenario's configs.
#include "catalog/catalog.h"
#include "perf/perf.h"
#include "scenario/actions.h"
#include "scenario/animation_actions.h"
#include "sim/sim.h"
#include "train/scaling.h"
#include "train/storage/corpus.h"
#include "train/train.h"

#include <algorithm>
#include <stdexcept>

namespace mc::scenario {
namespace {

void validate_as(const JsonCursor& a) {
  if (auto as = a.get("as")) {
    std::string n = as->string();
    if (n.empty() || n.find('.') != std::string::npos) as->fail("a result name is non-empty and has no '.'");
  }
}

const Catalog& need_catalog(const ActionContext& ctx, const char* what) {
  if (!ctx.catalog) throw std::runtime_error(std::string(what) + " needs the catalog");
  return *ctx.catalog;
}

void store(ActionContext& ctx, const std::string& name, json value) {
  ctx.state->results[name] = std::move(value);
  ctx.produced.push_back(name);
}

}  // namespace

void register_engine_actions(ActionRegistry& reg) {
  register_animation_actions(reg);  // "collective", "pipeline" (animation_actions.h)
  reg.add({"scaling",
           "the lab's predictable-scaling sweep on the \"scaling\" config: train the small widths, fit L(C), predict "
           "the larger one, then train it",
           {"as"},
           [](const JsonCursor& a, const Catalog*) { validate_as(a); },
           [](const json& a, ActionContext& ctx) {
             const json& c = ctx.state->configs["scaling"];
             train::ScalingConfig cfg = train::scaling_config_from_json(c, "scenario config \"scaling\"");
             const train::Corpus corpus = train::resolve_corpus(train::scaling_corpus(c));
             cfg.corpus_entropy_nats_per_byte = corpus.entropy_nats_per_byte;
             train::ScalingSweep sweep(cfg, corpus.text);
             while (!sweep.done()) sweep.advance(1000);
             ctx.state->engine_calls["scaling"] = EngineCall{.config = c, .made_from = c};
             store(ctx, a.value("as", std::string("scaling")), train::sweep_summary_json(sweep.result()));
           }});
  reg.add({"estimate",
           "run the analytic model on the \"estimate\" config",
           {"as"},
           [](const JsonCursor& a, const Catalog*) { validate_as(a); },
           [](const json& a, ActionContext& ctx) {
             const Catalog& cat = need_catalog(ctx, "estimate");
             store(ctx, a.value("as", std::string("estimate")),
                   perf::estimate_json(cat, ctx.state->configs["estimate"], "scenario config \"estimate\""));
           }});
  reg.add({"search",
           "rank every layout for the \"estimate\" config's model and cluster",
           {"as", "max_results"},
           [](const JsonCursor& a, const Catalog*) {
             validate_as(a);
             if (a.has("max_results")) (void)a["max_results"].integer_in(1, 1000);
           },
           [](const json& a, ActionContext& ctx) {
             const Catalog& cat = need_catalog(ctx, "search");
             perf::SearchOptions o;
             o.max_results = int(a.value("max_results", 10));
             json r = perf::search_json(cat, ctx.state->configs["estimate"], o, "scenario config \"estimate\"");
             r.erase("elapsed_s");  // wall-clock time would make the digest non-deterministic
             store(ctx, a.value("as", std::string("search")), r);
           }});
  reg.add({"simulate",
           "run the simulator on the \"simulate\" config (seeded)",
           {"as", "run_days"},
           [](const JsonCursor& a, const Catalog*) {
             validate_as(a);
             if (a.has("run_days")) (void)a["run_days"].number_in(0, sim::kMaxRunDays);
           },
           [](const json& a, ActionContext& ctx) {
             const Catalog& cat = need_catalog(ctx, "simulate");
             sim::SimOptions o;
             o.run_days = a.value("run_days", 0.0);
             // The scenario's seed, as for the lab: two runs of one scenario see the same failure history, so
             // a step that changes one setting (the checkpoint interval) compares like with like (common
             // random numbers) and the difference in goodput is the setting's alone.
             o.seed = ctx.scenario_seed;
             o.include_link_series = false;
             o.timeline_gpu = -1;
             json r = sim::simulate_json(cat, ctx.state->configs["simulate"], o, "scenario config \"simulate\"");
             ctx.state->engine_calls["simulate"] = EngineCall{.config = ctx.state->configs["simulate"],
                                                              .made_from = ctx.state->configs["simulate"],
                                                              .seed = o.seed,
                                                              .run_days = o.run_days};
             // Wall-clock figures of the simulator itself would make the digest differ run to run.
             for (const char* part : {"sim", "run"})
               if (r.contains(part) && r[part].is_object())
                 for (const char* k : {"wall_s", "events_per_s", "elapsed_s"}) r[part].erase(k);
             store(ctx, a.value("as", std::string("simulate")), r);
           }});
  reg.add({"train",
           "run N real training steps in the training lab on the \"train\" config",
           {"as", "steps"},
           [](const JsonCursor& a, const Catalog*) {
             validate_as(a);
             if (a.has("steps")) (void)a["steps"].integer_in(1, 2000);
           },
           [](const json& a, ActionContext& ctx) {
             json c = ctx.state->configs["train"];
             if (a.contains("steps")) c["steps"] = a["steps"];
             // The scenario's seed, not the per-action one: two lab runs in a scenario compare like with like.
             if (!c.contains("seed")) c["seed"] = ctx.scenario_seed;
             // The CPU reference unless the scenario asks: a replay's numbers (and its digest) must not
             // depend on whether the machine playing it has a GPU.
             if (!c.contains("device")) c["device"] = "cpu";
             json r = train::run_json(c);
             ctx.state->engine_calls["train"] = EngineCall{.config = c, .made_from = ctx.state->configs["train"]};
             // Wall-clock figures differ run to run; keep only what the seed determines.
             for (const char* k : {"wall_s", "tokens_per_s", "tokens_per_s_median_step", "step_seconds", "gflops",
                                   "sgemm_path", "sgemm_gflops", "sgemm_shape", "threads", "device_note"})
               r.erase(k);
             const json& cfg = r["config"];
             const double tokens =
                 double(r.value("steps_run", 0)) * cfg.value("batch", 0) * cfg["model"].value("context", 0);
             r["tokens_trained"] = tokens;
             r["train_flops"] = tokens * r.value("flops_per_token", 0.0);
             store(ctx, a.value("as", std::string("train")), r);
           }});
}

}  // namespace mc::scenario
