// The built-in corpora load from assets/corpus/ and say what they are: the synthetic language file is
// exactly the language the in-code generator made (so every seeded run and scenario digest is unchanged),
// its entropy is computed from the file, and bad files are refused with a located, fixable error.
#include "core/json_doc.h"
#include "core/paths.h"
#include "train/storage/corpus.h"
#include "train/train.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <fstream>
#include <regex>

namespace {

using namespace mc::train;

const std::string kAssets = std::string(MC_SOURCE_DIR) + "/assets";
const std::string kLanguage = kAssets + "/corpus/synthetic-language.json";

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string temp_file(const std::string& name, const std::string& content) {
  const std::string path = testing::TempDir() + "mc_corpus_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// What the error of loading `text` as a language file says ("" if it loads).
std::string language_error(const std::string& text) {
  const std::string path = temp_file("lang.json", text);
  try {
    load_synthetic_language(path);
  } catch (const mc::LoadError& e) {
    std::remove(path.c_str());
    return e.what();
  }
  std::remove(path.c_str());
  return "";
}

TEST(TrainCorpus, ShippedLanguageIsTheGeneratedOneWithItsEntropy) {
  const SyntheticLanguage file = load_synthetic_language(kLanguage);
  const SyntheticLanguage code = make_synthetic_language(7, 24);
  EXPECT_EQ(file.words, code.words);
  EXPECT_EQ(file.next, code.next);  // exact: the probabilities are stored to full double precision
  EXPECT_EQ(file.stationary, code.stationary);
  // 0.9 nats of choice per word (-(0.6 ln 0.6 + 0.3 ln 0.3 + 0.1 ln 0.1)) over 4.85 bytes per word.
  EXPECT_NEAR(file.entropy_nats_per_word, -(0.6 * std::log(0.6) + 0.3 * std::log(0.3) + 0.1 * std::log(0.1)), 1e-12);
  EXPECT_EQ(file.entropy_nats_per_byte(), code.entropy_nats_per_byte());  // bit for bit: run results carry it
  EXPECT_NEAR(file.entropy_nats_per_byte(), 0.1851, 0.00005);
}

TEST(TrainCorpus, DefaultCorpusIsByteIdenticalToTheInCodeLanguage) {
  // Measured before the language moved to assets/ (generate_text(make_synthetic_language(), 65536, 11)).
  const std::string text = default_corpus();
  EXPECT_EQ(text.size(), 65536u);
  EXPECT_EQ(fnv1a64(text), 0x8d784bfd939522f7ull);
  EXPECT_EQ(text, generate_text(make_synthetic_language(), 64 * 1024, 11));
  const Corpus c = resolve_corpus("default", kAssets);
  EXPECT_EQ(c.id, "synthetic");
  EXPECT_EQ(c.text, text);
  EXPECT_NEAR(c.entropy_nats_per_byte, 0.1851, 0.00005);
  EXPECT_EQ(resolve_corpus("", kAssets).text, text);
}

TEST(TrainCorpus, StoryLoadsAsPlainEnglishWithoutAFloor) {
  const Corpus c = resolve_corpus("story", kAssets);
  EXPECT_EQ(c.id, "story");
  EXPECT_GE(c.text.size(), 40000u);
  EXPECT_LE(c.text.size(), 80000u);
  EXPECT_EQ(c.entropy_nats_per_byte, 0);
  for (unsigned char ch : c.text) ASSERT_TRUE(ch == '\n' || (ch >= 32 && ch < 127)) << int(ch);  // ASCII
  EXPECT_NE(c.text.find("285,000"), std::string::npos);
  const auto entries = list_corpora(kAssets);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].id, "synthetic");
  EXPECT_FALSE(entries[0].entropy_source.empty());
  for (const auto& e : entries) EXPECT_NE(e.license.find("written for this project"), std::string::npos) << e.id;
}

TEST(TrainCorpus, BrokenLanguageFilesGiveLocatedErrors) {
  const std::string good = read(kLanguage);
  ASSERT_FALSE(good.empty());
  EXPECT_EQ(language_error(good), "");
  // Probabilities that do not sum to 1: the error names the word's "next" list and where it is.
  std::string bad =
      std::regex_replace(good, std::regex("\"p\": 0\\.1\\}"), "\"p\": 0.2}", std::regex_constants::format_first_only);
  std::string e = language_error(bad);
  EXPECT_NE(e.find("lang.json:6:"), std::string::npos) << e;
  EXPECT_NE(e.find("key \"words/0/next\""), std::string::npos) << e;
  EXPECT_NE(e.find("sum to 1.1"), std::string::npos) << e;
  // A successor index past the end.
  bad = std::regex_replace(good, std::regex("\"to\": 7,"), "\"to\": 24,", std::regex_constants::format_first_only);
  e = language_error(bad);
  EXPECT_NE(e.find("lang.json:6:"), std::string::npos) << e;
  EXPECT_NE(e.find("key \"words/0/next/1/to\""), std::string::npos) << e;
  // An empty word, a word with a space, a repeated word.
  e = language_error(std::regex_replace(good, std::regex("\"word\": \"va\""), "\"word\": \"\""));
  EXPECT_NE(e.find("key \"words/1/word\""), std::string::npos) << e;
  e = language_error(std::regex_replace(good, std::regex("\"word\": \"va\""), "\"word\": \"v a\""));
  EXPECT_NE(e.find("space"), std::string::npos) << e;
  e = language_error(std::regex_replace(good, std::regex("\"word\": \"va\""), "\"word\": \"se\""));
  EXPECT_NE(e.find("distinct"), std::string::npos) << e;
  // A chain that cannot leave its first word.
  e = language_error(R"({"words": [{"word": "a", "next": [{"to": 0, "p": 1}]},
                                     {"word": "b", "next": [{"to": 0, "p": 1}]}]})");
  EXPECT_NE(e.find("key \"words/1\""), std::string::npos) << e;
  EXPECT_NE(e.find("irreducible"), std::string::npos) << e;
}

TEST(TrainCorpus, UserFilesAreCheckedForUtf8AndLength) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "Zw\xC3\xB6lf Boxk\xC3\xA4mpfer jagen Viktor. ";  // valid UTF-8
  const std::string ok = temp_file("ok.txt", text);
  const Corpus c = resolve_corpus(ok, kAssets);
  EXPECT_EQ(c.text, text);
  EXPECT_EQ(c.id, "");
  EXPECT_EQ(c.entropy_nats_per_byte, 0);
  // Latin-1 bytes: refused with the offset of the first bad byte.
  std::string latin = text;
  latin[1000] = char(0xE9);
  const std::string bad = temp_file("latin1.txt", latin);
  try {
    resolve_corpus(bad, kAssets);
    ADD_FAILURE() << "a Latin-1 file was accepted";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(bad), std::string::npos) << m;
    EXPECT_NE(m.find("offset 1000"), std::string::npos) << m;
    EXPECT_NE(m.find("iconv"), std::string::npos) << m;
  }
  // Too short, missing, unknown id.
  const std::string tiny = temp_file("tiny.txt", "only a few words");
  EXPECT_THROW(resolve_corpus(tiny, kAssets), std::runtime_error);
  try {
    resolve_corpus("/nonexistent/corpus.txt", kAssets);
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/corpus.txt: no such corpus file"), std::string::npos)
        << e.what();
  }
  try {
    resolve_corpus("novel", kAssets);
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("synthetic, story"), std::string::npos) << e.what();
  }
  // The assets folder missing: the error names the file looked for and how to point at the assets.
  try {
    resolve_corpus("synthetic", "/nonexistent/assets");
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/assets/corpus/index.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("MEGACLUSTER_ASSETS"), std::string::npos) << e.what();
  }
  for (const auto& p : {ok, bad, tiny}) std::remove(p.c_str());
}

TEST(TrainCorpus, Utf8ValidatorFollowsRfc3629) {
  EXPECT_EQ(first_invalid_utf8("plain ascii"), std::string::npos);
  EXPECT_EQ(first_invalid_utf8("\xE2\x82\xAC \xF0\x9F\x98\x80"), std::string::npos);  // euro sign, emoji
  EXPECT_EQ(first_invalid_utf8("ab\xC0\xAF"), 2u);                                    // overlong '/'
  EXPECT_EQ(first_invalid_utf8("a\xED\xA0\x80"), 1u);                                 // UTF-16 surrogate
  EXPECT_EQ(first_invalid_utf8("a\xF4\x90\x80\x80"), 1u);                             // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("abc\xE2\x82"), 3u);                                   // truncated
  EXPECT_EQ(first_invalid_utf8("\x80"), 0u);                                          // lone continuation byte
}

}  // namespace

namespace {

TEST(TrainCorpus, EntropyOfAHandSolvedChain) {
  // a -> a or b with 1/2 each, b -> a always: pi = (2/3, 1/3), H = 2/3 ln 2 nats/word (only a chooses),
  // every word is 2 bytes with its space, so the rate is ln 2 / 3 nats/byte.
  const std::string path = temp_file("two.json", R"({"words": [
    {"word": "a", "next": [{"to": 0, "p": 0.5}, {"to": 1, "p": 0.5}]},
    {"word": "b", "next": [{"to": 0, "p": 1}]}]})");
  const SyntheticLanguage L = load_synthetic_language(path);
  std::remove(path.c_str());
  EXPECT_NEAR(L.stationary[0], 2.0 / 3, 1e-12);
  EXPECT_NEAR(L.entropy_nats_per_word, 2.0 / 3 * std::log(2.0), 1e-12);
  EXPECT_NEAR(L.mean_bytes_per_word, 2.0, 1e-12);
  EXPECT_NEAR(L.entropy_nats_per_byte(), std::log(2.0) / 3, 1e-12);
}

}  // namespace

TEST(TrainCorpus, BinaryDataIsNotTextEvenWhenItIsValidUtf8) {
  auto message = [](const std::string& text) {
    try {
      check_corpus_text(text, "f.txt");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // 4,096 NUL bytes are valid UTF-8 and used to be taken as a corpus.
  std::string e = message(std::string(4096, '\0'));
  EXPECT_NE(e.find("NUL byte at offset 0"), std::string::npos) << e;
  std::string noisy(4000, 'a');
  for (size_t i = 0; i < noisy.size(); i += 50) noisy[i] = '\x01';  // 2% control characters
  e = message(noisy);
  EXPECT_NE(e.find("80 of its 4000 bytes are control characters"), std::string::npos) << e;
  // Text with tabs, line ends and a rare form feed is text.
  std::string prose;
  while (prose.size() < 4000) prose += "A line\tof text.\r\n";
  prose += '\f';
  EXPECT_EQ(message(prose), "");
}
