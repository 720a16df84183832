/*
 * stackcache.h - records to the stack table through a cache of their raw
 * bytes: the loop that DTrace, SystemTap, bpftrace and gperftools
 * collapsers share, so that they differ only in how they find a record and
 * name its frames.
 *
 *	static int name(void *ctx, const char *raw, size_t len, GString *stack)
 *	{
 *		...append "root;...;leaf" to stack...
 *		return STACK_NAMED;
 *	}
 *
 *	struct stack_cache *sc = stack_cache_new(table);
 *	if (stack_cache_add(sc, rec.raw, rec.len, rec.count, name, ctx) < 0)
 *		skip_log_add(skips, file, line, "count without a stack");
 *	stack_cache_free(sc);           // the table stays the caller's
 *
 * Profilers print the same stack again and again (every DTrace record of
 * a kernel idle loop, every gperftools sample of a hot loop): a record
 * whose raw bytes were seen before goes straight to its table entry with
 * one hash and one compare; only a new one is named.  The cache holds
 * each distinct raw record once and stops growing at 256 MiB (after which
 * new records are named every time: slower, never wrong), so memory grows
 * with the distinct stacks, never with the input.
 */
#ifndef FOLDKIT_STACKCACHE_H
#define FOLDKIT_STACKCACHE_H

#include "core/foldtable.h"

#include <glib.h>

enum stack_name_result {
	STACK_EMPTY = -1,	/* no frames: nothing to count it under */
	STACK_NAMED = 0,	/* named; the same raw bytes name the same */
	STACK_NAMED_ONCE = 1,	/* named, but do not cache it (the namer
				   counted skipped lines, which must be
				   counted again for each occurrence) */
};

/*
 * Appends the folded stack ("root;...;leaf", never empty when it returns
 * STACK_NAMED or STACK_NAMED_ONCE) for raw[0..len) to stack, which is
 * empty on entry.
 */
typedef enum stack_name_result (*stack_name_fn)(void *ctx, const char *raw,
						size_t len, GString *stack);

struct stack_cache;

/* t must outlive the cache; the cache adds to it and owns nothing of it. */
struct stack_cache *stack_cache_new(struct fold_table *t);
void stack_cache_free(struct stack_cache *sc);

/*
 * Adds n to the stack raw[0..len) names (calling name on first sight).
 * Returns 0, or -1 when name found no frames (nothing is added).
 */
int stack_cache_add(struct stack_cache *sc, const void *raw, size_t len,
		    fk_count n, stack_name_fn name, void *ctx);

#endif
