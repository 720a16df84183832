/*
 * exports.h - the plugin's speedscope and pprof outputs, written beside
 * (or instead of) the folded stacks, through lib/export/.
 *
 *	struct exports *x = exports_new(&eo);
 *	...per sample, with its folded key and resolved frames:
 *	exports_sample(x, ds, attr, comm, key, len, frames, n, weight);
 *	...off-CPU: weight 0 when a wait begins, then, when it is counted:
 *	exports_credit(x, tid, since_ns, ns);      // an offcpu_credit_fn
 *	...at the end:
 *	if (exports_write(x, name_of, selected, data, &nfiles, &err) < 0) ...
 *	exports_free(x);
 *
 * speedscope: one "sampled" profile per thread, named "COMM PID/TID"
 * (the thread's latest name), ordered by pid and tid, samples in the
 * order perf delivers them (time order), each weighted by its period:
 * nanoseconds for cpu-clock and task-clock, microseconds (with
 * nanosecond decimals) for off-CPU waits, each placed when the wait
 * began; other events' periods have no unit.  Frames are the folded
 * frames below the process frame; with inline context, a name's
 * ":FILE:LINE" goes to the frame's file and line.  speedscope=FILE holds
 * every thread; with split=DIR each process also gets
 * DIR/<comm>-<pid>.speedscope.json beside its folded file.
 *
 * pprof: a location per (binary, address), its mapping named after the
 * binary with its build id, its lines the names the folded output uses
 * (several for an inlined chain, innermost first; file and line with
 * context; a caller's, whose address is a return address, where the call
 * was made, address - 1, and then a location of its own beside the
 * address's as a sample's leaf); samples labelled comm, pid and tid; one
 * sample type: cpu
 * nanoseconds, off_cpu nanoseconds, or the event's count.
 *
 * Memory: speedscope keeps each sample (its stack handle and weight,
 * about 20 bytes); pprof keeps each distinct (stack, thread).
 */
#ifndef FOLDKIT_PLUGIN_EXPORTS_H
#define FOLDKIT_PLUGIN_EXPORTS_H

#include "collapse/collapse.h"
#include "core/count.h"
#include "frames.h"
#include "stacks.h"

#include <glib.h>
#include <perf/perf_dlfilter.h>
#include <stdbool.h>
#include <stdint.h>

struct export_opts {
	const char *speedscope;		/* FILE, or NULL */
	bool speedscope_split;		/* a file per process in split */
	const char *split;		/* DIR, or NULL */
	const char *pprof;		/* FILE, or NULL */
	bool pid, tid;			/* the folded keys' process frame */
	bool context;			/* names end in ":FILE:LINE" */
	bool offcpu;
	const struct frame_name_opts *names;
	struct inline_resolver *inliner;	/* or NULL */
	struct frame_cache *frames;		/* for build ids */
};

struct exports;

/* NULL when no export is asked for; o's pointers must outlive it. */
struct exports *exports_new(const struct export_opts *o);
void exports_free(struct exports *x);

/*
 * A sample of thread ds->tid of process ds->pid named comm, folded as
 * key[0..len) (the process frame first) from frames[0..n) (leaf first),
 * with weight (off-CPU: 0, and exports_credit() weighs it later).  id,
 * when not NULL, is the same for every sample with this key and different
 * for every other key (its fold_table entry): a cheaper lookup.
 */
void exports_sample(struct exports *x, const struct perf_dlfilter_sample *ds,
		    const struct perf_event_attr *attr, const char *comm,
		    const void *id, const char *key, size_t len,
		    const struct perf_frame *frames, size_t n, fk_count weight);

/*
 * Whether the exports need of a sample only its folded key: speedscope
 * without inline context, no pprof (which needs each frame's address).
 */
bool exports_keys_only(const struct exports *x);

/*
 * exports_sample() when exports_keys_only(), for a sample counted as
 * stack number stack of sk (stacks_sample()): its frames are looked up
 * by their name ids, each name once per output, and no text is made;
 * what is written is what exports_sample() with the stack's key writes.
 */
void exports_sample_stack(struct exports *x, const struct perf_dlfilter_sample *ds,
			  const struct perf_event_attr *attr, const char *comm,
			  struct stacks *sk, uint32_t stack, fk_count weight);

/* The wait thread tid began at since lasted ns (see offcpu_on_credit()). */
void exports_credit(void *x, int tid, uint64_t since, uint64_t ns);

/*
 * Writes every file asked for, each whole or not at all (core/outfile.h).
 * A per-process speedscope file is named after name_of(data, pid) when it
 * gives a name (the name of the process's folded file: profiles_name()),
 * else after its main thread's latest sampled name.  *nfiles gets the
 * number of per-process speedscope files.  selected(data, pid), when
 * not NULL, says which processes every output holds (comm=, known only at
 * the end): the others' threads, files and samples are left out, and so
 * are the frames and locations only they had.  Returns 0, or -1 with *err
 * set (the first failure; the other files are still written).
 */
int exports_write(struct exports *x, const char *(*name_of)(void *data, int pid),
		  bool (*selected)(void *data, int pid), void *data, size_t *nfiles,
		  GError **err);

/*
 * Starts exports_write() on a second thread, when it can (speedscope=
 * alone, no split= files): the caller writes the folded output
 * meanwhile, then calls exports_write(), which waits for it and returns
 * what it gave (its arguments then unused).  name_of() and selected()
 * must then be safe to call from another thread (they only read).  false
 * when not started: exports_write() writes.
 */
bool exports_write_begin(struct exports *x, const char *(*name_of)(void *data, int pid),
			 bool (*selected)(void *data, int pid), void *data);

#endif
