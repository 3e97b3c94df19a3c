#!/usr/bin/env bash
# report-screenshot.sh HTML PNG [WIDTH HEIGHT]: renders a pes-replay --html
# page in headless Chromium (Debian package chromium) into a PNG of exactly
# WIDTHxHEIGHT pixels (default 1200x2400). The e2e test replay_html.sh runs it
# and checks the PNG; docs/report.png is its output for scripts/demo.sh's
# demo-report.html.
set -euo pipefail
[ $# -eq 2 ] || [ $# -eq 4 ] || { echo "usage: $0 HTML PNG [WIDTH HEIGHT]" >&2; exit 2; }
html=$(realpath "$1") png=$(realpath -m "$2") w=${3:-1200} h=${4:-2400}
chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || { echo "$0: chromium not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
sandbox=()
[ "$(id -u)" -ne 0 ] || sandbox=(--no-sandbox)   # Chromium refuses to run as root with its sandbox
# no network: the page must need none (--html writes everything inline)
timeout 120 "$chrome" --headless "${sandbox[@]}" --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$profile" --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>' \
  --disable-dev-shm-usage --window-size="$w,$h" --screenshot="$png" "file://$html" >"$profile/log" 2>&1 ||
  { cat "$profile/log" >&2; exit 1; }
[ -s "$png" ] || { cat "$profile/log" >&2; echo "$0: no screenshot written" >&2; exit 1; }
