#!/bin/bash
# plugin-offcpu.sh - the perf dlfilter's off-CPU mode on a sched_switch
# recording made here and now of the bundled workload: per-thread off-CPU
# totals agree with `perf sched timehist` on the same recording within 1%;
# each 10 ms sleep weighs at least 10 ms, each 1 ms one at least 1 ms;
# state= and min= filter; perf script --pid narrows the stacks, not the
# time; a sampled recording, or one that is not system-wide, is called
# what it is.  Also the plain mode on tracepoint data equals
# `perf script | fp-collapse`.  With perf record --switch-events (perf's
# own records of every switch, which end the waits whose switch-in the
# tracepoint lacks), system-wide and of the workload alone, the per-thread
# totals are those computed from perf's text, and the 1 ms sleeps weigh
# 1 ms each.  test/scripts/plugin-offcpu-ns.sh runs it
# again inside a PID namespace (a container), where the samples' pids are
# not the kernel's.
set -u
. "$(dirname "$0")/plugin-lib.sh"

# The workload runs across the whole recording, so that no thread of it
# exits inside: perf sched timehist loses the last wait of an exiting
# thread (perf records its final switch with thread id -1).  perf record
# can take seconds to start and stop on a loaded machine: the workload runs
# for two minutes and is stopped once the recording is made.
"$W" 120000 0 &
wpid=$! c= hostile=
trap 'kill $wpid $c $hostile 2>/dev/null; rm -rf "$T"' EXIT
# and a thread whose name holds a line break, blanks and ';' (other
# programs on the machine may be so named), switching all the time
hostile_sleeper
# wait (not a fixed sleep: CI machines can be loaded) until the child has
# forked and renamed itself, so that both processes switch while recorded;
# up to 30 s, for a machine busy with other builds
for _ in $(seq 600); do
	c=$(pgrep -P $wpid | head -1)
	[ -n "$c" ] && [ "$(cat /proc/$c/comm 2>/dev/null)" = fkwork-child ] && break
	sleep 0.05
done
sleep 0.1
# A whole recording: where perf lost switches (its buffer full on a loaded
# machine: "LOST" in perf report --stats), a wait's end or start is missing,
# timehist and the plugin guess differently and the comparison below proves
# nothing.  A buffer of 2 MB per CPU (where perf may lock that much), and up
# to three tries.
lost() { perf report -i "$1" --stats 2>/dev/null | grep -c 'LOST'; }
# record FILE [PERF-RECORD-OPTION]: sets rc
record() {
	for try in 1 2 3; do
		rm -f "$1"
		perf record -q -m 2M -e sched:sched_switch ${2:-} -a -g -o "$1" -- sleep $DUR >/dev/null 2>"$T/rec.err" ||
			perf record -q -e sched:sched_switch ${2:-} -a -g -o "$1" -- sleep $DUR >/dev/null 2>"$T/rec.err"
		rc=$?
		[ $rc -eq 0 ] && [ "$(lost "$1")" != 0 ] || break
		echo "   (perf lost events in recording $try: $(perf report -i "$1" --stats 2>/dev/null | grep LOST | head -2 | tr -s ' ' | tr '\n' ';'))"
	done
}
# count_waits DATA: the sleeps of sleep-long and sleep-short whose end perf
# recorded (see below), "LONG SHORT" in $T/nwaits
count_waits() {
	perf script -i "$1" -F pid,tid,trace,ip,sym 2>/dev/null |
		perf_records '^ *-?[0-9]+/-?[0-9]+ ' '^([ \t]+[0-9a-f]+ |[ \t]*$)' | awk -v pid="$wpid" "$AWK_SWITCH"'
function done() { if (p == pid && st ~ /^[SD]/ && (l || s)) waiting[out] = l ? "l" : "s" }
/^[ ]*[0-9-]+\/[0-9-]+ / { done(); split($1, a, "/"); p = a[1]; l = s = 0
	if (!switch_fields($0)) { p = -1; next }
	st = state; out = prev; in_ = nxt
	delete waiting[out]	# out again: its last wait had no recorded end
	if (in_ in waiting) { if (waiting[in_] == "l") nl++; else ns++; delete waiting[in_] }
	next }
$2 == "wait_long" { l = 1 } $2 == "wait_short" { s = 1 }
END { print nl + 0, ns + 0 }' >"$T/nwaits"
}
# A loaded machine stretches sleep-short's 9 ms of work (load 70 on two
# cores: a few cycles in 0.8 s): the recording is made longer until it
# holds five waits of each, as the check of their lengths below asks
DUR=0.8
for DUR in 0.8 1.6 3.2 6.4; do
	record "$T/sw.data"
	[ $rc -eq 0 ] || break
	count_waits "$T/sw.data"
	read -r nlong nshort <"$T/nwaits"
	[ "$nlong" -ge 5 ] && [ "$nshort" -ge 5 ] && break
	echo "   ($nlong and $nshort waits in $DUR s: the machine is busy; recording longer)"
done
# the same with perf's switch records (the test at the end), if this
# perf has them
swrc=1
if perf record -h 2>&1 | grep -q -- --switch-events; then
	rc0=$rc
	record "$T/sws.data" --switch-events
	swrc=$rc rc=$rc0
fi
kill -0 $wpid $c 2>/dev/null || fail "the workload ended during the recording"
kill $wpid $c
wait $wpid
[ $rc -eq 0 ] || unavailable "perf record -e sched:sched_switch -a -g failed: $(head -3 "$T/rec.err")"
[ "$(lost "$T/sw.data")" = 0 ] || fail "perf lost events in each of three recordings: the machine is too busy to test"

# tracepoint samples (no period printed) fold as the text pipeline folds them
# (-F +pid alone would drop the call chains of tracepoint samples)
same_as_pipeline "sched_switch default" "$T/sw.data" "" "" ""
same_as_pipeline "sched_switch tid" "$T/sw.data" "-F +pid,+ip,+sym,+symoff,+dso" "--tid" "tid"

# off-CPU microseconds per thread, every state: "TID TOTAL_US"
plugin "$T/sw.data" offcpu state=all tid >"$T/all.folded" 2>"$T/all.err" ||
	{ fail "offcpu state=all tid failed: $(head -3 "$T/all.err")"; exit 1; }
grep -q 'still off-CPU at the end' "$T/all.err" || fail "threads still off-CPU at the end are not reported"
# no thread, whatever its name, is off-CPU for longer than the recording
# (its first sample to its last; each stack rounded to 1 us)
span=$(perf script -i "$T/sw.data" -F time 2>/dev/null |
	awk '{ t = $1 + 0; if (!n++ || t < a) a = t; if (t > b) b = t } END { printf "%.0f\n", (b - a) * 1e6 }')
if awk -v span="$span" 'match($0, /-[0-9]+\/[0-9]+;/) { t = substr($0, RSTART, RLENGTH); us[t] += $NF; k[t]++ }
	END { for (t in us) { n++; if (us[t] > span + k[t] / 2) { bad++; print "  thread " t " " us[t] " us" } }
	      exit bad > 0 || n < 4 }' "$T/all.folded" >"$T/long"; then
	echo "ok no thread off-CPU for longer than the recording ($span us)"
else fail "threads off-CPU for longer than the recording ($span us): $(head -3 "$T/long")"; fi
# the workload's processes: it and its child (found before recording; a
# system-wide recording may also hold other runs' workloads)
pids="$wpid $c"
[ "$(echo $pids | wc -w)" -eq 2 ] || { fail "cannot find the workload's two processes (got '$pids')"; exit 1; }
# The plugin counts the waits still open at the end up to the last sample;
# timehist does not count them: take them off, per thread, from the text.
# The switch's prev_pid and next_pid are the kernel's, the sample's tid is
# perf's (they differ in a PID namespace): the thread switched out is the
# sample's, which maps one to the other.
perf script -i "$T/sw.data" -F tid,time,trace 2>/dev/null |
	perf_records '^ *-?[0-9]+ +[0-9]+\.[0-9]+: ' | awk "$AWK_SWITCH"'{
	t = $2; sub(/:$/, "", t); t += 0; if (t > end) end = t
	if (!switch_fields($0)) next
	tid[prev] = $1
	if (nxt in tid) delete out[tid[nxt]]
	if (state ~ /^[XZ]/) delete out[$1]; else out[$1] = t
} END { for (t in out) printf "%s %.0f\n", t, (end - out[t]) * 1e6 }' >"$T/tails"
awk -v pids=" $pids " 'FILENAME == ARGV[1] { tail[$1] = $2; next } {
	split($1, f, ";"); n = split(f[1], a, "-"); split(a[n], p, "/")
	if (index(pids, " " p[1] " ")) us[p[2]] += $NF
} END { for (t in us) print t, us[t] - tail[t] }' "$T/tails" "$T/all.folded" >"$T/ours"

# perf sched timehist: the wait before each run (all of it, without
# sched_wakeup events to split off a scheduling delay)
# (read from the end of each line: a task's name may hold blanks)
perf sched timehist -i "$T/sw.data" --no-call-graph >"$T/timehist" 2>/dev/null ||
	{ fail "perf sched timehist failed"; exit 1; }
awk -v pids=" $pids " 'NF >= 6 && $2 ~ /^\[[0-9]+\]$/ {
	task = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ *$/, "", task)
	if (!match(task, /\[[0-9]+(\/[0-9]+)?\]$/)) next
	n = split(substr(task, RSTART + 1, RLENGTH - 2), a, "/")
	tid = a[1]; pid = n > 1 ? a[2] : a[1]
	if (index(pids, " " pid " ")) us[tid] += $(NF - 2) * 1000
} END { for (t in us) printf "%s %.0f\n", t, us[t] }' "$T/timehist" >"$T/theirs"

# (joined in awk: join(1) wants its keys in sort(1)'s order, not sort -n's,
# and silently loses every match after the first key that is out of it,
# as when thread ids go from 99 to 100; in a PID namespace they are small)
awk 'FILENAME == ARGV[1] { ours[$1] = $2; next }
	$1 in ours { print $1, ours[$1], $2 }' "$T/ours" "$T/theirs" >"$T/both"
[ "$(wc -l <"$T/both")" -ge 4 ] || fail "only $(wc -l <"$T/both") workload threads in both"
# Each wait is rounded to 1 us by timehist, each stack by the plugin, so
# 1% is asked of threads off the CPU for 50 ms or more, and of the sum.
if awk '{
	d = $2 - $3; if (d < 0) d = -d
	if ($3 >= 50000) { n++; if (d > $3 / 100) { bad++; print "  thread " $1 ": plugin " $2 " us, timehist " $3 " us" } }
	a += $2; b += $3
} END {
	d = a - b; if (d < 0) d = -d
	printf "  %d threads >= 50 ms; all workload threads: plugin %d us, timehist %d us\n", n, a, b
	exit (bad > 0 || n < 4 || d > b / 100)
}' "$T/both"; then echo "ok per-thread off-CPU time agrees with perf sched timehist within 1%"
else fail "off-CPU totals differ from perf sched timehist by more than 1%"; fi

# default states S,D: each wait is weighted by its length, not counted.
# sleep-long's 10 ms sleeps and sleep-short's 1 ms ones: a sleep never ends
# early, so the mean wait of each is at least 95% of its length (a wait
# starts at the switch-out, a few microseconds after the sleep's timer was
# armed), and a loaded machine only lengthens them.  Not that the short
# one's mean stays below the long one's: without wake-up events in the
# recording a wait ends when the thread runs again, so each holds the time
# it then waited for a CPU, and at load 15 a handful of 1 ms sleeps that
# waited long for one can outweigh the 10 ms ones (a full make check failed
# so): that would test the machine's load, not the plugin.  Per thread,
# the totals are timehist's (above).  Counting switches would give a mean of 1 us,
# nanoseconds a mean of 10^7.  The waits are counted from perf's text, and
# only those whose end perf recorded (a switch-in, next_pid): perf does not
# always record a CPU's switch from idle (swapper) to the woken thread, and
# the plugin then ends the wait at that CPU's previous switch, as perf sched
# timehist does (reported on stderr), often the thread's own switch-out, so
# such a wait weighs almost nothing.  Counted, they pulled the mean of the
# 1 ms sleeps under 1 ms in about one run in five on a quiet machine.
# The plugin's totals hold every wait that was recorded whole, so over the
# waits recorded whole its mean is at least theirs.  (The sched_switch
# fields are the kernel's pids, the sample's pid/tid the namespace's.)
# A loaded machine stretches sleep-short's 9 ms of work, so 0.8 s may hold
# only a dozen of its cycles: five waits of each are asked for.
plugin "$T/sw.data" offcpu pid >"$T/sd.folded" 2>/dev/null || fail "offcpu failed"
read -r nlong nshort <"$T/nwaits"
long=$(awk -v p="sleep-long-$wpid;" 'index($0, p) == 1 && /;wait_long;/ { s += $NF } END { printf "%.0f\n", s }' "$T/sd.folded")
short=$(awk -v p="sleep-short-$wpid;" 'index($0, p) == 1 && /;wait_short;/ { s += $NF } END { printf "%.0f\n", s }' "$T/sd.folded")
if awk -v l="$long" -v s="$short" -v nl="$nlong" -v ns="$nshort" 'BEGIN {
	if (nl < 5 || ns < 5) exit 1
	ml = l / nl; ms = s / ns
	exit !(ml >= 9500 && ml < 1e6 && ms >= 950 && ms < 1e6)
}'; then
	echo "ok wait_long $long us in $nlong waits, wait_short $short us in $nshort waits"
else fail "wait_long $long us in $nlong waits, wait_short $short us in $nshort waits: not weighted by time"; fi
# glibc keeps no frame pointer: wait_for_lock's frame is skipped; the
# futex wait is __lll_lock_wait with glibc's debug symbols (libc6-dbg),
# else an address in libc.so.6 that no exported symbol covers
grep -Eq '^lock-[ab]-[0-9]*;.*;locker;([^;]*lll_lock_wait|\[libc\.so[^;]*\]);.*;futex_wait;' "$T/sd.folded" ||
	fail "no locker;...futex_wait stack (mutex contention): $(grep '^lock-[ab]-[0-9]*;.*;locker;' "$T/sd.folded" | head -3)"
grep -vq ' [0-9]*$' "$T/sd.folded" && fail "a count is not a whole number of microseconds"

# min=5000 keeps the 10 ms sleeps and drops the 1 ms ones (not those a
# busy machine made last over 5 ms: how many depends on the load)
plugin "$T/sw.data" offcpu pid min=5000 >"$T/min.folded" 2>"$T/err" || fail "offcpu min= failed"
grep -q 'waits under min=5000 us left out' "$T/err" || fail "min=5000: no count of the waits left out"
long5=$(awk -v p="sleep-long-$wpid;" 'index($0, p) == 1 && /;wait_long;/ { s += $NF } END { printf "%.0f\n", s }' "$T/min.folded")
short5=$(awk -v p="sleep-short-$wpid;" 'index($0, p) == 1 && /;wait_short;/ { s += $NF } END { printf "%.0f\n", s }' "$T/min.folded")
if awk -v l="$long" -v s="$short" -v l5="$long5" -v s5="$short5" \
	'BEGIN { exit !(l5 > l * 0.9 && s5 < s) }'; then
	echo "ok min=5000: wait_long $long5 us, wait_short $short5 us"
else fail "min=5000: wait_long $long5 of $long us, wait_short $short5 of $short us"; fi
# state=R: preemptions only, never the sleeps
plugin "$T/sw.data" offcpu pid state=R >"$T/r.folded" 2>/dev/null || fail "offcpu state=R failed"
# (a sleep woken before it began leaves the CPU runnable, in state R:
# those are rare and short)
r=$(awk '/;do_nanosleep;schedule;/ { s += $NF } END { printf "%.0f\n", s }' "$T/r.folded")
sd=$(awk '/;do_nanosleep;schedule;/ { s += $NF } END { printf "%.0f\n", s }' "$T/sd.folded")
if awk -v r="$r" -v s="$sd" 'BEGIN { exit !(s > 0 && r < s / 20) }'; then
	echo "ok state=R: $r us in nanosleep, against $sd us with S,D"
else fail "state=R: $r us in nanosleep, against $sd us with S,D"; fi

# split: per process, together the same stacks as with pid; the
# workload's two processes named after their main threads, in us
plugin "$T/sw.data" offcpu pid >"$T/sd.folded" 2>/dev/null
if plugin "$T/sw.data" offcpu pid "split=$T/split" >/dev/null 2>"$T/err"; then
	cat "$T/split"/*.folded | sort >"$T/merged"
	sort "$T/sd.folded" >"$T/sd.sorted"
	cmp -s "$T/merged" "$T/sd.sorted" || fail "offcpu split= files differ from the offcpu pid output"
	# (the child only spins: it never sleeps)
	grep -q "^fkwork-$wpid\.folded	fkwork	$wpid	.*	us\$" "$T/split/index.tsv" ||
		fail "offcpu split=: no fkwork-$wpid.folded in us in index.tsv"
	grep -q "(counts in us)" "$T/err" || fail "offcpu split=: the unit is not on stderr"
	echo "ok offcpu split: $(ls "$T/split"/*.folded | wc -l) profiles"
else
	fail "offcpu split= failed: $(head -3 "$T/err")"
fi

# pprof=: each thread's off-CPU time as in the folded output (pprof in
# ns, the folded stacks each rounded to 1 us); in a PID namespace too,
# where the waits are the kernel's threads' and the samples perf's; the
# workload's processes alone (pid=)
plugin "$T/sw.data" offcpu tid "pid=$wpid,$c" "pprof=$T/off.pb.gz" >"$T/pp.folded" 2>"$T/err" ||
	fail "offcpu pprof= failed: $(head -3 "$T/err")"
"$BIN/pprof-collapse" --tagroot=tid "$T/off.pb.gz" 2>/dev/null |
	awk -F';' '{ t = $1; sub(/^tid=/, "", t); c = $NF; sub(/.* /, "", c); print t, c }' >"$T/pp.tid"
awk '{ r = $0; sub(/;.*/, "", r); match(r, /\/[0-9]+$/); print substr(r, RSTART + 1), $NF }' "$T/pp.folded" >"$T/fo.tid"
if awk 'FILENAME == ARGV[1] { pp[$1] += $2 / 1000; next } { fo[$1] += $2; n[$1]++ }
	END { for (t in fo) { m++; d = pp[t] - fo[t]; if (d < 0) d = -d
		if (d > n[t] * 0.5 + 1) { bad++; print "  thread " t ": pprof " pp[t] + 0 " us, folded " fo[t] " us" } }
	      exit (bad > 0 || m < 4) }' "$T/pp.tid" "$T/fo.tid" >"$T/cmp"; then
	echo "ok offcpu pprof=: $(wc -l <"$T/fo.tid") stacks, each thread's time as folded"
else fail "offcpu pprof= differs from the folded output: $(head -4 "$T/cmp")"; fi

# perf script --pid narrows the stacks shown, not the time: a wait ends at
# the switch-in that a thread of another process records, which --pid
# leaves out; the workload's stacks are those of the whole recording
plugin "$T/sw.data" offcpu tid >"$T/wide" 2>/dev/null
awk -v pids=" $pids " '{ split($1, f, ";"); n = split(f[1], a, "-"); split(a[n], p, "/")
	if (index(pids, " " p[1] " ")) print }' "$T/wide" >"$T/wide.ours"
if SCRIPT_ARGS="--pid $wpid,$c" plugin "$T/sw.data" offcpu tid >"$T/narrow" 2>"$T/narrow.err"; then
	if ! cmp -s "$T/wide.ours" "$T/narrow"; then
		fail "perf script --pid: the workload's off-CPU stacks differ from the whole recording's"
		diff "$T/wide.ours" "$T/narrow" | head -6 >&2
	elif grep -q "system-wide\|some CPUs" "$T/narrow.err"; then
		fail "perf script --pid: a note about missing switch-ins: $(grep 'system-wide\|some CPUs' "$T/narrow.err")"
	else
		echo "ok perf script --pid: $(wc -l <"$T/narrow") stacks, the same as in the whole recording"
	fi
else
	fail "perf script --pid: $(head -3 "$T/narrow.err")"
fi

# perf script with no option that selects samples lets the plugin fold each
# in filter_event_early(), skipping perf's resolving of the switches it does
# not count; with one it does not know (--ns selects nothing), the samples
# perf's selection keeps come to filter_event(): the same output either way
for name in "offcpu tid" "offcpu state=all" "offcpu pid split" "tid"; do
	args=${name/split/split=$T/ns-split}
	# shellcheck disable=SC2086
	plugin "$T/sw.data" $args >"$T/early.out" 2>"$T/early.err"; st1=$?
	[ -d "$T/ns-split" ] && mv "$T/ns-split" "$T/early-split"
	# shellcheck disable=SC2086
	SCRIPT_ARGS=--ns plugin "$T/sw.data" $args >"$T/late.out" 2>"$T/late.err"; st2=$?
	if [ $st1 != 0 ] || [ $st2 != 0 ] || ! cmp -s "$T/early.out" "$T/late.out" ||
	   ! cmp -s "$T/early.err" "$T/late.err" ||
	   { [ -d "$T/ns-split" ] && ! diff -r "$T/early-split" "$T/ns-split" >/dev/null; }; then
		fail "$name: perf script alone and perf script --ns differ (status $st1, $st2)"
		diff "$T/early.out" "$T/late.out" | head -4 >&2
		diff "$T/early.err" "$T/late.err" | head -4 >&2
	else
		echo "ok $name: the same with and without perf script --ns ($(wc -l <"$T/early.out") lines)"
	fi
	rm -rf "$T/early-split" "$T/ns-split"
done

# a sampled sched_switch recording (-F, -c N): refused, with how to record
for how in "-F 99" "-c 3"; do
	perf record -q -e sched:sched_switch $how -a -g -o "$T/sampled.data" -- sleep 0.3 >/dev/null 2>&1 ||
		{ fail "perf record -e sched:sched_switch $how failed"; continue; }
	plugin "$T/sampled.data" offcpu >"$T/out" 2>"$T/err"; st=$?
	if [ $st = 0 ] || [ -s "$T/out" ]; then
		fail "offcpu on a recording made with $how: status $st, $(wc -l <"$T/out") lines"
	elif ! grep -q "sampled .*record with -c 1" "$T/err"; then
		fail "offcpu on a recording made with $how: $(head -2 "$T/err")"
	else
		echo "ok $how refused: $(grep -o "sampled [^(]*" "$T/err")"
	fi
done

# a recording of the workload alone (not system-wide): the waits that
# other processes' threads end have no end; refused, saying why
perf record -q -e sched:sched_switch -g -o "$T/own.data" -- "$W" 300 0 >/dev/null 2>&1 ||
	fail "perf record -e sched:sched_switch of the workload alone failed"
plugin "$T/own.data" offcpu >"$T/out" 2>"$T/err"; st=$?
if [ $st = 0 ] || [ -s "$T/out" ]; then
	fail "offcpu on a per-process recording: status $st, $(wc -l <"$T/out") lines: $(head -4 "$T/err")"
elif ! grep -q "the recording is not system-wide (perf record was given threads or a command, not -a): .*perf record -e sched:sched_switch -a -g" "$T/err"; then
	fail "offcpu on a per-process recording: $(head -3 "$T/err")"
else
	echo "ok per-process recording refused: $(grep -o '[0-9]* of [0-9]* waits' "$T/err")"
fi

# a selection that keeps nothing: said, status 1, no output
SCRIPT_ARGS="--pid 2147483646" plugin "$T/sw.data" offcpu >"$T/out" 2>"$T/err" && fail "offcpu, perf script --pid matching nothing: status 0"
[ -s "$T/out" ] && fail "offcpu, perf script --pid matching nothing: printed stacks"
grep -q "none of the [0-9]* samples perf read passed its selection" "$T/err" &&
	echo "ok offcpu, nothing selected: $(head -1 "$T/err")" || fail "offcpu, nothing selected: $(head -2 "$T/err")"

# text_waits DATA PID: from perf's text of DATA, per thread of process PID,
# "TID US WAITS US_ENDED" (below); stderr "BY_RECORD NO_END": the waits a
# switch record ended, and those with no switch-in before the next switch-out
text_waits() {
	perf script -i "$1" --show-switch-events --ns -F pid,tid,time,trace 2>/dev/null |
		perf_records '^ *-?[0-9]+/-?[0-9]+ +[0-9]+\.[0-9]+: ' >"$T/text"
	awk -v pid="$2" "$AWK_SWITCH"'
function ns(s,  a) { sub(/:$/, "", s); split(s, a, "."); return a[1] * 1e9 + a[2] }
function end(p, t) { us[p] += (t - open[p]) / 1000; n[p]++; delete open[p] }
FNR == 1 { pass++ }
pass == 1 { if (switch_fields($0) && ns($2) > last) last = ns($2); next }
{ split($1, id, "/"); t = ns($2) }
/PERF_RECORD_SWITCH/ && $4 == "IN" { if ((id[2] in open) && t <= last) { end(id[2], t); rec++ }; next }
switch_fields($0) {
	st = state
	k2p[prev] = id[2]	# the kernel pid, perf tid
	if ((nxt in k2p) && (k2p[nxt] in open)) end(k2p[nxt], t)
	if (id[2] in open) { noend++; delete open[id[2]] }
	if (id[1] == pid && st ~ /^[SD]/) open[id[2]] = t
}
END {
	for (p in open) { tail[p] = (last - open[p]) / 1000; us[p] += tail[p] }
	for (p in us) printf "%s %.3f %d %.3f\n", p, us[p], n[p], us[p] - tail[p]
	printf "%d %d\n", rec, noend >"/dev/stderr"
}' "$T/text" "$T/text"
}
# plugin_waits FOLDED PID: per thread of process PID, "TID US STACKS SHORT"
# (SHORT 1 for sleep-short)
plugin_waits() {
	awk -v pid="$2" '{ split($1, f, ";"); n = split(f[1], a, "-"); split(a[n], p, "/")
		if (p[1] == pid) { us[p[2]] += $NF; k[p[2]]++; if (f[1] ~ /^sleep-short-/) short = p[2] } }
		END { for (t in us) print t, us[t], k[t], t == short }' "$1"
}
# same_waits THEIRS OURS: the same totals per thread, each stack rounded to
# 1 us; at least 4 threads, and sleep-short's mean wait >= 950 us
same_waits() {
	awk 'FILENAME == ARGV[1] { us[$1] = $2; n[$1] = $3; closed[$1] = $4; next }
		{ m++; d = $2 - us[$1]; if (d < 0) d = -d
		  if (!($1 in us) || d > $3 * 0.5 + 1) { bad++; print "  thread " $1 ": plugin " $2 " us, perf text " us[$1] + 0 " us" }
		  # (the plugin total, less the wait still open at the end)
		  if ($4) { sn = n[$1]; sm = sn ? ($2 - (us[$1] - closed[$1])) / sn : 0 } }
		END { for (t in us) if (us[t] > 0) o++
		      printf "  %d threads; sleep-short: %d waits, mean %.0f us\n", m, sn, sm
		      exit (bad > 0 || m < 4 || m != o || sn < 5 || sm < 950) }' "$1" "$2"
}

# perf record --switch-events: the kernel does not emit the sched_switch
# tracepoint for many switches from the idle task (here often half of
# them), so many waits have no recorded switch-in; perf's switch records
# have every one, and the plugin ends such waits there.  From perf's own
# text, each wait of the workload's main process (the sleepers, the
# lockers; states S and D) runs from its switch-out to the thread's first
# switch-in perf recorded, of either kind (a switch record comes a few
# microseconds after the tracepoint of the same switch), or to the last
# sample; the plugin's per-thread totals must be those (each stack rounded
# to 1 us), and the 1 ms sleeps' mean over all their waits at least
# 950 us.  On a machine never idle no switch-in is missing: the count of
# waits the switch records ended is printed.
if [ $swrc != 0 ]; then
	echo "   (no recording with --switch-events: $(head -1 "$T/rec.err"))"
elif [ "$(lost "$T/sws.data")" != 0 ]; then
	fail "perf lost events in each of three recordings with --switch-events: the machine is too busy to test"
else
	text_waits "$T/sws.data" "$wpid" >"$T/sws.theirs" 2>"$T/sws.counts"
	read -r byrec noend <"$T/sws.counts"
	plugin "$T/sws.data" offcpu tid >"$T/sws.folded" 2>"$T/sws.err" ||
		fail "offcpu on a recording with --switch-events failed: $(head -3 "$T/sws.err")"
	plugin_waits "$T/sws.folded" "$wpid" >"$T/sws.ours"
	if same_waits "$T/sws.theirs" "$T/sws.ours"; then
		echo "ok --switch-events: per-thread off-CPU time as perf's text says, $byrec waits ended by a switch record ($(grep -o '[0-9]* of [0-9]* waits ended by a switch-in only' "$T/sws.err" || echo none))"
	else
		fail "--switch-events: the plugin's off-CPU totals are not perf's ($byrec waits ended by a switch record, $noend with no switch-in)"
	fi
	[ "${noend:-0}" = 0 ] || echo "   ($noend waits of perf's text had no switch-in before the thread's next switch-out)"
fi

# a recording of the workload alone made with --switch-events: perf
# records its threads' own switch-ins (PERF_RECORD_SWITCH), which end every
# wait: accepted, with the totals of perf's text.  0.8 s, as above: five
# of sleep-short's 10 ms cycles are asked for, and a loaded machine
# stretches them.
if [ $swrc = 0 ]; then
	perf record -q -e sched:sched_switch --switch-events -g -o "$T/own-sw.data" -- "$W" 800 0 >/dev/null 2>&1 ||
		fail "perf record -e sched:sched_switch --switch-events of the workload alone failed"
	opid=$(perf script -i "$T/own-sw.data" -F comm,pid 2>/dev/null | awk '$1 == "sleep-short" { print $2; exit }')
	text_waits "$T/own-sw.data" "$opid" >"$T/own.theirs" 2>/dev/null
	if ! plugin "$T/own-sw.data" offcpu tid >"$T/own.folded" 2>"$T/own.err"; then
		fail "offcpu on a per-process recording with --switch-events: $(head -3 "$T/own.err")"
	elif plugin_waits "$T/own.folded" "$opid" >"$T/own.ours" && same_waits "$T/own.theirs" "$T/own.ours"; then
		echo "ok per-process recording with --switch-events: per-thread off-CPU time as perf's text says"
	else
		fail "per-process recording with --switch-events: the plugin's off-CPU totals are not perf's"
	fi
fi

# In a PID namespace (plugin-offcpu-ns.sh), make sure that is what ran:
# another namespace than the caller's, where the samples' tids are not the
# switches' pids.
if [ -n "${FK_OUTER_PIDNS:-}" ]; then
	[ "$(readlink /proc/self/ns/pid)" != "$FK_OUTER_PIDNS" ] || fail "not in a new PID namespace"
	perf script -i "$T/sw.data" --pid "$wpid" -F tid,trace 2>/dev/null |
		awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^prev_pid=/ && $i != "prev_pid=" $1) n++ } END { exit !n }' &&
		echo "ok in a PID namespace: the samples' tids are not the kernel's" ||
		fail "in a PID namespace, yet the samples' tids are the kernel's"
fi

# the format is read from the file given, and must have the fields
sed 's/prev_state/prev_mood/g' /sys/kernel/tracing/events/sched/sched_switch/format >"$T/bad.format" 2>/dev/null &&
	{ plugin "$T/sw.data" offcpu "format=$T/bad.format" >"$T/out" 2>"$T/err" && fail "a format without prev_state was accepted"
	  grep -q "no numeric field 'prev_state'" "$T/err" || fail "no message for a format without prev_state: $(head -2 "$T/err")"; }
perf record -q -g -o "$T/cpu.data" -- "$W" 100 0 >/dev/null 2>&1 || fail "perf record of cpu-clock failed"
plugin "$T/cpu.data" offcpu >"$T/out" 2>"$T/err" && fail "offcpu without sched_switch samples succeeded"
grep -q "no sched:sched_switch samples" "$T/err" || fail "no message for offcpu without sched_switch samples"
[ -s "$T/out" ] && fail "offcpu without sched_switch samples printed something"

exit $FAILED
