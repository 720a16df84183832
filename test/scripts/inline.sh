#!/bin/bash
# test/scripts/inline.sh — fp-collapse --inline on real recordings, checked
# frame by frame against `addr2line -a ADDR -e DSO -i -f -s -C`, the command
# stackcollapse-perf.pl runs for every address.
#
# It builds a shared library and three executables calling it (PIE, non-PIE,
# and non-PIE with .text moved away from its file offset), each with a chain
# of always_inline functions, and a C++ program (templates, an anonymous
# namespace, a lambda behind std::function), records them with `perf record -g` (frame
# pointers) and with `--call-graph dwarf` (where perf script itself prints
# "(inlined)" frames), and checks that:
#  - the inlined functions appear in `perf script | fp-collapse --inline`
#    (and with --context, as "func:file.c:LINE");
#  - every distinct (DSO, address) of those files resolves to what addr2line
#    prints for it, reversed to outermost first, with or without --context;
#    where addr2line has no answer ("??") or no line information, to the
#    frame's own symbol, exactly as without --inline;
#  - perf's own "(inlined)" frames are not repeated after the expansion.
# perf script prints file offsets; addr2line wants addresses, so the test
# translates through the PT_LOAD segments `readelf -l` lists (the identity for
# PIE and shared objects, which is why the Perl script works there only).
# Frames of system libraries are not compared: their debug information
# depends on the machine (and binutils 2.40 misnames some of glibc's files).
# addr2line runs here, in the test: fp-collapse itself starts no process.
set -u
BIN=${BIN:-build/bin}
FP=$BIN/fp-collapse
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
TAB=$(printf '\t')

skip() {
	echo "inline.sh: SKIP: $*" >&2
	if [ "${CI:-}" = true ]; then
		echo "inline.sh: CI=true, so a skip is a failure" >&2
		exit 1
	fi
	exit 77
}
bad() { echo "inline.sh: FAIL: $*" >&2; fail=1; }

for c in perf cc c++ addr2line readelf awk join; do
	command -v $c >/dev/null 2>&1 || skip "$c not found"
done
[ -x "$FP" ] || { echo "inline.sh: no $FP; run make" >&2; exit 1; }

cat >"$T/chain.h" <<'EOF'
#define AI static inline __attribute__((always_inline))
AI unsigned long PFX(mix)(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}
AI unsigned long PFX(stage)(unsigned long x)
{
	return PFX(mix)(x ^ 0x9e3779b97f4a7c15UL) + PFX(mix)(x);
}
EOF
cat >"$T/lib.c" <<'EOF'
#define PFX(n) lib_##n
#include "chain.h"
__attribute__((noinline)) unsigned long lib_work(unsigned long n)
{
	unsigned long acc = 0;
	for (unsigned long i = 0; i < n; i++)
		acc += lib_stage(i);
	return acc;
}
EOF
cat >"$T/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#define PFX(n) n
#include "chain.h"
unsigned long lib_work(unsigned long n);
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
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
	sink = work(n);
	sink += lib_work(n);
	printf("%lu\n", sink);
	return 0;
}
EOF
cat >"$T/cxx.cc" <<'EOF'
#include <cstdio>
#include <cstdlib>
#include <functional>
namespace ns {
template <typename T> struct Acc {
	T v{};
	__attribute__((always_inline)) void add(T x)
	{
		for (int i = 0; i < 64; i++)
			v = v * 6364136223846793005UL + x;
	}
};
namespace {
__attribute__((always_inline)) inline unsigned long step(Acc<unsigned long> &a, unsigned long i)
{
	a.add(i);
	a.add(i ^ 7);
	return a.v;
}
}
__attribute__((noinline)) unsigned long run(unsigned long n, const std::function<unsigned long(unsigned long)> &f)
{
	Acc<unsigned long> a;
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += step(a, f(i));
	return s;
}
}
int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], nullptr, 10) : 2000000;
	auto spin = [](unsigned long x) {
		for (int i = 0; i < 64; i++)
			x = x * 3 + 1;
		return x;
	};
	std::printf("%lu\n", ns::run(n, spin));
}
EOF
# Leaf functions keep their frame pointer so the caller shows up.
CFLAGS="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
cc $CFLAGS -fPIC -shared -o "$T/libinl.so" "$T/lib.c" &&
cc $CFLAGS -o "$T/pie" "$T/prog.c" -L"$T" -linl -Wl,-rpath,"$T" &&
cc $CFLAGS -no-pie -o "$T/nopie" "$T/prog.c" -L"$T" -linl -Wl,-rpath,"$T" &&
cc $CFLAGS -no-pie -Wl,--section-start=.text=0x900000 -o "$T/moved" "$T/prog.c" -L"$T" -linl -Wl,-rpath,"$T" &&
c++ $CFLAGS -o "$T/cxx" "$T/cxx.cc" ||
	{ echo "inline.sh: cannot compile the test programs" >&2; exit 1; }

record() { # name perf-record-options... -- program
	local name=$1; shift
	if ! perf record -q -o "$T/$name.data" "$@" >/dev/null 2>"$T/$name.err"; then
		skip "perf record is not permitted here ($(head -1 "$T/$name.err")); see perf_event_paranoid"
	fi
	perf script -i "$T/$name.data" >"$T/$name.txt" 2>/dev/null ||
		{ echo "inline.sh: perf script failed on $name" >&2; exit 1; }
}
record pie -g -e cpu-clock -F 2000 "$T/pie"
record nopie -g -e cpu-clock -F 2000 "$T/nopie"
record moved -g -e cpu-clock -F 2000 "$T/moved" 1000000
record cxx -g -e cpu-clock -F 2000 "$T/cxx"
record dwarf --call-graph dwarf -e cpu-clock -F 300 "$T/pie" 500000

# 1. The real pipeline shows the inlined functions.
for name in pie nopie moved; do
	"$FP" --inline "$T/$name.txt" >"$T/$name.folded" || bad "$name: fp-collapse --inline failed"
	"$FP" --inline --context "$T/$name.txt" >"$T/$name.ctx" || bad "$name: --inline --context failed"
	grep -q ';work;stage;mix ' "$T/$name.folded" || bad "$name: no work;stage;mix stack"
	grep -q ';lib_work;lib_stage;lib_mix ' "$T/$name.folded" || bad "$name: no lib_work;lib_stage;lib_mix stack"
	grep -Eq ';work:prog\.c:[0-9]+;stage:chain\.h:[0-9]+;mix:chain\.h:[0-9]+ ' "$T/$name.ctx" ||
		bad "$name: --context lacks work:prog.c:N;stage:chain.h:N;mix:chain.h:N"
	# without --inline the inlined functions are invisible
	"$FP" "$T/$name.txt" | grep -q ';stage' && bad "$name: stage visible without --inline?"
done

# C++: names demangled with their argument lists, as addr2line -C prints.
"$FP" --inline "$T/cxx.txt" >"$T/cxx.folded" || bad "cxx: fp-collapse --inline failed"
grep -Fq ';ns::run(unsigned long, std::function<unsigned long (unsigned long)> const&);step;ns::Acc<unsigned long>::add(unsigned long) ' "$T/cxx.folded" ||
	bad "cxx: no run;step;Acc<unsigned long>::add stack"
grep -Fq ';_M_invoke;__invoke_r<' "$T/cxx.folded" || bad "cxx: the lambda's inline chain is missing"

# 2. perf's own "(inlined)" frames (DWARF call graphs): plain names, as
# stackcollapse-perf.pl gives them; "_[i]" with --annotate-inlined; not
# repeated once fp-collapse --inline expands.
grep -q '(inlined)$' "$T/dwarf.txt" || bad "dwarf: perf script printed no (inlined) frames"
"$FP" "$T/dwarf.txt" | grep -q ';work;stage;mix ' || bad "dwarf: no work;stage;mix stack"
"$FP" "$T/dwarf.txt" | grep -q '_\[i\]' && bad "dwarf: _[i] without --annotate-inlined"
"$FP" --annotate-inlined "$T/dwarf.txt" | grep -q ';work;stage_\[i\];mix_\[i\] ' ||
	bad "dwarf: no work;stage_[i];mix_[i] stack with --annotate-inlined"
"$FP" --inline "$T/dwarf.txt" >"$T/dwarf.folded"
grep -q ';work;stage;mix ' "$T/dwarf.folded" || bad "dwarf: --inline gives no work;stage;mix stack"
grep -Eq '(stage|mix)_\[i\]' "$T/dwarf.folded" && bad "dwarf: perf's inlined frames repeated after expansion"

# 3. Frame by frame against addr2line.  Each distinct (address, DSO) of the
# recordings becomes a one-frame sample whose comm names it, so the folded
# output maps back to the frame.
cat "$T/pie.txt" "$T/nopie.txt" "$T/moved.txt" "$T/cxx.txt" "$T/dwarf.txt" |
awk '
function code(n,   s) { s = ""; do { s = s sprintf("%c", 97 + n % 26); n = int(n / 26) } while (n); return s }
/^[ \t]+[0-9a-f]+ .* \(.*\)$/ && !/\(inlined\)$/ {
	line = $0; sub(/^[ \t]+/, "", line)
	pc = line; sub(/ .*/, "", pc)
	dso = line; sub(/.* \(/, "", dso); sub(/\)$/, "", dso)
	if (index(dso, "'"$T"'/") != 1 || (pc SUBSEP dso) in seen) next
	seen[pc, dso] = 1
	c = "f" code(n++)
	printf "%s 1 1.000000: 1 cpu-clock:\n\t%s\n\n", c, line > "'"$T"'/one.txt"
	printf "%s %s %s\n", c, pc, dso > "'"$T"'/frames.txt"
}'
nframes=$(wc -l <"$T/frames.txt")
[ "$nframes" -ge 10 ] || bad "only $nframes distinct user-space frames recorded"

# addr2line, once per address as the Perl script runs it (within one
# process, addr2line's answer for a C++ address can depend on the addresses
# asked before it), read the Perl script's way: after the "0x..." line,
# (function, file:line) pairs innermost first; " (discriminator N)" removed;
# reversed; "??" means no answer.
: >"$T/want-plain"; : >"$T/want-ctx"
for dso in $(awk '{ print $3 }' "$T/frames.txt" | sort -u); do
	[ -f "$dso" ] || continue
	awk -v d="$dso" '$3 == d { print $1, $2 }' "$T/frames.txt" >"$T/dso-frames"
	readelf -lW "$dso" | awk '$1 == "LOAD" { print $2, $3, $5 }' >"$T/loads"
	: >"$T/a2l"
	while read -r _ pc; do
		a=$((16#$pc))
		while read -r off va size; do
			if [ $((a >= off && a < off + size)) = 1 ]; then
				a=$((a - off + va)); break
			fi
		done <"$T/loads"
		addr2line -a "$(printf '%x' $a)" -e "$dso" -i -f -s -C >>"$T/a2l" ||
			bad "addr2line failed on $dso"
	done <"$T/dso-frames"
	awk -v plain="$T/want-plain" -v ctx="$T/want-ctx" '
	FNR == NR { comm[NR] = $1; next }
	function flush(   p, c, i) {
		if (!k) return
		p = ""; c = ""
		for (i = nf; i >= 1; i--) {
			p = p (p == "" ? "" : ";") fn[i]
			c = c (c == "" ? "" : ";") fn[i] ":" loc[i]
		}
		# no answer, or no line information: the frame keeps its symbol
		if (p == "??" || c == "??:??:0" || loc[1] ~ /:\?$/) p = c = "FALLBACK"
		print comm[k] "\t" p >> plain; print comm[k] "\t" c >> ctx
	}
	/^0x[0-9a-f]+$/ { flush(); k++; nf = 0; want = "fn"; next }
	{ sub(/ \(discriminator [^)]*\)$/, "") }
	want == "fn" { fn[++nf] = $0; want = "loc"; next }
	{ loc[nf] = $0; want = "fn" }
	END { flush() }' "$T/dso-frames" "$T/a2l"
done
nchecked=$(wc -l <"$T/want-plain")
[ "$nchecked" -eq "$nframes" ] || bad "addr2line answered for $nchecked of $nframes frames"
nresolved=$(grep -vc '	FALLBACK$' "$T/want-plain")
[ "$nresolved" -ge 5 ] || bad "addr2line resolved only $nresolved frames"
grep -q '	[^;]*;[^;]*;[^;]*$' "$T/want-plain" || bad "no address with a 3-deep inline chain"

# The frame's own symbol, as fp-collapse names it without --inline.
"$FP" "$T/one.txt" | sed 's/ 1$//; s/;/\t/' | sort >"$T/own"
for mode in plain ctx; do
	opt=--inline; [ $mode = ctx ] && opt="--inline --context"
	"$FP" $opt "$T/one.txt" | sed 's/ 1$//; s/;/\t/' | sort >"$T/got-$mode"
	sort "$T/want-$mode" | join -t "$TAB" -a1 - "$T/own" |
	awk -F '\t' '$2 == "FALLBACK" { print $1 "\t" $3; next } { print $1 "\t" $2 }' >"$T/exp-$mode"
	if ! cmp -s "$T/exp-$mode" "$T/got-$mode"; then
		bad "--inline ($mode) differs from addr2line (< addr2line, > fp-collapse):"
		diff "$T/exp-$mode" "$T/got-$mode" | head -20 >&2
	fi
done

[ $fail = 0 ] && echo "inline.sh: $nframes frames checked against addr2line ($nresolved resolved)" >&2
exit $fail
