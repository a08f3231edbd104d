// trainer.cpp - one optimizer step across the grid of virtual workers: pipelines of micro-batches, the
// tied-embedding exchange, the data-parallel gradient exchange (plain or ZeRO), global-norm clipping and
// AdamW. Every byte between workers goes through Comm.
//
// Across processes (a Transport, engine/mpi) every process runs this same schedule; loops over workers
// skip the ones other processes hold (Impl::local), and a collective's buffer of another process's worker
// is nullptr (Comm runs this process's part of the ring only).
//
// Sections: the trainer's construction (layout checks, workers and their shards); ZeroUnits, ZeRO-2/3's
// gather and reduce-scatter around each unit; run_pipelines, the GPipe / 1F1B schedule over the stages;
// optimizer_step (global-norm clipping and AdamW on the owned ranges); Trainer::step.
#include "train/parallel/trainer_impl.h"

#include "device/registry.h"
#include "perf/comm_volume.h"
#include "train/kernels/gemm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace mc::train {

double learning_rate(const OptimConfig& o, int step, int total) {
  if (o.warmup_steps > 0 && step < o.warmup_steps) return o.lr * double(step + 1) / double(o.warmup_steps);
  const double span = std::max(1, total - o.warmup_steps);
  const double progress = std::clamp(double(step - o.warmup_steps) / span, 0.0, 1.0);
  const double min_lr = o.lr * o.min_lr_fraction;
  return min_lr + 0.5 * (o.lr - min_lr) * (1.0 + std::cos(3.141592653589793 * progress));
}

std::vector<int> Trainer::Impl::dp_group(int p, int t) const {
  std::vector<int> g;
  for (int d = 0; d < cfg.parallel.dp; ++d) g.push_back(id(d, p, t));
  return g;
}

Trainer::Trainer(TrainConfig cfg, std::string corpus, Transport* transport) : impl_(std::make_unique<Impl>()) {
  validate(cfg, transport ? 1 : 0);  // under MPI this process allocates only its own worker
  Impl& s = *impl_;
  s.cfg = cfg;
  const ParallelConfig& pc = cfg.parallel;
  if (transport && transport->size() != pc.workers())
    throw std::invalid_argument("the layout dp " + std::to_string(pc.dp) + " x tp " + std::to_string(pc.tp) + " x pp " +
                                std::to_string(pc.pp) + " has " + std::to_string(pc.workers()) + " workers, but " +
                                std::to_string(transport->size()) + " processes were started; start " +
                                std::to_string(pc.workers()) + " (mpirun -np " + std::to_string(pc.workers()) +
                                ") or change --dp/--tp/--pp so that their product is " +
                                std::to_string(transport->size()));
  s.transport = transport;
  if (corpus.size() < size_t(cfg.model.context) * 4)
    throw std::invalid_argument("the corpus has " + std::to_string(corpus.size()) + " bytes; it needs at least " +
                                std::to_string(cfg.model.context * 4) + " (4 contexts) to train and evaluate");
  const size_t split = corpus.size() * 9 / 10;
  for (size_t i = 0; i < corpus.size(); ++i)
    (i < split ? s.train_tokens : s.eval_tokens).push_back(int32_t(uint8_t(corpus[i])) % cfg.model.vocab);
  s.data_rng.state = cfg.seed * 0x9E3779B97F4A7C15ull + 1;
  s.local_batch = cfg.batch / pc.dp;
  s.micro_batches = pc.micro_batches > 0 ? pc.micro_batches : pc.pp;
  s.micro_batch_size = s.local_batch / s.micro_batches;
  s.comm = Comm(pc.workers());
  s.comm.set_transport(transport);
  if (transport && transport->collectives()) s.comm.set_collective_backend(transport->collectives());
  // The device: chosen once for the whole run (device/registry.h); every worker's state lives on it from here on.
  device::OpenedDevice opened = device::open_device(cfg.device);
  s.dev = std::move(opened.device);
  s.dev_note = std::move(opened.note);
  s.dev->set_precision(cfg.precision);
  s.comm.set_device(s.dev.get());
  if (opened.kind->open_collectives && pc.workers() > 1 && !transport) {
    // Several workers on one kind that has in-place collectives (NCCL over a workstation's GPUs): the workers
    // share its units round-robin and the ring collectives run through it.
    std::string why;
    s.collectives = opened.kind->open_collectives(&why);
    if (s.collectives) s.comm.set_collective_backend(s.collectives.get());
    s.dev_note += "; " + why;
  }

  const std::vector<float> full = init_full_model(cfg.model, cfg.seed);
  const Layout full_lay = make_layout(cfg.model, 1, 0, 1, 0, 1);
  s.workers.resize(size_t(pc.workers()));
  for (int d = 0; d < pc.dp; ++d)
    for (int p = 0; p < pc.pp; ++p)
      for (int t = 0; t < pc.tp; ++t) {
        Worker& w = s.workers[size_t(s.id(d, p, t))];
        w.id = s.id(d, p, t);
        w.d = d;
        w.p = p;
        w.t = t;
        w.lay = make_layout(cfg.model, pc.tp, t, pc.pp, p, pc.dp, pc.zero >= 2);
        // Across processes, another process holds this worker: its layout and shard map only.
        const bool mine = s.local(w.id);
        // What this rank updates (OwnedRange, worker.h): ZeRO-1 one contiguous 1/dp of the flat buffer
        // (DeepSpeed's flat partition), ZeRO-2/3 the d-th 1/dp of every unit (gradients are reduced, and
        // ZeRO-3's parameters gathered, unit by unit).
        if (pc.zero == 0) {
          w.owned = {{0, w.lay.padded, 0}};
        } else if (pc.zero == 1) {
          const int64_t shard = w.lay.padded / pc.dp;
          w.owned = {{int64_t(d) * shard, int64_t(d + 1) * shard, 0}};
        } else {
          int64_t off = 0;
          for (const ParamUnit& u : w.lay.units) {
            const int64_t piece = u.padded / pc.dp;
            w.owned.push_back({u.begin + int64_t(d) * piece, u.begin + int64_t(d + 1) * piece, off});
            off += piece;
          }
        }
        w.shard_size = 0;
        for (const OwnedRange& o : w.owned) w.shard_size += o.hi - o.lo;
        if (!mine) continue;
        // The initial parameters, built on the host once and uploaded: the run's first edge crossing.
        std::vector<float> params(size_t(w.lay.padded), 0.0f);
        for (const auto& ts : w.lay.tensors) {
          const TensorSpec& ft = *find_tensor(full_lay, ts.name);
          for (int64_t r = 0; r < ts.rows; ++r)
            for (int64_t c = 0; c < ts.cols; ++c)
              params[size_t(ts.offset + r * ts.cols + c)] = full[size_t(full_index(ts, w.lay, ft, r, c))];
        }
        HostState h;
        if (pc.zero >= 3) {
          h.param_shard.resize(size_t(w.shard_size));
          for (const OwnedRange& o : w.owned)
            std::copy(params.begin() + o.lo, params.begin() + o.hi, h.param_shard.begin() + o.shard_off);
        } else {
          h.params = std::move(params);
        }
        h.m.assign(size_t(w.shard_size), 0.0f);
        h.v.assign(size_t(w.shard_size), 0.0f);
        s.dev->bind_worker(w.id);
        w.allocate_state(*s.dev, pc.zero >= 3 ? 0 : w.lay.padded, pc.zero <= 1 ? w.lay.padded : 0,
                         pc.zero >= 3 ? w.shard_size : 0, pc.zero >= 2 ? w.shard_size : 0, w.shard_size);
        w.upload_state(h);
        w.unit_params.resize(pc.zero >= 3 ? w.lay.units.size() : 0);
        w.unit_grads.resize(pc.zero >= 2 ? w.lay.units.size() : 0);
      }
  s.dev->reset_transfers();  // what set-up moved is not a step's traffic
}

Trainer::~Trainer() = default;
Trainer::Trainer(Trainer&&) noexcept = default;
Trainer& Trainer::operator=(Trainer&&) noexcept = default;

namespace {

// ZeRO-2/3's unit hooks (worker.h) over every worker of a pp = 1 grid: each collective runs over the dp
// group of one tensor-parallel rank, on that unit's padded buffer, so rank d's piece is chunk d of the
// ring (comm.h). Transient bytes (the unit buffers allocated) are tracked per worker for memory().
class ZeroUnits : public UnitHooks {
 public:
  explicit ZeroUnits(Trainer::Impl& s) : s_(s) {}
  void begin(int u, bool backward) override {
    device::Device& dev = *s_.dev;
    for (int t = 0; t < s_.cfg.parallel.tp; ++t) {
      std::vector<int> g = s_.dp_group(0, t);
      if (s_.cfg.parallel.zero >= 3) {
        // Gather-on-use (Rajbhandari et al. 2020, Sec. 5.3): every rank contributes its piece.
        Comm::Bufs bufs;
        for (int i : g) {
          Worker& w = s_.workers[size_t(i)];
          if (!s_.local(i)) {  // another process's: it gathers there
            bufs.push_back(nullptr);
            continue;
          }
          dev.bind_worker(w.id);
          const OwnedRange& o = w.owned[size_t(u)];
          const ParamUnit& pu = w.lay.units[size_t(u)];
          Buffer<float>& b = w.unit_params[size_t(u)];
          b = Buffer<float>(dev, pu.padded);  // zeroed
          dev.copy(b.ptr() + (o.lo - pu.begin), DPtr<const float>(w.param_shard + o.shard_off), o.hi - o.lo);
          bufs.push_back(b.ptr());
          recount(w);
        }
        s_.comm.all_gather(g, bufs, size_t(s_.workers[size_t(g[0])].lay.units[size_t(u)].padded), Traffic::dp);
      }
      if (backward)
        for (int i : g) {
          if (!s_.local(i)) continue;
          Worker& w = s_.workers[size_t(i)];
          dev.bind_worker(w.id);
          w.unit_grads[size_t(u)] = Buffer<float>(dev, w.lay.units[size_t(u)].padded);  // zeroed
          recount(w);
        }
    }
  }
  void end_params(int u) override {
    if (s_.cfg.parallel.zero < 3) return;
    for (Worker& w : s_.workers) {
      if (!s_.local(w.id)) continue;
      w.unit_params[size_t(u)].reset();
      recount(w);
    }
  }
  void end_grads(int u) override {
    // Reduce-scatter as soon as the unit's backward is done (ZeRO-2/3, Sec. 5.2): each rank keeps the
    // sum of its piece, accumulated over the step's micro-batches, and the full gradient is freed.
    device::Device& dev = *s_.dev;
    for (int t = 0; t < s_.cfg.parallel.tp; ++t) {
      std::vector<int> g = s_.dp_group(0, t);
      Comm::Bufs bufs;
      for (int i : g) bufs.push_back(s_.local(i) ? s_.workers[size_t(i)].unit_grads[size_t(u)].ptr() : DPtr<float>());
      s_.comm.reduce_scatter(g, bufs, size_t(s_.workers[size_t(g[0])].lay.units[size_t(u)].padded), Traffic::dp);
      for (int i : g) {
        if (!s_.local(i)) continue;
        Worker& w = s_.workers[size_t(i)];
        dev.bind_worker(w.id);
        const OwnedRange& o = w.owned[size_t(u)];
        dev.add(w.grad_shard + o.shard_off, w.unit_grads[size_t(u)].ptr() + (o.lo - w.lay.units[size_t(u)].begin),
                o.hi - o.lo);
        w.unit_grads[size_t(u)].reset();
        recount(w);
      }
    }
  }

 private:
  Trainer::Impl& s_;
  // What the unit buffers hold now (their allocations).
  static void recount(Worker& w) {
    double floats = 0;
    for (const auto& b : w.unit_params) floats += double(b.size());
    for (const auto& b : w.unit_grads) floats += double(b.size());
    w.transient_bytes = floats * sizeof(float);
    w.transient_peak_bytes = std::max(w.transient_peak_bytes, w.transient_bytes);
  }
};

}  // namespace

namespace {

// The order of forward (F) and backward (B) micro-batch passes on one stage (core/pipeline_schedule.h). With one
// stage GPipe's order is 1F1B's: each micro-batch's activations are freed by its backward before the next
// forward, as PyTorch's gradient accumulation does, whatever the schedule is called.
std::vector<std::pair<bool, int>> stage_ops(PipeSchedule s, int m, int pp, int stage) {
  std::vector<std::pair<bool, int>> ops;
  for (const PipeOp& op : stage_order(pp > 1 ? s : PipeSchedule::one_f_one_b, pp, stage, m, 1))
    ops.push_back({op.backward, op.micro_batch});
  return ops;
}

}  // namespace

void Trainer::Impl::run_pipelines(const StepContext& base) {
  const ParallelConfig& pc = cfg.parallel;
  schedule_log.clear();
  if (pc.zero >= 2) {
    // ZeRO-2/3 (validate() keeps them to pp = 1): the dp replicas run each pass together, unit by unit,
    // so that a unit's gather and reduce-scatter are one collective over its dp group.
    ZeroUnits hooks(*this);
    std::vector<Worker*> g;
    std::vector<std::vector<int>> ids(1);
    for (Worker& w : workers) {
      g.push_back(&w);
      ids[0].push_back(w.id);
    }
    int tick = 0;
    for (auto [backward, mb] : stage_ops(pc.schedule, micro_batches, 1, 0)) {
      StepContext ctx = base;
      ctx.tick = tick;
      ctx.units = &hooks;
      if (backward)
        stage_backward(comm, g, ids, mb, ctx);
      else
        stage_forward(comm, g, ids, mb, ctx);
      schedule_log.push_back({0, mb, tick, backward});
      ++tick;
    }
    return;
  }
  for (int d = 0; d < pc.dp; ++d) {
    std::vector<std::vector<int>> ids(size_t(pc.pp));
    std::vector<std::vector<Worker*>> groups(size_t(pc.pp));
    std::vector<std::vector<std::pair<bool, int>>> ops(size_t(pc.pp));
    for (int p = 0; p < pc.pp; ++p) {
      for (int t = 0; t < pc.tp; ++t) {
        ids[size_t(p)].push_back(id(d, p, t));
        groups[size_t(p)].push_back(&workers[size_t(id(d, p, t))]);
      }
      ops[size_t(p)] = stage_ops(pc.schedule, micro_batches, pc.pp, p);
    }
    std::vector<size_t> next(size_t(pc.pp), 0);
    size_t remaining = 0;
    for (const auto& o : ops) remaining += o.size();
    // Clock ticks: in each tick every stage runs its next op if its input arrived in an earlier tick.
    for (int tick = 0; remaining > 0; ++tick) {
      if (tick > 4 * int(remaining) + 64 * pc.pp) throw std::logic_error("pipeline schedule deadlocked");
      for (int p = 0; p < pc.pp; ++p) {
        if (next[size_t(p)] >= ops[size_t(p)].size()) continue;
        auto [backward, mb] = ops[size_t(p)][next[size_t(p)]];
        const int me = ids[size_t(p)][0];
        bool ready;
        if (!backward)
          ready = p == 0 || comm.has(me, ids[size_t(p - 1)][0], mb, tick);
        else
          ready = p == pc.pp - 1 || comm.has(me, ids[size_t(p + 1)][0], mb, tick);
        if (!ready) continue;
        StepContext ctx = base;
        ctx.tick = tick;
        if (backward)
          stage_backward(comm, groups[size_t(p)], ids, mb, ctx);
        else
          stage_forward(comm, groups[size_t(p)], ids, mb, ctx);
        if (d == 0) schedule_log.push_back({p, mb, tick, backward});
        ++next[size_t(p)];
        --remaining;
      }
    }
  }
}

double Trainer::Impl::optimizer_step(double clip_scale, double lr) {
  const OptimConfig& o = cfg.optim;
  const int zero = cfg.parallel.zero;
  const double t = double(step + 1);
  const float b1 = float(o.beta1), b2 = float(o.beta2);
  const float c1 = float(1.0 / (1.0 - std::pow(o.beta1, t))), c2 = float(1.0 / (1.0 - std::pow(o.beta2, t)));
  const float flr = float(lr), wd = float(o.weight_decay), eps = float(o.eps), cs = float(clip_scale);
  std::vector<device::Device::AdamWSlice> slices;
  for (Worker& w : workers) {
    if (!local(w.id)) continue;  // updated by its own process
    dev->bind_worker(w.id);
    slices.clear();
    for (const OwnedRange& own : w.owned) {
      for (const TensorSpec& ts : w.lay.tensors) {
        const int64_t a = std::max(own.lo, ts.offset), b = std::min(own.hi, ts.offset + ts.size());
        if (b <= a) continue;
        // The slice [a, b) in each buffer: full buffers by flat offset, shards from own.shard_off on.
        const int64_t sa = own.shard_off + (a - own.lo);
        device::Device::AdamWSlice sl;
        sl.params = zero >= 3 ? w.param_shard + sa : w.params + a;
        sl.grads = zero >= 2 ? w.grad_shard + sa : w.grads + a;
        sl.m = w.m + sa, sl.v = w.v + sa, sl.n = b - a;
        // AdamW (Loshchilov & Hutter 2019, Alg. 2): decoupled weight decay, none on gains and biases.
        sl.weight_decay = ts.decay ? wd : 0.0f;
        slices.push_back(sl);
      }
    }
    dev->adamw_many(slices, flr, b1, b2, c1, c2, eps, cs);
  }
  return lr;
}

StepResult Trainer::step() {
  Impl& s = *impl_;
  const ParallelConfig& pc = s.cfg.parallel;
  const ModelConfig& m = s.cfg.model;
  const auto t0 = std::chrono::steady_clock::now();
  s.dev->begin_step();
  s.comm.begin_step();
  const double wire0 = s.transport ? s.transport->wire_bytes() : 0.0;

  // The global batch: the same windows whatever the layout (one data stream, read by every worker).
  const int T = m.context;
  std::vector<int32_t> tokens(size_t(s.cfg.batch) * size_t(T + 1));
  const uint64_t span = s.train_tokens.size() - size_t(T) - 1;
  for (int b = 0; b < s.cfg.batch; ++b) {
    const size_t start = size_t(s.data_rng.next() % span);
    std::copy(s.train_tokens.begin() + long(start), s.train_tokens.begin() + long(start + T + 1),
              tokens.begin() + long(size_t(b) * (T + 1)));
  }
  device::Device& dev = *s.dev;
  for (Worker& w : s.workers) {
    w.act_peak_bytes = 0;
    w.transient_bytes = w.transient_peak_bytes = 0;
    if (!s.local(w.id)) continue;
    dev.bind_worker(w.id);
    dev.zero(w.grads, w.n_grads);
    dev.zero(w.grad_shard, w.n_grad_shard);
    dev.zero(w.scalars.ptr(), 2);
    // The step's one upload: this dp rank's sequences, to the stages that read them (the embedding's and
    // the loss's).
    if (w.lay.has_embed || w.lay.has_head)
      w.set_tokens(tokens.data() + size_t(w.d) * size_t(s.local_batch) * size_t(T + 1),
                   int64_t(s.local_batch) * (T + 1));
  }
  StepContext ctx;
  ctx.model = &m;
  ctx.micro_batch_size = s.micro_batch_size;
  ctx.local_batch = s.local_batch;
  ctx.global_batch = s.cfg.batch;
  s.run_pipelines(ctx);

  // Tied embedding across the pipeline: first and last stage add their wte gradients (Megatron-LM's
  // embedding group; Narayanan et al. 2021).
  if (pc.pp > 1)
    for (int d = 0; d < pc.dp; ++d)
      for (int t = 0; t < pc.tp; ++t) {
        Worker& a = s.workers[size_t(s.id(d, 0, t))];
        Worker& b = s.workers[size_t(s.id(d, pc.pp - 1, t))];
        const DPtr<float> ga = s.local(a.id) ? a.grads + a.lay.wte : DPtr<float>();
        const DPtr<float> gb = s.local(b.id) ? b.grads + b.lay.wte : DPtr<float>();
        s.comm.all_reduce({a.id, b.id}, {ga, gb}, size_t(m.vocab) * size_t(m.width), Traffic::tie);
      }

  // Data parallel: sum the replicas' gradients (each already carries 1/(global batch tokens)). ZeRO-2/3
  // did it unit by unit during the backward passes.
  for (int p = 0; p < pc.pp && pc.zero <= 1; ++p)
    for (int t = 0; t < pc.tp; ++t) {
      std::vector<int> g = s.dp_group(p, t);
      Comm::Bufs bufs;
      for (int i : g) bufs.push_back(s.local(i) ? s.workers[size_t(i)].grads : DPtr<float>());
      const size_t n = size_t(s.workers[size_t(g[0])].lay.padded);
      if (pc.zero == 0)
        s.comm.all_reduce(g, bufs, n, Traffic::dp);
      else
        s.comm.reduce_scatter(g, bufs, n, Traffic::dp);
    }

  // Global gradient norm and the loss: each worker sums the squares it owns on its device, brings back
  // its two partials (the step's one download), then one small all-reduce of those scalars.
  std::vector<std::vector<double>> ctl(s.workers.size(), std::vector<double>(2, 0.0));
  for (Worker& w : s.workers) {
    if (!s.local(w.id)) continue;  // its process adds its squares
    dev.bind_worker(w.id);
    const bool owner = pc.zero >= 1 || w.d == 0;
    std::vector<device::Device::SquaresSlice> squares;
    if (owner)
      for (const OwnedRange& own : w.owned) {
        for (const TensorSpec& ts : w.lay.tensors) {
          if (!ts.in_norm) continue;
          const int64_t a = std::max(own.lo, ts.offset), b = std::min(own.hi, ts.offset + ts.size());
          if (b <= a) continue;
          const DPtr<float> G = pc.zero >= 2 ? w.grad_shard + own.shard_off + (a - own.lo) : w.grads + a;
          squares.push_back({G, b - a});
        }
      }
    if (!squares.empty()) dev.sum_squares_many(w.scalars.ptr() + 1, squares);
    dev.download(ctl[size_t(w.id)].data(), DPtr<const double>(w.scalars.ptr()), 2);
  }
  std::vector<int> everyone;
  std::vector<double*> cbufs;
  for (auto& w : s.workers) {
    everyone.push_back(w.id);
    cbufs.push_back(ctl[size_t(w.id)].data());
  }
  s.comm.tree_all_reduce(everyone, cbufs, 2, Traffic::control);
  // After the tree's broadcast every worker holds the same two sums (bit for bit); read this process's.
  const double loss = ctl[size_t(s.me())][0] / (double(s.cfg.batch) * T);
  const double norm = std::sqrt(ctl[size_t(s.me())][1]);
  const double clip = s.cfg.optim.clip_norm > 0 && norm > s.cfg.optim.clip_norm ? s.cfg.optim.clip_norm / norm : 1.0;
  const double lr = learning_rate(s.cfg.optim, s.step, s.cfg.steps);
  s.optimizer_step(clip, lr);

  // ZeRO-1/2: every rank updated its shard; gather the updated parameters (ZeRO-3 gathers on use).
  // ZeRO-1's shard is one flat chunk, ZeRO-2's one piece of every unit: one all-gather per unit.
  if (pc.zero == 1 || pc.zero == 2)
    for (int p = 0; p < pc.pp; ++p)
      for (int t = 0; t < pc.tp; ++t) {
        std::vector<int> g = s.dp_group(p, t);
        const Layout& lay = s.workers[size_t(g[0])].lay;
        std::vector<ParamUnit> spans = pc.zero == 1 ? std::vector<ParamUnit>{{0, lay.padded, lay.padded}} : lay.units;
        for (const ParamUnit& u : spans) {
          Comm::Bufs bufs;
          for (int i : g) bufs.push_back(s.local(i) ? s.workers[size_t(i)].params + u.begin : DPtr<float>());
          s.comm.all_gather(g, bufs, size_t(u.padded), Traffic::dp);
        }
      }

  // Across processes: every send of the step delivered before the next one (bounded buffers).
  if (s.transport) {
    s.transport->flush();
    s.last_step_wire_bytes = s.transport->wire_bytes() - wire0;
  }
  s.step += 1;
  s.losses.push_back(loss);
  StepResult r;
  r.step = s.step;
  r.loss = loss;
  r.lr = lr;
  r.grad_norm = norm;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

int Trainer::step_index() const { return impl_->step; }
const TrainConfig& Trainer::config() const { return impl_->cfg; }
const std::vector<double>& Trainer::losses() const { return impl_->losses; }
const Comm& Trainer::comm() const { return impl_->comm; }
void Trainer::use_collective_backend(std::unique_ptr<CollectiveBackend> b) {
  impl_->collectives = std::move(b);
  impl_->comm.set_collective_backend(impl_->collectives.get());
}
const char* Trainer::backend_name() const { return impl_->dev->name(); }
const std::string& Trainer::backend_note() const { return impl_->dev_note; }
const device::Transfers& Trainer::transfers() const { return impl_->dev->transfers(); }
void Trainer::reset_transfers() { impl_->dev->reset_transfers(); }
const std::vector<PipelineOp>& Trainer::last_schedule() const { return impl_->schedule_log; }

std::vector<WorkerMemory> Trainer::memory() const {
  std::vector<WorkerMemory> out;
  for (const Worker& w : impl_->workers) {
    WorkerMemory m;
    m.params_bytes = double(w.n_params + w.n_param_shard) * sizeof(float);
    m.grads_bytes = double(w.n_grads + w.n_grad_shard) * sizeof(float);
    m.optimizer_bytes = double(2 * w.n_moments) * sizeof(float);
    m.activations_peak_bytes = w.act_peak_bytes;
    m.transient_peak_bytes = w.transient_peak_bytes;
    out.push_back(m);
  }
  return out;
}

}  // namespace mc::train
