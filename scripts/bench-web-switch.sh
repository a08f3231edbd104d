#!/usr/bin/env bash
# How long the web build takes to answer a class (issue 41 item 9): every chapter's switch time on its first
# and second visit in one page, and a few scenario steps opened by command, in headless Chromium. Builds
# nothing: it serves build/web/site (cmake --build --preset web) and runs tests/e2e/switch.mjs, which prints
# a table, the median and the worst of each visit.
# Usage: scripts/bench-web-switch.sh [--size 1440x900] [--rounds 2] [--chapters ID,...] [--steps ID:N,...]
#                                    [--site DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
site=build/web/site
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --site) site="$2"; shift 2 ;;
    --size|--rounds|--steps|--chapters) args+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "bench-web-switch.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
command -v node >/dev/null || { echo "bench-web-switch.sh: node not found (scripts/setup.sh installs it)" >&2; exit 1; }
[ -d tests/e2e/node_modules/playwright-core ] || (cd tests/e2e && npm ci --silent)
exec node tests/e2e/switch.mjs --site "$site" "${args[@]}"
