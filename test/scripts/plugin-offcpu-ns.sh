#!/bin/bash
# plugin-offcpu-ns.sh - test/scripts/plugin-offcpu.sh again inside a new
# PID namespace, as perf runs in a container (seed 000 profiles inside
# Docker): there the samples' pids and tids are the namespace's while the
# sched_switch fields are the kernel's, and the off-CPU totals must still
# agree with perf sched timehist per thread.
set -u
. "$(dirname "$0")/plugin-lib.sh"

run_in_new_pid_namespace "$(dirname "$0")/plugin-offcpu.sh"
