#!/usr/bin/env bash
# The whole GPU check in one call of a lent GPU machine that has CUDA, cuBLAS/NCCL wheels and PyTorch but
# none of our Debian packages (../shared/docs/TOOLCHAIN.md, "Running the CUDA build on a GPU machine").
#   here:  scripts/gpu-lease.sh pack   copies the native build's CLI and unit tests and the Open MPI
#                                      libraries they link into .lease/ (git-ignored; carry it)
#   there: scripts/gpu-lease.sh run [--quick] [bench-gpu.sh options, e.g. --no-torch]
#                                      (--quick: the tests, the bf16 profile and the kernel variants; no bench)
#                                      the CUDA tests, a per-operation GPU profile (MC_CUDA_PROFILE=1), the
#                                      attention kernels against each other (MC_ATTENTION=mma|tiled|rows|cublas)
#                                      and scripts/bench-gpu.sh; logs under $OUT (or .lease/out), table last
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
here=$PWD
case "${1:-}" in
  pack)
    set -e
    rm -rf .lease && mkdir -p .lease/native/engine .lease/native/tests .lease/lib
    cp build/native/engine/megacluster .lease/native/engine/
    cp build/native/tests/mc_unit_tests .lease/native/tests/
    # Every shared library but the C/C++ runtime's, which the GPU machine has in newer versions.
    ldd build/native/engine/megacluster build/native/tests/mc_unit_tests | awk '/=> \//{print $3}' | sort -u |
      grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libz|ld-linux[^/]*)\.so' | xargs -I{} cp -L {} .lease/lib/
    grep -qs '^/.lease/$' .git/info/exclude || { mkdir -p .git/info && echo /.lease/ >> .git/info/exclude; }
    echo "$here" > .lease/source-path  # the absolute path compiled into the tests
    du -sh .lease
    ;;
  run)
    quick=0
    [ "${2:-}" = --quick ] && { quick=1; shift; }
    out=${OUT:-.lease/out}
    mkdir -p "$out"
    [ -x .lease/native/engine/megacluster ] || { echo "gpu-lease.sh: .lease/ missing: run 'pack' here and carry .lease" >&2; exit 1; }
    src=$(cat .lease/source-path)
    [ -e "$src" ] || { mkdir -p "$(dirname "$src")" && ln -s "$here" "$src"; }
    libs=/usr/local/cuda/lib64
    for m in nccl cublas; do
      d=$(python3 -c "import nvidia.$m as p; print(list(p.__path__)[0] + '/lib')" 2>/dev/null) && libs="$libs:$d"
    done
    export LD_LIBRARY_PATH="$libs:${LD_LIBRARY_PATH:-}:$here/.lease/lib"
    cli=.lease/native/engine/megacluster
    nvidia-smi -L
    "$cli" device --json | tee "$out/device.json"
    echo "== CUDA tests (the TF32 tensor-core attention asked for: MC_ATTENTION_TF32=mma)"
    MC_ATTENTION_TF32=mma timeout 200 .lease/native/tests/mc_unit_tests --gtest_filter='Cuda*:DeviceConformance*:TrainDevice*:ReferenceGpt*:TrainTransfer*' \
      > "$out/tests.log" 2>&1
    echo "tests: exit $?"
    grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) ' "$out/tests.log" | grep -v -E 'OK .*/cpu|OK .*Conformance' | tail -40
    grep -E '    attention |Failure|error' "$out/tests.log" | head -20
    if grep -q 'FAILED .*AttentionOnTensorCores' "$out/tests.log"; then
      echo "!! the tensor-core attention failed its test (bf16, or TF32 asked for): read tests.log before the figures below"
    fi
    echo "== Profile (12 x 768, T 1024, B 8; 5 steps)"
    printf '{"model": {"layers": 12, "width": 768, "heads": 12, "context": 1024, "vocab": 256}, "batch": 8, "steps": 5}\n' \
      > "$out/gpt2s.json"
    tps() { python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1])).get("tokens_per_s_median_step", 0)))' "$1" 2>/dev/null; }
    precisions="fp32 bf16"
    [ "$quick" = 1 ] && precisions=bf16
    for p in $precisions; do
      MC_CUDA_PROFILE=1 timeout 60 "$cli" train "$out/gpt2s.json" --device cuda --precision "$p" --json --quiet \
        --memory-limit-GB 70 > "$out/profile-$p.json" 2> "$out/profile-$p.txt"
      echo "-- $p: exit $?; tokens/s (median step) $(tps "$out/profile-$p.json")"
      tail -n 24 "$out/profile-$p.txt"
    done
    echo "== Attention kernels (same model, bf16): tokens/s of the median step"
    kernels="mma tiled rows cublas"  # mma: tensor cores (the default in bf16 on sm_80 on)
    [ "$quick" = 1 ] && kernels="mma tiled"
    for a in $kernels; do
      MC_ATTENTION=$a timeout 60 "$cli" train "$out/gpt2s.json" --device cuda --precision bf16 --json --quiet \
        --memory-limit-GB 70 > "$out/attention-$a.json" 2> "$out/attention-$a.txt"
      echo "MC_ATTENTION=$a: exit $?; $(tps "$out/attention-$a.json") tokens/s"
    done
    echo "== Attention kernels (same model, tf32): the fp32 tiles (default) or tensor cores (MC_ATTENTION_TF32=mma)"
    for a in tiles mma; do
      MC_ATTENTION_TF32=$a timeout 60 "$cli" train "$out/gpt2s.json" --device cuda --precision tf32 --json --quiet \
        --memory-limit-GB 70 > "$out/tf32-$a.json" 2> "$out/tf32-$a.txt"
      echo "MC_ATTENTION_TF32=$a: exit $?; $(tps "$out/tf32-$a.json") tokens/s"
    done
    echo "== Linear layers' bias: in the product's epilogue (cuBLASLt, the default) or a pass of its own"
    MC_CUBLASLT=off timeout 60 "$cli" train "$out/gpt2s.json" --device cuda --precision bf16 --json --quiet \
      --memory-limit-GB 70 > "$out/lt-off.json" 2> "$out/lt-off.txt"
    echo "MC_CUBLASLT=off: exit $?; $(tps "$out/lt-off.json") tokens/s"
    [ "$quick" = 1 ] && exit 0
    echo "== Bench"
    timeout 300 scripts/bench-gpu.sh --native .lease/native --steps 8 "${@:2}" 2>&1 | tee "$out/bench.log"
    # What comes back from a lease is at most 8 files: the logs in one archive, the two read most beside it.
    tar czf /tmp/lease-logs.tgz -C "$out" . && rm -f "$out"/* && mv /tmp/lease-logs.tgz "$out"/ &&
      tar xzf "$out/lease-logs.tgz" -C "$out" ./bench.log ./tests.log ./profile-bf16.txt ./profile-fp32.txt
    ;;
  *)
    sed -n '2,7p' "$0"
    exit 2
    ;;
esac
