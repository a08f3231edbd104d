// perf_time_parts.h - the physics perf_time.cpp computes and perf_estimate.cpp composes into estimate()
// (internal to engine/perf: the public model is perf.h).
#pragma once

#include "perf/perf.h"

namespace mc::perf::detail {

double peak_for(const ClusterSpec& c, Precision p);

// One GEMM (batch x [M x K] @ [K x N]) against a tile/wave-quantized roofline, in seconds.
double gemm_time_s(const ClusterSpec& c, double peak, double batch, double M, double N, double K, double bytes);

// One transformer layer's forward kernels on one GPU for one micro-batch, in seconds.
struct LayerTimes {
  double gemm_fwd = 0, attn_core_fwd = 0, elementwise_fwd = 0, attn_elementwise_fwd = 0;
  double every_second_matmul_fwd = 0;  // the 2nd, 4th, ... of q, k, v, out, fc1 (gate), fc2 in call order
  double flops_fwd = 0, gemm_efficiency = 0;
};
LayerTimes layer_times(const Config& cfg, const ClusterSpec& c);

// Parameter tensors, and modules, of one transformer layer as a framework holds them.
int tensors_per_layer(const ModelSpec& m);
int modules_per_layer(const ModelSpec& m);

}  // namespace mc::perf::detail
