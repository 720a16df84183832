#!/bin/bash
# hostile-profiles.sh - small files that declare huge output, as a review
# found them (issue 29, items 2 and 3): each must be refused with the
# exact error and exit 1, or read, within the memory the collapsers'
# documented limits allow (bounds.h, pprof-collapse(1), gperf-collapse(1)),
# never taking gigabytes or aborting in GLib.  The files are made here:
#
#   pprof-collapse
#     a 155-byte gzip file declaring one 1 GiB stack (32 KiB name x 32,768)
#     a 1,111-byte gzip file declaring a 256 GiB stack (512 KiB x 524,288)
#     93 KB of gzip holding 48 million empty strings (96 MB): a valid
#       profile, read within 4 bytes a string beside the profile
#     20 stacks of 100 KB with --max-output=1M: refused past the limit
#   gperf-collapse
#     a 1.1 MB profile declaring one 8 GiB stack (8,192 frames in a library
#       whose file name has 1 MiB)
#     300 stacks with --addrs and --max-output=4K: refused past the limit
#
# Peak RSS comes from /usr/bin/time (Debian package `time`, in tools/deps).
# A sanitizer build (BIN under build/san) takes up to four times the
# memory for its shadow and redzones: its limits are four times as large.
# Exit 0 pass, 1 fail, 77 skip.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "${BIN:-$ROOT/build/bin}" && pwd) || exit 1
PB=$ROOT/test/golden/bad-input/pb
export LC_ALL=C
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0
[ -x /usr/bin/time ] || { echo "no /usr/bin/time (apt-get install time): cannot measure peak memory" >&2; exit 77; }
scale=1
case $BIN in */san/*) scale=4 ;; esac

# run NAME LIMIT_MB STATUS EXPECTED_STDERR TOOL ARGS...: runs in $T, checks
# the status, standard error (exactly) and peak RSS
run() {
	local name=$1 limit=$(($2 * 1024 * scale)) want_st=$3 want_err=$4 st rss
	shift 4
	(cd "$T" && /usr/bin/time -f %M -o rss "$@" > out 2> err); st=$?
	rss=$(tail -1 "$T/rss")
	printf '%-34s status %d, peak RSS %7d KB (limit %d KB)\n' "$name" "$st" "$rss" "$limit"
	if [ "$st" != "$want_st" ]; then
		echo "FAIL $name: exit status $st, expected $want_st"; fail=1
	fi
	if [ "$(cat "$T/err")" != "$want_err" ]; then
		echo "FAIL $name: stderr:"; head -c 600 "$T/err" | sed 's/^/    /'
		echo "  expected: $want_err"; fail=1
	fi
	if [ "$rss" -ge "$limit" ]; then
		echo "FAIL $name: peak RSS $rss KB, limit $limit KB"; fail=1
	fi
}

# --- pprof-collapse
"$PB" bomb 32768 32768 | gzip -9 > "$T/1gib.pb.gz"
"$PB" bomb 524288 524288 | gzip -9 > "$T/256gib.pb.gz"
"$PB" empty-strings 48000000 | gzip -9 > "$T/empty.pb.gz"
"$PB" many 20 100 > "$T/many.pb"
echo "files: $(wc -c < "$T/1gib.pb.gz"), $(wc -c < "$T/256gib.pb.gz"), $(wc -c < "$T/empty.pb.gz") and $(wc -c < "$T/many.pb") bytes"
long="a stack longer than 256 MiB, the longest line foldkit's readers take"
run "pprof: 1 GiB stack" 32 1 "pprof-collapse: 1gib.pb.gz: sample 1: $long" \
	"$BIN/pprof-collapse" 1gib.pb.gz
run "pprof: 256 GiB stack" 32 1 "pprof-collapse: 256gib.pb.gz: sample 1: $long" \
	"$BIN/pprof-collapse" 256gib.pb.gz
# 96 MB of profile and 4 bytes for each of 48 million strings: 288 MB
run "pprof: 48M empty strings" 400 0 "" "$BIN/pprof-collapse" empty.pb.gz
[ "$(cat "$T/out")" = "main 5" ] || { echo "FAIL empty strings: output $(head -c 200 "$T/out")"; fail=1; }
run "pprof: --max-output=1M" 32 1 \
	"pprof-collapse: many.pb: its folded stacks pass 1 MiB, the output limit (--max-output)" \
	"$BIN/pprof-collapse" --max-output=1M many.pb
[ -s "$T/out" ] && { echo "FAIL --max-output=1M: printed stacks"; fail=1; }

# --- gperf-collapse
GEN=$ROOT/test/golden/bad-input/gen
"$GEN" gperf-bomb 8192 > "$T/bomb.prof"
"$GEN" gperf-many 300 > "$T/many.prof"
echo "files: $(wc -c < "$T/bomb.prof") and $(wc -c < "$T/many.prof") bytes"
run "gperf: 8 GiB stack" 32 1 \
	"gperf-collapse: bomb.prof: a stack of 8192 frames longer than 256 MiB, the longest line foldkit's readers take" \
	"$BIN/gperf-collapse" /nonexistent/app bomb.prof
run "gperf: --max-output=4K" 32 1 \
	"gperf-collapse: many.prof: its folded stacks pass 4 KiB, the output limit (--max-output)" \
	"$BIN/gperf-collapse" --addrs --max-output=4K /nonexistent/app many.prof
[ -s "$T/out" ] && { echo "FAIL gperf --max-output=4K: printed stacks"; fail=1; }

exit $fail
