#!/bin/bash
# Re-records the perf script inputs of these golden cases on this machine
# (needs root or perf_event_paranoid <= 1).  The committed inputs are what
# one run of this script produced; re-recording changes them, so review the
# new expected files (test/run-tests writes them when missing) by hand.
#
#   test/golden/fp-collapse/real/record.sh [CASE...]
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
cc -O2 -g -fno-omit-frame-pointer -pthread "$ROOT/demo/workload.c" -o "$TMP/workload"
# no inlining, so that std::function, lambdas and operator() keep frames
c++ -O1 -fno-inline -g -fno-omit-frame-pointer "$ROOT/demo/cxxload.cpp" -o "$TMP/cxxload"
W="$TMP/workload 0.3 3"

rec() { # case perf-record-args... -- command
	local name=$1; shift
	case " ${CASES:-$name} " in *" $name "*) ;; *) return 0;; esac
	mkdir -p "$HERE/$name"
	perf record -q -o "$TMP/$name.data" "$@" >/dev/null 2>&1
}
script() { # case [perf-script-args...]
	local name=$1; shift
	case " ${CASES:-$name} " in *" $name "*) ;; *) return 0;; esac
	mkdir -p "$HERE/$name"
	perf script -i "$TMP/${DATA:-$name}.data" "$@" 2>/dev/null > "$HERE/$name/in.txt"
	echo "$name: $(grep -c '^$' "$HERE/$name/in.txt") samples"
}
CASES="$*"

rec mutex-oncpu -g -F 499 -- $W;                 script mutex-oncpu
rec mutex-offcpu -g -e context-switches -- $W;   script mutex-offcpu
rec cxx -g -F 499 -- "$TMP/cxxload" 0.3;         script cxx
rec kernel-dd -g -F 999 -- dd if=/dev/zero of=/dev/null bs=512 count=300000
script kernel-dd
rec two-events -g -e cpu-clock -e context-switches -- $W; script two-events
rec sched-switch -g -e sched:sched_switch -- $W; script sched-switch
# the same recording in other layouts perf script prints
rec layouts -g -F 499 --sample-cpu -- $W
DATA=layouts script layout-default
DATA=layouts script layout-header --header
DATA=layouts script layout-cpu-period -F comm,pid,tid,cpu,time,period,event,ip,sym,dso
DATA=layouts script layout-tid-only -F comm,tid,time,event,ip,sym,dso
DATA=layouts script layout-no-comm -F pid,tid,time,event,ip,sym,dso
DATA=layouts script layout-no-time -F comm,pid,tid,event,ip,sym,dso
DATA=layouts script layout-no-callchain -F comm,tid,time,event,ip,sym,dso -G
