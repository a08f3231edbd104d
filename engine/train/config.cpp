// config.cpp - reading, writing and checking a training configuration (train.h) and the run around it
// (run.h's RunOptions): one parser for every key.
#include "core/format.h"
#include "core/json_doc.h"
#include "device/registry.h"
#include "train/model/worker.h"
#include "train/run.h"
#include "train/train.h"

#include <algorithm>
#include <stdexcept>
#if !defined(_WIN32)
#include <unistd.h>
#endif

namespace mc::train {

namespace {

const std::vector<std::string> kRootKeys = {"model",
                                            "optim",
                                            "dp",
                                            "tp",
                                            "pp",
                                            "zero",
                                            "micro_batches",
                                            "schedule",
                                            "batch",
                                            "steps",
                                            "seed",
                                            "memory_limit_bytes",
                                            "corpus",
                                            "checkpoint",
                                            "checkpoint_every",
                                            "resume",
                                            "bench",
                                            "sample_bytes",
                                            "sample_every",
                                            "device",
                                            "precision"};

// Every key of a training config read over `base`, each with its type and range: the one place they are
// written (parse_config and parse_run_options both come here).
RunOptions parse_cursor(const JsonCursor& root, const RunOptions& base) {
  if (!root.is_object()) root.fail("a training config must be a JSON object");
  root.only_keys(kRootKeys);
  RunOptions o = base;
  TrainConfig& c = o.train;
  if (auto m = root.get("model")) {
    m->only_keys({"vocab", "context", "layers", "width", "heads"});
    c.model.vocab = int(m->integer_or("vocab", c.model.vocab));
    if (auto v = m->get("vocab")) c.model.vocab = int(v->integer_in(2, 256));
    if (auto v = m->get("context")) c.model.context = int(v->integer_in(2, 4096));
    if (auto v = m->get("layers")) c.model.layers = int(v->integer_in(1, 96));
    if (auto v = m->get("width")) c.model.width = int(v->integer_in(4, 8192));
    if (auto v = m->get("heads")) c.model.heads = int(v->integer_in(1, 256));
  }
  if (auto o = root.get("optim")) {
    o->only_keys({"lr", "min_lr_fraction", "warmup_steps", "beta1", "beta2", "eps", "weight_decay", "clip_norm"});
    if (auto v = o->get("lr")) c.optim.lr = v->number_in(0, 10);
    if (auto v = o->get("min_lr_fraction")) c.optim.min_lr_fraction = v->number_in(0, 1);
    if (auto v = o->get("warmup_steps")) c.optim.warmup_steps = int(v->integer_in(0, 1000000));
    if (auto v = o->get("beta1")) c.optim.beta1 = v->number_in(0, 0.999999);
    if (auto v = o->get("beta2")) c.optim.beta2 = v->number_in(0, 0.999999);
    if (auto v = o->get("eps")) c.optim.eps = v->number_in(0, 1);
    if (auto v = o->get("weight_decay")) c.optim.weight_decay = v->number_in(0, 10);
    if (auto v = o->get("clip_norm")) c.optim.clip_norm = v->number_in(0, 1e9);
  }
  auto in = [](const JsonCursor& v, IntRange r) { return int(v.integer_in(r.lo, r.hi)); };
  if (auto v = root.get("dp")) c.parallel.dp = in(*v, limits::degree);
  if (auto v = root.get("tp")) c.parallel.tp = in(*v, limits::degree);
  if (auto v = root.get("pp")) c.parallel.pp = in(*v, limits::degree);
  if (auto v = root.get("zero")) c.parallel.zero = in(*v, limits::zero);
  if (auto v = root.get("micro_batches")) c.parallel.micro_batches = in(*v, limits::micro_batches);
  if (auto v = root.get("schedule"))
    c.parallel.schedule = v->one_of({"gpipe", "1f1b"}) == "gpipe" ? PipeSchedule::gpipe : PipeSchedule::one_f_one_b;
  if (auto v = root.get("batch")) c.batch = in(*v, limits::batch);
  if (auto v = root.get("steps")) c.steps = in(*v, limits::steps);
  if (auto v = root.get("seed")) c.seed = uint64_t(v->integer_in(0, (1ll << 53)));
  if (auto v = root.get("memory_limit_bytes")) c.memory_limit_bytes = v->number_in(1, 1e15);
  if (auto v = root.get("device")) c.device = v->one_of(device::device_choices());
  if (auto v = root.get("precision")) device::parse_precision(v->one_of({"fp32", "tf32", "bf16"}), &c.precision);
  // Keys of the run around the model (run.h's RunOptions).
  if (auto v = root.get("sample_every")) o.sample_every = int(v->integer_in(0, 10000000));
  if (auto v = root.get("sample_bytes")) o.sample_bytes = int(v->integer_in(0, 100000));
  if (auto v = root.get("checkpoint_every")) o.checkpoint_every = int(v->integer_in(0, 10000000));
  if (auto v = root.get("resume")) o.resume = v->boolean();
  if (auto v = root.get("bench")) o.bench = v->boolean();
  if (auto v = root.get("corpus")) o.corpus = v->string();
  if (auto v = root.get("checkpoint")) o.checkpoint = v->string();
  return o;
}

}  // namespace

TrainConfig parse_config(const nlohmann::json& j, const std::string& file) { return parse_run_options(j, file).train; }
TrainConfig parse_config(const JsonDoc& doc) { return parse_cursor(doc.root(), {}).train; }
TrainConfig parse_config(const JsonCursor& at) { return parse_cursor(at, {}).train; }

namespace {
const RunOptions& default_run() {  // built on first use: safe from another file's static initializer
  static const RunOptions d;
  return d;
}
}  // namespace

RunOptions parse_run_options(const JsonCursor& at, const RunOptions& base) { return parse_cursor(at, base); }
RunOptions parse_run_options(const JsonCursor& at) { return parse_cursor(at, default_run()); }
RunOptions parse_run_options(const nlohmann::json& j, const std::string& file, const RunOptions& base) {
  const JsonDoc doc = JsonDoc::parse(j.dump(2), file);
  return parse_cursor(doc.root(), base);
}
RunOptions parse_run_options(const nlohmann::json& j, const std::string& file) {
  return parse_run_options(j, file, default_run());
}

KeptRun parse_kept_run(const std::string& text, const std::string& what) {
  const JsonDoc doc = JsonDoc::parse(text, what);
  const JsonCursor root = doc.root();
  root.only_keys({"config", "running"});
  KeptRun k;
  k.options = parse_run_options(root["config"]);
  if (root.has("running")) k.running = root["running"].boolean();
  return k;
}

std::string kept_run_text(const nlohmann::json& config, bool running) {
  return nlohmann::json{{"config", config}, {"running", running}}.dump();
}

nlohmann::json to_json(const RunOptions& o) {
  nlohmann::json j = to_json(o.train);
  j["device"] = o.train.device;
  j["corpus"] = o.corpus;
  j["checkpoint"] = o.checkpoint;
  j["checkpoint_every"] = o.checkpoint_every;
  j["resume"] = o.resume;
  j["bench"] = o.bench;
  j["sample_bytes"] = o.sample_bytes;
  j["sample_every"] = o.sample_every;
  return j;
}

nlohmann::json to_json(const TrainConfig& c) {
  return {{"model",
           {{"vocab", c.model.vocab},
            {"context", c.model.context},
            {"layers", c.model.layers},
            {"width", c.model.width},
            {"heads", c.model.heads}}},
          {"optim",
           {{"lr", c.optim.lr},
            {"min_lr_fraction", c.optim.min_lr_fraction},
            {"warmup_steps", c.optim.warmup_steps},
            {"beta1", c.optim.beta1},
            {"beta2", c.optim.beta2},
            {"eps", c.optim.eps},
            {"weight_decay", c.optim.weight_decay},
            {"clip_norm", c.optim.clip_norm}}},
          {"dp", c.parallel.dp},
          {"tp", c.parallel.tp},
          {"pp", c.parallel.pp},
          {"zero", c.parallel.zero},
          {"micro_batches", c.parallel.micro_batches},
          {"schedule", schedule_name(c.parallel.schedule)},
          {"batch", c.batch},
          {"steps", c.steps},
          {"seed", c.seed},
          {"memory_limit_bytes", c.memory_limit_bytes},
          {"precision", device::to_string(c.precision)}};
}

double estimate_worker_bytes(const TrainConfig& c) {
  const ModelConfig& m = c.model;
  const ParallelConfig& p = c.parallel;
  const int mbatches = p.micro_batches > 0 ? p.micro_batches : p.pp;
  const double B = double(c.batch) / p.dp / mbatches, T = m.context, C = m.width, V = m.vocab;
  const double N = B * T, Hl = double(m.heads) / p.tp, Dl = C / p.tp, Fl = 4 * C / p.tp;
  const Layout lay = make_layout(m, p.tp, 0, p.pp, 0, p.dp, p.zero >= 2);
  const double params = double(lay.padded);
  // fp32 weights + gradients + Adam m and v: 16 bytes a parameter before ZeRO's sharding.
  double state = 4 * params * (p.zero >= 3 ? 1.0 / p.dp : 1.0) + 4 * params * (p.zero >= 2 ? 1.0 / p.dp : 1.0) +
                 8 * params * (p.zero >= 1 ? 1.0 / p.dp : 1.0);
  // ZeRO-2/3 also hold a few whole units while they run (trainer.cpp's ZeroUnits): the embedding (kept
  // through each pass for the tied head) and one more unit at a time, parameters (ZeRO-3) and gradients.
  // embed + largest bounds every pair that is alive at once (stage.cpp's order of hooks).
  if (p.zero >= 2) {
    double largest = 0;
    for (const ParamUnit& u : lay.units) largest = std::max(largest, double(u.padded));
    const double embed = lay.embed_unit >= 0 ? double(lay.units[size_t(lay.embed_unit)].padded) : 0.0;
    state += (p.zero >= 3 ? 2.0 : 1.0) * 4 * (embed + largest);
  }
  const double per_layer = N * C * 4 + N * 3 * Dl + B * Hl * T * T + N * Dl + 2 * N * Fl + 4 * N;
  const double per_mb = (per_layer * lay.layers + N * V + 2 * N * C + 2 * N) * 4;  // + lnf's mean and rstd
  const double in_flight = p.schedule == PipeSchedule::gpipe ? mbatches : std::min(p.pp, mbatches);
  return state + per_mb * in_flight;
}

void validate(const TrainConfig& c, int workers_in_this_process) {
  const ModelConfig& m = c.model;
  const ParallelConfig& p = c.parallel;
  auto bad = [](const std::string& s) { throw std::invalid_argument(s); };
  if (p.dp < 1 || p.tp < 1 || p.pp < 1) bad("dp, tp and pp must be at least 1");
  if (p.workers() > 64) bad("dp x tp x pp = " + std::to_string(p.workers()) + " workers; the lab runs at most 64");
  if (m.width % m.heads != 0)
    bad("width " + std::to_string(m.width) + " must be a multiple of heads " + std::to_string(m.heads));
  if (m.heads % p.tp != 0)
    bad("tensor parallelism splits attention by heads: heads (" + std::to_string(m.heads) +
        ") must be a multiple of tp (" + std::to_string(p.tp) + ")");
  if (m.layers < p.pp)
    bad("pp = " + std::to_string(p.pp) + " stages need at least as many layers (the model has " +
        std::to_string(m.layers) + ")");
  if (c.batch % p.dp != 0)
    bad("the global batch (" + std::to_string(c.batch) + " sequences) must be a multiple of dp (" +
        std::to_string(p.dp) + ")");
  const int mb = p.micro_batches > 0 ? p.micro_batches : p.pp;
  if ((c.batch / p.dp) % mb != 0)
    bad("each dp rank's " + std::to_string(c.batch / p.dp) + " sequences must split into " + std::to_string(mb) +
        " equal micro-batches: change batch or micro_batches");
  if (p.zero < 0 || p.zero > 3) bad("zero must be 0, 1, 2 or 3");
  if (p.zero >= 2 && p.pp > 1)
    bad("ZeRO-" + std::to_string(p.zero) +
        " gathers and reduce-scatters layer by layer with every dp replica at the same layer, which a pipeline's "
        "stages (each on its own micro-batch) never are; like DeepSpeed, the lab runs ZeRO-2/3 only with pp = 1 "
        "(use zero 1, or pp 1)");
  if (m.vocab > 256 || m.vocab < 2) bad("the byte tokenizer needs a vocabulary of 2..256");
  const double need = estimate_worker_bytes(c);
  if (need > c.memory_limit_bytes)
    bad("this run needs about " + format_quantity(need, "bytes") + " per worker, over the limit of " +
        format_quantity(c.memory_limit_bytes, "bytes") +
        " (memory_limit_bytes / --memory-limit-GB): use a smaller model or batch, or more workers");
  // The workers of this process (all of them in the in-process lab, one per MPI rank): a limit raised past
  // the machine (--memory-limit-GB 100000) must not end in std::bad_alloc minutes into the allocation, so
  // their total is checked against what the machine has.
  const int here = workers_in_this_process > 0 ? std::min(workers_in_this_process, p.workers()) : p.workers();
  const double total = need * here, have = machine_memory_bytes();
  if (have > 0 && total > 0.9 * have)
    bad("this run needs about " + format_quantity(total, "bytes") + " for its " + std::to_string(here) + " workers (" +
        format_quantity(need, "bytes") + " each), and this machine has " + format_quantity(have, "bytes") +
        " of memory in all: use a smaller model, batch or context");
}

double machine_memory_bytes() {
#if defined(__EMSCRIPTEN__)
  return 4.0 * double(1ull << 30);  // wasm32: the address space is the limit
#elif defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) return double(pages) * double(page);
#endif
  return 0;
}

}  // namespace mc::train
