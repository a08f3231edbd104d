// corpus.cpp - the training texts (corpus.h): the shipped corpora, the synthetic Markov language and its
// exact entropy rate, and user files checked to be text.
//
// Sections: the synthetic language (stationary distribution, make/load, generate_text); the shipped corpora
// (list_corpora); what counts as text (check_corpus_text); resolve_corpus (an id or a file) and
// default_corpus.
#include "train/storage/corpus.h"

#include "core/json_doc.h"
#include "core/paths.h"
#include "train/model/worker.h"
#include "train/train.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace mc::train {
namespace {

// Stationary distribution by power iteration from the uniform distribution. Lazy steps (average with the
// previous iterate) so that a periodic chain still converges; 5000 steps are far more than the
// 24-word chain needs (its second eigenvalue is well inside the unit circle).
std::vector<double> stationary_distribution(const std::vector<std::vector<std::pair<int, double>>>& next) {
  const int n = int(next.size());
  std::vector<double> pi(size_t(n), 1.0 / n);
  std::vector<double> nx(size_t(n), 0.0);
  for (int it = 0; it < 5000; ++it) {
    std::fill(nx.begin(), nx.end(), 0.0);
    for (int i = 0; i < n; ++i)
      for (auto [j, p] : next[size_t(i)]) nx[size_t(j)] += pi[size_t(i)] * p;
    for (int i = 0; i < n; ++i) pi[size_t(i)] = 0.5 * (pi[size_t(i)] + nx[size_t(i)]);
  }
  return pi;
}

std::string read_file(const std::string& path, const std::string& fix) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read the file. " + fix);
  in.seekg(0, std::ios::end);  // the size first: an oversized file is refused without reading it
  if (const std::streamoff n = in.tellg(); n > 0 && size_t(n) > kMaxCorpusBytes)
    throw std::runtime_error(path + ": the file is " + std::to_string(n) + " bytes; a corpus is at most " +
                             std::to_string(kMaxCorpusBytes) + " bytes (64 MiB): use a part of it");
  in.seekg(0, std::ios::beg);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string corpus_dir(const std::string& assets_dir) {
  return (assets_dir.empty() ? find_assets_dir() : assets_dir) + "/corpus";
}

const char* kAssetsFix =
    "The built-in corpora ship in assets/corpus/ of the source tree: run from the source tree, or set "
    "MEGACLUSTER_ASSETS to the assets folder (the web build preloads it at /assets).";

}  // namespace

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
  // The chain is irreducible for these seeds (load_synthetic_language checks it for the shipped file).
  const std::vector<double> pi = stationary_distribution(L.next);
  L.stationary = pi;
  double row_h = 0;
  for (double p : probs) row_h -= p * std::log(p);
  L.entropy_nats_per_word = row_h;  // every row has the same successor distribution
  for (int i = 0; i < n; ++i) L.mean_bytes_per_word += pi[size_t(i)] * double(L.words[size_t(i)].size() + 1);
  return L;
}

SyntheticLanguage load_synthetic_language(const std::string& path) {
  if (!file_exists(path)) throw std::runtime_error(path + ": the synthetic language file is missing. " + kAssetsFix);
  const JsonDoc doc = JsonDoc::load(path);
  const JsonCursor root = doc.root();
  root.only_keys({"title", "source", "note", "words"});
  const std::vector<JsonCursor> words = root["words"].elements();
  const int n = int(words.size());
  if (n < 2) root["words"].fail("expected at least 2 words, found " + std::to_string(n));
  SyntheticLanguage L;
  L.next.resize(size_t(n));
  for (int i = 0; i < n; ++i) {
    const JsonCursor w = words[size_t(i)];
    w.only_keys({"word", "next"});
    std::string text = w["word"].string();
    if (text.empty()) w["word"].fail("a word cannot be empty (spaces delimit words in the generated text)");
    for (unsigned char ch : text)
      if (ch <= ' ' || ch == 0x7f)
        w["word"].fail("a word cannot contain spaces or control characters (a space ends a word)");
    for (int k = 0; k < i; ++k)
      if (L.words[size_t(k)] == text)
        w["word"].fail("\"" + text + "\" is also word " + std::to_string(k) +
                       ": words must be distinct, or the text would not determine the chain's path");
    L.words.push_back(std::move(text));
    const std::vector<JsonCursor> succ = w["next"].elements();
    if (succ.empty()) w["next"].fail("every word needs at least one successor");
    double sum = 0;
    for (const JsonCursor& s : succ) {
      s.only_keys({"to", "p"});
      const int to = int(s["to"].integer_in(0, n - 1));
      const double p = s["p"].number_in(0, 1);
      if (p <= 0) s["p"].fail("a probability must be above 0 (leave out a successor that never follows)");
      for (auto [j, q] : L.next[size_t(i)])
        if (j == to) s["to"].fail("successor " + std::to_string(to) + " is listed twice for this word: merge them");
      L.next[size_t(i)].push_back({to, p});
      sum += p;
    }
    if (std::fabs(sum - 1.0) > 1e-9) {
      std::ostringstream os;
      os.precision(12);
      os << "the successor probabilities sum to " << sum << ", not 1 (within 1e-9): fix the \"p\" values";
      w["next"].fail(os.str());
    }
  }
  // Irreducible: every word reachable from word 0 and word 0 from every word, otherwise the stationary
  // distribution (hence the entropy) would not describe the text generated from word 0.
  auto reach = [&](bool forward) {
    std::vector<char> seen(size_t(n), 0);
    std::vector<int> stack{0};
    seen[0] = 1;
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      for (int k = 0; k < n; ++k) {
        bool edge = false;
        if (forward)
          edge = std::any_of(L.next[size_t(i)].begin(), L.next[size_t(i)].end(), [&](auto e) { return e.first == k; });
        else
          edge = std::any_of(L.next[size_t(k)].begin(), L.next[size_t(k)].end(), [&](auto e) { return e.first == i; });
        if (edge && !seen[size_t(k)]) seen[size_t(k)] = 1, stack.push_back(k);
      }
    }
    return seen;
  };
  const auto from0 = reach(true), to0 = reach(false);
  for (int k = 0; k < n; ++k)
    if (!from0[size_t(k)] || !to0[size_t(k)])
      words[size_t(k)].fail(std::string("this word can ") +
                            (from0[size_t(k)] ? "not lead back to" : "never be reached from") +
                            " the first word: the chain must be irreducible for its entropy to be the text's");
  L.stationary = stationary_distribution(L.next);
  // Entropy rate of a stationary Markov chain: H = sum_i pi_i H(next | i) (Cover & Thomas 2006, Thm. 4.2.4).
  // When every word has the same list of probabilities (the shipped language), sum_i pi_i = 1 makes H
  // that one row's entropy exactly; using it directly keeps the figure bit-identical to
  // make_synthetic_language's, which run results and scenario digests carry.
  bool same_rows = true;
  for (int i = 0; i < n; ++i) {
    double row_h = 0;
    for (auto [j, p] : L.next[size_t(i)]) row_h -= p * std::log(p);
    L.entropy_nats_per_word += L.stationary[size_t(i)] * row_h;
    L.mean_bytes_per_word += L.stationary[size_t(i)] * double(L.words[size_t(i)].size() + 1);
    same_rows = same_rows && L.next[size_t(i)].size() == L.next[0].size() &&
                std::equal(L.next[size_t(i)].begin(), L.next[size_t(i)].end(), L.next[0].begin(),
                           [](auto x, auto y) { return x.second == y.second; });
  }
  if (same_rows) {
    double row_h = 0;
    for (auto [j, p] : L.next[0]) row_h -= p * std::log(p);
    L.entropy_nats_per_word = row_h;
  }
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

std::vector<CorpusEntry> list_corpora(const std::string& assets_dir) {
  const std::string index = corpus_dir(assets_dir) + "/index.json";
  if (!file_exists(index)) throw std::runtime_error(index + ": the list of built-in corpora is missing. " + kAssetsFix);
  const JsonDoc doc = JsonDoc::load(index);
  const JsonCursor root = doc.root();
  root.only_keys({"title", "note", "corpora"});
  std::vector<CorpusEntry> out;
  for (const JsonCursor& c : root["corpora"].elements()) {
    c.only_keys({"id", "file", "kind", "title", "description", "license", "entropy_source", "generate"});
    CorpusEntry e;
    e.id = c["id"].string();
    if (e.id.empty() || e.id.find_first_of("/.") != std::string::npos)
      c["id"].fail("an id must be non-empty and hold no '/' or '.' (those mean a file path on the command line)");
    for (const auto& o : out)
      if (o.id == e.id) c["id"].fail("the id \"" + e.id + "\" is used twice");
    e.file = c["file"].string();
    e.kind = c["kind"].one_of({"markov_language", "text"});
    e.title = c["title"].string();
    e.description = c["description"].string();
    e.license = c["license"].string();
    if (e.kind == "markov_language") {
      e.entropy_source = c["entropy_source"].string();
      const JsonCursor g = c["generate"];
      g.only_keys({"bytes", "seed"});
      e.generate_bytes = size_t(g["bytes"].integer_in(int64_t(kMinCorpusBytes), 64ll << 20));
      e.generate_seed = uint64_t(g["seed"].integer_in(0, 1ll << 53));
    }
    out.push_back(std::move(e));
  }
  if (out.empty()) root["corpora"].fail("list at least one corpus");
  return out;
}

size_t first_invalid_utf8(const std::string& s) {
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = uint8_t(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // RFC 3629, section 4: the well-formed sequences, with the narrower ranges of the second byte that
    // exclude overlong forms (E0, F0), surrogates (ED) and code points above U+10FFFF (F4).
    int len = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
      len = 2;
    else if (c >= 0xE0 && c <= 0xEF)
      len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
      len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
      return i;
    if (i + size_t(len) > n) return i;
    const unsigned c1 = uint8_t(s[i + 1]);
    if (c1 < lo || c1 > hi) return i;
    for (int k = 2; k < len; ++k)
      if ((uint8_t(s[i + size_t(k)]) & 0xC0) != 0x80) return i;
    i += size_t(len);
  }
  return std::string::npos;
}

void check_corpus_text(const std::string& text, const std::string& name) {
  if (text.size() > kMaxCorpusBytes)
    throw std::runtime_error(name + ": the text is " + std::to_string(text.size()) + " bytes; a corpus is at most " +
                             std::to_string(kMaxCorpusBytes) + " bytes (64 MiB): use a part of it");
  if (const size_t bad = first_invalid_utf8(text); bad != std::string::npos) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", unsigned(uint8_t(text[bad])));
    throw std::runtime_error(name + ": not UTF-8 text: the byte at offset " + std::to_string(bad) + " (" + hex +
                             ") does not begin a valid UTF-8 sequence. Save the file as UTF-8 (for a Latin-1 file: "
                             "iconv -f latin1 -t utf-8 IN > OUT)");
  }
  // Valid UTF-8 can still be binary: a NUL byte, or control characters beyond tab, newline, carriage
  // return and form feed in more than 1% of the bytes, are not what a text corpus holds.
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    throw std::runtime_error(name + ": not text: a NUL byte at offset " + std::to_string(nul) +
                             " (binary data). Give a UTF-8 text file");
  size_t controls = 0;
  for (char ch : text) {
    const auto b = uint8_t(ch);
    if ((b < 0x20 && b != '\t' && b != '\n' && b != '\r' && b != '\f') || b == 0x7f) ++controls;
  }
  if (controls * 100 > text.size())
    throw std::runtime_error(name + ": not text: " + std::to_string(controls) + " of its " +
                             std::to_string(text.size()) +
                             " bytes are control characters (binary data). Give a UTF-8 "
                             "text file");
  if (text.size() < kMinCorpusBytes)
    throw std::runtime_error(name + ": a corpus needs at least " + std::to_string(kMinCorpusBytes) +
                             " bytes of text, this has " + std::to_string(text.size()) + ". Use a longer file");
}

Corpus resolve_corpus(const std::string& id_or_path, const std::string& assets_dir) {
  const std::string arg = id_or_path.empty() || id_or_path == "default" ? "synthetic" : id_or_path;
  Corpus c;
  if (arg.find_first_of("/.") == std::string::npos) {
    const std::string dir = corpus_dir(assets_dir);
    const std::vector<CorpusEntry> entries = list_corpora(assets_dir);
    auto it = std::find_if(entries.begin(), entries.end(), [&](const CorpusEntry& e) { return e.id == arg; });
    if (it != entries.end()) {
      c.id = it->id;
      c.name = it->title;
      c.path = dir + "/" + it->file;
      if (it->kind == "markov_language") {
        const SyntheticLanguage L = load_synthetic_language(c.path);
        c.text = generate_text(L, it->generate_bytes, it->generate_seed);
        c.entropy_nats_per_byte = L.entropy_nats_per_byte();
      } else {
        if (!file_exists(c.path))
          throw std::runtime_error(c.path + ": the built-in corpus \"" + c.id + "\" is missing. " + kAssetsFix);
        c.text = read_file(c.path, kAssetsFix);
      }
      check_corpus_text(c.text, c.path);
      return c;
    }
    if (!file_exists(arg)) {
      std::string ids;
      for (const auto& e : entries) ids += (ids.empty() ? "" : ", ") + e.id;
      throw std::runtime_error("\"" + arg + "\" is neither a built-in corpus (" + ids +
                               ") nor a file: give one of those ids or "
                               "the path of a UTF-8 text file");
    }
  }
  c.path = arg;
  c.name = arg.substr(arg.find_last_of('/') == std::string::npos ? 0 : arg.find_last_of('/') + 1);
  {
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec))
      throw std::runtime_error(arg +
                               ": is a directory, not a text file. Give the path of a UTF-8 text file inside it "
                               "(at least 1 KiB), or a built-in corpus id (synthetic, story)");
  }
  if (!file_exists(arg))
    throw std::runtime_error(
        arg +
        ": no such corpus file. Give the path of a UTF-8 text file (at least 1 KiB), or a built-in "
        "corpus id (see assets/corpus/index.json: synthetic, story)");
  c.text = read_file(arg, "Check the permissions");
  check_corpus_text(c.text, arg);
  return c;
}

std::string default_corpus() {
  // Generated once per process from assets/corpus/synthetic-language.json (64 KiB, seed 11 by the index).
  static const std::string text = resolve_corpus("synthetic").text;
  return text;
}

}  // namespace mc::train
