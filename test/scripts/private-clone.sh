#!/bin/bash
# private-clone.sh - the tests that run tools as another user pass where
# that user cannot enter the build (issue 29, item 13): a clone in root's
# home or in any mode-700 directory.  A copy of the build in such a
# directory runs the cases that start a tool as nobody (setpriv): the
# unreadable-permission ones (which setpriv starts there anyway), and
# fp-record finding its perf plugin (fp-record.sh's unprivileged cases
# need the same; it found none); test/run-tests must say that it runs a
# copy anyone may read, and every case must pass.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
BIN=${BIN:-$BUILD/bin}
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "skipped: not root, or no setpriv: the tests run no tool as another user"
	exit 77
fi
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
chmod 700 "$D"
mkdir -p "$D/build/perf-plugin" && cp -pR "$BIN" "$D/build/bin" &&
	cp -p "$BUILD/perf-plugin/foldkit.so" "$D/build/perf-plugin/" ||
	{ echo "FAIL: cannot copy the build" >&2; exit 1; }
setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$D/build/bin/fp-collapse" &&
	{ echo "FAIL: nobody can reach $D: not a private directory" >&2; exit 1; }

want=$(( $(find "$ROOT/test/golden" -path '*unreadable-permission*' -name cmd | wc -l) + 1 ))
BIN=$D/build/bin BUILD=$D/build "$ROOT/test/run-tests" unreadable-permission \
	fp-record/unprivileged-plugin >"$D/out" 2>&1
rc=$?
last=$(tail -1 "$D/out")
if [ $rc -eq 0 ] && [ "$last" = "$want passed, 0 failed, 0 skipped" ] &&
   grep -q "^run-tests: other users cannot reach $D/build/bin: the tests run a copy in " "$D/out"; then
	echo "ok from a mode-700 directory: $last"
	exit 0
fi
echo "FAIL: from a mode-700 directory (exit $rc, want $want passed):" >&2
tail -30 "$D/out" >&2
exit 1
