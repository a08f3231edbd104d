// fit_layout.cpp - the nearest parallel layout a machine of a given size can run (fit_layout.h).
#include "perf/fit_layout.h"

#include <algorithm>

namespace mc::perf {

std::optional<FittedLayout> fit_layout(const Config& c, long long machine_gpus) {
  const int gpn = std::max(1, c.cluster.gpus_per_node);
  const Layout& want = c.layout;
  for (int tp = std::max(1, want.tp); tp >= 1; tp /= 2) {
    for (int pp = std::max(1, want.pp); pp >= 1; pp /= 2) {
      const long long tpp = (long long)tp * std::max(1, want.cp) * pp;  // the context-parallel degree kept
      if (tpp > machine_gpus) continue;
      // Largest dp first: the most GPUs of the machine. The cheap rules (whole nodes, the batch splits
      // into micro-batches) are checked here; layout_problems has the last word (heads, interleaving).
      for (long long dp = machine_gpus / tpp; dp >= 1; --dp) {
        const long long n = tpp * dp;
        if (n % gpn != 0) continue;
        if (want.global_batch % ((long long)std::max(1, want.micro_batch) * dp) != 0) continue;
        Config t = c;
        t.layout.tp = tp, t.layout.pp = pp, t.layout.dp = int(dp);
        if (!t.layout.layers_per_stage.empty() && int(t.layout.layers_per_stage.size()) != pp)
          t.layout.layers_per_stage.clear();  // an explicit split is per stage: another pp splits evenly
        t.cluster.nodes = int(n / gpn);
        if (layout_problems(t).empty()) return FittedLayout{t.layout, n};
      }
    }
    if (tp == 1) break;
  }
  return std::nullopt;
}

}  // namespace mc::perf
