// fuzz_corpus.cpp - libFuzzer harness of the training corpora (engine/train/storage/corpus.cpp): the input as a
// text file given to `train --corpus FILE` (resolve_corpus: read, UTF-8 and binary checks), and as a
// synthetic-language file (load_synthetic_language: the Markov chain's checks, then its stationary
// distribution and entropy). Invariants: an accepted text is valid UTF-8 of at least kMinCorpusBytes with
// no NUL; an accepted language has a positive, finite entropy per byte and generates text it accepts.
#include "fuzz_common.h"
#include "train/storage/corpus.h"

#include <cmath>

MC_FUZZ_TARGET(corpus) {
  mc::fuzz::expect_refusal_or_success("text corpus", [&] {
    const std::string path = mc::fuzz::scratch_file(data, size, ".txt");
    const mc::train::Corpus c = mc::train::resolve_corpus(path);
    if (c.text.size() != size) mc::fuzz::finding("the corpus text is not the file");
    if (c.text.size() < mc::train::kMinCorpusBytes || c.text.find('\0') != std::string::npos ||
        mc::train::first_invalid_utf8(c.text) != std::string::npos)
      mc::fuzz::finding("a text the checks should refuse was accepted");
  });
  mc::fuzz::expect_refusal_or_success("synthetic language", [&] {
    const std::string path = mc::fuzz::scratch_file(data, size, ".json");
    const mc::train::SyntheticLanguage L = mc::train::load_synthetic_language(path);
    const double h = L.entropy_nats_per_byte();
    if (!std::isfinite(h) || h < 0) mc::fuzz::finding("a language with a non-finite or negative entropy");
    const std::string text = mc::train::generate_text(L, 2048, 11);
    if (text.size() != 2048) mc::fuzz::finding("generate_text gave another length than asked");
    mc::train::check_corpus_text(text, "generated");
  });
  return 0;
}
