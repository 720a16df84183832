#!/bin/bash
# plugin.sh - the perf dlfilter gives, byte for byte, what
# `perf script | fp-collapse` gives with the same options, on perf.data
# recorded here and now from the bundled workload (test/workloads/fkwork.c):
# per process with frame pointers, and system-wide with kernel stacks.  Also:
# DWARF recordings are refused, split= writes one profile per process,
# bad options fail.
set -u
. "$(dirname "$0")/plugin-lib.sh"

perf record -q -g -F 999 -o "$T/proc.data" -- "$W" 600 >/dev/null 2>"$T/rec.err" ||
	unavailable "perf record -g failed: $(head -3 "$T/rec.err")"
perf record -q -a -g -F 499 -o "$T/sys.data" -- "$W" 400 >/dev/null 2>"$T/rec.err" ||
	unavailable "perf record -a -g failed: $(head -3 "$T/rec.err")"
perf record -q -F 999 -o "$T/nog.data" -- "$W" 300 >/dev/null 2>"$T/rec.err" ||
	fail "perf record without -g: $(head -3 "$T/rec.err")"
# (a fixed period, -c: the samples carry none, perf script prints it)
perf record -q -e cpu-clock -e task-clock -g -c 1000000 -o "$T/two.data" -- "$W" 300 \
	>/dev/null 2>"$T/rec.err" || fail "perf record of two events: $(head -3 "$T/rec.err")"

compare() { # DATA OPTION (empty for none)
	local fields=
	# perf script prints the PID only when asked; fp-collapse needs it
	case $2 in pid|tid) fields="-F +pid" ;; esac
	# the plugin leaves [vdso] frames unannotated, as fp-collapse
	# --user-maps does (plain --kernel keeps the Perl script's "_[k]")
	local collapse=${2:+--$2}
	case $2 in kernel|all) collapse="$collapse --user-maps" ;; esac
	same_as_pipeline "$(basename "$1") ${2:-default}" "$1" "$fields" "$collapse" "$2"
}

for data in "$T/proc.data" "$T/sys.data"; do
	for opt in "" pid tid kernel jit all addrs; do
		compare "$data" "$opt"
	done
done
# max-stack=N cuts where perf script --max-stack N cuts (context markers
# do not count)
same_as_pipeline "sys.data max-stack=3" "$T/sys.data" "--max-stack 3" "" "max-stack=3"
# inlined functions from debug information, as fp-collapse --inline
same_as_pipeline "proc.data inline" "$T/proc.data" "" "--inline" "inline"
same_as_pipeline "proc.data inline context" "$T/proc.data" "" "--inline --context" "inline context"
# without call graphs: the sample's own frame
for opt in "" tid addrs; do
	compare "$T/nog.data" "$opt"
done
# the workload's own functions must be there, named as fp-collapse names them
plugin "$T/proc.data" >"$T/got"
grep -q '^spin-[0-9];.*spinner;spin_outer;\(spin_mid;\)\?spin_leaf ' "$T/got" || fail "no spinner;spin_outer;...;spin_leaf stack"
grep -q '^fkwork-child;.*child_work' "$T/got" || fail "no fkwork-child;...;child_work stack"
plugin "$T/sys.data" kernel >"$T/got"
grep -q '_\[k\]' "$T/got" || fail "system-wide recording without kernel frames"

# event=NAME chooses as fp-collapse --event-filter does
if [ -s "$T/two.data" ]; then
	for ev in cpu-clock task-clock; do
		same_as_pipeline "event=$ev" "$T/two.data" "" "--event-filter $ev" "event=$ev"
	done
fi

# split: one file per process, together the same stacks as `pid`
plugin "$T/proc.data" pid >"$T/pid.folded"
if plugin "$T/proc.data" pid "split=$T/split" >"$T/out" 2>"$T/err"; then
	[ -s "$T/out" ] && fail "split= printed stacks on standard output"
	ls "$T/split"/.* 2>/dev/null | grep -q 'XXXX\|\.tmp' && fail "split= left temporary files"
	n=$(ls "$T/split"/*.folded | wc -l)
	[ "$n" -eq 2 ] || fail "split=: $n profiles, expected 2 (fkwork, fkwork-child)"
	cat "$T/split"/*.folded | sort >"$T/merged"
	cmp -s "$T/merged" "$T/pid.folded" || fail "split= files differ from the pid output"
	head -1 "$T/split/index.tsv" | grep -qx "$(printf 'file\tcomm\tpid\tsamples\tshare')" ||
		fail "index.tsv header"
	# every row names an existing file, with the comm and pid of its name
	tail -n +2 "$T/split/index.tsv" | while IFS=$'\t' read -r f c p s sh; do
		[ -f "$T/split/$f" ] || fail "index.tsv names missing $f"
		[ "$f" = "$c-$p.folded" ] || fail "index.tsv: $f is not $c-$p.folded"
		[ "$s" -gt 0 ] || fail "index.tsv: $f has no samples"
	done
	grep -q "^fkwork-child-[0-9]*\.folded	fkwork-child	" "$T/split/index.tsv" ||
		fail "the child is not named after its new name fkwork-child"
	awk -F'\t' 'NR > 1 { s += $5 } END { exit !(s > 0.999 && s < 1.001) }' "$T/split/index.tsv" ||
		fail "index.tsv shares do not add up to 1"
	echo "ok split: $n profiles"
else
	fail "split= failed: $(head -3 "$T/err")"
fi

# output=FILE: the same stacks, written through a temporary file
if plugin "$T/proc.data" "output=$T/out.folded" >"$T/out" 2>"$T/err"; then
	plugin "$T/proc.data" >"$T/want"
	[ -s "$T/out" ] && fail "output= also printed on standard output"
	cmp -s "$T/out.folded" "$T/want" || fail "output= differs from standard output"
	ls "$T" | grep -q 'out.folded.tmp' && fail "output= left its temporary file"
else
	fail "output= failed: $(head -3 "$T/err")"
fi

# a profile that cannot be written fails perf script
mkdir -p "$T/ro" && touch "$T/ro/file"
plugin "$T/proc.data" "split=$T/ro/file/sub" >/dev/null 2>"$T/err" && fail "split= into a file's path succeeded"
grep -q "cannot create directory" "$T/err" || fail "no message for an impossible split= directory"

# DWARF call graphs: a clear refusal, no profile
if perf record -q --call-graph dwarf -F 99 -o "$T/dwarf.data" -- "$W" 200 >/dev/null 2>&1; then
	if plugin "$T/dwarf.data" >"$T/out" 2>"$T/err"; then
		fail "a DWARF recording was folded (exit 0)"
	fi
	[ -s "$T/out" ] && fail "a DWARF recording printed a profile"
	grep -q 'dwarf.*perf script | fp-collapse' "$T/err" || fail "DWARF refusal lacks the advice: $(head -2 "$T/err")"
	echo "ok dwarf refused"
else
	fail "perf record --call-graph dwarf failed"
fi

# installed in perf's dlfilters directory, found by name and listed
mkdir -p "$T/exec/dlfilters" && cp "$PLUGIN" "$T/exec/dlfilters/"
env "${PLUGIN_ENV[@]}" perf --exec-path="$T/exec" script --list-dlfilters 2>/dev/null >"$T/out"
grep -q '^  foldkit.so  *fold stacks' "$T/out" || fail "perf script --list-dlfilters does not describe foldkit.so"
(cd "$T" && env "${PLUGIN_ENV[@]}" perf --exec-path="$T/exec" script -i "$T/proc.data" --dlfilter foldkit.so >"$T/got" 2>/dev/null)
plugin "$T/proc.data" >"$T/want"
[ -s "$T/got" ] && cmp -s "$T/got" "$T/want" || fail "--dlfilter foldkit.so by name did not work"

# options: help lists them; an unknown one fails
plugin "$T/proc.data" help >"$T/out" 2>&1 && fail "help should stop perf script"
grep -q 'split=DIR' "$T/out" || fail "help does not list split=DIR"
plugin "$T/proc.data" bogus >"$T/out" 2>"$T/err" && fail "an unknown option was accepted"
grep -q "unknown or incomplete option 'bogus'" "$T/err" || fail "no message for an unknown option"
plugin "$T/proc.data" min=5 >"$T/out" 2>"$T/err" && fail "min= without offcpu was accepted"
grep -q "need offcpu" "$T/err" || fail "no message for min= without offcpu"
plugin "$T/proc.data" offcpu state=Q >"$T/out" 2>"$T/err" && fail "state=Q was accepted"
grep -q "bad state list 'Q'" "$T/err" || fail "no message for state=Q"
plugin "$T/proc.data" split=x output=y >"$T/out" 2>"$T/err" && fail "split= with output= was accepted"
grep -q "cannot be combined" "$T/err" || fail "no message for split= with output="
plugin "$T/proc.data" context >"$T/out" 2>"$T/err" && fail "context without inline was accepted"
grep -q "context needs inline" "$T/err" || fail "no message for context without inline"

exit $FAILED
