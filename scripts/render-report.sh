#!/usr/bin/env bash
# render-report.sh REPORT.html [OUT.png] [WIDTH]: screenshots a coretrain training report with headless
# Chromium, to check by eye that its inline SVG plots draw. Installs nothing: Chromium is a large Debian
# package (`apt-get install --no-install-recommends chromium`) and not part of install-deps.sh; without it the
# script says so and exits 77. OUT.png defaults to the report's name with .png; WIDTH to 1400 (pixels).
set -eu
REPORT=${1:?usage: render-report.sh REPORT.html [OUT.png] [WIDTH]}
OUT=${2:-${REPORT%.html}.png}
WIDTH=${3:-1400}
[ -f "$REPORT" ] || { echo "render-report.sh: $REPORT does not exist" >&2; exit 1; }
BROWSER=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" > /dev/null 2>&1; then BROWSER=$b; break; fi
done
if [ -z "$BROWSER" ]; then
  echo "render-report.sh: no chromium on this machine (apt-get install --no-install-recommends chromium)" >&2
  exit 77
fi
# The page is long: make the window tall enough for every plot even one per row (about 340 px each).
PLOTS=$(grep -c '<svg class="plot"' "$REPORT" || true)
HEIGHT=$((600 + PLOTS * 340))
PROFILE=$(mktemp -d /tmp/render-report.XXXXXX)
trap 'rm -rf "$PROFILE"' EXIT
ABS=$(cd "$(dirname "$REPORT")" && pwd)/$(basename "$REPORT")
OUT_ABS=$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")
# --no-sandbox: root in a container has no user namespaces for the sandbox; the page is local and script-free.
timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$PROFILE" \
  --window-size="$WIDTH,$HEIGHT" --screenshot="$OUT_ABS" "file://$ABS" > "$PROFILE/log" 2>&1 \
  || { cat "$PROFILE/log" >&2; exit 1; }
[ -s "$OUT_ABS" ] || { cat "$PROFILE/log" >&2; echo "render-report.sh: no screenshot written" >&2; exit 1; }
echo "$OUT_ABS"
