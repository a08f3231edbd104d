// units.h - unit constants the engine shares (one copy each).
#pragma once

namespace mc {

// One petaflop/s-day: 1e15 FLOP/s for 86,400 s (Brown et al. 2020, Table D.1 caption).
constexpr double kFlopsPerPfDay = 1e15 * 86400.0;

}  // namespace mc
