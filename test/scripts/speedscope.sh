#!/bin/bash
# speedscope.sh — every kind of file foldkit writes for speedscope, loaded
# by speedscope's own importer (the npm package's app in headless
# Chromium, test/browser/speedscope-dump.js), must give the profiles,
# totals, frame counts and samples in order that the input says, computed
# here from the folded text with awk, independently of foldkit's code:
#
#  - fold2speedscope, one profile and --split, on FlameGraph's collapsed
#    test profiles (Java, Node, kernel, ~1 MB) and on names with quotes,
#    controls, U+2028 and invalid UTF-8 (U+FFFD, one per bad byte);
#    --unit in the words the other tools take (ns, us) read as speedscope's
#    nanoseconds and microseconds; without --unit, a split= directory's
#    file in the unit its index.tsv gives (ns);
#    --split on no stacks (a document without profiles);
#  - fold2pprof's profiles, through speedscope's pprof importer: the same
#    stacks and totals.
# The perf plugin's files are checked in plugin-export.sh.  If
# Chromium cannot start, the test FAILS.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${BIN:-$ROOT/build/bin}
fail() { echo "speedscope test FAILED: $*" >&2; exit 1; }

. "$ROOT/test/browser/setup.sh"
export PATH="$BIN:$PATH" LC_ALL=C
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
DATA=$ROOT/test/golden/data/flamegraph/collapsed

# expect FOLDED DOCNAME UNIT SPLIT: the dump speedscope-dump.js must print
# for that folded input (sorted, summed, zero weights dropped; with SPLIT
# one profile per root frame, sorted by name, the heaviest active)
expect() {
	awk '
	function trim(s) { sub(/[ \t]+$/, "", s); return s }
	{
		line = trim($0)
		if (line == "" || line ~ /^#/) next
		n = split(line, f, /[ \t]+/); c = f[n]
		# the one blank before the count separates; any others are
		# part of the stack, as flamegraph.pl reads them
		stack = substr(line, 1, length(line) - length(c) - 1)
		sum[stack] += c
	}
	END { for (s in sum) if (sum[s] != 0) print s "\001" sum[s] }' "$1" |
		sort -t $'\001' -k1,1 > "$T/expect.all"
	if [ "$4" = 1 ]; then
		awk -F '\001' '{ i = index($1, ";"); print i ? substr($1, 1, i - 1) : $1 }' "$T/expect.all" |
			sort -u > "$T/expect.roots"
	else
		printf '%s\n' "$2" > "$T/expect.roots"
	fi
	# one block per profile, in the roots' order (names passed through the
	# environment: awk -v would undo backslashes)
	while IFS= read -r root; do
		ROOTNAME=$root BYROOT=$4 UNIT=$3 awk -F '\001' '
		BEGIN { r = ENVIRON["ROOTNAME"] }
		{
			s = $1
			if (ENVIRON["BYROOT"] == 1) {
				i = index(s, ";")
				if ((i ? substr(s, 1, i - 1) : s) != r) next
				s = i ? substr(s, i + 1) : ""
			}
			lines = lines s "\t" $2 "\n"; total += $2; count++
			nf = split(s, fr, ";")
			for (k = 1; k <= nf; k++) if (!(fr[k] in used)) { used[fr[k]] = 1; frames++ }
		}
		END {
			printf "profile %s\t%s\t%.15g\t%d\t%d\n", r, ENVIRON["UNIT"], total, frames, count
			printf "%s", lines
		}' "$T/expect.all"
	done < "$T/expect.roots" > "$T/expect.blocks"
	awk -F '\t' -v doc="$2" '
		/^profile / { n++; if (n == 1 || $3 + 0 > best) { best = $3 + 0; active = n - 1 } }
		END { printf "group %s\t%d\t%d\n", doc, n, active }' "$T/expect.blocks"
	cat "$T/expect.blocks"
}

# load FILE...: speedscope loads every file in one browser session;
# got NAME then prints what it made of file NAME (its "file" line dropped)
load() {
	(cd "$ROOT/test/browser" && timeout "$BROWSER_HANG" node speedscope-dump.js "$@") > "$T/dump" 2> "$T/dump.err"
	case $? in
	0) ;;
	3) fail "Chromium (/usr/bin/chromium) could not start" ;;
	*) cat "$T/dump.err" >&2; fail "speedscope could not load a file" ;;
	esac
}
got() {
	awk -v want="file $1" '/^file / { on = ($0 == want); next } on' "$T/dump"
}

checked=0
same() { # WHAT EXPECTED ACTUAL
	if ! cmp -s "$2" "$3"; then
		diff -u "$2" "$3" | head -30 | cut -c1-300 >&2
		fail "$1: speedscope saw something else"
	fi
	checked=$((checked + 1))
}

# the files
cat "$DATA"/perf-java-stacks-01-collapsed-tid.txt "$DATA"/perf-js-stacks-01-collapsed-tid.txt \
    "$DATA"/perf-vertx-stacks-01-collapsed-all.txt > "$T/real.folded"
fold2speedscope --name real --unit ns "$T/real.folded" > "$T/real.json" || fail "fold2speedscope"
fold2speedscope --split --unit us "$T/real.folded" > "$T/split.json" || fail "fold2speedscope --split"
for f in "$DATA"/*-collapsed-tid.txt; do
	fold2speedscope "$f" > "$T/$(basename "$f").json" || fail "fold2speedscope $f"
done
printf 'q"uo\\te;ta\tb;\033[31mred;d\177;l\342\200\250s;</script>;bad\377x;cut\342\202 0.5\nplain;caf\303\251 2\n' > "$T/names.folded"
fold2speedscope --unit milliseconds "$T/names.folded" > "$T/names.json" 2> "$T/names.err" || fail "fold2speedscope names"
grep -q '2 names held bytes that are not UTF-8' "$T/names.err" || fail "no note about U+FFFD: $(cat "$T/names.err")"
fold2pprof --type cpu/nanoseconds "$T/real.folded" > "$T/real.pb.gz" || fail "fold2pprof"
fold2speedscope --split < /dev/null > "$T/empty.json" || fail "fold2speedscope --split on no stacks"
SPLIT_ON=$ROOT/test/golden/fold-report/data/split-on
fold2speedscope --split "$SPLIT_ON/spin-1-12158.folded" > "$T/indexunit.json" || fail "fold2speedscope (index.tsv's unit)"
load --frames "$T/real.json" "$T/split.json" "$T"/*-collapsed-tid.txt.json "$T/names.json" "$T/real.pb.gz" \
	"$T/empty.json" "$T/indexunit.json"
grep -v '^frame ' "$T/dump" > "$T/dump.noframes"

# 1. fold2speedscope over real profiles, whole and split
got real.json | grep -v '^frame ' > "$T/got"
expect "$T/real.folded" real nanoseconds 0 > "$T/want"
same "fold2speedscope (one profile)" "$T/want" "$T/got"
got split.json | grep -v '^frame ' > "$T/got"
expect "$T/real.folded" real.folded microseconds 1 > "$T/want"
same "fold2speedscope --split" "$T/want" "$T/got"
[ "$(grep -c '^profile ' "$T/got")" -gt 5 ] || fail "--split gave too few profiles to test much"
got indexunit.json | grep -v '^frame ' > "$T/got"
expect "$SPLIT_ON/spin-1-12158.folded" spin-1-12158.folded nanoseconds 1 > "$T/want"
same "fold2speedscope, the unit from index.tsv" "$T/want" "$T/got"

# 2. every folded file of FlameGraph's tests
for f in "$DATA"/*-collapsed-tid.txt; do
	got "$(basename "$f").json" | grep -v '^frame ' > "$T/got"
	expect "$f" "$(basename "$f")" none 0 > "$T/want"
	same "fold2speedscope $(basename "$f")" "$T/want" "$T/got"
done

# 3. names: JSON escapes undone by JSON.parse give the bytes back, and
# each byte that is not UTF-8 is one U+FFFD; weights with decimals
got names.json > "$T/got"
{
	printf 'group names.folded\t1\t0\n'
	printf 'profile names.folded\tmilliseconds\t2.5\t10\t2\n'
	for n in 'plain' 'caf\303\251' 'q"uo\\te' 'ta\tb' '\033[31mred' 'd\177' 'l\342\200\250s' \
		 '</script>' 'bad\357\277\275x' 'cut\357\277\275\357\277\275'; do
		printf "frame $n\t\t\n"
	done | sort
	printf 'plain;caf\303\251\t2\n'
	printf 'q"uo\\te;ta\tb;\033[31mred;d\177;l\342\200\250s;</script>;bad\357\277\275x;cut\357\277\275\357\277\275\t0.5\n'
} > "$T/want"
# frames come in the file's order: compared as a set
{ grep -v '^frame ' "$T/got" | head -2; grep '^frame ' "$T/got" | sort; grep -v '^frame ' "$T/got" | tail -n +3; } > "$T/got.sorted"
same "names" "$T/want" "$T/got.sorted"

# 4. fold2pprof's profile through speedscope's pprof importer: the same
# stacks (speedscope merges them in its own order: compared sorted) and
# the same unit and total
got real.pb.gz | grep -v '^frame ' > "$T/got"
grep '^profile ' "$T/got" | cut -f2,3 > "$T/got.total"
printf 'nanoseconds\t%s\n' "$(awk '{ s += $NF } END { printf "%.15g", s }' "$T/real.folded")" > "$T/want.total"
same "fold2pprof: unit and total" "$T/want.total" "$T/got.total"
# (speedscope's pprof importer calls a function with an empty name
# "(unknown)"; the input has one empty frame)
grep -v '^group \|^profile ' "$T/got" | sed 's/;(unknown)\t/;\t/' |
	awk -F '\t' '{ s[$1] += $2 } END { for (k in s) print k " " s[k] }' | sort > "$T/got.stacks"
expect "$T/real.folded" x none 0 | grep -v '^group \|^profile ' | tr '\t' ' ' | sort > "$T/want.stacks"
same "fold2pprof: stacks" "$T/want.stacks" "$T/got.stacks"

# 5. --split on no stacks: a document speedscope loads, with no profile
got empty.json > "$T/got"
printf 'group stdin\t0\t0\n' > "$T/want"
same "fold2speedscope --split on no stacks" "$T/want" "$T/got"

echo "speedscope loaded every file: $checked checks passed"
