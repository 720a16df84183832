#!/bin/bash
# oncpu-callerloss.sh - on-CPU stacks whose innermost function keeps no
# frame pointer where sampled: the caller of that function is missing
# (the kernel's walk goes from it to its caller's caller), and the plugin
# and fp-record's report say how much of the time that is, and where.
# The bundled test/workloads/leafcall.c, built with frame pointers, spends
# its time either in libc's memcpy (Debian's libc has no frame pointers)
# called from its copier(), or in a function of its own.  Checked:
#  - copy: the plugin's index.tsv counts as lost at least every sample
#    whose stack has memcpy (or the memmove it is) as leaf without
#    copier() in it (the folded stacks themselves), names that function,
#    and its note says so;
#  - own: at most 10% is counted (a function's first and last
#    instructions, where its frame pointer is not set up);
#  - fp-record --on: report.md gives the share index.tsv gives.
set -u
. "$(dirname "$0")/plugin-lib.sh"

[ "$(uname -m)" = x86_64 ] || unavailable "the unwind tables are read for x86-64"
L=$T/leafcall
cc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$L" \
	"$ROOT/test/workloads/leafcall.c" || { echo "cannot build leafcall" >&2; exit 1; }

# record MODE ROUNDS: $T/MODE.data, the plugin's $T/MODE.folded,
# $T/MODE/index.tsv and $T/MODE.notes
record() {
	perf record -q -e cpu-clock -F 999 --call-graph fp -o "$T/$1.data" -- "$L" "$1" "$2" \
		>/dev/null 2>"$T/$1.rec.err" ||
		{ fail "$1: perf record failed: $(head -2 "$T/$1.rec.err")"; return 1; }
	plugin "$T/$1.data" >"$T/$1.folded" 2>"$T/$1.notes" ||
		{ fail "$1: the plugin failed: $(head -2 "$T/$1.notes")"; return 1; }
	plugin "$T/$1.data" split="$T/$1" >/dev/null 2>&1 ||
		{ fail "$1: the plugin failed with split="; return 1; }
}

# cells MODE: "TOTAL LOST IN" of leafcall's row in $T/MODE/index.tsv
cells() {
	awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$2 == "leafcall" { print $c["total"], $c["caller_lost"], $c["caller_lost_in"] }' "$T/$1/index.tsv"
}

# awk: the user leaf of a stack (the frame before the kernel's entry), and
# whether main() called nothing of the user's (the kernel entered from it:
# an interrupt in main's own code, not a lost caller)
AWK_GONE='
function kernel(f) { return f ~ /^(asm_|entry_|ret_from_)/ }
function under_kernel(s,   f, k, i) {
	k = split(s, f, ";")
	for (i = 1; i < k; i++) if (f[i] == "main") return kernel(f[i + 1])
	return 0
}
function leaf(s,   f, k, i) {
	k = split(s, f, ";")
	for (i = 2; i <= k; i++) if (kernel(f[i])) return f[i - 1]
	return f[k]
}
'
if record copy 6000; then
	read -r total lost in <<<"$(cells copy)"
	# the samples in memcpy whose caller copier() is gone, by the stacks:
	# those with a frame under main() but no copier(), and the leaf most
	# of them have (libc's name for memcpy's code: __memmove_avx_* with
	# libc's symbols, libc.so.6's nearest exported name or [libc.so.6]
	# without them, as on a new Debian without libc6-dbg)
	read -r gone leaf <<<"$(awk "$AWK_GONE"'{ w = $NF; s = substr($0, 1, length($0) - length(w) - 1) }
		s ~ /;main;/ && s !~ /;copier(;|$)/ && !under_kernel(s) { n += w; by[leaf(s)] += w }
		END { for (l in by) if (by[l] > most) { most = by[l]; top = l }
		      printf "%.0f %s\n", n, top }' "$T/copy.folded")"
	if [ -z "${total:-}" ] || [ -z "${lost:-}" ]; then
		fail "copy: no caller_lost in index.tsv: $(head -2 "$T/copy/index.tsv")"
	elif [ "$gone" -le 0 ] || [ "$lost" -lt "$gone" ] || [ "$lost" -gt "$total" ]; then
		fail "copy: caller_lost $lost of $total, the stacks that lost copier(): $gone"
	elif ! [[ $in =~ mem(move|cpy) ]] && [ "$in" != "$leaf" ]; then
		fail "copy: caller_lost_in is '$in', not memcpy's ('$leaf' in the stacks)"
		elif ! grep -qF "of the samples are in code that keeps no frame pointer where sampled (most in $in:" \
		"$T/copy.notes"; then
		fail "copy: the plugin's note: $(grep on-CPU "$T/copy.notes")"
	else
		echo "ok copy: $lost of $total ns lost the caller, in $in ($gone ns of them in stacks without copier)"
	fi
fi

if record own 1000; then
	read -r total lost in <<<"$(cells own)"
	if [ -z "${total:-}" ] || [ "${total:-0}" = 0 ]; then
		fail "own: no samples"
	elif [ "$((lost * 10))" -gt "$total" ]; then
		fail "own: caller_lost $lost of $total ns (in $in), a function with its frame pointer"
	else
		echo "ok own: $lost of $total ns lost the caller"
	fi
fi

# fp-record's report says the share index.tsv gives
fp_record_perf
if "$BIN/fp-record" --on -o "$T/fpr" --keep-data --plugin "$PLUGIN" -- "$L" copy 6000 \
	>/dev/null 2>"$T/fpr.err"; then
	plugin "$T/fpr/on.data" split="$T/fpr-split" >/dev/null 2>&1
	want=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$2 == "leafcall" { t += $c["total"]; l += $c["caller_lost"] }
		END { if (t) printf "%.1f%%", 100 * l / t }' "$T/fpr-split/index.tsv")
	if [ -n "$want" ] && grep -q "^- On-CPU stacks: $want of the CPU time is in functions that \
keep no frame pointer" "$T/fpr/report.md"; then
		echo "ok fp-record's report.md: $want"
	else
		fail "fp-record's report.md does not say '$want': $(grep -i 'on-cpu stacks' "$T/fpr/report.md")"
	fi
	# and fold-report on the capture, with no option, finds it: the
	# whole's caller-lost finding cites index.tsv's count in ns, names
	# memcpy's function, and is at least what the stacks show lost
	lost=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ l += $c["caller_lost"] } END { printf "%.0f\n", l }' "$T/fpr/on/index.tsv")
	read -r lost_in <<<"$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["caller_lost"] > most { most = $c["caller_lost"]; name = $c["caller_lost_in"] }
		END { print name }' "$T/fpr/on/index.tsv")"
	gone=$(cat "$T/fpr/on/"*.folded | awk "$AWK_GONE"'{ w = $NF; s = substr($0, 1, length($0) - length(w) - 1) }
		s ~ /;main;/ && s !~ /;copier(;|$)/ && !under_kernel(s) { n += w }
		END { printf "%.0f\n", n }')
	"$BIN/fold-report" --json "$T/fpr" >"$T/fpr.json" 2>"$T/fpr-report.err" ||
		fail "fold-report on the capture: $(head -2 "$T/fpr-report.err")"
	got=$(grep -o '"rule": "caller-lost", [^}]*"process": "whole", "profile": "on", "unit": "ns", "frame": "[^"]*", "edge": \[\], "count": [0-9]*' "$T/fpr.json")
	if [[ $got =~ \"frame\":\ \"([^\"]*)\".*\"count\":\ ([0-9]+)$ ]] && [ -n "$lost_in" ] &&
		[ "${BASH_REMATCH[1]}" = "$lost_in" ] && [ "${BASH_REMATCH[2]}" = "$lost" ] &&
		[ "$lost" -ge "$gone" ] && [ "$gone" -gt 0 ]; then
		echo "ok fold-report's caller-lost finding: $lost ns in $lost_in ($gone ns in stacks without copier)"
	else
		fail "fold-report's caller-lost finding: '$got', index.tsv $lost ns, stacks $gone ns"
	fi
else
	fail "fp-record --on failed: $(tail -2 "$T/fpr.err")"
fi
exit $FAILED
