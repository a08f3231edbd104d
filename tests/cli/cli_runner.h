// cli_runner.h - runs the megacluster binary as a user would (a shell command line), capturing exit code,
// stdout and stderr. Shared by every CLI test file in tests/cli/.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mc_test {

struct CliRun {
  int code;
  std::string out;  // stdout
  std::string err;  // stderr
};

inline CliRun run_cli(const std::string& args, const std::string& stdin_text = "") {
  // Unique names: ctest runs test cases of this binary in parallel processes.
  static int counter = 0;
  const std::string tag = std::to_string(getpid()) + "_" + std::to_string(counter++);
  std::string errfile = testing::TempDir() + "mc_cli_err_" + tag + ".txt";
  std::string cmd = std::string(MC_CLI) + " " + args + " 2>" + errfile;
  std::string infile;
  if (!stdin_text.empty()) {
    infile = testing::TempDir() + "mc_cli_in_" + tag + ".txt";
    FILE* f = std::fopen(infile.c_str(), "w");
    std::fputs(stdin_text.c_str(), f);
    std::fclose(f);
    cmd += " <" + infile;
  }
  CliRun r{0, "", ""};
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (FILE* e = std::fopen(errfile.c_str(), "r")) {
    while ((n = std::fread(buf.data(), 1, buf.size(), e)) > 0) r.err.append(buf.data(), n);
    std::fclose(e);
  }
  std::remove(errfile.c_str());
  if (!infile.empty()) std::remove(infile.c_str());
  return r;
}

}  // namespace mc_test
