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

if record copy 6000; then
	read -r total lost in <<<"$(cells copy)"
	# the samples in memcpy whose caller copier() is gone, by the stacks
	gone=$(awk '{ w = $NF; s = substr($0, 1, length($0) - length(w) - 1) }
		s ~ /;__(memmove|memcpy)[^;]*(;|$)/ && s !~ /;copier(;|$)/ { n += w }
		END { printf "%.0f\n", n }' "$T/copy.folded")
	if [ -z "${total:-}" ] || [ -z "${lost:-}" ]; then
		fail "copy: no caller_lost in index.tsv: $(head -2 "$T/copy/index.tsv")"
	elif [ "$gone" -le 0 ] || [ "$lost" -lt "$gone" ] || [ "$lost" -gt "$total" ]; then
		fail "copy: caller_lost $lost of $total, the stacks that lost copier(): $gone"
	elif ! [[ $in =~ mem(move|cpy) ]]; then
		fail "copy: caller_lost_in is '$in', not memcpy's"
	elif ! grep -q "^foldkit: on-CPU: [0-9.]*% of the samples are in code that keeps no frame \
pointer where sampled (most in __mem" "$T/copy.notes"; then
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
	gone=$(cat "$T/fpr/on/"*.folded | awk '{ w = $NF; s = substr($0, 1, length($0) - length(w) - 1) }
		s ~ /;__(memmove|memcpy)[^;]*(;|$)/ && s !~ /;copier(;|$)/ { n += w }
		END { printf "%.0f\n", n }')
	"$BIN/fold-report" --json "$T/fpr" >"$T/fpr.json" 2>"$T/fpr-report.err" ||
		fail "fold-report on the capture: $(head -2 "$T/fpr-report.err")"
	got=$(grep -o '"rule": "caller-lost", [^}]*"process": "whole", "profile": "on", "unit": "ns", "frame": "[^"]*", "edge": \[\], "count": [0-9]*' "$T/fpr.json")
	if [[ $got =~ \"frame\":\ \"__mem(move|cpy)[^\"]*\".*\"count\":\ ([0-9]+)$ ]] &&
		[ "${BASH_REMATCH[2]}" = "$lost" ] && [ "$lost" -ge "$gone" ] && [ "$gone" -gt 0 ]; then
		echo "ok fold-report's caller-lost finding: $lost ns in memcpy's function ($gone ns in stacks without copier)"
	else
		fail "fold-report's caller-lost finding: '$got', index.tsv $lost ns, stacks $gone ns"
	fi
else
	fail "fp-record --on failed: $(tail -2 "$T/fpr.err")"
fi
exit $FAILED
