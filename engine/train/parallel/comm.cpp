// comm.cpp - see comm.h: the counters, the mailboxes, the ring and tree collectives, and (with a
// Transport) each process's part of them.
//
// Sections:
//   counting            count_sent / count_received: one process counts both ends, else its own
//   point to point      send / recv / has (envelopes only across processes)
//   rings               reduce_scatter, all_gather, all_reduce; ring_part across processes
//   tree                tree_all_reduce; tree_part across processes
#include "train/parallel/comm.h"

#include <cstring>
#include <stdexcept>

namespace mc::train {

const char* to_string(Traffic t) {
  switch (t) {
    case Traffic::dp:
      return "dp";
    case Traffic::tp:
      return "tp";
    case Traffic::pp:
      return "pp";
    case Traffic::tie:
      return "tie";
    case Traffic::control:
      return "control";
  }
  return "?";
}

namespace {
constexpr int kTagRing = -1000;  // collectives use negative tags; pipelines use micro-batch tags >= 0
}  // namespace

namespace {
// Everything but the control scalars (loss, gradient norm): the traffic the model predicts.
double sum_but_control(const double (&by_class)[kTrafficClasses]) {
  double s = 0;
  for (int i = 0; i < kTrafficClasses; ++i)
    if (i != int(Traffic::control)) s += by_class[i];
  return s;
}
}  // namespace

double WorkerCounters::data_bytes_sent() const { return sum_but_control(bytes_sent); }
double WorkerCounters::data_messages_sent() const { return sum_but_control(messages_sent); }
double LinkCounters::data_bytes() const { return sum_but_control(bytes); }
double LinkCounters::data_messages() const { return sum_but_control(messages); }

Comm::Comm(int workers)
    : inbox_(size_t(workers)), pool_(size_t(workers)), counters_(size_t(workers)), step_(size_t(workers)) {}

// ---- counting ----

void Comm::count_sent(int src, int dst, double bytes, Traffic t) {
  for (auto* c : {&counters_[size_t(src)], &step_[size_t(src)]}) {
    c->bytes_sent[int(t)] += bytes;
    c->messages_sent[int(t)] += 1;
  }
  for (auto* l : {&links_[{src, dst}], &step_links_[{src, dst}]}) {
    l->bytes[int(t)] += bytes;
    l->messages[int(t)] += 1;
  }
  log_.push_back({src, dst, bytes, t});
}

void Comm::count_received(int dst, double bytes) {
  counters_[size_t(dst)].bytes_received += bytes;
  step_[size_t(dst)].bytes_received += bytes;
}

// In one process both ends are counted at the send. Across processes each counts its own end, when its
// bytes really leave or arrive, so a rank's counters are what its transport carried.
void Comm::count(int src, int dst, double bytes, Traffic t) {
  if (local(src)) count_sent(src, dst, bytes, t);
  if (!transport_) count_received(dst, bytes);
}

// ---- point to point ----

device::Buffer<float> Comm::take(int dst, size_t n) {
  if (!dev_) throw std::logic_error("Comm: no device set (Comm::set_device) before the first message");
  auto& free = pool_[size_t(dst)];
  size_t best = free.size();
  for (size_t i = 0; i < free.size(); ++i)
    if (size_t(free[i].size()) >= n && (best == free.size() || free[i].size() < free[best].size())) best = i;
  if (best < free.size()) {
    device::Buffer<float> b = std::move(free[best]);
    free.erase(free.begin() + long(best));
    return b;
  }
  dev_->bind_worker(dst);  // on the receiver's device, where its kernels will read it
  return device::Buffer<float>(*dev_, int64_t(n));
}

void Comm::give_back(int dst, device::Buffer<float> b) {
  if (!b.empty()) pool_[size_t(dst)].push_back(std::move(b));
}

void Comm::send(int src, int dst, int tag, device::DPtr<const float> data, size_t n, Traffic t, int tick) {
  if (src == dst) throw std::logic_error("Comm::send to self");
  if (transport_) {
    // The envelope on every process (the pipeline clock asks has()); the data only from its owner, staged
    // through the host for the transport.
    inbox_[size_t(dst)].push_back({src, tag, tick, {}, n, {}});
    if (local(src)) {
      std::vector<float> host(n);
      dev_->download(host.data(), data, int64_t(n));
      transport_->send(dst, tag, host.data(), n * sizeof(float));
      count(src, dst, double(n) * sizeof(float), t);
    }
    return;
  }
  Message m{src, tag, tick, take(dst, n), n, {}};
  dev_->copy(m.data.ptr(), data, int64_t(n));
  inbox_[size_t(dst)].push_back(std::move(m));
  count(src, dst, double(n) * sizeof(float), t);
}

void Comm::recv(int dst, int src, int tag, device::DPtr<float> out, size_t n) {
  auto& q = inbox_[size_t(dst)];
  for (auto it = q.begin(); it != q.end(); ++it)
    if (it->src == src && it->tag == tag) {
      if (it->n != n)
        throw std::logic_error("Comm::recv: worker " + std::to_string(dst) + " expected " + std::to_string(n) +
                               " floats from " + std::to_string(src) + ", the message has " + std::to_string(it->n));
      Message m = std::move(*it);
      q.erase(it);
      if (transport_) {
        if (local(dst)) {
          const std::vector<char> raw = transport_->recv(src, tag);
          if (raw.size() != n * sizeof(float))
            throw std::runtime_error("Comm::recv: worker " + std::to_string(dst) + " received " +
                                     std::to_string(raw.size()) + " bytes from " + std::to_string(src) + ", expected " +
                                     std::to_string(n * sizeof(float)));
          dev_->upload(out, reinterpret_cast<const float*>(raw.data()), int64_t(n));
          count_received(dst, double(raw.size()));
        }
        return;
      }
      dev_->copy(out, device::DPtr<const float>(m.data.ptr()), int64_t(n));
      give_back(dst, std::move(m.data));
      return;
    }
  throw std::logic_error("Comm::recv: worker " + std::to_string(dst) + " has no message from " + std::to_string(src) +
                         " with tag " + std::to_string(tag));
}

// A ring step's reduction: the message from src is added into out (out[j] += message[j]) on dst's device.
void Comm::reduce_from_mailbox(int dst, int src, int tag, device::DPtr<float> out, size_t n) {
  auto& q = inbox_[size_t(dst)];
  for (auto it = q.begin(); it != q.end(); ++it)
    if (it->src == src && it->tag == tag) {
      if (it->n != n) throw std::logic_error("Comm: a ring message of the wrong size");
      Message m = std::move(*it);
      q.erase(it);
      dev_->bind_worker(dst);
      dev_->add(out, m.data.ptr(), int64_t(n));
      give_back(dst, std::move(m.data));
      return;
    }
  throw std::logic_error("Comm: worker " + std::to_string(dst) + " has no ring message from " + std::to_string(src));
}

// The tree's control scalars travel in host memory (they came back from the devices already).
void Comm::send_host(int src, int dst, int tag, std::vector<float> data, Traffic t) {
  const double bytes = double(data.size()) * sizeof(float);
  inbox_[size_t(dst)].push_back({src, tag, 0, {}, data.size(), std::move(data)});
  count(src, dst, bytes, t);
}

std::vector<float> Comm::recv_host(int dst, int src, int tag) {
  auto& q = inbox_[size_t(dst)];
  for (auto it = q.begin(); it != q.end(); ++it)
    if (it->src == src && it->tag == tag) {
      std::vector<float> d = std::move(it->host);
      q.erase(it);
      return d;
    }
  throw std::logic_error("Comm::recv: worker " + std::to_string(dst) + " has no message from " + std::to_string(src) +
                         " with tag " + std::to_string(tag));
}

bool Comm::has(int dst, int src, int tag, int before_tick) const {
  for (const auto& m : inbox_[size_t(dst)])
    if (m.src == src && m.tag == tag && m.tick < before_tick) return true;
  return false;
}

size_t Comm::pending() const {
  size_t n = 0;
  for (const auto& q : inbox_) n += q.size();
  return n;
}

void Comm::begin_step() {
  log_.clear();
  step_links_.clear();
  for (auto& c : step_) c = WorkerCounters{};
}

// ---- rings ----

void Comm::count_ring(const std::vector<int>& g, size_t chunk, Traffic t) {
  const int p = int(g.size());
  for (int k = 0; k < p - 1; ++k)
    for (int i = 0; i < p; ++i) {
      const int dst = g[size_t((i + 1) % p)];
      count(g[size_t(i)], dst, double(chunk) * sizeof(float), t);
      if (transport_ && local(dst)) count_received(dst, double(chunk) * sizeof(float));
    }
}

int Comm::local_index(const std::vector<int>& g) const {
  for (size_t i = 0; i < g.size(); ++i)
    if (local(g[i])) return int(i);
  return -1;
}

void Comm::ring_part(const std::vector<int>& g, device::DPtr<float> buf, size_t chunk, Traffic t, bool reduce) {
  const int p = int(g.size());
  const int i = local_index(g);
  if (i < 0) return;  // none of this group's members runs here
  const int next = g[size_t((i + 1) % p)], prev = g[size_t((i - 1 + p) % p)];
  const int shift = reduce ? 1 : 0;
  const size_t bytes = chunk * sizeof(float);
  // MPI carries host memory: each step's chunk crosses the host on its way out and in (counted).
  std::vector<float> out(chunk), in(chunk);
  device::Buffer<float> arrived(*dev_, reduce ? int64_t(chunk) : 0);
  for (int k = 0; k < p - 1; ++k) {
    // The in-process ring's step k seen from member i: it sends chunk (i-k-shift) to i+1 and receives
    // chunk (i-1-k-shift) from i-1, then adds it (in the same order: own value + the arriving sum).
    const int c_out = ((i - k - shift) % p + p) % p, c_in = ((i - 1 - k - shift) % p + p) % p;
    dev_->download(out.data(), device::DPtr<const float>(buf + int64_t(c_out) * int64_t(chunk)), int64_t(chunk));
    transport_->sendrecv(next, out.data(), prev, in.data(), bytes, kTagRing);
    count_sent(g[size_t(i)], next, double(bytes), t);
    count_received(g[size_t(i)], double(bytes));
    const device::DPtr<float> dst = buf + int64_t(c_in) * int64_t(chunk);
    if (reduce) {
      dev_->upload(arrived.ptr(), in.data(), int64_t(chunk));
      dev_->add(dst, arrived.ptr(), int64_t(chunk));
    } else {
      dev_->upload(dst, in.data(), int64_t(chunk));
    }
  }
}

void Comm::reduce_scatter(const std::vector<int>& g, const Bufs& bufs, size_t n, Traffic t) {
  const int p = int(g.size());
  if (p <= 1) return;
  if (n % size_t(p) != 0) throw std::logic_error("reduce_scatter: buffer not divisible by group size");
  const size_t chunk = n / size_t(p);
  if (backend_ && backend_->serves(*dev_) && backend_->reduce_scatter(g, bufs, n)) {
    ++backend_calls_;
    count_ring(g, chunk, t);
    return;
  }
  if (transport_) {
    const int i = local_index(g);
    ring_part(g, i < 0 ? device::DPtr<float>() : bufs[size_t(i)], chunk, t, true);
    return;
  }
  for (int k = 0; k < p - 1; ++k) {
    // Every member sends first (as on a real ring, all links busy at once), then every member receives.
    for (int i = 0; i < p; ++i) {
      const int c = ((i - k - 1) % p + p) % p;
      send(g[size_t(i)], g[size_t((i + 1) % p)], kTagRing - k, bufs[size_t(i)] + int64_t(c) * int64_t(chunk), chunk, t);
    }
    for (int i = 0; i < p; ++i) {
      const int from = (i - 1 + p) % p;
      const int c = ((from - k - 1) % p + p) % p;
      // The arriving chunk is added in place from its mailbox buffer: own value + the arriving sum.
      reduce_from_mailbox(g[size_t(i)], g[size_t(from)], kTagRing - k, bufs[size_t(i)] + int64_t(c) * int64_t(chunk),
                          chunk);
    }
  }
}

void Comm::all_gather(const std::vector<int>& g, const Bufs& bufs, size_t n, Traffic t) {
  const int p = int(g.size());
  if (p <= 1) return;
  if (n % size_t(p) != 0) throw std::logic_error("all_gather: buffer not divisible by group size");
  const size_t chunk = n / size_t(p);
  if (backend_ && backend_->serves(*dev_) && backend_->all_gather(g, bufs, n)) {
    ++backend_calls_;
    count_ring(g, chunk, t);
    return;
  }
  if (transport_) {
    const int i = local_index(g);
    ring_part(g, i < 0 ? device::DPtr<float>() : bufs[size_t(i)], chunk, t, false);
    return;
  }
  for (int k = 0; k < p - 1; ++k) {
    for (int i = 0; i < p; ++i) {
      const int c = ((i - k) % p + p) % p;  // member i owns chunk i and forwards what it received last
      send(g[size_t(i)], g[size_t((i + 1) % p)], kTagRing - 100 - k, bufs[size_t(i)] + int64_t(c) * int64_t(chunk),
           chunk, t);
    }
    for (int i = 0; i < p; ++i) {
      const int from = (i - 1 + p) % p;
      const int c = ((from - k) % p + p) % p;
      dev_->bind_worker(g[size_t(i)]);
      recv(g[size_t(i)], g[size_t(from)], kTagRing - 100 - k, bufs[size_t(i)] + int64_t(c) * int64_t(chunk), chunk);
    }
  }
}

void Comm::all_reduce(const std::vector<int>& g, const Bufs& bufs, size_t n, Traffic t) {
  const int p = int(g.size());
  if (p > 1 && n % size_t(p) == 0 && backend_ && backend_->serves(*dev_) && backend_->all_reduce(g, bufs, n)) {
    // NCCL's ring all-reduce is a reduce-scatter then an all-gather: the same hops as ours.
    ++backend_calls_;
    count_ring(g, n / size_t(p), t);
    count_ring(g, n / size_t(p), t);
    return;
  }
  reduce_scatter(g, bufs, n, t);
  all_gather(g, bufs, n, t);
}

// ---- tree ----

void Comm::tree_all_reduce(const std::vector<int>& g, const std::vector<double*>& bufs, size_t n, Traffic t) {
  const int p = int(g.size());
  if (p <= 1) return;
  if (transport_) {
    tree_part(g, bufs, n, t);
    return;
  }
  // Doubles travel as pairs of floats' worth of bytes; counted as 8 bytes each.
  auto send_d = [&](int i, int j, const double* d) {
    std::vector<float> raw(n * 2);
    std::memcpy(raw.data(), d, n * sizeof(double));
    send_host(g[size_t(i)], g[size_t(j)], kTagRing - 500, std::move(raw), t);
  };
  auto recv_d = [&](int i, int j, double* out, bool add) {
    std::vector<float> raw = recv_host(g[size_t(i)], g[size_t(j)], kTagRing - 500);
    std::vector<double> d(n);
    std::memcpy(d.data(), raw.data(), n * sizeof(double));
    for (size_t k = 0; k < n; ++k) out[k] = add ? out[k] + d[k] : d[k];
  };
  // Reduce: in round r, members with bit r set send to member - 2^r.
  for (int step = 1; step < p; step *= 2)
    for (int i = 0; i < p; i += 2 * step)
      if (i + step < p) {
        send_d(i + step, i, bufs[size_t(i + step)]);
        recv_d(i, i + step, bufs[size_t(i)], true);
      }
  // Broadcast down the same tree.
  int top = 1;
  while (top < p) top *= 2;
  for (int step = top / 2; step >= 1; step /= 2)
    for (int i = 0; i < p; i += 2 * step)
      if (i + step < p) {
        send_d(i, i + step, bufs[size_t(i)]);
        recv_d(i + step, i, bufs[size_t(i + step)], false);
      }
}

// The tree of tree_all_reduce from one member's side: it sends when it is the child of a pair and receives
// (adding in the same round order) when it is the parent.
void Comm::tree_part(const std::vector<int>& g, const std::vector<double*>& bufs, size_t n, Traffic t) {
  const int p = int(g.size());
  const int me = local_index(g);
  if (me < 0) return;
  double* mine = bufs[size_t(me)];
  const size_t bytes = n * sizeof(double);
  auto receive = [&](int from, bool add) {
    const std::vector<char> raw = transport_->recv(g[size_t(from)], kTagRing - 500);
    if (raw.size() != bytes) throw std::logic_error("tree_all_reduce: a message of the wrong size");
    std::vector<double> d(n);
    std::memcpy(d.data(), raw.data(), bytes);
    for (size_t k = 0; k < n; ++k) mine[k] = add ? mine[k] + d[k] : d[k];
    count_received(g[size_t(me)], double(bytes));
  };
  auto give = [&](int to) {
    transport_->send(g[size_t(to)], kTagRing - 500, mine, bytes);
    count_sent(g[size_t(me)], g[size_t(to)], double(bytes), t);
  };
  for (int step = 1; step < p; step *= 2)
    for (int i = 0; i < p; i += 2 * step)
      if (i + step < p) {
        if (me == i + step) give(i);
        if (me == i) receive(i + step, true);
      }
  int top = 1;
  while (top < p) top *= 2;
  for (int step = top / 2; step >= 1; step /= 2)
    for (int i = 0; i < p; i += 2 * step)
      if (i + step < p) {
        if (me == i) give(i + step);
        if (me == i + step) receive(i, false);
      }
}

}  // namespace mc::train
