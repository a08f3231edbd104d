#!/usr/bin/env bash
# Command (1) of the README: installs what is missing, builds, and runs the explorer: the native app
# when a display is available ($DISPLAY or $WAYLAND_DISPLAY), otherwise the web app served on
# http://127.0.0.1:8080/ (or $PORT) with its URL printed. Extra arguments go to the native app.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ "${MEGACLUSTER_WEB:-0}" != 1 ]; then
  bash scripts/setup.sh native
  cmake --preset native >/dev/null
  cmake --build --preset native --target megacluster-app megacluster-app-data megacluster
  exec build/native/native/megacluster-app "$@"
else
  bash scripts/setup.sh web
  cmake --preset web >/dev/null
  cmake --build --preset web --target megacluster-web
  echo "No display found: serving the web app instead."
  exec node tests/e2e/serve.mjs build/web/site "${PORT:-8080}"
fi
