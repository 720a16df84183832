# setup.sh — sourced by the browser test scripts (test/scripts/browser.sh,
# svg-safety.sh): makes sure /usr/bin/chromium and playwright-core (npm,
# into test/browser/node_modules) are there, installing them if not.
# Needs ROOT, BIN and a fail() that prints its message and exits non-zero:
# a browser test that cannot run FAILS, it never passes or skips.
BROWSER_DIR=$ROOT/test/browser
[ -x "$BIN/fold2svg" ] || fail "no $BIN/fold2svg; run make"
if [ ! -x /usr/bin/chromium ]; then
	echo "installing chromium" >&2
	if [ "$(id -u)" = 0 ]; then apt-get install -y chromium >&2
	else sudo -n apt-get install -y chromium >&2; fi || fail "cannot install chromium (apt-get install chromium)"
fi
command -v node >/dev/null || fail "node is missing (apt-get install nodejs npm)"
if [ ! -d "$BROWSER_DIR/node_modules/playwright-core" ]; then
	echo "installing playwright-core" >&2
	(cd "$BROWSER_DIR" && npm install --no-save --no-audit --no-fund playwright-core >&2) ||
		fail "cannot install playwright-core with npm"
fi
