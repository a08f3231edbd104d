#!/usr/bin/env bash
# screen-reader.sh: what does a screen-reader user hear from the web build?
#
# The app draws everything into one WebGL canvas; a blind reader gets the app only through its
# accessibility mirror (the hidden DOM under #a11y).  tests/e2e/access.mjs checks that mirror through
# Chromium's accessibility tree; this script goes one step further and runs a real screen reader, Orca,
# against the built site in a headed Chromium on a private X display, presses the keys a reader would,
# and records what Orca says after each key.  It passes (exit 0) when Orca spoke
#   (i)   the chapter's name "Train a transformer" (the page opens on ?panel=perf),
#   (ii)  a slider named "nodes" whose value text ("128 nodes") it reads, before and after an arrow key,
#   (iii) a table or a column header (the charts are figures holding tables with header cells),
#   (iv)  that the app is ready, naming the chapter (said once the mirror is filled: Orca reads the page
#         on load, before the app has drawn anything);
# otherwise it prints what was missing and exits 1 (2 when the set-up itself failed, 77 when a tool it
# needs is not installed: CTest's e2e.screen_reader then counts as skipped; scripts/setup.sh installs them).
#
# Nothing is spoken aloud: Orca's speech goes to tests/e2e/orca/speech_log.py, which writes each
# utterance to a log (see that file for why not speech-dispatcher).
#
# usage: scripts/screen-reader.sh [SITE_DIR]       (default build/web/site)
# env:   OUT_DIR   where transcript.txt and the raw logs go      (default /tmp/screen-reader-out)
#        DISP      the private X display                          (default: the first free of :89 to :99)
#        STEP_WAIT seconds to let Orca speak after each key       (default 1.5)
#        LOAD_WAIT seconds to wait for the app to be drawn/read   (default 40)
#        SCENARIO  1 to also check a scenario's narration (the live region), 0 to skip   (default 1)
#        SAY_ALL   1 to add a Say All of the whole perf page to the transcript (long)      (default 0)
# needs: Xvfb, dbus-launch, /usr/libexec/at-spi-bus-launcher, orca (43), python3-pyatspi, xdotool,
#        chromium.  Only the processes it starts are stopped at the end (by their ids).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SITE_SRC=${1:-$ROOT/build/web/site}
OUT_DIR=${OUT_DIR:-/tmp/screen-reader-out}
if [ -z "${DISP:-}" ]; then
  for n in $(seq 89 99); do [ -e "/tmp/.X$n-lock" ] || { DISP=:$n; break; }; done
  DISP=${DISP:-:89}
fi
STEP_WAIT=${STEP_WAIT:-1.5}
LOAD_WAIT=${LOAD_WAIT:-40}
SCENARIO=${SCENARIO:-1}
SAY_ALL=${SAY_ALL:-0}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

die() { echo "screen-reader: $*" >&2; exit 2; }
[ -f "$SITE_SRC/index.html" ] || die "no web build at $SITE_SRC (build the \"web\" preset first)"
for tool in Xvfb dbus-launch orca xdotool python3 "$CHROMIUM" /usr/libexec/at-spi-bus-launcher; do
  command -v "$tool" >/dev/null || { echo "screen-reader: missing $tool (scripts/setup.sh all installs it)" >&2; exit 77; }
done
/usr/bin/python3 -c 'import pyatspi' 2>/dev/null || { echo "screen-reader: missing python3-pyatspi" >&2; exit 77; }
[ -e "/tmp/.X${DISP#:}-lock" ] && die "display $DISP is in use (set DISP to a free one)"

T0=$(date +%s)
elapsed() { echo "$(( $(date +%s) - T0 ))s"; }
log() { echo "[$(elapsed)] $*"; }

# ---------------------------------------------------------------------------------------------------
# Clean-up: every process this script starts is put in its own process group (setsid) and its id kept
# here; on exit, however it exits, those groups and only those are stopped.
# ---------------------------------------------------------------------------------------------------
WORK=$(mktemp -d /tmp/screen-reader.XXXXXX)
GROUPS_STARTED=()   # process-group ids (= the leader's pid)
DBUS_SESSION_BUS_PID=
cleanup() {
  local rc=$?
  set +e
  local g
  for g in "${GROUPS_STARTED[@]}"; do kill -TERM -- "-$g" 2>/dev/null; done
  [ -n "$DBUS_SESSION_BUS_PID" ] && kill "$DBUS_SESSION_BUS_PID" 2>/dev/null
  sleep 1
  for g in "${GROUPS_STARTED[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start() {  # start LOGFILE CMD...: run CMD in the background in a new process group
  local out=$1; shift
  setsid "$@" >"$out" 2>&1 &
  GROUPS_STARTED+=("$!")
  disown "$!"   # no "Terminated" notices from bash when the clean-up stops it
}

wait_for() {  # wait_for SECONDS CMD...: true once CMD succeeds, false after SECONDS
  local end=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -ge "$end" ] && return 1
    sleep 0.25
  done
}

mkdir -p "$OUT_DIR"
rm -f "$OUT_DIR"/transcript.txt "$OUT_DIR"/speech.tsv "$OUT_DIR"/*.log
SPEECH=$WORK/speech.tsv
: >"$SPEECH"

# ---------------------------------------------------------------------------------------------------
# 1. The site: a private copy (the build may be redone meanwhile), served over http (WebAssembly is
#    not loaded from file://) on a free port.
# ---------------------------------------------------------------------------------------------------
cp -r "$SITE_SRC" "$WORK/site"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start "$WORK/http.log" python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$WORK/site"
ORIGIN=http://127.0.0.1:$PORT
wait_for 10 python3 -c "import urllib.request; urllib.request.urlopen('$ORIGIN/index.html')" \
  || die "the http server did not start"
log "site served at $ORIGIN"

# ---------------------------------------------------------------------------------------------------
# 2. The desktop: X server, session bus, accessibility bus, Orca, Chromium.
# ---------------------------------------------------------------------------------------------------
export DISPLAY=$DISP
start "$WORK/xvfb.log" Xvfb "$DISP" -screen 0 1440x900x24 -nolisten tcp
wait_for 10 xdotool getdisplaygeometry || die "Xvfb did not start on $DISP"

eval "$(dbus-launch --sh-syntax)"
export DBUS_SESSION_BUS_ADDRESS
start "$WORK/atspi.log" /usr/libexec/at-spi-bus-launcher --launch-immediately
export GTK_MODULES=gail:atk-bridge NO_AT_BRIDGE=0 GNOME_ACCESSIBILITY=1 ACCESSIBILITY_ENABLED=1
wait_for 10 dbus-send --session --print-reply --dest=org.a11y.Bus /org/a11y/bus org.a11y.Bus.GetAddress \
  || die "the AT-SPI bus did not start"
log "X display $DISP, D-Bus and AT-SPI up"

# Orca with a throw-away settings directory: no first-run dialog, speech through the logging module,
# Insert as the Orca key, no braille, no sounds, no key echo (so the log holds only what Orca reads).
PREFS=$WORK/orca-prefs
mkdir -p "$PREFS"
cat >"$PREFS/user-settings.conf" <<'EOF'
{"general": {"speechServerFactory": "speech_log", "speechServerInfo": null,
  "enableSpeech": true, "enableBraille": false, "enableSound": false,
  "enableKeyEcho": false, "keyboardLayout": 1, "orcaModifierKeys": ["Insert", "KP_Insert"],
  "activeProfile": ["Default", "default"], "startingProfile": ["Default", "default"]},
 "profiles": {"default": {"profile": ["Default", "default"], "pronunciations": {}, "keybindings": {}}},
 "pronunciations": {}, "keybindings": {}}
EOF
export PYTHONPATH=$ROOT/tests/e2e/orca${PYTHONPATH:+:$PYTHONPATH} ORCA_SPEECH_LOG=$SPEECH \
       PYTHONDONTWRITEBYTECODE=1   # no __pycache__ next to speech_log.py
start "$WORK/orca.log" orca -u "$PREFS" --debug-file="$WORK/orca-debug.log"
wait_for 30 grep -q "Screen reader on" "$SPEECH" || die "Orca did not start (see $WORK/orca.log)"
log "Orca running"

# Chromium, headed (Orca reads a window), WebGL drawn in software (SwiftShader: no GPU here).
CHROMIUM_RUNS=0
start_chromium() {  # start_chromium URL
  CHROMIUM_RUNS=$((CHROMIUM_RUNS + 1))
  start "$WORK/chromium-$CHROMIUM_RUNS.log" "$CHROMIUM" --force-renderer-accessibility --no-sandbox --no-first-run \
    --no-default-browser-check --password-store=basic --user-data-dir="$WORK/chrome-profile" \
    --use-angle=swiftshader --enable-unsafe-swiftshader --ignore-gpu-blocklist \
    --window-position=0,0 --window-size=1440,900 "$1"
  CHROMIUM_PGID=${GROUPS_STARTED[-1]}
}
start_chromium "$ORIGIN/index.html?panel=perf"

# ---------------------------------------------------------------------------------------------------
# 3. Keys and what Orca said after each.  The speech log gets a marker line before each key; the
#    transcript is the log cut at the markers.
# ---------------------------------------------------------------------------------------------------
MARK=0          # the speech log's line count at the last marker
mark() {        # mark STEP KEY
  MARK=$(wc -l <"$SPEECH")
  printf '%s\t==\t%s\t%s\n' "$(date +%s.%N)" "$1" "$2" >>"$SPEECH"
}
said() {        # what Orca said since the last marker, one utterance a line
  tail -n +"$((MARK + 2))" "$SPEECH" | awk -F'\t' '$2 != "STOP" && $2 != "==" { print $3 }'
}
heard() {       # heard REGEX: did Orca say something matching REGEX (case-blind) since the last marker?
  grep -Eqi "$1" <<<"$(said)"
}
key() {         # key STEP KEY [SECONDS]: press KEY (an xdotool key name) and let Orca speak
  mark "$1" "$2"
  xdotool key "$2"
  sleep "${3:-$STEP_WAIT}"
}
focus_browser() {  # no window manager: give the Chromium window the X keyboard focus
  local w
  w=$(xdotool search --onlyvisible --class chromium | tail -1) || return 1
  xdotool windowfocus --sync "$w"
}

# (a) On load: Orca announces the page and reads what is there.  The mirror is filled in only once the
#     WebAssembly app runs, and the app then focuses its canvas, which Orca announces ("canvas").
mark "load" "(none)"
wait_for 30 focus_browser || die "no Chromium window appeared"
wait_for "$LOAD_WAIT" heard "Train a transformer|^canvas" \
  || log "Orca read neither the chapter nor the canvas ${LOAD_WAIT}s after the page opened"
sleep 3   # a few frames for the mirror to fill in
focus_browser || true
log "page loaded"

# (b) The first Tab stop is the skip link; Enter follows it to the chapter's content.
key "skip link" Tab
key "follow skip link" Return 2

# (c) Tab through the controls to the perf panel's "nodes" slider, then an arrow each way.
SLIDER_FOUND=0
for i in $(seq 1 40); do
  key "tab $i" Tab 1
  if heard "nodes" && heard "slider"; then SLIDER_FOUND=1; break; fi
done
if [ "$SLIDER_FOUND" = 1 ]; then
  key "slider: arrow left" Left 2
  key "slider: arrow right" Right 2
else
  log "Tab never reached the nodes slider"
fi

# (d) Browse mode: headings (the windows' titles), then the next table and a few lines of it.
key "browse mode" Insert+a
for i in 1 2 3 4; do key "next heading $i" h; done
key "next table" t
for i in 1 2 3 4 5; do key "table: down $i" Down; done
# Optionally the whole page, top to bottom (Say All): long, but shows the reading order.
if [ "$SAY_ALL" = 1 ]; then
  key "top of page" ctrl+Home
  key "say all" KP_Add 8
  key "stop say all" Control
fi

# (e) A scenario step: its narration is a polite live region; does Orca announce it unasked?  Typing a
#     URL into the address bar does not work here: Orca does not see the browser's own UI take the focus
#     and takes the typed letters for its browse-mode keys.  So this is a second run of the browser, on
#     the scenario's address, with the same Orca.
if [ "$SCENARIO" = 1 ]; then
  kill -TERM -- "-$CHROMIUM_PGID" 2>/dev/null || true
  wait_for 10 bash -c "! kill -0 -- -$CHROMIUM_PGID" || kill -KILL -- "-$CHROMIUM_PGID" 2>/dev/null || true
  rm -rf "$WORK/chrome-profile"
  mark "open scenario (second run)" "(none)"
  start_chromium "$ORIGIN/index.html?scenario=dgx1-2016&step=1"
  wait_for 30 focus_browser || log "no Chromium window for the scenario"
  # The narration of the dgx1-2016 scenario's first two steps (scenarios/dgx1-2016.json), whichever shows.
  wait_for "$LOAD_WAIT" heard "Data parallel over the 8 GPUs|In August 2016 OpenAI" || true
  sleep 3
fi
mark "end" "(none)"
log "keys done"

# ---------------------------------------------------------------------------------------------------
# 4. Transcript and verdict.
# ---------------------------------------------------------------------------------------------------
cp "$SPEECH" "$OUT_DIR/speech.tsv"
cp "$WORK"/*.log "$OUT_DIR/" 2>/dev/null || true
awk -F'\t' '
  $2 == "==" { if ($3 != "end") printf "\n[%s]  key: %s\n", $3, $4; next }
  $2 != "STOP" { printf "  %-6s %s\n", $2, $3 }' "$SPEECH" >"$OUT_DIR/transcript.txt"
cat "$OUT_DIR/transcript.txt"
echo

SPOKEN=$(awk -F'\t' '$2 != "STOP" && $2 != "==" { print $3 }' "$SPEECH")
said_in() {  # said_in STEP: what Orca said after the marker of STEP
  awk -F'\t' -v s="$1" '$2 == "==" { on = ($3 == s); next } on && $2 != "STOP" { print $3 }' "$SPEECH"
}
echo "summary:"
echo "  chapter:      $(grep -m1 "Train a transformer" <<<"$SPOKEN" || echo '(never read)')"
echo "  slider:       $(grep -m1 -Ei "nodes.*slider" <<<"$SPOKEN" || echo '(never read)')"
echo "  arrow left:   $(said_in "slider: arrow left" | paste -sd' ')"
echo "  arrow right:  $(said_in "slider: arrow right" | paste -sd' ')"
echo "  next table:   $(said_in "next table" | paste -sd' ')"
if [ "$SCENARIO" = 1 ]; then
  echo "  narration:    $(grep -m1 -E "Data parallel over the 8 GPUs|In August 2016 OpenAI" <<<"$SPOKEN" \
                          || echo '(not announced; not a failure)')"
fi
echo "run time: $(elapsed); transcript: $OUT_DIR/transcript.txt"

MISSING=()
grep -q "Train a transformer" <<<"$SPOKEN" || MISSING+=("the chapter's name 'Train a transformer'")
grep -Eiq "nodes.*slider.*[0-9]+ nodes?" <<<"$SPOKEN" \
  || MISSING+=("a slider named 'nodes' with its value text ('128 nodes')")
grep -Eiq "table with|column header|row header" <<<"$SPOKEN" || MISSING+=("a table or a column header")
grep -Eiq "nodes" <<<"$(said_in "slider: arrow left")" || MISSING+=("the nodes slider's new value after an arrow")
grep -q "Megacluster Explorer is ready: Train a transformer" <<<"$SPOKEN" \
  || MISSING+=("that the app is ready ('Megacluster Explorer is ready: Train a transformer')")
if [ ${#MISSING[@]} -gt 0 ]; then
  printf 'screen-reader FAILED: Orca never spoke %s\n' "${MISSING[@]}"
  exit 1
fi
echo "screen-reader: OK (Orca said the app was ready, read the chapter, the nodes slider with its value, and a table)"
