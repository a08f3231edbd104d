// reference_gpt.h - the lab's GPT once more, written to be read top to bottom: one worker, one
// micro-batch, plain loops in double precision, no threads, no kernels table, no parallel layout.
//
// It is the yardstick for the production path (stage.cpp on a compute device: the CPU reference's ops.cpp,
// or the CUDA kernels, through device/compute.h): tests/unit/reference_gpt_test.cpp checks
//   1. this file against a golden file of loss, logits and gradients that PyTorch computed
//      (tools/golden/reference_gpt_golden.py; tests/data/golden/reference_gpt.json), and
//   2. the production path against this file and against the same golden file,
// so the training math is checked by an implementation outside this codebase, as llm.c checks its C
// against tensors dumped by PyTorch.
//
//   mc::train::ModelConfig m{.vocab = 24, .context = 6, .layers = 2, .width = 8, .heads = 2};
//   std::vector<float> p = mc::train::init_full_model(m, 1);        // make_layout(m, 1,0,1,0,1)'s order
//   auto r = mc::train::reference::forward_backward(m, p, tokens, B);  // tokens: B rows of T+1 ids
//   r.loss; r.logits[(b*T + t)*V + v]; r.grads[same flat offsets as p];
#pragma once

#include "train/train.h"

#include <cstdint>
#include <vector>

namespace mc::train::reference {

struct Pass {
  double loss = 0;             // mean cross-entropy over the B*T predicted tokens, nats
  std::vector<double> logits;  // (B, T, V), before the softmax
  std::vector<double> grads;   // d loss / d params, in the flat order of the params given
};

// params: the whole model in the flat order of make_layout(m, 1, 0, 1, 0, 1) (what init_full_model and
// Trainer::full_parameters return). tokens: B rows of T+1 ids < V; row b predicts tokens[b][1..T] from
// tokens[b][0..T-1]. Throws std::invalid_argument when the sizes do not fit the config.
Pass forward_backward(const ModelConfig& m, const std::vector<float>& params, const std::vector<int32_t>& tokens,
                      int B);

}  // namespace mc::train::reference
