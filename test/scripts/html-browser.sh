#!/bin/bash
# html-browser.sh — fold2html's page in a real browser: headless Chromium
# driven by playwright-core (test/browser/check-html.js) opens pages made
# from a small profile, a server-shaped one (test/workloads/server-profile.c),
# a differential one and one in nanoseconds, and checks what the canvas
# draws against a model of the folded input computed in the test (frames,
# places, widths, colours against fold2svg's, titles against fold2svg's),
# zoom by click and keyboard, the search's shares, the URL parameters
# (fold2svg's ?x=&y= included), the icicle toggle, the sandwich view's
# callers and callees, the units, and the dark scheme.  No timing limits
# (make bench times the page).
# Installs what it needs (Debian chromium, npm playwright-core into
# test/browser/node_modules).  If Chromium cannot start, the test FAILS.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${BIN:-$ROOT/build/bin}
DIR=$ROOT/test/browser
fail() { echo "html browser test FAILED: $*" >&2; exit 1; }

. "$DIR/setup.sh"
[ -x "$BIN/fold2html" ] || fail "no $BIN/fold2html; run make"

T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cc -O2 -o "$T/server-profile" "$ROOT/test/workloads/server-profile.c" ||
	fail "cannot build test/workloads/server-profile.c"
"$T/server-profile" 1500 7 > "$T/server.folded" 2>/dev/null || fail "server-profile failed"
cp "$DIR/sample.folded" "$T/sample.folded"
# differential: two counts, some stacks only before or only after, and a
# "--" frame, which fold2svg greys whatever its change
{
	printf 'main;alpha;work 30 10\nmain;alpha;idle 10 10\nmain;beta;work 5 25\n'
	printf 'main;beta;--;wake 0 7\nmain;gamma 12 0\nother;Worker 8 9\n'
} > "$T/diff.folded"
# nanoseconds: times shown in ms and s beside the exact count
printf 'srv;accept 1234567\nsrv;work;crunch 2500000000\nsrv;work;io 987654321\nsrv;idle 42\n' > "$T/ns.folded"

mk() { # NAME INPUT OPTIONS...: the page, and fold2svg's SVGs of the same
	local name=$1 in=$2; shift 2
	"$BIN/fold2html" "$@" "$in" > "$T/$name.html" || fail "fold2html $* $in failed"
	"$BIN/fold2svg" --minwidth=0 "$@" "$in" > "$T/$name.all.svg" || fail "fold2svg failed"
	"$BIN/fold2svg" "$@" "$in" > "$T/$name.svg" || fail "fold2svg failed"
}
mk sample "$T/sample.folded"
mk server "$T/server.folded"
mk diff "$T/diff.folded"
cp "$T/diff.folded" "$T/difftotal.folded"
cp "$T/diff.folded" "$T/diffnorm.folded"
mk difftotal "$T/difftotal.folded" --diff=total --mark-new
mk diffnorm "$T/diffnorm.folded" --diff=total --mark-new --normalize --negate
mk ns "$T/ns.folded" --countname=ns
mk java "$T/sample.folded" --colors=java --hash --inverted --title='Java view'
# a search regex that takes minutes on one name is stopped, not run to the end
printf 'main;%s 5\nmain;b 5\n' "$(printf 'a%.0s' $(seq 40))" > "$T/slow.folded"
mk slow "$T/slow.folded"

cd "$DIR" && timeout "$BROWSER_HANG" node check-html.js "$T"
st=$?
[ $st = 3 ] && fail "Chromium (/usr/bin/chromium) could not start"
[ $st = 0 ] || fail "check-html.js exit $st"
