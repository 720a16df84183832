#!/bin/bash
# deep-stack.sh - fold2svg on absurdly deep stacks: frames deeper than
# 1,000,000 are not drawn (and not held), the samples stay in the frames
# above, stderr says so, and memory follows what is drawn, not the depth of
# the input: a 4M-frame stack, or a line of 20M ';', costs about what a
# 1.2M-frame stack costs.  (Before: 3 GB for 10M frames, and an abort in
# GLib, or 20 GB, for a 260 MB line of ';'.)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
GEN=$ROOT/test/golden/bad-input/gen
export LC_ALL=C
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "deep-stack.sh: FAIL: $*" >&2; fail=1; }

[ -x "$BIN/fold2svg" ] || { echo "no $BIN/fold2svg: run make" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "skipped: no /usr/bin/time (Debian package time)"; exit 77; }

# run NAME FILE: fold2svg FILE > NAME.svg; sets st and rss (KB)
run() {
	/usr/bin/time -f %M -o "$T/$1.rss" "$BIN/fold2svg" "$2" >"$T/$1.svg" 2>"$T/$1.err"
	st=$?
	rss=$(tail -1 "$T/$1.rss")
}

{ "$GEN" folded-deep 1200000; echo "prog;main 5"; } >"$T/deep.folded"
run deep "$T/deep.folded"; rss1=$rss
[ $st = 0 ] || bad "1.2M frames: status $st: $(head -2 "$T/deep.err")"
grep -qx 'fold2svg: 1 stack deeper than 1000000 frames: drawn to that depth' "$T/deep.err" ||
	bad "1.2M frames: no note on stderr: $(head -2 "$T/deep.err")"
grep -q '<title>all (6 samples, 100%)' "$T/deep.svg" || bad "1.2M frames: the total is not 6 samples"
# depth 1,000,000 is f999999 (prog is depth 1)
grep -q '<title>f999999 (1 samples' "$T/deep.svg" || bad "1.2M frames: f999999 not drawn"
grep -q '<title>f1000000 ' "$T/deep.svg" && bad "1.2M frames: f1000000 drawn"

"$GEN" folded-deep 4000000 >"$T/deeper.folded"
run deeper "$T/deeper.folded"
[ $st = 0 ] || bad "4M frames: status $st: $(head -2 "$T/deeper.err")"
[ "$rss" -le $((rss1 * 13 / 10)) ] || bad "4M frames took $rss KB, 1.2M frames $rss1 KB"

{ head -c 20000000 /dev/zero | tr '\0' ';'; echo " 1"; } >"$T/semi.folded"
run semi "$T/semi.folded"
[ $st = 0 ] || bad "20M ';': status $st: $(head -2 "$T/semi.err")"
[ "$rss" -le $((rss1 * 13 / 10)) ] || bad "a line of 20M ';' took $rss KB, 1.2M frames $rss1 KB"

[ $fail = 0 ] && echo "deep-stack.sh: peak RSS $rss1 KB for 1.2M frames, at most 1.3 times that for 4M frames and 20M ';'"
exit $fail
