// fuzz_entry.cpp - libFuzzer's entry point for one harness: CMake compiles this file once per fuzz_<name>
// program with MC_FUZZ_BODY=mc_fuzz_<name>, the body that MC_FUZZ_TARGET(<name>) defines in fuzz_<name>.cpp
// (compiled once, into the object library that the regression test links too). Nothing else is included, so
// the ten copies cost nothing to compile.
#include <cstddef>
#include <cstdint>

int MC_FUZZ_BODY(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return MC_FUZZ_BODY(data, size); }
