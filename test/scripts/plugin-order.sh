#!/bin/bash
# plugin-order.sh - a record perf script hands over late: perf sorts
# records by time only as far as each FINISHED_ROUND lets it, so a COMM
# written after a later time was handed over reaches perf after samples of
# later times (perf: "1 out of order events"), and perf names those
# samples after the thread's old name.  The plugin must name them as perf
# does, not after the COMM's time: it asks perf at every sample for such a
# process, and says so once.  The recording: a program that execs another
# (test/workloads/exechop.c), its exec COMM moved past half of the rounds
# after it (test/workloads/perfdata-late.c), as perf record now and then
# writes one on a busy machine.
set -u
. "$(dirname "$0")/plugin-lib.sh"

build_exechop
cc -O1 -o "$T/late" "$ROOT/test/workloads/perfdata-late.c" || fail "perfdata-late does not build"

# small buffers (-m 4): perf record drains them often, a round each time
for calls in 300000 1000000; do
	perf record -q -m 4 -g -e cpu-clock -c 20000 -o "$T/in.data" -- \
		"$T/exechop-a" $calls 1 "$T/exechop-a" "$T/exechop-b" >/dev/null 2>"$T/rec.err" ||
		unavailable "perf record -g failed: $(head -3 "$T/rec.err")"
	cp "$T/in.data" "$T/late.data"
	"$T/late" "$T/late.data" exechop-b >"$T/late.out" 2>"$T/late.err" && break
	[ $? = 1 ] || fail "perfdata-late: $(cat "$T/late.err")"
done
[ -s "$T/late.out" ] || unavailable "too few rounds in the recording: $(cat "$T/late.err")"

# in order: no warning
plugin "$T/in.data" >/dev/null 2>"$T/err" || fail "plugin failed: $(head -3 "$T/err")"
! grep -q 'out of order' "$T/err" || fail "warns about late records on a recording in order"

# perf itself sees the moved COMM late, and names some of the new
# program's samples after the old one, and later ones after the new one:
# the test can tell a plugin that keeps the name it got first
perf script -i "$T/late.data" 2>&1 >/dev/null | grep -q '1 out of order events' ||
	fail "perf does not see the moved COMM out of order: $(cat "$T/late.out")"
perf script -i "$T/late.data" 2>/dev/null | "$BIN/fp-collapse" >"$T/want"
grep -q '^exechop-a;.*sys_b' "$T/want" && grep -q '^exechop-b;.*sys_b' "$T/want" ||
	fail "no samples of sys_b under both names: the test cannot tell ($(cat "$T/late.out"))"
same_as_pipeline "late COMM" "$T/late.data" "" "" ""
plugin "$T/late.data" >/dev/null 2>"$T/err"
grep -q '^foldkit: 1 process record may reach perf after later samples (out of order): 1 process resolved through perf at every sample, without caching$' "$T/err" ||
	fail "no warning about the late record: $(head -3 "$T/err")"

exit $FAILED
