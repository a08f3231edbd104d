#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz/ (one per input parser) and fails on any finding: a crash, an
# ASan/UBSan report, a leak, an input slower than MC_FUZZ_TIMEOUT seconds, or more than MC_FUZZ_RSS_MB of
# memory. scripts/test.sh runs it briefly; run it for as long as you like:
#
#   scripts/fuzz.sh ci                       CI's repeatable step: fixed seed and run count (below)
#   scripts/fuzz.sh                          a random campaign: every harness, 20 s each
#   scripts/fuzz.sh 600 sim_config catalog   those two, 10 minutes each
#   MC_FUZZ_PARALLEL=2 MC_FUZZ_LOG_DIR=/tmp/fuzz-logs nice -n 19 scripts/fuzz.sh 3600
#
# `ci` (what scripts/test.sh runs) is repeatable: libFuzzer's -seed=MC_FUZZ_SEED (default 1) and
# -runs=N per harness (the table below: about 12 s each on this 2-core machine, so the step stays within
# the 10 x 20 s it took as a timed run), starting from the seeds alone (no corpus of earlier runs, nothing
# written back), without address randomisation and with one kernel thread, so the same commit runs the
# same inputs (checked twice in a row: same coverage, same corpus; perf_config still drifts by a few
# features between runs): a commit turns CI red because of what it changed, not by the luck of a seed. A timed run (SECONDS) is the campaign that searches for new
# findings: random seed, the corpus kept between runs; run it for long, and commit what it finds under
# tests/fuzz/regressions/<harness>/. MC_FUZZ_RUNS overrides the table's run count for every harness.
#
# Builds the harnesses in the `asan` preset's folder (clang; scripts/setup.sh installs it), the same sanitized
# engine the asan tests run on, so scripts/test.sh compiles it once. Seeds are generated at run time from the
# shipped files (tests/fuzz/make_seeds.py) into build/asan/fuzz/seeds/; what each harness learns is kept in
# build/asan/fuzz/corpus/<harness>/ for the next run. A finding is saved in build/asan/fuzz/findings/<harness>/ and
# printed; once fixed, commit it under tests/fuzz/regressions/<harness>/ (the normal test suite replays it).
# Environment: MC_FUZZ_TIMEOUT (s of wall time, default 25: the shipped 9,984-GPU config takes ~1 s of CPU under
# ASan, and on a shared 2-core machine at load 10 that is 10 s of wall time; the work budgets, not this
# timeout, are what bound the engine: tests/unit/sim_budget_test.cpp), MC_FUZZ_RSS_MB (default 2048), MC_FUZZ_PARALLEL (harnesses
# at once; default 1, and for ci the machine's CPUs: each harness is its own process with its own seed and run
# count, so the result does not depend on how many run together), MC_FUZZ_LOG_DIR (default build/asan/fuzz/logs), MC_FUZZ_NO_BUILD=1 (use what is built).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

all=(json_doc perf_config sim_config train_config checkpoint corpus scenario scenario_player catalog url_state)
# ci: executions per harness, seeds included (about 12 s each under the asan preset's ASan + UBSan on this
# shared 2-core machine at load 4-5; sim_config simulates a whole iteration per input).
declare -A ci_runs=([json_doc]=4000 [perf_config]=1800 [sim_config]=60 [train_config]=12000 [checkpoint]=600
                    [corpus]=9000 [scenario]=12000 [scenario_player]=3500 [catalog]=3500 [url_state]=250000)
mode=timed
seconds=${1:-20}
# ci: 20 s (today's timed budget) only caps a harness slowed by a loaded machine; it then runs a prefix of
# the same inputs, which can miss a finding but never makes one up.
if [ "$seconds" = ci ]; then mode=ci seconds=20 default_parallel=$(nproc 2>/dev/null || echo 1); fi
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${all[@]}")
timeout_s=${MC_FUZZ_TIMEOUT:-25}
rss_mb=${MC_FUZZ_RSS_MB:-2048}
parallel=${MC_FUZZ_PARALLEL:-${default_parallel:-1}}
build=build/asan
work=$build/fuzz  # seeds, corpora, findings, logs
logs=${MC_FUZZ_LOG_DIR:-$work/logs}

case "$seconds" in ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [ci | SECONDS-PER-HARNESS] [HARNESS...]" >&2; exit 2;; esac
seed=${MC_FUZZ_SEED:-1}
if [ "$mode" = ci ]; then export MC_THREADS=1; fi
for h in "${harnesses[@]}"; do
  printf '%s\n' "${all[@]}" | grep -qx "$h" || { echo "fuzz.sh: no harness \"$h\" (known: ${all[*]})" >&2; exit 2; }
done
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found; run scripts/setup.sh (installs clang, libclang-rt-14-dev)" >&2; exit 1; }

if [ "${MC_FUZZ_NO_BUILD:-0}" != 1 ]; then
  cmake --preset asan >/dev/null
  targets=()
  for h in "${harnesses[@]}"; do targets+=(--target "fuzz_$h"); done
  cmake --build "$build" -j2 "${targets[@]}"
fi

mkdir -p "$logs"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

run_one() {  # harness -> exit status; its libFuzzer output goes to $logs/<harness>.log
  local h=$1 bin=$build/tests/fuzz/fuzz_$1
  local seeds=$work/seeds/$h corpus=$work/corpus/$h findings=$work/findings/$h
  rm -rf "$seeds"
  mkdir -p "$seeds" "$corpus" "$findings"
  python3 tests/fuzz/make_seeds.py "$seeds" "$h" >/dev/null
  if [ "$h" = checkpoint ]; then MC_FUZZ_WRITE_SEEDS="$seeds" "$bin" -runs=0 >/dev/null 2>&1; fi
  local how=() pre=()
  if [ "$mode" = ci ]; then
    # Same inputs run after run needs the same coverage feedback: no address randomisation (pointer
    # values reach the comparisons libFuzzer traces), no reload of the corpus folder on a timer, and one
    # kernel thread (MC_THREADS=1: threads' coverage arrives in any order).
    if setarch "$(uname -m)" -R true 2>/dev/null; then pre=(setarch "$(uname -m)" -R); fi
    # A fresh, empty first corpus folder (libFuzzer writes what it learns there): the seeds alone decide.
    corpus=$work/ci-corpus/$h
    rm -rf "$corpus"
    mkdir -p "$corpus"
    how=(-seed="$seed" -runs="${MC_FUZZ_RUNS:-${ci_runs[$h]}}" -reload=0)
  fi
  # -max_len: configs and scenarios are a few KB, the shipped catalog tables up to ~100 KB.
  "${pre[@]}" "$bin" "$corpus" "$seeds" "${how[@]}" -max_total_time="$seconds" -timeout="$timeout_s" -rss_limit_mb="$rss_mb" \
    -malloc_limit_mb="$rss_mb" -max_len=131072 -error_exitcode=77 -timeout_exitcode=78 \
    -artifact_prefix="$findings/" -print_final_stats=1 >"$logs/$h.log" 2>&1
}

summary() {  # the last "#N ... cov: ... ft: ..." line and the executions of a log
  local log=$1
  local last execs
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -E 's/ +/ /g' || true)
  execs=$(grep -E 'stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
  printf '%s | executions %s' "${last:-no progress line}" "${execs:-?}"
}

failed=()
pids=()
names=()
wait_one() {  # waits for the oldest running harness
  local pid=${pids[0]} h=${names[0]}
  pids=("${pids[@]:1}")
  names=("${names[@]:1}")
  if wait "$pid"; then
    printf '[fuzz] %-16s ok       %s\n' "$h" "$(summary "$logs/$h.log")"
  else
    failed+=("$h")
    printf '[fuzz] %-16s FINDING  %s (log: %s)\n' "$h" "$(summary "$logs/$h.log")" "$logs/$h.log"
    grep -E 'ERROR: |FUZZ FINDING|runtime error|Test unit written|SUMMARY' "$logs/$h.log" | head -8 | sed 's/^/    /'
  fi
}

if [ "$mode" = ci ]; then
  echo "[fuzz] ${#harnesses[@]} harnesses, repeatable: -seed=$seed and a fixed -runs each (MC_FUZZ_RUNS, the table" \
       "in scripts/fuzz.sh), ${parallel} at a time (timeout ${timeout_s} s, ${rss_mb} MB)"
else
  echo "[fuzz] ${#harnesses[@]} harnesses, ${seconds} s each, random seeds, ${parallel} at a time (timeout ${timeout_s} s, ${rss_mb} MB)"
fi
for h in "${harnesses[@]}"; do
  [ ${#pids[@]} -lt "$parallel" ] || wait_one
  run_one "$h" &
  pids+=($!)
  names+=("$h")
done
while [ ${#pids[@]} -gt 0 ]; do wait_one; done

if [ ${#failed[@]} -gt 0 ]; then
  echo "[fuzz] findings in: ${failed[*]} (inputs in $work/findings/<harness>/; replay one with" \
       "$build/tests/fuzz/fuzz_<harness> FILE)" >&2
  exit 1
fi
echo "[fuzz] no finding"
