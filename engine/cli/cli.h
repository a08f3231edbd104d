// cli.h - the `megacluster` command line: a registry of subcommands, each in its own file
// (cmd_catalog.cpp, cmd_estimate.cpp, ...). A file registers its command with a static Registrar:
//
//   static int run_catalog(mc::cli::Args& a) { ... return 0; }
//   static mc::cli::Registrar reg{{"catalog", "print the hardware catalog", "megacluster catalog [--json]",
//                                  run_catalog}};
//
// Exit codes: 0 success; 1 the input was read but is invalid or the work failed (message on stderr);
// 2 usage error (bad arguments: usage printed on stderr).
#pragma once

#include "core/json_doc.h"

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mc::cli {

// Thrown for bad arguments; main() prints the message and the command's usage, exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  Args(std::string command, std::vector<std::string> argv, std::string exe_path)
      : command_(std::move(command)), argv_(std::move(argv)), used_(argv_.size(), false), exe_(std::move(exe_path)) {}

  bool flag(const std::string& name);                          // --json
  std::optional<std::string> option(const std::string& name);  // --steps 10 or --steps=10
  long long option_int(const std::string& name, long long fallback, long long lo, long long hi);
  double option_double(const std::string& name, double fallback);
  std::vector<std::string> positionals();  // call after all flags/options; rejects unknown --flags
  void finish();                           // rejects anything not consumed
  const std::string& exe_path() const { return exe_; }
  const std::string& command() const { return command_; }

 private:
  std::string command_;
  std::vector<std::string> argv_;
  std::vector<bool> used_;
  std::string exe_;
};

struct Command {
  std::string name, summary, usage;
  std::function<int(Args&)> run;
};

std::vector<Command>& registry();

struct Registrar {
  explicit Registrar(Command c) { registry().push_back(std::move(c)); }
};

// One progress line on stderr, redrawn in place: "[#####.....] 42%  text". A newline ends it when
// `fraction` reaches 1. Shared by every long-running command (play, scaling, simulate --run, train).
void progress_bar(double fraction, const std::string& text);

// Reads a whole file, or standard input for "-". Throws std::runtime_error naming the file.
// Reads a config file or standard input ("-"); refuses more than `max_bytes` (checked before reading a
// file) with the size and the limit.
std::string read_input(const std::string& path, size_t max_bytes = mc::kMaxConfigBytes);

}  // namespace mc::cli
