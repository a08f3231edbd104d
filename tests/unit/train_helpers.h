// train_helpers.h - the production forward (and backward) pass of one worker on one micro-batch
// (stage.cpp through an OpsBackend table), shared by the tests that check the training math against
// something outside it: finite differences (train_grad_test) and PyTorch's golden file (reference_gpt_test).
#pragma once

#include "train/kernels/ops_backend.h"
#include "train/model/worker.h"

#include <cstdint>
#include <vector>

namespace mc::test {

struct OneWorkerPass {
  double loss = 0;           // mean cross-entropy over the B*T predicted tokens
  std::vector<float> grads;  // d loss / d params (empty without the backward pass)
};

// tokens: B rows of context + 1 ids; params in make_layout(m, 1, 0, 1, 0, 1)'s order; ops null = the CPU.
inline OneWorkerPass one_worker_pass(const train::ModelConfig& m, const std::vector<float>& params,
                                     const std::vector<int32_t>& tokens, int B, bool backward = true,
                                     const train::OpsBackend* ops = nullptr) {
  train::Comm comm(1);
  train::Worker w;
  w.lay = train::make_layout(m, 1, 0, 1, 0, 1);
  w.params = params;
  w.grads.assign(params.size(), 0.0f);
  train::StepContext c;
  c.model = &m;
  c.tokens = &tokens;
  c.micro_batch_size = B;
  c.local_batch = B;
  c.global_batch = B;
  c.ops = ops;
  std::vector<train::Worker*> g{&w};
  std::vector<std::vector<int>> ids{{0}};
  train::stage_forward(comm, g, ids, 0, c);
  OneWorkerPass out;
  if (backward) {
    train::stage_backward(comm, g, ids, 0, c);
    out.grads = std::move(w.grads);
  }
  out.loss = w.loss_sum / double(B * m.context);
  return out;
}

}  // namespace mc::test
