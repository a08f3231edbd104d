// mpi_transport.cpp - see mpi_transport.h.
//
// Sections:
//   launcher detection and the MPI session
//   waiting with a deadline (the heartbeat) and stopping the gang
//   MpiTransport: point-to-point, ring steps, gathers
//   the gang's SIGTERM handler
#include "mpi/mpi_transport.h"

#include <mpi.h>

#include <unistd.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace mc::mpi {

// ---- launcher detection and the MPI session ----

Launch launched() {
  // Open MPI's mpirun, then PMI/PMIx launchers (MPICH's hydra, Slurm's srun).
  auto num = [](const char* name) -> int {
    const char* v = std::getenv(name);
    return v && *v ? std::atoi(v) : -1;
  };
  const std::pair<const char*, const char*> vars[] = {
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"}, {"PMI_SIZE", "PMI_RANK"}, {"PMIX_SIZE", "PMIX_RANK"}};
  for (const auto& [size, rank] : vars)
    if (num(size) > 0) return {num(size), std::max(0, num(rank))};
  return {};
}

Session::Session(int* argc, char*** argv) {
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Session::~Session() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

void Session::abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

namespace {

// ---- waiting with a deadline (the heartbeat) and stopping the gang ----

// What the signal handler and the timeout messages print: kept in fixed buffers, written by the
// transport as the run goes (the handler may only use async-signal-safe calls such as write(2)).
char g_checkpoint[1024] = "";  // empty: no checkpoint written or resumed from yet
int g_rank = -1, g_size = 0;

// MPI tags are non-negative; the lab's collective tags are negative (comm.cpp), pipeline tags are
// micro-batch numbers (< 4096, --micro-batches). Every tag keeps its own FIFO between a pair of ranks.
int mpi_tag(int tag) { return tag >= 0 ? tag : 20000 + (-tag) % 10000; }
constexpr int kTagGather = 19000, kTagScatter = 19001;

std::string mpi_error(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, size_t(len));
}

// The gang stops: one line naming this rank, the peer and the last sound checkpoint, then MPI_Abort
// (mpirun ends every other rank; never a hang).
[[noreturn]] void stop_gang(int peer, const std::string& what) {
  const std::string restart = g_checkpoint[0] ? std::string("Last sound checkpoint: ") + g_checkpoint +
                                                    ". Restart with the same command and --resume."
                                              : std::string("This run has no checkpoint yet (--checkpoint DIR).");
  std::fprintf(stderr, "megacluster train: rank %d of %d: %s%s%s; the gang stops (all ranks). %s\n", g_rank, g_size,
               what.c_str(), peer >= 0 ? " (rank " : "", peer >= 0 ? (std::to_string(peer) + ")").c_str() : "",
               restart.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::_Exit(3);
}

void check(int rc, int peer, const char* call) {
  if (rc != MPI_SUCCESS) stop_gang(peer, std::string(call) + " failed: " + mpi_error(rc));
}

// Polls until every request completes. Past the deadline the peer is dead or stuck: stop the gang. The
// poll spins first (a ring step usually completes within microseconds) and then yields the core, so
// oversubscribed ranks (more ranks than cores) let the one that has work run.
void wait_all(MPI_Request* req, int n, int peer, double timeout_s, const char* what) {
  const auto start = std::chrono::steady_clock::now();
  for (long spins = 0;; ++spins) {
    int done = 0;
    check(MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE), peer, what);
    if (done) return;
    if (spins > 200) std::this_thread::yield();
    if ((spins & 255) == 0) {
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (waited > timeout_s)
        stop_gang(peer, std::string("no answer in ") + std::to_string(int(timeout_s)) + " s while " + what +
                            ": that rank has died or hangs (--mpi-timeout sets the limit)");
    }
  }
}

}  // namespace

// ---- MpiTransport: point-to-point, ring steps, gathers ----

struct MpiTransport::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  struct Pending {
    MPI_Request req;
    std::vector<char> data;
    int dst;
  };
  std::vector<Pending> pending;  // sends not yet known to be delivered (their buffers kept alive)
  void reap() {                  // frees the buffers of completed sends
    for (size_t i = 0; i < pending.size();) {
      int done = 0;
      check(MPI_Test(&pending[i].req, &done, MPI_STATUS_IGNORE), pending[i].dst, "MPI_Test");
      if (done) {
        pending[i] = std::move(pending.back());
        pending.pop_back();
      } else {
        ++i;
      }
    }
  }
};

MpiTransport::MpiTransport(double timeout_s) : impl_(std::make_unique<Impl>()), timeout_s_(timeout_s) {
  // A communicator of our own, whose errors return to us instead of aborting inside MPI.
  MPI_Comm_dup(MPI_COMM_WORLD, &impl_->comm);
  MPI_Comm_set_errhandler(impl_->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(impl_->comm, &rank_);
  MPI_Comm_size(impl_->comm, &size_);
  g_rank = rank_;
  g_size = size_;
}

MpiTransport::~MpiTransport() {
  if (impl_->comm != MPI_COMM_NULL) MPI_Comm_free(&impl_->comm);
}

void* MpiTransport::comm_handle() { return &impl_->comm; }

void MpiTransport::note_checkpoint(const std::string& path) {
  std::snprintf(g_checkpoint, sizeof g_checkpoint, "%s", path.c_str());
}

void MpiTransport::send(int dst, int tag, const void* data, size_t bytes) {
  impl_->reap();
  Impl::Pending p{MPI_REQUEST_NULL,
                  std::vector<char>(static_cast<const char*>(data), static_cast<const char*>(data) + bytes), dst};
  impl_->pending.push_back(std::move(p));
  Impl::Pending& q = impl_->pending.back();
  check(MPI_Isend(q.data.data(), int(bytes), MPI_BYTE, dst, mpi_tag(tag), impl_->comm, &q.req), dst, "MPI_Isend");
  wire_bytes_ += double(bytes);
}

std::vector<char> MpiTransport::recv(int src, int tag) {
  // Probe first (the size is the sender's), with the same deadline as every wait.
  const auto start = std::chrono::steady_clock::now();
  MPI_Status st;
  for (long spins = 0;; ++spins) {
    int flag = 0;
    check(MPI_Iprobe(src, mpi_tag(tag), impl_->comm, &flag, &st), src, "MPI_Iprobe");
    if (flag) break;
    if (spins > 200) std::this_thread::yield();
    if ((spins & 255) == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s_)
      stop_gang(src, "no message in " + std::to_string(int(timeout_s_)) +
                         " s: that rank has died or hangs (--mpi-timeout sets the limit)");
  }
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  std::vector<char> out(static_cast<size_t>(count));
  check(MPI_Recv(out.data(), count, MPI_BYTE, src, mpi_tag(tag), impl_->comm, MPI_STATUS_IGNORE), src, "MPI_Recv");
  return out;
}

void MpiTransport::sendrecv(int dst, const void* out, int src, void* in, size_t bytes, int tag) {
  // MPI_Sendrecv's pattern as two requests, so the wait has a deadline.
  MPI_Request req[2];
  check(MPI_Irecv(in, int(bytes), MPI_BYTE, src, mpi_tag(tag), impl_->comm, &req[0]), src, "MPI_Irecv");
  check(MPI_Isend(out, int(bytes), MPI_BYTE, dst, mpi_tag(tag), impl_->comm, &req[1]), dst, "MPI_Isend");
  wait_all(req, 2, src, timeout_s_, "in a ring step");
  wire_bytes_ += double(bytes);
}

void MpiTransport::flush() {
  for (Impl::Pending& p : impl_->pending) wait_all(&p.req, 1, p.dst, timeout_s_, "delivering a message");
  impl_->pending.clear();
}

std::vector<std::string> MpiTransport::gather(const std::string& mine) {
  // Point-to-point (not MPI_Gatherv) so that it waits with the same deadline as everything else.
  std::vector<std::string> all;
  if (rank_ != 0) {
    MPI_Request r;
    check(MPI_Isend(mine.data(), int(mine.size()), MPI_BYTE, 0, kTagGather, impl_->comm, &r), 0, "MPI_Isend");
    wait_all(&r, 1, 0, timeout_s_, "sending to rank 0");
    return all;
  }
  all.resize(size_t(size_));
  all[0] = mine;
  for (int r = 1; r < size_; ++r) {
    const std::vector<char> got = recv(r, kTagGather);
    all[size_t(r)].assign(got.begin(), got.end());
  }
  return all;
}

std::vector<std::string> MpiTransport::all_gather(const std::string& mine) {
  std::vector<std::string> all = gather(mine);
  // Rank 0 sends the list to everyone: lengths then bytes, in one message each.
  if (rank_ == 0) {
    std::string packed;
    for (const std::string& s : all) {
      const uint64_t n = s.size();
      packed.append(reinterpret_cast<const char*>(&n), sizeof n);
      packed += s;
    }
    std::vector<MPI_Request> req(size_t(size_ > 1 ? size_ - 1 : 0));
    for (int r = 1; r < size_; ++r)
      check(MPI_Isend(packed.data(), int(packed.size()), MPI_BYTE, r, kTagScatter, impl_->comm, &req[size_t(r - 1)]), r,
            "MPI_Isend");
    if (!req.empty()) wait_all(req.data(), int(req.size()), -1, timeout_s_, "sending the gathered list");
    return all;
  }
  const std::vector<char> got = recv(0, kTagScatter);
  for (size_t pos = 0; pos + sizeof(uint64_t) <= got.size();) {
    uint64_t n = 0;
    std::memcpy(&n, got.data() + pos, sizeof n);
    pos += sizeof n;
    all.emplace_back(got.data() + pos, size_t(n));
    pos += size_t(n);
  }
  return all;
}

// ---- the gang's SIGTERM handler ----

namespace {

constexpr int kMaxRanks = 4096;
pid_t g_pids[kMaxRanks];
bool g_same_host[kMaxRanks];

// Async-signal-safe text building (no printf in a handler).
struct Line {
  char buf[2048];
  size_t n = 0;
  void add(const char* s) {
    while (*s && n + 1 < sizeof buf) buf[n++] = *s++;
  }
  void add(long v) {
    char d[24];
    int k = 0;
    if (v < 0) add("-"), v = -v;
    do d[k++] = char('0' + v % 10), v /= 10;
    while (v > 0 && k < 23);
    while (k > 0 && n + 1 < sizeof buf) buf[n++] = d[--k];
  }
};

void on_terminate(int sig) {
  // mpirun sends SIGTERM to the gang when a rank died (or when it was interrupted itself). Which ranks
  // are gone: their pids no longer exist (checked for the ranks on this host; mpirun's own message
  // names the rank wherever it ran).
  Line l;
  l.add("megacluster train: rank ");
  l.add(long(g_rank));
  l.add(" of ");
  l.add(long(g_size));
  l.add(": stopped by mpirun (signal ");
  l.add(long(sig));
  l.add(")");
  int dead = 0;
  for (int r = 0; r < g_size && r < kMaxRanks; ++r) {
    if (r == g_rank || !g_same_host[r] || g_pids[r] <= 0) continue;
    if (kill(g_pids[r], 0) == -1 && errno == ESRCH) {
      l.add(dead == 0 ? ": the gang lost rank " : ", rank ");
      l.add(long(r));
      l.add(" (pid ");
      l.add(long(g_pids[r]));
      l.add(")");
      ++dead;
    }
  }
  if (dead == 0)
    l.add(": another rank stopped (its message is above), died on another host, or the job was interrupted");
  if (g_checkpoint[0]) {
    l.add(". Last sound checkpoint: ");
    l.add(g_checkpoint);
    l.add(". Restart with the same command and --resume.\n");
  } else {
    l.add(". This run has no checkpoint yet (--checkpoint DIR).\n");
  }
  ssize_t ignored = write(2, l.buf, l.n);
  (void)ignored;
  // Stay alive a moment so that the other survivors, checking pids too, do not take this rank for dead
  // (mpirun's SIGKILL follows 1 s after its SIGTERM).
  struct timespec pause = {0, 300 * 1000 * 1000};
  nanosleep(&pause, nullptr);
  _exit(128 + sig);
}

}  // namespace

void install_gang_handler(MpiTransport& t) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string mine = std::to_string(long(getpid())) + " " + host;
  const std::vector<std::string> all = t.all_gather(mine);
  for (size_t r = 0; r < all.size() && r < size_t(kMaxRanks); ++r) {
    const size_t sp = all[r].find(' ');
    g_pids[r] = pid_t(std::atol(all[r].substr(0, sp).c_str()));
    g_same_host[r] = sp != std::string::npos && all[r].substr(sp + 1) == host;
  }
  struct sigaction sa = {};
  sa.sa_handler = on_terminate;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

}  // namespace mc::mpi
