// trainer_impl.h - the state behind Trainer (internal to engine/train; checkpoint.cpp reads and writes it).
#pragma once

#include "train/model/worker.h"
#include "train/parallel/comm.h"
#include "train/train.h"

#include <memory>
#include <string>
#include <vector>

namespace mc::train {

struct Trainer::Impl {
  // Where every worker's state lives and its kernels run, chosen once from cfg.device (device/compute.h):
  // the CPU reference or the GPU. Owned per trainer, so its transfer counters are this run's. Declared
  // first: the workers' and mailboxes' buffers below are freed on it.
  std::unique_ptr<device::Device> dev;
  std::string dev_note;
  TrainConfig cfg;
  std::vector<int32_t> train_tokens, eval_tokens;  // bytes of the corpus: first 90% / last 10%
  Rng data_rng;                                    // the data position: which windows the next step reads
  int step = 0;
  std::vector<double> losses;
  Comm comm;
  std::vector<Worker> workers;
  int micro_batches = 1, micro_batch_size = 1, local_batch = 1;
  std::vector<PipelineOp> schedule_log;
  std::unique_ptr<CollectiveBackend> collectives;  // NCCL on 2+ GPUs, else null
  Transport* transport = nullptr;                  // across processes: this one runs worker transport->rank() only
  double last_step_wire_bytes = 0;                 // what this process's transport carried in the last step

  bool local(int worker) const { return !transport || transport->rank() == worker; }
  // The worker whose results this process reports (its own; worker 0 in one process).
  int me() const { return transport ? transport->rank() : 0; }
  // The params and shards of every worker, from their processes (in one process: downloaded from the
  // device). An edge: the host copy of the model.
  std::vector<HostState> gathered_params() const;

  int id(int d, int p, int t) const { return (d * cfg.parallel.pp + p) * cfg.parallel.tp + t; }
  std::vector<int> dp_group(int p, int t) const;
  void run_pipelines(const StepContext& ctx);
  double optimizer_step(double clip_scale, double lr);
};

double learning_rate(const OptimConfig& o, int step, int total_steps);  // step is 0-based

}  // namespace mc::train
