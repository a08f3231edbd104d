// trainer_query.cpp - what a Trainer can tell without training: the gathered model, its size and FLOPs,
// evaluation, samples, and the communication the analytic model predicts for its layout.
#include "train/parallel/trainer_impl.h"

#include "perf/comm_volume.h"
#include "train/report.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace mc::train {

namespace {

// The parameters worker (0, p, t) would use now: its buffer, or with ZeRO-3 its dp group's shards.
std::vector<float> current_params(const Trainer::Impl& s, const std::vector<HostState>& host, int p, int t) {
  const Worker& w0 = s.workers[size_t(s.id(0, p, t))];
  const HostState& h0 = host[size_t(w0.id)];
  if (s.cfg.parallel.zero < 3 || !h0.params.empty()) return h0.params;
  std::vector<float> out(size_t(w0.lay.padded), 0.0f);
  for (int d = 0; d < s.cfg.parallel.dp; ++d) {
    const Worker& w = s.workers[size_t(s.id(d, p, t))];
    const HostState& h = host[size_t(w.id)];
    for (const OwnedRange& o : w.owned)
      std::copy(h.param_shard.begin() + o.shard_off, h.param_shard.begin() + o.shard_off + (o.hi - o.lo),
                out.begin() + o.lo);
  }
  return out;
}

// Forward of the full model on one worker of its own (a one-worker network, no counted traffic) on the
// trainer's device: the parameters go up once, the loss (and the last position's distribution) come back.
struct FullModel {
  Comm comm{1};
  Worker w;
  FullModel(device::Device& dev, const ModelConfig& m, const std::vector<float>& params) {
    comm.set_device(&dev);
    w.lay = make_layout(m, 1, 0, 1, 0, 1);
    w.allocate_state(dev, w.lay.padded, 0, 0, 0, 0);
    dev.upload(w.params, params.data(), int64_t(params.size()));
  }
  // Returns the summed loss; `last_probs` receives the next-byte distribution of position last_pos.
  double forward(const ModelConfig& m, const std::vector<int32_t>& tokens, int B, std::vector<float>* last_probs,
                 int last_pos) {
    device::Device& dev = *w.dev;
    w.set_tokens(tokens.data(), int64_t(tokens.size()));
    dev.zero(w.scalars.ptr(), 2);
    StepContext ctx;
    ctx.model = &m;
    ctx.micro_batch_size = B;
    ctx.local_batch = B;
    ctx.global_batch = B;
    std::vector<Worker*> g{&w};
    std::vector<std::vector<int>> ids{{0}};
    stage_forward(comm, g, ids, 0, ctx);
    if (last_probs) {
      last_probs->resize(size_t(m.vocab));
      dev.download(last_probs->data(), DPtr<const float>(w.acts.at(0).probs + int64_t(last_pos) * m.vocab), m.vocab);
    }
    double loss = 0;
    dev.download(&loss, DPtr<const double>(w.scalars.ptr()), 1);
    // The micro-batch's activations go back to the spares for the next call.
    w.spare_acts.push_back(std::move(w.acts.at(0)));
    w.acts.clear();
    w.act_bytes = 0;
    return loss;
  }
};

}  // namespace

namespace {

void put_floats(std::string& out, const std::vector<float>& v) {
  const uint64_t n = v.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::vector<float> get_floats(const std::string& in, size_t& pos) {
  uint64_t n = 0;
  if (pos + sizeof n > in.size()) throw std::runtime_error("a gathered worker buffer is truncated");
  std::memcpy(&n, in.data() + pos, sizeof n);
  pos += sizeof n;
  if (pos + n * sizeof(float) > in.size()) throw std::runtime_error("a gathered worker buffer is truncated");
  std::vector<float> v(n);
  if (n > 0) std::memcpy(v.data(), in.data() + pos, n * sizeof(float));
  pos += n * sizeof(float);
  return v;
}

}  // namespace

std::vector<HostState> Trainer::Impl::gathered_params() const {
  std::vector<HostState> out(workers.size());
  if (!transport) {
    for (size_t i = 0; i < workers.size(); ++i) {
      dev->bind_worker(workers[i].id);
      out[i] = workers[i].download_state();
    }
    return out;
  }
  const HostState h = workers[size_t(me())].download_state();
  std::string mine;
  put_floats(mine, h.params);
  put_floats(mine, h.param_shard);
  const std::vector<std::string> all = transport->all_gather(mine);
  for (size_t i = 0; i < out.size(); ++i) {
    size_t pos = 0;
    out[i].params = get_floats(all[i], pos);
    out[i].param_shard = get_floats(all[i], pos);
  }
  return out;
}

std::vector<float> Trainer::full_parameters() const {
  const Impl& s = *impl_;
  const Layout full = make_layout(s.cfg.model, 1, 0, 1, 0, 1);
  std::vector<float> out(size_t(full.size), 0.0f);
  // An edge: every worker's parameters come to the host (across processes, from their processes).
  const std::vector<HostState> host = s.gathered_params();
  for (int p = 0; p < s.cfg.parallel.pp; ++p)
    for (int t = 0; t < s.cfg.parallel.tp; ++t) {
      const Worker& w = s.workers[size_t(s.id(0, p, t))];
      const std::vector<float> P = current_params(s, host, p, t);
      for (const TensorSpec& ts : w.lay.tensors) {
        if (ts.name == "wte" && !w.lay.has_embed) continue;  // the pipeline's copy of the tied embedding
        const TensorSpec& ft = *find_tensor(full, ts.name);
        for (int64_t r = 0; r < ts.rows; ++r)
          for (int64_t c = 0; c < ts.cols; ++c)
            out[size_t(full_index(ts, w.lay, ft, r, c))] = P[size_t(ts.offset + r * ts.cols + c)];
      }
    }
  return out;
}

int64_t Trainer::parameter_count() const { return make_layout(impl_->cfg.model, 1, 0, 1, 0, 1).size; }

double Trainer::flops_per_token() const {
  // Kaplan et al. 2020, Table 1: forward 2N + 2 L T C per token, backward twice that. N counts the
  // non-embedding weights (12 L C^2) plus the output head (C V), whose matmul the model does run.
  const ModelConfig& m = impl_->cfg.model;
  const double L = m.layers, C = m.width, T = m.context, V = m.vocab;
  const double n = 12.0 * L * C * C + C * V;
  return 6.0 * n + 6.0 * L * T * C;
}

double Trainer::eval_loss(int batches) const {
  const Impl& s = *impl_;
  const ModelConfig& m = s.cfg.model;
  const int T = m.context;
  FullModel model(*s.dev, m, full_parameters());
  const size_t span = s.eval_tokens.size() > size_t(T) + 1 ? s.eval_tokens.size() - size_t(T) - 1 : 0;
  double sum = 0, count = 0;
  for (int b = 0; b < batches; ++b) {
    const size_t start = span == 0 ? 0 : size_t(b) * span / size_t(std::max(1, batches - 1));
    std::vector<int32_t> tok(size_t(T) + 1, 0);
    for (int i = 0; i <= T && start + size_t(i) < s.eval_tokens.size(); ++i)
      tok[size_t(i)] = s.eval_tokens[start + size_t(i)];
    sum += model.forward(m, tok, 1, nullptr, 0);
    count += T;
  }
  return sum / count;
}

std::string Trainer::sample(int n, double temperature, uint64_t seed, const std::string& prompt) const {
  const ModelConfig& m = impl_->cfg.model;
  const int T = m.context;
  FullModel model(*impl_->dev, m, full_parameters());
  std::vector<int32_t> ctx;
  for (unsigned char ch : prompt) ctx.push_back(int32_t(ch) % m.vocab);
  if (ctx.empty()) ctx.push_back(int32_t('\n') % m.vocab);
  Rng rng{seed};
  std::string out;
  std::vector<float> probs;
  for (int i = 0; i < n; ++i) {
    const int len = std::min(int(ctx.size()), T);
    std::vector<int32_t> tok(size_t(T) + 1, 0);
    std::copy(ctx.end() - len, ctx.end(), tok.begin());
    model.forward(m, tok, 1, &probs, len - 1);
    // Temperature: p^(1/temp), renormalised.
    double total = 0;
    for (float& q : probs) {
      q = float(std::pow(std::max(double(q), 1e-30), 1.0 / std::max(temperature, 1e-3)));
      total += q;
    }
    double u = rng.uniform() * total;
    int pick = m.vocab - 1;
    for (int k = 0; k < m.vocab; ++k) {
      u -= probs[size_t(k)];
      if (u <= 0) {
        pick = k;
        break;
      }
    }
    ctx.push_back(pick);
    out.push_back(char(pick));
  }
  return out;
}

namespace {

struct Volume {
  double bytes = 0, messages = 0;
  void add(const perf::CollectiveVolume& v, double times = 1) {
    bytes += v.bytes_sent_per_rank * times;
    messages += v.messages_per_rank * times;
  }
};

Volume predicted(const Trainer::Impl& s, const Worker& w) {
  const ParallelConfig& pc = s.cfg.parallel;
  const ModelConfig& m = s.cfg.model;
  const double f = sizeof(float), mb = s.micro_batches;
  Volume v;
  // Data parallel (ZeRO, Rajbhandari et al. 2020, Sec. 7). Stages 0-1: over the worker's padded flat
  // buffer once a step. Stages 2-3 work unit by unit (worker.h): each unit's gradients are reduce-scattered
  // after its backward in every micro-batch; ZeRO-2 all-gathers each updated unit once a step, ZeRO-3
  // gathers each unit before its forward and its backward in every micro-batch: 3 Psi per micro-batch.
  if (pc.zero < 2) {
    v.add(perf::dp_gradient_volume(double(w.lay.padded), f, pc.dp, pc.zero));
  } else {
    for (const ParamUnit& u : w.lay.units) {
      v.add(perf::ring_reduce_scatter(double(u.padded) * f, pc.dp), mb);
      v.add(perf::ring_all_gather(double(u.padded) * f, pc.dp), pc.zero == 2 ? 1.0 : 2 * mb);
    }
  }
  // Tensor parallel: 4 all-reduces of (b, s, h) per layer per micro-batch (Megatron, no recomputation).
  v.add(perf::tp_layer_volume(s.micro_batch_size, m.context, m.width, f, pc.tp, false), w.lay.layers * mb);
  // Pipeline boundaries: activations forward, their gradients backward, once per micro-batch.
  const double boundary = perf::pp_boundary_bytes(s.micro_batch_size, m.context, m.width, f);
  if (w.p < pc.pp - 1) v.bytes += boundary * mb, v.messages += mb;
  if (w.p > 0) v.bytes += boundary * mb, v.messages += mb;
  // The tied embedding's gradient, summed between the first and last stage (a two-rank all-reduce).
  if (pc.pp > 1 && (w.p == 0 || w.p == pc.pp - 1)) v.add(perf::ring_all_reduce(double(m.vocab) * m.width * f, 2));
  return v;
}

}  // namespace

nlohmann::json Trainer::gathered_worker_stats() const {
  const Impl& s = *impl_;
  const std::vector<WorkerMemory> mem = memory();
  auto one = [&](int w) {
    const WorkerCounters& c = s.comm.step_counters(w);
    nlohmann::json links = nlohmann::json::array();
    for (const auto& [link, lc] : s.comm.step_links()) {
      if (link.first != w) continue;
      nlohmann::json by = nlohmann::json::object();
      for (int k = 0; k < kTrafficClasses; ++k)
        if (lc.messages[k] > 0) by[to_string(Traffic(k))] = {{"bytes", lc.bytes[k]}, {"messages", lc.messages[k]}};
      links.push_back({{"src", link.first},
                       {"dst", link.second},
                       {"bytes", lc.data_bytes()},
                       {"messages", lc.data_messages()},
                       {"by_traffic", by}});
    }
    const WorkerMemory& m = mem[size_t(w)];
    return nlohmann::json{{"bytes_sent", c.data_bytes_sent()},
                          {"messages_sent", c.data_messages_sent()},
                          {"control_bytes", c.bytes_sent[int(Traffic::control)]},
                          {"bytes_received", c.bytes_received},
                          {"wire_bytes", s.transport ? s.last_step_wire_bytes : 0.0},
                          {"memory", to_json(m)},
                          {"links", links}};
  };
  nlohmann::json out = nlohmann::json::array();
  if (!s.transport) {
    for (int w = 0; w < int(s.workers.size()); ++w) out.push_back(one(w));
    return out;
  }
  for (const std::string& blob : s.transport->all_gather(one(s.me()).dump()))
    out.push_back(nlohmann::json::parse(blob));
  return out;
}

std::vector<double> Trainer::predicted_bytes_per_worker() const {
  std::vector<double> out;
  for (const Worker& w : impl_->workers) out.push_back(predicted(*impl_, w).bytes);
  return out;
}

std::vector<double> Trainer::predicted_messages_per_worker() const {
  std::vector<double> out;
  for (const Worker& w : impl_->workers) out.push_back(predicted(*impl_, w).messages);
  return out;
}

}  // namespace mc::train
