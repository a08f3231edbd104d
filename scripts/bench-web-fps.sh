#!/usr/bin/env bash
# Frame rate of the web build in headless Chromium with software rendering (SwiftShader), per panel and
# window size (issue 25: at least 30 frames/s with a 16-GPU animation). Builds nothing: it serves
# build/web/site (cmake --build --preset web) and runs tests/e2e/fps.mjs, which prints a table.
# Usage: scripts/bench-web-fps.sh [--panels collective,pipeline,zero,catalog] [--sizes 1280x720,1440x900]
#                                 [--seconds 8] [--shots DIR] [--site DIR] [--flags "CHROMIUM FLAGS"]
# Per row: frames drawn per second (a still screen draws none), the loop's frames per second, the CPU ms
# Chromium spent per frame drawn (GPU process, where SwiftShader rasterizes, + the page), per second, and
# the load average (2 cores shared: compare CPU ms per frame across runs, not frames/s alone).
# The count includes the time Chromium spends taking screenshots when --shots is given: measure without it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
site=build/web/site
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --site) site="$2"; shift 2 ;;
    --panels|--sizes|--seconds|--shots|--flags) args+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "bench-web-fps.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
command -v node >/dev/null || { echo "bench-web-fps.sh: node not found (scripts/setup.sh installs it)" >&2; exit 1; }
[ -d tests/e2e/node_modules/playwright-core ] || (cd tests/e2e && npm ci --silent)
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
exec node tests/e2e/fps.mjs --site "$site" "${args[@]}"
