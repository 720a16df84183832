#!/bin/bash
# Re-records the bpftrace inputs of these golden cases on this machine (needs
# root and bpftrace).  The committed inputs are what one run of this script
# produced; re-recording changes them, so review the new expected files
# (test/run-tests writes them when missing) by hand.
#
#   test/golden/bpftrace-collapse/real/record.sh [CASE...]
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
cc -O2 -g -fno-omit-frame-pointer -pthread "$ROOT/demo/workload.c" -o "$TMP/workload"
CASES="$*"

# case seconds program: runs the bundled workload (threads "my worker N")
# and a kernel-heavy dd while bpftrace runs program for a few seconds
rec() {
	local name=$1 secs=$2 prog=$3
	case " ${CASES:-$name} " in *" $name "*) ;; *) return 0;; esac
	mkdir -p "$HERE/$name"
	"$TMP/workload" $((secs + 2)) 3 & local w=$!
	dd if=/dev/zero of=/dev/null bs=512 count=4000000 2>/dev/null & local d=$!
	sleep 0.3
	bpftrace -e "$prog interval:s:$secs { exit(); }" > "$HERE/$name/in.bt" 2>/dev/null
	kill $d 2>/dev/null || true; wait $w $d 2>/dev/null || true
	echo "$name: $(grep -c '^@' "$HERE/$name/in.bt") records"
}
OURS='/comm == "dd" || comm == "my worker 0" || comm == "my worker 1" || comm == "my worker 2"/'

# the one-liner of the issue and the seeds, as users run it: system-wide
rec one-liner 3 'profile:hz:99 { @[kstack, ustack, comm] = count(); }'
# the layout stackcollapse-bpftrace.pl reads: one kernel stack per key
rec kstack 2 "profile:hz:99 $OURS { @[kstack] = count(); }"
# perf's frame layout: "ADDR SYM+OFF (DSO)"
rec perf-mode 2 "profile:hz:99 $OURS { @[kstack(perf), ustack(perf), comm] = count(); }"
# a named stack map beside a map without stacks
rec two-maps 2 "profile:hz:99 $OURS { @cpu[cpu] = count(); @stacks[kstack, ustack, pid, comm] = count(); }"
