#include "core/stacksort.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

size_t stack_common_len(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen, i = 0;

#ifdef __SSE2__
	/* stacks share hundreds of bytes: sixteen at a time */
	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
		unsigned ne = 0xffffu ^ (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y));

		if (ne)
			return i + (size_t)__builtin_ctz(ne);
	}
#endif
	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return i + (size_t)(__builtin_ctzll(x ^ y) / 8);
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

int stack_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c ? c : (alen > blen) - (alen < blen);
}

static int cmp_from(const struct stack_key *x, const struct stack_key *y, size_t d)
{
	size_t n = (x->len < y->len ? x->len : y->len);
	int c = n > d ? memcmp(x->p + d, y->p + d, n - d) : 0;

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int cmp_key_r(const void *a, const void *b, void *d)
{
	return cmp_from(a, b, *(const size_t *)d);
}

static inline void swap_e(struct stack_key *v, size_t i, size_t j)
{
	struct stack_key t = v[i];

	v[i] = v[j];
	v[j] = t;
}

/*
 * When a whole group shares its next eight bytes it likely shares many
 * more (stacks repeat long caller chains): find how many with one
 * sequential pass per stack rather than a partition pass per eight bytes.
 */
static size_t common_prefix(const struct stack_key *v, size_t n, size_t d)
{
	size_t m = v[0].len;

	for (size_t i = 1; i < n && m > d; i++) {
		/* the stacks lie all over the input: fetch ahead */
		if (i + 4 < n)
			__builtin_prefetch(v[i + 4].p + d);
		size_t l = d + stack_common_len(v[0].p + d, m - d, v[i].p + d,
					  v[i].len > d ? v[i].len - d : 0);

		if (l < m)
			m = l;
	}
	return m > d ? m : d;
}

/* Whether v[0..n) weigh less than limit together. */
static bool light(const struct stack_key *v, size_t n, uint64_t limit)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		if ((sum += v[i].w) >= limit)	/* each w <= limit < 2^62 */
			return false;
	return true;
}

static void load_keys(struct stack_key *v, size_t n, size_t d)
{
	for (size_t i = 0; i < n; i++) {
		if (i + 8 < n)
			__builtin_prefetch(v[i + 8].p + d);
		v[i].key = stack_key_at(v[i].p, v[i].len, d);
	}
}

/*
 * Multikey quicksort (Bentley and Sedgewick) on eight bytes at a time: the
 * same order as memcmp with shorter-first, but the long prefixes stacks
 * share are read about once each instead of once per comparison.  Each
 * element carries its eight bytes at depth d (the caller loads them), so
 * partitioning reads one array instead of every stack once per pass.
 *
 * budget bounds the partitions at one depth on one path (a step deeper is
 * bounded by the stacks' length), past which qsort_r() finishes, as
 * introsort does: no input makes it quadratic.
 */
static void sort_stacks(struct stack_key *v, size_t *lcp, size_t n, size_t d,
			uint64_t limit, int budget)
{
	/* with a limit, partition small parts too: each group of equal keys
	 * it finds may weigh too little to sort further */
	const size_t small = limit ? 4 : 16;

	while (n > small) {
		size_t lt = 0, gt = n, i = 1;
		uint64_t pivot, maxlt = 0, mingt = UINT64_MAX;
		size_t m;

		if (budget <= 0) {
			qsort_r(v, n, sizeof(*v), cmp_key_r, &d);
			for (size_t k = 1; lcp && k < n; k++)	/* all share d bytes */
				lcp[k] = d + stack_common_len(v[k - 1].p + d, v[k - 1].len - d,
							      v[k].p + d, v[k].len - d);
			return;
		}
		/* the median of three as pivot */
		{
			uint64_t x = v[0].key, y = v[n / 2].key, z = v[n - 1].key;
			size_t m = x < y ? (y < z ? n / 2 : x < z ? n - 1 : 0)
					 : (x < z ? 0 : y < z ? n - 1 : n / 2);

			swap_e(v, 0, m);
		}
		pivot = v[0].key;
		/* v[0..lt) < pivot, v[lt..i) == pivot, v[gt..n) > pivot */
		while (i < gt) {
			uint64_t c = v[i].key;

			if (c < pivot) {
				maxlt = c > maxlt ? c : maxlt;
				swap_e(v, lt++, i++);
			} else if (c > pivot) {
				mingt = c < mingt ? c : mingt;
				swap_e(v, i, --gt);
			} else {
				i++;
			}
		}
		/*
		 * The greatest stack before the pivot's group and the least
		 * after it differ from the group in these eight bytes, so the
		 * keys alone give their common prefix with it (a padding zero
		 * differs from any byte of a longer stack).
		 */
		if (lcp && lt > 0)
			lcp[lt] = d + (size_t)(__builtin_clzll(maxlt ^ pivot) / 8);
		if (lcp && gt < n)
			lcp[gt] = d + (size_t)(__builtin_clzll(mingt ^ pivot) / 8);
		/*
		 * Of the equal keys, the stacks that end within these eight
		 * bytes come first, shorter first: only NULs can follow one's
		 * end in a longer stack with the same key, so each is a
		 * prefix of the next.  The rest go on at d + 8.
		 */
		m = lt;
		for (size_t k = lt; k < gt; k++)
			if (v[k].len < d + 8)
				swap_e(v, m++, k);
		for (size_t len = d, q = lt; len < d + 8 && q + 1 < m; len++)
			for (size_t k = q; k < m; k++)
				if (v[k].len == len)
					swap_e(v, q++, k);
		for (size_t k = lt + 1; lcp && k <= m && k < gt; k++)
			lcp[k] = v[k - 1].len;
		/*
		 * Recurse into the parts no bigger than half and loop on the
		 * biggest, so the recursion stays O(log n) deep whatever the
		 * input.
		 */
		struct { struct stack_key *v; size_t *lcp, n, d; int budget; } part[3] = {
			{ v, lcp, lt, d, budget - 1 },
			{ v + m, lcp ? lcp + m : NULL, gt - m, d + 8, budget },
			{ v + gt, lcp ? lcp + gt : NULL, n - gt, d, budget - 1 },
		};
		int big = -1;

		if (m < gt && limit && lcp && v[m].p[d + 7] != ';' &&
		    light(v + m, gt - m, limit)) {
			/*
			 * Every stack that starts with these d + 8 bytes is
			 * here (the parts at depth d hold whole groups), so
			 * every frame that ends past them is narrower than
			 * the group, too narrow to draw: the flow needs the
			 * prefix once, with the group's width.  (Not a prefix
			 * that ends in ';': its empty last frame would be
			 * dropped, as at the end of a stack, but is not the
			 * end of the group's stacks.)
			 */
			v[m].len = d + 8;
			for (size_t k = m + 1; k < gt; k++)
				lcp[k] = STACK_SORT_FOLDED;
			part[1].n = 0;
		}
		if (part[1].n > 16)
			part[1].d = common_prefix(part[1].v, part[1].n, d + 8);
		if (part[1].n > 1)
			load_keys(part[1].v, part[1].n, part[1].d);
		for (int k = 0; k < 3; k++)
			if (part[k].n > n / 2)
				big = k;
		for (int k = 0; k < 3; k++)
			if (k != big)
				sort_stacks(part[k].v, part[k].lcp, part[k].n,
					    part[k].d, limit, part[k].budget);
		if (big < 0)
			return;
		v = part[big].v;
		lcp = part[big].lcp;
		n = part[big].n;
		d = part[big].d;
		budget = part[big].budget;
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && (v[j - 1].key != v[j].key
					     ? v[j - 1].key > v[j].key
					     : cmp_from(&v[j - 1], &v[j], d) > 0); j--)
			swap_e(v, j - 1, j);
	for (size_t i = 1; lcp && i < n; i++)	/* all share d bytes */
		lcp[i] = d + stack_common_len(v[i - 1].p + d, v[i - 1].len - d,
					v[i].p + d, v[i].len - d);
}

void stack_sort(struct stack_key *v, size_t n, size_t *lcp, uint64_t limit)
{
	int budget = 2;

	if (n == 0)
		return;
	for (size_t i = n; i > 1; i >>= 1)
		budget += 2;
	if (lcp)
		lcp[0] = 0;
	load_keys(v, n, 0);
	sort_stacks(v, lcp, n, 0, lcp ? limit : 0, budget);
}
