#!/usr/bin/env bash
# What real transport costs (issue 17): the lab's reference model (4 layers, width 256, 4 heads, context
# 256, batch 8, byte vocabulary, fp32; `train --bench`'s model) trained for STEPS steps on 1, 2 and 4
# workers, in one process and as MPI ranks (mpirun --oversubscribe -np N; 1 rank: --mpi), and with MPI's
# own collectives (--mpi-native). Prints per layout: tokens/s (the median step, as `train` reports it),
# the bytes on the wire per step (every rank's transport in the last step: data + control; in one process
# the bytes Comm counted, which the model predicts), and the ratio of MPI's tokens/s to one process's.
# The best of REPEAT runs of each is kept (other work on a shared machine only ever slows a run down).
# Usage: scripts/bench-mpi.sh [--native DIR] [--repeat N] [--steps N]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
native=build/native repeat=1 steps=6
while [ $# -gt 0 ]; do
  case "$1" in
    --native) native="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "bench-mpi.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
cli="$native/engine/megacluster"
[ -x "$cli" ] || { echo "bench-mpi.sh: $cli missing: cmake --preset native && cmake --build --preset native --target megacluster" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "bench-mpi.sh: mpirun not found (scripts/setup.sh installs openmpi-bin)" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench-mpi.sh: jq not found (apt-get install jq)" >&2; exit 1; }
# Open MPI refuses root unless asked twice; set for this script's own mpirun only.
root=()
[ "$(id -u)" = 0 ] && root=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)

cfg=$(mktemp --suffix=.json)
trap 'rm -f "$cfg"' EXIT
printf '{"model": {"layers": 4, "width": 256, "heads": 4, "context": 256, "vocab": 256}, "batch": 8, "steps": %d}\n' "$steps" >"$cfg"

# best RUNNER...: the JSON of the run with the highest median-step tokens/s over $repeat runs.
best() {
  local top="" top_tps=0 out tps
  for _ in $(seq "$repeat"); do
    out=$("$@" 2>/dev/null) || { echo "bench-mpi.sh: failed: $*" >&2; exit 1; }
    tps=$(jq '.tokens_per_s_median_step' <<<"$out")
    if [ -z "$top" ] || awk -v a="$tps" -v b="$top_tps" 'BEGIN{exit !(a>b)}'; then top=$out top_tps=$tps; fi
  done
  printf '%s' "$top"
}

printf 'reference model, %d steps, %s cores, best of %d; wire bytes per step summed over ranks\n' "$steps" "$(nproc)" "$repeat"
printf '%-6s %-22s %13s %10s %15s %16s %6s\n' ranks layout "1-proc tok/s" "MPI tok/s" "1-proc B/step" "MPI wire B/step" ratio
for spec in "1:--dp 1" "2:--dp 2" "2:--pp 2" "4:--dp 2 --tp 2"; do
  n=${spec%%:*} layout=${spec#*:}
  one=$(best "$cli" train "$cfg" $layout --json --quiet)
  for mode in rings native; do
    extra=(--json --quiet)
    [ "$n" = 1 ] && extra+=(--mpi)
    [ "$mode" = native ] && extra+=(--mpi-native)
    [ "$mode" = native ] && [ "$n" = 1 ] && continue
    mpi=$(best "${root[@]}" mpirun --oversubscribe -np "$n" "$cli" train "$cfg" $layout "${extra[@]}")
    t1=$(jq '.tokens_per_s_median_step' <<<"$one")
    tm=$(jq '.tokens_per_s_median_step' <<<"$mpi")
    b1=$(jq '[.bytes_sent_per_worker[], .control_bytes_per_worker[]] | add' <<<"$one")
    if [ "$mode" = native ]; then
      # MPI's own algorithms move bytes the transport does not see: the ring's count stands in (marked *).
      bm="$(jq '[.bytes_sent_per_worker[], .control_bytes_per_worker[]] | add' <<<"$mpi")*"
    else
      bm=$(jq '[.wire_bytes_per_worker[]] | add' <<<"$mpi")
    fi
    name="$layout"
    [ "$mode" = native ] && name="$layout native"
    printf '%-6s %-22s %13.0f %10.0f %15s %16s %6.2f\n' "$n" "$name" "$t1" "$tm" "$b1" "$bm" \
      "$(awk -v a="$tm" -v b="$t1" 'BEGIN{print (b>0 ? a/b : 0)}')"
  done
done
