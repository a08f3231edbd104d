// The tar writer's archives are read back by the system's tar (an independent reader): names, folders
// and bytes, including a file whose size is a multiple of the 512-byte block and an empty one.
#include "core/tar.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace {

std::string run(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 4096> buf{};
  for (size_t n; p && (n = fread(buf.data(), 1, buf.size(), p.get())) > 0;) out.append(buf.data(), n);
  return out;
}

}  // namespace

TEST(Tar, TheSystemTarReadsItBack) {
  std::string binary(1024, '\0');
  for (size_t i = 0; i < binary.size(); ++i) binary[i] = char(i * 7);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"lab-config.json", "{\"dp\": 2}\n"}, {"checkpoint/ckpt-1018.mcck", binary}, {"empty.txt", ""}};
  const std::string tar = mc::tar_archive(files, 1764150000);
  EXPECT_EQ(tar.size() % 512, 0u);
  const auto dir = std::filesystem::temp_directory_path() / ("mc-tar-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "a.tar", std::ios::binary) << tar;
  EXPECT_EQ(run("tar tf " + (dir / "a.tar").string()), "lab-config.json\ncheckpoint/ckpt-1018.mcck\nempty.txt\n");
  ASSERT_EQ(run("cd " + dir.string() + " && tar xf a.tar && echo ok"), "ok\n");
  for (const auto& [name, bytes] : files) {
    std::ifstream in(dir / name, std::ios::binary);
    std::ostringstream got;
    got << in.rdbuf();
    EXPECT_EQ(got.str(), bytes) << name;
  }
  std::filesystem::remove_all(dir);
  EXPECT_THROW(mc::tar_archive({{"", "x"}}, 0), std::invalid_argument);
  EXPECT_THROW(mc::tar_archive({{std::string(101, 'a'), "x"}}, 0), std::invalid_argument);
}
