// report.cpp - a trainer's state copied into a TrainerReport (report.h), and its JSON.
#include "train/report.h"

#include <algorithm>

namespace mc::train {

TrainerReport report(const Trainer& t) {
  TrainerReport r;
  r.config = t.config();
  r.step = t.step_index();
  r.parameters = t.parameter_count();
  r.flops_per_token = t.flops_per_token();
  r.losses = t.losses();
  r.memory = t.memory();
  r.schedule = t.last_schedule();
  const int workers = r.config.parallel.workers();
  for (int w = 0; w < workers; ++w) {
    r.bytes_sent.push_back(t.comm().step_counters(w).data_bytes_sent());
    r.messages_sent.push_back(t.comm().step_counters(w).data_messages_sent());
  }
  for (const auto& [link, lc] : t.comm().step_links())
    for (int k = 0; k < kTrafficClasses; ++k)
      if (lc.messages[k] > 0) r.links.push_back({link.first, link.second, Traffic(k), lc.bytes[k], lc.messages[k]});
  const std::vector<MessageRecord>& log = t.comm().step_log();
  r.messages_in_step = log.size();
  r.messages.assign(log.begin(), log.begin() + long(std::min(log.size(), kMaxReportedMessages)));
  r.predicted_bytes = t.predicted_bytes_per_worker();
  r.kernels = t.backend_name();
  r.kernels_note = t.backend_note();
  return r;
}

std::vector<double> bytes_sent_in_first(const TrainerReport& r, size_t k) {
  std::vector<double> sent(size_t(std::max(0, r.config.parallel.workers())), 0.0);
  for (size_t i = 0; i < std::min(k, r.messages.size()); ++i) {
    const MessageRecord& m = r.messages[i];
    if (m.traffic != Traffic::control && m.src >= 0 && size_t(m.src) < sent.size()) sent[size_t(m.src)] += m.bytes;
  }
  return sent;
}

nlohmann::json to_json(const WorkerMemory& m) {
  return {{"params_bytes", m.params_bytes},
          {"grads_bytes", m.grads_bytes},
          {"optimizer_bytes", m.optimizer_bytes},
          {"activations_peak_bytes", m.activations_peak_bytes},
          {"transient_peak_bytes", m.transient_peak_bytes}};
}

void add_losses(nlohmann::json& out, const std::vector<double>& losses) {
  out["losses"] = losses;
  if (losses.empty()) return;
  out["first_loss"] = losses.front();
  out["last_loss"] = losses.back();
  const size_t n = std::min<size_t>(5, losses.size());
  double sum = 0;
  for (size_t i = losses.size() - n; i < losses.size(); ++i) sum += losses[i];
  out["final_loss"] = sum / double(n);
}

nlohmann::json to_json(const TrainerReport& r) {
  nlohmann::json out;
  out["parameters"] = r.parameters;
  out["flops_per_token"] = r.flops_per_token;
  out["step"] = r.step;
  add_losses(out, r.losses);
  nlohmann::json mem = nlohmann::json::array();
  for (const WorkerMemory& m : r.memory) mem.push_back(to_json(m));
  out["memory_per_worker"] = mem;
  return out;
}

}  // namespace mc::train
