// `megacluster scaling`: the predictable-scaling sweep. Trains several sizes with the same token budget,
// fits L(C) = a C^b + c, predicts a larger run, trains it and prints prediction against result.
#include "cli/cli.h"
#include "core/format.h"
#include "train/scaling.h"
#include "train/storage/corpus.h"

#include <cmath>
#include <cstdio>

namespace {

int run_scaling(mc::cli::Args& a) {
  const bool as_json = a.flag("--json");
  const bool quick = a.flag("--quick");
  const bool quiet = a.flag("--quiet");
  auto steps = a.option("--steps");
  auto corpus = a.option("--corpus");
  const long long seed = a.option_int("--seed", 1, 0, 1ll << 53);
  a.finish();
  mc::train::ScalingConfig cfg = quick ? mc::train::ScalingConfig::quick() : mc::train::ScalingConfig{};
  cfg.seed = uint64_t(seed);
  if (steps) {
    mc::cli::Args one(a.command(), {"--steps", *steps}, a.exe_path());
    cfg.steps = int(one.option_int("--steps", cfg.steps, 10, 1000000));
  }
  const mc::train::Corpus text = mc::train::resolve_corpus(corpus ? *corpus : "default");
  cfg.corpus_entropy_nats_per_byte = text.entropy_nats_per_byte;  // known for the synthetic language only
  mc::train::ScalingSweep sweep(cfg, text.text);
  while (!sweep.done()) {
    sweep.advance(10);
    if (!quiet) mc::cli::progress_bar(sweep.done() ? 1.0 : sweep.progress(), sweep.current_label());
  }
  const mc::train::ScalingResult& r = sweep.result();
  if (as_json) {
    std::printf("%s\n", mc::train::to_json(r).dump(2).c_str());
    return 0;
  }
  std::printf("sweep: %d steps x %d sequences x %d bytes for every size\n", cfg.steps, cfg.batch, cfg.context);
  std::printf("  %6s %10s %14s %10s %12s\n", "width", "params", "compute", "loss", "fit L(C)");
  for (const auto& p : r.points)
    std::printf("  %6d %10lld %14s %10.4f %12.4f\n", p.width, (long long)p.params,
                mc::format_quantity(p.compute_flops, "FLOP").c_str(), p.loss, r.fit_compute(p.compute_flops));
  std::printf("fit: L(C) = %.4g * C^%.4f + %.4f  (rms %.4f nats%s)\n", r.fit_compute.a, r.fit_compute.b,
              r.fit_compute.c, r.fit_compute.rms_error, r.c_known ? "; c = the corpus entropy, known" : "");
  std::printf("     L(N) = %.4g * N^%.4f + %.4f  (N: non-embedding parameters)\n", r.fit_params.a, r.fit_params.b,
              r.fit_params.c);
  if (r.c_known)
    std::printf("     with c fitted too: L(C) = %.4g * C^%.4f + %.4f  (rms %.4f nats)\n", r.fit_compute_free_c.a,
                r.fit_compute_free_c.b, r.fit_compute_free_c.c, r.fit_compute_free_c.rms_error);
  if (r.entropy_floor > 0) std::printf("corpus entropy (true irreducible loss): %.4f nats/byte\n", r.entropy_floor);
  const double got = r.target.loss;
  auto err = [got](double pred) { return 100.0 * (pred - got) / got; };
  std::printf("prediction for width %d (%lld params, %s), made before it trained:\n", r.target.width,
              (long long)r.target.params, mc::format_quantity(r.target.compute_flops, "FLOP").c_str());
  std::printf("  from L(C)            %.4f  (error %+.1f%%)\n", r.predicted_loss, err(r.predicted_loss));
  std::printf("  from L(N)            %.4f  (error %+.1f%%)\n", r.predicted_loss_params, err(r.predicted_loss_params));
  if (r.c_known)
    std::printf("  from L(C), c fitted  %.4f  (error %+.1f%%)\n", r.predicted_loss_free_c,
                err(r.predicted_loss_free_c));
  std::printf("trained:               %.4f\n", got);
  return 0;
}

mc::cli::Registrar reg{{"scaling", "predictable scaling: fit L(C) on small runs, predict a larger one, then train it",
                        "megacluster scaling [--quick] [--steps N] [--seed N] [--corpus FILE] [--quiet] [--json]",
                        run_scaling}};

}  // namespace
