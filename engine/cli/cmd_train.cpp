// `megacluster train`: trains the lab's GPT across virtual workers (dp x tp x pp, ZeRO 0-3), with a
// progress bar on stderr and a summary (or one JSON object) on stdout. `--bench` runs the reference
// configuration (4 layers, width 256, 4 heads, context 256, batch 8, bytes, fp32) and adds the SGEMM rate.
//
// Under mpirun (engine/mpi, when the build found MPI): each rank runs one worker of the layout, the
// collectives go over MPI point-to-point, and only rank 0 prints. The same losses as in one process.
#include "catalog/catalog.h"
#include "cli/cli.h"
#include "core/format.h"
#include "core/json_doc.h"
#include "core/paths.h"
#include "device/registry.h"
#include "train/device_peak.h"
#include "train/run.h"
#include "train/train.h"
#if MC_HAVE_MPI
#include "mpi/mpi_transport.h"
#endif

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace {

// Whether this process runs one worker of an MPI job: started by mpirun with 2+ ranks, or asked (--mpi).
struct MpiLaunch {
  bool mpi = false, error = false;
  int rank = 0;
  std::string message;
};

MpiLaunch mpi_launch(bool asked) {
#if MC_HAVE_MPI
  const mc::mpi::Launch l = mc::mpi::launched();
  return {asked || l.size > 1, false, l.rank, ""};
#else
  // Without MPI in this build, N copies under mpirun would each train the whole layout: refuse instead.
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (!size) size = std::getenv("PMI_SIZE"), rank = std::getenv("PMI_RANK");
  const int n = size ? std::atoi(size) : 0;
  if (!asked && n <= 1) return {};
  return {false, true, rank ? std::atoi(rank) : 0,
          "this megacluster was built without MPI, so it cannot run one worker per rank; install Open MPI "
          "(scripts/setup.sh installs openmpi-bin and libopenmpi-dev) and rebuild, or run it without mpirun "
          "(one process then runs every worker)"};
#endif
}

void progress_bar(const mc::train::StepResult& r, int total) {
  char text[96];
  std::snprintf(text, sizeof text, "step %d/%d  loss %.4f  lr %.2e  %.2fs/step", r.step, total, r.loss, r.lr,
                r.seconds);
  mc::cli::progress_bar(total > 0 ? double(r.step) / total : 1.0, text);
}

// On a device whose probe names catalog hardware (a GPU): the run's model FLOP/s against the card's catalog
// peak for the precision it ran in, or a note saying why there is none.
void add_gpu_mfu(mc::train::RunResult& r, const std::string& exe_path) {
  // Only a device whose probe names catalog hardware has a sourced peak (the CPU names none).
  const mc::device::DeviceKind* kind = mc::device::find_device_kind(r.device);
  if (!kind || mc::device::probe_of(*kind).hardware.empty()) return;
  mc::train::RunMfu m;
  try {
    const mc::Catalog cat = mc::load_catalog(mc::find_assets_dir(exe_path));
    const mc::device::DeviceProbe& d = mc::device::probe_of(*kind);
    const mc::Record* gpu = mc::train::gpu_record_for(*cat.table("gpus"), d.hardware);
    std::string field;
    const double peak = gpu ? mc::train::peak_flops_for(*gpu, r.options.train.precision, &field) : 0;
    if (!gpu) {
      m.note = d.hardware + " is not in assets/catalog/gpus.json, so its peak is not known";
    } else if (peak <= 0) {
      m.note = gpu->name + " has no " + field + " in gpus.json";
    } else {
      // Virtual workers share the machine's GPUs: the run used min(workers, GPUs) of them.
      const int used = std::max(1, std::min(int(r.workers.size()), d.units));
      m.peak_flops = peak * used;
      m.peak_of = "gpus/" + gpu->id + "/" + field + " x " + std::to_string(used);
      m.mfu = r.gflops * 1e9 / (peak * used);
    }
  } catch (const std::exception& e) {
    m.note = std::string("the catalog could not be read: ") + e.what();
  }
  r.mfu = m;
}

int run_train(mc::cli::Args& a) {
  const bool as_json = a.flag("--json");
  const bool bench = a.flag("--bench");
  const bool resume = a.flag("--resume");
  const bool quiet = a.flag("--quiet");
  auto dp = a.option("--dp"), tp = a.option("--tp"), pp = a.option("--pp"), zero = a.option("--zero");
  auto steps = a.option("--steps"), seed = a.option("--seed"), mbs = a.option("--micro-batches");
  auto batch = a.option("--batch"), schedule = a.option("--schedule"), corpus = a.option("--corpus");
  auto ckpt = a.option("--checkpoint"), every = a.option("--checkpoint-every"), mem = a.option("--memory-limit-GB");
  auto sample = a.option("--sample"), sample_every = a.option("--sample-every"), device = a.option("--device");
  auto precision = a.option("--precision");
  const bool force_mpi = a.flag("--mpi"), mpi_native = a.flag("--mpi-native");
  auto mpi_timeout = a.option("--mpi-timeout");
  std::vector<std::string> pos = a.positionals();
  a.finish();
  if (pos.size() > 1) throw mc::cli::UsageError("at most one CONFIG.json");

  // The run's options: the defaults, a file's keys (located errors: file:line:column, key) or the benchmark's
  // shape, then the command-line options laid over them key by key, each source parsed once by the one codec
  // (train/run.h), so every key's type and range is checked in one place.
  mc::train::RunOptions opts;
  if (!pos.empty()) {
    opts = mc::train::parse_run_options(mc::JsonDoc::load(pos[0]).root());
  } else if (bench) {
    opts = mc::train::parse_run_options(
        {{"model", {{"layers", 4}, {"width", 256}, {"heads", 4}, {"context", 256}, {"vocab", 256}}},
         {"batch", 8},
         {"steps", 6}},
        "the --bench configuration");
  }
  mc::json cfg = mc::json::object();  // the options given on the command line, as config keys
  auto set_int = [&](const std::optional<std::string>& v, const char* key, const char* flag, long long lo,
                     long long hi) {
    if (!v) return;
    mc::cli::Args one(a.command(), {flag, *v}, a.exe_path());
    cfg[key] = one.option_int(flag, 0, lo, hi);
  };
  set_int(dp, "dp", "--dp", 1, 64);
  set_int(tp, "tp", "--tp", 1, 64);
  set_int(pp, "pp", "--pp", 1, 64);
  set_int(zero, "zero", "--zero", 0, 3);
  set_int(steps, "steps", "--steps", 0, 10000000);
  set_int(seed, "seed", "--seed", 0, 1ll << 53);
  set_int(mbs, "micro_batches", "--micro-batches", 0, 4096);
  set_int(batch, "batch", "--batch", 1, 65536);
  set_int(every, "checkpoint_every", "--checkpoint-every", 1, 10000000);
  set_int(sample_every, "sample_every", "--sample-every", 1, 10000000);
  if (schedule) {
    if (*schedule != "gpipe" && *schedule != "1f1b") throw mc::cli::UsageError("--schedule is gpipe or 1f1b");
    cfg["schedule"] = *schedule;
  }
  if (mem) {
    mc::cli::Args one(a.command(), {"--memory-limit-GB", *mem}, a.exe_path());
    const double gb = one.option_double("--memory-limit-GB", 2);
    if (!(gb > 0)) throw mc::cli::UsageError("--memory-limit-GB must be positive");
    cfg["memory_limit_bytes"] = gb * 1e9;
  }
  if (corpus) cfg["corpus"] = *corpus;
  if (device) {
    const std::vector<std::string> choices = mc::device::device_choices();
    if (std::find(choices.begin(), choices.end(), *device) == choices.end())
      throw mc::cli::UsageError("--device is " + mc::device::device_choices_text());
    cfg["device"] = *device;
  }
  if (precision) {
    mc::device::Precision p;
    if (!mc::device::parse_precision(*precision, &p))
      throw mc::cli::UsageError(
          "--precision is fp32, tf32 (TensorFloat-32 products) or bf16 (bfloat16 products); "
          "master weights and reductions stay fp32");
    cfg["precision"] = *precision;
  }
  if (ckpt) cfg["checkpoint"] = *ckpt;
  if (every && !ckpt) throw mc::cli::UsageError("--checkpoint-every needs --checkpoint DIR");
  if (resume) {
    if (!ckpt) throw mc::cli::UsageError("--resume needs --checkpoint DIR");
    cfg["resume"] = true;
  }
  if (bench) cfg["bench"] = true;
  if (sample) {
    mc::cli::Args one(a.command(), {"--sample", *sample}, a.exe_path());
    cfg["sample_bytes"] = one.option_int("--sample", 0, 0, 100000);
  } else if (!as_json && !bench) {
    cfg["sample_bytes"] = 120;
  }

  // Across processes? mpirun announces itself in the environment; --mpi asks for MPI with one rank too.
  // Known before validating: under MPI this process holds one worker, not the whole layout's memory.
  const MpiLaunch launch = mpi_launch(force_mpi || mpi_native || mpi_timeout.has_value());
  opts = mc::train::parse_run_options(cfg, "the command-line options", opts);
  const mc::train::TrainConfig& tc = opts.train;
  try {
    mc::train::validate(tc, launch.mpi ? 1 : 0);
  } catch (const std::invalid_argument& e) {
    // Name where the settings came from: the file (with any options laid over it) or the options alone.
    std::fprintf(stderr, "megacluster train: cannot run this configuration (%s): %s\n",
                 pos.empty() ? "from the command-line options and defaults"
                             : (pos[0] + " with the command-line options laid over it").c_str(),
                 e.what());
    return 1;
  }
  if (launch.error) {
    if (launch.rank == 0) std::fprintf(stderr, "megacluster train: %s\n", launch.message.c_str());
    return 1;
  }
  int rank = 0;
  mc::train::Transport* transport = nullptr;
  std::string nccl_note;
#if MC_HAVE_MPI
  std::unique_ptr<mc::mpi::Session> session;
  std::unique_ptr<mc::mpi::MpiTransport> mpi;
  if (launch.mpi) {
    double timeout_s = 60;
    if (mpi_timeout) {
      mc::cli::Args one(a.command(), {"--mpi-timeout", *mpi_timeout}, a.exe_path());
      timeout_s = one.option_double("--mpi-timeout", 60);
      if (!(timeout_s > 0)) throw mc::cli::UsageError("--mpi-timeout is seconds, more than 0");
    }
    session = std::make_unique<mc::mpi::Session>(nullptr, nullptr);
    rank = session->rank();
    if (session->size() != tc.parallel.workers()) {
      // Every rank knows; only rank 0 says it.
      if (rank == 0)
        std::fprintf(
            stderr,
            "megacluster train: mpirun started %d ranks, but the layout dp %d x tp %d x pp %d has %d workers "
            "(one per rank); run `mpirun -np %d megacluster train ...`, or choose --dp/--tp/--pp whose product "
            "is %d\n",
            session->size(), tc.parallel.dp, tc.parallel.tp, tc.parallel.pp, tc.parallel.workers(),
            tc.parallel.workers(), session->size());
      return 1;
    }
    mpi = std::make_unique<mc::mpi::MpiTransport>(timeout_s);
    mc::mpi::install_gang_handler(*mpi);
    if (mpi_native) mpi->use_native_collectives();
    mc::mpi::nccl_bootstrap(*mpi, &nccl_note);
    transport = mpi.get();
  }
#endif
  const bool speak = rank == 0;  // across processes only rank 0 prints (progress, samples, results)
  const bool quiet_here = quiet || !speak;
  const int total = tc.steps;
  mc::train::RunResult res;
  try {
    res = mc::train::run(
        opts,
        [&](const mc::train::StepResult& r) {
          if (!quiet_here) progress_bar(r, total);
        },
        [&](int step, const std::string& text) {
          if (quiet_here) return;
          // Above the progress bar: clear its line, print the sample, and let the next step redraw the bar.
          std::string one = text;
          for (char& ch : one)
            if (ch == '\n' || ch == '\t') ch = ' ';
          std::fprintf(stderr, "\r\033[K  step %d sample: %s\n", step, one.c_str());
        },
        transport);
  } catch (const std::exception& e) {
    if (!transport) throw;
#if MC_HAVE_MPI
    // One rank failing stops the gang (the others would wait for it): say why, then MPI_Abort.
    std::fprintf(stderr, "megacluster train: rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    mc::mpi::Session::abort(1);
#endif
    return 1;
  }
  if (!speak) return 0;
  add_gpu_mfu(res, a.exe_path());
  if (transport) {
    res.mpi_collectives = mpi_native ? "mpi-native" : "engine rings over MPI point-to-point";
    res.nccl = nccl_note;
  }
  for (const auto& [path, error] : res.skipped_checkpoints)
    std::fprintf(stderr, "megacluster train: warning: skipped %s (left on disk until this run saves that step): %s\n",
                 path.c_str(), error.c_str());
  if (!res.resumed_from.empty() && !quiet)
    std::fprintf(stderr, "megacluster train: resumed from %s\n", res.resumed_from.c_str());
  if (as_json) {
    std::printf("%s\n", mc::train::to_json(res).dump(2).c_str());
    return 0;
  }
  std::printf("trained %d steps: dp %d x tp %d x pp %d, ZeRO-%d, %s, %lld parameters\n", res.steps_run, tc.parallel.dp,
              tc.parallel.tp, tc.parallel.pp, tc.parallel.zero, mc::schedule_name(tc.parallel.schedule),
              (long long)res.parameters);
  const std::vector<double>& losses = res.losses;
  const size_t n = losses.size();
  for (size_t i = 0; i < n; ++i)
    if (i == 0 || i + 1 == n || (i + 1) % std::max<size_t>(1, n / 8) == 0)
      std::printf("  step %4zu  loss %.4f\n", i + 1, losses[i]);
  if (res.corpus_entropy_nats_per_byte > 0)
    std::printf("  corpus entropy (the lowest possible loss): %.4f nats/byte\n", res.corpus_entropy_nats_per_byte);
  std::printf("device: %s (%s), %s products\n", res.device.c_str(), res.device_note.c_str(),
              mc::device::to_string(tc.precision));
  std::printf("host <-> device in the last step: %s in, %s out (the token ids; the loss and norm partials)\n",
              mc::format_quantity(res.host_to_device_bytes_last_step, "bytes").c_str(),
              mc::format_quantity(res.device_to_host_bytes_last_step, "bytes").c_str());
  std::printf("throughput: %.0f tokens/s (median step: %.0f), %.2f GFLOP/s (%.1f MFLOP/token, sgemm path %s)\n",
              res.tokens_per_s, res.tokens_per_s_median_step, res.gflops, res.flops_per_token / 1e6,
              res.sgemm_path.c_str());
  if (res.mfu && res.mfu->note.empty())
    std::printf("MFU: %.1f%% of %s (%s FLOP/s)\n", 100 * res.mfu->mfu, res.mfu->peak_of.c_str(),
                mc::format_quantity(res.mfu->peak_flops, "").c_str());
  else if (res.mfu)
    std::printf("MFU: not shown: %s\n", res.mfu->note.c_str());
  if (res.sgemm_shape) {
    const std::array<int, 3>& shape = *res.sgemm_shape;
    std::printf("sgemm %dx%dx%d: %.2f GFLOP/s  (training reaches %.0f%% of it)\n", shape[0], shape[1], shape[2],
                res.sgemm_gflops, 100.0 * res.gflops / std::max(1e-9, res.sgemm_gflops));
    std::printf("threads: %d (MC_THREADS, or the CPUs this process may run on)\n", res.threads);
  }
  if (transport)
    std::printf("transport: MPI, %d ranks (one worker each), collectives: %s; NCCL: %s\n", res.mpi_ranks,
                res.mpi_collectives.c_str(), nccl_note.c_str());
  if (tc.parallel.workers() > 1) {
    std::printf("bytes sent per worker in the last step (counted / predicted by the communication model):\n");
    for (size_t w = 0; w < res.workers.size(); ++w)
      std::printf("  worker %2zu  %12s / %12s\n", w, mc::format_quantity(res.workers[w].bytes_sent, "bytes").c_str(),
                  mc::format_quantity(res.predicted_bytes_per_worker[w], "bytes").c_str());
  }
  if (!res.checkpoints.empty()) std::printf("checkpoint: %s\n", res.checkpoints.back().c_str());
  if (opts.sample_bytes > 0) std::printf("sample: %s\n", res.sample.c_str());
  return 0;
}

mc::cli::Registrar reg{
    {"train",
     "train the lab's small GPT across virtual workers (data, tensor, pipeline, ZeRO); "
     "under `mpirun -np N` one worker per MPI rank, across processes and hosts",
     "megacluster train [CONFIG.json] [--dp N] [--tp N] [--pp N] [--zero 0-3] [--steps N] [--seed N]\n"
     "       [--batch N] [--micro-batches N] [--schedule gpipe|1f1b] [--corpus synthetic|story|FILE]\n"
     "       [--checkpoint DIR [--checkpoint-every K]] [--resume] [--memory-limit-GB X]\n"
     "       [--sample BYTES] [--sample-every K] [--device auto|KIND] [--precision fp32|tf32|bf16]\n"
     "       [--quiet] [--json] | --bench [--json]\n"
     "       [--mpi] [--mpi-native] [--mpi-timeout S]\n"
     "  --device: auto (the best kind found) or a kind of this build's device registry, as `megacluster\n"
     "  device` lists them.\n"
     "  Across processes and hosts: mpirun -np N megacluster train --dp .. --tp .. --pp .. (N = dp x tp x pp);\n"
     "  each MPI rank runs one worker, the engine's rings run over MPI point-to-point (same bytes and\n"
     "  bit-identical losses as one process), only rank 0 prints. --mpi: use MPI even with one rank;\n"
     "  --mpi-native: MPI's own collectives (faster, not bit-identical); --mpi-timeout S: a rank that\n"
     "  waits S seconds (default 60) on a peer stops the gang naming it. Hosts: mpirun --hostfile FILE\n"
     "  (README, \"Across processes and hosts\"); checkpoints need a directory every host sees.",
     run_train}};

}  // namespace
