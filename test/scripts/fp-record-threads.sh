#!/bin/bash
# fp-record-threads.sh - fp-record's thread states (threads.tsv, report.md's
# tables) on a real capture of test/workloads/fkidle.c: two threads asleep
# for as long as it runs (the main thread joining, "piper" reading a pipe
# no one writes to), beside two that switch all the time ("napper",
# "worker"):
#  - threads.tsv lists every thread of the process, and no other;
#  - each row adds up to the window, the off-CPU recording's first event to
#    its last as perf script prints them;
#  - the asleep threads have no event in the recording, yet are there,
#    sleeping for the whole window, with the system call, wchan and (as
#    root) kernel stack /proc gave; the others' rows are the plugin's own
#    states on the same recording;
#  - report.md has the process's table, its unit said, a row a thread.
# Nothing here depends on timing: the asleep threads never wake, and the
# others switch at least once a millisecond however loaded the machine.
set -u
. "$(dirname "$0")/plugin-lib.sh"

WPID=
trap '[ -n "$WPID" ] && kill $WPID 2>/dev/null; rm -rf "$T"' EXIT
FPR=$BIN/fp-record
[ -x "$FPR" ] || { echo "no $FPR: run make" >&2; exit 1; }
fp_record_perf

chmod 755 "$T"
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$T/fkidle" "$ROOT/test/workloads/fkidle.c" ||
	{ echo "cannot build fkidle" >&2; exit 1; }
"$T/fkidle" &
WPID=$!
# its threads named (no fixed sleep: the machine may be loaded)
for _ in $(seq 600); do
	[ "$(cat /proc/$WPID/task/*/comm 2>/dev/null | grep -cxE 'piper|napper|worker')" = 3 ] && break
	sleep 0.05
done
tid_of() { grep -lx "$1" /proc/$WPID/task/*/comm | sed 's|.*/task/\([0-9]*\)/comm|\1|'; }
PIPER=$(tid_of piper)
[ -n "$PIPER" ] || { fail "fkidle did not start its threads"; exit 1; }
# the asleep ones, waiting as the workload says
grep -q '^State:.*S' /proc/$WPID/task/$PIPER/status && grep -q '^State:.*S' /proc/$WPID/status ||
	{ fail "fkidle's piper or main thread is not asleep"; exit 1; }

D=$T/cap
"$FPR" --pid "$WPID" -d 1 -o "$D" --keep-data >"$T/out" 2>"$T/err" ||
	{ fail "fp-record exited $?: $(tail -5 "$T/err")"; exit 1; }
kill -0 $WPID 2>/dev/null || { fail "the workload ended during the capture"; exit 1; }
[ -f "$D/threads.tsv" ] || { fail "no threads.tsv: $(grep -i state "$T/err" | head -3)"; exit 1; }
grep -qx "$D/threads.tsv" "$T/out" && echo "ok threads.tsv is written and listed" ||
	fail "fp-record does not list threads.tsv: $(cat "$T/out")"
[ "$(head -1 "$D/threads.tsv")" = "$(printf 'pid\ttid\tcomm\ton_cpu_us\trunnable_us\tsleeping_us\tblocked_us\twaiting_in')" ] &&
	echo "ok the header: the plugin's states columns, then waiting_in" ||
	fail "threads.tsv's header: $(head -1 "$D/threads.tsv")"

# every thread of the process, and no other
want=$(ls /proc/$WPID/task | sort -n | tr '\n' ' ')
got=$(awk -F'\t' -v p=$WPID 'NR > 1 && $1 == p { print $2 }' "$D/threads.tsv" | sort -n | tr '\n' ' ')
others=$(awk -F'\t' -v p=$WPID 'NR > 1 && $1 != p' "$D/threads.tsv" | wc -l)
[ "$want" = "$got" ] && [ "$others" = 0 ] && echo "ok a row for each of the process's 4 threads" ||
	fail "threads.tsv: threads $got, /proc $want, $others rows of other processes"

# the window from perf's text of the same recording (us; perf prints them
# truncated to the microsecond, so 2 us either way)
perf script -i "$D/off.data" -F time,event,trace 2>/dev/null >"$T/text"
span=$(awk '{ t = $1; sub(/:$/, "", t); if (t !~ /^[0-9]+\.[0-9]+$/) next; t += 0
	if (!n++ || t < a) a = t; if (t > b) b = t } END { printf "%.0f\n", (b - a) * 1e6 }' "$T/text")
[ "${span:-0}" -gt 0 ] || { fail "no events in the off-CPU recording"; exit 1; }
if awk -F'\t' -v span="$span" 'NR > 1 { s = $4 + $5 + $6 + $7; d = s - span; if (d < 0) d = -d
	if (d > 2) { bad++; print "  thread " $2 " (" $3 "): " s " us" } }
	END { exit bad > 0 }' "$D/threads.tsv" >"$T/sums"; then
	echo "ok each thread's four states add up to the window ($span us)"
else fail "states do not add up to the window of $span us: $(head -4 "$T/sums")"; fi

# the asleep threads: no event names them, yet their rows are the whole
# window asleep, with what /proc said they wait in
for tid in $WPID $PIPER; do
	n=$(grep -cE "(prev_pid|next_pid| pid)=$tid( |$)" "$T/text")
	[ "$n" = 0 ] || fail "thread $tid was to sleep all along, but $n events name it"
done
awk -F'\t' -v span="$span" -v a=$WPID -v b=$PIPER 'NR > 1 && ($2 == a || $2 == b) {
	n++; d = $6 - span; if (d < 0) d = -d
	if ($4 != 0 || $5 != 0 || $7 != 0 || d > 2 || $8 !~ /^S /) bad++ }
	END { exit bad > 0 || n != 2 }' "$D/threads.tsv" &&
	echo "ok the threads without an event sleep for the whole window, not 0" ||
	fail "the asleep threads' rows: $(grep -P "^$WPID\t($WPID|$PIPER)\t" "$D/threads.tsv")"
wait_of() { awk -F'\t' -v t="$1" 'NR > 1 && $2 == t { print $8 }' "$D/threads.tsv"; }
if [ "$(uname -m)" = x86_64 ]; then
	case $(wait_of $PIPER) in *syscall=read*) echo "ok piper waits in read()" ;;
	*) fail "piper's wait: $(wait_of $PIPER)" ;; esac
	case $(wait_of $WPID) in *syscall=futex*) echo "ok the main thread waits in futex()" ;;
	*) fail "the main thread's wait: $(wait_of $WPID)" ;; esac
fi
wchan=$(cat /proc/$WPID/task/$PIPER/wchan 2>/dev/null)
if [ -n "$wchan" ] && [ "$wchan" != 0 ]; then
	case $(wait_of $PIPER) in *"wchan=$wchan"*) echo "ok piper's wchan is /proc's ($wchan)" ;;
	*) fail "piper's wchan: $(wait_of $PIPER), /proc says $wchan" ;; esac
fi
if top=$(head -1 /proc/$WPID/task/$PIPER/stack 2>/dev/null | sed 's/^\[<[^>]*>\] //; s/+.*//') && [ -n "$top" ]; then
	case $(wait_of $PIPER) in *"stack=$top<-"*) echo "ok piper's kernel stack starts at /proc's ($top)" ;;
	*) fail "piper's kernel stack: $(wait_of $PIPER), /proc's starts at $top" ;; esac
fi

# the threads that switched: the plugin's rows on the same recording
plugin "$D/off.data" states >"$T/plugin.tsv" 2>"$T/plugin.err" ||
	fail "the plugin's states: $(head -3 "$T/plugin.err")"
n=0
for name in napper worker; do
	tid=$(tid_of $name)
	theirs=$(awk -F'\t' -v t="$tid" '$2 == t { print $4, $5, $6, $7 }' "$T/plugin.tsv")
	ours=$(awk -F'\t' -v t="$tid" 'NR > 1 && $2 == t && $8 == "-" { print $4, $5, $6, $7 }' "$D/threads.tsv")
	[ -n "$ours" ] && [ "$ours" = "$theirs" ] && n=$((n + 1)) ||
		fail "$name ($tid): threads.tsv '$ours', the plugin '$theirs'"
done
[ $n = 2 ] && echo "ok the threads that switched are the plugin's states"

# report.md: the process's table, its unit, a row a thread
R=$D/report.md
grep -q '^## Thread states' "$R" && grep -q "^### fkidle (pid $WPID)" "$R" &&
	grep -q '^| thread | tid | on-CPU µs | runnable µs | sleeping µs | blocked µs |' "$R" &&
	echo "ok report.md has the process's states table in µs" ||
	fail "report.md lacks the states table: $(grep -n -i 'state' "$R" | head -5)"
rows=$(awk -v p="### fkidle (pid $WPID)" '$0 == p { on = 1; next } on && /^#/ { on = 0 }
	on && /^\| [^-|]/ && !/^\| thread/' "$R")
for tid in $(ls /proc/$WPID/task); do
	row=$(echo "$rows" | awk -F' [|] ' -v t="$tid" '$2 == t')
	line=$(awk -F'\t' -v t="$tid" 'NR > 1 && $2 == t { print $4 " | " $5 " | " $6 " | " $7 }' "$D/threads.tsv")
	case $row in *" | $tid | $line |"*) ;; *) fail "report.md's row of $tid: '$row', threads.tsv: $line" ;; esac
done
[ "$(echo "$rows" | wc -l)" = 4 ] && echo "ok report.md's rows are threads.tsv's" ||
	fail "report.md's table has $(echo "$rows" | wc -l) rows: $rows"
exit $FAILED
