#!/bin/bash
# diff-graph.sh — fold2svg's differential modes against a computation of
# their own: for each drawn frame of fold-diff's output of FlameGraph's
# java and vertx pairs (with and without --normalize, --diff=self and
# --diff=total, --mark-new), Python sums the two profiles' counts over
# every stack through the frame (total change) and ending at it (self
# change), scales the first counts to the second total when normalizing,
# and prints the titles fold2svg should show ("NAME (N samples, P%;
# +T% total; +S% self; new)") and the frames drawn in the new-frame
# purple; the SVG's frames (test/svg-frames.py's names, counts and fills
# and the titles) must be the same multiset.  A frame is new exactly when
# no stack through it has a first count.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${BIN:-$ROOT/build/bin}
fail() { echo "diff-graph FAILED: $*" >&2; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
D=$ROOT/test/golden/data/flamegraph/diff

expect() { # DIFF-FILE MODE NORMALIZE -> expected titles, one a line, sorted
	python3 - "$@" <<'EOF'
import sys
from fractions import Fraction
from decimal import Decimal, ROUND_HALF_EVEN
path, mode, norm = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
stacks = []
for line in open(path, encoding="utf-8", errors="surrogateescape"):
    line = line.rstrip("\n")
    s, c1, c2 = line.rsplit(" ", 2)
    stacks.append((s, Fraction(c1), Fraction(c2)))
t1 = sum(c1 for _, c1, _ in stacks)
t2 = sum(c2 for _, _, c2 in stacks)
k = t2 / t1 if norm and t1 else Fraction(1)
def scaled(c):	# to the nearest 10^-9, half away from zero (as fold2svg)
    u = c * k * 10**9
    return Fraction(int(u + Fraction(1, 2)), 10**9)
# frames by path: [first, second, self change]
frames = {(): [Fraction(0), Fraction(0), Fraction(0)]}
for s, c1, c2 in stacks:
    fr = tuple(s.split(";")) if s else ()
    while fr and fr[-1] == "":
        fr = fr[:-1]
    for i in range(len(fr) + 1):
        f = frames.setdefault(fr[:i], [Fraction(0), Fraction(0), Fraction(0)])
        f[0] += c1
        f[1] += c2
    frames[fr][2] += c2 - (scaled(c1) if norm else c1)
def pct(x):
    q = Decimal(x.numerator * 100) / Decimal(x.denominator)
    d = q.quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)
    if d == 0:
        d = abs(d)
    return ("+" if d > 0 else "") + str(d) + "%"
def count(x):
    return "{:,}".format(int(x)) if x.denominator == 1 else str(float(x))
out = []
for fr, (c1, c2, self_) in frames.items():
    name = fr[-1] if fr else "all"
    if len(name) >= 4 and name[-4:-2] == "_[" and name[-2] in "kwij" and name[-1] == "]":
        name = name[:-4]	# the annotation is not shown
    total = c2 - (scaled(c1) if norm else c1)
    t = "%s (%s samples, %s" % (name, count(c2), pct(c2 / t2).lstrip("+"))
    if mode == "total":
        t += "; %s total; %s self" % (pct(total / t2), pct(self_ / t2))
    else:
        t += "; %s" % pct(self_ / t2)
    if c1 == 0:
        t += "; new"
    out.append(t + ")")
for t in sorted(out):
    print(t)
EOF
}

titles() { # SVG -> its frames' titles, sorted
	python3 - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
for e in ET.parse(sys.argv[1]).iter():
    if e.tag.rsplit("}", 1)[-1] == "title" and e.text and " samples, " in e.text:
        print(e.text)
EOF
}

n=0
for pair in java vertx-addrs; do
	"$BIN/fold-diff" "$D/$pair-a.folded" "$D/$pair-b.folded" > "$T/d" ||
		fail "fold-diff $pair"
	for mode in self total; do
		for norm in 0 1; do
			opt=(--minwidth=0 --mark-new --diff=$mode)
			[ $norm = 1 ] && opt+=(--normalize)
			"$BIN/fold2svg" "${opt[@]}" "$T/d" > "$T/s.svg" ||
				fail "fold2svg ${opt[*]} $pair"
			expect "$T/d" $mode $norm > "$T/want"
			titles "$T/s.svg" | LC_ALL=C sort > "$T/got"
			LC_ALL=C sort -o "$T/want" "$T/want"
			[ -s "$T/want" ] || fail "no frames computed for $pair"
			cmp -s "$T/want" "$T/got" || {
				diff "$T/want" "$T/got" | head -20 >&2
				fail "$pair ${opt[*]}: titles differ from the computation"
			}
			# new frames, and only they, in the new-frame colour
			python3 "$ROOT/test/svg-frames.py" "$T/s.svg" |
				awk -F'\t' '$7 == "190,130,240" { n++ } END { print n + 0 }' > "$T/purple"
			grep -c '; new)$' "$T/want" > "$T/nnew"
			cmp -s "$T/purple" "$T/nnew" ||
				fail "$pair ${opt[*]}: $(cat "$T/purple") purple frames, $(cat "$T/nnew") new"
			n=$((n + 1))
		done
	done
done
# the planted case of inferno#295: a parent whose children both grew
printf 'parent;first_child 10\nparent;second_child 10\nparent2 30\n' > "$T/a"
printf 'parent;first_child 30\nparent;second_child 30\nparent2 30\n' > "$T/b"
"$BIN/fold-diff" "$T/a" "$T/b" | "$BIN/fold2svg" --diff=total > "$T/s.svg"
titles "$T/s.svg" > "$T/got"
grep -qx 'parent (60 samples, 66.67%; +44.44% total; 0.00% self)' "$T/got" ||
	fail "inferno#295's parent is not shown grown: $(grep '^parent ' "$T/got")"
echo "diff-graph: $n graphs match the computation" >&2
