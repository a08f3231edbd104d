// main.cpp - dispatch to the registered subcommands (see cli.h).
#include "cli/cli.h"

#include "core/json_doc.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace mc::cli {

std::vector<Command>& registry() {
  static std::vector<Command> r;
  return r;
}

bool Args::flag(const std::string& name) {
  bool found = false;
  for (size_t i = 0; i < argv_.size(); ++i)
    if (!used_[i] && argv_[i] == name) used_[i] = found = true;
  return found;
}

std::optional<std::string> Args::option(const std::string& name) {
  std::optional<std::string> v;
  for (size_t i = 0; i < argv_.size(); ++i) {
    if (used_[i]) continue;
    if (argv_[i] == name) {
      if (i + 1 >= argv_.size()) throw UsageError(name + " needs a value");
      used_[i] = used_[i + 1] = true;
      v = argv_[i + 1];
      ++i;
    } else if (argv_[i].rfind(name + "=", 0) == 0) {
      used_[i] = true;
      v = argv_[i].substr(name.size() + 1);
    }
  }
  return v;
}

long long Args::option_int(const std::string& name, long long fallback, long long lo, long long hi) {
  auto v = option(name);
  if (!v) return fallback;
  try {
    size_t pos = 0;
    long long x = std::stoll(*v, &pos);
    if (pos != v->size()) throw std::invalid_argument("trailing");
    if (x < lo || x > hi)
      throw UsageError(name + " " + *v + " is out of range: expected " + std::to_string(lo) + ".." +
                       std::to_string(hi));
    return x;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception&) {
    throw UsageError(name + " expects an integer, got \"" + *v + "\"");
  }
}

double Args::option_double(const std::string& name, double fallback) {
  auto v = option(name);
  if (!v) return fallback;
  try {
    size_t pos = 0;
    double x = std::stod(*v, &pos);
    if (pos != v->size() || !(x == x)) throw std::invalid_argument("bad");
    return x;
  } catch (const std::exception&) {
    throw UsageError(name + " expects a number, got \"" + *v + "\"");
  }
}

std::vector<std::string> Args::positionals() {
  std::vector<std::string> out;
  for (size_t i = 0; i < argv_.size(); ++i) {
    if (used_[i]) continue;
    if (argv_[i].size() > 1 && argv_[i][0] == '-') throw UsageError("unknown option " + argv_[i]);
    used_[i] = true;
    out.push_back(argv_[i]);
  }
  return out;
}

void Args::finish() {
  for (size_t i = 0; i < argv_.size(); ++i)
    if (!used_[i])
      throw UsageError((argv_[i].size() > 1 && argv_[i][0] == '-' ? "unknown option " : "unexpected argument ") +
                       argv_[i]);
}

void progress_bar(double fraction, const std::string& text) {
  const int width = 30;
  const double f = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
  const int filled = int(f * width + 1e-9);
  std::fprintf(stderr, "\r[%s%s] %3d%%  %-48.48s", std::string(size_t(filled), '#').c_str(),
               std::string(size_t(width - filled), '.').c_str(), int(f * 100 + 1e-9), text.c_str());
  if (f >= 1) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

std::string read_input(const std::string& path, size_t max_bytes) {
  auto too_big = [&](const std::string& name, const std::string& size) {
    return mc::LoadError(name, 0, 0, "",
                         "the input is " + size + " bytes; a config is at most " + std::to_string(max_bytes) +
                             " bytes: is this the right file?");
  };
  if (path == "-") {
    std::string text(max_bytes + 1, '\0');
    std::cin.read(text.data(), std::streamsize(text.size()));
    text.resize(size_t(std::cin.gcount()));
    if (text.size() > max_bytes) throw too_big("<stdin>", "over " + std::to_string(max_bytes));
    return text;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the file (check the path)");
  in.seekg(0, std::ios::end);  // the size first: a 200 MB file is refused without reading it
  if (const std::streamoff n = in.tellg(); n > 0 && size_t(n) > max_bytes) throw too_big(path, std::to_string(n));
  in.seekg(0, std::ios::beg);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace mc::cli

static void print_help(FILE* out) {
  auto cmds = mc::cli::registry();
  std::sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::fprintf(out,
               "megacluster %s - headless engine of Megacluster Explorer\n\n"
               "usage: megacluster COMMAND [options]\n\ncommands:\n",
               MC_VERSION);
  for (const auto& c : cmds) std::fprintf(out, "  %-10s %s\n", c.name.c_str(), c.summary.c_str());
  std::fprintf(out, "\n`megacluster COMMAND --help` shows a command's options.\n");
}

int main(int argc, char** argv) {
  using namespace mc::cli;
  if (argc < 2) {
    print_help(stderr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_help(stdout);
    return 0;
  }
  if (name == "--version") {
    std::printf("megacluster %s\n", MC_VERSION);
    return 0;
  }
  const Command* cmd = nullptr;
  for (const auto& c : registry())
    if (c.name == name) cmd = &c;
  if (!cmd) {
    std::fprintf(stderr, "megacluster: unknown command \"%s\"\n\n", name.c_str());
    print_help(stderr);
    return 2;
  }
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (std::find(rest.begin(), rest.end(), "--help") != rest.end()) {
    std::printf("usage: %s\n\n%s\n", cmd->usage.c_str(), cmd->summary.c_str());
    return 0;
  }
  Args args(name, rest, argv[0]);
  try {
    return cmd->run(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "megacluster %s: %s\nusage: %s\n", name.c_str(), e.what(), cmd->usage.c_str());
    return 2;
  } catch (const mc::LoadError& e) {
    std::fprintf(stderr, "megacluster %s: %s\n", name.c_str(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "megacluster %s: error: %s\n", name.c_str(), e.what());
    return 1;
  }
}
