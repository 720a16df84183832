/*
 * folddiff.h - the differential profile fold-diff prints: one line per
 * stack found in either of two profiles, "STACK COUNT1 COUNT2".
 *
 *	struct fold_table *t = fold_table_new();
 *	fold_table_add2(t, "a;b", 3, fk_count_from_u64(4), 0);  // profile 1
 *	fold_table_add2(t, "a;b", 3, 0, fk_count_from_u64(6));  // profile 2
 *	struct fold_diff_opts o = { .normalize = true };
 *	fold_diff_write(t, &o, stdout, &err);      // "a;b 4 6\n", sorted
 *
 * The table's count[0] holds the first profile, count[1] the second (the
 * caller adds them; stacks are matched byte for byte, so strip addresses
 * with stack_strip_hex() first if they differ between runs).  Nothing here
 * allocates per stack beyond the sorted array of fold_table_sorted().
 */
#ifndef FOLDKIT_FOLDDIFF_H
#define FOLDKIT_FOLDDIFF_H

#include "core/count.h"
#include "core/foldtable.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

struct fold_diff_opts {
	bool normalize;		/* -n: scale COUNT1 to the second total */
	bool percent;		/* both columns as % of their own total */
	bool min_delta_set;
	fk_count min_delta;	/* omit stacks with |COUNT2-COUNT1| below it */
};

/*
 * difffolded.pl -n: int(c1 * total2 / total1), computed as Perl computes
 * it (an exact integer product when it fits in 64 bits, an exact quotient
 * when Perl's integer division applies, else double division), truncated.
 * Returns c1 unchanged when total1 is 0 or equals total2.
 */
fk_count fold_diff_scale(fk_count c1, fk_count total1, fk_count total2);

/* c as a percentage of total, rounded to four decimals; 0 if total is 0. */
fk_count fold_diff_percent(fk_count c, fk_count total);

/*
 * Writes the table, sorted, as "STACK COUNT1 COUNT2\n" with o applied.
 * Returns the number of stacks left out by min_delta (>= 0), or -1 with
 * *err set on a write error.
 */
long fold_diff_write(const struct fold_table *t, const struct fold_diff_opts *o,
		     FILE *out, GError **err);

#endif
