#!/bin/bash
# fp-record.sh - fp-record on the bundled multi-process workload
# (test/workloads/fkserver.c: a main process and two workers of the same
# executable, with named threads, a contended mutex and sleeps), recorded
# here and now:
#  - by --exe it records exactly the three processes, not decoys whose
#    argv names the executable, and writes the files of fp-record(1);
#  - per-process on-CPU totals equal perf's own sum of the periods in the
#    same recording, and add up to the whole profile folded at once;
#    off-CPU totals equal the plugin's on the same recording;
#  - with -- COMMAND, the children started later are recorded too, and the
#    on-CPU totals agree with the CPU time the kernel accounted (rusage)
#    within a few percent;
#  - the documented messages for: no match, perf missing, a process
#    exiting during the window, an idle process, a stripped binary (those
#    for another user's process and a user without perf permissions are
#    fp-record-unprivileged.sh's);
#  - Ctrl-C ends the window and still folds; the load generator's process
#    group is stopped; no perf, load or temporary file is left behind.
set -u
. "$(dirname "$0")/plugin-lib.sh"

PIDS_TO_KILL=()
cleanup() {
	local p
	# their children first (the decoy shell's sleep would outlive it)
	for p in "${PIDS_TO_KILL[@]}"; do pkill -TERM -P "$p" 2>/dev/null; done
	for p in "${PIDS_TO_KILL[@]}"; do kill -TERM "$p" 2>/dev/null; done
	sleep 0.2
	for p in "${PIDS_TO_KILL[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

FPR=$BIN/fp-record
[ -x "$FPR" ] || { echo "no $FPR: run make" >&2; exit 1; }
# the perf that fp-record runs
fp_record_perf

chmod 755 "$T"
S=$T/fkserver
cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -o "$S" \
	"$ROOT/test/workloads/fkserver.c" || { echo "cannot build fkserver" >&2; exit 1; }

# stem DIR PID: the name of PID's files in the capture DIR ("fkserver.main"),
# from DIR/index.tsv, since the files are named by process and role
stem() {
	awk -F'\t' -v p="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "on_folded") on = i
			else if ($i == "off_folded") off = i; next }
		$2 == p { f = $on != "-" ? $on : $off; sub(/^(on|off)\//, "", f)
			sub(/\.folded$/, "", f); print f }' "$1/index.tsv"
}
# col FILE NAME: the column named NAME of index.tsv, "pid value" per line
col() {
	awk -F'\t' -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
		{ print $2, $k }' "$1"
}

# ---- 1. by --exe: exactly the server's processes, and the files ----
"$S" 0 &
SERVER=$!
PIDS_TO_KILL+=("$SERVER")
wait_server "$S" || { fail "fkserver did not start its workers"; exit 1; }
WANT=$(procs_of "$S" | tr '\n' ' ')
# decoys: argv names the server, but they run something else
# (for as long as the test may take, a sanitizer build's too; killed at the end)
(exec -a "$S" sleep 1200) &
DECOY1=$!
bash -c "sleep 1200; : $S" &
DECOY2=$!
PIDS_TO_KILL+=("$DECOY1" "$DECOY2")
sleep 0.2

A=$T/a
"$FPR" --exe "$S" -d 1.5 -o "$A" --keep-data >"$T/a.out" 2>"$T/a.err"
rc=$?
if [ $rc -ne 0 ]; then
	fail "fp-record --exe failed ($rc): $(tail -3 "$T/a.err")"
	exit 1
fi
GOT=$(grep -E "^fp-record:   [0-9]+ fkserver $S\$" "$T/a.err" | awk '{ print $2 }' | sort -n | tr '\n' ' ')
[ "$GOT" = "$WANT" ] && echo "ok --exe chose the 3 processes: $GOT" ||
	fail "--exe chose '$GOT', want '$WANT'"
grep -q "recording 3 processes" "$T/a.err" || fail "--exe: not 3 processes announced"
grep -Eq "^fp-record:   ($DECOY1|$DECOY2) " "$T/a.err" && fail "--exe chose a decoy"

for p in $WANT; do
	n=$(stem "$A" $p)
	[ -n "$n" ] || fail "index.tsv names no files for $p"
	for f in on/$n.folded on/$n.svg on/$n.html off/$n.folded off/$n.svg off/$n.html; do
		[ -s "$A/$f" ] || fail "no $f"
		grep -qx "$A/$f" "$T/a.out" || fail "$f is not among the paths printed"
	done
done
for f in index.tsv report.md threads.tsv on.data off.data; do
	[ -s "$A/$f" ] || fail "no $f"
done
grep -qx "$A/threads.tsv" "$T/a.out" || fail "threads.tsv is not among the paths printed"
# (runq/ and wake/ where the off-CPU recording holds time runnable and
# waits woken)
ls -A "$A" | tr '\n' ' ' | grep -qxE 'index.tsv off off.data on on.data report.md (runq )?threads.tsv (wake )?' ||
	fail "unexpected files in DIR: $(ls -A "$A" | tr '\n' ' ')"
head -1 "$A/index.tsv" | grep -qx "$(printf 'process\tpid\texe\ton_cpu\ton_unit\toff_cpu\toff_unit\ton_folded\ton_svg\toff_folded\toff_svg\ton_html\toff_html\trole\tppid\targs\ton_speedscope\toff_speedscope')" ||
	fail "index.tsv header: $(head -1 "$A/index.tsv")"
[ "$(awk -F'\t' 'NR > 1 && $1 == "fkserver" && $5 == "ns" && $7 == "us" && $4 > 0 && $6 > 0' "$A/index.tsv" | wc -l)" -eq 3 ] ||
	fail "index.tsv has not 3 processes with ns and us totals: $(cat "$A/index.tsv")"
# the right stacks in the right files: workers decode, the main process accepts
main=${WANT%% *}
grep -q ';accept_loop;' "$A/on/$(stem "$A" $main).folded" || fail "main's on-CPU profile lacks accept_loop"
grep -q ';decode_step;' "$A/on/$(stem "$A" $main).folded" && fail "main's on-CPU profile has decode_step"
for p in ${WANT#* }; do
	grep -q ';decode_step;' "$A/on/$(stem "$A" $p).folded" || fail "worker $p's on-CPU profile lacks decode_step"
done
for p in $WANT; do
	grep -q '^sleeper;.*;wait_tick;' "$A/off/$(stem "$A" $p).folded" || fail "$p: off-CPU lacks the sleeps"
	grep -Eq '^lock-[ab];.*;locker;.*(lll_lock_wait|futex)' "$A/off/$(stem "$A" $p).folded" ||
		fail "$p: off-CPU lacks the mutex waits"
done
xmllint --noout "$A/on/$(stem "$A" $main).svg" || fail "on-CPU SVG is not well-formed"
grep -q '>fkserver (main) on-CPU<' "$A/on/$(stem "$A" $main).svg" || fail "on-CPU SVG title"
grep -q '>fkserver (main) off-CPU<' "$A/off/$(stem "$A" $main).svg" || fail "off-CPU SVG title"
xmllint --noout "$A/on/$(stem "$A" $main).html" || fail "on-CPU page is not well-formed"
grep -q '<h1 id="title">fkserver (main) on-CPU</h1>' "$A/on/$(stem "$A" $main).html" || fail "on-CPU page title"
grep -q '"countname": "us"' "$A/off/$(stem "$A" $main).html" || fail "off-CPU page: not in us"
grep -q "| fkserver | main | $main |" "$A/report.md" || fail "report.md lacks the main process $main"
for p in ${WANT#* }; do grep -q "| fkserver | worker | $p |" "$A/report.md" || fail "report.md lacks worker $p"; done
if [ -x "$BIN/fold-report" ]; then
	# fold-report's whole, then each process, its headings a level down
	grep -q '^## fold-report: `on`' "$A/report.md" || fail "report.md lacks fold-report's whole"
	for p in $WANT; do
		grep -q "^## Process \`on/$(stem "$A" $p).folded\`" "$A/report.md" ||
			fail "report.md lacks fold-report's section for $p"
	done
	grep -q '^### Contention' "$A/report.md" || fail "report.md lacks the contention of on- and off-CPU"
else
	grep -q 'fold-report is not available' "$A/report.md" || fail "report.md does not say fold-report is missing"
	grep -q 'fold-report is not available' "$T/a.err" || fail "stderr does not say fold-report is missing"
fi
no_leftovers "$A" "--exe"

# Both recordings lie in the window the report gives: perf's event times,
# in the kept files, span no longer than it (its two decimals aside), and
# the two overlap.  On a loaded machine the two perf records act on their
# start and stop commands at different times; the window runs from the
# first command to the last acknowledgement, so it holds both however late.
window=$(sed -n 's/^- Window: \([0-9.]*\) s.*/\1/p' "$A/report.md")
span() { perf script -i "$1" -F time 2>/dev/null | awk '{ t = $1 + 0; if (!n++ || t < a) a = t; if (t > b) b = t }
	END { printf "%.3f %.3f", a, b }'; }
read -r on0 on1 <<<"$(span "$A/on.data")"
read -r off0 off1 <<<"$(span "$A/off.data")"
if awk -v w="$window" -v a="$on0" -v b="$on1" -v c="$off0" -v d="$off1" 'BEGIN {
	lo = a > c ? a : c; hi = b < d ? b : d
	exit !(w > 0 && lo < hi && d - c <= w + 0.006 && b - a <= w + 0.006) }'; then
	echo "ok on- and off-CPU lie in the $window s window: on-CPU $on0..$on1, off-CPU $off0..$off1"
else
	fail "the recordings do not cover one $window s window: on-CPU $on0..$on1, off-CPU $off0..$off1"
fi
# On-CPU: each process's total is perf's own sum of its sample periods in
# the same recording, exactly (independent of the plugin)...
perf script -i "$A/on.data" -F pid,period 2>/dev/null |
	awk '{ s[$1] += $2 } END { for (p in s) printf "%s %.0f\n", p, s[p] }' | sort >"$T/perf-on"
col "$A/index.tsv" on_cpu | sort >"$T/ours-on"
cmp -s "$T/perf-on" "$T/ours-on" && echo "ok on-CPU totals equal perf's sum of periods: $(tr '\n' ' ' <"$T/ours-on")" ||
	{ fail "on-CPU totals differ from perf script's"; diff "$T/perf-on" "$T/ours-on" >&2; }
# ... and the processes add up to the whole profile folded at once
whole=$(plugin "$A/on.data" 2>/dev/null | awk '{ s += $NF } END { printf "%.0f", s }')
sum=$(awk '{ s += $2 } END { printf "%.0f", s }' "$T/ours-on")
[ "$whole" = "$sum" ] && [ "$sum" -gt 0 ] && echo "ok per-process on-CPU totals add up to the whole profile: $sum ns" ||
	fail "per-process on-CPU totals $sum ns, whole profile $whole ns"
# Off-CPU: each process's total is the plugin's on the same recording
plugin "$A/off.data" offcpu pid 2>/dev/null | awk '{
	split($1, f, ";"); n = split(f[1], a, "-"); s[a[n]] += $NF
} END { for (p in s) printf "%s %.0f\n", p, s[p] }' | sort >"$T/plugin-off"
col "$A/index.tsv" off_cpu | sort >"$T/ours-off"
if join "$T/ours-off" "$T/plugin-off" | awk -v want="$WANT" '
	{ n++; d = $2 - $3; if (d < 0) d = -d; if (d > 1000 || $2 <= 0) bad = 1 }
	END { exit !(n == split(want, w, " ") && !bad) }'; then
	echo "ok off-CPU totals agree with the plugin's: $(tr '\n' ' ' <"$T/ours-off")"
else
	fail "off-CPU totals differ from the plugin's"; join -a1 "$T/ours-off" "$T/plugin-off" >&2
fi

# ---- 2. Ctrl-C ends the window early and still folds; a process that
# exits during the window is reported (and an idle one) ----
sleep 300 &
VICTIM=$!
PIDS_TO_KILL+=("$VICTIM")
G=$T/g
"$FPR" --pid "$SERVER,$VICTIM" -d 60 -o "$G" >"$T/g.out" 2>"$T/g.err" &
fpr=$!
for _ in $(seq 600); do grep -q 'recording for' "$T/g.err" && break; sleep 0.1; done
sleep 0.5
kill -KILL $VICTIM
wait $VICTIM 2>/dev/null
sleep 1
kill -INT $fpr
wait $fpr
rc=$?
[ $rc -eq 0 ] || fail "after Ctrl-C: exit $rc: $(tail -2 "$T/g.err")"
grep -q 'the window ended after [0-9.]* s: interrupted' "$T/g.err" || fail "after Ctrl-C: no word of the early end"
[ -s "$G/on/$(stem "$G" $SERVER).folded" ] && [ -s "$G/off/$(stem "$G" $SERVER).folded" ] ||
	fail "after Ctrl-C: no profiles"
grep -q 'Window: [0-9.]* s (ended early: interrupted)' "$G/report.md" || fail "report.md does not say the window was interrupted"
no_leftovers "$G" "Ctrl-C"
echo "ok Ctrl-C: $(grep -o 'ended after [0-9.]* s' "$T/g.err")"
grep -Eq "process $VICTIM \(sleep\) exited [0-9.]+ s into the [0-9.]+ s window: its profiles cover that part only" "$T/g.err" &&
	echo "ok a process exiting during the window is reported" ||
	fail "early exit: no message: $(cat "$T/g.err")"
grep -q "process $VICTIM (sleep): no on-CPU samples: it was idle during the window; drive load (--load CMD)" "$T/g.err" ||
	fail "idle: no message"
awk -F'\t' -v v=$VICTIM '$2 == v' "$G/index.tsv" | grep -q . || fail "early exit: the process gone is not in index.tsv"

# ---- 3. --load: its process group runs during the window, then is stopped;
# a load of the same name (a copy of the server) is never chosen; DWARF
# stacks ----
mkdir "$T/load" && cp "$S" "$T/load/fkserver"
L=$T/l
# (the load's comment holds what Markdown escapes, and a backtick)
LOAD="$T/load/fkserver 0 # a|b&c \`x\`"
"$FPR" --name fkserver --on --call-graph dwarf -d 3 -o "$L" --load "$LOAD" --warmup 0.5 >"$T/l.out" 2>"$T/l.err"
rc=$?
[ $rc -eq 0 ] || fail "--load: exit $rc: $(tail -2 "$T/l.err")"
GOT=$(grep -E "^fp-record:   [0-9]+ fkserver " "$T/l.err" | awk '{ print $2 }' | sort -n | tr '\n' ' ')
[ "$GOT" = "$WANT" ] && echo "ok --name with a load of the same name chose the server's 3 processes" ||
	fail "--name with a load chose '$GOT', want '$WANT'"
grep -q "stopped the load" "$T/l.err" || fail "--load: not stopped"
for p in ${WANT#* }; do
	grep -q '^decode;.*;decode_step;' "$L/on/$(stem "$L" $p).folded" ||
		fail "--call-graph dwarf: worker $p's profile lacks decode_step"
done
[ -f "$L/load.log" ] || fail "--load: no load.log"
# report.md: the command as typed, in a code span fenced by two backticks
# (it holds one), with a blank inside each fence (it ends in one; CommonMark
# strips one blank at each end)
grep -qxF -- "- Load: \`\` $LOAD \`\`, started 0.5 s before the window; its output is in [load.log](load.log)" "$L/report.md" &&
	echo "ok report.md shows the --load command as typed" ||
	fail "report.md's --load line: $(grep -- '^- Load' "$L/report.md")"
no_leftovers "$T/load" "--load"
no_leftovers "$L" "--load"

# ---- 4. no match: the near misses, and no directory ----
kill -TERM "$SERVER"
wait "$SERVER"
"$FPR" --exe "$S" -d 1 -o "$T/none" >/dev/null 2>"$T/none.err"
rc=$?
[ $rc -eq 1 ] || fail "no match: exit $rc"
grep -q "^fp-record: no process runs $S\$" "$T/none.err" || fail "no match: message: $(tail -1 "$T/none.err")"
grep -q "^fp-record:   $DECOY1 sleep: its command line names 'fkserver', but it runs /usr/bin/sleep" "$T/none.err" ||
	fail "no match: the decoy is not a near miss: $(cat "$T/none.err")"
grep -q "^fp-record:   $DECOY2 bash: its command line names 'fkserver'" "$T/none.err" ||
	fail "no match: the shell is not a near miss"
[ -e "$T/none" ] && fail "no match: the output directory was created"
echo "ok no match: $(tail -1 "$T/none.err")"

# ---- 5. perf missing ----
env PATH=/nonexistent FOLDKIT_PERF= "$FPR" --pid $$ -d 1 -o "$T/noperf" >/dev/null 2>"$T/noperf.err"
rc=$?
[ $rc -eq 1 ] && grep -q "cannot run perf ('perf').*sudo apt-get install linux-perf" "$T/noperf.err" &&
	[ ! -e "$T/noperf" ] && echo "ok perf missing: exit 1, how to install it" ||
	fail "perf missing: exit $rc: $(cat "$T/noperf.err")"
FOLDKIT_PERF=$T/no/perf "$FPR" --pid $$ -d 1 -o "$T/noperf" >/dev/null 2>"$T/noperf.err"
rc=$?
[ $rc -eq 1 ] && grep -q "cannot run perf ('$T/no/perf')" "$T/noperf.err" ||
	fail "FOLDKIT_PERF: exit $rc: $(cat "$T/noperf.err")"

# ---- 6. only idle processes: nothing captured, exit 1 ----
sleep 300 &
IDLE=$!
PIDS_TO_KILL+=("$IDLE")
# (run alone, away from fold2svg and fold-report: the report says what is missing)
mkdir "$T/lone" && cp "$FPR" "$T/lone/"
env PATH=/usr/bin:/bin "$T/lone/fp-record" --plugin "$BUILD/perf-plugin/foldkit.so" \
	--pid $IDLE --on -d 1 -o "$T/idle" >/dev/null 2>"$T/idle.err"
rc=$?
[ $rc -eq 1 ] && grep -q "nothing was captured" "$T/idle.err" && grep -q "it was idle" "$T/idle.err" &&
	echo "ok an idle process only: exit 1, nothing captured" ||
	fail "idle only: exit $rc: $(tail -2 "$T/idle.err")"
grep -q "fold-report is not available" "$T/idle/report.md" && grep -q "fold-report is not available" "$T/idle.err" ||
	fail "without fold-report: report.md or stderr does not say so"
grep -q "fold2svg was not found" "$T/idle.err" || fail "without fold2svg: no word of it"
no_leftovers "$T/idle" "idle"

# ---- 7. permissions, as an unprivileged user: fp-record-unprivileged.sh ----

# ---- 8. a stripped binary ----
# (without a build id: perf would find the unstripped one's symbols in
# ~/.debug, which perf record fills unless told not to)
mkdir "$T/strip" &&
cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -Wl,--build-id=none \
	-o "$T/strip/fkserver" "$ROOT/test/workloads/fkserver.c" && strip "$T/strip/fkserver" ||
	fail "cannot build a stripped fkserver"
"$T/strip/fkserver" 0 &
STRIP=$!
PIDS_TO_KILL+=("$STRIP")
wait_server "$T/strip/fkserver" || fail "the stripped fkserver did not start"
"$FPR" --exe "$T/strip/fkserver" --on -d 1 -o "$T/st" >/dev/null 2>"$T/st.err"
rc=$?
[ $rc -eq 0 ] && grep -q "process [0-9]* (fkserver): [0-9]*% of its on-CPU time is in stacks with frames perf could not name (\[unknown\] or \[fkserver\]): $T/strip/fkserver is stripped .*-g -fno-omit-frame-pointer" "$T/st.err" &&
	echo "ok a stripped binary: $(grep -o '[0-9]*% of its' "$T/st.err" | head -1)" ||
	fail "stripped: exit $rc: $(tail -3 "$T/st.err")"
kill -TERM $STRIP

# ---- 9. -- COMMAND: its children, and the kernel's CPU time ----
C=$T/c
"$FPR" -F 999 -d 30 -o "$C" -- "$S" 1500 "$T/rusage" >"$T/c.out" 2>"$T/c.err"
rc=$?
[ $rc -eq 0 ] || fail "-- COMMAND: exit $rc: $(tail -3 "$T/c.err")"
[ "$(grep -c 'started during the window as a child of' "$T/c.err")" -eq 2 ] ||
	fail "-- COMMAND: the 2 workers are not announced as children"
[ "$(awk -F'\t' 'NR > 1 && $3 == "'"$S"'" && $4 > 0 && $6 > 0' "$C/index.tsv" | wc -l)" -eq 3 ] ||
	fail "-- COMMAND: not 3 processes of $S with both profiles: $(cat "$C/index.tsv")"
# sampling every ms of CPU time, each thread leaves at most a period
# unsampled: ask 5% and 25 ms per process
col "$C/index.tsv" on_cpu | sort >"$T/c-on"
sort "$T/rusage" >"$T/c-ru"
if join "$T/c-on" "$T/c-ru" | awk '{
	d = $2 - $3; if (d < 0) d = -d; n++; a += $2; b += $3
	printf "  pid %s: recorded %.1f ms, rusage %.1f ms\n", $1, $2 / 1e6, $3 / 1e6
	if (d > $3 * 0.05 + 25e6) bad = 1
} END { exit !(n == 3 && !bad && a > 0) }'; then
	echo "ok -- COMMAND: on-CPU totals agree with the kernel's CPU time"
else
	fail "-- COMMAND: on-CPU totals and rusage differ"; join -a1 -a2 "$T/c-on" "$T/c-ru" >&2
fi
no_leftovers "$C" "-- COMMAND"

# ---- 10. in a PID namespace (a container): off-CPU time, or a warning ----
# The kernel's thread ids are not visible there: the off-CPU recording
# takes every switch, and the plugin must map the ids.  Either every
# process gets off-CPU time, or fp-record says why none has any; never
# 0 us without a word.
if command -v unshare >/dev/null && [ "$(id -u)" = 0 ]; then
	cat >"$T/ns.sh" <<-EOF
	"$S" 0 &
	for _ in \$(seq 200); do
		[ \$(for d in /proc/[0-9]*; do readlink \$d/exe; done 2>/dev/null | grep -cx "$S") -eq 3 ] && break
		sleep 0.05
	done
	sleep 0.3
	"$FPR" --exe "$S" -d 1 -o "$T/ns" >/dev/null 2>"$T/ns.err"
	echo \$? >"$T/ns.rc"
	kill %1
	EOF
	# --mount-proc makes / private first, which fails where / is not a
	# mount point (a chroot): there /proc alone is made private
	if ! unshare --pid --fork --mount-proc true 2>/dev/null; then
		sed -i '1i mount --make-rprivate /proc && mount -t proc proc /proc || exit 1' "$T/ns.sh"
		unshare --pid --fork --mount --propagation unchanged bash "$T/ns.sh"
	else
		unshare --pid --fork --mount-proc bash "$T/ns.sh"
	fi
	rc=$(cat "$T/ns.rc" 2>/dev/null)
	[ "$rc" = 0 ] || fail "in a PID namespace: exit $rc: $(tail -2 "$T/ns.err")"
	grep -q "runs in a PID namespace" "$T/ns.err" || fail "in a PID namespace: not noticed"
	rows=$(awk -F'\t' 'NR > 1' "$T/ns/index.tsv" | wc -l)
	offs=$(awk -F'\t' 'NR > 1 && $6 > 0' "$T/ns/index.tsv" | wc -l)
	if [ "$rows" -eq 3 ] && [ "$offs" -eq 3 ] && ! grep -q "no process has off-CPU time" "$T/ns.err"; then
		echo "ok in a PID namespace: off-CPU time for the 3 processes"
	elif [ "$rows" -eq 3 ] && [ "$offs" -eq 0 ] &&
		grep -q "no process has off-CPU time, though they ran: in a PID namespace" "$T/ns.err"; then
		echo "ok in a PID namespace: this foldkit.so counts no off-CPU time there, and fp-record says so"
	else
		fail "in a PID namespace: $offs of $rows processes with off-CPU time: $(cat "$T/ns.err")"
	fi
fi

# nothing of ours runs any more
for p in $(procs_of "$S") $(procs_of "$T/strip/fkserver"); do
	kill -0 "$p" 2>/dev/null && { sleep 1; kill -0 "$p" 2>/dev/null && fail "fkserver $p still runs"; }
done
exit $FAILED
