#!/bin/bash
# plugin-offwake.sh - the perf dlfilter's offwake mode on a recording made
# here and now of sched_switch and sched_waking (-a -g, clock
# CLOCK_MONOTONIC) while test/workloads/wakeup.c runs, whose wakers are
# known: fkholder releases a mutex fkwaiter waits for (release_lock(),
# wait_for_lock()), fkwriter writes to a pipe fkreader reads
# (write_token(), read_token()).
#  - the layout is offwaketime's: wakee name and stack root first, "--",
#    the waker's stack leaf first, its name last;
#  - the waiter's waits that the holder's release_lock() ended, and the
#    reader's that write_token() ended, weigh what the switches and
#    wakings in perf script's text give (each blocked wait from its
#    switch-out to the first sched_waking of it), per wakee and waker
#    thread, to the rounding of each stack;
#  - each such wait of the waiter lies inside one of the waits the
#    workload timed itself (its LOG, on the same clock);
#  - state=, min= and bad options.
set -u
. "$(dirname "$0")/plugin-lib.sh"

WK=$T/wakeup
cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -o "$WK" \
	"$ROOT/test/workloads/wakeup.c" || { echo "cannot build the workload" >&2; exit 1; }

# option errors need no recording
for bad in "offwake state=R" "offwake speedscope=$T/x.json" "waking-format=$T/f" "offwake waking-format=$T/none"; do
	# shellcheck disable=SC2086
	if perf record -q -o "$T/empty.data" -e sched:sched_switch -a -- true >/dev/null 2>&1 &&
		plugin "$T/empty.data" $bad >"$T/bad.out" 2>"$T/bad.err"; then
		fail "'$bad' accepted"
	elif ! grep -q 'foldkit:' "$T/bad.err"; then
		fail "'$bad': no message: $(head -2 "$T/bad.err")"
	else
		echo "ok '$bad' refused: $(grep -m1 foldkit: "$T/bad.err" | cut -c1-120)"
	fi
done

"$WK" 120 "$T/log" &
wpid=$!
trap 'kill $wpid 2>/dev/null; rm -rf "$T"' EXIT
# until its four threads are named (a loaded machine may take a while)
for _ in $(seq 600); do
	[ "$(cat /proc/$wpid/task/*/comm 2>/dev/null | grep -c '^fk')" = 4 ] && break
	sleep 0.05
done
sleep 0.2
lost() { perf report -i "$1" --stats 2>/dev/null | grep -c 'LOST'; }
for try in 1 2 3; do
	rm -f "$T/w.data"
	perf record -q -k CLOCK_MONOTONIC -m 2M -e sched:sched_switch -e sched:sched_waking -a -g \
		-o "$T/w.data" -- sleep 1 >/dev/null 2>"$T/rec.err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(lost "$T/w.data")" != 0 ] || break
	echo "   (perf lost events in recording $try)"
done
kill -0 $wpid 2>/dev/null || fail "the workload ended during the recording"
kill $wpid; wait $wpid 2>/dev/null
[ $rc -eq 0 ] || unavailable "perf record -k CLOCK_MONOTONIC -e sched:sched_switch -e sched:sched_waking -a -g failed: $(head -3 "$T/rec.err")"
[ "$(lost "$T/w.data")" = 0 ] || fail "perf lost events in each of three recordings: the machine is too busy to test"

plugin "$T/w.data" offwake tid >"$T/ow.folded" 2>"$T/ow.err" ||
	{ fail "offwake tid failed: $(head -3 "$T/ow.err")"; exit 1; }
holder=$(grep -l '^fkholder$' /proc/$wpid/task/*/comm 2>/dev/null | head -1)
# (the workload has exited: its thread ids from the folded output)
tidof() { # NAME: the thread id the plugin names NAME-PID/TID with
	grep -o "^$1-$wpid/[0-9]*;" "$T/ow.folded" | head -1 | sed 's/.*\///; s/;//'
}
waiter=$(tidof fkwaiter) reader=$(tidof fkreader)
holder=$(grep -o ";fkholder-$wpid/[0-9]* [0-9]*\$" "$T/ow.folded" | head -1 | sed 's/.*\///; s/ .*//')
writer=$(grep -o ";fkwriter-$wpid/[0-9]* [0-9]*\$" "$T/ow.folded" | head -1 | sed 's/.*\///; s/ .*//')
if [ -z "$waiter" ] || [ -z "$reader" ] || [ -z "$holder" ] || [ -z "$writer" ]; then
	fail "the workload's threads are not all in the output (waiter '$waiter', reader '$reader', holder '$holder', writer '$writer')"
	head -5 "$T/ow.folded" | cut -c1-300 >&2
	exit 1
fi

# The layout: every line has one "--" between a name and a name.
if awk '{ n = split($0, f, ";"); d = 0; for (i = 1; i <= n; i++) d += f[i] == "--"
	if (d != 1 || f[1] == "--" || f[n] ~ /^-- /) { bad++; print } } END { exit bad > 0 || NR == 0 }' \
	"$T/ow.folded" >"$T/badlines"; then
	echo "ok every line is 'wakee;...;--;...;waker COUNT' ($(wc -l <"$T/ow.folded") lines)"
else fail "lines not in offwaketime's layout: $(head -2 "$T/badlines" | cut -c1-200)"; fi

# The waiter's waits ended by release_lock(): the wakee's part has
# wait_for_lock (root first: waiter before it), the waker's part has
# release_lock before hold_lock (leaf first), and fkholder last.
grep "^fkwaiter-$wpid/$waiter;" "$T/ow.folded" | grep ';--;.*;release_lock;' >"$T/lockw"
if [ -s "$T/lockw" ] && awk -v h="fkholder-$wpid/$holder" '{
	split($0, half, ";--;"); sub(/ [0-9]+$/, "", half[2])
	if (half[1] !~ /;waiter;wait_for_lock;/ || half[2] !~ /;release_lock;hold_lock;holder;/ ||
	    half[2] !~ ("(^|;)" h "$")) { print; bad++ }
} END { exit bad > 0 }' "$T/lockw" >"$T/badw"; then
	echo "ok the waiter's lock waits end in the holder's release_lock ($(wc -l <"$T/lockw") stacks)"
else fail "the waiter's lock waits: $(head -2 "$T/badw" | cut -c1-300)"; fi
grep "^fkreader-$wpid/$reader;" "$T/ow.folded" | grep ';--;.*;write_token;' >"$T/piper"
if [ -s "$T/piper" ] && awk -v h="fkwriter-$wpid/$writer" '{
	split($0, half, ";--;"); sub(/ [0-9]+$/, "", half[2])
	if (half[1] !~ /;reader;read_token;/ || half[2] !~ /;write_token;writer;/ ||
	    half[2] !~ ("(^|;)" h "$")) { print; bad++ }
} END { exit bad > 0 }' "$T/piper" >"$T/badr"; then
	echo "ok the reader's waits end in the writer's write_token ($(wc -l <"$T/piper") stacks)"
else fail "the reader's pipe waits: $(head -2 "$T/badr" | cut -c1-300)"; fi

# From perf script's text, independently: each wait of a thread asleep
# (S or D at its switch-out) lasts until the first sched_waking of it;
# a switch of the thread before that (it ran: woken unrecorded) drops it.
# Per wakee, the waits whose waker's chain holds FN, and their intervals
# (each record one line, its call chain joined to it).  The tracepoints'
# pids are the kernel's, the records' tids perf's: in a PID namespace (a
# container) they differ, and a switch-out (the record's tid is the
# thread switched out) tells the one from the other.
perf script -i "$T/w.data" --ns -F tid,time,event,trace,ip,sym 2>/dev/null |
	perf_records '^ *-?[0-9]+ +[0-9]+\.[0-9]+: ' >"$T/text"
text_waits() { # WAKEE-TID WAKER-TID FN: "START END" in ns, one a wait
	awk -v wakee="$1" -v waker="$2" -v fn="$3" "$AWK_SWITCH"'
	function ns(s,   q) { sub(/:$/, "", s); split(s, q, "."); return q[1] * 1000000000 + q[2] }
	/ sched:sched_switch: / {
		t = ns($2); if (!switch_fields($0)) next
		delete since[nxt]; delete since[prev]
		if (state ~ /^[SD]/ && prev > 0) since[prev] = t
		if ($1 + 0 > 0 && prev > 0) kernel[$1 + 0] = prev
		next
	}
	/ sched:sched_waking: / {
		t = ns($2)
		if (!match($0, / pid=-?[0-9]+ prio=/)) next
		p = substr($0, RSTART + 5, RLENGTH - 11) + 0
		if (!(p in since)) next
		if (p == (wakee in kernel ? kernel[wakee] : wakee) && $1 == waker &&
		    index($0, " " fn " "))
			printf "%.0f %.0f\n", since[p], t
		delete since[p]
	}' "$T/text"
}
# check_pair NAME WAKEE WAKER FN LINES: LINES (the plugin's) weigh what
# text_waits gives, to the rounding of each line
check_pair() {
	local want got n
	text_waits "$2" "$3" "$4" >"$T/$1.waits"
	want=$(awk '{ s += $2 - $1 } END { printf "%.0f", s / 1000 }' "$T/$1.waits")
	got=$(awk '{ s += $NF } END { print s + 0 }' "$5")
	n=$(wc -l <"$5")
	if [ "$(wc -l <"$T/$1.waits")" -gt 5 ] &&
		awk -v a="$got" -v b="$want" -v n="$n" 'BEGIN { d = a - b; if (d < 0) d = -d; exit d > n / 2 + 1 }'; then
		echo "ok $1: plugin $got us, perf script's text $want us ($(wc -l <"$T/$1.waits") waits, $n stacks)"
	else
		fail "$1: plugin $got us in $n stacks, perf script's text $want us in $(wc -l <"$T/$1.waits") waits"
	fi
}
check_pair "waiter woken by release_lock" "$waiter" "$holder" release_lock "$T/lockw"
check_pair "reader woken by write_token" "$reader" "$writer" write_token "$T/piper"

# The workload's own timing: every wait of the waiter on the lock lies in
# one of the lock waits it timed (CLOCK_MONOTONIC ns; perf records on the
# same clock), and the holder held the lock for 20 ms, so waits of a few
# ms at least are among them.
if awk 'FILENAME == ARGV[1] { a[n] = $1; b[n++] = $2; next }
	{ m++; for (i = 0; i < n; i++) if (a[i] <= $1 && $2 <= b[i]) { ok++; break }
	  if ($2 - $1 >= 2000000) long++ }
	END { printf "  %d of %d waits inside the %d the workload timed, %d of 2 ms or more\n", ok, m, n, long
	      exit !(m > 5 && ok == m && long * 2 >= m) }' "$T/log" "$T/waiter woken by release_lock.waits"; then
	echo "ok the waiter's blocked waits lie inside the lock waits the workload timed"
else fail "the waiter's blocked waits are not inside the lock waits the workload timed"; fi

# fold-report --offwake names the lock the waiter waited on (wait_for_lock,
# the frame that called the lock wait), released in release_lock by
# fkholder, for as long as the plugin's lines of it say
"$BIN/fold-report" --offwake "$T/ow.folded" "$T/ow.folded" >"$T/report.md" 2>"$T/report.err" ||
	fail "fold-report --offwake failed: $(head -2 "$T/report.err")"
want=$(awk '{ s += $NF } END { print s + 0 }' "$T/lockw")
row=$(grep -F "| \`wait_for_lock\` | \`release_lock\` | \`fkholder-$wpid/$holder\` |" "$T/report.md")
if [ -n "$row" ] && [ "$(echo "$row" | awk -F'|' '{ gsub(/ /, "", $5); print $5 }')" = "$want" ]; then
	echo "ok fold-report --offwake: wait_for_lock released in release_lock by fkholder, $want us"
else fail "fold-report --offwake: no row 'wait_for_lock | release_lock | fkholder' of $want us: $(grep -A4 '^| lock' "$T/report.md" | head -5)"; fi

# state=S keeps the same futex and pipe waits (interruptible sleeps);
# state=D keeps none of them
plugin "$T/w.data" offwake tid state=S >"$T/s.folded" 2>/dev/null || fail "offwake state=S failed"
grep -q "^fkwaiter-$wpid/$waiter;.*;--;.*;release_lock;" "$T/s.folded" || fail "state=S lost the lock waits"
plugin "$T/w.data" offwake tid state=D >"$T/d.folded" 2>/dev/null
if grep -q "^fk.*;wait_for_lock;.*;--;" "$T/d.folded"; then fail "state=D kept the lock waits (S)"
else echo "ok state=S keeps the lock waits, state=D does not"; fi
# min=: waits shorter than 5 ms go; the pipe's (10 ms) and lock's (15 ms) stay
plugin "$T/w.data" offwake tid min=5000 >"$T/min.folded" 2>"$T/min.err" || fail "offwake min=5000 failed"
grep -q ' us left out' "$T/min.err" || fail "min=: no count of the waits left out"
if grep -q "^fkreader-$wpid/$reader;.*;write_token;" "$T/min.folded"; then
	echo "ok min=5000: $(grep -m1 ' us left out' "$T/min.err" | cut -c10-80)"
else fail "min=5000 lost the reader's 10 ms waits"; fi

# no sched_waking in a recording: said, exit 1
perf record -q -e sched:sched_switch -a -g -o "$T/sw.data" -- sleep 0.2 >/dev/null 2>&1
if plugin "$T/sw.data" offwake >"$T/none.out" 2>"$T/none.err"; then
	fail "a recording without sched_waking passed"
elif grep -q 'no sched:sched_waking samples' "$T/none.err"; then
	echo "ok a recording without sched_waking: $(grep -m1 'no sched' "$T/none.err" | cut -c1-100)"
else fail "a recording without sched_waking: $(head -2 "$T/none.err")"; fi

exit $FAILED
