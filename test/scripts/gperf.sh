#!/bin/bash
# test/scripts/gperf.sh — gperf-collapse on real gperftools CPU profiles of
# the bundled workload (demo/workload.c under LD_PRELOAD=libprofiler.so),
# checked against gperftools' own `google-pprof --collapsed`:
#  - the same stacks of the program's own functions with the same counts,
#    and the same total.  pprof's output is first made comparable: it
#    prints one line per distinct list of addresses (so equal stacks
#    repeat), tags names taken from nm with "<ADDRESS>", and marks inlined
#    functions "[inline]"; and inside the C library the two may name a
#    frame differently (of several symbols at one address they may pick
#    others, and where libc's debug information is installed pprof names a
#    frame after the function inlined there, dropping the one it is inlined
#    in), so each run of frames outside the program counts as one frame;
#  - the profile read with the executable moved and renamed (the seeds'
#    container case) gives the same stacks;
#  - the profile converted to big-endian words gives the same stacks;
#  - --inline expands an always_inline chain (work;stage;mix) and keeps
#    every sample.
set -u
BIN=${BIN:-build/bin}
GC=$BIN/gperf-collapse
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

skip() {
	echo "gperf.sh: SKIP: $*" >&2
	if [ "${CI:-}" = true ]; then
		echo "gperf.sh: CI=true, so a skip is a failure" >&2
		exit 1
	fi
	exit 77
}
bad() { echo "gperf.sh: FAIL: $*" >&2; fail=1; }

for c in cc google-pprof nm readelf perl awk pkg-config; do
	command -v $c >/dev/null 2>&1 || skip "$c not found (tools/deps installs it)"
done
[ -x "$GC" ] || { echo "gperf.sh: no $GC; run make" >&2; exit 1; }
LIBPROFILER=$(pkg-config --variable=libdir libprofiler 2>/dev/null)/libprofiler.so
[ -e "$LIBPROFILER" ] || skip "libprofiler.so not found (libgoogle-perftools-dev)"

cc -O2 -g -fno-omit-frame-pointer -pthread "$ROOT/demo/workload.c" -o "$T/workload" ||
	{ echo "gperf.sh: cannot build the workload" >&2; exit 1; }
# 1000 Hz of CPU time, not the default 100: on a loaded machine the workload
# may get only a few tens of milliseconds of CPU in its second
LD_PRELOAD=$LIBPROFILER CPUPROFILE=$T/w.prof CPUPROFILE_FREQUENCY=1000 "$T/workload" 1 3 >/dev/null 2>&1
[ -s "$T/w.prof" ] || skip "libprofiler wrote no profile"

total() { awk '{ s += $NF } END { printf "%.0f\n", s }' "$1"; }

# The program's own functions (nm), to compare stacks by; not _init and
# _fini, the C runtime's: a sample in a PLT stub (.plt follows .init) has
# no symbol, which pprof names after the symbol before it, _init, and
# gperf-collapse after the file, "[workload]".
program_functions() { # executable
	nm "$1" | awk '$2 ~ /^[tTwW]$/ && $3 != "_init" && $3 != "_fini" { sub(/@.*/, "", $3); print $3 }' | sort -u
}

# Folded stacks made comparable, summed: pprof's "<ADDRESS>" tags and
# symbol versions removed, its inlined frames ("NAME[inline]": a sample in
# the program's inlined now() is worker;now[inline] there) dropped, and every run of frames that
# are not the program's own functions made one "*" (library internals: see
# the header).
canonical() { # functions folded
	awk 'NR == FNR { own[$1] = 1; next }
		{ c = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";"); s = ""; lib = 0
		  for (i = 1; i <= k; i++) { x = f[i]
			# gperf-collapse without --inline names no inlined function
			if (x ~ /\[inline\]$/) continue
			sub(/<[0-9a-f]+>$/, "", x); sub(/@.*/, "", x)
			if (!(x in own)) { if (lib) continue; x = "*"; lib = 1 } else lib = 0
			s = s (i > 1 ? ";" : "") x }
		  sum[s] += c }
		END { for (s in sum) print s, sum[s] }' "$1" "$2" | LC_ALL=C sort
}

program_functions "$T/workload" > "$T/own"

if ! "$GC" "$T/workload" "$T/w.prof" > "$T/ours" 2> "$T/err"; then
	bad "gperf-collapse failed: $(head -3 "$T/err")"
fi
google-pprof --collapsed "$T/workload" "$T/w.prof" 2>/dev/null > "$T/pprof"
[ -s "$T/pprof" ] || skip "google-pprof printed nothing"
canonical "$T/own" "$T/ours" > "$T/ours.c"
canonical "$T/own" "$T/pprof" > "$T/pprof.c"
n=$(total "$T/ours")
[ "$n" -ge 20 ] || bad "only $n samples in the profile"
[ "$n" = "$(total "$T/pprof")" ] || bad "$n samples, pprof counts $(total "$T/pprof")"
if ! cmp -s "$T/pprof.c" "$T/ours.c"; then
	bad "stacks differ from google-pprof --collapsed:"
	diff "$T/pprof.c" "$T/ours.c" | head -20 >&2
fi
grep -q ';worker;hold_lock;spin ' "$T/ours" || bad "no worker;hold_lock;spin stack"

# The seeds' case: the profile was written in a container at another path.
mkdir "$T/moved" && cp "$T/workload" "$T/moved/server"
"$GC" "$T/moved/server" "$T/w.prof" > "$T/moved.out" 2> "$T/err" || bad "moved: $(head -1 "$T/err")"
# (a frame without a symbol is named after the file: "[server]" there)
sed 's/\[server\]/[workload]/g' "$T/moved.out" | cmp -s "$T/ours" - ||
	bad "the moved executable gives other stacks"

# The same profile in big-endian words (the trailer and maps unchanged).
perl -e 'local $/; my $d = <STDIN>; my $o = "";
	for (my $i = 0; $i + 8 <= length $d; $i += 8) {
		my $w = substr($d, $i, 8); $o .= reverse $w;
		if ($i >= 16 && substr($d, $i - 16, 24) eq pack("Q<3", 0, 1, 0)) {
			$o .= substr($d, $i + 8); last }
	}
	print $o' < "$T/w.prof" > "$T/w.be.prof"
"$GC" "$T/workload" "$T/w.be.prof" > "$T/be.out" 2> "$T/err" || bad "big-endian: $(head -1 "$T/err")"
cmp -s "$T/ours" "$T/be.out" || bad "the big-endian profile gives other stacks"

# --inline: an always_inline chain inside work()
cat > "$T/inl.c" <<'EOF'
#include <stdlib.h>
#define AI static inline __attribute__((always_inline))
AI unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}
AI unsigned long stage(unsigned long x) { return mix(x ^ 0x9e3779b97f4a7c15UL) + mix(x); }
static volatile unsigned long sink;
__attribute__((noinline)) unsigned long work(unsigned long n)
{
	unsigned long acc = 0;
	for (unsigned long i = 0; i < n; i++)
		acc += stage(i);
	return acc;
}
int main(int argc, char **argv)
{
	sink = work(argc > 1 ? strtoul(argv[1], NULL, 10) : 10000000);
	return 0;
}
EOF
cc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer "$T/inl.c" -o "$T/inl"
LD_PRELOAD=$LIBPROFILER CPUPROFILE=$T/inl.prof "$T/inl" >/dev/null 2>&1
"$GC" "$T/inl" "$T/inl.prof" > "$T/plain" 2> "$T/err" || bad "inl: $(head -1 "$T/err")"
"$GC" --inline "$T/inl" "$T/inl.prof" > "$T/inline" 2> "$T/err" || bad "--inline: $(head -1 "$T/err")"
[ "$(total "$T/plain")" = "$(total "$T/inline")" ] || bad "--inline changes the sample total"
grep -q ';work ' "$T/plain" || bad "no work frame without --inline"
grep -q ';work;stage;mix ' "$T/inline" || bad "--inline does not expand work;stage;mix"

[ $fail = 0 ] && echo "gperf.sh: ok ($n samples, $(wc -l < "$T/ours") stacks)"
exit $fail
