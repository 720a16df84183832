#!/bin/bash
# fp-record-died.sh - a perf record that dies in the window (issue 29,
# item 5): SIGKILL to the off-CPU perf record, then to the on-CPU one, of a
# busy process that also sleeps and waits on locks (fkwork).  Each time:
#  - fp-record exits 1, saying which recording failed and how perf died;
#  - that side's totals are "-" (unknown) in index.tsv and report.md, never
#    0, and the other side's are numbers, with their profiles written;
#  - no process is blamed for what the dead recording missed ("it was idle",
#    "their threads only ran or were preempted").
set -u
. "$(dirname "$0")/plugin-lib.sh"

PIDS_TO_KILL=()
cleanup() {
	local p
	for p in "${PIDS_TO_KILL[@]}"; do pkill -TERM -P "$p" 2>/dev/null; done
	for p in "${PIDS_TO_KILL[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS_TO_KILL[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

FPR=$BIN/fp-record
[ -x "$FPR" ] || { echo "no $FPR: run make" >&2; exit 1; }
fp_record_perf
chmod 755 "$T"

"$W" 600000 1 >/dev/null 2>&1 &
BUSY=$!
PIDS_TO_KILL+=("$BUSY")

# column FILE NAME: the cells of index.tsv's column NAME, one a line
column() {
	awk -F'\t' -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
		{ print $k }' "$1"
}

# ticks: the CPU time of fkwork's threads, in clock ticks
ticks() { awk '{ print $14 + $15 }' "/proc/$BUSY/stat"; }

# died SIDE PATTERN OTHER: kills the perf record whose arguments match
# PATTERN (SIDE's) once the window is open, and checks what fp-record says
died() {
	local side=$1 pattern=$2 other=$3 dir=$T/$1 fpr perf i rc
	"$FPR" --pid "$BUSY" -d 600 -o "$dir" >"$T/$side.out" 2>"$T/$side.err" &
	fpr=$!
	PIDS_TO_KILL+=("$fpr")
	for i in $(seq 1200); do
		grep -q 'recording for' "$T/$side.err" && break
		kill -0 $fpr 2>/dev/null || break
		sleep 0.1
	done
	perf=$(pgrep -P $fpr -f -- "$pattern")
	if [ -z "$perf" ] || ! grep -q 'recording for' "$T/$side.err"; then
		fail "$side: no window or no perf record ($pattern): $(tail -3 "$T/$side.err")"
		return
	fi
	# once the process has run a while in the window (0.3 s of CPU time),
	# so that the other recording holds something
	local t0
	t0=$(ticks)
	for i in $(seq 1200); do
		[ $(($(ticks) - t0)) -ge 30 ] && break
		sleep 0.1
	done
	kill -KILL $perf
	wait $fpr
	rc=$?
	[ $rc -eq 1 ] || fail "$side: exit $rc, want 1"
	grep -q "perf record ($side) was killed by signal 9" "$T/$side.err" ||
		fail "$side: stderr does not say how perf died"
	grep -q "^fp-record: the $side recording failed (see above): its totals are unknown, '-' in index.tsv and report.md\$" "$T/$side.err" ||
		fail "$side: no closing error naming the $side recording: $(tail -1 "$T/$side.err")"
	local mine theirs
	case $side in
	on-CPU) mine=on_cpu theirs=off_cpu ;;
	off-CPU) mine=off_cpu theirs=on_cpu ;;
	esac
	[ "$(column "$dir/index.tsv" $mine | sort -u)" = "-" ] ||
		fail "$side: index.tsv's $mine is not '-': $(column "$dir/index.tsv" $mine | tr '\n' ' ')"
	column "$dir/index.tsv" $theirs | grep -qvx '[0-9][0-9]*' &&
		fail "$side: index.tsv's $theirs is not a number: $(column "$dir/index.tsv" $theirs | tr '\n' ' ')"
	# fkwork and its child
	column "$dir/index.tsv" pid | grep -qx "$BUSY" || fail "$side: index.tsv's rows: $(cat "$dir/index.tsv")"
	# report.md's row: | fkwork | ROLE | PID | on-CPU | off-CPU | files |
	local row cells
	row=$(grep "^| fkwork | [^|]* | $BUSY |" "$dir/report.md")
	IFS='|' read -r -a cells <<<"$row"
	case $side in
	on-CPU) [ "${cells[4]:-}" = " - " ] && [ "${cells[5]:-}" != " - " ] ;;
	off-CPU) [ "${cells[5]:-}" = " - " ] && [ "${cells[4]:-}" != " - " ] ;;
	esac || fail "$side: report.md's row: $row"
	grep -Eq "it was idle|only ran or were preempted|neither blocked" "$T/$side.err" "$dir/report.md" &&
		fail "$side: a process is judged on the dead recording: $(grep -Eh "idle|preempted|neither" "$T/$side.err" | head -2)"
	[ -s "$dir/$other/index.tsv" ] || fail "$side: the $other profiles were not written"
	[ -e "$dir/${mine%_cpu}" ] && fail "$side: a directory of the failed side was written: $(ls "$dir")"
	# the run-queue and off-wake profiles are folded from the off-CPU
	# recording: none of a failed one
	if [ $side = off-CPU ]; then
		for d in runq wake; do
			[ -e "$dir/$d" ] && fail "$side: $d/ was written from the failed recording"
		done
	fi
	[ -n "$(ls -A "$dir" | grep '^\.fp-record')" ] && fail "$side: the private directory was left"
	pgrep -f -- "$dir" >/dev/null && fail "$side: processes left behind: $(pgrep -af -- "$dir")"
	echo "ok perf record ($side) killed: exit 1, '-' for its totals, $other profiles written$([ $side = off-CPU ] && echo ', no runq/ or wake/')"
}

died off-CPU 'sched:sched_switch' on
died on-CPU 'cpu-clock' off

exit $FAILED
