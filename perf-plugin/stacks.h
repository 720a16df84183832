/*
 * stacks.h - the plugin's folded stacks as numbers while perf runs: each
 * sample's call chain becomes a node of a tree of frame names, each
 * sample is counted under (process name, node), and the folded text is
 * made once per distinct stack, at the end.
 *
 *	struct stacks *sk = stacks_new(&names, frames, 127);
 *	...per sample, after frame_cache_note_comm():
 *	uint32_t proc = stacks_proc(sk, collapser_table(pr->c), "cc1", 3);
 *	uint32_t node = stacks_chain(sk, sample, ctx, proc);
 *	stacks_add(sk, proc, node, fk_count_from_u64(period));
 *	...at the end, before reading the tables:
 *	stacks_flush(sk);        // "cc1;main;parse 12000" into the table
 *	stacks_free(sk);
 *
 * A node is a path from the root: its parent and the id of one frame's
 * ";NAME" (frame_name_append(), as collapse.h names it without an
 * inliner); node 0 is the root, an empty stack.  The text of (process,
 * node) is exactly collapser_stack_key()'s for the same frames, so the
 * tables hold what collapser_add() would have put there.
 *
 * A raw chain is read as runs of entries of one context (perf's walk:
 * see frames.h): the kernel's run and the user-space run repeat far more
 * than their combinations do.  Each run is cached by its space and raw
 * addresses (with its frames' name ids and the node it makes from the
 * root), and a run below another by the pair (node above, run), so a
 * chain seen before costs one hash of its addresses and a lookup per run,
 * and a new chain of known runs one more lookup.  A run with addresses in
 * no file's map (never cached by the frame cache: a library may be mapped
 * there later) is checked again at each use: perf is asked whether each
 * such address is still in no file, and a run whose answer changed is
 * made anew.  Runs of threads without a pid are named every time.
 *
 * Memory grows with the distinct runs, names, nodes and (process, node)
 * pairs, never with the samples; the run cache stops growing at
 * STACKS_CACHE_BYTES (later new runs are named every time).
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
 * The node of a sample's call chain, leaf last, for process proc
 * (frame_cache_note_comm() must have been told of the sample's thread).
 */
uint32_t stacks_chain(struct stacks *sk, const struct perf_dlfilter_sample *sample,
		      void *ctx, uint32_t proc);

/* Adds n to the count of (proc, node). */
void stacks_add(struct stacks *sk, uint32_t proc, uint32_t node, fk_count n);

/*
 * stacks_add(sk, proc, stacks_chain(sk, sample, ctx, proc), n), but a
 * chain that repeats the one counted before on the sample's CPU, in the
 * same space and process, costs one comparison (when its node is sure to
 * be the same: every run cached, none with an address in no file).
 */
void stacks_sample(struct stacks *sk, const struct perf_dlfilter_sample *sample, void *ctx,
		   uint32_t proc, fk_count n);

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
 */
void stacks_flush(struct stacks *sk);

/* The folded text of (proc, node) into key (replacing what it held). */
void stacks_key(struct stacks *sk, uint32_t proc, uint32_t node, GString *key);

#endif
