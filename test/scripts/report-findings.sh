#!/bin/bash
# report-findings.sh - fold-report's findings on a real capture, checked.
# fp-record records the bundled multi-process ledger service
# (test/workloads/ledgerd.cpp, built by the Makefile with frame pointers)
# here and now, on- and off-CPU, and fold-report reads the capture
# directory with no option.  Planted in it: a mutex contended by three
# tellers (ledger::Book::apply), a clock read in a tight loop
# (ledger::Throttle), a per-request constructor doing work
# (ledger::Voucher::Voucher), synchronous logging with write(2)
# (ledger::AuditLogger::record), a CPU-heavy function
# (ledger::Digest::fold_block), a thread asleep on a condition variable
# (auditor) and an idle pool (spare-N).  Checked, for the whole and each
# process, against the folded files (Python over them, below) and the
# service's own timing of its waits:
#  - each planted problem is found exactly when its amount in the folded
#    files reaches the rule's documented threshold (the whole capture has
#    them all), with its class, process, frame and the amount of its edge,
#    equal to the sum over the folded stacks that have that edge;
#  - the lock finding's off-CPU time is at most what the tellers timed
#    themselves waiting for the lock (+2% +2 ms a thread);
#  - nothing false: the only lock finding is Book::apply's, idle threads
#    and condition waits are never a lock, units are ns on-CPU and us
#    off-CPU, never samples; the summary counts 3 processes and each
#    process's threads;
#  - the tables show no kernel entry or scheduler frame (do_syscall_64,
#    schedule, do_futex, _raw_spin_unlock_irqrestore): the kernel's part
#    of each stack is summarised.
# Exit 0 pass, 1 fail, 77 skip (not root, no perf, no python3).
set -u
[ "$(id -u)" -eq 0 ] || { echo "fp-record's off-CPU recording needs root" >&2; exit 77; }
# ROOT, BUILD, BIN, $T (removed on exit), and fp_record_perf: a sanitizer
# build's plugin needs its runtime loaded into perf first
. "$(dirname "$0")/plugin-lib.sh"
BIN=$(cd "$BIN" && pwd) || exit 1
W=$BUILD/workloads/ledgerd
command -v perf >/dev/null || { echo "no perf" >&2; exit 77; }
command -v python3 >/dev/null || { echo "no python3" >&2; exit 77; }
[ -x "$W" ] || { echo "no $W: make builds it" >&2; exit 1; }
perf record -q -o "$T/probe.data" -e cpu-clock -- true >/dev/null 2>&1 ||
	{ echo "perf cannot record here" >&2; exit 77; }
fp_record_perf
chmod 755 "$T"

lost() { perf report -i "$1" --stats 2>/dev/null | grep -c 'LOST'; }
ok=
for try in 1 2 3; do
	rm -rf "$T/cap" "$T/waits"
	"$BIN/fp-record" -F 1999 -d 60 -o "$T/cap" --keep-data -- "$W" 3000 "$T/waits" "$T/journal" \
		>"$T/fpr.out" 2>"$T/fpr.err" ||
		{ echo "FAIL: fp-record failed: $(tail -3 "$T/fpr.err")"; exit 1; }
	if [ "$(lost "$T/cap/off.data")" = 0 ] && [ "$(lost "$T/cap/on.data")" = 0 ]; then
		ok=1
		break
	fi
	echo "   (perf lost events in recording $try)"
done
[ -n "$ok" ] || { echo "FAIL: perf lost events in each of three recordings: the machine is too busy to test"; exit 1; }

"$BIN/fold-report" --json -n 1000 "$T/cap" >"$T/report.json" 2>"$T/report.err" ||
	{ echo "FAIL: fold-report CAPTURE: $(head -3 "$T/report.err")"; exit 1; }
"$BIN/fold-report" -n 1000 "$T/cap" >"$T/report.md" 2>>"$T/report.err" ||
	{ echo "FAIL: fold-report CAPTURE (Markdown)"; exit 1; }

python3 - "$T/cap" "$T/waits" "$T/report.json" "$T/report.md" "$W" <<'EOF'
import glob, json, os, re, subprocess, sys
from fractions import Fraction

cap, waits, rep, md, binary = sys.argv[1:6]
report = json.load(open(rep), parse_float=Fraction, parse_int=Fraction)
fails = []
def bad(msg):
    fails.append(msg)

def read(path):
    out = []
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        s, c = line.rstrip("\n").rsplit(" ", 1)
        out.append((s.split(";"), Fraction(c)))
    return out

# fp-record names its files by process and role (ledgerd.main,
# ledgerd.worker-1): each one's pid is in the capture's index.tsv
rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(cap, "index.tsv"))]
stem_pid = {}
for r in rows[1:]:
    cell = dict(zip(rows[0], r))
    for side in ("on", "off"):
        if cell[side + "_folded"] != "-":
            stem_pid[os.path.basename(cell[side + "_folded"])[:-7]] = cell["pid"]
# on/index.tsv's caller_lost by pid (the plugin's count, ns)
caller_lost = {}
on_rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(cap, "on", "index.tsv"))]
for r in on_rows[1:]:
    cell = dict(zip(on_rows[0], r))
    if cell.get("caller_lost", "-") != "-":
        caller_lost[cell["pid"]] = Fraction(cell["caller_lost"])
# the service's functions whose code never pushes rbp (objdump -C)
no_push, all_fns, fn, pushes = set(), set(), None, False
for line in subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", binary],
                           capture_output=True, text=True).stdout.splitlines() + [""]:
    m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
    if m or not line:
        if fn:
            all_fns.add(re.sub(r"\(.*", "", fn))
        if fn and not pushes:
            no_push.add(re.sub(r"\(.*", "", fn))
        fn, pushes = (m.group(1) if m else None), False
    elif "push   %rbp" in line:
        pushes = True
if "main" not in all_fns or "ledger::Book::apply" not in all_fns:
    bad("objdump -d %s gave not the service's functions" % binary)
procs = {}	# pid -> {"name": file stem, "on": stacks, "off": stacks}
for side in ("on", "off"):
    for f in glob.glob(os.path.join(cap, side, "*.folded")):
        name = os.path.basename(f)[:-7]
        pid = stem_pid[name]
        procs.setdefault(pid, {"name": name})[side] = read(f)
for p in procs.values():
    p.setdefault("on", []); p.setdefault("off", [])

# the service's own timing: pid -> thread -> site -> ns
timed = {}
for line in open(waits):
    pid, tid, thread, site, calls, ns = line.split()
    timed.setdefault(pid, {}).setdefault(thread, {})
    timed[pid][thread][site] = timed[pid][thread].get(site, 0) + int(ns)

def group(root):
    return re.sub(r"[0-9]+", "*", root)

def has_edge(frames, a, b):
    return any(frames[i] == a and frames[i + 1] == b for i in range(len(frames) - 1))

VDSO = re.compile(r"^\[+vdso\]+$|__vdso_")
WRITE = re.compile(r"(^|_)write(@|$)|libc_write")

def expect(section, stacks_on, stacks_off, pid):
    where = section.get("process", "whole")
    found = section["findings"]
    if section["unit"] != "ns" or (section["offcpu"] and section["offcpu"]["unit"] != "us"):
        bad("%s: units %s/%s, not ns/us" % (where, section["unit"], section["offcpu"] and section["offcpu"]["unit"]))
    for f in found:
        rule, cls, frame, edge, count = f["rule"], f["class"], f["frame"], f["edge"], f["count"]
        unit = f["unit"]
        if unit not in ("ns", "us") or (f["profile"] == "on") != (unit == "ns"):
            bad("%s: %s in unit %s of profile %s" % (where, rule, unit, f["profile"]))
        if f["process"] != where:
            bad("%s: a finding of process %s" % (where, f["process"]))
        if cls == "lock" or rule == "contended-lock":
            # the only contended lock: the tellers' book
            if rule != "contended-lock" or frame != "ledger::Book::apply" or cls != "lock" or \
               not edge[-1].startswith("pthread_mutex_lock"):
                bad("%s: a false lock finding: %s" % (where, f["text"]))
                continue
            want = sum(c for s, c in stacks_off if has_edge(s, edge[0], edge[1]))
            if count != want:
                bad("%s: lock at %s: %s us, the folded stacks %s" % (where, edge, count, want))
            pids = [pid] if pid else list(timed)
            own = sum(Fraction(ns, 1000) for q in pids for t in timed.get(q, {}).values()
                      for s, ns in t.items() if s == "ledger::Book::apply")
            nthreads = sum(1 for q in pids for t in timed.get(q, {}).values() if "ledger::Book::apply" in t)
            if count > own * Fraction(102, 100) + 2000 * nthreads:
                bad("%s: lock wait %s us off-CPU, the tellers waited %s us by their clock" % (where, count, own))
            print("  %s: contended-lock %s: %s us off-CPU (the tellers timed %s us)" % (where, " -> ".join(edge), count, round(own)))
        elif rule == "idle-thread":
            m = re.match(r"thread `([^`]*)`", f["text"])
            g = m.group(1) if m else "?"
            if cls not in ("condition", "sleep", "io"):
                bad("%s: idle-thread of class %s" % (where, cls))
            pat = {"condition": r"pthread_cond_|condition_variable|thread::join|pthread_join|waitpid|clockjoin",
                   "sleep": r"nanosleep|usleep", "io": r"epoll|poll|select|recv|accept|read"}[cls]
            lockpat = re.compile(r"lll_lock_wait|pthread_mutex_.*lock|mutex_cond_lock")
            want = sum(c for s, c in stacks_off if group(s[0]) == g and
                       any(re.search(pat, x) for x in s[1:]) and not any(lockpat.search(x) for x in s[1:]))
            if count != want:
                bad("%s: idle %s %s: %s us, the folded stacks %s" % (where, g, cls, count, want))
            print("  %s: idle-thread %s (%s at %s): %s us" % (where, g, cls, frame, count))
        elif rule == "hot-function":
            if not frame.startswith("ledger::"):
                bad("%s: a hot function not the program's: %s" % (where, f["text"]))
            if len(edge) == 1:
                want = sum(c for s, c in stacks_on if frame in s and
                           (s[-1] == frame or (s.index(frame) + 1 < len(s) and
                            s[s.index(frame) + 1].startswith(("asm_sysvec", "asm_common", "asm_exc")))))
            else:
                want = sum(c for s, c in stacks_on if has_edge(s, edge[0], edge[1])
                           and not any(VDSO.search(x) or "schedule" in x for x in s))
            if count != want:
                bad("%s: hot %s: %s ns, the folded stacks %s" % (where, edge, count, want))
            print("  %s: hot-function %s: %s ns" % (where, " -> ".join(edge), count))
        elif rule == "vdso-clock":
            want = sum(c for s, c in stacks_on if has_edge(s, edge[0], edge[1]) and any(VDSO.search(x) for x in s))
            if count != want or not frame.startswith("ledger::"):
                bad("%s: clock %s: %s ns, the folded stacks %s" % (where, edge, count, want))
            print("  %s: vdso-clock %s: %s ns" % (where, " -> ".join(edge), count))
        elif rule == "sync-logging":
            want = sum(c for s, c in stacks_on if frame in s and
                       any(WRITE.search(x) for x in s[s.index(frame) + 1:]))
            if frame != "ledger::AuditLogger::record" or count != want:
                bad("%s: logging at %s: %s ns, the folded stacks %s" % (where, frame, count, want))
            print("  %s: sync-logging %s: %s ns" % (where, " -> ".join(edge), count))
        elif rule == "constructor":
            want = sum(c for s, c in stacks_on if frame in s[1:])
            if frame != "ledger::Voucher::Voucher" or count != want:
                bad("%s: constructor %s: %s ns, the folded stacks %s" % (where, frame, count, want))
            print("  %s: constructor %s: %s ns" % (where, frame, count))
        elif rule == "caller-lost":
            # the recording's count (the plugin reads each sampled
            # function's unwind rule), and the function named keeps no
            # frame pointer by its code: no push of rbp in the service's
            # binary (its leaf fold_block: g++ -O2 sets up no frame in a
            # leaf that needs no stack, -mno-omit-leaf-frame-pointer or
            # not), or it is not the service's (libc's, libstdc++'s:
            # Debian builds them without frame pointers)
            want = sum(v for q, v in caller_lost.items() if pid is None or q == pid)
            if count != want:
                bad("%s: caller-lost %s ns, index.tsv's caller_lost %s" % (where, count, want))
            if frame in all_fns and frame not in no_push:
                bad("%s: caller-lost names %s, whose code pushes rbp" % (where, frame))
            print("  %s: caller-lost %s: %s ns" % (where, frame, count))
        elif rule in ("truncated", "unresolved", "dominant-thread", "allocation"):
            total = sum(c for s, c in (stacks_on))
            if not 0 < count <= total:
                bad("%s: %s: %s of %s" % (where, rule, count, total))
            print("  %s: %s: %s ns" % (where, rule, count))
        elif rule == "cpu-starved":
            # time waiting for a CPU: how much depends on the machine's
            # load, so whether it is found is not this test's; its number
            # is the run-queue profile's for that thread of its process
            sums = [sum(c for s, c in read(rf) if s[0] == frame)
                    for rf in glob.glob(os.path.join(cap, "runq", "*.folded"))
                    if where == "whole" or os.path.basename(rf)[:-7] == where]
            if f["profile"] != "runq" or unit != "us" or count not in sums:
                bad("%s: cpu-starved %s: %s %s, the run-queue stacks %s" % (where, frame, count, unit, sums))
            print("  %s: cpu-starved %s: %s us runnable" % (where, frame, count))
        else:
            bad("%s: an unexpected finding: %s" % (where, f["text"]))
    return found

def rules_of(found):
    return {(f["rule"], f["frame"]) for f in found}

def prefix_edge(stacks, a, b):
    return sum(c for s, c in stacks if any(s[i] == a and s[i + 1].startswith(b) for i in range(len(s) - 1)))

def check_required(where, found, on, off):
    # each planted problem, found exactly when its evidence reaches the
    # rule's documented threshold (fold-report(1)), computed from the files
    on_total = sum(c for s, c in on)
    off_total = sum(c for s, c in off)
    got = rules_of(found)
    planted = []
    lock = prefix_edge(off, "ledger::Book::apply", "pthread_mutex_lock")
    planted.append((("contended-lock", "ledger::Book::apply"), lock, off_total, Fraction(5, 1000)))
    ctor = sum(c for s, c in on if "ledger::Voucher::Voucher" in s[1:])
    planted.append((("constructor", "ledger::Voucher::Voucher"), ctor, on_total, Fraction(2, 100)))
    log = sum(c for s, c in on if "ledger::AuditLogger::record" in s and
              any(WRITE.search(x) for x in s[s.index("ledger::AuditLogger::record") + 1:]))
    planted.append((("sync-logging", "ledger::AuditLogger::record"), log, on_total, Fraction(1, 100)))
    fold = sum(c for s, c in on if "ledger::Digest::fold_block" in s and
               not any(VDSO.search(x) for x in s))
    planted.append((("hot-function", "ledger::Digest::fold_block"), fold, on_total, Fraction(10, 100)))
    for thread, frame in (("auditor", "ledger::Auditor::await_period"), ("spare-*", "ledger::SparePool::idle")):
        t_off = sum(c for s, c in off if group(s[0]) == thread) * 1000
        t_on = sum(c for s, c in on if group(s[0]) == thread)
        wait = sum(c for s, c in off if group(s[0]) == thread and frame in s) * 1000
        planted.append((("idle-thread", frame), wait, t_off + t_on, Fraction(1, 2)))
    for key, amount, total, thr in planted:
        want = total > 0 and amount > 0 and amount >= thr * total
        if want != (key in got):
            bad("%s: %s at %s: %s of %s (threshold %s), found: %s" %
                (where, key[0], key[1], amount, total, float(thr), key in got))
    clock = sum(c for s, c in on if any(VDSO.search(x) for x in s) and any("Throttle" in x for x in s))
    if on_total and clock >= Fraction(1, 100) * on_total and \
       not any(f["rule"] == "vdso-clock" and "Throttle" in f["frame"] for f in found):
        bad("%s: no vdso-clock finding at the throttle (%s of %s ns)" % (where, clock, on_total))
    return lock, ctor

all_on = [x for p in procs.values() for x in p["on"]]
all_off = [x for p in procs.values() for x in p["off"]]
whole = expect(report, all_on, all_off, None)
lock, ctor = check_required("whole", whole, all_on, all_off)
if not lock or not ctor:
    bad("the capture has no lock wait (%s us) or no constructor (%s ns) of the service" % (lock, ctor))
threads = sum(len({s[0] for s, c in p["on"]}) for p in procs.values())
if report["process_count"] != 3 or report["thread_count"] != threads:
    bad("whole: %s processes, %s threads; the files: 3, %d" % (report["process_count"], report["thread_count"], threads))
for sec in report["processes"]:
    pid = stem_pid.get(sec["process"])
    if pid is None:
        bad("a section of process %r, which index.tsv does not name" % sec["process"])
        continue
    p = procs[pid]
    found = expect(sec, p["on"], p["off"], pid)
    check_required(sec["process"], found, p["on"], p["off"])
# the tables: the kernel's entry and scheduler frames summarised, never
# rows (report-kernel-parts.sh checks the summary's numbers)
KFRAME = re.compile(r"^(do_syscall_64|entry_SYSCALL_64\w*|schedule|__schedule|finish_task_switch.*|do_futex|futex_wait|futex_do_wait|_raw_spin_unlock_irqrestore)$")
for sec in [report] + report["processes"]:
    where = sec["process"]
    for c in sec["contention"] or []:
        if KFRAME.match(c["frame"]):
            bad("%s: contention row %s" % (where, c["frame"]))
    for r in sec["self"] + sec["inclusive"]:
        if KFRAME.match(r["frame"]):
            bad("%s: a kernel frame as a self or inclusive row: %s" % (where, r["frame"]))
    for r in sec["top_paths"]:	# (a stack all the kernel's stays whole)
        frames = r["stack"].split(";")
        if any(x.startswith("ledger::") for x in frames) and any(KFRAME.match(x) for x in frames):
            bad("%s: a hot path with the kernel's frames: %s" % (where, r["stack"]))
text = open(md).read()
if re.search(r"\bsamples\b", text.split("## Threads")[0]):
    bad("the Markdown says samples")
for m in fails:
    print("FAIL: " + m)
sys.exit(1 if fails else 0)
EOF
