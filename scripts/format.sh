#!/usr/bin/env bash
# Formats every C++/CUDA file of the repository with .clang-format (clang-format 14, Debian's), or with
# --check lists the files that differ and exits 1 without touching them (scripts/test.sh runs the check).
# Only files git knows are considered, so build trees and fetched sources (ImGui, SDL2) are never touched;
# tests/unit/scenario_digests.inc is generated data (its header says how), not code, and is left as written.
#   bash scripts/format.sh            format in place
#   bash scripts/format.sh --check    fail on drift (prints each file and the command that fixes it)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format >/dev/null || { echo "clang-format not found: bash scripts/setup.sh installs it" >&2; exit 2; }
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.h' '*.cu' '*.cuh' '*.inc' \
  ':(exclude)tests/unit/scenario_digests.inc')
if [[ "${1:-}" == "--check" ]]; then
  drift=()
  for f in "${files[@]}"; do
    [[ -f "$f" ]] || continue
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || drift+=("$f")
  done
  if ((${#drift[@]})); then
    printf 'not formatted: %s\n' "${drift[@]}" >&2
    echo "${#drift[@]} of ${#files[@]} files differ from .clang-format; run: bash scripts/format.sh" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files match .clang-format"
elif [[ $# -eq 0 ]]; then
  for f in "${files[@]}"; do [[ -f "$f" ]] && clang-format -i "$f"; done
  echo "format: ${#files[@]} files formatted"
else
  echo "usage: bash scripts/format.sh [--check]" >&2
  exit 2
fi
