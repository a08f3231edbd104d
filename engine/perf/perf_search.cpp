// perf_search.cpp - every parallel layout of a model on a cluster, ranked by time to train, with the
// reason each rejected layout fails.
//
// Enumerated: tp in powers of two up to 64, pp over the divisors of the layer count and powers of two (a
// pp that does not divide the layers splits them as evenly as possible; the interleaved schedule needs it to),
// dp over the divisors of the global batch, with tp*pp*dp GPUs (whole nodes, or part of one node) not
// more than the cluster has; then micro-batch (powers of two), ZeRO stage, recomputation, schedule and
// virtual stages, each only where the config's training stack runs it (Software: interleaved schedule,
// selective recompute, ZeRO stages). Sequence parallelism is on whenever tp > 1 and the stack has it (it
// only saves memory and element-wise time; Korthikanti et al. 2022). Context parallelism, on a stack that
// has it, in powers of two whose 2 cp chunks divide the sequence (the config's cp when it names one > 1):
// what makes a 131,072-token sequence fit without a one-micro-batch pipeline (Llama 3, Sec. 3.3.2).
#include "perf/perf.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

namespace mc::perf {

namespace {

std::vector<int> divisors(long long n, long long cap) {
  std::vector<int> d;
  for (long long i = 1; i <= n && i <= cap; ++i)
    if (n % i == 0) d.push_back(int(i));
  return d;
}

struct Collector {
  const SearchOptions& o;
  SearchResult& r;
  std::map<std::string, long long> counts;
  void reject(const Layout& L, const std::string& reason) {
    ++r.considered;
    ++counts[reason];
    if ((int)r.rejected.size() < o.max_rejected) r.rejected.push_back({L, reason});
  }
};

bool faster(const SearchCandidate& a, const SearchCandidate& b) {
  if (a.estimate.fits != b.estimate.fits) return a.estimate.fits;
  if (a.estimate.training_days != b.estimate.training_days) return a.estimate.training_days < b.estimate.training_days;
  return a.estimate.gpu_hours < b.estimate.gpu_hours;
}

}  // namespace

SearchResult search(const Config& base, const SearchOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  SearchResult r;
  Collector col{o, r, {}};
  const ModelSpec& m = base.model;
  const long long cluster_gpus = base.cluster.gpus();
  const int gpn = base.cluster.gpus_per_node;
  const int B = base.layout.global_batch;

  std::set<int> pps;
  for (int d : divisors(m.layers, m.layers)) pps.insert(d);
  for (int p = 1; p <= 64; p *= 2) pps.insert(p);
  const std::vector<int> dps = divisors(B, cluster_gpus);
  std::vector<SearchCandidate> kept;
  kept.reserve(size_t(o.max_results) * 4 + 8);

  std::vector<int> cps = {std::max(1, base.layout.cp)};
  if (base.layout.cp <= 1 && base.software.context_parallel)
    for (int cp = 2; cp <= 64 && 2LL * cp <= m.seq_len; cp *= 2)
      if (m.seq_len % (2 * cp) == 0) cps.push_back(cp);

  for (int tp = 1; tp <= 64; tp *= 2) {
    if (o.only_tp > 0 && tp != o.only_tp) continue;
    for (int pp : pps) {
      if (o.only_pp > 0 && pp != o.only_pp) continue;
      if ((long long)tp * pp > cluster_gpus) continue;
      for (int cp : cps)
        for (int dp : dps) {
          Layout L = base.layout;
          // Sequence parallelism only where the stack has it (Korthikanti et al. 2022; software.json).
          L.tp = tp, L.cp = cp, L.pp = pp, L.dp = dp, L.global_batch = B,
          L.sequence_parallel = tp > 1 && base.software.sequence_parallel;
          const long long n = (long long)tp * cp * pp * dp;
          if (n > cluster_gpus) continue;  // not a layout of this cluster at all (not counted)
          if (m.heads % tp != 0 || m.ffn() % tp != 0 || m.kv() % tp != 0) {  // layout_problems: whole K/V heads
            col.reject(L, "tp does not divide the attention heads");
            continue;
          }
          // Uneven splits are layouts too (stage_layers); only more stages than layers is not.
          if (pp > m.layers) {
            col.reject(L, "more pipeline stages than layers");
            continue;
          }
          if (n > gpn && n % gpn != 0) {
            col.reject(L, "tp*pp*dp is not a whole number of nodes");
            continue;
          }
          Config c = base;
          c.cluster.nodes = int(n > gpn ? n / gpn : 1);
          if (n < gpn) c.cluster.gpus_per_node = int(n);
          for (int mb = 1; mb <= o.max_micro_batch; mb *= 2) {
            L.micro_batch = mb;
            if (B % ((long long)mb * dp) != 0) {
              col.reject(L, "micro_batch*dp does not divide the global batch");
              continue;
            }
            const int micro = B / (mb * dp);
            for (int zero = 0; zero <= (o.include_zero && dp > 1 ? 3 : 0); ++zero) {
              L.zero = zero;
              for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
                L.recompute = rc;
                std::vector<std::pair<PipeSchedule, int>> scheds = {{PipeSchedule::one_f_one_b, 1}};
                if (pp > 1) {
                  scheds.push_back({PipeSchedule::gpipe, 1});
                  for (int v = 2; v <= o.max_virtual_stages; ++v) {
                    // Any split into p v chunks of at least one layer (chunk_layers), even or not.
                    const int units = m.layers + (L.embedding_stages == EmbeddingStages::as_layers ? 2 : 0);
                    if ((long long)pp * v > units) continue;
                    if (micro % pp != 0) continue;
                    scheds.push_back({PipeSchedule::interleaved, v});
                  }
                }
                for (auto [sch, v] : scheds) {
                  L.schedule = sch, L.virtual_stages = v;
                  // Only what the selected training stack can run (software.json): no interleaved schedule,
                  // selective recompute or ZeRO stage it lacks; the reason names the stack and the feature.
                  if (const std::string why = stack_refusal(base.software, L); !why.empty()) {
                    col.reject(L, why.substr(why.find(':') + 2, why.find(" (software.json") - why.find(':') - 2));
                    continue;
                  }
                  c.layout = L;
                  const MemoryBreakdown mem = memory_per_gpu(c);
                  if (mem.total > c.cluster.hbm_bytes && o.only_fitting) {
                    col.reject(L, "does not fit in " + c.cluster.accelerator + " memory");
                    continue;
                  }
                  ++r.considered;
                  ++r.evaluated;
                  SearchCandidate sc{L, estimate(c)};
                  kept.push_back(std::move(sc));
                  if (kept.size() >= size_t(o.max_results) * 4 + 8) {
                    std::nth_element(kept.begin(), kept.begin() + o.max_results, kept.end(), faster);
                    kept.resize(size_t(o.max_results));
                  }
                }
              }
            }
          }
        }
    }
  }
  std::sort(kept.begin(), kept.end(), faster);
  if ((int)kept.size() > o.max_results) kept.resize(size_t(o.max_results));
  r.ranked = std::move(kept);
  for (auto& [k, v] : col.counts) r.rejected_by_reason.push_back({k, v});
  std::sort(r.rejected_by_reason.begin(), r.rejected_by_reason.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  r.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void merge(SearchResult& into, SearchResult&& slice, const SearchOptions& o) {
  for (auto& sc : slice.ranked) into.ranked.push_back(std::move(sc));
  std::sort(into.ranked.begin(), into.ranked.end(), faster);
  if ((int)into.ranked.size() > o.max_results) into.ranked.resize(size_t(o.max_results));
  for (auto& x : slice.rejected)
    if ((int)into.rejected.size() < o.max_rejected) into.rejected.push_back(std::move(x));
  std::map<std::string, long long> counts(into.rejected_by_reason.begin(), into.rejected_by_reason.end());
  for (auto& [k, v] : slice.rejected_by_reason) counts[k] += v;
  into.rejected_by_reason.assign(counts.begin(), counts.end());
  std::sort(into.rejected_by_reason.begin(), into.rejected_by_reason.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  into.evaluated += slice.evaluated;
  into.considered += slice.considered;
  into.elapsed_s += slice.elapsed_s;
}

json to_json(const SearchResult& r, const Config& c) {
  json ranked = json::array();
  int rank = 1;
  for (const auto& sc : r.ranked) {
    Config cc = c;
    cc.layout = sc.layout;
    const long long n = sc.layout.ranks();
    cc.cluster.nodes = int(n > c.cluster.gpus_per_node ? n / c.cluster.gpus_per_node : 1);
    if (n < c.cluster.gpus_per_node) cc.cluster.gpus_per_node = int(n);
    json j = to_json(sc.estimate, cc);
    j["rank"] = rank++;
    ranked.push_back(std::move(j));
  }
  json rejected = json::array();
  for (const auto& x : r.rejected)
    rejected.push_back({{"tp", x.layout.tp},
                        {"pp", x.layout.pp},
                        {"dp", x.layout.dp},
                        {"micro_batch", x.layout.micro_batch},
                        {"zero", x.layout.zero},
                        {"recompute", to_string(x.layout.recompute)},
                        {"schedule", schedule_name(x.layout.schedule)},
                        {"virtual_stages", x.layout.virtual_stages},
                        {"reason", x.reason}});
  json reasons = json::object();
  for (const auto& [k, v] : r.rejected_by_reason) reasons[k] = v;
  return {{"model", c.model.id.empty() ? "custom" : c.model.id},
          {"cluster", c.cluster.id.empty() ? "custom" : c.cluster.id},
          {"cluster_gpus", c.cluster.gpus()},
          {"global_batch", c.layout.global_batch},
          {"considered", r.considered},
          {"evaluated", r.evaluated},
          {"elapsed_s", r.elapsed_s},
          {"ranked", ranked},
          {"rejected_by_reason", reasons},
          {"rejected_examples", rejected}};
}

json search_json(const Catalog& cat, const json& config, const SearchOptions& o, const std::string& file) {
  Config c = parse_config(cat, config, file, false);
  return to_json(search(c, o), c);
}

}  // namespace mc::perf
