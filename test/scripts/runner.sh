#!/bin/bash
# runner.sh - test/run-tests itself: it shows progress as it goes (a line
# per group, a dot per test, F for a failure with its details after the
# group's line) and still ends with "N passed, N failed, N skipped"; and
# tools/deps knows what the tests need beyond the build.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
FAILED=0
fail() { echo "FAIL: $*" >&2; FAILED=1; }

# two groups, both passing
"$ROOT/test/run-tests" kfold/stdin kfold/two-files unit/lib_core >"$T/out" 2>&1 ||
	fail "run-tests failed: $(tail -3 "$T/out")"
grep -qx 'golden/kfold  *\.\. 2' "$T/out" || fail "no progress line for golden/kfold: $(head -3 "$T/out")"
grep -qx 'unit  *\. 1' "$T/out" || fail "no progress line for unit"
[ "$(tail -1 "$T/out")" = "3 passed, 0 failed, 0 skipped" ] || fail "last line: $(tail -1 "$T/out")"

# a failing case: F on its group's line, its details after it, its name
# again before the last line
mkdir -p "$T/bin" && cp "$ROOT/build/bin/"* "$T/bin/" && printf '#!/bin/sh\necho bogus\n' >"$T/bin/kfold"
chmod +x "$T/bin/kfold"
BIN=$T/bin "$ROOT/test/run-tests" kfold/stdin kfold/two-files >"$T/out" 2>&1 &&
	fail "run-tests passed with a broken kfold"
grep -qx 'golden/kfold  *FF 2' "$T/out" || fail "no F on the progress line: $(head -2 "$T/out")"
sed -n 2p "$T/out" | grep -q '^FAIL kfold/stdin: standard output differs' || fail "details not after the line: $(sed -n 2p "$T/out")"
grep -qx 'failed: kfold/stdin kfold/two-files' "$T/out" || fail "the failed tests are not named at the end"
[ "$(tail -1 "$T/out")" = "0 passed, 2 failed, 0 skipped" ] || fail "last line: $(tail -1 "$T/out")"

# tools/deps: the tests' own group, with the browser tests' needs
list=$("$ROOT/tools/deps" list test)
for p in chromium nodejs npm procps; do
	case " $list " in *" $p "*) ;; *) fail "tools/deps list test lacks $p: $list" ;; esac
done
"$ROOT/tools/deps" list build | grep -q chromium && fail "chromium is a build dependency"
"$ROOT/tools/deps" check test || fail "tools/deps check test: something the tests need is missing"
[ $FAILED = 0 ] && echo "ok run-tests shows progress; tools/deps lists the tests' needs"
exit $FAILED
