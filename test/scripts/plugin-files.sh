#!/bin/bash
# plugin-files.sh - processes that run one program share the frames of its
# files (frames.h: frame_cache_set_files()), each address resolved by perf
# once per file and offset, not once per process: 40 runs of the workload,
# each with the program and its libraries mapped at its own addresses
# (ASLR), fold as `perf script | fp-collapse` folds them, with and without
# pids.
set -u
. "$(dirname "$0")/plugin-lib.sh"

perf record -q -g -F 2999 -o "$T/runs.data" -- sh -c \
	'i=0; while [ $i -lt 40 ]; do "$1" 30 1; i=$((i + 1)); done' sh "$W" \
	>/dev/null 2>"$T/rec.err" ||
	unavailable "perf record -g failed: $(head -3 "$T/rec.err")"
# (with fewer than 40 processes the test proves less than it says)
n=$(perf script -i "$T/runs.data" -F pid 2>/dev/null | sort -u | wc -l)
[ "$n" -ge 40 ] || fail "runs.data holds samples of $n processes, not 40 or more"
same_as_pipeline "runs.data default" "$T/runs.data" "" "" ""
same_as_pipeline "runs.data pid" "$T/runs.data" "-F +pid" "--pid" "pid"
same_as_pipeline "runs.data kernel" "$T/runs.data" "" "--kernel --user-maps" "kernel"

exit $FAILED
