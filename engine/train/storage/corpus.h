// corpus.h - the training texts: the built-in corpora that ship in assets/corpus/ (listed in
// assets/corpus/index.json) and any UTF-8 file the user picks.
//
// The default is a synthetic language whose entropy is known exactly, so the lowest loss any model can
// reach on it (the irreducible loss, the "c" of a scaling law) is known. The language
// (assets/corpus/synthetic-language.json): a fixed vocabulary of made-up words; each word is followed by
// one of a few successors with fixed probabilities (a first-order Markov chain over words), words
// separated by one space. The byte stream determines the word stream (spaces delimit, words are
// distinct), so the entropy rate per byte is the chain's entropy rate per word divided by the mean bytes
// per word (Cover & Thomas 2006, Thm. 4.2.4 for the chain's rate; renewal-reward for the per-byte rate).
//
// Usage:
//   Corpus c = resolve_corpus("story");            // or "synthetic", "default", "notes/my.txt"
//   Trainer t(cfg, c.text);  if (c.entropy_nats_per_byte > 0) draw_floor(c.entropy_nats_per_byte);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mc::train {

struct SyntheticLanguage {
  std::vector<std::string> words;
  std::vector<std::vector<std::pair<int, double>>> next;  // successor word, probability
  std::vector<double> stationary;                         // pi, by power iteration
  double entropy_nats_per_word = 0;
  double mean_bytes_per_word = 0;  // including the space
  double entropy_nats_per_byte() const { return entropy_nats_per_word / mean_bytes_per_word; }
};

// The generator that wrote assets/corpus/synthetic-language.json (seed 7, 24 words); kept so that a test
// can check the shipped file still is exactly this language.
SyntheticLanguage make_synthetic_language(uint64_t seed = 7, int words = 24);

// Reads a language file (format: assets/corpus/synthetic-language.json) through JsonDoc and computes its
// stationary distribution and entropy. Throws LoadError (file:line:col, key, fix) when a word is empty,
// repeated or holds whitespace, a successor index is out of range, a word's probabilities do not sum to
// 1 within 1e-9, or some word cannot be reached from the first (the chain must be irreducible).
SyntheticLanguage load_synthetic_language(const std::string& path);

std::string generate_text(const SyntheticLanguage& lang, size_t bytes, uint64_t seed = 11);

// One entry of assets/corpus/index.json.
struct CorpusEntry {
  std::string id;    // "synthetic", "story": what `--corpus` and the lab's combo take
  std::string file;  // relative to assets/corpus/
  std::string kind;  // "markov_language" (text generated from the chain) or "text" (the file is the text)
  std::string title, description, license;
  std::string entropy_source;  // markov_language only: how the entropy is known
  size_t generate_bytes = 0;   // markov_language only: how much text to generate ...
  uint64_t generate_seed = 0;  // ... and from which seed
};

// The corpora listed in <assets_dir>/corpus/index.json (assets_dir empty: find_assets_dir()).
// Throws naming the index path and the fix when it is missing or malformed.
std::vector<CorpusEntry> list_corpora(const std::string& assets_dir = "");

// A training text and what is known about it.
struct Corpus {
  std::string id;    // the built-in id, or "" for a user file
  std::string name;  // for people: the entry's title, or the file name
  std::string path;  // the file read
  std::string text;
  double entropy_nats_per_byte = 0;  // the true irreducible loss when known (the synthetic language), else 0
};

// "" and "default" mean "synthetic". An argument without '/' and '.' is looked up as an id in the index
// (falling back to a file of that name in the working directory); anything else is a file path.
// Throws std::runtime_error naming the file and the fix when the file is missing, is not UTF-8 (with the
// byte offset), or is shorter than kMinCorpusBytes; LoadError for a malformed JSON file.
Corpus resolve_corpus(const std::string& id_or_path, const std::string& assets_dir = "");

constexpr size_t kMinCorpusBytes = 1024;
// The most a corpus may hold (the trainer keeps a token per byte): 64 MiB, checked before reading a file.
constexpr size_t kMaxCorpusBytes = size_t(64) << 20;

// Byte offset of the first byte that is not part of a well-formed UTF-8 sequence (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or std::string::npos when `text` is valid UTF-8.
size_t first_invalid_utf8(const std::string& text);

// Throws std::runtime_error naming `name` when `text` is not valid UTF-8 (byte offset and fix) or shorter
// than kMinCorpusBytes. What the lab panel checks for a dropped file and resolve_corpus for a path.
void check_corpus_text(const std::string& text, const std::string& name);

}  // namespace mc::train
