#!/bin/bash
# report-kernel-parts.sh - fold-report's tables show the program's stack
# with the kernel's part summarised ("... -> __lll_lock_wait -> [kernel:
# lock wait]"), never the kernel's entry and scheduler frames, and charge
# a kernel leaf to the call the program made.  Checked two ways:
#  - a hand-made profile (below) whose tables were computed by hand: the
#    numbers are written here, not taken from the tool;
#  - the same hand-made profile and the golden data files (C++ and dd
#    workloads, on- and off-CPU, fp-record-like and fp-collapse --kernel
#    ones) against Python's own summary of their folded stacks: every hot
#    path, self and inclusive row of the JSON, and the Markdown's rows equal
#    to the JSON's; no contention row is a frame only ever seen in the
#    kernel's part (do_futex, do_syscall_64, schedule); --kernel-stacks
#    gives the frames as they are.
# The summary (docs/fold-report.1, Tables): a stack's kernel part starts at
# its first kernel entry frame (entry_SYSCALL_*, do_syscall_64, asm_exc_*,
# asm_sysvec_*, ...) when a frame of the program's side comes before it;
# it is "[kernel: KIND wait]" (the stack's wait kind) when a scheduler
# frame is in it, else how the kernel was entered: "system call", "page
# fault", "interrupt".  Exit 0 pass, 1 fail, 77 skip (no python3).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "${BIN:-$ROOT/build/bin}" && pwd) || exit 1
DATA=$ROOT/test/golden/fold-report/data
command -v python3 >/dev/null || { echo "no python3" >&2; exit 77; }
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
export LC_ALL=C

# on-CPU (ns): a write whose kernel leaf is a spinlock unlock (a sampling
# artefact), a page fault, a preempting interrupt, a kernel thread (kept
# whole), a stack without a kernel part, a lock wait switched out
cat >"$T/on.folded" <<'EOF'
srv;_start;main;handle;__GI___libc_write;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_write;sock_def_readable;_raw_spin_unlock_irqrestore 50
srv;_start;main;handle;__GI___libc_write;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_write;vfs_write 30
srv;_start;main;handle;parse 100
srv;_start;main;handle;parse;asm_exc_page_fault;exc_page_fault;do_user_addr_fault;handle_mm_fault 20
srv;_start;main;handle;parse;asm_sysvec_apic_timer_interrupt;irqentry_exit_to_user_mode;schedule;__schedule;finish_task_switch.isra.0 10
srv;_start;main;handle;pthread_mutex_lock@@GLIBC_2.2.5;__GI___lll_lock_wait;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;schedule;__schedule 15
kworker/0:1;ret_from_fork_asm;ret_from_fork;kthread;worker_thread;process_one_work 25
EOF
# off-CPU (us): a lock wait, a condition wait, a sleep, each switched out
cat >"$T/off.folded" <<'EOF'
srv;_start;main;handle;pthread_mutex_lock@@GLIBC_2.2.5;__GI___lll_lock_wait;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;futex_do_wait;schedule;__schedule 400
srv;_start;main;handle;pthread_mutex_lock@@GLIBC_2.2.5;__GI___lll_lock_wait;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;schedule;__schedule 100
pool;start_thread;worker;pthread_cond_wait@@GLIBC_2.3.2;__futex_abstimed_wait_common;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_futex;do_futex;futex_wait;schedule;__schedule 300
srv;_start;main;__nanosleep;clock_nanosleep@GLIBC_2.2.5;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_clock_nanosleep;hrtimer_nanosleep;do_nanosleep;schedule;__schedule 200
EOF

fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$BIN/fold-report" --json -n 1000 --unit ns --offcpu "$T/off.folded" "$T/on.folded" >"$T/on.json" ||
	bad "fold-report --json on.folded"
"$BIN/fold-report" -n 1000 --unit ns --offcpu "$T/off.folded" "$T/on.folded" >"$T/on.md" ||
	bad "fold-report on.folded"
"$BIN/fold-report" --json -n 1000 --unit us "$T/off.folded" >"$T/off.json" ||
	bad "fold-report --json off.folded"

# by hand: the on-CPU profile's tables (total 250)
python3 - "$T/on.json" "$T/off.json" <<'EOF' || fail=1
import json, sys
on, off = (json.load(open(p)) for p in sys.argv[1:3])
fails = []
def rows(sec, key):
    return [(r[key], r.get("kernel"), int(r["count"])) for r in sec]
want_paths = [
    ("srv;_start;main;handle;parse", None, 100),
    ("srv;_start;main;handle;__GI___libc_write;[kernel: system call]", "system call", 80),
    ("kworker/0:1;ret_from_fork_asm;ret_from_fork;kthread;worker_thread;process_one_work", None, 25),
    ("srv;_start;main;handle;parse;[kernel: page fault]", "page fault", 20),
    ("srv;_start;main;handle;pthread_mutex_lock@@GLIBC_2.2.5;__GI___lll_lock_wait;[kernel: lock wait]", "lock wait", 15),
    ("srv;_start;main;handle;parse;[kernel: runnable]", "runnable", 10),
]
want_self = [
    ("parse", None, 100), ("__GI___libc_write", "system call", 80), ("process_one_work", None, 25),
    ("parse", "page fault", 20), ("__GI___lll_lock_wait", "lock wait", 15), ("parse", "runnable", 10),
]
want_incl = [
    ("_start", None, 225), ("handle", None, 225), ("main", None, 225), ("parse", None, 130),
    ("[kernel: system call]", "system call", 80), ("__GI___libc_write", None, 80),
    ("kthread", None, 25), ("kworker/0:1", None, 0),
]
got_paths = rows(on["top_paths"], "stack")
if got_paths != want_paths:
    fails.append("hot paths %s, by hand %s" % (got_paths, want_paths))
if rows(on["self"], "frame") != want_self:
    fails.append("self %s, by hand %s" % (rows(on["self"], "frame"), want_self))
incl = rows(on["inclusive"], "frame")
for w in want_incl:
    if w[0] == "kworker/0:1":
        if any(r[0] == w[0] for r in incl):
            fails.append("inclusive: the root kworker/0:1 is a row")
    elif w not in incl:
        fails.append("inclusive: no row %s in %s" % (w, incl))
for r in incl:
    if r[0] in ("do_syscall_64", "entry_SYSCALL_64_after_hwframe", "ksys_write", "sock_def_readable",
                "_raw_spin_unlock_irqrestore", "schedule", "__schedule", "do_futex", "futex_wait"):
        fails.append("inclusive: the kernel's frame %s is a row" % (r,))
# the kworker's own kernel frames are kept: nothing of a program before them
if ("worker_thread", None, 25) not in incl:
    fails.append("inclusive: the kernel thread's frames are not kept whole")
cont = [c["frame"] for c in on["contention"]]
if cont != ["main", "handle"]:
    fails.append("contention rows %s, by hand [main, handle] (do_futex: the kernel's)" % cont)
# off-CPU alone: the lock wait 500, the condition 300, the sleep 200
want = [("pool;start_thread;worker;pthread_cond_wait@@GLIBC_2.3.2;__futex_abstimed_wait_common;[kernel: condition wait]", "condition wait", 300),
        ("srv;_start;main;__nanosleep;clock_nanosleep@GLIBC_2.2.5;[kernel: sleep]", "sleep", 200)]
got = rows(off["top_paths"], "stack")
if got[0] != ("srv;_start;main;handle;pthread_mutex_lock@@GLIBC_2.2.5;__GI___lll_lock_wait;[kernel: lock wait]", "lock wait", 500) or got[1:] != want:
    fails.append("off-CPU hot paths %s" % got)
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else 0)
EOF

# Python's own summary, against every table row, for the hand-made profile
# and the golden data
check() { # name, fold-report arguments...
	local name=$1; shift
	"$BIN/fold-report" --json -n 100000 "$@" >"$T/$name.json" 2>"$T/err" ||
		{ bad "$name: fold-report --json $*: $(head -2 "$T/err")"; return; }
	"$BIN/fold-report" -n 100000 "$@" >"$T/$name.md" 2>"$T/err" ||
		{ bad "$name: fold-report $*"; return; }
	"$BIN/fold-report" --json -n 100000 --kernel-stacks "$@" >"$T/$name-k.json" 2>"$T/err" ||
		{ bad "$name: fold-report --kernel-stacks $*"; return; }
	python3 - "$name" "$T/$name.json" "$T/$name.md" "$T/$name-k.json" "$@" <<'EOF' || fail=1
import glob, json, os, re, sys
from fractions import Fraction
name, js, md, jsk = sys.argv[1:5]
args = sys.argv[5:]
fails = []

def base(n):
    n = re.sub(r"_\[[kjiw]\]$", "", n)
    n = n.split("@")[0]
    for c in (".isra.", ".constprop.", ".part.", ".cold", ".localalias", ".lto_priv.", ".llvm."):
        if c in n:
            n = n[:n.index(c)]
    if n.startswith("__GI_"):
        n = n[5:]
    return n.lstrip("_")

def plain(n):
    return re.sub(r"_\[[kjiw]\]$", "", n)

KENTRY = ("entry_SYSCALL", "entry_SYSENTER", "entry_INT80", "asm_exc_", "asm_sysvec_",
          "asm_common_interrupt", "ret_from_fork", "do_syscall_64", "el0_", "el1_")
SCHED = {"schedule", "schedule_idle", "schedule_timeout", "schedule_hrtimeout_range",
         "schedule_hrtimeout_range_clock", "io_schedule", "preempt_schedule",
         "preempt_schedule_common", "preempt_schedule_irq", "finish_task_switch",
         "context_switch", "do_idle"}
# the wait kinds of the frames these profiles have (docs/fold-report.1)
KIND = {"pthread_mutex_lock": "lock wait", "lll_lock_wait": "lock wait",
        "lll_lock_wait_private": "lock wait", "pthread_cond_wait": "condition wait",
        "pthread_cond_timedwait": "condition wait", "pthread_cond_clockwait": "condition wait",
        "pthread_clockjoin_ex": "condition wait", "pthread_join": "condition wait",
        "wait4": "condition wait", "waitpid": "condition wait", "pthread_cond_signal": "condition wait",
        "pthread_cond_broadcast": "condition wait",
        "nanosleep": "sleep", "clock_nanosleep": "sleep", "do_nanosleep": "sleep",
        "hrtimer_nanosleep": "sleep", "usleep": "sleep", "common_nsleep": "sleep",
        "epoll_wait": "I/O wait", "poll": "I/O wait", "ep_poll": "I/O wait", "do_epoll_wait": "I/O wait",
        "pipe_read": "I/O wait", "pipe_write": "I/O wait",
        "io_schedule": "disk wait", "fsync": "disk wait",
        "asm_exc_page_fault": "page fault", "exc_page_fault": "page fault",
        "do_user_addr_fault": "page fault", "handle_mm_fault": "page fault",
        "irqentry_exit_to_user_mode": "runnable", "irqentry_exit": "runnable",
        "preempt_schedule_irq": "runnable", "preempt_schedule": "runnable",
        "exit_to_user_mode_loop": "runnable", "sched_yield": "runnable",
        "mutex_lock": "lock wait", "down_write": "lock wait", "down_read": "lock wait",
        "down_read_killable": "lock wait", "down_write_killable": "lock wait",
        "rwsem_down_read_slowpath": "lock wait", "rwsem_down_write_slowpath": "lock wait",
        "cond_resched": "runnable"}
def kind_of(n):
    if re.match(r"^std::(_V2::)?condition_variable(_any)?::(wait|wait_for|wait_until)", n):
        return "condition wait"
    if re.match(r"^std::(recursive_|timed_|shared_)?mutex::lock", n):
        return "lock wait"
    if re.match(r"^std::this_thread::sleep_", n):
        return "sleep"
    return KIND.get(base(n))
def entry_label(n):
    n = plain(n)
    if n.startswith(("entry_SYSCALL", "entry_SYSENTER", "entry_INT80", "do_syscall_64", "el0_svc")):
        return "system call"
    if n.startswith(("asm_exc_page_fault", "el0_da", "el0_ia")):
        return "page fault"
    if n.startswith(("asm_sysvec_", "asm_common_interrupt", "el0_interrupt", "el0_irq", "el1_interrupt", "el1_irq")):
        return "interrupt"
    return "kernel"

def summarise(frames):
    """frames: the stack after its root; (program side, label or None)"""
    k = next((i for i, f in enumerate(frames) if plain(f).startswith(KENTRY)), len(frames))
    if k == 0 or k == len(frames):
        return frames, None
    if any(base(f) in SCHED for f in frames[k:]):
        kinds = [kind_of(f) for f in frames if kind_of(f)]
        return frames[:k], kinds[-1] if kinds else "wait"
    return frames[:k], entry_label(frames[k])

def files_of(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(glob.glob(os.path.join(p, "*.folded")))
        else:
            out.append(p)
    return out

operands, i = [], 0
while i < len(args):
    if args[i] in ("--unit", "--offcpu"):
        i += 2
        continue
    operands.append(args[i]); i += 1
def read(files):
    stacks = {}
    for f in files:
        for line in open(f, encoding="utf-8", errors="surrogateescape"):
            s, c = line.rstrip("\n").rsplit(" ", 1)
            stacks[s] = stacks.get(s, 0) + Fraction(c)
    return stacks

rep = json.load(open(js), parse_float=Fraction, parse_int=Fraction)
def table(sec, key):
    return {(r[key], r.get("kernel")): Fraction(r["count"]) for r in sec}
def ordered(sec):
    cs = [Fraction(r["count"]) for r in sec]
    return all(a >= b for a, b in zip(cs, cs[1:]))

def compare(where, rep, stacks):
  paths, self_, incl = {}, {}, {}
  for s, c in stacks.items():
      parts = s.split(";")
      root, frames = parts[0], parts[1:]
      if len(parts) == 1:
          paths[(s, None)] = paths.get((s, None), 0) + c
          continue
      prog, label = summarise(frames)
      text = ";".join([root] + prog + (["[kernel: %s]" % label] if label else []))
      paths[(text, label)] = paths.get((text, label), 0) + c
      leaf = (prog[-1], label) if label else (frames[-1], None)
      self_[leaf] = self_.get(leaf, 0) + c
      for f in set(prog):
          incl[(f, None)] = incl.get((f, None), 0) + c
      if label:
          incl[("[kernel: %s]" % label, label)] = incl.get(("[kernel: %s]" % label, label), 0) + c

  for what, sec, key, want in (("hot paths", rep["top_paths"], "stack", paths),
                               ("self", rep["self"], "frame", {k: v for k, v in self_.items() if v > 0}),
                               ("inclusive", rep["inclusive"], "frame", incl)):
      got = table(sec, key)
      if len(got) != len(sec):
          fails.append("%s: %s: duplicate rows" % (where, what))
      if not ordered(sec):
          fails.append("%s: %s: not heaviest first" % (where, what))
      for k in sorted(set(got) | set(want), key=str):
          if got.get(k) != want.get(k) and not (what == "inclusive" and k not in got and want.get(k) == 0):
              fails.append("%s: %s row %s: fold-report %s, the folded stacks %s" % (where, what, k, got.get(k), want.get(k)))
  kernel_only = set()
  for s in stacks:
      frames = s.split(";")[1:]
      prog, label = summarise(frames)
      kernel_only |= set(frames) - set(prog) if label else set()
  for s in stacks:
      frames = s.split(";")[1:]
      prog, label = summarise(frames)
      kernel_only -= set(prog)
  for c in rep["contention"] or []:
      if c["frame"] in kernel_only:
          fails.append("%s: contention row %s is a frame of the kernel's part only" % (where, c["frame"]))

  return len(paths), len(self_), len(incl)

stacks = read(files_of(operands))
counts = compare(name, rep, stacks)
for sec in rep.get("processes", []):
    compare(name + ":" + sec["process"], sec, read(sec["inputs"]))

# the Markdown's self and inclusive rows are the JSON's
mdtext = open(md, encoding="utf-8").read().split("\n# Process")[0]
def md_rows(title):
    sec = mdtext.split(title, 1)[1].split("\n## ", 1)[0]
    out = []
    for line in sec.splitlines():
        m = re.match(r"^\| `(.*)` \| ([0-9,.]+) \| ", line)
        if m:
            out.append((m.group(1).replace("\\|", "|"), Fraction(m.group(2).replace(",", ""))))
    return out
for title, sec in (("## Self: functions at the leaf", rep["self"]),
                   ("## Inclusive: functions on the stack", rep["inclusive"])):
    want = [((r["frame"] + " -> [kernel: %s]" % r["kernel"]) if r.get("kernel") and not r["frame"].startswith("[kernel: ")
             else r["frame"], Fraction(r["count"])) for r in sec]
    if md_rows(title) != want:
        fails.append("%s: the Markdown's %s rows are not the JSON's" % (name, title))
# --kernel-stacks: the frames as they are
repk = json.load(open(jsk), parse_float=Fraction, parse_int=Fraction)
raw_self = {}
for s, c in stacks.items():
    p = s.split(";")
    if len(p) > 1 and c > 0:
        raw_self[p[-1]] = raw_self.get(p[-1], 0) + c
if {r["frame"]: Fraction(r["count"]) for r in repk["self"]} != raw_self or \
   any("kernel" in r for r in repk["self"] + repk["top_paths"] + repk["inclusive"]):
    fails.append("%s: --kernel-stacks does not give the leaves as they are" % name)
for f in fails[:20]:
    print("FAIL: " + f)
print("  %s: %d hot paths, %d self rows, %d inclusive rows checked (%d processes too)" % ((name,) + counts + (len(rep.get("processes", [])),)))
sys.exit(1 if fails else 0)
EOF
}

check hand --unit ns --offcpu "$T/off.folded" "$T/on.folded"
check hand-off --unit us "$T/off.folded"
check cxx --unit ns --offcpu "$DATA/cxx-off.folded" "$DATA/cxx-on.folded"
check cxx-off --unit us "$DATA/cxx-off.folded"
check cxx-dwarf --unit ns "$DATA/cxx-dwarf.folded"
check dd-kernel --unit ns "$DATA/dd-kernel.folded"
check workload --unit ns --offcpu "$DATA/workload-off.folded" "$DATA/workload-on.folded"
check workload-off --unit us "$DATA/workload-off.folded"
check split-dir --offcpu "$DATA/split-off" "$DATA/split-on"
exit $fail
