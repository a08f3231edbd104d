// fit_layout.h - the parallel layout a machine of a given size can run, nearest the one asked for. The
// explorer's nodes slider offers any machine size; the layout follows it (as `megacluster search` does,
// which estimates the GPUs a layout uses, up to the cluster's), so no position of the slider is refused.
#pragma once

#include "perf/perf.h"

#include <optional>

namespace mc::perf {

struct FittedLayout {
  Layout layout;       // c's layout with tp, pp kept where they fit and dp the largest that runs
  long long gpus = 0;  // tp*pp*dp: the GPUs the layout uses, at most the machine's
};

// The layout using the most GPUs of a machine of `machine_gpus` (whole nodes of c.cluster.gpus_per_node)
// that layout_problems accepts: c's tp and pp where tp*pp fits (else pp halved, then tp halved: the
// fewest changes to what the user chose), dp the largest that divides the global batch with the
// micro-batch. nullopt when no layout runs (a global batch smaller than any dp, say).
std::optional<FittedLayout> fit_layout(const Config& c, long long machine_gpus);

}  // namespace mc::perf
