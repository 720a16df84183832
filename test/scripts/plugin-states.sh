#!/bin/bash
# plugin-states.sh - the perf dlfilter's states mode (--dlarg states) on a
# recording of sched_switch, sched_waking and sched_wakeup_new made here
# and now of test/workloads/fkstates.c (threads on a CPU, runnable,
# sleeping and blocked): per workload thread, each of the four times
# agrees within 1% (or what timehist's microseconds can tell, below) with
# `perf sched timehist` on the same recording - its
# run time; its wait time after a switch-out in R (or R+) as runnable;
# after one in S (or any other state) and in D its sch delay as runnable
# and the rest as sleeping or blocked - plus the time before the thread's
# first run and after its last switch-out, which timehist does not count
# and this test reads from perf script's text.  A thread's four times add
# up to the recording; the TSV's header comes first; bad uses are refused.
#
# Every thread's row agrees too with a replay of perf script's text (the
# sched records by the kernel's ids, named by the switch-outs' samples).
# In a PID namespace (plugin-states-ns.sh; a container), the samples'
# ids are the namespace's and the tracepoints' the kernel's: there the
# replay is the reference, not timehist, which looks a wake-up's thread
# up by the kernel's pid and a switch's by the namespace's tid, so that
# no wake-up reaches the thread it woke and its time runnable is lost
# (its sch delay is 0; it shows as "awakened: :KERNEL-TID"); the rows are
# the replay's rows, no more (no row under a pid it does not belong to),
# and the threads outside the namespace are said to be left out.
set -u
. "$(dirname "$0")/plugin-lib.sh"

SW=sched:sched_switch
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$T/fkstates" "$ROOT/test/workloads/fkstates.c" ||
	{ echo "cannot build the workload" >&2; exit 1; }
# it runs across the whole recording (no thread of it starts or exits in
# the window) and is stopped once the recording is made
"$T/fkstates" 120000 &
wpid=$! hostile=
trap 'kill $wpid $hostile 2>/dev/null; rm -rf "$T"' EXIT
hostile_sleeper
# wait (no fixed sleep: the machine may be loaded) for its threads' names
for _ in $(seq 600); do
	grep -qx forker /proc/$wpid/task/*/comm 2>/dev/null &&
		grep -qx napper /proc/$wpid/task/*/comm 2>/dev/null && break
	sleep 0.05
done
lost() { perf report -i "$1" --stats 2>/dev/null | grep -c 'LOST'; }
for try in 1 2 3; do
	rm -f "$T/st.data"
	perf record -q -m 2M -e $SW -e sched:sched_waking -e sched:sched_wakeup_new -a -g \
		-o "$T/st.data" -- sleep 0.8 >/dev/null 2>"$T/rec.err" ||
		perf record -q -e $SW -e sched:sched_waking -e sched:sched_wakeup_new -a -g \
			-o "$T/st.data" -- sleep 0.8 >/dev/null 2>"$T/rec.err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(lost "$T/st.data")" != 0 ] || break
	echo "   (perf lost events in recording $try)"
done
kill -0 $wpid 2>/dev/null || fail "the workload ended during the recording"
[ $rc -eq 0 ] || unavailable "perf record of the sched tracepoints failed: $(head -3 "$T/rec.err")"
[ "$(lost "$T/st.data")" = 0 ] || { fail "perf lost events in each of three recordings: the machine is too busy to test"; exit 1; }

plugin "$T/st.data" states >"$T/st.tsv" 2>"$T/st.err" ||
	{ fail "states failed: $(head -3 "$T/st.err")"; exit 1; }
[ "$(head -1 "$T/st.tsv")" = "$(printf 'pid\ttid\tcomm\ton_cpu_us\trunnable_us\tsleeping_us\tblocked_us')" ] &&
	echo "ok the header comes first" || fail "states: bad header: $(head -1 "$T/st.tsv")"
grep -q 'states of [0-9]* threads over' "$T/st.err" || fail "states does not say the window on stderr"

# the recording's window, from perf's text (microseconds)
perf script -i "$T/st.data" -F cpu,time,event,trace 2>/dev/null |
	perf_records '^ *\[[0-9]+\] +[0-9]+\.[0-9]+: ' >"$T/text"
# In a PID namespace? (as fp-record tells: not the initial one's link)
pidns=$(readlink /proc/self/ns/pid 2>/dev/null)
[ -n "$pidns" ] && [ "$pidns" != "pid:[4026531836]" ] && pidns=1 || pidns=
if [ -n "${FK_OUTER_PIDNS:-}" ]; then
	[ -n "$pidns" ] && [ "$(readlink /proc/self/ns/pid)" != "$FK_OUTER_PIDNS" ] &&
		echo "ok in a new PID namespace" || fail "not in a new PID namespace"
fi

# The replay: perf script's text with each record's sample ids and
# nanoseconds; per thread (by the kernel's tid), the model of states.h:
# a switch-out ends a run and begins runnable time (R, R+), sleeping, or
# blocked (D alone); a dead thread (X, Z) is gone; its first wake-up after
# a sleep begins runnable time; a switch-in begins a run; a switch-out
# whose switch-in is missing began its run at the CPU's previous switch
# (or at the thread's last change, if later); before its first event a
# thread was on a CPU (a switch-out), runnable (a switch-in), asleep (a
# wake-up) or not yet made (sched_wakeup_new); a record of a thread older
# than one seen is left out.  Each thread named by its switch-outs'
# sample ids (perf's), if one had them; $T/k2n maps the kernel's tids.
perf script -i "$T/st.data" --ns -F pid,tid,cpu,time,event,trace 2>/dev/null |
	perf_records '^ *-?[0-9]+/-?[0-9]+ +\[[0-9]+\] +[0-9]+\.[0-9]+: ' |
	awk -v map="$T/k2n" "$AWK_SWITCH"'
function ns(s,   a) { sub(/:$/, "", s); split(s, a, "."); return a[1] * 1000000000 + a[2] }
function cls(s) { return s ~ /^[XZ]/ ? -2 : s ~ /^R/ ? 1 : (s ~ /^D/ && s !~ /S/) ? 3 : 2 }
function enter(x, k, t) { if (st[x] >= 0 && t > since[x]) acc[x, st[x]] += t - since[x]; st[x] = k; since[x] = t }
function ev(x, t, h) {
	if (!(x in seen)) { first[x] = t; head[x] = h; st[x] = -1; seen[x] = t; return 1 }
	if (t < seen[x]) { late++; return 0 }
	seen[x] = t; return 1
}
{
	split($1, id, "/"); cpu = $2; t = ns($3); e = $4
	if (!n++ || t < w0) w0 = t; if (t > w1) w1 = t
	if (e == "sched:sched_switch:") {
		if (!switch_fields($0)) next
		had = cpu in last; tprev = last[cpu]; if (!had || t > tprev) last[cpu] = t
		if (prev > 0) {
			if (id[2] > 0) { ptid[prev] = id[2]; ppid[prev] = id[1] }
			if (ev(prev, t, 0)) {
				if (st[prev] != 0 && st[prev] != -1 && had) {
					c = tprev > since[prev] ? tprev : since[prev]; if (c > t) c = t
					enter(prev, 0, c)
				}
				if (st[prev] < 0) { st[prev] = 0; since[prev] = t }
				enter(prev, cls(state), t)
			}
		}
		if (nxt > 0 && ev(nxt, t, 1)) {
			if (st[nxt] < 0) { st[nxt] = 0; since[nxt] = t }
			else if (st[nxt] != 0) enter(nxt, 0, t)
		}
	} else if (e ~ /^sched:sched_wak(ing|eup_new):$/) {
		if (!match($0, / pid=-?[0-9]+ prio=-?[0-9]+ target_cpu=[0-9]+$/)) next
		split(substr($0, RSTART + 1), a, /[ =]/); x = a[2]
		if (x <= 0 || !ev(x, t, e ~ /new/ ? -1 : 2)) next
		if (st[x] < 0) { st[x] = 1; since[x] = t }
		else if (st[x] >= 2) enter(x, 1, t)
	}
} END {
	for (x in seen) {
		if (st[x] >= 0) enter(x, -2, w1 > since[x] ? w1 : since[x])
		if (head[x] >= 0 && first[x] > w0) acc[x, head[x]] += first[x] - w0
		if (!(x in ptid)) continue
		print x, ptid[x] > map
		printf "%s\t%s", ppid[x], ptid[x]
		for (k = 0; k < 4; k++) printf "\t%.0f", acc[x, k] / 1000
		printf "\n"
	}
}' >"$T/replay"
read -r w0 w1 < <(awk '{ t = $2; sub(/:$/, "", t); t += 0; if (!n++ || t < a) a = t; if (t > b) b = t }
	END { printf "%.6f %.6f\n", a, b }' "$T/text")
span=$(awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.0f\n", (b - a) * 1e6 }')

# every workload thread: its four states add up to the window (2 us: the
# window read from perf's text in whole microseconds); no thread of any
# process is longer than the window
if awk -F'\t' -v pid="$wpid" -v span="$span" 'NR > 1 {
	s = $4 + $5 + $6 + $7
	if (s > span + 2) { bad++; print "  thread " $2 ": " s " us in a window of " span " us" }
	if ($1 != pid) next
	n++; d = s - span; if (d < 0) d = -d
	if (d > 2) { bad++; print "  workload thread " $2 " (" $3 "): " s " us, window " span " us" }
} END { exit bad > 0 || n < 4 }' "$T/st.tsv" >"$T/sums"; then
	echo "ok every workload thread's states add up to the window ($span us)"
else fail "states do not add up to the window: $(head -3 "$T/sums")"; fi
# the window in whole us on stderr is what a thread there all along adds
# up to, exactly (fp-record gives the threads that never switched that)
us=$(sed -n 's/.*states of [0-9]* threads* over [0-9.]* s, \([0-9]*\) us (times in us).*/\1/p' "$T/st.err")
[ -n "$us" ] && awk -F'\t' -v pid="$wpid" -v us="$us" '$1 == pid { n++; if ($4 + $5 + $6 + $7 != us) bad++ }
	END { exit bad > 0 || n < 4 }' "$T/st.tsv" &&
	echo "ok the window said in us ($us) is each workload thread's sum" ||
	fail "the window on stderr ('$us' us) is not the workload threads' sum: $(grep 'states of' "$T/st.err")"
# each state is there: hogs runnable (more hogs than CPUs), the napper
# asleep, the forker blocked (in vfork)
awk -F'\t' -v pid="$wpid" '$1 == pid && $3 ~ /^hog-/ && $4 > 0 && $5 > 0 { h++ }
	$1 == pid && $3 == "napper" && $6 > 0 { n++ } $1 == pid && $3 == "forker" && $7 > 0 { f++ }
	END { exit !(h >= 2 && n == 1 && f == 1) }' "$T/st.tsv" &&
	echo "ok on-CPU, runnable, sleeping and blocked time where the workload spends it" ||
	fail "states: a workload thread lacks the state it spends time in: $(grep -P "^$wpid\t" "$T/st.tsv" | head -5)"

# The time timehist leaves out, per workload thread and state, from perf's
# text: before the thread's first switch-out, up to the CPU's switch
# before it (where timehist's first run begins), in the state its first
# event implies (on a CPU for a switch-out, runnable for a switch-in,
# asleep for a wake-up); and after its last switch-out, in the state of
# that switch-out, a wake-up then making it runnable, a switch-in
# running.  Also each switch's state by time and CPU, for timehist's lines.
# (In a PID namespace, the records' kernel tids are read as perf's, by
# the replay's map; one perf never named is no workload thread: k+tid.)
awk -v pid="$wpid" -v w0="$w0" -v w1="$w1" -v map="${pidns:+$T/k2n}" "$AWK_SWITCH"'
function cls(s) { return s ~ /^R/ ? 1 : s ~ /^D/ ? 3 : s ~ /^[XZ]/ ? -1 : 2 }
function add(x, k, from, to) { if (k >= 0 && to > from) acc[x, k] += to - from }
function id(x) { return map == "" ? x : (x in k2n) ? k2n[x] : "k" x }
BEGIN { while (map != "" && (getline l < map) > 0) { split(l, m, " "); k2n[m[1]] = m[2] } }
FILENAME == ARGV[1] { mine[$1] = 1; next }
{
	t = $2; sub(/:$/, "", t); t += 0; cpu = $1; ev = $3
	if (ev == "sched:sched_switch:") {
		if (!switch_fields($0)) next
		prev = id(prev); nxt = id(nxt)
		printf "%.6f %s %s\n", t, cpu, state > "'"$T/states"'"
		tprev = (cpu in last) ? last[cpu] : -1; last[cpu] = t
		brought = lastnext[cpu]; lastnext[cpu] = nxt
		if (prev in mine) {
			x = prev
			# its switch-in not recorded (the kernel leaves out some
			# from the idle task): it lies between the CPU'"'"'s previous
			# switch and this one, which neither tool knows
			if (tprev >= 0 && brought != x) unk[x] += t - tprev
			if (!(x in st)) { st[x] = 0; since[x] = w0 }	# on a CPU
			if (!(x in out)) {	# the head, up to timehist'"'"'s first run
				c = tprev < 0 ? t : tprev >= since[x] ? tprev : since[x]
				add("h" x, st[x], since[x], c)
				if (st[x] != 0) { st[x] = 0; since[x] = c }
			}
			out[x] = 1; delete acc["t" x, 0]; delete acc["t" x, 1]
			delete acc["t" x, 2]; delete acc["t" x, 3]
			st[x] = cls(state); since[x] = t
			# asleep, though woken since it came on the CPU: a
			# raced sleep, runnable for runq (and 0 for offcpu)
			# from here, sleeping for the states as for timehist
			if ((st[x] == 2 || st[x] == 3) && woke[x]) racefrom[x] = t
			delete woke[x]
		}
		if (nxt in mine) {
			x = nxt
			if (x in racefrom) { race[x] += t - racefrom[x]; delete racefrom[x] }
			delete woke[x]
			if (!(x in st)) { st[x] = 1; since[x] = w0 }
			if (st[x] != 0) { add((x in out ? "t" : "h") x, st[x], since[x], t); st[x] = 0; since[x] = t }
		}
	} else if (ev ~ /^sched:sched_wak(ing|eup_new):$/) {
		if (!match($0, / pid=-?[0-9]+ prio=-?[0-9]+ target_cpu=[0-9]+$/)) next
		split(substr($0, RSTART + 1), a, /[ =]/); x = id(a[2])
		if (!(x in mine)) next
		if ((x in st) && st[x] == 0) woke[x] = 1
		if (!(x in st)) { st[x] = 2; since[x] = w0 }
		if (st[x] == 2 || st[x] == 3) { add((x in out ? "t" : "h") x, st[x], since[x], t); st[x] = 1; since[x] = t }
	}
} END {
	for (x in mine) {
		if (x in st) add((x in out ? "t" : "h") x, st[x], since[x], w1)
		printf "%s", x
		for (k = 0; k < 4; k++) printf " %.0f", acc["h" x, k] * 1e6
		for (k = 0; k < 4; k++) printf " %.0f", acc["t" x, k] * 1e6
		printf " %.0f %.0f\n", unk[x] * 1e6, race[x] * 1e6
	}
}' <(awk -F'\t' -v pid="$wpid" '$1 == pid { print $2 }' "$T/st.tsv") "$T/text" >"$T/edges"

# Outside a PID namespace, the reference is perf sched timehist; inside
# one, it cannot tell the time runnable (see above): the replay is.
if [ -z "$pidns" ]; then
	# perf sched timehist's lines (read from their end: a name may hold
	# blanks): time, CPU, tid, wait, sch delay, run (ms); the state of the
	# switch that ended each run, from perf's text; each wait's state is that
	# of the thread's line before
	perf sched timehist -i "$T/st.data" --no-call-graph >"$T/timehist" 2>/dev/null ||
		{ fail "perf sched timehist failed"; exit 1; }
	awk -v pid="$wpid" 'FILENAME == ARGV[1] { s[sprintf("%.6f", $1) " " $2] = $3; next }
	NF >= 6 && $2 ~ /^\[[0-9]+\]$/ {
		task = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ *$/, "", task)
		if (!match(task, /\[[0-9]+(\/[0-9]+)?\]$/)) next
		n = split(substr(task, RSTART + 1, RLENGTH - 2), a, "/")
		tid = a[1]; p = n > 1 ? a[2] : a[1]
		if (p != pid) next
		cpu = $2; gsub(/[][]/, "", cpu); cpu += 0
		key = sprintf("%.6f", $1) " [" sprintf("%03d", cpu) "]"
		wait = $(NF - 2) * 1000; delay = $(NF - 1) * 1000; run = $NF * 1000
		# a thread'"'"'s first line has no wait, but may have a sch delay (from
		# a wake-up before its first switch-out): the time before is the
		# edges'"'"' (above)
		first = !(tid in prevst)
		lines[tid]++
		# timehist truncates each number to the microsecond: half a
		# microsecond each, on average, is added back (none to a difference
		# of two)
		on[tid] += run + 0.5
		ps = prevst[tid]
		if (first) ;
		else if (ps ~ /^R/) rq[tid] += wait + 0.5
		else if (ps ~ /^D/) { rq[tid] += delay + 0.5; bl[tid] += wait - delay }
		else { rq[tid] += delay + 0.5; sl[tid] += wait - delay }
		prevst[tid] = (key in s) ? s[key] : "?"
		if (!(key in s)) miss++
	} END {
		for (t in lines) printf "%s %.0f %.0f %.0f %.0f %d\n", t, on[t], rq[t], sl[t], bl[t], lines[t]
		if (miss) print "unmatched " miss > "/dev/stderr"
	}' "$T/states" "$T/timehist" >"$T/theirs" 2>"$T/unmatched"
	[ -s "$T/unmatched" ] && fail "timehist lines without their switch in perf's text: $(cat "$T/unmatched")"

	# plugin = timehist + what timehist leaves out, per thread and state:
	# within 1%; where 1% is less than what timehist's truncation of each
	# line's numbers can leave, within that.  Each number a line prints is cut
	# to the microsecond; half a microsecond is added back above, but that is
	# the mean only where the cut-off parts are spread evenly, and a thread
	# whose waits and sch delays all last about the same (the forker's sch
	# delays are 3 or 8 us nearly every time: in one recording of forty, its
	# 414 sleeps came out 71 us short in timehist, 0.17 us a line)
	# keeps a bias: up to half a microsecond a line for a time one number
	# gives (on a CPU, runnable), up to one for a difference of two (sleeping
	# and blocked: wait less sch delay).  That bound, plus 2 us; and where a
	# run's switch-in is not in the recording, give or take the time from the
	# CPU's switch before (timehist starts the run there, the plugin at the
	# thread's wake-up if later)
	if awk 'FILENAME == ARGV[1] { for (k = 0; k < 4; k++) e[$1, k] = $(k + 2) + $(k + 6); unk[$1] = $10; next }
		FILENAME == ARGV[2] { for (k = 0; k < 4; k++) th[$1, k] = $(k + 2); ln[$1] = $6; next }
		$1 ~ /^[0-9]+$/ && ($2 in ln) {
		n++
		for (k = 0; k < 4; k++) {
			want = th[$2, k] + e[$2, k]; got = $(k + 4); d = got - want; if (d < 0) d = -d
			tol = want / 100; r = ln[$2] * (k < 2 ? 0.5 : 1) + 2; if (tol < r) tol = r
			tol += unk[$2]; unknown += unk[$2] / 4
			if (want > 0 && d / want > worst) { worst = d / want; wk = $3 " " name[k] }
			if (d > tol) { bad++; printf "  thread %s (%s) %s: plugin %d us, timehist %d + %d us\n", $2, $3, name[k], got, th[$2, k], e[$2, k] }
			sum_got[k] += got; sum_want[k] += want
		}
	} BEGIN { split("on_cpu runnable sleeping blocked", nm, " "); for (k = 0; k < 4; k++) name[k] = nm[k + 1] }
	END {
		for (k = 0; k < 4; k++) {
			d = sum_got[k] - sum_want[k]; if (d < 0) d = -d
			printf "  %s: plugin %d us, timehist %d us\n", name[k], sum_got[k], sum_want[k]
			if (d > sum_want[k] / 100) bad++
		}
		printf "  %d threads; worst per-thread difference %.3f%% (%s); runs whose switch-in perf did not record: %d us\n", n, worst * 100, wk, unknown
		exit bad > 0 || n < 4
	}' "$T/edges" "$T/theirs" FS='\t' "$T/st.tsv"; then
		echo "ok per-thread states agree with perf sched timehist within 1% (or its microseconds)"
	else fail "states differ from perf sched timehist"; fi
else
	echo "   (in a PID namespace: perf sched timehist not a reference there; the replay below is)"
fi

# The replay, per thread perf named: its row (each time to 1 us, rounded
# apart: 2 us, or 1%); in a PID namespace, every row is one of the
# replay's, the threads outside it left out and counted.  Rows are
# joined by pid and tid: a thread under another's pid has no match.
if awk -F'\t' -v ns="$pidns" 'FILENAME == ARGV[1] { r[$1 "\t" $2] = $3 " " $4 " " $5 " " $6; next }
FNR > 1 {
	k = $1 "\t" $2; if (k in row) { bad++; print "  listed twice: " $0 }; row[k] = 1
	if (!(k in r)) { if (ns) { bad++; print "  not a thread perf named: " $0 }; next }
	split(r[k], a, " "); n++
	for (i = 1; i <= 4; i++) { d = a[i] - $(i + 3); if (d < 0) d = -d; tol = a[i] / 100; if (tol < 2) tol = 2
		if (d > tol) { bad++; print "  thread " $2 " (" $3 ") " name[i] ": plugin " $(i + 3) " us, replay " a[i] " us" } }
} BEGIN { split("on_cpu runnable sleeping blocked", name, " ") }
END { for (k in r) if (!(k in row)) { bad++; print "  no row for thread " k " of the replay" }
	printf "  %d threads compared\n", n; exit bad > 0 || n < 4 }' "$T/replay" "$T/st.tsv" >"$T/replay.cmp"; then
	echo "ok per-thread states agree with a replay of perf's text by the kernel's ids ($(tail -1 "$T/replay.cmp" | sed 's/^ *//')$([ -n "$pidns" ] && echo ', in a PID namespace: the reference'))"
else fail "states differ from the replay of perf's text$([ -n "$pidns" ] && echo ' (in a PID namespace)'): $(head -5 "$T/replay.cmp")"; fi
if [ -n "$pidns" ]; then
	grep -q "threads outside perf's PID namespace (no pid in the recording) left out" "$T/st.err" &&
		echo "ok in a PID namespace: the threads outside it left out, and said" ||
		fail "in a PID namespace, no thread said to be outside it: $(head -4 "$T/st.err")"
fi

# The off-CPU profiles on the same recording, per workload thread (-tid):
# offcpu's waits (S, D) end at their wake-up, so they add up to the
# thread's sleeping and blocked time; runq's to its runnable time; less
# the time before the thread's first switch-out (offcpu counts waits from
# there).  Each stack is rounded to 1 us: within 1%, or 1 us a stack.
for mode in offcpu runq; do
	plugin "$T/st.data" $mode tid "pid=$wpid" >"$T/$mode.folded" 2>"$T/$mode.err" ||
		{ fail "$mode failed: $(head -3 "$T/$mode.err")"; continue; }
	grep -q 'waits woken (sched:sched_waking)' "$T/$mode.err" ||
		fail "$mode does not say it used the wake-ups: $(head -3 "$T/$mode.err")"
	if awk -v mode=$mode 'FILENAME == ARGV[1] { for (k = 0; k < 4; k++) h[$1, k] = $(k + 2); race[$1] = $11; next }
	FILENAME == ARGV[2] {
		if (!match($0, /-[0-9]+\/[0-9]+;/)) next
		split(substr($0, RSTART + 1, RLENGTH - 2), a, "/"); us[a[2]] += $NF; nst[a[2]]++; next }
	$1 ~ /^[0-9]+$/ && ($2 in us) {
		want = mode == "runq" ? $5 - h[$2, 1] + race[$2] : $6 + $7 - h[$2, 2] - h[$2, 3] - race[$2]
		d = us[$2] - want; if (d < 0) d = -d; tol = want / 100; if (tol < nst[$2] + 2) tol = nst[$2] + 2
		n++; if (d > tol) { bad++; printf "  thread %s (%s): %s %d us, states %d us\n", $2, $3, mode, us[$2], want }
	} END { exit bad > 0 || n < 2 }' "$T/edges" "$T/$mode.folded" FS='\t' "$T/st.tsv" >"$T/$mode.cmp"; then
		echo "ok $mode per thread: the states' $([ $mode = runq ] && echo runnable || echo sleeping and blocked) time"
	else fail "$mode differs from the states: $(head -4 "$T/$mode.cmp")"; fi
done
if plugin "$T/st.data" runq state=S >/dev/null 2>"$T/bad.err"; then fail "runq state=S was accepted"
else grep -q 'runq counts the time runnable' "$T/bad.err" && echo "ok runq with state= refused" ||
	fail "runq state=S: $(head -2 "$T/bad.err")"; fi

# pid= keeps the workload's threads alone; bad uses are refused (exit 2
# for usage: perf's exit is non-zero)
plugin "$T/st.data" states "pid=$wpid" >"$T/pid.tsv" 2>/dev/null &&
	[ "$(awk -F'\t' -v p="$wpid" 'NR > 1 && $1 != p' "$T/pid.tsv" | wc -l)" = 0 ] &&
	[ "$(wc -l <"$T/pid.tsv")" -ge 5 ] &&
	echo "ok pid= keeps the process's threads" || fail "states pid= keeps other threads or none"
if plugin "$T/st.data" states offcpu >/dev/null 2>"$T/bad.err"; then fail "states offcpu was accepted"
else grep -q 'states writes one table' "$T/bad.err" && echo "ok states with offcpu refused" ||
	fail "states offcpu: $(head -2 "$T/bad.err")"; fi
# a recording of sched_switch alone: states without wake-ups, said
perf record -q -e $SW -a -o "$T/sw.data" -- sleep 0.2 >/dev/null 2>&1
plugin "$T/sw.data" states >"$T/sw.tsv" 2>"$T/sw.err" && grep -q 'no sched:sched_waking samples' "$T/sw.err" &&
	echo "ok a recording without wake-ups is said to lack them" ||
	fail "states on sched_switch alone: $(head -3 "$T/sw.err")"
# a recording of other events: refused
perf record -q -e cpu-clock -a -o "$T/cc.data" -- sleep 0.1 >/dev/null 2>&1
if plugin "$T/cc.data" states >/dev/null 2>"$T/cc.err"; then fail "states of a cpu-clock recording exited 0"
else grep -q "no $SW samples" "$T/cc.err" && echo "ok a recording without switches refused" ||
	fail "states of cpu-clock: $(head -2 "$T/cc.err")"; fi
exit $FAILED
