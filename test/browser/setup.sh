# setup.sh — sourced by the browser test scripts (test/scripts/browser.sh,
# svg-safety.sh, speedscope.sh): makes sure /usr/bin/chromium, Node.js,
# playwright-core and speedscope (pinned, into test/browser/node_modules)
# are there, installing what is missing with tools/deps (the one list of
# what the tests need).
# Needs ROOT, BIN and a fail() that prints its message and exits non-zero:
# a browser test that cannot run FAILS, it never passes or skips.
BROWSER_DIR=$ROOT/test/browser
[ -x "$BIN/fold2svg" ] || fail "no $BIN/fold2svg; run make"
if ! "$ROOT/tools/deps" check test; then
	"$ROOT/tools/deps" install test >&2 ||
		fail "cannot install what the browser tests need: tools/deps install test"
fi
[ -x /usr/bin/chromium ] || fail "no /usr/bin/chromium (apt-get install chromium)"
command -v node >/dev/null || fail "node is missing (apt-get install nodejs)"
[ -d "$BROWSER_DIR/node_modules/playwright-core" ] ||
	fail "no playwright-core in $BROWSER_DIR/node_modules (tools/deps install test)"
[ -f "$BROWSER_DIR/node_modules/speedscope/package.json" ] ||
	fail "no speedscope in $BROWSER_DIR/node_modules (tools/deps install test)"
# The browser tests set no time limit of their own: on a loaded machine a
# page may take minutes.  This only ends a run that hangs (seconds).
BROWSER_HANG=${FOLDKIT_BROWSER_HANG:-1800}
