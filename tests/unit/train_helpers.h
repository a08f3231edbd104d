// train_helpers.h - the production forward (and backward) pass of one worker on one micro-batch
// (stage.cpp on a device, device/compute.h), shared by the tests that check the training math against
// something outside it: finite differences (train_grad_test) and PyTorch's golden file (reference_gpt_test).
#pragma once

#include "train/kernels/cpu_device.h"
#include "train/model/worker.h"

#include <cstdint>
#include <vector>

namespace mc::test {

struct OneWorkerPass {
  double loss = 0;           // mean cross-entropy over the B*T predicted tokens
  std::vector<float> grads;  // d loss / d params (empty without the backward pass)
};

// tokens: B rows of context + 1 ids; params in make_layout(m, 1, 0, 1, 0, 1)'s order; dev null = a fresh
// CPU reference device. Parameters go up, the loss and gradients come back.
inline OneWorkerPass one_worker_pass(const train::ModelConfig& m, const std::vector<float>& params,
                                     const std::vector<int32_t>& tokens, int B, bool backward = true,
                                     device::Device* dev = nullptr) {
  train::CpuDevice cpu;
  device::Device& d = dev ? *dev : cpu;
  OneWorkerPass out;
  {
    train::Comm comm(1);
    comm.set_device(&d);
    train::Worker w;
    w.lay = train::make_layout(m, 1, 0, 1, 0, 1);
    w.allocate_state(d, w.lay.padded, w.lay.padded, 0, 0, 0);
    d.upload(w.params, params.data(), int64_t(params.size()));
    w.set_tokens(tokens.data(), int64_t(tokens.size()));
    train::StepContext c;
    c.model = &m;
    c.micro_batch_size = B;
    c.local_batch = B;
    c.global_batch = B;
    std::vector<train::Worker*> g{&w};
    std::vector<std::vector<int>> ids{{0}};
    train::stage_forward(comm, g, ids, 0, c);
    if (backward) {
      train::stage_backward(comm, g, ids, 0, c);
      out.grads.resize(params.size());
      d.download(out.grads.data(), device::DPtr<const float>(w.grads), int64_t(params.size()));
    }
    double loss = 0;
    d.download(&loss, device::DPtr<const double>(w.scalars.ptr()), 1);
    out.loss = loss / double(B * m.context);
  }
  return out;
}

}  // namespace mc::test
