/*
 * stacks.h - the plugin's folded stacks as numbers while perf runs: each
 * sample's call chain becomes a sequence of frame name ids, counted under
 * (process name, sequence), and the folded text is made once per
 * distinct stack, at the end.
 *
 *	struct stacks *sk = stacks_new(&names, frames, 127);
 *	...per sample, after frame_cache_note_comm():
 *	uint32_t proc = stacks_proc(sk, collapser_table(pr->c), "cc1", 3, false);
 *	uint32_t stack = stacks_chain(sk, sample, ctx, proc);
 *	stacks_add(sk, proc, stack, fk_count_from_u64(period));
 *	...at the end, before reading the tables:
 *	stacks_flush(sk);        // "cc1;main;parse 12000" into the table
 *	stacks_free(sk);
 *
 * A stack is a process and the ids of its frames' ";NAME"s
 * (frame_name_append(), as collapse.h names them without an inliner),
 * counted in one open-addressing table that owns the id sequences; the
 * empty sequence is a dropped chain's.  The text of a stack is exactly
 * collapser_stack_key()'s for the same frames, so the tables hold what
 * collapser_add() would have put there.
 *
 * A sample costs, by what is known of its raw chain: one comparison when
 * it repeats the chain counted before on its CPU (a thread in a loop);
 * one hash of its entries and one lookup when the chain was counted
 * before (chains of frames named before, of a stack counted before, are
 * kept in a chain table); else perf's walk of it (frames.h), each
 * frame's name id from the frame cache's slot (frame_cache_word(): the
 * first stacks made on a cache keeps the name ids of processes not named
 * "java" there, others in arrays by frame id), a new frame named once per
 * (DSO, symbol) (most addresses of a recording are offsets in a few
 * thousand functions), and one lookup of (process, name ids).  A frame
 * the frame cache does not keep (a thread without a pid; a user address
 * in no file's map, which a library may be mapped at later) is named at
 * each use, and a chain with one is never remembered.  The frame cache
 * may be lean (frame_cache_set_lean()).
 *
 * Memory grows with the distinct stacks, frames, names and chains,
 * never with the samples; the chain table stops growing at
 * CHAINS_BYTES (later new chains are walked every time).  stacks_flush()
 * adds the texts, as large as the output.  Not thread-safe: one thread
 * calls these (stacks_flush() runs its helper thread itself).
 */
#ifndef FOLDKIT_PLUGIN_STACKS_H
#define FOLDKIT_PLUGIN_STACKS_H

#include "collapse/framename.h"
#include "core/foldtable.h"
#include "frames.h"

#include <perf/perf_dlfilter.h>
#include <stdint.h>

struct stacks;

/* names and fc must outlive the result. */
struct stacks *stacks_new(const struct frame_name_opts *names, struct frame_cache *fc,
			  unsigned max_stack);
void stacks_free(struct stacks *sk);

/*
 * The id of a process name (collapser_stack_key()'s text before the
 * frames: "comm", "comm-pid", "comm-pid/tid") whose stacks go to table t.
 * A name "java" tidies Java names (frame_name_append()).
 */
uint32_t stacks_proc(struct stacks *sk, struct fold_table *t, const char *name, size_t len,
		     bool java);

/*
 * The stack of a sample's call chain for process proc, made when new
 * (frame_cache_note_comm() must have been told of the sample's thread);
 * valid as long as sk.
 */
uint32_t stacks_chain(struct stacks *sk, const struct perf_dlfilter_sample *sample,
		      void *ctx, uint32_t proc);

/* Adds n to the count of a stack of proc. */
void stacks_add(struct stacks *sk, uint32_t proc, uint32_t stack, fk_count n);

/*
 * stacks_add(sk, proc, stacks_chain(sk, sample, ctx, proc), n), but a
 * chain counted before in the same space and process costs one lookup,
 * and one comparison when it repeats the one counted before on the
 * sample's CPU (when its stack is sure to be the same: every frame
 * cached).  Returns the stack (as stacks_chain()).
 */
uint32_t stacks_sample(struct stacks *sk, const struct perf_dlfilter_sample *sample, void *ctx,
		       uint32_t proc, fk_count n);

/*
 * Starts loading what stacks_sample() will look up for sample: called
 * when perf gives it, so that the load overlaps the work before
 * stacks_sample() (naming its process).
 */
void stacks_prefetch(struct stacks *sk, const struct perf_dlfilter_sample *sample);

/*
 * The count of a sample's chain for process proc, found as stacks_sample()
 * finds it, to add to later with stacks_add_at() (off-CPU: when the wait
 * ends); until something is added to it, stacks_flush() writes nothing.
 * Valid until stacks_flush().
 */
uint32_t stacks_slot(struct stacks *sk, const struct perf_dlfilter_sample *sample, void *ctx,
		     uint32_t proc);
void stacks_add_at(struct stacks *sk, uint32_t slot, fk_count n);

/*
 * Adds every count to its process's table, under its folded text, and
 * forgets them (a second call adds nothing).  The entries keep texts sk
 * owns (fold_table_add2_ref()): read the tables before stacks_free().
 * With two threads (the default: stacks_set_threads()), a second one
 * makes the texts of half the stacks meanwhile, joined before this
 * returns; the tables get the same adds in the same order as with one
 * (and with one if the thread cannot be made).
 */
void stacks_flush(struct stacks *sk);

/* The threads stacks_flush() may use: 1, or 2 (the default). */
void stacks_set_threads(struct stacks *sk, unsigned n);

/*
 * The folded text of a stack of proc into key (replacing what it held).
 * Stacks are numbered from 0 upwards, with gaps (the numbers are below
 * the memory the stacks take, in 16-byte units): an array by stack
 * number grows with the distinct stacks.
 */
void stacks_key(struct stacks *sk, uint32_t proc, uint32_t stack, GString *key);

/*
 * A stack as kept, what its folded text is made of: the process name,
 * then each name id's text (";NAME", or ";A;B" for an inlined chain),
 * root first, the root's ';' dropped when the process name is empty (and
 * a '#' starting it made '_').  Valid until the next stacks_*() call but
 * for stacks_view() and stacks_name().
 */
struct stack_view {
	uint32_t proc;			/* stacks_proc()'s id */
	struct fk_str proc_name;	/* its text, e.g. "comm-pid" */
	const uint32_t *names;		/* the frames' name ids, leaf first */
	uint32_t n;
};
void stacks_view(struct stacks *sk, uint32_t stack, struct stack_view *v);

/* The text of name id name: ";NAME" (see stack_view). */
struct fk_str stacks_name(struct stacks *sk, uint32_t name);

#endif
