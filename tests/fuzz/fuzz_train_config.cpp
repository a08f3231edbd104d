// fuzz_train_config.cpp - libFuzzer harness of the training lab's config (engine/train/config.cpp): parse,
// validate (layout rules and the memory limit), and for a config small enough to be quick, build the
// trainer and take one step on a fixed text. Invariants: to_json(parse(x)) parses back to the same config
// (what `train --json` prints can be fed back); a config that validates builds a trainer.
#include "fuzz_common.h"
#include "train/train.h"

#include <cmath>

MC_FUZZ_TARGET(train_config) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mc::fuzz::expect_refusal_or_success("train config", [&] {
    const mc::JsonDoc doc = mc::JsonDoc::parse(text, "fuzz-train.json");
    const mc::train::TrainConfig c = mc::train::parse_config(doc);
    const nlohmann::json j = mc::train::to_json(c);
    if (mc::train::to_json(mc::train::parse_config(j, "round trip")) != j)
      mc::fuzz::finding("to_json(parse_config(x)) does not parse back to itself");
    const double bytes = mc::train::estimate_worker_bytes(c);
    if (!(bytes > 0) || !std::isfinite(bytes)) mc::fuzz::finding("estimate_worker_bytes not positive and finite");
    mc::train::validate(c);
    // One step of a small model only (a few MB and a few milliseconds): the harness must stay fast.
    const double flops = double(c.batch) * c.model.context * c.model.width * c.model.width * c.model.layers;
    if (bytes * c.parallel.workers() > 8e6 || flops > 2e7 || c.parallel.workers() > 8) return;
    static const std::string corpus = mc::train::default_corpus().substr(0, 64 * 1024);
    mc::train::TrainConfig small = c;
    small.device = "cpu";
    mc::train::Trainer t(small, corpus);
    const mc::train::StepResult r = t.step();
    if (r.step != 1) mc::fuzz::finding("the first step is not step 1");
  });
  return 0;
}
