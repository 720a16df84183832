#!/bin/bash
# plugin-export.sh - the perf plugin's speedscope= and pprof= outputs, on
# perf.data recorded here and now from the bundled workload:
#
#  - the folded output is byte for byte the same with them as without;
#  - speedscope (its own importer, in headless Chromium) loads the file:
#    one profile per thread named "COMM PID/TID", in nanoseconds, whose
#    samples are, in order, the thread's samples as `perf script` prints
#    them (each folded alone by fp-collapse), weighted by their periods;
#  - split=DIR with speedscope writes DIR/<comm>-<pid>.speedscope.json
#    beside each folded file, together the same profiles;
#  - pprof: pprof-collapse gives the folded stacks back (labels comm, pid,
#    tid as pprof -tagroot shows them), every location has a mapping and
#    an address, user-space mappings have build ids, and Google's pprof
#    (build/pprof, see pprof.sh) agrees on the total;
#  - with inline context, frames' files and lines go to speedscope's
#    file and line fields and to pprof's lines;
#  - off-CPU (sched_switch): each thread's speedscope total is its folded
#    total (which rounds each stack to a whole microsecond) and its pprof
#    total; its waits come in the order its stacks left the CPU.
# If Chromium cannot start, or pprof cannot be built, the test FAILS.
set -u
. "$(dirname "$0")/plugin-lib.sh"
plugin_fail=$(declare -f fail)
fail() { echo "plugin-export FAILED: $*" >&2; exit 1; }
. "$ROOT/test/browser/setup.sh"
eval "$plugin_fail"
export PATH="$BIN:$PATH"

PPROF=$ROOT/build/pprof
[ -x "$PPROF" ] || "$ROOT/test/scripts/pprof.sh" >/dev/null 2>&1 || true
[ -x "$PPROF" ] || { echo "FAIL: no $PPROF (pprof.sh builds it)" >&2; exit 1; }

# The workload runs for a wall-clock time; on a loaded machine it gets a
# share of a CPU only, so it runs longer until 100 samples are in (the
# checks below want that many; a quiet machine gives about 1,200 at once)
for ms in 600 1200 2400 4800 9600; do
	perf record -q -e cpu-clock -g -F 999 -o "$T/cpu.data" -- "$W" $ms >/dev/null 2>"$T/rec.err" ||
		unavailable "perf record -g failed: $(head -3 "$T/rec.err")"
	[ "$(perf script -i "$T/cpu.data" -F time 2>/dev/null | wc -l)" -ge 100 ] && break
	echo "   (fewer than 100 samples in $ms ms: the machine is busy; recording longer)"
done

# load FILE...: speedscope's view of the files, in $T/dump
load() {
	(cd "$ROOT/test/browser" && timeout "$BROWSER_HANG" node speedscope-dump.js "$@") > "$T/dump" 2> "$T/dump.err"
	case $? in
	0) ;;
	3) echo "FAIL: Chromium could not start" >&2; exit 1 ;;
	*) cat "$T/dump.err" >&2; echo "FAIL: speedscope could not load $*" >&2; exit 1 ;;
	esac
}
got() { awk -v want="file $1" '/^file / { on = ($0 == want); next } on' "$T/dump"; }

# samples DATA: every sample of DATA as perf script prints it, folded by
# fp-collapse on its own ("PID TID SEQ COMM<TAB>STACK<TAB>PERIOD", in
# perf script's order): each sample's TID becomes its sequence number, so
# that fp-collapse --tid cannot merge two of them
samples() {
	perf script -i "$1" -F comm,pid,tid,time,period,event,ip,sym,dso 2>/dev/null | awk -v map="$T/seq" '
		$0 != "" && substr($0, 1, 1) != "\t" && match($0, / +[0-9]+\/[0-9]+ /) {
			split(substr($0, RSTART, RLENGTH), p, "/"); gsub(/ /, "", p[1]); gsub(/ /, "", p[2])
			seq++; print seq, p[1], p[2] > map
			$0 = substr($0, 1, RSTART - 1) " " p[1] "/" seq " " substr($0, RSTART + RLENGTH)
		}
		{ print }' | fp-collapse --tid > "$T/each.folded"
	awk -v map="$T/seq" '
		BEGIN { while ((getline l < map) > 0) { split(l, f, " "); tid[f[1]] = f[3] } }
		{
			c = $NF; line = $0; sub(/ [^ ]+$/, "", line)
			i = index(line, ";"); root = i ? substr(line, 1, i - 1) : line
			stack = i ? substr(line, i + 1) : ""
			match(root, /-[0-9]+\/[0-9]+$/); comm = substr(root, 1, RSTART - 1)
			split(substr(root, RSTART + 1), p, "/")
			print p[1] " " tid[p[2]] " " p[2] " " comm "\t" stack "\t" c
		}' "$T/each.folded" | sort -k3,3n
}

# expect NAME UNIT < samples: the dump speedscope must show, one profile
# per thread ordered by pid and tid, named after the thread's last name,
# equal neighbours merged, zero weights dropped
expect() {
	sort -s -k1,1n -k2,2n | awk -F '\t' -v doc="$1" -v unit="$2" '
	function flush() {
		if (!n) return
		blocks[++np] = sprintf("profile %s %s\t%s\t%.15g\t%d\t%d\n%s", name, key, unit, total, nf, ns, body)
		tot[np] = total
		n = 0
	}
	{
		split($1, h, " "); k = h[1] "/" h[2]
		if (k != key) { flush(); key = k; body = ""; total = 0; nf = 0; ns = 0; last = "\001"; delete used }
		name = substr($1, length(h[1]) + length(h[2]) + length(h[3]) + 4); n++
		if ($3 + 0 == 0) next
		if ($2 == last) { w[ns] += $3 } else { ns++; st[ns] = $2; w[ns] = $3; last = $2 }
		total += $3
		nfr = split($2, fr, ";")
		for (j = 1; j <= nfr; j++) if (!(fr[j] in used)) { used[fr[j]] = 1; nf++ }
		body = ""
		for (j = 1; j <= ns; j++) body = body st[j] "\t" w[j] "\n"
	}
	END {
		flush()
		best = 1
		for (i = 2; i <= np; i++) if (tot[i] > tot[best]) best = i
		printf "group %s\t%d\t%d\n", doc, np, best - 1
		for (i = 1; i <= np; i++) printf "%s", blocks[i]
	}'
}

# 1. on-CPU: the folded output is unchanged; speedscope and pprof files
plugin "$T/cpu.data" tid > "$T/plain.folded" 2>/dev/null || fail "plugin tid failed"
plugin "$T/cpu.data" tid "speedscope=$T/cpu.json" "pprof=$T/cpu.pb.gz" > "$T/with.folded" 2> "$T/err" ||
	fail "plugin speedscope= pprof= failed: $(head -3 "$T/err")"
cmp -s "$T/plain.folded" "$T/with.folded" && echo "ok folded output unchanged by speedscope= pprof=" ||
	fail "speedscope=/pprof= changed the folded output"
mkdir -p "$T/split"
plugin "$T/cpu.data" "split=$T/split" speedscope "pprof=$T/split.pb.gz" > "$T/out" 2> "$T/split.err" ||
	fail "plugin split= speedscope failed: $(head -3 "$T/split.err")"
grep -q "wrote [0-9]* speedscope files to" "$T/split.err" || fail "split: no note of the speedscope files: $(cat "$T/split.err")"
for f in "$T"/split/*.folded; do
	[ -s "${f%.folded}.speedscope.json" ] || fail "split: no speedscope file beside $(basename "$f")"
done
load "$T/cpu.json" "$T"/split/*.speedscope.json
samples "$T/cpu.data" > "$T/samples"
[ "$(wc -l < "$T/samples")" -ge 100 ] || fail "only $(wc -l < "$T/samples") samples recorded"
expect cpu.json nanoseconds < "$T/samples" > "$T/want"
got cpu.json > "$T/got"
if cmp -s "$T/want" "$T/got"; then
	echo "ok speedscope: $(grep -c '^profile ' "$T/got") threads, $(grep -vc '^profile \|^group ' "$T/got") samples in time order"
else
	fail "speedscope's view of speedscope=FILE is not the recording's samples"
	diff -u "$T/want" "$T/got" | head -20 | cut -c1-200 >&2
fi
# speedscope= alone (the folded stacks' route, stacks.h) writes what it
# writes beside pprof= (the collapsers' route, every frame's address)
mkdir -p "$T/direct" "$T/dsplit"
plugin "$T/cpu.data" tid "speedscope=$T/direct/cpu.json" > "$T/direct.folded" 2> "$T/err" ||
	fail "plugin speedscope= failed: $(head -3 "$T/err")"
cmp -s "$T/plain.folded" "$T/direct.folded" || fail "speedscope= alone changed the folded output"
plugin "$T/cpu.data" "split=$T/dsplit" speedscope > /dev/null 2> "$T/err" ||
	fail "plugin split= speedscope (no pprof=) failed: $(head -3 "$T/err")"
[ "$(ls "$T/split")" = "$(ls "$T/dsplit")" ] || fail "split: other files without pprof=: $(ls "$T/dsplit" | tr '\n' ' ')"
for f in "$T/direct/cpu.json" "$T"/dsplit/*; do
	case $f in "$T/direct/"*) want=$T/${f#"$T/direct/"} ;; *) want=$T/split/${f#"$T/dsplit/"} ;; esac
	cmp -s "$want" "$f" || fail "$(basename "$f") without pprof= differs from the one with it"
done
# threads=1: written on perf's thread, not meanwhile on a second one
plugin "$T/cpu.data" tid threads=1 "speedscope=$T/direct/cpu.json" > /dev/null 2> "$T/err" ||
	fail "plugin threads=1 speedscope= failed: $(head -3 "$T/err")"
cmp -s "$T/cpu.json" "$T/direct/cpu.json" || fail "speedscope= with threads=1 differs"
[ $FAILED = 0 ] && echo "ok speedscope= alone writes the same files as beside pprof= ($(ls "$T/dsplit" | wc -l) split files), with threads=1 too"
# the per-process files hold the same threads
for f in "$T"/split/*.speedscope.json; do got "$(basename "$f")" | grep -v '^group '; done |
	awk '/^profile / { p = $0; print; next } { print p "\t" $0 }' | sort > "$T/got.split"
got cpu.json | grep -v '^group ' | awk '/^profile / { p = $0; print; next } { print p "\t" $0 }' | sort > "$T/want.split"
cmp -s "$T/want.split" "$T/got.split" && echo "ok split: the per-process files hold the same threads" ||
	fail "split: the per-process speedscope files differ from speedscope=FILE"

# pprof: the same stacks, labelled; mappings with build ids; pprof's total
plugin "$T/cpu.data" > "$T/default.folded" 2>/dev/null
pprof-collapse --tagroot=comm "$T/cpu.pb.gz" | sed 's/^comm=//' > "$T/got"
cmp -s "$T/default.folded" "$T/got" && echo "ok pprof: pprof-collapse gives the folded stacks back" ||
	{ fail "pprof: the profile's stacks differ from the folded output"; diff "$T/default.folded" "$T/got" | head -5 >&2; }
pprof-collapse --tagroot=pid,tid "$T/cpu.pb.gz" | awk -F';' '{ print $1 ";" $2 }' | sort -u > "$T/got"
awk '{ r = $0; sub(/;.*/, "", r); match(r, /-[0-9]+\/[0-9]+$/); split(substr(r, RSTART + 1), p, "/")
       print "pid=" p[1] ";tid=" p[2] }' "$T/plain.folded" | sort -u > "$T/want"
cmp -s "$T/want" "$T/got" && echo "ok pprof: pid and tid labels" || fail "pprof: pid/tid labels differ from the threads"
"$PPROF" -raw "$T/cpu.pb.gz" 2>/dev/null > "$T/raw"
grep -q '^samples/count\|^cpu/nanoseconds' "$T/raw" || fail "pprof: sample type is not cpu/nanoseconds: $(sed -n '/^Samples/{n;p}' "$T/raw")"
sed -n '/^Samples:/{n;p}' "$T/raw" | grep -qx 'cpu/nanoseconds' || fail "pprof: sample type $(sed -n '/^Samples:/{n;p}' "$T/raw")"
awk '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 } on && /^ *[0-9]+: / && !/ M=[1-9]/' "$T/raw" | head -3 > "$T/nomap"
[ -s "$T/nomap" ] && fail "pprof: locations without a mapping: $(cat "$T/nomap")"
grep -E '^[0-9]+: 0x0/0x0/0x0 .*/fkwork [0-9a-f]{40} ' "$T/raw" >/dev/null ||
	fail "pprof: the workload's mapping has no build id: $(sed -n '/^Mappings/,$p' "$T/raw")"
"$PPROF" -top -unit=ns "$T/cpu.pb.gz" 2>/dev/null | awk '/^Showing nodes/ { print $(NF - 1) }' > "$T/got"
awk '{ s += $NF } END { printf "%.0fns\n", s }' "$T/default.folded" > "$T/want"
cmp -s "$T/want" "$T/got" && echo "ok pprof -top total: $(cat "$T/got")" || fail "pprof -top total $(cat "$T/got"), folded $(cat "$T/want")"

# inline context: each frame's file and line in speedscope's own fields
# (as its importer shows them) and in pprof's lines (pprof-collapse
# --lines), the "NAME:FILE:LINE" of the folded output split apart
plugin "$T/cpu.data" inline context "speedscope=$T/ctx.json" "pprof=$T/ctx.pb.gz" > "$T/ctx.folded" 2> "$T/err" ||
	fail "plugin inline context speedscope= pprof= failed: $(head -3 "$T/err")"
load --frames "$T/ctx.json"
awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";")
       for (i = 2; i <= n; i++)
           if (match(f[i], /:[^:]+:[0-9]+$/)) {
               split(substr(f[i], RSTART + 1), fl, ":"); print substr(f[i], 1, RSTART - 1) "\t" fl[1] "\t" fl[2]
           } else print f[i] "\t\t" }' "$T/ctx.folded" | sort -u > "$T/want"
got ctx.json | awk -F '\t' '/^frame / { print substr($1, 7) "\t" $2 "\t" $3 }' | sort -u > "$T/got"
grep -q '	fkwork\.c	[0-9]' "$T/want" || fail "inline context: no frame of fkwork.c with a line: $(head -3 "$T/ctx.folded")"
cmp -s "$T/want" "$T/got" && echo "ok speedscope: file and line in their fields ($(grep -c '	[0-9]' "$T/got") frames)" ||
	{ fail "speedscope's frames under inline context are not the folded output's NAME:FILE:LINE"; diff "$T/want" "$T/got" | head -5 >&2; }
pprof-collapse --lines --tagroot=comm "$T/ctx.pb.gz" | sed 's/^comm=//' > "$T/got"
cmp -s "$T/ctx.folded" "$T/got" && echo "ok pprof: functions' files and lines (pprof-collapse --lines)" ||
	{ fail "pprof: the lines under inline context differ from the folded output"; diff "$T/ctx.folded" "$T/got" | head -5 >&2; }
# and the names alone without --lines: files and lines are not in them
pprof-collapse --tagroot=comm "$T/ctx.pb.gz" | sed 's/^comm=//' > "$T/got"
awk '{ c = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); s = f[1]
       for (i = 2; i <= n; i++) { sub(/:[^:]+:[0-9]+$/, "", f[i]); s = s ";" f[i] }
       sum[s] += c }
     END { for (k in sum) printf "%s %.0f\n", k, sum[k] }' "$T/ctx.folded" | sort > "$T/want"
cmp -s "$T/want" "$T/got" && echo "ok pprof: function names without their files and lines" ||
	{ fail "pprof: function names under inline context hold more than the name"; diff "$T/want" "$T/got" | head -5 >&2; }

# 2. off-CPU
"$W" 1500 0 > /dev/null &
wpid=$!
sleep 0.2
perf record -q -e sched:sched_switch -a -g -o "$T/sw.data" -- sleep 0.5 >/dev/null 2>"$T/rec.err"
rc=$?
wait $wpid
[ $rc -eq 0 ] || unavailable "perf record -e sched:sched_switch -a -g failed: $(head -3 "$T/rec.err")"
plugin "$T/sw.data" offcpu tid > "$T/off-plain.folded" 2>/dev/null
plugin "$T/sw.data" offcpu tid "speedscope=$T/off.json" "pprof=$T/off.pb.gz" > "$T/off.folded" 2> "$T/err" ||
	fail "plugin offcpu speedscope= failed: $(head -3 "$T/err")"
cmp -s "$T/off-plain.folded" "$T/off.folded" && echo "ok offcpu: folded output unchanged" ||
	fail "offcpu: speedscope=/pprof= changed the folded output"
load "$T/off.json"
got off.json > "$T/offdump"
grep -q '^profile .*	microseconds	' "$T/offdump" || fail "offcpu: speedscope's unit is not microseconds"
# per thread: speedscope's total (exact), the folded total (each stack
# rounded to a whole microsecond), pprof's (nanoseconds)
awk -F '\t' '/^profile / { n = split($1, a, " "); t = a[n]; sub(/.*\//, "", t); print t, $3 }' "$T/offdump" | sort > "$T/ss"
# (the thread id before the first frame: a name may hold ';' or "/N")
awk 'match($0, /-[0-9]+\/[0-9]+;/) { t = substr($0, RSTART, RLENGTH - 1); sub(/.*\//, "", t); s[t] += $NF; n[t]++ }
     END { for (t in s) print t, s[t], n[t] }' "$T/off.folded" | sort > "$T/fo"
pprof-collapse --tagroot=tid "$T/off.pb.gz" | awk -F';' '{ t = $1; sub(/^tid=/, "", t); c = $NF; sub(/.* /, "", c); s[t] += c }
     END { for (t in s) print t, s[t] }' | sort > "$T/pp"
join "$T/ss" "$T/fo" | join - "$T/pp" | awk '
	{ n++; ss = $2; fo = $3; k = $4; pp = $5
	  if (ss - fo > k * 0.5 + 1e-6 || fo - ss > k * 0.5 + 1e-6) { print "thread " $1 ": speedscope " ss " us, folded " fo " us (" k " stacks)"; bad++ }
	  if (pp / 1000 - ss > 1e-3 * (ss > 1 ? ss : 1) || ss - pp / 1000 > 1e-3 * (ss > 1 ? ss : 1)) { print "thread " $1 ": speedscope " ss " us, pprof " pp " ns"; bad++ } }
	END { if (!n) { print "no thread in common"; exit 1 } exit bad > 0 }' > "$T/cmp" &&
	echo "ok offcpu: $(wc -l < "$T/ss") threads, totals agree (speedscope, folded, pprof)" ||
	fail "offcpu totals: $(head -5 "$T/cmp")"
# each wait comes in the order its thread left the CPU: the thread's
# speedscope stacks are a subsequence of its sched_switch stacks
samples "$T/sw.data" > "$T/swsamples"
awk -F '\t' 'FNR == NR { split($1, h, " "); s[h[2]] = s[h[2]] "\001" $2; next }
	/^profile / { n = split($1, a, " "); tid = a[n]; sub(/.*\//, "", tid); pos[tid] = 0; next }
	/^group / { next }
	{ n = split(s[tid], seq, "\001"); p = pos[tid] + 1
	  while (p <= n && seq[p] != $1) p++
	  if (p > n) {
		# what the failure needs to be read by: where the thread was
		# in its switches, how many it has, and whether the stack is
		# one of them at all
		# (seq[1] is empty: the switches are seq[2..n])
		known = 0
		for (q = 2; q <= n; q++) if (seq[q] == $1) { known = q - 1; break }
		print "thread " tid ": wait " w[tid] + 1 " (after switch " (pos[tid] ? pos[tid] - 1 : 0) " of " n - 1 "): " \
		      (known ? "out of order (it is switch " known ")" : "not among its switches") ": " substr($1, 1, 80)
		print "  next switch: " (pos[tid] + 1 <= n ? substr(seq[pos[tid] + 1 + !pos[tid]], 1, 80) : "(none)")
		bad++
		p = pos[tid]	# later waits of the thread checked from here
	  }
	  pos[tid] = p; w[tid]++; checked++ }
	END { if (!checked) { print "no waits"; exit 1 } exit bad > 0 }' "$T/swsamples" "$T/offdump" > "$T/order" &&
	echo "ok offcpu: waits in the order their threads left the CPU" || fail "offcpu order: $(head -6 "$T/order")"

# 3. options
for bad in speedscope "speedscope=" "pprof="; do
	plugin "$T/cpu.data" "$bad" > /dev/null 2> "$T/err" && fail "'$bad' was accepted"
done
grep -q 'speedscope without a file needs split=DIR' <(plugin "$T/cpu.data" speedscope 2>&1) ||
	fail "bare speedscope without split: no clear message"
plugin "$T/cpu.data" "speedscope=$T/no/such/dir/x.json" > /dev/null 2> "$T/err" && fail "an unwritable speedscope= file exited 0"
grep -q "x.json: cannot create" "$T/err" || fail "an unwritable speedscope= file: $(cat "$T/err")"

exit $FAILED
