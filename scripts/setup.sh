#!/usr/bin/env bash
# Installs everything Megacluster Explorer needs on a Debian 12 machine (run as root), idempotently:
# a second run only checks and returns in seconds.
#
#   scripts/setup.sh            native build + web build + test tools + clang for fuzzing (everything)
#   scripts/setup.sh native     only what the native app and CLI need
#   scripts/setup.sh web        what building and serving the web app needs (scripts/run.sh without a
#                               display): no browser, Xvfb or test tools, so a first page is served sooner
#
# Third-party sources are never committed: Dear ImGui 1.86 and SDL2 (for WebAssembly) come from Debian's
# source packages and are unpacked/built once per machine into $MEGACLUSTER_DEPS
# (default ~/.cache/megacluster-deps). See docs/TOOLCHAIN.md for why each step is the way it is.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
what=${1:-all}
deps=${MEGACLUSTER_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/megacluster-deps}
mkdir -p "$deps"

log() { printf '[setup] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

native_pkgs=(build-essential cmake ninja-build pkg-config ccache libsdl2-dev libgl-dev libgl1-mesa-dri
  libeigen3-dev nlohmann-json3-dev libgtest-dev libbenchmark-dev libstb-dev fonts-dejavu-core dpkg-dev)
# Open MPI: `mpirun -np N megacluster train` and tests/mpi (optional in the build; installed so CI runs them).
native_pkgs+=(openmpi-bin libopenmpi-dev)
web_pkgs=(emscripten)
# clang-format: scripts/format.sh --check, run by scripts/test.sh.
test_pkgs=(chromium xvfb xauth nodejs clang-format)
# A screen reader, Orca, reading the web build (scripts/screen-reader.sh, CTest's e2e.screen_reader): its
# accessibility bus, a session bus to start it on, and xdotool to press keys in the browser.
test_pkgs+=(orca python3-pyatspi at-spi2-core dbus-x11 xdotool)
# The fuzz preset (tests/fuzz, scripts/fuzz.sh): clang 14 and its runtime libraries (libFuzzer, ASan, UBSan).
fuzz_pkgs=(clang libclang-rt-14-dev)

case "$what" in
  all | native | web) ;;
  *) log "unknown part '$what': use all (the default), native or web"; exit 2 ;;
esac
pkgs=("${native_pkgs[@]}")
case "$what" in
  all) pkgs+=("${web_pkgs[@]}" "${test_pkgs[@]}" "${fuzz_pkgs[@]}") ;;
  web) pkgs+=("${web_pkgs[@]}" nodejs) ;;  # node serves the page (tests/e2e/serve.mjs: node's own modules)
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# node/npm may come from outside Debian (the machine image ships node 20): accept any working npm.
if printf '%s\n' "${missing[@]:-}" | grep -qx nodejs && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}")
fi
missing=($(printf '%s\n' "${missing[@]:-}" | grep -v '^$' || true))

apt_updated=0
apt_update() {
  [ $apt_updated = 1 ] && return 0
  log "apt-get update"
  as_root apt-get update -qq || log "apt-get update reported errors (unreachable extra sources are harmless)"
  apt_updated=1
}

if [ ${#missing[@]} -gt 0 ]; then
  apt_update
  log "installing: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# deb-src entry: repeat the machine's own Debian entry (URIs, Signed-By) with Types: deb-src, so
# `apt-get source` works against whatever mirror this machine uses.
ensure_deb_src() {
  local src=/etc/apt/sources.list.d/megacluster-deb-src.sources
  [ -f "$src" ] && return 0
  local base=/etc/apt/sources.list.d/debian.sources uris signed
  if [ -f "$base" ]; then
    uris=$(awk '/^URIs:/{print $2; exit}' "$base")
    signed=$(awk '/^Signed-By:/{print $2; exit}' "$base")
  else
    uris=$(awk '$1=="deb" && $0 ~ /bookworm/ {for(i=2;i<=NF;i++) if ($i ~ /^https?:/) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
    signed=/usr/share/keyrings/debian-archive-keyring.gpg
  fi
  [ -n "$uris" ] || { log "cannot find the machine's Debian mirror in /etc/apt; add a deb-src entry by hand"; exit 1; }
  log "adding deb-src entry for $uris"
  printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: %s\n' "$uris" "$signed" \
    | as_root tee "$src" >/dev/null
  apt_updated=0
  apt_update
}

# Dear ImGui 1.86: core + backends from the source package (the -dev package lacks the .cpp files).
imgui_dir="$deps/imgui"
if [ ! -f "$imgui_dir/imgui.cpp" ]; then
  ensure_deb_src
  log "fetching Dear ImGui source (apt-get source imgui)"
  tmp=$(mktemp -d "$deps/imgui-src.XXXX")
  (cd "$tmp" && apt-get source -qq imgui >/dev/null 2>&1 || apt-get source imgui)
  src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'imgui-*' | head -1)
  [ -f "$src/imgui.cpp" ] || { log "apt-get source imgui did not unpack imgui.cpp (looked in $tmp)"; exit 1; }
  rm -rf "$imgui_dir"; mv "$src" "$imgui_dir"; rm -rf "$tmp"
fi

if [ "$what" != native ]; then
  # SDL2 for WebAssembly: emscripten's -sUSE_SDL=2 port downloads from the internet, so build Debian's
  # libsdl2 source with SDL's own CMake under emcmake, once per machine.
  sdl_prefix="$deps/sdl2-wasm"
  if [ ! -f "$sdl_prefix/lib/libSDL2.a" ]; then
    ensure_deb_src
    log "building SDL2 for WebAssembly (once per machine, about 3 minutes)"
    tmp=$(mktemp -d "$deps/sdl2-src.XXXX")
    (cd "$tmp" && apt-get source -qq libsdl2 >/dev/null 2>&1 || apt-get source libsdl2)
    src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'libsdl2-*' | head -1)
    [ -f "$src/CMakeLists.txt" ] || { log "apt-get source libsdl2 failed (looked in $tmp)"; exit 1; }
    export NODE_PATH=/usr/share/nodejs
    emcmake cmake -S "$src" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSDL_SHARED=OFF \
      -DSDL_STATIC=ON -DSDL_TEST=OFF -DCMAKE_INSTALL_PREFIX="$sdl_prefix" >"$tmp/configure.log" 2>&1 \
      || { tail -30 "$tmp/configure.log"; exit 1; }
    cmake --build "$tmp/build" -j2 >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log"; exit 1; }
    cmake --install "$tmp/build" >/dev/null
    rm -rf "$tmp"
  fi

  # playwright-core from the committed lock file (never `playwright install`: it downloads a browser).
  e2e="$here/tests/e2e"
  if [ "$what" = all ] && [ -f "$e2e/package-lock.json" ] && { [ ! -d "$e2e/node_modules/playwright-core" ] ||
       [ "$e2e/package-lock.json" -nt "$e2e/node_modules/.package-lock.json" ]; }; then
    log "npm ci in tests/e2e"
    (cd "$e2e" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
fi

log "dependencies ready in $deps"
