// corpus.h - the built-in training text: a synthetic language whose entropy is known exactly, so the
// lowest loss any model can reach on it (the irreducible loss, the "c" of a scaling law) is known.
//
// The language: a fixed vocabulary of made-up words; each word is followed by one of a few successors
// with fixed probabilities (a first-order Markov chain over words), words separated by one space. The
// byte stream determines the word stream (spaces delimit), so the entropy rate per byte is the chain's
// entropy rate per word divided by the mean bytes per word (Cover & Thomas 2006, Thm. 4.2.4 for the
// chain's rate; renewal-reward for the per-byte rate).
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

SyntheticLanguage make_synthetic_language(uint64_t seed = 7, int words = 24);
std::string generate_text(const SyntheticLanguage& lang, size_t bytes, uint64_t seed = 11);

}  // namespace mc::train
