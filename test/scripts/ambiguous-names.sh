#!/bin/bash
# ambiguous-names.sh - a real program whose function is named "evil 1" and
# whose thread is named "evil 2", recorded here: fp-collapse and the perf
# plugin print those names with '_' for the blank, so no line reads as a
# differential one ("p;evil 1 5" would), and the samples survive the whole
# pipeline: fgrep-stacks passes the profile through unchanged, fold2svg
# draws all of them.
set -u
. "$(dirname "$0")/plugin-lib.sh"

[ "$(uname -m)" = x86_64 ] || { echo "skipped: the workload's assembly is x86-64"; exit 77; }

cat >"$T/evil.c" <<'EOF'
#include <sys/prctl.h>
/* a function whose symbol is "evil 1", as any binary may name one */
__asm__(".text\n.globl \"evil 1\"\n.type \"evil 1\",@function\n\"evil 1\":\n"
	"\tpush %rbp\n\tmov %rsp,%rbp\n\tmov $200000000,%rcx\n1:\tdec %rcx\n\tjnz 1b\n"
	"\tpop %rbp\n\tret\n.size \"evil 1\",.-\"evil 1\"\n");
__attribute__((noinline)) static void work(void)
{
	__asm__ volatile("call \"evil 1\"" ::: "rcx", "memory");
}
int main(void)
{
	prctl(PR_SET_NAME, "evil 2");
	for (int i = 0; i < 2; i++)
		work();
	return 0;
}
EOF
cc -O1 -g -fno-omit-frame-pointer -o "$T/evil" "$T/evil.c" || { echo "cannot build the workload" >&2; exit 1; }
perf record -q -g -F 999 -o "$T/evil.data" -- "$T/evil" >/dev/null 2>"$T/rec.err" ||
	unavailable "perf record -g failed: $(head -3 "$T/rec.err")"

perf script -i "$T/evil.data" 2>/dev/null >"$T/evil.txt"
grep -q ' evil 1+0x' "$T/evil.txt" || fail "perf script shows no 'evil 1' frame"
"$BIN/fp-collapse" "$T/evil.txt" >"$T/fp" 2>"$T/fp.err" || fail "fp-collapse failed: $(head -3 "$T/fp.err")"
grep -q '^evil_2;.*;work;evil_1 [0-9]*$' "$T/fp" || fail "fp-collapse: no 'evil_2;...;work;evil_1 N' line"
grep -q 'evil [12]' "$T/fp" && fail "fp-collapse printed a blank before a number: $(grep -m1 'evil [12]' "$T/fp")"

# the plugin names frames by the same rules
same_as_pipeline "evil.data" "$T/evil.data" "" "" ""

# through the pipeline: every line is read as one stack and one count
"$BIN/fgrep-stacks" '' "$T/fp" >"$T/grep" 2>"$T/grep.err"
cmp -s "$T/fp" "$T/grep" && [ ! -s "$T/grep.err" ] ||
	fail "fgrep-stacks '' changed the profile: $(diff "$T/fp" "$T/grep" | head -3) $(head -2 "$T/grep.err")"
total=$(awk '{ s += $NF } END { printf "%.0f", s }' "$T/fp")
"$BIN/kfold" "$T/fp" | "$BIN/fold2svg" --countname=ns >"$T/svg" 2>"$T/svg.err" || fail "kfold | fold2svg failed"
drawn=$(grep -o '<title>all ([0-9,]* ns' "$T/svg" | tr -dc 0-9)
[ "$drawn" = "$total" ] || fail "fold2svg draws $drawn ns of $total"

[ $FAILED = 0 ] && echo "ok: $(wc -l <"$T/fp") stacks, $total ns, the same in the plugin and through the pipeline"
exit $FAILED
