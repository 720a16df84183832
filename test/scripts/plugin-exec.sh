#!/bin/bash
# plugin-exec.sh - a process that execs another program: the plugin names
# its user addresses as perf script does, in the program perf maps there
# at each sample.  perf changes a process's maps at its MMAP records, not
# at its exec's COMM record, so an address sampled between the two names
# the old program and the same address after the MMAPs the new one; a
# frame resolved before a change must not be reused after it.  The
# workload (test/workloads/exechop.c) execs back and forth between two
# programs with the same code at the same addresses under different names,
# 500 times, sampled every 20 us.
set -u
. "$(dirname "$0")/plugin-lib.sh"

build_exechop
"$T/exechop-a" 0 2 "$T/exechop-a" "$T/exechop-b" || fail "exechop does not run"

perf record -q -g -e cpu-clock -c 20000 -o "$T/exec.data" -- \
	"$T/exechop-a" 200 500 "$T/exechop-a" "$T/exechop-b" >/dev/null 2>"$T/rec.err" ||
	unavailable "perf record -g failed: $(head -3 "$T/rec.err")"
same_as_pipeline "exec.data default" "$T/exec.data" "" "" ""
same_as_pipeline "exec.data pid" "$T/exec.data" "-F +pid" "--pid" "pid"
# both programs' own code is there, under each one's name
plugin "$T/exec.data" >"$T/got"
grep -q 'sys_a' "$T/got" && grep -q 'sys_b' "$T/got" ||
	fail "no stacks of sys_a and of sys_b: $(head -3 "$T/got")"

# without the records' times (perf record -z) the plugin cannot follow the
# maps' changes: it says so and still makes the profile
if perf record -q -z -g -e cpu-clock -c 20000 -o "$T/z.data" -- \
	"$T/exechop-a" 20 50 "$T/exechop-a" "$T/exechop-b" >/dev/null 2>"$T/rec.err"; then
	plugin "$T/z.data" >"$T/got" 2>"$T/err" || fail "-z recording: plugin failed: $(head -3 "$T/err")"
	grep -q 'no times of its map changes' "$T/err" ||
		fail "-z recording: no warning about the missing map times: $(head -3 "$T/err")"
	[ -s "$T/got" ] || fail "-z recording: no profile"
	plugin "$T/exec.data" >/dev/null 2>"$T/err"
	! grep -q 'no times of its map changes' "$T/err" ||
		fail "warns about map times on a recording that has them"
else
	fail "perf record -z failed, the warning is not tested: $(head -3 "$T/rec.err")"
fi

exit $FAILED
