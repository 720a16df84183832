#!/bin/bash
# plugin-states-ns.sh - test/scripts/plugin-states.sh again inside a new
# PID namespace, as perf runs in a container (seed 000 profiles inside
# Docker, and a checker's `unshare --pid`): there the samples' pids and
# tids are the namespace's while the sched tracepoints' fields are the
# kernel's.  Every thread's row must be one perf named, under its own pid,
# with the times a replay of perf's text gives (perf sched timehist loses
# the time runnable there), and the threads outside the namespace are
# left out and said; offcpu and runq per thread agree with the states.
set -u
. "$(dirname "$0")/plugin-lib.sh"

run_in_new_pid_namespace "$(dirname "$0")/plugin-states.sh"
