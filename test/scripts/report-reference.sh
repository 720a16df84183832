#!/bin/bash
# test/scripts/report-reference.sh - fold-report's numbers against a small
# independent reference (Python, below) over the same folded input: the
# real recordings of test/golden/fold-report/data and random profiles
# (duplicate lines, recursion, a root alone, decimal counts).
#
# Checked, with every table uncut (--top 1000000): total, distinct stacks,
# threads and functions; every thread, hot path, self and inclusive row
# (count, share, order); the categories' counts (Python's re on each
# frame); unresolved and truncated; the sums (self + stacks of a root alone
# = total; every share = count / total rounded half up to six decimals);
# contention shares.  The tables are --kernel-stacks's: every frame as read.
# Exit 0 pass, 1 fail, 77 skip (no python3).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd); export ROOT
BIN=$(cd "${BIN:-$ROOT/build/bin}" && pwd) || exit 1
command -v python3 >/dev/null || { echo "no python3" >&2; exit 77; }
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
D=$ROOT/test/golden/fold-report/data

cat > "$T/ref.py" <<'EOF'
import json, re, subprocess, sys
from fractions import Fraction

# The documented rules (docs/fold-report.1), written again.
ENTRIES = {"start", "libc_start_main", "libc_start_call_main", "dl_start_user",
           "start_thread", "thread_start", "clone", "clone3", "ret_from_fork",
           "ret_from_fork_asm", "kthread", "secondary_startup_64",
           "secondary_startup_64_no_verify", "common_startup_64", "start_kernel",
           "x86_64_start_kernel", "x86_64_start_reservations", "secondary_start_kernel",
           "secondary_switched", "runtime.goexit", "runtime.goexit.abi0", "runtime.mstart",
           "runtime.mstart.abi0", "runtime.rt0_go", "runtime.rt0_go.abi0"}

# The program's frames (classify.h's frame_is_system(), written again):
# the names of classify.c's and waitkind.c's tables (read from the
# sources: the documented tables) and the shapes below are not.
import os
TABLES = set()
for src in ("lib/report/classify.c", "lib/report/waitkind.c"):
    with open(os.path.join(os.environ["ROOT"], src)) as fh:
        TABLES |= set(re.findall(r'\{ "([^"]+)", (?:FRAME|WAIT)_', fh.read()))
KENTRY = ("entry_SYSCALL", "entry_SYSENTER", "entry_INT80", "asm_exc_", "asm_sysvec_",
          "asm_common_interrupt", "ret_from_fork", "do_syscall_64", "el0_", "el1_")

def system(f):
    n = strip_annotation(f)
    if n != f and f.endswith("_[k]"):
        return True
    if (len(n) >= 2 and n[0] == "[" and n[-1] == "]") or "@" in n or n.startswith(KENTRY):
        return True
    if len(n) >= 2 and n[0] == "_" and (n[1] == "_" or (n[1].isupper() and n[1] != "Z")):
        return True
    if n.startswith(("std::", "__gnu_cxx::", "__cxxabiv1::", "__cxa_", "operator new",
                     "operator delete", "__sanitizer::", "__asan::", "__ubsan::")):
        return True
    return base(f) in TABLES

def strip_annotation(f):
    return f[:-4] if re.search(r"_\[[kjiw]\]$", f) else f

def base(f):
    f = strip_annotation(f).split("@")[0]
    f = re.split(r"\.(isra\.|constprop\.|part\.|cold|localalias|lto_priv\.|llvm\.)", f)[0]
    if f.startswith("__GI_"):
        f = f[5:]
    return f.lstrip("_")

def unresolved(f):
    f = strip_annotation(f)
    return len(f) >= 2 and f[0] == "[" and f[-1] == "]" and f != "[kernel]"

def share(c, t):
    if t == 0 or c <= 0:
        return "0.000000"
    q = Fraction(c) / Fraction(t) * 1000000
    n = int(q)
    if q - n >= Fraction(1, 2):
        n += 1
    return "%d.%06d" % (n // 1000000, n % 1000000)

def num(c):
    i = c.numerator // c.denominator
    if c.denominator == 1:
        return str(i)
    return ("%d.%09d" % (i, (c - i) * 10**9)).rstrip("0")

def read(paths):
    stacks = {}
    for p in paths:
        for line in open(p, encoding="utf-8", errors="surrogateescape"):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            s, c = line.rsplit(" ", 1)
            stacks[s.rstrip(" ")] = stacks.get(s.rstrip(" "), 0) + Fraction(c)
    return stacks

def analyse(stacks):
    total = sum(stacks.values())
    roots, selfc, incl, trunc, unres, rootonly = {}, {}, {}, 0, 0, 0
    for s, c in stacks.items():
        fr = s.split(";")
        roots[fr[0]] = roots.get(fr[0], 0) + c
        fn = fr[1:]
        if not fn:
            rootonly += c
            trunc += c
            continue
        selfc[fn[-1]] = selfc.get(fn[-1], 0) + c
        for f in set(fn):
            incl[f] = incl.get(f, 0) + c
        if not any(base(f) in ENTRIES for f in fn):
            trunc += c
        if any(unresolved(f) for f in fn):
            unres += c
    return dict(total=total, roots=roots, self=selfc, incl=incl, trunc=trunc,
                unres=unres, rootonly=rootonly)

def rows(d, total, key):
    return [{key: k, "count": num(v), "share": share(v, total)}
            for k, v in sorted(d.items(), key=lambda kv: (-kv[1], kv[0].encode("utf-8", "surrogateescape")))]

def check(name, got, want):
    if got != want:
        print("FAIL %s: %s\n  fold-report %r\n  reference   %r" % (CASE, name, got, want))
        sys.exit(1)

def numbers(o):
    # the JSON's numbers as written, for exact comparison
    return json.loads(o, parse_float=lambda s: s, parse_int=lambda s: s)

CASE = " ".join(sys.argv[1:])
off = None
args = sys.argv[1:]
if args[0] == "--offcpu":
    off, args = args[1], args[2:]
# --kernel-stacks: the tables with every frame as read (the kernel's part
# summarised is report-kernel-parts.sh's)
cmd = [sys.argv[0].replace("ref.py", "fold-report"), "--json", "-n", "1000000", "--kernel-stacks"]
cmd += (["--offcpu", off] if off else []) + args
out = numbers(subprocess.run(cmd, check=True, capture_output=True).stdout)
stacks = read(args)
a = analyse(stacks)
t = a["total"]
check("total", out["total"], num(t))
check("stacks", out["stacks"], str(len(stacks)))
check("thread_names", out["thread_names"], str(len(a["roots"])))
check("function_count", out["function_count"], str(len(a["incl"])))
want = rows(a["roots"], t, "name")
check("threads", out["threads"], want)
want = [{"stack": s, "count": num(c), "share": share(c, t)} for s, c in
        sorted(stacks.items(), key=lambda kv: (-kv[1], kv[0].encode("utf-8", "surrogateescape")))]
check("top_paths", out["top_paths"], want)
check("self", out["self"], rows(a["self"], t, "frame"))
check("inclusive", out["inclusive"], rows(a["incl"], t, "frame"))
check("sum of self", sum(a["self"].values()) + a["rootonly"], t)
check("unresolved", out["unresolved"], {"count": num(a["unres"]), "share": share(a["unres"], t)})
check("truncated", out["truncated"], {"count": num(a["trunc"]), "share": share(a["trunc"], t)})
for cat in out["categories"]:
    rx = re.compile(cat["regex"].replace("(?i)", ""), re.I if "(?i)" in cat["regex"] else 0)
    c = sum(v for s, v in stacks.items() if any(rx.search(f) for f in s.split(";")[1:]))
    check("category " + cat["name"], (cat["count"], cat["share"]), (num(c), share(c, t)))
if off:
    b = analyse(read([off]))
    for row in out["contention"]:
        f = row["frame"]
        check("contention " + f, (row["on_share"], row["off_share"]),
              (share(a["incl"][f], t), share(b["incl"][f], b["total"])))
        check("contention >= 1% " + f, min(a["incl"][f] / t, b["incl"][f] / b["total"]) >= Fraction(1, 100), True)
    # a frame only ever in a kernel part (after an entry frame that a
    # frame precedes: do_futex) is the kernel's, whatever its name
    KENTRY = ("entry_SYSCALL", "entry_SYSENTER", "entry_INT80", "asm_exc_", "asm_sysvec_",
              "asm_common_interrupt", "ret_from_fork", "do_syscall_64", "el0_", "el1_")
    def prog(st):
        out = set()
        for s in st:
            fn = s.split(";")[1:]
            k = next((i for i, f in enumerate(fn) if re.sub(r"_\[[kjiw]\]$", "", f).startswith(KENTRY)), len(fn))
            out |= set(fn[:k] if 0 < k < len(fn) else fn)
        return out
    pa, pb = prog(stacks), prog(read([off]))
    want = sorted(f for f in a["incl"] if f in b["incl"] and f in pa and f in pb and base(f) not in ENTRIES and not system(f)
                  and a["incl"][f] / t >= Fraction(1, 100) and b["incl"][f] / b["total"] >= Fraction(1, 100))
    check("contention frames", sorted(r["frame"] for r in out["contention"]), want)
EOF
ln -s "$BIN/fold-report" "$T/fold-report"

# random profiles: a few roots, recursion, duplicate lines, roots alone,
# decimal counts
cat > "$T/gen.py" <<'EOF'
import random, sys
r = random.Random(int(sys.argv[1]))
names = ["main", "work", "leaf", "start_thread", "[unknown]", "[libc.so.6]", "f", "g",
         "pthread_mutex_lock", "malloc", "_start", "x::X::X", "futex_wait"]
for i in range(r.randint(1, 60)):
    root = r.choice(["t1", "t2", "w-1", "w-2", "[unknown]"])
    fr = [r.choice(names) for _ in range(r.randint(0, 8))]
    c = r.randint(0, 1000) if r.random() < 0.8 else "%d.%d" % (r.randint(0, 9), r.randint(1, 999))
    print(";".join([root] + fr), c)
EOF
run() { python3 "$T/ref.py" "$@" || exit 1; }	# the first failure is enough
for f in "$D"/*.folded; do run "$f"; done
run --offcpu "$D/workload-off.folded" "$D/workload-on.folded"
run --offcpu "$D/cxx-off.folded" "$D/cxx-on.folded"
run "$D/workload-on.folded" "$D/cxx-on.folded" "$D/dd-kernel.folded"
run "$D"/split-on/*.folded
for seed in $(seq 1 12); do
	python3 "$T/gen.py" "$seed" > "$T/r$seed.folded"
	python3 "$T/gen.py" "$((seed + 1000))" > "$T/o$seed.folded"
	run --offcpu "$T/o$seed.folded" "$T/r$seed.folded"
done
echo "report-reference: all cases agree"
