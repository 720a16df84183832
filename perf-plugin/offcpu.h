/*
 * offcpu.h - off-CPU time from sched:sched_switch samples: each stack a
 * thread was switched out with is weighted by the time until that thread
 * was next switched in.
 *
 *	struct offcpu *o = offcpu_new(OFFCPU_S | OFFCPU_D, 0, NULL, &err);
 *	...per sched:sched_switch sample, in time order:
 *	struct sched_switch sw;
 *	if (!offcpu_decode(o, raw, raw_size, &sw)) ...count a skip...
 *	offcpu_switch_in(o, sw.next_pid, time);        // credits its wait
 *	offcpu_switch_unseen(o, sw.prev_pid, cpu, time);
 *	if (offcpu_wanted(o, &sw))
 *		offcpu_switch_out(o, sw.prev_pid, time, table, key, len, &pr->samples);
 *	...at the end:
 *	offcpu_finish(o, &tail_threads, &tail_ns);
 *	offcpu_free(o);
 *
 * The tracepoint's fields are found by name in its format, parsed with
 * libtraceevent (from format_path, else tracefs, mounting it if need be),
 * so no field offset is assumed.  Weights are added to the table in
 * microseconds with nanosecond fractions; the writer rounds each stack.
 *
 * perf hands a record over late now and then (a CPU's buffer drained after
 * a round that had later times: perf's "out of order events"): a switch
 * of a thread older than one of its switches already seen is left out
 * (offcpu_late() counts them), so that no two waits of a thread overlap
 * and no thread's waits add up to more than the recording.
 *
 * With sched_waking (or sched_wakeup_new) samples in the recording
 * (offcpu_wake()), a wait of a thread asleep (S, D, ...) is cut at its
 * first wake-up: the time up to it is the off-CPU time, the time after it,
 * until the switch-in, is time runnable, waiting for a CPU, and counted
 * only by a run-queue profile (offcpu_set_runq()), with the whole of each
 * wait that began with a preemption (prev_state R or R+).  A wake-up of a
 * thread still on its CPU since its latest switch-in (it had set itself
 * asleep; the waker's sched_waking came before its switch-out) cuts the
 * sleep it then switches out into at once: all of it is runnable.
 * Without wake-ups a wait is off-CPU up to the switch-in.
 *
 * prev_state is the kernel's report: 0 running (preempted, "R" or "R+"),
 * bit 0 "S" (sleeping), bit 1 "D" (uninterruptible), higher bits stopped,
 * traced, dead, parked, idle.  A dead task ("X", "Z") never comes back
 * and is never waited for.
 */
#ifndef FOLDKIT_PLUGIN_OFFCPU_H
#define FOLDKIT_PLUGIN_OFFCPU_H

#include "core/foldtable.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

enum {
	OFFCPU_R = 1 << 0,	/* preempted while runnable */
	OFFCPU_S = 1 << 1,	/* interruptible sleep */
	OFFCPU_D = 1 << 2,	/* uninterruptible sleep */
	OFFCPU_OTHER = 1 << 3,	/* stopped, traced, parked, idle */
	OFFCPU_ALL = OFFCPU_R | OFFCPU_S | OFFCPU_D | OFFCPU_OTHER,
};

struct sched_switch {
	int prev_pid, next_pid;
	uint64_t prev_state;
};

struct offcpu;

/*
 * states is a set of OFFCPU_* bits; min_ns drops shorter waits.
 * format_path: a sched_switch format file, or NULL for the running
 * kernel's.  NULL with *err set if the format cannot be read or lacks a
 * field.
 */
struct offcpu *offcpu_new(unsigned states, uint64_t min_ns,
			  const char *format_path, GError **err);
void offcpu_free(struct offcpu *o);

/* Parses "S", "D", "R", "all" and comma- or '|'-separated lists. */
bool offcpu_parse_states(const char *s, unsigned *states);

/* Reads the fields from a raw tracepoint record; false if it is short. */
bool offcpu_decode(const struct offcpu *o, const void *raw, uint32_t size,
		   struct sched_switch *sw);

/* Whether prev's state is one being counted. */
bool offcpu_wanted(const struct offcpu *o, const struct sched_switch *sw);

/*
 * Notes a time seen (the latest ends the waits still pending at the
 * end; the first and the latest are offcpu_span()'s).
 */
void offcpu_tick(struct offcpu *o, uint64_t time);

/*
 * tid runs again at time: its wait, if one was pending and at least
 * min_ns long, is added to the stack it left with.
 */
void offcpu_switch_in(struct offcpu *o, int tid, uint64_t time);

/*
 * tid leaves cpu at time: if it still has a wait pending, its switch-in
 * was not recorded (the kernel does not emit the tracepoint for many
 * switches from the idle task).  The wait ends at the thread's first
 * switch-in since it began that offcpu_on_unseen()'s fn finds; failing
 * that, like perf sched timehist, at the CPU's previous sched_switch,
 * often the thread's own switch-out.  Call it for every sched_switch,
 * before offcpu_switch_out() or offcpu_forget().
 */
void offcpu_switch_unseen(struct offcpu *o, int tid, int cpu, uint64_t time);

/*
 * Where a wait's switch-in the tracepoint lacks is found:
 * fn(data, perf_tid, from, to, &time) sets the first time in [from, to]
 * thread perf_tid (as offcpu_switch_out() was given it) came back on a
 * CPU, or returns false (perfdata_switch_in(): perf record
 * --switch-events' records).  Asked by offcpu_switch_unseen(); by
 * offcpu_switch_in(), for an earlier switch-in (the tracepoint also
 * misses a few switch-outs); and by offcpu_finish(), for the threads
 * that came back and never left again.
 */
typedef bool (*offcpu_switch_in_fn)(void *data, int perf_tid, uint64_t from, uint64_t to,
				    uint64_t *time);
void offcpu_on_unseen(struct offcpu *o, offcpu_switch_in_fn fn, void *data);

/*
 * tid leaves the CPU at time with stack key[0..len) of table t; *counter
 * is incremented when the wait is counted (for the per-process index).
 * perf_tid is what perf calls the thread (the sample's tid: in a PID
 * namespace not the kernel's tid, which the switches give).
 * Any earlier pending wait of tid is forgotten (it ran in between).
 */
void offcpu_switch_out(struct offcpu *o, int tid, int perf_tid, uint64_t time,
		       struct fold_table *t, const char *key, size_t len,
		       uint64_t *counter);

/*
 * The same for a stack the caller counts: when the wait is counted,
 * add(data, id, weight) is called in place of adding to a table.
 */
typedef void offcpu_add_fn(void *data, uint64_t id, fk_count weight);
void offcpu_switch_out_id(struct offcpu *o, int tid, int perf_tid, uint64_t time,
			  offcpu_add_fn *add, void *data, uint64_t id, uint64_t *counter);

/*
 * The run-queue profile: count only the time runnable (each preemption's
 * wait, and each sleep's from its wake-up on); give states OFFCPU_ALL.
 */
void offcpu_set_runq(struct offcpu *o, bool runq);

/* Whether a switch is a preemption (prev_state R or R+: still runnable). */
bool offcpu_is_preempted(const struct sched_switch *sw);

/* The wait tid just began (offcpu_switch_out()) is a preemption. */
void offcpu_preempted(struct offcpu *o, int tid);

/*
 * tid is woken at time (sched_waking, sched_wakeup_new: the kernel's
 * tid): its pending sleep, if it has one not yet woken, ends there.
 */
void offcpu_wake(struct offcpu *o, int tid, uint64_t time);

/* Waits cut at a wake-up. */
uint64_t offcpu_woken(const struct offcpu *o);

/* tid left the CPU in a state not counted: forget any pending wait. */
void offcpu_forget(struct offcpu *o, int tid);

/*
 * Counts the threads still off-CPU up to the last time seen (or up to
 * the switch-in offcpu_on_unseen()'s fn gives); returns how many were
 * off-CPU up to the end and *ns their total.
 */
uint64_t offcpu_finish(struct offcpu *o, uint64_t *ns);

/*
 * Calls fn(data, tid, since, ns) for every wait counted, when it is
 * counted: thread tid was off-CPU from since for ns nanoseconds (the
 * speedscope and pprof outputs place and weigh it with this).
 */
typedef void (*offcpu_credit_fn)(void *data, int tid, uint64_t since, uint64_t ns);
void offcpu_on_credit(struct offcpu *o, offcpu_credit_fn fn, void *data);

/*
 * Waits counted, waits shorter than min_ns left out, and waits whose end
 * was taken from the CPU's previous switch.
 */
void offcpu_stats(const struct offcpu *o, uint64_t *counted, uint64_t *short_waits,
		  uint64_t *unseen);

/* Waits whose end offcpu_on_unseen()'s fn gave (not in unseen). */
uint64_t offcpu_recorded(const struct offcpu *o);

/* Switches left out because perf handed them over late (see above). */
uint64_t offcpu_late(const struct offcpu *o);

/*
 * The thread whose counted waits add up to the most, *ns of them (tid
 * the kernel's, perf_tid perf's name of it); false if none was counted.
 * The caller checks it against the recording's length: more would be a
 * wrong number.
 */
bool offcpu_longest(const struct offcpu *o, int *tid, int *perf_tid, uint64_t *ns);

/* The first and the latest time offcpu_tick() was given; false if none. */
bool offcpu_span(const struct offcpu *o, uint64_t *first, uint64_t *last);

#endif
