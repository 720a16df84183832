#!/bin/bash
# The plugin's bad-input catalogue (issue 6): bad --dlarg values stop perf
# script with a message naming the value and a non-zero status; output
# that cannot be written is an error, never a success; a perf.data file
# that is garbage, empty or cut off is rejected by perf itself.
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

# perf.data files that are not whole: perf script rejects them before or
# while reading; the plugin must not turn that into a success
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
# cut inside the sample records (the data section starts after the header)
size=$(stat -c %s "$T/rec.data")
head -c $((size / 2)) "$T/rec.data" >"$T/cut.data"
# perf rejects such a file, unless the cut falls between two records: then
# it reads the records before the cut, and the profile must be part of the
# whole one (well-formed lines, no more samples than the whole recording)
plugin "$T/cut.data" >"$T/out" 2>"$T/err"; st=$?
if [ $st != 0 ]; then
	perf_rejects "perf.data cut in half" "$T/cut.data"
else
	plugin "$T/rec.data" >"$T/whole" 2>/dev/null
	if awk 'FNR == NR { whole += $NF; next }
		!/^[^ ].* [0-9]+$/ { bad = 1 } { part += $NF }
		END { exit !(bad == 0 && part <= whole) }' "$T/whole" "$T/out"; then
		echo "ok perf.data cut in half, between records: read up to the cut"
	else
		fail "perf.data cut in half: status 0 and a profile that is not part of the whole: $(head -2 "$T/out")"
	fi
fi

exit $FAILED
