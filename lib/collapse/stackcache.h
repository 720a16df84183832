/*
 * stackcache.h - frames named once, records counted with two lookups: the
 * loop that the DTrace, SystemTap and bpftrace collapsers share, so that
 * they differ only in how they find a record and name a frame.
 *
 *	struct stack_cache *sc = stack_cache_new(table);
 *	...for each record the parser finds, leaf line first:
 *	stack_cache_add_record(sc, scratch, callers_text, callers_len,
 *			       name_callers, ctx, leaf_line, leaf_len,
 *			       &dtrace_frames, count);
 *	stack_cache_free(sc);                  // the table stays the caller's
 *
 * These profilers print aggregations: every record is a distinct key, but
 * keys differ by the sampled address while the callers' return addresses
 * repeat, so a record is a caller chain seen before and one leaf.  Three
 * caches, keyed by text, make that cheap: frame text -> name (by the part
 * of the text that names it, so a leaf at another offset is the same
 * frame), the callers' text -> their names, and the pair of those two
 * cached names -> the table entry.  Each stops growing at 64 MiB (after
 * which new entries are named every time: slower, never wrong), so memory
 * grows with the distinct frames and stacks, never with the input.
 */
#ifndef FOLDKIT_STACKCACHE_H
#define FOLDKIT_STACKCACHE_H

#include "core/foldtable.h"
#include "core/str.h"

#include <glib.h>

/*
 * How a profiler's frame lines are named: key gives the part of the text
 * s[0..n) that the name depends on (dropping offsets and addresses, which
 * vary between records of one function); name appends the name of such a
 * part (never empty) to out.  A frame's name is name(key(s)).
 */
struct stack_frame_rules {
	struct fk_str (*key)(const char *s, size_t n);
	void (*name)(GString *out, const char *s, size_t n);
};

struct stack_cache;

/* t must outlive the cache; the cache adds to it and owns nothing of it. */
struct stack_cache *stack_cache_new(struct fold_table *t);
void stack_cache_free(struct stack_cache *sc);

/* Appends the name of frame line s[0..n) to out, naming it once. */
void stack_cache_frame(struct stack_cache *sc, GString *out, const char *s,
		       size_t n, const struct stack_frame_rules *rules);

/* Appends the names of a record's callers, given their text, to out. */
typedef void (*stack_callers_fn)(void *ctx, const char *text, size_t len,
				 GString *out);

/*
 * Adds n to the stack "CALLERS;LEAF": the callers' names by their text
 * callers[0..clen) (clen may be 0; named with name_callers on first sight),
 * the leaf's by its frame line through rules.  stack is scratch.  A stack
 * that would start with '#', which folded readers take for a comment,
 * starts with '_' instead.
 */
void stack_cache_add_record(struct stack_cache *sc, GString *stack,
			    const char *callers, size_t clen,
			    stack_callers_fn name_callers, void *ctx,
			    const char *leaf, size_t llen,
			    const struct stack_frame_rules *rules, fk_count n);

/*
 * Adds n to stack->str (the caller's "root;...;leaf") in the table, with
 * the '#' rule above (stack is changed).  Returns 0, or -1 for an empty
 * stack, which is not added.
 */
int stack_cache_add(struct stack_cache *sc, GString *stack, fk_count n);

#endif
