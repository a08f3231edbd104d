// fuzz_common.h - what every harness in tests/fuzz/ shares.
//
// A harness is one function, declared with MC_FUZZ_TARGET(name) and compiled once. Linked into a libFuzzer
// program (the `asan` preset) it is what LLVMFuzzerTestOneInput calls (fuzz_entry.cpp); linked into the
// regression test (the normal and sanitizer builds) it is found by its name, and tests/fuzz/regression_test.cpp
// replays every committed input of tests/fuzz/regressions/<name>/ through it. One body, two drivers: a
// finding stays fixed under the ordinary test suite.
//
// What a harness treats as a finding (std::abort, so libFuzzer and the test both report it):
// - a crash, an ASan/UBSan report, a leak (the sanitizers);
// - an exception other than a located refusal escaping the engine (LoadError, std::runtime_error,
//   std::invalid_argument are how the engine refuses input; a bare std::out_of_range, nlohmann type_error,
//   std::bad_alloc or std::length_error means an input reached code that did not check it);
// - a refusal with an empty message;
// - a harness-specific invariant (see each file).
#pragma once

#include "core/json_doc.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

namespace mc::fuzz {

using Target = int (*)(const uint8_t* data, size_t size);

// Harnesses by name (filled by MC_FUZZ_TARGET in the regression build).
inline std::map<std::string, Target>& registry() {
  static std::map<std::string, Target> r;
  return r;
}
struct Registrar {
  Registrar(const char* name, Target t) { registry()[name] = t; }
};

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Runs `body`; a located refusal is fine (its message must say something), anything else is a finding.
inline void expect_refusal_or_success(const char* what, const std::function<void()>& body) {
  try {
    body();
  } catch (const mc::LoadError& e) {
    if (e.message.empty() && std::string(e.what()).empty())
      finding(std::string(what) + ": LoadError without a message");
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).empty()) finding(std::string(what) + ": runtime_error without a message");
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).empty()) finding(std::string(what) + ": invalid_argument without a message");
  } catch (const std::exception& e) {
    finding(std::string(what) + ": unchecked exception escaped: " + e.what());
  }
}

// The repository's assets/ and scenarios/ (compiled in: harnesses run from any directory).
inline std::string source_dir() { return MC_SOURCE_DIR; }

// A scratch file for entry points that take a path (catalog tables, checkpoints). One per process:
// libFuzzer runs inputs one at a time, and -jobs/-fork workers are separate processes.
std::string scratch_file(const uint8_t* data, size_t size, const char* suffix);

}  // namespace mc::fuzz

// The body has external linkage (fuzz_entry.cpp calls it from libFuzzer's entry point) and registers itself
// for the regression test; in a libFuzzer program the registry is filled and never read.
#define MC_FUZZ_TARGET(name)                                                         \
  int mc_fuzz_##name(const uint8_t* data, size_t size);                              \
  static const mc::fuzz::Registrar mc_fuzz_registrar_##name{#name, &mc_fuzz_##name}; \
  int mc_fuzz_##name(const uint8_t* data, size_t size)

#include "catalog/catalog.h"

namespace mc::fuzz {
// The shipped catalog, loaded once per process (the configs name its presets).
inline const mc::Catalog& catalog() {
  static const mc::Catalog cat = mc::load_catalog(source_dir() + "/assets");
  return cat;
}
}  // namespace mc::fuzz
