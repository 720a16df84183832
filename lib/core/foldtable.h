/*
 * foldtable.h - the stack table: folded stack -> count, the one place where
 * every tool aggregates.
 *
 *	struct fold_table *t = fold_table_new();
 *	fold_table_add(t, "main;work", 9, fk_count_from_u64(3));
 *	fold_table_add(t, "main;work", 9, fk_count_from_u64(2));   // now 5
 *	if (fold_table_write(t, stdout, 1, &err) < 0)
 *		...                        // prints "main;work 5\n"
 *	fold_table_free(t);
 *
 * Each stack holds two counts: count[0] is the ordinary one, count[1] the
 * second column of a differential profile (fold-diff, fold2svg).  Counts
 * are exact (see count.h).  Memory grows with the number of distinct
 * stacks and their length, never with the number of additions.
 *
 * Output order is bytewise (memcmp, shorter first on a common prefix), which
 * is what `LC_ALL=C sort` and the Perl tools' `sort { $a cmp $b }` give; it
 * does not depend on insertion order, so output is deterministic.  Insertion
 * order makes it cheaper, though: stacks added in order (a sorted file) are
 * not sorted again, and stacks added in a few sorted runs (sorted files put
 * together) are merged; the same stack added several times in a row is
 * found without a lookup.
 */
#ifndef FOLDKIT_FOLDTABLE_H
#define FOLDKIT_FOLDTABLE_H

#include "core/count.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct fold_table;

struct fold_entry {
	const char *stack;	/* NUL-terminated copy owned by the table, or
				   the caller's bytes (fold_table_add2_ref()) */
	size_t len;
	fk_count count[2];
};

struct fold_table *fold_table_new(void);

/* Frees the table and every stack string it owns. */
void fold_table_free(struct fold_table *t);

/*
 * Adds c0 (and c1, the differential column) to stack's counts, creating the
 * entry (with a copy of stack) on first sight.  Returns the entry, which
 * stays valid until the table is freed (later additions do not move it).
 */
struct fold_entry *fold_table_add2(struct fold_table *t, const char *stack,
				   size_t len, fk_count c0, fk_count c1);

/*
 * Like fold_table_add2(), but a new entry keeps stack itself instead of a
 * copy: the caller guarantees the bytes stay valid and unchanged until
 * fold_table_free() (e.g. a mapped file, see folded_reader_stable()), and
 * the entry's stack is then not NUL-terminated.  Saves the copy for callers
 * that hold every stack anyway; entries of both kinds may share a table.
 */
struct fold_entry *fold_table_add2_ref(struct fold_table *t, const char *stack,
				       size_t len, fk_count c0, fk_count c1);

static inline struct fold_entry *fold_table_add(struct fold_table *t,
						const char *stack, size_t len,
						fk_count c)
{
	return fold_table_add2(t, stack, len, c, 0);
}

/*
 * fold_table_add2() (or, with ref, fold_table_add2_ref()) made a few
 * additions later: the stack is hashed and its slot fetched into the cache
 * now, and probed while the caller reads its next lines, so that the
 * lookups of a table larger than the cache overlap instead of waiting one
 * by one.  Additions are made in the order queued; every function that
 * reads the table (fold_table_find(), _size(), _total(), _sorted(),
 * _foreach(), _write()) makes them first, and so does fold_table_add2().
 * Without ref the bytes are copied at once; with ref they must stay valid
 * until fold_table_free(), as for fold_table_add2_ref().
 *
 * A table that only this function has added to needs no index while its
 * stacks come in ascending runs (a collapser's sorted output, such files
 * put together, a filter's changes to them): each stack is compared with
 * the one before, a stack in two runs is kept twice, and
 * fold_table_write() merges the runs into one line per stack.  The first
 * call of any other function but fold_table_total() indexes it (and so
 * do runs too short to merge, and, every time the entries or the bytes
 * copied double, a check that keeps the index when a tenth of the entries
 * were such duplicates: memory follows the distinct stacks).
 */
void fold_table_add2_soon(struct fold_table *t, const char *stack, size_t len,
			  fk_count c0, fk_count c1, bool ref);

/* Makes every queued addition now. */
void fold_table_settle(struct fold_table *t);

/* Adds to an entry returned by fold_table_add2() (keeps the totals right). */
void fold_table_bump(struct fold_table *t, struct fold_entry *e, fk_count c0,
		     fk_count c1);

/* The entry for stack, or NULL. */
struct fold_entry *fold_table_find(const struct fold_table *t,
				   const char *stack, size_t len);

/* The number of distinct stacks. */
size_t fold_table_size(const struct fold_table *t);

/* The sum of count[col] over all stacks (col is 0 or 1). */
fk_count fold_table_total(const struct fold_table *t, int col);

/*
 * Returns the entries sorted bytewise by stack, as a NULL-terminated array
 * of pointers into the table (*n gets the count).  The caller owns the array
 * (g_free()) but not the entries.
 */
struct fold_entry **fold_table_sorted(const struct fold_table *t, size_t *n);

/* Calls fn on every entry in unspecified order. */
void fold_table_foreach(const struct fold_table *t,
			void (*fn)(struct fold_entry *e, void *data), void *data);

/*
 * Writes every stack in sorted order as "STACK COUNT\n", or with ncounts 2
 * "STACK COUNT1 COUNT2\n".  Returns 0, or -1 with *err set when the stream
 * reports a write error (checked with ferror() and fflush()).
 */
int fold_table_write(const struct fold_table *t, FILE *out, int ncounts,
		     GError **err);

/* The hash the table uses, exposed for other byte-string indexes. */
uint64_t fk_hash_bytes(const void *p, size_t len);

#endif
