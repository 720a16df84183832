/*
 * collapse.h - perf samples to folded stacks: the aggregation both
 * fp-collapse and the perf plugin use.
 *
 *	struct collapse_opts o = { .include_pid = true };
 *	struct collapser *c = collapser_new(&o);
 *	while (perf_script_reader_next(r, &sample, &err) > 0)
 *		collapser_add(c, &sample);
 *	fold_table_write(collapser_table(c), stdout, 1, &err);
 *	collapser_free(c);
 *
 * A sample becomes "PROCESS;ROOT;...;LEAF" where PROCESS is the comm with
 * blanks, line breaks and a leading '#' turned to '_' (plus "-PID" with
 * include_pid, "-PID/TID" with include_tid; PID is "?" when perf printed
 * only the thread id), and its weight is the period perf printed, or 1.
 * Frames are named by framename.h.  A sample without comm starts directly
 * with its root frame (a '#' starting it becomes '_', as for a comm).
 *
 * Only one event is aggregated: event_filter, or else the first event seen
 * (mixing, say, cycles and instructions gives a meaningless profile).
 * collapser_event_note() describes what was kept and dropped.
 */
#ifndef FOLDKIT_COLLAPSE_H
#define FOLDKIT_COLLAPSE_H

#include "core/foldtable.h"
#include "collapse/framename.h"
#include "collapse/perfscript.h"

#include <glib.h>
#include <stdbool.h>

/*
 * An optional inline resolver (--inline): given a frame of an ELF DSO,
 * appends its ';'-separated names, outermost first (and ":FILE:LINE" after
 * each with context), and returns true; returns false to fall back to the
 * frame's own symbol.  caller: the frame is not the sample's leaf, so its
 * address is a return address, and the call is the instruction before it
 * (it is looked up at address - 1: the line after a call, or the function
 * after a call that never returns, is not where the call was made).
 */
struct inline_resolver {
	bool (*resolve)(void *self, const struct perf_frame *f, bool context,
			bool caller, GString *out);
	void *self;
	bool context;
};

/*
 * Which of a sample's frames[0..n) (leaf first) holds the sampled address:
 * the first perf did not mark "(inlined)" (those before it are inlined
 * into it).  The frames after it are callers, resolved with caller true;
 * every consumer of the resolver (the collapser, the plugin's exports)
 * asks the same, so that a frame has one name in all of them.
 */
static inline size_t perf_frames_leaf(const struct perf_frame *frames, size_t n)
{
	size_t leaf = 0;

	while (leaf + 1 < n && frames[leaf].inlined)
		leaf++;
	return leaf;
}

struct collapse_opts {
	bool include_pid;
	bool include_tid;
	struct frame_name_opts names;
	bool srcline;			/* raw frame text has source lines
					   (perf_script_opts.srcline) */
	const char *event_filter;	/* NULL: the first event seen */
	struct skip_log *skips;		/* where unreadable frame lines are
					   counted; may be NULL */
	struct inline_resolver *inliner;	/* NULL unless --inline */
};

struct collapser;

/* opts is copied; opts->event_filter and opts->inliner must outlive c. */
struct collapser *collapser_new(const struct collapse_opts *opts);
void collapser_free(struct collapser *c);

/* Folds one sample into the table (or counts it as filtered out). */
void collapser_add(struct collapser *c, const struct perf_sample *s);

/*
 * collapser_add() for a sample whose s->nframes frames (leaf first) are
 * given by ids: frame i is by_id[ids[i]] (s->frames is not used); an id
 * names one frame for the collapser's whole life (the perf plugin: its
 * frame cache's entries), small numbers from 0 (a table is indexed by
 * them).  chain, unless COLLAPSE_NO_CHAIN, is a number the caller gives
 * only to chains of the same ids: it finds them in one lookup.  Each
 * frame is named once, and each distinct chain of names is cached once
 * (by its names' numbers, not their text); a chain seen before, for
 * a process name seen with it, goes straight to its entry without
 * building the key.  Without an inliner a frame's name is its own; with
 * one, a chain is named as collapser_add() names it.  Counts n; returns the
 * stack's entry, or NULL when the sample is left out (another event,
 * nothing to name it by).  Memory grows with the distinct frames and
 * chains (the chain cache is bounded), not with the samples.
 */
#define COLLAPSE_NO_CHAIN UINT32_MAX
struct fold_entry *collapser_add_chain(struct collapser *c, const struct perf_sample *s,
				      uint32_t chain, const uint32_t *ids,
				      const struct perf_frame *by_id, fk_count n);

/*
 * The stack key collapser_add_chain() would count the sample under,
 * without counting it (the perf plugin's off-CPU waits are counted when
 * they end).
 */
void collapser_chain_key(struct collapser *c, const struct perf_sample *s,
			 uint32_t chain, const uint32_t *ids,
			 const struct perf_frame *by_id, GString *key);

/* The table of folded stacks; owned by c. */
struct fold_table *collapser_table(struct collapser *c);

/*
 * NULL when every sample had the kept event; otherwise a one-line note such
 * as "kept event 'cycles' (120 samples); dropped 'instructions' (118
 * samples), use --event-filter to choose".  Free with g_free().
 */
char *collapser_event_note(const struct collapser *c);

/*
 * NULL unless include_pid or include_tid met samples without a process id
 * (perf script prints one number, the thread's, unless -F names pid): then
 * a one-line note saying how many, and the perf script -F that prints it.
 * Their root frames are "COMM-?" as stackcollapse-perf.pl writes them (its
 * output is kept byte for byte); every process of one name is one.  Free
 * with g_free().
 */
char *collapser_pid_note(const struct collapser *c);

/* The stack key of a sample, as collapser_add() would count it (tests). */
void collapser_stack_key(struct collapser *c, const struct perf_sample *s,
			 GString *key);

#endif
