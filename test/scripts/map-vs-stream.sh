#!/bin/bash
# map-vs-stream.sh - fp-collapse reads a regular file mapped into memory
# and anything else (a pipe, standard input) as a stream: two code paths
# that must give the same bytes.  Runs every perf script text in the golden
# tests, the malformed-input catalogue and FlameGraph's test profiles both
# ways, with and without --tid --all, and fails on any difference in the
# output, the exit status or standard error (the file's name read as
# "<stdin>").  The golden cases name files, so they test the mapped path;
# this is what keeps the stream path tested too.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
export LC_ALL=C
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0 n=0

[ -x "$BIN/fp-collapse" ] || { echo "no $BIN/fp-collapse: run make first" >&2; exit 1; }

while IFS= read -r f; do
	for opts in "" "--tid --all"; do
		# shellcheck disable=SC2086
		"$BIN/fp-collapse" $opts "$f" >"$T/map.out" 2>"$T/map.err"
		ms=$?
		# shellcheck disable=SC2086
		cat "$f" | "$BIN/fp-collapse" $opts >"$T/stream.out" 2>"$T/stream.err"
		ss=$?
		sed "s|$f|<stdin>|g" "$T/map.err" >"$T/map.err2"
		n=$((n + 1))
		if [ $ms != $ss ] || ! cmp -s "$T/map.out" "$T/stream.out" ||
		   ! cmp -s "$T/map.err2" "$T/stream.err"; then
			echo "map-vs-stream.sh: FAIL: fp-collapse $opts $f: mapped (status $ms) and streamed (status $ss) differ:" >&2
			diff "$T/map.out" "$T/stream.out" | head -5 >&2
			diff "$T/map.err2" "$T/stream.err" | head -5 >&2
			fail=1
		fi
	done
done < <(find "$ROOT/test/golden/fp-collapse" "$ROOT/test/golden/bad-input/fp-collapse" \
	      "$ROOT/test/golden/data/flamegraph/perf-script" -type f -name '*.txt' | sort)

[ $n -gt 50 ] || { echo "map-vs-stream.sh: FAIL: only $n runs: inputs missing?" >&2; exit 1; }
[ $fail = 0 ] && echo "map-vs-stream.sh: $n runs, mapped and streamed alike"
exit $fail
