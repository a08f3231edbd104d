// checkpoint.cpp - saving and resuming a run, bit for bit.
//
// File layout (little-endian, as the machine writes it; version bumps when it changes):
//   "MCCKPT\0\0"  u32 version  u64 header_bytes  header (JSON: config, step, losses, data RNG, buffer sizes)
//   per worker: four float arrays, each u64 count + data: params, param_shard, m, v
//   u64 FNV-1a 64 of every byte before it.
// Written to NAME.tmp, flushed and fsync'ed, then renamed over NAME: a crash mid-write leaves the previous
// files intact (rename is atomic on POSIX file systems; the fsync makes sure the bytes are on disk first).
//
// Across processes (engine/mpi) every rank writes its own worker's arrays to a shard file
//   ckpt-NNNNNNNN.<save id>.wRRRRR.mcsh: "MCSHARD\0" u32 version u64 step u32 worker, the four arrays, FNV-1a
// (temp file, fsync, rename), then rank 0 writes the manifest ckpt-NNNNNNNN.mcck (version 3: the same
// header plus "shards": [{file, bytes, fnv1a}] and no arrays) the same atomic way: the manifest's rename
// is the commit. The save id is new for every save, so a save never overwrites the shards a committed
// manifest names (a crash mid-save leaves the previous checkpoint whole); rank 0 removes the step's older
// shards after the commit. Every rank learns whether every write worked, so a full disk stops the whole
// gang with one message and no rank reports a checkpoint that is not on disk. Both kinds are read in
// both modes (each process loads the workers it runs), so a run continues with another number of
// processes: an MPI run's checkpoint resumes in one process and the other way round.
//
// Sections:
//   bytes, readers, identity and atomic writes
//   saving: one file, or shards and a manifest across processes
//   loading: every worker this process runs; across processes all ranks agree
//   finding checkpoints
#include "core/json_doc.h"
#include "train/parallel/trainer_impl.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#if !defined(_WIN32)
#include <fcntl.h>
#include <unistd.h>
#endif

namespace mc::train {

// ---- bytes, readers, identity and atomic writes ----

namespace {

constexpr char kMagic[8] = {'M', 'C', 'C', 'K', 'P', 'T', 0, 0};
// Version 2: ZeRO-2/3 shard the model unit by unit (each unit padded to a multiple of dp), so their
// shards and Adam state are laid out differently from version 1's one flat partition. Version 1 files of
// the other stages hold the same arrays and are still read.
constexpr uint32_t kVersion = 2;
constexpr uint32_t kManifestVersion = 3;  // the arrays are in shard files named by the header
constexpr char kShardMagic[8] = {'M', 'C', 'S', 'H', 'A', 'R', 'D', 0};

uint64_t fnv1a(const std::string& s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= uint8_t(s[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

void put_floats(std::string& out, const std::vector<float>& v) {
  put(out, uint64_t(v.size()));
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

struct Reader {
  const std::string& s;
  const std::string& file;
  size_t pos = 0;
  void need(size_t n) const {
    if (n > s.size() || pos > s.size() - n)  // not pos + n: a crafted u64 length would wrap around
      throw std::runtime_error(file + ": checkpoint is truncated (needs " + std::to_string(pos + n) + " bytes, has " +
                               std::to_string(s.size()) + "); it was refused and nothing was loaded");
  }
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, s.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  void skip_floats() {  // another process's worker: its own process checks and loads it
    const uint64_t n = get<uint64_t>();
    if (n > (s.size() - pos) / sizeof(float)) need(size_t(-1) / 2);
    pos += n * sizeof(float);
  }
  std::vector<float> floats(size_t expected, const char* what) {
    const uint64_t n = get<uint64_t>();
    if (n != expected)
      throw std::runtime_error(file + ": checkpoint " + what + " has " + std::to_string(n) +
                               " values, this run expects " + std::to_string(expected) +
                               " (a different model or layout)");
    need(n * sizeof(float));
    std::vector<float> v(n);
    if (n > 0) std::memcpy(v.data(), s.data() + pos, n * sizeof(float));
    pos += n * sizeof(float);
    return v;
  }
};

// The parts of the config a resumed run must share with the saved one (steps may grow).
nlohmann::json identity(const TrainConfig& c) {
  nlohmann::json j = to_json(c);
  j.erase("steps");
  j.erase("memory_limit_bytes");
  j.erase("precision");  // the weights are fp32 in any precision: a run may resume in another
  return j;
}

// "dp: checkpoint 2, this run 1; model.width: checkpoint 64, this run 128": the keys a resumed run must
// share with the saved one and does not.
std::string identity_diff(const nlohmann::json& saved, const nlohmann::json& now, const std::string& prefix = "") {
  std::string out;
  auto add = [&](const std::string& key, const nlohmann::json& a, const nlohmann::json& b) {
    if (!out.empty()) out += "; ";
    out += key + ": checkpoint " + (a.is_null() ? std::string("(absent)") : a.dump()) + ", this run " +
           (b.is_null() ? std::string("(absent)") : b.dump());
  };
  if (!saved.is_object() || !now.is_object()) {
    if (saved != now) add(prefix.empty() ? "config" : prefix, saved, now);
    return out;
  }
  std::vector<std::string> keys;
  for (auto it = saved.begin(); it != saved.end(); ++it) keys.push_back(it.key());
  for (auto it = now.begin(); it != now.end(); ++it)
    if (!saved.contains(it.key())) keys.push_back(it.key());
  for (const std::string& k : keys) {
    const nlohmann::json a = saved.contains(k) ? saved.at(k) : nlohmann::json();
    const nlohmann::json b = now.contains(k) ? now.at(k) : nlohmann::json();
    if (a == b) continue;
    const std::string key = prefix.empty() ? k : prefix + "." + k;
    const std::string sub = a.is_object() && b.is_object() ? identity_diff(a, b, key) : std::string();
    if (!sub.empty())
      out += (out.empty() ? "" : "; ") + sub;
    else
      add(key, a, b);
  }
  return out;
}

// Makes the temp file's bytes durable before the rename publishes it.
void sync_file(const std::string& path) {
#if !defined(_WIN32) && !defined(__EMSCRIPTEN__)
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
#else
  (void)path;
#endif
}

// NAME.tmp, flushed and fsync'ed, then renamed over NAME.
void write_atomic(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.flush();
    if (!out) throw std::runtime_error(tmp + ": cannot write the checkpoint (disk full or no permission)");
  }
  sync_file(tmp);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error(path + ": cannot move the checkpoint into place: " + ec.message());
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read the checkpoint");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace

// ---- saving: one file, or shards and a manifest across processes ----

std::string Trainer::save_checkpoint(const std::string& dir) const {
  const Impl& s = *impl_;
  std::filesystem::create_directories(dir);
  nlohmann::json h = {{"config", to_json(s.cfg)},
                      {"step", s.step},
                      {"losses", s.losses},
                      {"data_rng", std::to_string(s.data_rng.state)},
                      {"workers", s.workers.size()}};
  std::string body(kMagic, 8);
  put(body, kVersion);
  const std::string hs = h.dump();
  put(body, uint64_t(hs.size()));
  body += hs;
  auto arrays = [](const Worker& w) {  // the edge: the worker's state comes to the host to be written
    const HostState h = w.download_state();
    std::string a;
    put_floats(a, h.params);
    put_floats(a, h.param_shard);
    put_floats(a, h.m);
    put_floats(a, h.v);
    return a;
  };
  char name[64];
  std::snprintf(name, sizeof name, "ckpt-%08d.mcck", s.step);
  const std::string path = (std::filesystem::path(dir) / name).string();
  auto write = [&](std::string& file) {
    put(file, fnv1a(file, file.size()));
    write_atomic(path, file);
  };
  if (!s.transport) {
    for (const Worker& w : s.workers) body += arrays(w);
    write(body);
    return path;
  }
  // Across processes: each rank writes its shard, rank 0 the manifest (see the top of this file).
  std::string id;  // this save's id, from rank 0: time and pid in hex
  if (s.me() == 0) {
    char hex[40];
    std::snprintf(hex, sizeof hex, "%llx%x",
                  static_cast<unsigned long long>(std::chrono::system_clock::now().time_since_epoch().count()),
                  static_cast<unsigned>(getpid()));
    id = hex;
  }
  id = s.transport->all_gather(id)[0];
  char shard_name[96];
  std::snprintf(shard_name, sizeof shard_name, "ckpt-%08d.%s.w%05d.mcsh", s.step, id.c_str(), s.me());
  std::string report;  // "ok NAME BYTES FNV" or "error MESSAGE"
  try {
    std::string shard(kShardMagic, 8);
    put(shard, kManifestVersion);
    put(shard, uint64_t(s.step));
    put(shard, uint32_t(s.me()));
    shard += arrays(s.workers[size_t(s.me())]);
    const uint64_t sum = fnv1a(shard, shard.size());
    put(shard, sum);
    write_atomic((std::filesystem::path(dir) / shard_name).string(), shard);
    report = "ok " + std::string(shard_name) + " " + std::to_string(shard.size()) + " " + std::to_string(sum);
  } catch (const std::exception& e) {
    report = "error rank " + std::to_string(s.me()) + ": " + e.what();
  }
  const std::vector<std::string> reports = s.transport->all_gather(report);
  for (const std::string& r : reports)
    if (r.rfind("error ", 0) == 0) throw std::runtime_error(r.substr(6));
  std::string error;
  if (s.me() == 0) {
    try {
      nlohmann::json shards = nlohmann::json::array();
      for (const std::string& r : reports) {
        std::istringstream in(r.substr(3));
        std::string file, bytes, sum;
        in >> file >> bytes >> sum;
        shards.push_back({{"file", file}, {"bytes", std::stoull(bytes)}, {"fnv1a", sum}});
      }
      h["shards"] = shards;
      std::string manifest(kMagic, 8);
      put(manifest, kManifestVersion);
      const std::string mh = h.dump();
      put(manifest, uint64_t(mh.size()));
      manifest += mh;
      write(manifest);
      // Committed: the step's shards of earlier saves (a crashed one, or the run before a resume) go.
      const std::string prefix = std::string(shard_name).substr(0, 14), mine = "." + id + ".";
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        const std::string n = e.path().filename().string();
        if (n.rfind(prefix, 0) == 0 && n.size() > 5 && n.substr(n.size() - 5) == ".mcsh" &&
            n.find(mine) == std::string::npos)
          std::filesystem::remove(e.path(), ec);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  error = s.transport->all_gather(error)[0];
  if (!error.empty()) throw std::runtime_error(error);
  s.transport->note_checkpoint(path);
  return path;
}

// ---- loading: every worker this process runs; across processes all ranks agree ----

namespace {

// One process's load: every worker it runs, from the single file or from the manifest's shards. Reads
// everything first, then commits: a failure leaves the trainer as it was.
void load_file(Trainer::Impl& s, const std::string& path) {
  const std::string data = read_all(path);
  Reader r{data, path};
  r.need(8 + 4 + 8 + 8);
  if (std::memcmp(data.data(), kMagic, 8) != 0)
    throw std::runtime_error(path + ": not a megacluster checkpoint (bad magic bytes)");
  r.pos = 8;
  const uint32_t version = r.get<uint32_t>();
  if (version == 1 && s.cfg.parallel.zero >= 2)  // a sound file of another layout: refuse the directory
    throw CheckpointMismatch(path + ": checkpoint version 1, this build reads version " + std::to_string(kVersion) +
                             " for ZeRO-2/3 runs (they now shard the model layer by layer); restart the run in "
                             "another --checkpoint directory, or resume with the build that wrote it");
  if (version != kVersion && version != 1 && version != kManifestVersion)
    throw std::runtime_error(path + ": checkpoint version " + std::to_string(version) +
                             ", this build reads versions 1 to " + std::to_string(kManifestVersion));
  uint64_t stored;
  std::memcpy(&stored, data.data() + data.size() - 8, 8);
  if (stored != fnv1a(data, data.size() - 8))
    throw std::runtime_error(path +
                             ": checkpoint checksum mismatch (the file is truncated or corrupt); it was refused, "
                             "nothing was loaded; resume from an earlier ckpt-*.mcck or delete this one");
  const uint64_t hlen = r.get<uint64_t>();
  r.need(hlen);
  // The header is checked like any input file: located errors naming the field, the rule and the fix
  // (a checksum only says the bytes are the ones written, not that a hand-made file is sane).
  const JsonDoc hdoc = JsonDoc::parse(data.substr(r.pos, hlen), path + " (header)", kMaxCheckpointHeaderBytes);
  r.pos += hlen;
  const JsonCursor hroot = hdoc.root();
  if (!hroot.is_object()) hroot.fail("the checkpoint header is a JSON object; the file is not one this program wrote");
  const int saved_step = int(hroot["step"].integer_in(0, 1 << 30));
  std::vector<double> saved_losses;
  const JsonCursor jl = hroot["losses"];
  if (!jl.is_array())
    jl.fail("losses is a list of numbers, one per step trained; the file is not one this program wrote");
  for (const JsonCursor& x : jl.elements()) saved_losses.push_back(x.number());
  if (saved_losses.size() > size_t(saved_step))
    jl.fail("holds " + std::to_string(saved_losses.size()) + " losses for " + std::to_string(saved_step) +
            " steps; resume from another checkpoint");
  const JsonCursor jr = hroot["data_rng"];
  const std::string rng_text = jr.string();
  if (rng_text.empty() || rng_text.size() > 20 || rng_text.find_first_not_of("0123456789") != std::string::npos)
    jr.fail("data_rng is the data sampler's state as decimal digits; \"" + rng_text + "\" is not one");
  uint64_t rng_state = 0;
  for (char ch : rng_text) {
    const uint64_t digit = uint64_t(ch - '0');
    if (rng_state > (UINT64_MAX - digit) / 10) jr.fail("data_rng is larger than 2^64 - 1");
    rng_state = rng_state * 10 + digit;
  }
  const TrainConfig saved = parse_config(hroot["config"]);
  if (identity(saved) != identity(s.cfg))
    throw CheckpointMismatch(path + ": checkpoint was written by a different run configuration (" +
                             identity_diff(identity(saved), identity(s.cfg)) +
                             "); resume with the checkpoint's settings, or use another --checkpoint directory");
  // Read everything first, then commit: a failure leaves the trainer as it was.
  // The arrays are read into host copies; only a checkpoint read whole is uploaded to the devices.
  std::vector<HostState> ws(s.workers.size());
  auto read_arrays = [&](Reader& from, const Worker& w) {
    HostState& h = ws[size_t(w.id)];
    h.params = from.floats(size_t(w.n_params), "params");
    h.param_shard = from.floats(size_t(w.n_param_shard), "param_shard");
    h.m = from.floats(size_t(w.n_moments), "adam_m");
    h.v = from.floats(size_t(w.n_moments), "adam_v");
  };
  if (version == kManifestVersion) {
    // Written across processes: the arrays are in the shard files the manifest names, beside it.
    const JsonCursor js = hroot["shards"];
    if (!js.is_array() || js.elements().size() != ws.size())
      js.fail("shards lists one file per worker (" + std::to_string(ws.size()) + " for this layout)");
    const std::vector<JsonCursor> shards = js.elements();
    for (const Worker& w : s.workers) {
      if (!s.local(w.id)) continue;  // another process loads it
      const JsonCursor e = shards[size_t(w.id)];
      const std::string file = e["file"].string();
      if (file.empty() || file.find('/') != std::string::npos || file.find("..") != std::string::npos)
        e["file"].fail("a shard is a file name beside the manifest, not a path");
      const std::string shard_path = (std::filesystem::path(path).parent_path() / file).string();
      const std::string bytes = read_all(shard_path);
      // The manifest's size and checksum of the shard, and the shard's own trailing checksum.
      uint64_t trailer = 0;
      if (bytes.size() >= 8) std::memcpy(&trailer, bytes.data() + bytes.size() - 8, 8);
      const uint64_t sum = bytes.size() >= 8 ? fnv1a(bytes, bytes.size() - 8) : 0;
      if (bytes.size() != uint64_t(e["bytes"].integer_in(0, int64_t(1) << 50)) || bytes.size() < 8 + 4 + 8 + 4 + 8 ||
          std::to_string(sum) != e["fnv1a"].string() || trailer != sum)
        throw std::runtime_error(shard_path + ": this shard is not the one " + path +
                                 " was saved with (missing, truncated, corrupt or from another save); the checkpoint "
                                 "was refused and nothing was loaded; resume from an earlier ckpt-*.mcck");
      Reader sr{bytes, shard_path};
      sr.pos = 8;
      const uint32_t sv = sr.get<uint32_t>();
      const uint64_t sstep = sr.get<uint64_t>();
      const uint32_t sw = sr.get<uint32_t>();
      if (std::memcmp(bytes.data(), kShardMagic, 8) != 0 || sv != kManifestVersion || sstep != uint64_t(saved_step) ||
          sw != uint32_t(w.id))
        throw std::runtime_error(shard_path + ": not worker " + std::to_string(w.id) + "'s shard of step " +
                                 std::to_string(saved_step) + "; the checkpoint was refused and nothing was loaded");
      read_arrays(sr, w);
      if (sr.pos + 8 != bytes.size()) throw std::runtime_error(shard_path + ": shard has unexpected trailing bytes");
    }
  } else {
    for (const Worker& w : s.workers) {
      if (!s.local(w.id)) {  // across processes: each reads its own worker's arrays
        for (int k = 0; k < 4; ++k) r.skip_floats();
        continue;
      }
      read_arrays(r, w);
    }
  }
  if (r.pos + 8 != data.size()) throw std::runtime_error(path + ": checkpoint has unexpected trailing bytes");
  for (Worker& w : s.workers)
    if (s.local(w.id)) {
      s.dev->bind_worker(w.id);
      w.upload_state(ws[size_t(w.id)]);
    }
  s.step = saved_step;
  s.losses = std::move(saved_losses);
  s.data_rng.state = rng_state;
}

}  // namespace

void Trainer::load_checkpoint(const std::string& path) {
  Impl& s = *impl_;
  if (!s.transport) return load_file(s, path);
  // Across processes every rank must load the same checkpoint or none: each says how its part went, and
  // if any failed, all throw that rank's error (the kind kept, so a mismatch still refuses the directory).
  // A rank that did load is overwritten by the next checkpoint tried, or the run stops.
  std::string mine;
  try {
    load_file(s, path);
  } catch (const CheckpointMismatch& e) {
    mine = std::string("M") + e.what();
  } catch (const std::exception& e) {
    mine = std::string("R") + e.what();
  }
  const std::vector<std::string> all = s.transport->all_gather(mine);
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    const std::string what =
        (r == size_t(s.me()) ? std::string() : "rank " + std::to_string(r) + ": ") + all[r].substr(1);
    if (all[r][0] == 'M') throw CheckpointMismatch(what);
    throw std::runtime_error(what);
  }
  s.transport->note_checkpoint(path);
}

// ---- finding checkpoints ----

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> found;
  if (!std::filesystem::is_directory(dir, ec)) return found;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.size() == 18 && n.rfind("ckpt-", 0) == 0 && n.substr(13) == ".mcck") found.push_back(e.path().string());
  }
  // Names hold the step in 8 zero-padded digits, so the name order is the step order.
  std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
    return std::filesystem::path(a).filename() > std::filesystem::path(b).filename();
  });
  return found;
}

std::string latest_checkpoint(const std::string& dir) {
  const std::vector<std::string> all = list_checkpoints(dir);
  return all.empty() ? std::string() : all.front();
}

}  // namespace mc::train
