#!/usr/bin/env bash
# The training lab on a GPU against PyTorch on the same GPU, in one run (issue 22). For each model shape
# (layers x width, context, batch) and each precision it runs
#   megacluster train CONFIG --bench --device cuda --precision P --json
# and, when a CUDA-enabled PyTorch is importable, scripts/torch_gpt.py with the same model (eager; bf16 also
# with torch.compile), then `--dp 2 --tp 2` on one GPU for the largest shape, and prints one table of
# tokens/s (the median step after the first) with the ratios. Without a GPU it says so and exits 0.
# Usage: scripts/bench-gpu.sh [--native DIR] [--shapes small|all] [--steps N] [--no-torch]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
native=build/native shapes=all steps=12 torch=1
while [ $# -gt 0 ]; do
  case "$1" in
    --native) native="$2"; shift 2 ;;
    --shapes) shapes="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --no-torch) torch=0; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "bench-gpu.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
cli="$native/engine/megacluster"
[ -x "$cli" ] || { echo "bench-gpu.sh: $cli missing: cmake --preset native && cmake --build --preset native --target megacluster" >&2; exit 1; }
probe=$("$cli" device --json)
if ! echo "$probe" | grep -q '"gpu_available": *true'; then
  echo "bench-gpu.sh: no GPU here, so there is nothing to measure:"
  echo "$probe" | sed -n 's/.*"message": *"\([^"]*\)".*/  \1/p'
  exit 0
fi
pyok=0
if [ "$torch" = 1 ] && python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then pyok=1; fi
if [ "$torch" = 0 ]; then echo "bench-gpu.sh: --no-torch: the PyTorch columns stay empty"
elif [ "$pyok" = 0 ]; then echo "bench-gpu.sh: no CUDA-enabled PyTorch importable: the PyTorch columns stay empty"; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { python3 -c 'import json,sys; j=json.loads(sys.argv[1]); v=j.get(sys.argv[2], ""); print(v)' "$1" "$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }
num() { awk -v a="$1" 'BEGIN { if (a == "") print "-"; else printf "%.0f", a }'; }

# name layers width heads context batch
all_shapes="ref 4 256 4 256 8
mid 6 512 8 512 16
gpt2s 12 768 12 1024 8"
[ "$shapes" = small ] && all_shapes=$(echo "$all_shapes" | head -n1)

ours() {  # shape-config precision [extra flags] -> tokens/s
  local j
  if ! j=$("$cli" train "$1" --bench --device cuda --precision "$2" --json --quiet --memory-limit-GB 70 "${@:3}" 2>"$tmp/err"); then
    echo "bench-gpu.sh: megacluster train $* failed:" >&2; cat "$tmp/err" >&2; echo ""; return 0
  fi
  field "$j" tokens_per_s_median_step
}
theirs() {  # layers width heads context batch precision [--compile] -> tokens/s
  [ "$pyok" = 1 ] || { echo ""; return 0; }
  local j
  j=$(python3 scripts/torch_gpt.py --layers "$1" --width "$2" --heads "$3" --context "$4" --batch "$5" \
        --precision "$6" --steps "$steps" "${@:7}" 2>"$tmp/perr") || { echo "bench-gpu.sh: PyTorch run failed:" >&2; tail -n5 "$tmp/perr" >&2; echo ""; return 0; }
  field "$j" tokens_per_s_median_step
}

gpu=$(echo "$probe" | sed -n 's/.*"gpu_name": *"\([^"]*\)".*/\1/p')
echo "bench-gpu.sh: $gpu; megacluster $cli; $steps steps each (tokens/s of the median step after the first)"
printf '\n| model | precision | megacluster | PyTorch eager | ratio | PyTorch compile | ratio |\n|---|---|---|---|---|---|---|\n'
last_cfg=""
while read -r name L W H T B; do
  cfg="$tmp/$name.json"
  printf '{"model": {"layers": %s, "width": %s, "heads": %s, "context": %s, "vocab": 256}, "batch": %s, "steps": %s}\n' \
    "$L" "$W" "$H" "$T" "$B" "$steps" > "$cfg"
  last_cfg="$cfg"
  for p in fp32 tf32 bf16; do
    o=$(ours "$cfg" "$p")
    e=$(theirs "$L" "$W" "$H" "$T" "$B" "$p")
    c=""
    [ "$p" = bf16 ] && c=$(theirs "$L" "$W" "$H" "$T" "$B" "$p" --compile)
    printf '| %s x %s, T %s, B %s | %s | %s | %s | %s | %s | %s |\n' "$L" "$W" "$T" "$B" "$p" "$(num "$o")" "$(num "$e")" \
      "$(ratio "$o" "$e")" "$(num "$c")" "$(ratio "$o" "$c")"
  done
done <<< "$all_shapes"

# Virtual workers sharing one GPU: dp 2 x tp 2 against one worker, same global batch.
one=$(ours "$last_cfg" fp32)
four=$(ours "$last_cfg" fp32 --dp 2 --tp 2)
printf '\nOne GPU, %s, fp32: one worker %s tokens/s; dp 2 x tp 2 %s tokens/s (ratio %s; target >= 0.8)\n' \
  "$(basename "$last_cfg" .json)" "$(num "$one")" "$(num "$four")" "$(ratio "$four" "$one")"
