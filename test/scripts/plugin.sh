#!/bin/bash
# plugin.sh - the perf dlfilter gives, byte for byte, what
# `perf script | fp-collapse` gives with the same options, on perf.data
# recorded here and now from the bundled workload (test/workloads/fkwork.c):
# per process with frame pointers, and system-wide with kernel stacks.  Also:
# DWARF recordings are refused; split= writes one profile per process, named
# after the process, with index.tsv (escaped, with units); pid= and comm=
# select processes; a process named java is named as fp-collapse names it;
# an empty profile is an error in every output mode;
# output= writes through links and keeps a file's mode; bad options fail.
set -u
. "$(dirname "$0")/plugin-lib.sh"

perf record -q -g -F 999 -o "$T/proc.data" -- "$W" 600 >/dev/null 2>"$T/rec.err" ||
	unavailable "perf record -g failed: $(head -3 "$T/rec.err")"
# System-wide, beside a dd that lives in the kernel (reads /dev/zero): the
# workload alone spends too little time there for a 0.4 s recording to be
# sure of a kernel frame, and a busy machine has no idle CPU to sample.
perf record -q -a -g -F 499 -o "$T/sys.data" -- sh -c \
	'"$1" 400 & timeout 0.4 dd if=/dev/zero of=/dev/null bs=64k 2>/dev/null; wait' sh "$W" \
	>/dev/null 2>"$T/rec.err" ||
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
# a process named "java" has names of its own (frame_name_append()), so
# the plugin names its frames apart, also the kernel's frames that a dd
# beside it has made known first (the lean frame cache resolves them
# again): system-wide, a copy of dd named java beside dd, both in the
# kernel
cp "$(command -v dd)" "$T/java"
perf record -q -a -g -F 499 -o "$T/java.data" -- sh -c \
	'timeout 0.4 dd if=/dev/zero of=/dev/null bs=64k 2>/dev/null &
	 sleep 0.1; timeout 0.3 "$1" if=/dev/zero of=/dev/null bs=64k 2>/dev/null; wait' sh "$T/java" \
	>/dev/null 2>"$T/rec.err" || fail "perf record -a -g of java: $(head -3 "$T/rec.err")"
for opt in "" kernel; do
	compare "$T/java.data" "$opt"
done
plugin "$T/java.data" >"$T/got"
grep -q '^java;' "$T/got" && grep -q '^dd;' "$T/got" || fail "java.data: no java and dd stacks"
# threads=1 (perf's thread alone) gives what the default's second thread
# does, byte for byte
for data in "$T/sys.data" "$T/java.data"; do
	for opt in "" tid; do
		plugin "$data" $opt threads=1 >"$T/threads1" 2>/dev/null
		plugin "$data" $opt >"$T/threads2" 2>/dev/null
		if [ -s "$T/threads1" ] && cmp -s "$T/threads1" "$T/threads2"; then
			echo "ok $(basename "$data") ${opt:-default} threads=1: the same $(wc -l <"$T/threads1") stacks"
		else
			fail "$(basename "$data") ${opt:-default}: threads=1 differs from two threads"
		fi
	done
done
rm -f "$T/threads1" "$T/threads2"
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
grep -q '^dd;.*_\[k\]' "$T/got" || fail "system-wide recording: no kernel frames under dd"

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
	# on-CPU, the lost callers' columns after unit (oncpu-callerloss.sh)
	head -1 "$T/split/index.tsv" |
		grep -qx "$(printf 'file\tcomm\tpid\tsamples\tshare\ttotal\tunit\tcaller_lost\tcaller_lost_in')" ||
		fail "index.tsv header: $(head -1 "$T/split/index.tsv")"
	# every row names an existing file, with the comm and pid of its name
	# cpu-clock: nanoseconds, the total the file's
	tail -n +2 "$T/split/index.tsv" | while IFS=$'\t' read -r f c p s sh tot u _; do
		[ -f "$T/split/$f" ] || fail "index.tsv names missing $f"
		[ "$f" = "$c-$p.folded" ] || fail "index.tsv: $f is not $c-$p.folded"
		[ "$s" -gt 0 ] || fail "index.tsv: $f has no samples"
		[ "$u" = ns ] || fail "index.tsv: $f: unit '$u', not ns"
		[ "$tot" = "$(awk '{ s += $NF } END { printf "%.0f\n", s }' "$T/split/$f")" ] ||
			fail "index.tsv: $f: total $tot is not the file's"
	done
	grep -q "(counts in ns)" "$T/err" || fail "split=: the unit is not on stderr"
	grep -q "^fkwork-child-[0-9]*\.folded	fkwork-child	" "$T/split/index.tsv" ||
		fail "the child is not named after its new name fkwork-child"
	# the main process after its main thread, which is seldom on the CPU
	# (it waits for the others): never after a thread that was sampled
	grep -q "^fkwork-[0-9]*\.folded	fkwork	" "$T/split/index.tsv" ||
		fail "the workload is not named after its main thread fkwork: $(cut -f1 "$T/split/index.tsv" | tr '\n' ' ')"
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

# output= through a link to a descriptor (as /dev/stdout is one): written
# to what the descriptor names, the link left alone; and to /dev/stdout
# itself with standard output redirected to a file
ln -s /proc/self/fd/1 "$T/stdout-link"
plugin "$T/proc.data" "output=$T/stdout-link" >"$T/via-link" 2>"$T/err" || fail "output= to a link to fd 1: $(head -2 "$T/err")"
[ -L "$T/stdout-link" ] || fail "output= to a link to fd 1 replaced the link"
cmp -s "$T/via-link" "$T/want" || fail "output= to a link to fd 1: not the profile on standard output"
# (in a mount namespace of its own over a /dev of its own, made private
# first: a plugin that replaced /dev/stdout must not break the machine it
# is tested on)
cat >"$T/devstdout.sh" <<'EOS'
set -e
mount --make-rprivate /dev
mount -t tmpfs tmpfs /dev
mknod -m 666 /dev/null c 1 3
mknod -m 666 /dev/zero c 1 5
mknod -m 666 /dev/full c 1 7
mknod -m 444 /dev/urandom c 1 9
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
set +e
env "${PLUGIN_ENV[@]}" perf script -i "$T/proc.data" --dlfilter "$PLUGIN" --dlarg output=/dev/stdout >"$T/via-dev"
echo $? >"$T/via-dev.st"
[ -L /dev/stdout ] || echo replaced >"$T/via-dev.st"
EOS
if unshare --mount --propagation unchanged sh -c 'mount --make-rprivate /dev' 2>/dev/null; then
	T=$T PLUGIN=$PLUGIN unshare --mount --propagation unchanged bash -c \
		"PLUGIN_ENV=(${PLUGIN_ENV[*]}); . '$T/devstdout.sh'" 2>"$T/err"
	case $(cat "$T/via-dev.st" 2>/dev/null) in
	0) cmp -s "$T/via-dev" "$T/want" || fail "output=/dev/stdout: not the profile on standard output" ;;
	replaced) fail "output=/dev/stdout replaced /dev/stdout" ;;
	*) fail "output=/dev/stdout: $(head -2 "$T/err")" ;;
	esac
else
	echo "note: no mount namespace here: output=/dev/stdout itself not tried" >&2
fi
[ -L /dev/stdout ] || fail "/dev/stdout is not a link"
[ $FAILED = 0 ] && echo "ok output= to /dev/stdout and a link to fd 1: written through"
# an existing file keeps its mode; a new one gets the umask
printf 'old\n' >"$T/mode.folded" && chmod 0604 "$T/mode.folded"
plugin "$T/proc.data" "output=$T/mode.folded" 2>/dev/null
[ "$(stat -c %a "$T/mode.folded")" = 604 ] || fail "output= changed a file's mode to $(stat -c %a "$T/mode.folded")"
(umask 027 && plugin "$T/proc.data" "output=$T/umask.folded" 2>/dev/null)
[ "$(stat -c %a "$T/umask.folded")" = 640 ] || fail "output= made a file of mode $(stat -c %a "$T/umask.folded") with umask 027"
cmp -s "$T/mode.folded" "$T/want" && echo "ok output= keeps a file's mode, makes one with the umask" ||
	fail "output= over an existing file: not the profile"

# selectors: pid= and comm= pick processes without awk
child=$(awk -F'\t' '$2 == "fkwork-child" { print $3 }' "$T/split/index.tsv")
# every sample of the child's pid: one taken before it renamed itself is
# still "fkwork-PID" (rare, but a loaded machine makes it happen)
grep -E "^[^;]*-$child;" "$T/pid.folded" >"$T/child.want"
plugin "$T/proc.data" pid "pid=$child" >"$T/got" 2>"$T/err" && cmp -s "$T/got" "$T/child.want" ||
	fail "pid=$child: not the child's stacks: $(head -2 "$T/err")"
plugin "$T/proc.data" pid 'comm=^fkwork-ch' >"$T/got" 2>"$T/err" && cmp -s "$T/got" "$T/child.want" ||
	fail "comm=^fkwork-ch: not the child's stacks: $(head -2 "$T/err")"
plugin "$T/proc.data" pid 'comm=^fkwork$' "split=$T/one" >/dev/null 2>&1
[ "$(cut -f2 "$T/one/index.tsv" | tr '\n' ' ')" = "comm fkwork " ] && [ "$(ls "$T/one" | wc -l)" = 2 ] ||
	fail "comm=^fkwork\$ split=: $(ls "$T/one" | tr '\n' ' ')"
echo "ok pid= and comm= select processes"
# comm= selects for every output: split= writes no file, speedscope= and
# pprof= hold no thread, sample or frame of a process it leaves out
parent=$(awk -F'\t' '$2 == "fkwork" { print $3 }' "$T/split/index.tsv")
frames() { sed 's/ [^ ]*$//; s/^[^;]*;\{0,1\}//' | tr ';' '\n' | sed '/^$/d' | sort -u; }
# its threads name their stacks' process frames: "NAME-PID"
grep "^[^;]*-$parent;" "$T/pid.folded" | frames >"$T/parent.frames"
frames <"$T/child.want" >"$T/child.frames"
comm -23 "$T/parent.frames" "$T/child.frames" >"$T/parent.only"
[ -s "$T/parent.only" ] || fail "the workload's parent has no frame of its own: nothing to check"
plugin "$T/proc.data" 'comm=^fkwork-ch' "split=$T/sel" "speedscope=$T/sel.json" \
	"pprof=$T/sel.pb.gz" >/dev/null 2>"$T/err" || fail "comm= with every output: $(head -2 "$T/err")"
[ "$(ls "$T/sel" | tr '\n' ' ')" = "fkwork-child-$child.folded fkwork-child-$child.speedscope.json index.tsv " ] ||
	fail "comm=^fkwork-ch split= speedscope: $(ls "$T/sel" | tr '\n' ' ')"
for json in "$T/sel.json" "$T/sel/fkwork-child-$child.speedscope.json"; do
	grep -o '"type":"sampled","name":"[^"]*"' "$json" | grep -v "\"fkwork-child $child/[0-9]*\"$" &&
		fail "comm=^fkwork-ch: $(basename "$json") has a profile of another process"
	grep -Fxf "$T/parent.only" <(grep -o '^{"name":"[^"]*"' "$json" | cut -d'"' -f4) &&
		fail "comm=^fkwork-ch: $(basename "$json") has frames of another process"
done
"$BIN/pprof-collapse" --tagroot=pid "$T/sel.pb.gz" | cut -d';' -f1 | sort -u >"$T/got"
[ "$(cat "$T/got")" = "pid=$child" ] || fail "comm=^fkwork-ch: pprof= has samples of pids $(tr '\n' ' ' <"$T/got")"
grep -Fxf "$T/parent.only" <(gzip -dc "$T/sel.pb.gz" | tr -c '[:alnum:]_.:+-' '\n') &&
	fail "comm=^fkwork-ch: pprof= has frames of another process"
[ $FAILED = 0 ] && echo "ok comm= selects for split=, speedscope= and pprof= alike"

# nothing to write, in every output mode: said, status 1, no file made or
# replaced: a selection matching nothing, a comm= matching nothing, an
# idle process
printf 'old\n' >"$T/keep.folded"
sleep 5 &
sleeper=$!
perf record -q -g -p $sleeper -o "$T/idle.data" -- sleep 0.3 >/dev/null 2>&1 || fail "perf record -p of a sleeping process failed"
kill $sleeper; wait $sleeper 2>/dev/null
before=$FAILED FAILED=0
for mode in "" "output=$T/keep.folded" "split=$T/none"; do
	for how in --pid pid= comm= idle; do
		data=$T/proc.data args= SCRIPT_ARGS=
		case $how in
		--pid) SCRIPT_ARGS=--pid=2147483646
		       re="none of the [0-9]* samples perf read passed its selection" ;;
		pid=) args=pid=2147483646
		      re="no samples of pid=2147483646 ([0-9]* of other processes)" ;;
		comm=) args='comm=^nothing-like-it$'
		       re="no process matches comm=\\^nothing-like-it\\\$; the recording's: fkwork ([0-9]*), fkwork-child ([0-9]*)" ;;
		idle) data=$T/idle.data re="the recording holds no samples" ;;
		esac
		SCRIPT_ARGS=$SCRIPT_ARGS plugin "$data" $args $mode >"$T/out" 2>"$T/err"; st=$?
		if [ $st != 1 ] || [ -s "$T/out" ] || ! grep -q "^foldkit: $re" "$T/err"; then
			fail "nothing to write ($how, ${mode:-stdout}): status $st, $(wc -l <"$T/out") lines, $(head -2 "$T/err")"
		fi
	done
done
[ "$(cat "$T/keep.folded")" = old ] || fail "nothing to write: output= replaced the file"
[ -e "$T/none" ] && fail "nothing to write: split= made its directory"
[ $FAILED = 0 ] && echo "ok nothing to write: status 1 and why, in every output mode"
[ $before = 0 ] || FAILED=1

# index.tsv escapes names a process chose, and no file name reads as an option
cat >"$T/namer.c" <<'EOC'
#include <sys/prctl.h>
#include <time.h>
int main(int argc, char **argv)
{
	volatile unsigned long x = 0;
	time_t end = time(0) + 1;
	prctl(PR_SET_NAME, argv[1]);
	while (time(0) <= end)
		x++;
	return 0;
}
EOC
cc -O1 -o "$T/namer" "$T/namer.c" || fail "cannot build the renaming program"
perf record -q -g -o "$T/named.data" -- "$T/namer" "$(printf -- '-rf\tx\033[2J\\')" >/dev/null 2>&1 ||
	fail "perf record of the renaming program failed"
plugin "$T/named.data" "split=$T/named" 2>"$T/err" || fail "split= of a strange name: $(head -2 "$T/err")"
row=$(tail -n +2 "$T/named/index.tsv" | head -1)
file=${row%%	*}
case $file in -*) fail "split=: a file named '$file'" ;; esac
printf '%s' "$row" | cut -f2 | grep -qx -- '-rf\\x09x\\x1b\[2J\\\\' ||
	fail "index.tsv: the name is not escaped: $(printf '%s' "$row" | cut -f2 | od -c | head -2)"
[ "$(tail -c 1 "$T/named/index.tsv" | od -An -c | tr -d ' ')" = '\n' ] || fail "index.tsv does not end with a newline"
[ "$(wc -l <"$T/named/index.tsv")" = 2 ] || fail "index.tsv: $(wc -l <"$T/named/index.tsv") lines"
echo "ok index.tsv: $(printf '%s' "$row" | cut -f1,2)"

# a profile that cannot be written fails perf script
mkdir -p "$T/ro" && touch "$T/ro/file"
plugin "$T/proc.data" "split=$T/ro/file/sub" >/dev/null 2>"$T/err" && fail "split= into a file's path succeeded"
grep -q "cannot create directory" "$T/err" || fail "no message for an impossible split= directory"

# DWARF call graphs: a clear refusal, no profile
if perf record -q --call-graph dwarf -F 999 -o "$T/dwarf.data" -- "$W" 300 >/dev/null 2>&1; then
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
