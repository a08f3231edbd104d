#include "train/corpus.h"

#include "train/train.h"
#include "train/worker.h"

#include <algorithm>
#include <cmath>

namespace mc::train {

SyntheticLanguage make_synthetic_language(uint64_t seed, int n) {
  SyntheticLanguage L;
  Rng rng{seed};
  const std::string cons = "bdfgklmnprstvz", vow = "aeiou";
  while (int(L.words.size()) < n) {
    std::string w;
    const int syll = 1 + int(rng.next() % 3);
    for (int s = 0; s < syll; ++s) {
      w.push_back(cons[rng.next() % cons.size()]);
      w.push_back(vow[rng.next() % vow.size()]);
    }
    bool dup = false;
    for (const auto& x : L.words) dup = dup || x == w;
    if (!dup) L.words.push_back(w);
  }
  // Each word has 3 successors with probabilities 0.6, 0.3, 0.1: about 0.9 nats of choice per word.
  const double probs[3] = {0.6, 0.3, 0.1};
  L.next.resize(size_t(n));
  for (int i = 0; i < n; ++i) {
    std::vector<int> used;
    for (double p : probs) {
      int j;
      do j = int(rng.next() % uint64_t(n));
      while (std::find(used.begin(), used.end(), j) != used.end());
      used.push_back(j);
      L.next[size_t(i)].push_back({j, p});
    }
  }
  // Stationary distribution by power iteration (the chain is irreducible for these seeds; the tests check
  // that pi is a fixed point).
  std::vector<double> pi(size_t(n), 1.0 / n);
  std::vector<double> nx(size_t(n), 0.0);
  for (int it = 0; it < 5000; ++it) {
    std::fill(nx.begin(), nx.end(), 0.0);
    for (int i = 0; i < n; ++i)
      for (auto [j, p] : L.next[size_t(i)]) nx[size_t(j)] += pi[size_t(i)] * p;
    // Lazy step (average with the previous) so a periodic chain still converges.
    for (int i = 0; i < n; ++i) pi[size_t(i)] = 0.5 * (pi[size_t(i)] + nx[size_t(i)]);
  }
  L.stationary = pi;
  double row_h = 0;
  for (double p : probs) row_h -= p * std::log(p);
  L.entropy_nats_per_word = row_h;  // every row has the same successor distribution
  for (int i = 0; i < n; ++i) L.mean_bytes_per_word += pi[size_t(i)] * double(L.words[size_t(i)].size() + 1);
  return L;
}

std::string generate_text(const SyntheticLanguage& L, size_t bytes, uint64_t seed) {
  Rng rng{seed};
  std::string out;
  out.reserve(bytes + 16);
  int w = 0;
  while (out.size() < bytes) {
    out += L.words[size_t(w)];
    out.push_back(' ');
    double u = rng.uniform();
    int pick = L.next[size_t(w)].back().first;
    for (auto [j, p] : L.next[size_t(w)]) {
      if (u < p) {
        pick = j;
        break;
      }
      u -= p;
    }
    w = pick;
  }
  out.resize(bytes);
  return out;
}

std::string default_corpus() {
  static const std::string text = generate_text(make_synthetic_language(), 64 * 1024);
  return text;
}

}  // namespace mc::train
