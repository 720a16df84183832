/*
 * offwake.h - off-wake stacks (--dlarg offwake): who woke whom, from
 * sched:sched_switch and sched:sched_waking samples, in bcc offwaketime's
 * folded layout:
 *
 *	wakee;ROOT;...;LEAF;--;WLEAF;...;WROOT;waker COUNT
 *
 * the wakee's name and the stack it blocked in (root first), "--", then
 * the waker's stack at the wake-up (leaf first) and its name, weighted by
 * the wakee's blocked time in microseconds.
 *
 *	struct offwake *w = offwake_new(NULL, 0, &err);
 *	...per sched_switch, in time order (sw decoded by offcpu.h):
 *	offwake_ran(w, sw.next_pid, time);       // back on a CPU
 *	offwake_ran(w, sw.prev_pid, time);       // it was running
 *	if (offcpu_wanted(off, &sw))             // S or D (state=)
 *		offwake_sleep(w, sw.prev_pid, time, table, key, len, &pr->samples);
 *	...per sched_waking:
 *	int tid;
 *	if (offwake_decode(w, raw, size, &tid) && offwake_waiting(w, tid, time))
 *		offwake_woken(w, tid, time, waker_key, waker_len);
 *	...at the end:
 *	offwake_finish(w);
 *	offwake_free(w);
 *
 * The blocked time is the time from the switch-out (asleep, S or D) to the
 * first sched_waking of the thread after it: the run-queue delay between
 * the wake-up and the switch-in is not in it (bcc's offwaketime counts up
 * to the switch-in; the time runnable is not time spent waiting for the
 * waker).  sched_waking is the waker's tracepoint: it fires in the
 * waker's context (its stack is the waker's: a thread's, or an
 * interrupt's over whatever ran), unlike sched_wakeup, which may fire
 * later on the wakee's CPU.
 *
 * A wait no recorded sched_waking ends (the thread ran again without one:
 * its waker was not recorded, or woke it before it had switched out) is
 * left out and counted (offwake_stats()); so is a wait still pending at
 * the end.  Keys are a collapser's (core/collapse.h): frames hold no ';'.
 * Records perf hands over late (a thread's switch older than one already
 * seen) are left out, as offcpu.h does.
 */
#ifndef FOLDKIT_PLUGIN_OFFWAKE_H
#define FOLDKIT_PLUGIN_OFFWAKE_H

#include "core/foldtable.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define OFFWAKE_EVENT "sched:sched_waking"

struct offwake;

/*
 * format_path: a sched_waking format file, or NULL for the running
 * kernel's (tracefs); min_ns drops shorter waits.  NULL with *err set if
 * the format cannot be read or lacks the field "pid".
 */
struct offwake *offwake_new(const char *format_path, uint64_t min_ns, GError **err);
void offwake_free(struct offwake *w);

/* The wakee's tid from a raw sched_waking record; false if it is short. */
bool offwake_decode(const struct offwake *w, const void *raw, uint32_t size, int *tid);

/*
 * tid goes to sleep at time with stack key[0..len) of table t (copied);
 * *counter is incremented when its wait is counted.  Replaces any wait
 * pending for tid.
 */
void offwake_sleep(struct offwake *w, int tid, uint64_t time, struct fold_table *t,
		   const char *key, size_t len, uint64_t *counter);

/* tid is on a CPU at time: a pending wait no waking ended is left out. */
void offwake_ran(struct offwake *w, int tid, uint64_t time);

/*
 * Whether a waking of tid at time ends a wait (so that the caller names
 * the waker's stack only then).
 */
bool offwake_waiting(struct offwake *w, int tid, uint64_t time);

/*
 * tid is woken at time by the waker whose stack key (its collapser's,
 * "name;ROOT;...;LEAF") is waker[0..len): the wait is counted under
 * "wakee key;--;LEAF;...;ROOT;name" (offwake_waiting() must be true).
 */
void offwake_woken(struct offwake *w, int tid, uint64_t time, const char *waker, size_t len);

/* Ends the waits still pending (not counted: no waker); returns how many. */
uint64_t offwake_finish(struct offwake *w);

/*
 * Waits counted; waits left out because the thread ran without a
 * recorded waking, and their time (ns, up to the run); those still
 * pending at the end; those shorter than min_ns; wakings seen; switches
 * left out as late.
 */
struct offwake_stats {
	uint64_t counted, unwoken, unwoken_ns, pending_end, short_waits, wakings, late;
};
void offwake_stats(const struct offwake *w, struct offwake_stats *s);

/*
 * The thread whose counted waits add up to the most, *ns of them; false if
 * none was counted (the caller checks it against the recording).
 */
bool offwake_longest(const struct offwake *w, int *tid, uint64_t *ns);

#endif
