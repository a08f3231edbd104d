// comm_volume.cpp - bytes per worker of ring collectives and of the data, tensor and pipeline parallel
// traffic of one iteration (comm_volume.h; Rajbhandari et al. 2020 Sec. 7, Narayanan et al. 2021 Sec. 3).
#include "perf/comm_volume.h"

namespace mc::perf {

CollectiveVolume ring_reduce_scatter(double n, int p) {
  if (p <= 1) return {};
  return {n * double(p - 1) / double(p), double(p - 1)};
}

CollectiveVolume ring_all_gather(double n, int p) { return ring_reduce_scatter(n, p); }

CollectiveVolume ring_all_reduce(double n, int p) {
  CollectiveVolume a = ring_reduce_scatter(n, p), b = ring_all_gather(n, p);
  return {a.bytes_sent_per_rank + b.bytes_sent_per_rank, a.messages_per_rank + b.messages_per_rank};
}

CollectiveVolume dp_gradient_volume(double shard_params, double grad_bytes, int dp, int zero_stage) {
  const double n = shard_params * grad_bytes;
  CollectiveVolume v = ring_all_reduce(n, dp);  // stages 0-2: reduce-scatter + all-gather
  if (zero_stage >= 3) {
    CollectiveVolume g = ring_all_gather(n, dp);  // the extra parameter gather of stage 3
    v.bytes_sent_per_rank += g.bytes_sent_per_rank;
    v.messages_per_rank += g.messages_per_rank;
  }
  return v;
}

CollectiveVolume tp_layer_volume(double b, double s, double h, double bytes, int t, bool recompute) {
  CollectiveVolume one = ring_all_reduce(b * s * h * bytes, t);
  const double count = recompute ? 6.0 : 4.0;
  return {one.bytes_sent_per_rank * count, one.messages_per_rank * count};
}

double pp_boundary_bytes(double b, double s, double h, double bytes) { return b * s * h * bytes; }

}  // namespace mc::perf
