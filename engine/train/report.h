// report.h - a trainer's state as plain data: what the training lab draws and what `megacluster train
// --json` prints about the run (losses, memory per worker, the messages of the last step and the bytes the
// communication model predicted). A TrainerReport is a copy, so it can be handed from the thread that
// trains to the one that draws while training goes on.
#pragma once

#include "train/train.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mc::train {

// One (sender, receiver, traffic class) of the last step, as Comm::step_links counted it.
struct LinkTraffic {
  int src = 0, dst = 0;
  Traffic traffic = Traffic::dp;
  double bytes = 0, messages = 0;
};

struct TrainerReport {
  TrainConfig config;
  int step = 0;                                   // optimizer steps taken
  int64_t parameters = 0;                         // full model
  double flops_per_token = 0;                     // 6N + attention (Kaplan et al. 2020, Table 1)
  std::vector<double> losses;                     // nats per byte, one per step
  std::vector<WorkerMemory> memory;               // per worker
  std::vector<PipelineOp> schedule;               // dp replica 0, last step
  std::vector<double> bytes_sent, messages_sent;  // per worker, last step, data classes (control excluded)
  std::vector<LinkTraffic> links;                 // last step, classes with at least one message
  // Every message of the last step in the order it was sent (Comm::step_log: a ring collective hop by hop),
  // the first kMaxReportedMessages of them; messages_in_step counts them all.
  std::vector<MessageRecord> messages;
  size_t messages_in_step = 0;
  std::vector<double> predicted_bytes;  // per worker per step (engine/perf/comm_volume.h)
  std::string kernels, kernels_note;    // the ops backend: name, and what it is
};

constexpr size_t kMaxReportedMessages = 20000;

TrainerReport report(const Trainer& t);

// Bytes each worker has sent in the first `k` messages of the step (data classes: control excluded, as
// bytes_sent counts): replaying all of them gives bytes_sent.
std::vector<double> bytes_sent_in_first(const TrainerReport& r, size_t k);

// {"parameters", "flops_per_token", "step", "losses", "first_loss", "last_loss", "final_loss" (mean of the
// last five), "memory_per_worker"}: the part of `megacluster train --json` that describes the trainer.
nlohmann::json to_json(const TrainerReport& r);

// One worker's memory as every JSON output writes it: {"params_bytes", "grads_bytes", "optimizer_bytes",
// "activations_peak_bytes", "transient_peak_bytes"}.
nlohmann::json to_json(const WorkerMemory& m);
// "losses" and, when there is one, "first_loss", "last_loss" and "final_loss" (the mean of the last five)
// into `out`: how `train --json` and the report summarise a loss curve.
void add_losses(nlohmann::json& out, const std::vector<double>& losses);

}  // namespace mc::train
