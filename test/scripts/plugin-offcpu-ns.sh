#!/bin/bash
# plugin-offcpu-ns.sh - test/scripts/plugin-offcpu.sh again inside a new
# PID namespace, as perf runs in a container (seed 000 profiles inside
# Docker): there the samples' pids and tids are the namespace's while the
# sched_switch fields are the kernel's, and the off-CPU totals must still
# agree with perf sched timehist per thread.
set -u
. "$(dirname "$0")/plugin-lib.sh"

command -v unshare >/dev/null 2>&1 || unavailable "no unshare (util-linux)"
unshare --pid --fork --mount-proc true >"$T/err" 2>&1 ||
	unavailable "cannot make a PID namespace (unshare --pid --fork --mount-proc, as root): $(head -1 "$T/err")"
FK_OUTER_PIDNS=$(readlink /proc/self/ns/pid) \
	unshare --pid --fork --mount-proc "$(dirname "$0")/plugin-offcpu.sh"
