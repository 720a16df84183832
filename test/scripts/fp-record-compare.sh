#!/bin/bash
# fp-record-compare.sh - before and after: the bundled server
# test/workloads/fkcmp.c (a main process and two workers of one
# executable) recorded twice by fp-record, the second time with
# FKCMP_SLOW=1, which makes each worker's decode thread also compute in
# checksum_frame and its flush thread also sleep in slow_flush; then
#  - fold-report --base BEFORE AFTER --json agrees with a computation of
#    its own here (Python, from the captures' folded files): per process
#    (paired by file name: process and role) and profile, every
#    function's self and inclusive count per second of the window each
#    capture's on/index.tsv gives, the change, the shares, the
#    standard error of sampling on-CPU (w*sqrt(n), w a sample's weight:
#    a profile's total over its samples in on/index.tsv), and which
#    changes are left out as
#    within 3 standard errors; off-CPU, nothing but an unchanged function
#    left out;
#  - the planted change is found: checksum_frame new in both workers'
#    on-CPU profiles and slow_flush in their off-CPU profiles, and in the
#    main process's profiles neither;
#  - the Markdown says the unit, how it normalises and what it leaves out;
#  - index.tsv says which process is which (role, ppid, args) and the
#    files are named by process and role alike in both runs;
#  - the second run's --compare BEFORE wrote compare.md, compare.json and
#    per role a differential graph whose lines agree with both captures'
#    folded files, checksum_frame new (purple) in the workers';
#  - --delay, --every and --count record one running server in numbered
#    captures named alike; their usage errors exit 2;
#  - --group-workers merges the two workers into one profile, and its
#    spread.tsv (each top function's lowest and highest share in a
#    worker) agrees with a computation here from the workers' files.
# Skipped (77) where perf cannot record.
set -u
. "$(dirname "$0")/plugin-lib.sh"

FPR=$BIN/fp-record
export FOLDKIT_PERF=perf
if [ ${#PLUGIN_ENV[@]} -gt 0 ]; then	# a sanitizer build: see fp-record.sh
	REAL_PERF=$(command -v perf)
	{
		echo '#!/bin/sh'
		echo 'case " $* " in *" --dlfilter "*)'
		printf '  exec env %q %q %q "$@";;\n' "${PLUGIN_ENV[@]}" "$REAL_PERF"
		echo 'esac'
		printf 'exec %q "$@"\n' "$REAL_PERF"
	} >"$T/perf-san"
	chmod +x "$T/perf-san"
	FOLDKIT_PERF=$T/perf-san
fi

S=$T/fkcmp
cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -o "$S" \
	"$ROOT/test/workloads/fkcmp.c" || { echo "cannot build fkcmp" >&2; exit 1; }

# windows of different lengths, which the comparison divides out
# (the second with --compare, which writes the comparison into it)
for run in before after; do
	slow=0 d=2.5 cmp=(); [ $run = after ] && slow=1 d=3 cmp=(--compare "$T/before")
	FKCMP_SLOW=$slow "$FPR" -d $d -F 999 "${cmp[@]}" -o "$T/$run" -- "$S" 4500 \
		>"$T/$run.out" 2>"$T/$run.err" ||
		{ echo "FAIL: fp-record ($run): $(tail -3 "$T/$run.err")" >&2; exit 1; }
done
# which process is which (index.tsv's role, ppid and args), and the
# files named alike in both runs
python3 - "$T/before" "$T/after" <<'EOF' || FAILED=1
import os, re, sys
bad = []
for cap in sys.argv[1:]:
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(cap, "index.tsv"))]
    head = rows[0]
    for col in ("role", "ppid", "args", "pid", "on_folded"):
        if col not in head:
            bad.append("%s/index.tsv: no column %s: %r" % (cap, col, head))
    if bad:
        break
    cells = [dict(zip(head, r)) for r in rows[1:]]
    byrole = {}
    for c in cells:
        byrole.setdefault(c["role"], []).append(c)
    mains, workers = byrole.get("main", []), byrole.get("worker", [])
    if len(mains) != 1 or len(workers) != 2 or len(cells) != 3:
        bad.append("%s: roles %r, want one main and two workers" % (cap, sorted(byrole)))
        continue
    m = mains[0]
    for w in workers:
        if w["ppid"] != m["pid"]:
            bad.append("%s: worker %s's ppid %s, not the main process's %s" % (cap, w["pid"], w["ppid"], m["pid"]))
        # the arguments, escaped, split back exactly at blanks
        args = w["args"].split(" ")
        if args[1:3] not in (["--worker", "1"], ["--worker", "2"]) or not args[0].endswith("fkcmp"):
            bad.append("%s: worker %s's args %r" % (cap, w["pid"], w["args"]))
    files = sorted(c["on_folded"] for c in cells)
    if files != ["on/fkcmp.main.folded", "on/fkcmp.worker-1.folded", "on/fkcmp.worker-2.folded"]:
        bad.append("%s: files %r" % (cap, files))
    for c in cells:
        for f in ("on_folded", "off_folded", "on_svg", "off_svg"):
            if not os.path.isfile(os.path.join(cap, c[f])):
                bad.append("%s: no %s" % (cap, c[f]))
    # the graphs say process, role, pid, window and unit
    for c in cells:
        svg = open(os.path.join(cap, c["on_svg"]), encoding="utf-8").read()
        name = c["on_folded"][3:-7]
        for w in (">fkcmp (%s) on-CPU<" % c["role"], "%s, pid %s, " % (name, c["pid"]),
                  " s window, ", "counts in nanoseconds"):
            if w not in svg:
                bad.append("%s: %s lacks %r" % (cap, c["on_svg"], w))
for b in bad[:20]:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
# each capture's window: on/index.tsv's window column (the seconds
# fold-report divides by, with no option), which report.md rounds
# each process's speedscope files: its unit, a profile per thread, and
# each thread's weights summing to its stacks' counts in the folded file
python3 - "$T/before" "$T/after" <<'EOF' || FAILED=1
import json, os, sys
bad = []
n = 0
for cap in sys.argv[1:]:
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(cap, "index.tsv"))]
    for c in (dict(zip(rows[0], r)) for r in rows[1:]):
        for side, unit in (("on", "nanoseconds"), ("off", "microseconds")):
            folded, ss = c[side + "_folded"], c[side + "_speedscope"]
            if ss != folded[:-len(".folded")] + ".speedscope.json":
                bad.append("%s: %s_speedscope %r" % (cap, side, ss))
                continue
            want = {}
            for line in open(os.path.join(cap, folded)):
                stack, count = line.rstrip("\n").rsplit(" ", 1)
                t = stack.split(";")[0]
                want[t] = want.get(t, 0) + int(count)
            doc = json.load(open(os.path.join(cap, ss)))
            got = {p["name"]: sum(p["weights"]) for p in doc["profiles"]}
            units = set(p["unit"] for p in doc["profiles"])
            if got != want or units != {unit}:
                bad.append("%s: %s: threads %r in %r, want %r in %s" % (cap, ss, got, units, want, unit))
            if "(%s) %s-CPU, pid %s" % (c["role"], side, c["pid"]) not in doc["name"]:
                bad.append("%s: %s: named %r" % (cap, ss, doc["name"]))
            n += 1
for b in bad[:20]:
    print("FAIL: speedscope:", b, file=sys.stderr)
print("%d speedscope files agree with their folded files" % n)
sys.exit(1 if bad else 0)
EOF
window() {
	awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "window") k = i; next }
		k { print $k; exit }' "$1/on/index.tsv"
}
WB=$(window "$T/before"); WA=$(window "$T/after")
[ -n "$WB" ] && [ -n "$WA" ] || { echo "FAIL: no window in on/index.tsv" >&2; exit 1; }
for run in before after; do
	w=$(window "$T/$run") r=$(sed -n 's/^- Window: \([0-9.]*\) s$/\1/p' "$T/$run/report.md")
	awk -v w="$w" -v r="$r" 'BEGIN { d = w - r; exit !(r != "" && d < 0.0051 && d > -0.0051) }' ||
		fail "$run: on/index.tsv's window $w, report.md's $r"
done

"$BIN/fold-report" --base "$T/before" "$T/after" \
	--json --top 100000 >"$T/cmp.json" 2>"$T/cmp.err" ||
	{ echo "FAIL: fold-report --base: $(cat "$T/cmp.err")" >&2; exit 1; }
"$BIN/fold-report" --base "$T/before" "$T/after" \
	>"$T/cmp.md" 2>>"$T/cmp.err" || fail "fold-report --base (Markdown)"

python3 - "$T/before" "$T/after" "$WB" "$WA" "$T/cmp.json" <<'EOF' || FAILED=1
import glob, json, math, os, re, sys
from fractions import Fraction

base, new, wb, wa, got = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
Z = 3
bad = []

def read_side(cap):
    """{key: {kind: {fn: [self, incl], None: [total, samples]}}}"""
    procs = {}
    for kind in ("on-cpu", "off-cpu"):
        d = os.path.join(cap, kind[:-4])
        rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(d, "index.tsv"))]
        head = rows[0]
        for r in rows[1:]:
            cell = dict(zip(head, r))
            path = os.path.join(d, cell["file"])
            # fp-record names a file by process and role, the same in
            # every run: the comparison pairs processes by it
            stem = cell["file"][:-len(".folded")]
            fns = procs.setdefault(stem, {}).setdefault(kind, {})
            fns.setdefault(None, [0, 0])[1] += int(cell["samples"])
            for line in open(path, encoding="utf-8", errors="surrogateescape"):
                stack, count = line.rstrip("\n").rsplit(" ", 1)
                c = int(count)
                frames = stack.split(";")[1:]
                for f in set(frames):
                    fns.setdefault(f, [0, 0])[1] += c
                if frames:
                    fns.setdefault(frames[-1], [0, 0])[0] += c
                fns.setdefault(None, [0, 0])[0] += c   # the total
    keyed = dict(procs)
    allp = {}
    for prof in keyed.values():
        for kind, fns in prof.items():
            a = allp.setdefault(kind, {})
            for f, (s, i) in fns.items():
                x = a.setdefault(f, [0, 0])
                x[0] += s
                x[1] += i
    keyed["all"] = allp
    return keyed

def weight(prof):
    total, samples = prof.get(None, [0, 0])
    return total / samples if samples else 0

B = read_side(base)
N = read_side(new)
doc = json.load(open(got))
if not doc["per_second"] or abs(doc["base_window"] - wb) > 1e-9 or abs(doc["new_window"] - wa) > 1e-9:
    bad.append("windows or per_second: %r %r %r" % (doc["per_second"], doc["base_window"], doc["new_window"]))
seen = set()
for c in doc["comparisons"]:
    key, kind = c["process"], c["profile"]
    seen.add((key, kind))
    pb = B.get(key, {}).get(kind, {})
    pn = N.get(key, {}).get(kind, {})
    tb, tn = pb.get(None, [0, 0])[0], pn.get(None, [0, 0])[0]
    sampled = kind == "on-cpu"
    gb, gn = weight(pb), weight(pn)
    for col, table in ((0, "self"), (1, "inclusive")):
        want = {}
        within = 0
        for f in set(pb) | set(pn):
            if f is None:
                continue
            cb, cn = pb.get(f, [0, 0])[col], pn.get(f, [0, 0])[col]
            rb, rn = cb / wb, cn / wa
            d = rn - rb
            if d == 0:
                continue
            err = math.sqrt(gb * cb / (wb * wb) + gn * cn / (wa * wa)) if sampled else 0
            if sampled and abs(d) <= Z * err:
                if abs(abs(d) - Z * err) > 1e-6 * abs(d):
                    within += 1
                continue
            want[f] = (rb, rn, d, cb / tb if tb else 0, cn / tn if tn else 0, err)
        rows = {r["frame"]: r for r in c[table]}
        for f, (rb, rn, d, sb, sn, err) in want.items():
            r = rows.get(f)
            if r is None:
                bad.append("%s %s %s: %s (change %.3f) missing" % (key, kind, table, f, d))
                continue
            for name, v in (("base", rb), ("new", rn), ("delta", d)):
                if abs(r[name] - v) > 0.0015 + 1e-9 * abs(v):
                    bad.append("%s %s %s %s: %s %r, want %.3f" % (key, kind, table, f, name, r[name], v))
            for name, v in (("base_share", sb), ("new_share", sn)):
                if abs(r[name] - v) > 1.5e-6:
                    bad.append("%s %s %s %s: %s %r, want %.6f" % (key, kind, table, f, name, r[name], v))
            if sampled and abs(r["error"] - err) > 0.0015 + 1e-9 * err:
                bad.append("%s %s %s %s: error %r, want %.3f" % (key, kind, table, f, r["error"], err))
        for f in rows:
            if f not in want:
                bad.append("%s %s %s: %s listed, but within the error or unchanged" % (key, kind, table, f))
        order = [r["frame"] for r in c[table]]
        ranked = sorted(want, key=lambda f: (-abs(want[f][2]), f.encode("utf-8", "surrogateescape")))
        if order != ranked and not bad:
            bad.append("%s %s %s: order %r, want %r" % (key, kind, table, order[:5], ranked[:5]))
        if not sampled and c[table + "_left_out"] != 0:
            bad.append("%s %s %s: %d left out of a measured profile" % (key, kind, table, c[table + "_left_out"]))
        if sampled and abs(c[table + "_left_out"] - within) > 2:
            bad.append("%s %s %s: %d left out, want %d" % (key, kind, table, c[table + "_left_out"], within))
want_pairs = set((k, kind) for k in B if k in N for kind in ("on-cpu", "off-cpu")
                 if kind in B[k] or kind in N[k])
if seen != want_pairs:
    bad.append("compared %r, want %r" % (sorted(seen), sorted(want_pairs)))

# the planted change: in both workers, not in the main process
def frames(key, kind, table="inclusive"):
    for c in doc["comparisons"]:
        if c["process"] == key and c["profile"] == kind:
            return {r["frame"]: r for r in c[table]}
    return {}
for w in ("fkcmp.worker-1", "fkcmp.worker-2"):
    r = frames(w, "on-cpu").get("checksum_frame")
    if not r or r["base"] != 0 or r["new"] <= 0:
        bad.append("%s: checksum_frame not found new on-CPU: %r" % (w, r))
    r = frames(w, "off-cpu").get("slow_flush")
    if not r or r["base"] != 0 or r["new"] <= 0:
        bad.append("%s: slow_flush not found new off-CPU: %r" % (w, r))
for kind, f in (("on-cpu", "checksum_frame"), ("off-cpu", "slow_flush")):
    if f in frames("fkcmp.main", kind):
        bad.append("fkcmp.main (the main process) has %s" % f)
for b in bad[:20]:
    print("FAIL:", b, file=sys.stderr)
n = sum(len(c["self"]) + len(c["inclusive"]) for c in doc["comparisons"])
print("compared %d profiles, %d rows agree with the computation here" % (len(doc["comparisons"]), n))
sys.exit(1 if bad else 0)
EOF

grep -q '^## `fkcmp.worker-1`: on-CPU (ns per second)$' "$T/cmp.md" ||
	fail "Markdown: no on-CPU section with its unit for fkcmp.worker-1"
grep -q '^## `fkcmp.worker-1`: off-CPU (us per second)$' "$T/cmp.md" ||
	fail "Markdown: no off-CPU section with its unit"
grep -q '^- Normalised: every count is divided by its side' "$T/cmp.md" || fail "Markdown: does not say how it normalises"
grep -q 'within 3 standard errors of sampling' "$T/cmp.md" || fail "Markdown: does not say what it leaves out"
grep -q '^| `checksum_frame` | 0 | ' "$T/cmp.md" || fail "Markdown: checksum_frame not shown new"

# --compare: compare.md and compare.json are fold-report --base's, and
# each role's differential graph is drawn from fold-diff's lines, which
# agree with both captures' folded files; checksum_frame, new in the
# workers, is purple there
OLD=$(cd "$T/before" && pwd -P)
"$BIN/fold-report" --base="$OLD" -- "$T/after" >"$T/want.md" 2>/dev/null
cmp -s "$T/want.md" "$T/after/compare.md" || fail "--compare: compare.md is not fold-report --base's"
"$BIN/fold-report" --base="$OLD" --json -- "$T/after" >"$T/want.json" 2>/dev/null
cmp -s "$T/want.json" "$T/after/compare.json" || fail "--compare: compare.json is not fold-report --base --json's"
grep -q '^- Compared with `.*before`: \[compare.md\](compare.md)' "$T/after/report.md" ||
	fail "--compare: report.md does not link compare.md"
python3 - "$T/before" "$T/after" "$ROOT/test/svg-frames.py" <<'EOF' || FAILED=1
import os, subprocess, sys
old, new, frames = sys.argv[1:]
bad = []
def counts(path):
    c = {}
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        c[stack] = c.get(stack, 0) + int(n)
    return c
graphs = 0
for side in ("on", "off"):
    for name in ("fkcmp.main", "fkcmp.worker-1", "fkcmp.worker-2"):
        a = counts(os.path.join(old, side, name + ".folded"))
        b = counts(os.path.join(new, side, name + ".folded"))
        d = os.path.join(new, "compare", side, name + ".diff.folded")
        if not os.path.isfile(d):
            bad.append("no %s" % d)
            continue
        got = {}
        for line in open(d, encoding="utf-8", errors="surrogateescape"):
            stack, x, y = line.rstrip("\n").rsplit(" ", 2)
            got[stack] = (int(x), int(y))
        want = {k: (a.get(k, 0), b.get(k, 0)) for k in set(a) | set(b)}
        if got != want:
            bad.append("%s: %d stacks differ from the folded files" % (d, len(set(got.items()) ^ set(want.items()))))
        svg = d[:-len(".diff.folded")] + ".svg"
        if not os.path.isfile(svg):
            bad.append("no %s" % svg)
            continue
        graphs += 1
        text = open(svg, encoding="utf-8").read()
        role = "main" if name.endswith("main") else "worker"
        if ">fkcmp (%s) %s-CPU: before and after<" % (role, side) not in text:
            bad.append("%s: no title with process, role and profile" % svg)
        rows = subprocess.run([sys.executable, frames, svg], capture_output=True, text=True).stdout
        purple = [r.split("\t")[0] for r in rows.splitlines() if r.split("\t")[-1] == "190,130,240"]
        if side == "on" and role == "worker" and "checksum_frame" not in purple:
            bad.append("%s: checksum_frame not drawn as new: purple %r" % (svg, purple[:5]))
        if "checksum_frame" in purple and role == "main":
            bad.append("%s: the main process has checksum_frame" % svg)
for b in bad[:20]:
    print("FAIL: --compare:", b, file=sys.stderr)
print("--compare: %d differential graphs agree with the folded files" % graphs)
sys.exit(1 if bad else 0)
EOF

# --delay, --every and --count: one running server, two windows, each a
# capture of its own in a numbered subdirectory, its files named alike;
# with --group-workers, its workers merged (only worker 2 computes in
# checksum_frame: FKCMP_SLOW=2)
FKCMP_SLOW=2 "$S" 0 >/dev/null 2>&1 &
SRV=$!
"$FPR" --exe "$S" --on -d 1 -F 999 --delay 0.2 --every 1 --count 2 --group-workers -o "$T/sched" \
	>"$T/sched.out" 2>"$T/sched.err" || fail "--every: exit $?: $(tail -3 "$T/sched.err")"
for k in 1 2; do
	c=$T/sched/$k
	[ -s "$c/index.tsv" ] && [ -s "$c/report.md" ] || { fail "--every: no capture $k"; continue; }
	got=$(awk -F'\t' 'NR > 1 { print $14 }' "$c/index.tsv" | sort | tr '\n' ' ')
	[ "$got" = "main worker worker " ] || fail "--every: capture $k's roles: $got"
	for n in fkcmp.worker-1 fkcmp.worker-2; do
		grep -q ';decode_frame' "$c/on/$n.folded" ||
			fail "--every: capture $k: $n.folded lacks decode_frame"
	done
	grep -qx "$c/index.tsv" "$T/sched.out" || fail "--every: $c/index.tsv not among the paths printed"
done
[ "$(ls "$T/sched" | tr '\n' ' ')" = "1 2 " ] || fail "--every: $(ls "$T/sched" | tr '\n' ' ')"
# --group-workers: the group's profile is its members' stacks summed, and
# spread.tsv's rows agree with a computation here from the members' files
# (the top 10 functions of the group by self count, each one's share in
# each worker, lowest and highest); checksum_frame, worker 2's alone, is
# lowest (0) in worker 1 and highest in worker 2; the main process, alone
# in its role, makes no group; report.md has the section
python3 - "$T/sched/1" "$T/sched/2" <<'EOF' || FAILED=1
import os, sys
bad = []
def counts(path):
    c = {}
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        c[stack] = c.get(stack, 0) + int(n)
    return c
for cap in sys.argv[1:]:
    names = ["fkcmp.worker-1", "fkcmp.worker-2"]
    members = [counts(os.path.join(cap, "on", n + ".folded")) for n in names]
    merged = {}
    for m in members:
        for k, v in m.items():
            merged[k] = merged.get(k, 0) + v
    gpath = os.path.join(cap, "group", "on", "fkcmp.worker.folded")
    if not os.path.isfile(gpath):
        bad.append("%s: no group/on/fkcmp.worker.folded: %r" % (cap, os.listdir(cap)))
        continue
    if counts(gpath) != merged:
        bad.append("%s: the group's profile is not its members' stacks summed" % cap)
    if not os.path.isfile(os.path.join(cap, "group", "on", "fkcmp.worker.svg")):
        bad.append("%s: no group graph" % cap)
    if [f for f in os.listdir(os.path.join(cap, "group", "on")) if "main" in f]:
        bad.append("%s: the main process grouped" % cap)
    def self_of(prof):
        s = {}
        for k, v in prof.items():
            fr = k.split(";")
            if len(fr) > 1:
                s[fr[-1]] = s.get(fr[-1], 0) + v
        return s
    gs, total = self_of(merged), sum(merged.values())
    top = sorted(gs, key=lambda f: (-gs[f], f.encode("utf-8", "surrogateescape")))[:10]
    ms = [(self_of(m), sum(m.values())) for m in members]
    want = []
    for f in top:
        sh = [(s.get(f, 0) / t, i) for i, (s, t) in enumerate(ms) if t > 0]
        lo = min(sh, key=lambda x: (x[0], x[1]))
        hi = min(sh, key=lambda x: (-x[0], x[1]))
        want.append(["on", "fkcmp.worker", "2", "ns", f, str(gs[f]), "%.4f" % (gs[f] / total),
                     "%.4f" % lo[0], names[lo[1]], "%.4f" % hi[0], names[hi[1]]])
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(cap, "group", "spread.tsv"))]
    if rows[0] != ["profile", "group", "members", "unit", "function", "self", "share", "low",
                   "low_process", "high", "high_process"]:
        bad.append("%s: spread.tsv's header %r" % (cap, rows[0]))
    if rows[1:] != want:
        bad.append("%s: spread.tsv %r, want %r" % (cap, rows[1:4], want[:3]))
    ck = [r for r in want if r[4] == "checksum_frame"]
    if "checksum_frame" not in ms[1][0]:
        bad.append("%s: worker 2 never sampled in checksum_frame" % cap)
    elif not ck or ck[0][7] != "0.0000" or ck[0][8] != names[0] or ck[0][10] != names[1]:
        bad.append("%s: checksum_frame's spread %r" % (cap, ck))
    report = open(os.path.join(cap, "report.md"), encoding="utf-8").read()
    for w in ("\n## Workers as a group\n", "\n### `fkcmp.worker`: on-CPU (ns), 2 processes\n",
              "(group/spread.tsv)", "- Least loaded: `fkcmp.worker-", "| `checksum_frame` | "):
        if w not in report:
            bad.append("%s: report.md lacks %r" % (cap, w))
for b in bad[:20]:
    print("FAIL: --group-workers:", b, file=sys.stderr)
print("--group-workers: the groups of %d captures agree with their workers' files" % (len(sys.argv) - 1))
sys.exit(1 if bad else 0)
EOF
[ -e "$T/before/group" ] && fail "a group without --group-workers"
grep -q 'window 1 of 2 opens in' "$T/sched.err" || fail "--delay: not said"
[ "$(grep -c '^fp-record: recording 3 processes' "$T/sched.err")" = 2 ] ||
	fail "--every: not two windows of 3 processes"
kill -TERM $SRV; wait $SRV 2>/dev/null
for bad in "--every 1 -d 2 --count 2" "--every 5" "--count 3" "--delay -1" "--every 5 --count 0"; do
	# shellcheck disable=SC2086
	"$FPR" --exe "$S" $bad -o "$T/bad" >/dev/null 2>"$T/bad.err"
	rc=$?
	[ $rc = 2 ] && [ ! -e "$T/bad" ] || fail "fp-record $bad: exit $rc, want 2: $(cat "$T/bad.err")"
done
"$FPR" --delay 1 -o "$T/bad" -- "$S" >/dev/null 2>"$T/bad.err"
[ $? = 2 ] && grep -q 'need running processes' "$T/bad.err" ||
	fail "--delay with a command: $(cat "$T/bad.err")"
"$FPR" --exe "$S" --compare "$T" -o "$T/bad" >/dev/null 2>"$T/bad.err"
[ $? = 2 ] && grep -q 'not an fp-record capture' "$T/bad.err" ||
	fail "--compare with no capture: $(cat "$T/bad.err")"

[ $FAILED = 0 ] || exit 1
echo "fp-record-compare: ok"
