#!/bin/bash
# simd-paths.sh - the scans of every line (its end, a needle, its frames'
# "_[k]" marks) have an AVX2 loop beside the SSE2 one, chosen at run time
# (lib/core/simd.h): two code paths that must give the same bytes.  Runs
# kfold, fgrep-stacks and fold-diff on generated stacks of every length
# from 0 to 300 bytes (kernel runs, vDSO frames, [unknown] frames, needles
# at every offset, a NUL) and on the golden folded inputs, once with AVX2
# and once with FOLDKIT_NO_AVX2=1, and fails on any difference in output,
# exit status or standard error.  On a processor without AVX2 both runs
# take the SSE2 path, and the script says so.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
export LC_ALL=C
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0 n=0

for t in kfold fgrep-stacks fold-diff; do
	[ -x "$BIN/$t" ] || { echo "no $BIN/$t: run make first" >&2; exit 1; }
done
grep -qw avx2 /proc/cpuinfo 2>/dev/null ||
	echo "simd-paths.sh: this processor has no AVX2: both runs take the SSE2 path"

# Stacks of random frames: kernel frames ("NAME_[k]"), vDSO frames,
# [unknown], placeholders, user frames holding the needles, every stack
# length from a few bytes to 300; a fixed seed, so the input is the same
# every run.
awk 'BEGIN {
	srand(16);
	split("main;worker;_[k];[unknown];__vdso_clock_gettime;[[vdso]];do_syscall_64_[k];" \
	      "schedule_[k];pthread_mutex_lock;vd_[k];x_[k]y;[[kernel.kallsyms]];lock_wait;" \
	      "std::vector<int>::push_back;a;;b_[k]", f, ";");
	nf = 0; for (k in f) nf++;
	for (i = 0; i < 6000; i++) {
		s = "proc-" (i % 37);
		want = i % 300;
		while (length(s) < want)
			s = s ";" f[1 + int(rand() * nf)];
		print s, 1 + int(rand() * 1000);
	}
}' > "$T/gen.folded"
# the same stacks sorted (runs of one process), and lines around the
# 16- and 32-byte block sizes, each ending in a kernel frame
LC_ALL=C sort "$T/gen.folded" > "$T/sorted.folded"
for len in 15 16 17 19 20 21 31 32 33 35 36 37 63 64 65 67 68 69; do
	s=$(printf '%*s' "$len" '' | tr ' ' 'k')
	printf 'p;%s_[k] 1\np;%s_[k];x_[k] 2\np;a;%s 3\n' "$s" "$s" "$s"
done > "$T/edges.folded"
# runs of kernel frames to a leaf, after a first frame of every length
# from 1 to 33 bytes, with each frame's mark in turn broken ("_[k)",
# "_(k]", a frame without one, a vDSO frame): a ';' at every offset of a
# block, and every block's end, must be seen
awk 'BEGIN {
	for (pad = 1; pad <= 33; pad++)
	for (n = 1; n <= 12; n++) {
		for (j = 0; j < n; j++) fr[j] = substr("abcdefghi", 1, 1 + (j * 7 + n) % 9);
		for (b = 0; b < n; b++)
			for (how = 0; how < 4; how++) {
				s = "p;main;" substr("PPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPP", 1, pad) "_[k]";
				for (j = 0; j < n; j++) {
					f = fr[j] "_[k]";
					if (j == b && how == 0) f = fr[j] "_[k)";
					if (j == b && how == 1) f = fr[j] "_(k]";
					if (j == b && how == 2) f = fr[j];
					if (j == b && how == 3) f = "__vdso_" fr[j] "_[k]";
					s = s ";" f;
				}
				print s, 1 + (m++ % 7);
			}
	}
}' >> "$T/edges.folded"
inputs=("$T/gen.folded" "$T/sorted.folded" "$T/edges.folded")
# a NUL at offsets of a long line on both sides of a block's end: an
# error naming that line, whichever loop finds it
for at in 3 30 31 32 33 40 63 64 65 90; do
	{ head -c 5000 "$T/sorted.folded"; echo 'p;x 1'
	  printf 'p;%*s' "$at" '' | tr ' ' 'n'; printf '\0'
	  printf '%*s;b_[k] 2\n' 60 '' | tr ' ' 'm'; echo 'p;y 1'; } > "$T/nul$at.folded"
	inputs+=("$T/nul$at.folded")
done
while IFS= read -r f; do inputs+=("$f"); done < <(
	find "$ROOT/test/golden/kfold" "$ROOT/test/golden/fgrep-stacks" \
	     "$ROOT/test/golden/data/flamegraph/collapsed" -type f \
	     \( -name '*.folded' -o -name '*-collapsed*.txt' \) | sort | head -40)

# check ARGS...: the tool's output, status and stderr alike both ways
check() {
	"$@" >"$T/a.out" 2>"$T/a.err"; as=$?
	FOLDKIT_NO_AVX2=1 "$@" >"$T/b.out" 2>"$T/b.err"; bs=$?
	n=$((n + 1))
	if [ $as != $bs ] || ! cmp -s "$T/a.out" "$T/b.out" || ! cmp -s "$T/a.err" "$T/b.err"; then
		echo "simd-paths.sh: FAIL: $*: AVX2 (status $as) and SSE2 (status $bs) differ:" >&2
		diff "$T/a.out" "$T/b.out" | head -5 >&2
		diff "$T/a.err" "$T/b.err" | head -5 >&2
		fail=1
	fi
}

for f in "${inputs[@]}"; do
	check "$BIN/kfold" "$f"
	check "$BIN/kfold" --kernel "$f"
	check "$BIN/kfold" --kernel --keep-entry --unknown "$f"
	check "$BIN/kfold" --drop-kernel "$f"
	check "$BIN/kfold" -e 'lock' --as L -e '^std::' --as std "$f"
	check "$BIN/fgrep-stacks" --exclude '_\[k\]$' '' "$f"
	check "$BIN/fgrep-stacks" --exclude '\[unknown\]' '' "$f"
	check "$BIN/fgrep-stacks" -c 'mutex_lo' "$f"
	check "$BIN/fgrep-stacks" -F 'std::vector<int>::push_back' "$f"
	check "$BIN/fgrep-stacks" --focus 'schedule_' "$f"
	check "$BIN/fold-diff" "$f" "$T/gen.folded"
done

[ $n -gt 100 ] || { echo "simd-paths.sh: FAIL: only $n runs: inputs missing?" >&2; exit 1; }
[ $fail = 0 ] && echo "simd-paths.sh: $n runs, AVX2 and SSE2 alike"
exit $fail
