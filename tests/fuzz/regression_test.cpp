// regression_test.cpp - every input committed under tests/fuzz/regressions/<harness>/ replayed through the
// harness of that name (the same function libFuzzer calls), in the ordinary and sanitizer builds: a
// fuzzing finding, once fixed, stays fixed. A harness aborts on a finding, which fails this test.
#include "fuzz_common.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) out.push_back(x);
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace

// The harnesses CMake builds are the ones linked here (none dropped by a typo in either list).
TEST(FuzzRegressions, EveryHarnessIsRegistered) {
  const std::vector<std::string> names = split(MC_FUZZ_HARNESS_LIST);
  EXPECT_EQ(names.size(), mc::fuzz::registry().size());
  for (const std::string& n : names) EXPECT_TRUE(mc::fuzz::registry().count(n)) << n;
}

// Each folder under regressions/ names a harness; each file in it goes through that harness.
TEST(FuzzRegressions, CommittedInputsReplayClean) {
  const fs::path root = fs::path(MC_FUZZ_DIR) / "regressions";
  ASSERT_TRUE(fs::is_directory(root)) << root;
  int replayed = 0;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    const std::string name = dir.path().filename().string();
    auto it = mc::fuzz::registry().find(name);
    ASSERT_NE(it, mc::fuzz::registry().end()) << "regressions/" << name << " names no harness";
    for (const auto& f : fs::directory_iterator(dir.path())) {
      if (!f.is_regular_file() || f.path().filename().string().front() == '.') continue;
      SCOPED_TRACE(f.path().string());
      const std::string bytes = read(f.path());
      EXPECT_EQ(it->second(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
      ++replayed;
    }
  }
  EXPECT_GT(replayed, 0) << "no regression input found under " << root;
}
