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

TEST=$(dirname "$0")/plugin-states.sh
export FK_OUTER_PIDNS
FK_OUTER_PIDNS=$(readlink /proc/self/ns/pid)
command -v unshare >/dev/null 2>&1 || unavailable "no unshare (util-linux)"
# unshare --mount-proc makes / private first, which fails where / is not a
# mount point (a chroot, such as a build root): there, /proc is made
# private instead, and a proc of the new namespace mounted over it
if unshare --pid --fork --mount-proc true >"$T/err" 2>&1; then
	unshare --pid --fork --mount-proc "$TEST"
elif unshare --pid --fork --mount --propagation unchanged \
	sh -c 'mount --make-rprivate /proc && mount -t proc proc /proc' >"$T/err2" 2>&1; then
	unshare --pid --fork --mount --propagation unchanged \
		sh -c 'mount --make-rprivate /proc && mount -t proc proc /proc && exec "$0"' "$TEST"
else
	unavailable "cannot make a PID namespace with its own /proc (unshare, as root): $(head -1 "$T/err"); $(head -1 "$T/err2")"
fi
