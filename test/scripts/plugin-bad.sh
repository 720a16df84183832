#!/bin/bash
# The plugin's bad-input catalogue (issue 6): bad --dlarg values stop perf
# script with a message naming the value and a non-zero status; output
# that cannot be written is an error, never a success; a perf.data file
# that is garbage or empty is rejected by perf itself; one that is cut
# short or corrupt gives no profile, a message and a non-zero status, and
# never replaces an earlier output= or split= profile.
. "$(dirname "$0")/plugin-lib.sh"

perf record -q -g -F 999 -o "$T/rec.data" -- "$W" 200 >/dev/null 2>"$T/rec.err" ||
	unavailable "perf record -g failed: $(head -3 "$T/rec.err")"
plugin "$T/rec.data" >"$T/good" 2>"$T/err" || fail "the plugin failed on a good recording: $(head -3 "$T/err")"
[ -s "$T/good" ] || fail "the plugin printed nothing for a good recording"

# rejects NAME REGEX DLARG...: the plugin exits non-zero, prints no stacks,
# and says REGEX on stderr
rejects() {
	local name=$1 re=$2 st; shift 2
	plugin "$T/rec.data" "$@" >"$T/out" 2>"$T/err"; st=$?
	if [ $st = 0 ]; then
		fail "$name: exit status 0"
	elif [ -s "$T/out" ]; then
		fail "$name: printed stacks: $(head -2 "$T/out")"
	elif ! grep -Eq -- "$re" "$T/err"; then
		fail "$name: stderr lacks /$re/: $(head -3 "$T/err")"
	else
		echo "ok $name: status $st: $(grep -E -- "$re" "$T/err" | head -1)"
	fi
}

rejects "unknown option" "^foldkit: unknown or incomplete option 'bogus'" bogus
rejects "option without its value" "^foldkit: unknown or incomplete option 'event='" event=
rejects "min= not a number" "^foldkit: bad min 'abc': " offcpu min=abc
rejects "min= negative" "^foldkit: bad min '-5': " offcpu min=-5
rejects "min= above 2^64" "^foldkit: bad min '99999999999999999999': " offcpu min=99999999999999999999
rejects "state= unknown letter" "^foldkit: bad state list 'Q': " offcpu state=Q
rejects "state= empty" "^foldkit: bad state list '': " offcpu state=
rejects "max-stack= not a number" "^foldkit: bad max-stack 'x': " max-stack=x
rejects "threads= beyond 2" "^foldkit: bad threads '3': 1 or 2" threads=3
rejects "pid= not a number" "^foldkit: bad pid list '12x': " pid=12x
rejects "pid= empty item" "^foldkit: bad pid list '1,,2': " pid=1,,2
rejects "comm= bad regex" "^foldkit: bad comm regex '\(': " "comm=("
rejects "split= and output= together" "split= and output= cannot be combined" split="$T/s" output="$T/o"
rejects "split= to an unwritable path" "^foldkit: /proc/x: cannot create directory: " split=/proc/x
rejects "output= to an unwritable path" "^foldkit: /proc/x[^:]*: cannot create: " output=/proc/x

# output=/dev/full: a write error naming the file, status 1, and the device
# is written in place (an earlier version renamed a temporary file over it,
# replacing /dev/full with a regular file when run as root)
rejects "output=/dev/full" "^foldkit: /dev/full: write error: No space left on device$" output=/dev/full
[ -c /dev/full ] || fail "output=/dev/full: /dev/full is no longer a character device"
# standard output on /dev/full
plugin "$T/rec.data" >/dev/full 2>"$T/err" && fail "stdout on /dev/full: exit status 0"
grep -q "^foldkit: <stdout>: write error: No space left on device$" "$T/err" &&
	echo "ok stdout on /dev/full: $(head -1 "$T/err")" ||
	fail "stdout on /dev/full: no write error: $(head -3 "$T/err")"
# output= to a FIFO is written in place and gets the whole profile
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/fifo.out" &
reader=$!
plugin "$T/rec.data" output="$T/fifo" 2>"$T/err" || fail "output= to a FIFO failed: $(head -3 "$T/err")"
wait $reader
[ -p "$T/fifo" ] || fail "output= to a FIFO: the FIFO was replaced"
cmp -s "$T/good" "$T/fifo.out" && echo "ok output= to a FIFO: $(wc -l <"$T/fifo.out") stacks" ||
	fail "output= to a FIFO: not the same stacks as on standard output"

# A closed pipe: the reader (true) is gone long before perf has read the
# recording, so the profile's first write fails.  Killed by SIGPIPE
# (status 141, silent), or with SIGPIPE ignored status 1 and a message;
# never status 0 after a failed write.
for sig in default ignored; do
	( [ $sig = ignored ] && trap '' PIPE
	  plugin "$T/rec.data" 2>"$T/err"; echo $? >"$T/st" ) | true
	st=$(cat "$T/st")
	if { [ "$st" = 141 ] && [ ! -s "$T/err" ]; } ||
	   { [ "$st" = 1 ] && grep -q "^foldkit: <stdout>: write error: Broken pipe$" "$T/err"; }; then
		echo "ok closed pipe, SIGPIPE $sig: status $st"
	else
		fail "closed pipe, SIGPIPE $sig: status $st: $(head -3 "$T/err")"
	fi
done

# perf.data files perf script rejects before reading
perf_rejects() {
	local name=$1 file=$2 st
	plugin "$file" >"$T/out" 2>"$T/err"; st=$?
	if [ $st = 0 ]; then
		fail "$name: exit status 0"
	elif grep -q ';' "$T/out"; then
		fail "$name: printed stacks: $(head -2 "$T/out")"
	else
		echo "ok $name: status $st: $(head -1 "$T/err")"
	fi
}
head -c 100000 /dev/urandom >"$T/garbage.data"
perf_rejects "garbage perf.data" "$T/garbage.data"
: >"$T/empty.data"
perf_rejects "empty perf.data" "$T/empty.data"

# perf.data files that are not whole: perf would fold part of the samples
# (all those before a cut between records) and stop.  No profile, a message
# that says what is wrong, a non-zero status; an earlier output= file and
# split= directory are left as they were.
plugin "$T/rec.data" "output=$T/kept.folded" 2>/dev/null || fail "output= on a good recording failed"
plugin "$T/rec.data" "split=$T/kept" 2>/dev/null || fail "split= on a good recording failed"
cp "$T/kept.folded" "$T/kept.want"
(cd "$T/kept" && cat index.tsv *.folded) >"$T/kept.dir"
damaged() { # NAME FILE REGEX
	local name=$1 file=$2 re=$3 st mode
	for mode in stdout "output=$T/kept.folded" "split=$T/kept"; do
		[ $mode = stdout ] && mode=
		plugin "$file" $mode >"$T/out" 2>"$T/err"; st=$?
		if [ $st = 0 ]; then
			fail "$name ${mode:-stdout}: exit status 0"
		elif [ -s "$T/out" ]; then
			fail "$name ${mode:-stdout}: printed $(head -1 "$T/out")"
		elif ! grep -Eq -- "$re" "$T/err"; then
			fail "$name ${mode:-stdout}: stderr lacks /$re/: $(grep -v Warning "$T/err" | head -2)"
		fi
	done
	cmp -s "$T/kept.folded" "$T/kept.want" || fail "$name: output= replaced the earlier profile"
	(cd "$T/kept" && cat index.tsv *.folded) | cmp -s - "$T/kept.dir" ||
		fail "$name: split= changed the earlier profiles"
	echo "ok $name: $(grep -E -- "$re" "$T/err" | head -1)"
}
u64() { od -An -t u8 -j "$2" -N 8 "$1" | tr -d ' '; }		# FILE OFFSET
u16() { od -An -t u2 -j "$2" -N 2 "$1" | tr -d ' '; }
poke() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }	# FILE OFFSET BYTES
doff=$(u64 "$T/rec.data" 40)
dsize=$(u64 "$T/rec.data" 48)
# the offset of a record about two thirds into the data section
rec=$doff
while [ $rec -lt $((doff + dsize * 2 / 3)) ]; do rec=$((rec + $(u16 "$T/rec.data" $((rec + 6))))); done

size=$(stat -c %s "$T/rec.data")
head -c $((size / 2)) "$T/rec.data" >"$T/cut.data"
damaged "perf.data cut in half" "$T/cut.data" "^foldkit: .*/cut\.data: cut short: its header says the samples end at byte $((doff + dsize)), the file has $((size / 2)) bytes: no profile made"
# cut exactly between two records: perf would read up to the cut and stop
head -c $rec "$T/rec.data" >"$T/cut2.data"
damaged "perf.data cut between records" "$T/cut2.data" "cut short"
cp "$T/rec.data" "$T/zero.data" && poke "$T/zero.data" $((rec + 6)) '\0\0'
damaged "a record of size 0" "$T/zero.data" "byte $rec: a record of type [0-9]+ and 0 bytes, too short"
cp "$T/rec.data" "$T/type0.data" && poke "$T/type0.data" $rec '\0\0\0\0'
damaged "a record of type 0" "$T/type0.data" "byte $rec: a record of type 0"
cp "$T/rec.data" "$T/unfinished.data" && poke "$T/unfinished.data" 48 '\0\0\0\0\0\0\0\0'
damaged "perf record killed (no data size)" "$T/unfinished.data" "not finished"
# a record whose type perf does not know: perf stops at it, part-way
cp "$T/rec.data" "$T/unknown.data" && poke "$T/unknown.data" $rec '\377\177\0\0'
damaged "a record of an unknown type" "$T/unknown.data" "perf stopped before (the end of the recording|reading any sample)"
# cut only in the feature sections after the samples: whole
head -c $(( (doff + dsize + size) / 2 )) "$T/rec.data" >"$T/features.data"
plugin "$T/features.data" >"$T/out" 2>"$T/err" && cmp -s "$T/out" "$T/good" &&
	echo "ok perf.data cut in the feature sections: the whole profile" ||
	fail "perf.data cut in the feature sections: $(head -2 "$T/err")"

exit $FAILED
