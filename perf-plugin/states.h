/*
 * states.h - each thread's time taken apart by scheduler state (--dlarg
 * states): on a CPU, runnable (woken or preempted, waiting for a CPU),
 * sleeping (S) and blocked (D), from sched:sched_switch,
 * sched:sched_waking and sched:sched_wakeup_new samples.
 *
 *	struct states *s = states_new(NULL, &err);
 *	...per sample, in the order perf hands them over:
 *	switch (states_kind(s, event_name)) {
 *	case STATES_SWITCH:
 *		states_switch(s, raw, size, cpu, time, sample_pid, sample_tid);
 *		break;
 *	case STATES_WAKING:
 *	case STATES_WAKEUP_NEW:
 *		states_wake(s, kind, raw, size, time);
 *		break;
 *	}
 *	...at the end:
 *	states_finish(s, first_sample_time, last_sample_time);
 *	states_write(s, stdout, "<stdout>", pids, &err);
 *	states_free(s);
 *
 * The model, per thread (the kernel's thread id, as the tracepoints give
 * it), as perf sched timehist accounts it: a switch-out ends a run and
 * begins runnable time (prev_state R, or R+ when preempted), sleeping
 * (S, and the rarer T, t, P, I) or blocked (D); the thread's first
 * sched_waking (or sched_wakeup_new) after it ends the sleep and begins
 * runnable time; its switch-in ends that and begins a run.  A switch-out
 * whose switch-in was not recorded ends the wait, as timehist does, at
 * the CPU's previous sched_switch.  A wait without a recorded wake-up is
 * sleeping (or blocked) up to the switch-in, as timehist's wait time
 * without a sch delay.  (When the CPU's previous switch is older than the
 * thread's last change, timehist counts the run from that switch and
 * drops the wait: here the run begins at the change, so that no two
 * states overlap.)
 *
 * Every thread seen covers the window (the recording's first sample to
 * its last): before its first event the thread was on a CPU when that is
 * a switch-out, runnable when it is a switch-in, sleeping when it is a
 * wake-up; a thread made in the window (sched_wakeup_new) begins there,
 * one that exits (prev_state X or Z) ends there.  So a thread's four
 * states add up to the window, or to its life in it.
 *
 * In a PID namespace (perf run in a container) the tracepoints' ids are
 * the kernel's, the samples' those of the namespace, 0 for a thread
 * outside it.  Threads are still keyed by the kernel's tid; a row names
 * a thread by the ids its switch-out samples gave.  A thread no sample
 * named has no ids in perf's namespace: it is left out of the table and
 * counted (states_outside(): its samples had pid 0, so it runs outside
 * the namespace; states_unplaced(): it never switched out with a pid).
 * A recording is taken to be a namespace's as soon as one switch-out's
 * sample names its thread otherwise than the kernel (outside one, every
 * sample's tid is the kernel's, -1 for a thread exiting).
 *
 * Records perf hands over late (a thread's event older than one already
 * seen) are left out and counted (states_late()), as offcpu.h does.
 * Memory grows with the threads seen.
 */
#ifndef FOLDKIT_PLUGIN_STATES_H
#define FOLDKIT_PLUGIN_STATES_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum states_kind {
	STATES_OTHER,		/* not an event states reads */
	STATES_SWITCH,		/* sched:sched_switch */
	STATES_WAKING,		/* sched:sched_waking */
	STATES_WAKEUP_NEW,	/* sched:sched_wakeup_new */
};

/* The states, in the order of the TSV's columns. */
enum {
	STATE_ON_CPU,
	STATE_RUNNABLE,
	STATE_SLEEPING,
	STATE_BLOCKED,
	STATES_N,
};

/* The TSV's header line, with its newline. */
#define STATES_HEADER "pid\ttid\tcomm\ton_cpu_us\trunnable_us\tsleeping_us\tblocked_us\n"

struct states;

/*
 * format_dir: a directory holding sched_switch/format,
 * sched_waking/format and sched_wakeup_new/format (tracefs's
 * events/sched), or NULL for the running kernel's.  NULL with *err set
 * if a format cannot be read or lacks a field.
 */
struct states *states_new(const char *format_dir, GError **err);
void states_free(struct states *s);

/* Which of the events an event name is. */
enum states_kind states_kind(const char *event);

/*
 * A sched_switch sample at time on cpu; pid and tid are the sample's
 * (perf's names of the thread switched out, which differ from the
 * kernel's in a PID namespace).  false if the record is too short (then
 * nothing changes).
 */
bool states_switch(struct states *s, const void *raw, uint32_t size, int cpu, uint64_t time,
		   int pid, int tid);

/* A sched_waking or sched_wakeup_new sample; false if too short. */
bool states_wake(struct states *s, enum states_kind kind, const void *raw, uint32_t size,
		 uint64_t time);

/*
 * The woken thread (the kernel's tid) of a sched_waking or
 * sched_wakeup_new record; false if the record is too short.  (The
 * off-CPU profiles cut their waits there: offcpu_wake().)
 */
bool states_wakee(const struct states *s, enum states_kind kind, const void *raw, uint32_t size,
		  int *tid);

/*
 * The process of a thread (by the kernel's tid) that never switched out,
 * so no sample named it: fn(data, tid) gives its pid, or -1.
 */
typedef int states_pid_fn(void *data, int tid);
void states_on_pid(struct states *s, states_pid_fn *fn, void *data);

/*
 * Closes every thread's time at last and opens it at first (the window:
 * the recording's first and last sample).  Call once, before writing.
 */
void states_finish(struct states *s, uint64_t first, uint64_t last);

/*
 * Writes the TSV: the header, then a line per thread seen, by pid then
 * tid, times in microseconds (each thread's rounded so that they add up
 * to its total rounded); comm as core/textesc.h escapes it
 * (FK_ESC_BACKSLASH).  pids (a set of GINT_TO_POINTER(pid)), if not NULL,
 * keeps those processes only.  The idle tasks (tid 0) are left out.
 * name is what a write error calls out.  Returns the lines written
 * (without the header), or -1 with *err set.
 */
long states_write(struct states *s, FILE *out, const char *name, GHashTable *pids,
		  GError **err);

/* Events left out because perf handed them over late. */
uint64_t states_late(const struct states *s);

/* Threads whose process is unknown (written with pid -1). */
uint64_t states_unknown_pid(const struct states *s);

/*
 * In a PID namespace, threads left out of the table: those outside the
 * namespace, and those inside it no switch-out sample named.  (Counted
 * by states_write(), of the threads pids keeps.)
 */
uint64_t states_outside(const struct states *s);
uint64_t states_unplaced(const struct states *s);

/*
 * The thread whose time adds up to the most, *ns of it; false if none.
 * *tid is perf's id of it, or the kernel's where perf has none (then
 * *perf_id is false: a thread left out in a PID namespace).  More than
 * the window would be a wrong number: the caller refuses it.
 */
bool states_longest(const struct states *s, int *tid, bool *perf_id, uint64_t *ns);

#endif
