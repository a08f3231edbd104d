#!/usr/bin/env bash
# Command (2) of the README: installs what is missing, builds BOTH targets (native + web) and the
# sanitizer build, and runs every test. Exits non-zero on any failure; the last lines are CTest's summary.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$(date +%s)
step() { printf '\n==> %s (%ds)\n' "$*" $(( $(date +%s) - start )); }

step "setup (idempotent)"
bash scripts/setup.sh all

step "format: every C++ file matches .clang-format (bash scripts/format.sh fixes drift)"
bash scripts/format.sh --check

step "build: native (app, CLI, tests, benchmarks)"
cmake --preset native >/dev/null
cmake --build --preset native

step "build: web (Emscripten)"
cmake --preset web >/dev/null
cmake --build --preset web

step "build + test: asan (clang, AddressSanitizer + UBSan: engine, CLI and panel tests, and the fuzz harnesses)"
command -v clang++ >/dev/null || { echo "clang++ not found: the asan build needs scripts/setup.sh (clang, libclang-rt-14-dev)" >&2; exit 1; }
cmake --preset asan >/dev/null
cmake --build --preset asan
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan

step "fuzz: every parser's libFuzzer harness, a fixed seed and run count (repeatable; scripts/fuzz.sh SECONDS for a random campaign)"
MC_FUZZ_NO_BUILD=1 scripts/fuzz.sh ci

step "test: native (unit, CLI, scenarios, native GUI under Xvfb, browser end-to-end)"
ctest --preset native
