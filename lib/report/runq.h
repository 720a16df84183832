/*
 * runq.h - where threads waited for a CPU, from a run-queue profile
 * (foldkit.so's runq mode, fp-record's runq/): folded stacks whose root
 * frame is the thread's name, each weighted by the time its thread was
 * runnable there (preempted, or woken and not yet running), in us.
 *
 *	struct runq *q = runq_new(fc);
 *	runq_add(q, "runq/server.main.folded", "server.main",
 *		 "worker-1;main;take;pthread_mutex_lock;futex_wait;schedule", 55,
 *		 fk_count_from_u64(300));
 *	runq_set_window(q, "server.main", fk_count_from_u64(2000000));
 *	runq_finish(q);
 *	// worker-1 of server.main: 300 us runnable, 0.015% of its 2 s
 *	// window, all of it after a lock wait's wake-up (a FRAME_LOCK_WAIT
 *	// frame in the stack: the lock was free, the CPU was not)
 *	runq_write_markdown(out, q, "runq", "us", 15);
 *	runq_free(q);
 *
 * Threads are rows per (process, thread name): threads of one name in one
 * process are one row, as in fold-report's threads table.  A process's
 * window (the recording's, fp-record's runq/index.tsv says it) gives each
 * of its threads its share; a thread that lived for part of the window
 * gets a smaller share than its life's, never a larger one.  Without a
 * window the share is unknown ("-", null), never 0.  Rows are heaviest
 * first, ties by process and thread bytewise; names are copied, and
 * escaped by the writers (Markdown code spans, JSON strings).
 */
#ifndef FOLDKIT_REPORT_RUNQ_H
#define FOLDKIT_REPORT_RUNQ_H

#include "core/count.h"
#include "report/classify.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A thread's time runnable. */
struct runq_thread {
	char *file;		/* the profile it came from (a path) */
	char *process;		/* its process (a split file's name), or NULL */
	char *thread;		/* the root frame */
	fk_count count;		/* runnable */
	fk_count after_lock;	/* of it, in stacks waiting on a lock: runnable
				   once woken with the lock free */
	fk_count window;	/* its process's window; 0: unknown */
	char *where;		/* its heaviest stack, without the root */
	fk_count where_count;
};

struct runq;

/* fc must outlive q.  Free with runq_free(). */
struct runq *runq_new(const struct frame_classifier *fc);
void runq_free(struct runq *q);

/*
 * One folded line of the profile file (process: its name, NULL for a
 * profile that is not a split directory's).
 */
void runq_add(struct runq *q, const char *file, const char *process, const char *stack,
	      size_t len, fk_count count);

/* A process's window, in the profile's unit (>0). */
void runq_set_window(struct runq *q, const char *process, fk_count window);

/* Sorts the threads and stacks; call once, after the last add. */
void runq_finish(struct runq *q);

/* The threads, heaviest first (after runq_finish()). */
size_t runq_nthreads(const struct runq *q);
const struct runq_thread *runq_thread_at(const struct runq *q, size_t i);

/*
 * The "## Run queue" section: each thread's time runnable, its share of
 * the window, the part after lock waits and where it waited most; then the
 * heaviest stacks.  source names the profile read.
 */
void runq_write_markdown(FILE *out, const struct runq *q, const char *source,
			 const char *unit, unsigned top);

/*
 * The same as a JSON member, `"run_queue": {...}` (after a ",\n"),
 * indented by two spaces, for the report's top-level object.
 */
void runq_write_json(FILE *out, const struct runq *q, const char *source, const char *unit,
		     unsigned top);

#endif
