#!/usr/bin/env bash
# WebAssembly speed against native single-thread, side by side (issues 4 and 5). Builds nothing: it runs
#   node WEB/engine/megacluster.js train --bench          (reference model: 4 layers, width 256, 4 heads,
#   MC_THREADS=1 NATIVE/engine/megacluster train --bench   context 256, batch 8, byte vocabulary, fp32)
#   node WEB/engine/megacluster.js simulate assets/configs/simulate.json --bench
#   NATIVE/engine/megacluster simulate assets/configs/simulate.json --bench
# and prints the best of REPEAT runs of each (other work on the machine only ever slows a run down).
# Targets: wasm training >= 50% of native single-thread tokens/s; one GPT-3 175B iteration on 9,984 GPUs
# (tp 8 x pp 16 x dp 78) simulated in <= 300 ms in the browser (node stands in for the browser's engine;
# both run V8).
# Usage: scripts/bench-wasm.sh [--web DIR] [--native DIR] [--repeat N] [--skip-train] [--skip-sim]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
web=build/web native=build/native repeat=3 do_train=1 do_sim=1
while [ $# -gt 0 ]; do
  case "$1" in
    --web) web="$2"; shift 2 ;;
    --native) native="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --skip-train) do_train=0; shift ;;
    --skip-sim) do_sim=0; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "bench-wasm.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
webcli="$web/engine/megacluster.js" nativecli="$native/engine/megacluster"
command -v node >/dev/null || { echo "bench-wasm.sh: node not found (scripts/setup.sh installs it)" >&2; exit 1; }
[ -f "$webcli" ] || { echo "bench-wasm.sh: $webcli missing: cmake --preset web && cmake --build --preset web --target megacluster" >&2; exit 1; }
[ -x "$nativecli" ] || { echo "bench-wasm.sh: $nativecli missing: cmake --preset native && cmake --build --preset native --target megacluster" >&2; exit 1; }
simcfg=assets/configs/simulate.json
err=$(mktemp)
trap 'rm -f "$err"' EXIT

# run LABEL CMD...: prints the command's JSON stdout; on failure shows its stderr and stops.
run() {
  local label="$1"; shift
  if ! "$@" 2>"$err"; then echo "bench-wasm.sh: $label failed: $*" >&2; cat "$err" >&2; exit 1; fi
}
# field JSON KEY: one value of a JSON object read from the argument.
field() { node -e 'const j=JSON.parse(process.argv[1]); const v=j[process.argv[2]]; console.log(v===undefined?"":v)' "$1" "$2"; }
# best LIST HIGHER_IS_BETTER(1|0): the best of whitespace-separated numbers.
# pct A B: 100 A / B, rounded.
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", 100 * a / b }'; }
best() { echo "$1" | tr ' ' '\n' | grep . | sort -g | { if [ "$2" = 1 ]; then tail -n1; else head -n1; fi; }; }

echo "bench-wasm.sh: best of $repeat run(s); web $webcli (node $(node --version)), native $nativecli with MC_THREADS=1"
if [ "$do_train" = 1 ]; then
  wt="" wm="" wg="" ws="" nt="" nm="" ng="" ns="" wpath="" npath=""
  for _ in $(seq "$repeat"); do
    j=$(run "wasm train" node "$webcli" train --bench --json --quiet)
    wt+=" $(field "$j" tokens_per_s)" wm+=" $(field "$j" tokens_per_s_median_step)"
    wg+=" $(field "$j" gflops)" ws+=" $(field "$j" sgemm_gflops)"
    wpath=$(field "$j" sgemm_path)
    j=$(MC_THREADS=1 run "native train" "$nativecli" train --bench --json --quiet)
    nt+=" $(field "$j" tokens_per_s)" nm+=" $(field "$j" tokens_per_s_median_step)"
    ng+=" $(field "$j" gflops)" ns+=" $(field "$j" sgemm_gflops)"
    npath=$(field "$j" sgemm_path)
  done
  wt=$(best "$wt" 1) wm=$(best "$wm" 1) wg=$(best "$wg" 1) ws=$(best "$ws" 1)
  nt=$(best "$nt" 1) nm=$(best "$nm" 1) ng=$(best "$ng" 1) ns=$(best "$ns" 1)
  echo
  echo "train --bench (4 layers, width 256, 4 heads, context 256, batch 8, fp32)"
  printf "  %-24s %14s %14s %8s\n" "" "wasm (node)" "native 1 thr" "ratio"
  printf "  %-24s %14.0f %14.0f %7s%%\n" "tokens/s (mean step)" "$wt" "$nt" "$(pct "$wt" "$nt")"
  printf "  %-24s %14.0f %14.0f %7s%%\n" "tokens/s (median step)" "$wm" "$nm" "$(pct "$wm" "$nm")"
  printf "  %-24s %14.2f %14.2f %7s%%\n" "training GFLOP/s" "$wg" "$ng" "$(pct "$wg" "$ng")"
  printf "  %-24s %14.2f %14.2f %7s%%\n" "sgemm 2048x1024x256 GF/s" "$ws" "$ns" "$(pct "$ws" "$ns")"
  printf "  %-24s %14s %14s\n" "sgemm path" "$wpath" "$npath"
  echo "  target: wasm tokens/s >= 50% of native single-thread (the median step: a step slowed by other work"
  echo "  on this shared machine moves the mean, not the median; both sides are measured the same way)"
fi
if [ "$do_sim" = 1 ]; then
  usage=$("$nativecli" simulate --help 2>&1 || true)
  if ! grep -q -- --bench <<<"$usage"; then
    echo; echo "simulate --bench: this build of the CLI has no --bench (rebuild it)"; exit 0
  fi
  echo
  echo "simulate $simcfg --bench (GPT-3 175B, 9,984 GPUs, tp 8 x pp 16 x dp 78: one iteration)"
  wj=$(run "wasm simulate" node "$webcli" simulate "$simcfg" --bench --repeat "$repeat" --json)
  nj=$(MC_THREADS=1 run "native simulate" "$nativecli" simulate "$simcfg" --bench --repeat "$repeat" --json)
  printf "  %-24s %14s %14s\n" "" "wasm (node)" "native"
  for k in best_ms mean_ms setup_ms events events_per_s; do
    printf "  %-24s %14.4g %14.4g\n" "$k" "$(field "$wj" "$k")" "$(field "$nj" "$k")"
  done
  echo "  target: best_ms <= 300 in the browser"
fi
