/*
 * stacksort.h - the one stack sort: folded stacks in bytewise order
 * (memcmp, a shorter stack before a longer one it starts), the order of
 * `LC_ALL=C sort` and of the Perl tools' `sort`, optionally with the
 * length each stack shares with the one before it.
 *
 *	struct stack_key *v = g_new(struct stack_key, n);
 *	for (size_t i = 0; i < n; i++)
 *		v[i] = (struct stack_key){ .p = s[i], .len = len[i], .i = i };
 *	stack_sort(v, n, lcp, 0);    // v in order, lcp[i]: bytes shared
 *	                               // with v[i - 1] (lcp may be NULL)
 *
 * A multikey quicksort (Bentley and Sedgewick) on eight bytes at a time,
 * cached beside each stack: stacks share long prefixes (the process, its
 * main loop), which it reads about once each instead of once per
 * comparison, jumping over a prefix a whole group shares.  No input makes
 * it quadratic (past a budget of partitions, qsort_r() finishes a part).
 * The order is right for any bytes; lcp (and the limit) need stacks
 * without NUL bytes, as folded text has.  The caller owns v; p, len and
 * i/e are its own and move with the stack.
 *
 * With a limit (and lcp), the sort stops at a group of stacks it finds
 * sharing a prefix that does not end in ';' whose weights (w, each at most
 * limit < 2^62) sum to less than limit: the group's first stack gets that
 * prefix's length as its len, and the rest of the group follow it in any
 * order with lcp STACK_SORT_FOLDED.  A flame graph uses it to skip
 * ordering stacks whose frames past the prefix are too narrow to draw.
 */
#ifndef FOLDKIT_STACKSORT_H
#define FOLDKIT_STACKSORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct fold_entry;

struct stack_key {
	const char *p;		/* the stack */
	size_t len;
	union {			/* the caller's */
		struct fold_entry *e;
		size_t i;
	};
	uint64_t key;		/* the sort's own */
	uint64_t w;		/* the weight, with a limit */
};

#define STACK_SORT_FOLDED SIZE_MAX

void stack_sort(struct stack_key *v, size_t n, size_t *lcp, uint64_t limit);

/* The length of the common prefix of a and b. */
size_t stack_common_len(const char *a, size_t alen, const char *b, size_t blen);

/* Bytewise order of a and b, a shorter one first: <0, 0 or >0. */
int stack_cmp(const char *a, size_t alen, const char *b, size_t blen);

/*
 * Eight bytes of s[0..len) from depth d as a big-endian number, zero-padded
 * past the end: where two stacks' numbers differ, they order the stacks as
 * stack_cmp() does (a padding 0 at the end of a stack that is a prefix of
 * the other sorts first); equal numbers leave it to the bytes past them.
 */
static inline uint64_t stack_key_at(const char *s, size_t len, size_t d)
{
	unsigned char b[8] = { 0 };

	if (d + 8 <= len)
		memcpy(b, s + d, 8);
	else if (d < len)
		memcpy(b, s + d, len - d);
	return (uint64_t)b[0] << 56 | (uint64_t)b[1] << 48 | (uint64_t)b[2] << 40 |
	       (uint64_t)b[3] << 32 | (uint64_t)b[4] << 24 | (uint64_t)b[5] << 16 |
	       (uint64_t)b[6] << 8 | b[7];
}

#endif
