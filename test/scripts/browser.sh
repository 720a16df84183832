#!/bin/bash
# browser.sh — fold2svg's interactive script in a real browser: headless
# Chromium driven by playwright-core (test/browser/check-svg.js) clicks,
# zooms and searches a generated SVG opened from a file:// URL; a large graph
# stays responsive (check-big.js); a search regex that would run for minutes
# is stopped and said to be (check-slow-search.js).
# Installs what it needs (Debian chromium, npm playwright-core into
# test/browser/node_modules).  If Chromium cannot start, the test FAILS.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${BIN:-$ROOT/build/bin}
DIR=$ROOT/test/browser
fail() { echo "browser test FAILED: $*" >&2; exit 1; }

. "$DIR/setup.sh"

TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
"$BIN/fold2svg" "$DIR/sample.folded" > "$TMP/sample.svg" || fail "fold2svg failed"
cd "$DIR" && timeout "$BROWSER_HANG" node check-svg.js "$DIR/sample.folded" "$TMP/sample.svg"
st=$?
[ $st = 3 ] && fail "Chromium (/usr/bin/chromium) could not start"
[ $st = 0 ] || fail "check-svg.js exit $st"

# 60,000 frames: 10,000 stacks six frames deep, each 0.118 px wide
awk 'BEGIN { for (i = 0; i < 10000; i++) { s = "f1_" i; for (d = 2; d <= 6; d++) s = s ";f" d "_" i; print s, 1 } }' > "$TMP/big.folded"
"$BIN/fold2svg" "$TMP/big.folded" > "$TMP/big.svg" || fail "fold2svg failed on the large graph"
timeout "$BROWSER_HANG" node check-big.js "$TMP/big.svg" 50000
st=$?
[ $st = 3 ] && fail "Chromium (/usr/bin/chromium) could not start"
[ $st = 0 ] || fail "check-big.js exit $st"

# a search regex that takes minutes on one name is stopped, not run to the end
printf 'main;%s 5\nmain;b 5\n' "$(printf 'a%.0s' $(seq 40))" > "$TMP/slow.folded"
"$BIN/fold2svg" "$TMP/slow.folded" > "$TMP/slow.svg" || fail "fold2svg failed on the slow-search graph"
timeout "$BROWSER_HANG" node check-slow-search.js "$TMP/slow.svg"
st=$?
[ $st = 3 ] && fail "Chromium (/usr/bin/chromium) could not start"
[ $st = 0 ] || fail "check-slow-search.js exit $st"
