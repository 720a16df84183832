#!/bin/bash
# offcpu-unwind.sh - off-CPU stacks through a libc without frame pointers.
# fp-record --off records the bundled multi-process C++ server
# (test/workloads/waitsrv.cpp, built with frame pointers; Debian's libc
# and libstdc++ have none) here and now, with its default stack dumps.
# The server times each of its own waits (mutexes, condition variables,
# sleeps, sockets, epoll, joins, waitpid), each a call into libc or
# libstdc++ made by a function of the program, and reports them per
# thread and function.  Checked against that:
#  - at least 95% of the off-CPU time of its threads is in stacks whose
#    innermost of the program's wait functions is one the thread waited
#    in (with frame pointers alone, none: the caller of the libc function
#    is what the kernel's walk loses);
#  - no thread has more off-CPU time under a function than it spent
#    waiting there by its own clock (+2% +2 ms): no wait is put under a
#    function it was not made in;
#  - the plugin says how much of the time it repaired, and its split
#    index.tsv gives each process's repaired and unrepaired time;
#    fp-record's report.md says the same share (and with --stack-dump=0
#    that the stacks are the frame-pointer chains alone);
#  - folded without offcpu, each switch counts once (the dumps are the
#    switches' twins, not switches);
#  - a recording of dumps alone (perf record --call-graph dwarf) is folded
#    by the plugin's offcpu mode from the dumps, as well.
# The same capture without dumps (--stack-dump=0) is folded too, and its
# figures printed, for comparison.
set -u
. "$(dirname "$0")/plugin-lib.sh"

PIDS_TO_KILL=()
cleanup() {
	local p
	for p in "${PIDS_TO_KILL[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

FPR=$BIN/fp-record
[ -x "$FPR" ] || { echo "no $FPR: run make" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || unavailable "fp-record's off-CPU recording needs root"
command -v c++ >/dev/null 2>&1 || unavailable "no C++ compiler for the workload"
[ "$(uname -m)" = x86_64 ] || unavailable "the stack unwinding is x86-64's"
export FOLDKIT_PERF=perf
# a sanitizer build of the plugin needs its runtime loaded into perf
if [ ${#PLUGIN_ENV[@]} -gt 0 ]; then
	REAL_PERF=$(command -v perf)
	{
		echo '#!/bin/sh'
		echo 'case " $* " in *" --dlfilter "*)'
		printf '  exec env %q %q %q "$@";;\n' "${PLUGIN_ENV[@]}" "$REAL_PERF"
		echo 'esac'
		printf 'exec %q "$@"\n' "$REAL_PERF"
	} >"$T/perf-san"
	chmod +x "$T/perf-san"
	FOLDKIT_PERF=$T/perf-san
fi
chmod 755 "$T"
S=$T/waitsrv
c++ -O2 -g -fno-omit-frame-pointer -pthread -o "$S" "$ROOT/test/workloads/waitsrv.cpp" ||
	{ echo "cannot build waitsrv" >&2; exit 1; }

# check.awk REPORT FOLDED...: the folded files of fp-record (off/COMM-PID.folded,
# each stack's first frame the thread's name, counts in us) against the
# server's report (PID TID THREAD FUNCTION CALLS NS); prints the shares
# of the threads' off-CPU time and each overweight function, and fails
# when a function is overweight or less than 95% is at a right one
cat >"$T/check.awk" <<'EOF'
FNR == NR {
	k = $1 SUBSEP $3
	site[k, $4] = 1; wall[k, $4] += $6 / 1000; known[k] = 1
	next
}
# fp-record names its files by process and role: their pids are in the
# index.tsv beside them; a split directory's are COMM-PID.folded
FNR == 1 {
	pid = ""; dir = FILENAME; sub(/\/[^\/]*$/, "", dir); base = substr(FILENAME, length(dir) + 2)
	while ((getline line < (dir "/index.tsv")) > 0) {
		split(line, c, "\t")
		if (c[1] == base) pid = c[3]
	}
	close(dir "/index.tsv")
	if (pid == "") { n = split(FILENAME, p, "-"); pid = p[n]; sub(/\.folded$/, "", pid) }
}
{
	w = $NF; nf = split(substr($0, 1, length($0) - length(w) - 1), f, ";")
	k = pid SUBSEP f[1]
	if (!(k in known)) next
	total += w
	for (i = nf; i >= 2; i--)
		if ((k, f[i]) in site) { attr[k, f[i]] += w; good += w; next }
	for (i = 2; i <= nf; i++)
		if (f[i] ~ /^waitsrv::/) { prog += w; next }
	none += w
}
END {
	if (!total) { print "no off-CPU time of the server's threads"; exit 1 }
	printf "%.0f us off-CPU: %.2f%% under a function it waited in, %.2f%% under another of the program's, %.2f%% under none\n",
		total, 100 * good / total, 100 * prog / total, 100 * none / total
	for (a in attr) {
		split(a, x, SUBSEP)
		if (attr[a] > wall[a] * 1.02 + 2000) {
			printf "overweight: process %s thread %s %s: %.0f us off-CPU, %.0f us waited\n",
				x[1], x[2], x[3], attr[a], wall[a]
			bad = 1
		}
	}
	exit(bad || good < 0.95 * total)
}
EOF

lost() { perf report -i "$1" --stats 2>/dev/null | grep -c 'LOST'; }

# capture NAME [FP-RECORD-OPTION...]: $T/NAME (fp-record's DIR) and
# $T/NAME.report, with up to three tries for a recording in which perf
# lost no event (a loaded machine: waits without their ends prove
# nothing).  perf runs before the machine's other work (nice -10: a perf
# that a load of 8 keeps off the CPU loses events whatever its buffer).
capture() {
	local name=$1 try
	shift
	for try in 1 2 3; do
		rm -rf "${T:?}/$name" "$T/$name.report"
		nice -n -10 "$FPR" --off -d 60 -o "$T/$name" --keep-data "$@" -- "$S" 1500 "$T/$name.report" \
			>"$T/$name.out" 2>"$T/$name.err" ||
			{ fail "$name: fp-record failed: $(tail -3 "$T/$name.err")"; return 1; }
		[ "$(lost "$T/$name/off.data")" = 0 ] && return 0
		echo "   ($name: perf lost events in recording $try)"
	done
	fail "$name: perf lost events in each of three recordings: the machine is too busy to test"
	return 1
}

# ---- 1. the default capture: the stacks reach the program ----
if capture dumps; then
	# the workload's three processes, each with its report
	[ "$(awk '{ print $1 }' "$T/dumps.report" | sort -u | wc -l)" -eq 3 ] ||
		fail "the server's report holds not 3 processes"
	[ "$(ls "$T/dumps/off/"waitsrv*.folded | wc -l)" -eq 3 ] ||
		fail "not 3 off-CPU profiles: $(ls "$T/dumps/off")"
	perf evlist -i "$T/dumps/off.data" 2>/dev/null | grep -c '^sched:sched_switch$' | grep -qx 2 ||
		fail "the default capture has not two sched_switch events: $(perf evlist -i "$T/dumps/off.data" 2>&1 | tr '\n' ' ')"
	if out=$(awk -f "$T/check.awk" "$T/dumps.report" "$T/dumps/off/"waitsrv*.folded); then
		echo "ok with stack dumps: $out"
	else
		fail "with stack dumps: $out"
	fi
	# what the plugin says of it, and writes in its index
	env "${PLUGIN_ENV[@]}" perf script -i "$T/dumps/off.data" --dlfilter "$PLUGIN" \
		--dlarg offcpu --dlarg split="$T/split" >/dev/null 2>"$T/dumps.notes" ||
		fail "the plugin failed on the capture: $(head -3 "$T/dumps.notes")"
	grep -Eq '^foldkit: off-CPU stacks repaired from stack dumps: [0-9.]+% of the time' "$T/dumps.notes" ||
		fail "the plugin does not say what it repaired: $(cat "$T/dumps.notes")"
	awk -F'\t' 'NR == 1 { ok = $8 == "repaired_us" && $9 == "unrepaired_us" && $10 == "unrepaired_why"; next }
		$2 ~ /^waitsrv/ { n++; if ($8 + $9 == 0 || $8 < 0.95 * ($8 + $9)) bad = bad " " $3 ":" $8 "/" $9 }
		END { exit !(ok && n == 3 && bad == "") }' "$T/split/index.tsv" &&
		echo "ok index.tsv: each server process's off-CPU time repaired" ||
		fail "index.tsv's repair columns: $(cat "$T/split/index.tsv")"
	# fp-record's report says the same share (the plugin's columns of the
	# server's processes)
	want=$(awk -F'\t' '$2 ~ /^waitsrv/ { f += $8; n += $9 }
		END { if (f + n) printf "%.1f%%", 100 * f / (f + n) }' "$T/split/index.tsv")
	grep -q "^- Off-CPU stacks repaired .*--stack-dump=1024): $want of the off-CPU time" \
		"$T/dumps/report.md" &&
		echo "ok report.md: $want of the off-CPU time repaired" ||
		fail "report.md does not say $want repaired: $(grep -i 'off-cpu stacks' "$T/dumps/report.md")"

	# ---- 2. without offcpu, each switch once ----
	data=$T/dumps/off.data
	# the samples of each event, in perf evlist's order: the frame-pointer
	# event first
	fp_samples=$(perf report -i "$data" --stats 2>/dev/null | awk '/SAMPLE events:/ { n++; if (n == 2) print $3 }')
	# (the plugin keeps the first event it is handed, as fp-collapse
	# does: which comes first is the recording's chance, so it is named)
	plain=$(env "${PLUGIN_ENV[@]}" perf script -i "$data" --dlfilter "$PLUGIN" \
		--dlarg event=sched:sched_switch 2>"$T/plain.err" |
		awk '{ s += $NF } END { print s + 0 }')
	[ -n "$fp_samples" ] && [ "$plain" = "$fp_samples" ] &&
		echo "ok without offcpu: $plain switches, each once" ||
		fail "without offcpu: $plain switches counted, the recording has $fp_samples ($(head -2 "$T/plain.err"))"
fi

# ---- 3. frame pointers alone, for comparison ----
if capture fp --stack-dump=0; then
	perf evlist -i "$T/fp/off.data" 2>/dev/null | grep -c '^sched:sched_switch$' | grep -qx 1 ||
		fail "--stack-dump=0 records not one sched_switch event"
	grep -q '^- Off-CPU stacks: the frame-pointer chains alone (--stack-dump=0)' "$T/fp/report.md" ||
		fail "--stack-dump=0: report.md does not say its stacks are the frame-pointer chains alone"
	echo "   with frame pointers alone: $(awk -f "$T/check.awk" "$T/fp.report" "$T/fp/off/"waitsrv*.folded | head -1)"
fi

# ---- 4. dumps alone, as perf record --call-graph dwarf makes them ----
# The server runs until told to stop (however long a loaded machine takes
# to start it and the recordings), so its ending during the recording is
# a failure of its own.
rm -f "$T/dwarf.report"
"$S" 0 "$T/dwarf.report" &
W=$!
PIDS_TO_KILL+=("$W")
# its 17 threads (3 in the main process, 7 in each worker): 6000 looks
# (five minutes and more) before a server that never starts them fails
tids=
for _ in $(seq 6000); do
	kill -0 "$W" 2>/dev/null || break
	tids=$(for p in $W $(pgrep -P $W); do ls "/proc/$p/task" 2>/dev/null; done | sort -n)
	[ "$(echo "$tids" | wc -l)" -ge 17 ] && break
	sleep 0.05
done
[ "$(echo "$tids" | wc -l)" -ge 17 ] || fail "--call-graph dwarf: the server started not 17 threads: $(echo $tids)"
lo=$(echo "$tids" | head -1) hi=$(echo "$tids" | tail -1)
# the filter names the kernel's thread ids: in a PID namespace (a
# container) /proc gives the namespace's, so every switch is recorded,
# as fp-record does there
filter=(--filter "(prev_pid>=$lo&&prev_pid<=$hi)||(next_pid>=$lo&&next_pid<=$hi)")
in_pid_namespace && filter=()
for try in 1 2 3; do
	nice -n -10 perf record -q -m 16M -e sched:sched_switch --call-graph dwarf,4096 -a -o "$T/dwarf.data" \
		"${filter[@]}" -- sleep 0.5 >/dev/null 2>"$T/dwarf.err" || break
	[ "$(lost "$T/dwarf.data")" = 0 ] && break
done
if kill -0 "$W" 2>/dev/null; then
	kill -TERM "$W"
	wait "$W" || fail "--call-graph dwarf: the server, told to stop, exited with status $?"
else
	wait "$W"
	fail "--call-graph dwarf: the server ended during the recording (status $?), not told to"
fi
[ "$(awk '{ print $1 }' "$T/dwarf.report" 2>/dev/null | sort -u | wc -l)" -eq 3 ] ||
	fail "--call-graph dwarf: the server's report holds not 3 processes"
if [ ! -s "$T/dwarf.data" ] || [ "$(lost "$T/dwarf.data")" != 0 ]; then
	fail "--call-graph dwarf: no recording without lost events ($(head -2 "$T/dwarf.err"))"
elif env "${PLUGIN_ENV[@]}" perf script -i "$T/dwarf.data" --dlfilter "$PLUGIN" --dlarg offcpu \
		--dlarg split="$T/dwarf" >/dev/null 2>"$T/dwarf.notes"; then
	# the window is inside the server's run: its waits there are inside
	# its own, so the same check holds
	if out=$(awk -f "$T/check.awk" "$T/dwarf.report" "$T/dwarf/"waitsrv*.folded); then
		echo "ok --call-graph dwarf alone: $out"
	else
		fail "--call-graph dwarf alone: $out"
	fi
else
	fail "the plugin failed on a --call-graph dwarf recording: $(head -3 "$T/dwarf.notes")"
fi
exit $FAILED
