# setup.sh — sourced by the browser test scripts (test/scripts/browser.sh,
# svg-safety.sh, speedscope.sh): makes sure /usr/bin/chromium, and
# playwright-core and speedscope (npm, into test/browser/node_modules) are
# there, installing them if not.
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
# speedscope (its own importer, for the exporters' tests) at a known
# release: test/browser/speedscope-dump.js hooks into its bundle.  npm
# prunes what a --no-save install does not name, so both go together.
if [ ! -d "$BROWSER_DIR/node_modules/playwright-core" ] ||
   [ ! -f "$BROWSER_DIR/node_modules/speedscope/package.json" ] ||
   ! grep -q '"version": "1.25.0"' "$BROWSER_DIR/node_modules/speedscope/package.json"; then
	echo "installing playwright-core and speedscope" >&2
	(cd "$BROWSER_DIR" && npm install --no-save --no-audit --no-fund playwright-core speedscope@1.25.0 >&2) ||
		fail "cannot install playwright-core and speedscope with npm"
fi
