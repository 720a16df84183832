#include "core/foldtable.h"

#include "core/bigmem.h"
#include "core/error.h"
#include "core/stacksort.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Open addressing with linear probing over an array of slots that hold the
 * full hash and a pointer to the entry; entries live in fixed-size blocks so
 * their addresses never change, and stack bytes in an arena.  A full hash in
 * the slot means a probe almost never touches a non-matching key.
 */

#define ARENA_CHUNK (1u << 20)
/* Past HUGE_AFTER chunks, stack bytes go in 2 MiB chunks aligned for
 * transparent huge pages: a table of distinct stacks holds about as many
 * bytes as its input, and faulting them in 4 KiB at a time cost a fifth
 * of a filter's time.  Small tables keep small chunks, whose pages are
 * only touched as they fill; past the first, the 4 KiB faults of three
 * more cost kfold --kernel 4% on 25 MB of distinct stacks. */
#define HUGE_CHUNK (2u << 20)
#define HUGE_AFTER 1
#define ENTRY_BLOCK 4096
/* The entries a table without an index holds before it first indexes
 * them to merge duplicates (then at each doubling): 12 MB of entries. */
#define RUNS_CHECK_FIRST ((size_t)1 << 18)
/* Likewise the bytes of stacks copied in (a stream's, a changed stack's):
 * a profile repeated on standard input must not be kept once a copy. */
#define RUNS_CHECK_BYTES ((size_t)16 << 20)
/* Entries, likewise: the blocks past HUGE_AFTER hold 2 MiB each. */
#define ENTRY_HUGE_BLOCK (HUGE_CHUNK / sizeof(struct fold_entry))

struct slot {
	uint64_t hash;
	struct fold_entry *e;
};

struct fold_table {
	struct slot *slots;
	size_t mask;		/* capacity - 1; capacity is a power of two */
	size_t n;
	GPtrArray *blocks;	/* struct fold_entry[block_cap(i)] each */
	size_t block_used, block_end;	/* entries in the last block, its size */
	GPtrArray *chunks;	/* arena chunks for stack bytes */
	char *arena;
	size_t arena_left;
	fk_count total[2];
	struct fold_entry *last;	/* the entry added to last */
	struct fold_entry *newest;	/* the entry made last */
	GArray *runs;		/* size_t: where insertion order descends */
	bool unsorted;		/* too many such places to keep */
	struct pending *pend;	/* additions queued by fold_table_add2_soon() */
	char *pend_keys;	/* PENDING copies of PENDING_KEY bytes */
	unsigned pend_head, pend_n;
	/*
	 * Without an index (until to_hashed()): fed by fold_table_add2_soon()
	 * alone, the table keeps its entries in runs of ascending stacks and
	 * no slots: a stack is compared with the one made before it (which
	 * note_order() does anyway), not hashed and looked up, and a stack
	 * in two runs is two entries until the runs are merged as they are
	 * written.  So that memory follows the distinct stacks, the entries
	 * are indexed (and their duplicates merged) when they pass
	 * next_check, and the table stays indexed if a tenth of them were
	 * duplicates.
	 */
	bool hashed;
	size_t next_check;
	size_t copied, next_bytes;	/* stack bytes copied in, and the
					   next check by them */
};

/*
 * A queued addition: its slot was prefetched when it was queued and is
 * probed PENDING - 1 additions later, by when it is in the cache.
 */
#define PENDING 8
#define STAGE_ENTRY 3
#define STAGE_STACK 6
#define PENDING_KEY 256
struct pending {
	const char *stack;
	size_t len;
	uint64_t h;
	fk_count c0, c1;
	bool copy;
};

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static inline uint64_t load32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t rotl(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

/*
 * Four independent lanes of 8 bytes each per round, so the multiplies
 * overlap: the chain texts hashed per sample are hundreds of bytes long.
 * The bytes after the last whole round are taken as one more round of the
 * last 32 bytes (overlapping the one before: the length is in the seed),
 * and a short key as two overlapping loads, so there is no loop over the
 * tail and no variable-length copy.
 */
#define HASH_ROUND(q) do {					\
		a = (a ^ load64(q)) * k1;			\
		b = (b ^ load64((q) + 8)) * k2;			\
		c = (c ^ load64((q) + 16)) * k1;		\
		d = (d ^ load64((q) + 24)) * k2;		\
		a ^= a >> 29;					\
		b ^= b >> 31;					\
		c ^= c >> 27;					\
		d ^= d >> 33;					\
	} while (0)

/* The 128-bit product of x and y folded to 64 bits: 16 bytes mixed by
 * one multiply. */
static inline uint64_t mul_fold(uint64_t x, uint64_t y)
{
	unsigned __int128 r = (unsigned __int128)x * y;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* From 64 bytes on, rounds of 64: each lane takes 16 bytes a multiply. */
#define WIDE_ROUND(q) do {						\
		a = mul_fold(load64(q) ^ a ^ k1, load64((q) + 8) ^ k2);	\
		b = mul_fold(load64((q) + 16) ^ b ^ k3, load64((q) + 24) ^ k4); \
		c = mul_fold(load64((q) + 32) ^ c ^ k2, load64((q) + 40) ^ k3); \
		d = mul_fold(load64((q) + 48) ^ d ^ k4, load64((q) + 56) ^ k1); \
	} while (0)

uint64_t fk_hash_bytes(const void *p, size_t len)
{
	const unsigned char *s = p;
	const uint64_t k1 = 0x9e3779b97f4a7c15ULL, k2 = 0xc2b2ae3d27d4eb4fULL,
		k3 = 0x165667b19e3779f9ULL, k4 = 0x27d4eb2f165667c5ULL;
	uint64_t a = k1 ^ len, b = k2, c = k1 * 3, d = k2 * 5;

	if (len >= 64) {
		size_t i;
		for (i = 0; i + 64 <= len; i += 64)
			WIDE_ROUND(s + i);
		if (i < len)
			WIDE_ROUND(s + len - 64);
	} else if (len >= 32) {
		size_t i;
		for (i = 0; i + 32 <= len; i += 32)
			HASH_ROUND(s + i);
		if (i < len)
			HASH_ROUND(s + len - 32);
	} else if (len >= 16) {
		a = (a ^ load64(s)) * k1;
		b = (b ^ load64(s + 8)) * k2;
		c = (c ^ load64(s + len - 16)) * k1;
		d = (d ^ load64(s + len - 8)) * k2;
	} else if (len >= 8) {
		a = (a ^ load64(s)) * k1;
		b = (b ^ load64(s + len - 8)) * k2;
	} else if (len >= 4) {
		a = (a ^ (load32(s) | load32(s + len - 4) << 32)) * k1;
	} else if (len) {
		a = (a ^ (s[0] | (uint64_t)s[len / 2] << 8 |
			  (uint64_t)s[len - 1] << 16)) * k1;
	}
	return mix(a ^ rotl(b, 17) ^ rotl(c, 37) ^ rotl(d, 51));
}

static inline size_t block_cap(size_t i)
{
	return i < HUGE_AFTER ? ENTRY_BLOCK : ENTRY_HUGE_BLOCK;
}

/* The i-th block of entries (freed with free()). */
static struct fold_entry *block_new(size_t i)
{
	void *p;

	if (i < HUGE_AFTER || posix_memalign(&p, HUGE_CHUNK, HUGE_CHUNK) != 0)
		return g_new(struct fold_entry, block_cap(i));
	(void)madvise(p, HUGE_CHUNK, MADV_HUGEPAGE);	/* a hint only */
	return p;
}

struct fold_table *fold_table_new(void)
{
	struct fold_table *t = g_new0(struct fold_table, 1);

	t->mask = 1023;
	t->slots = g_new0(struct slot, t->mask + 1);
	t->blocks = g_ptr_array_new_with_free_func(free);	/* posix_memalign */
	t->chunks = g_ptr_array_new_with_free_func(free);	/* posix_memalign */
	t->block_used = t->block_end = 0;
	t->runs = g_array_new(FALSE, FALSE, sizeof(size_t));
	t->next_check = RUNS_CHECK_FIRST;
	t->next_bytes = RUNS_CHECK_BYTES;
	return t;
}

void fold_table_free(struct fold_table *t)
{
	if (!t)
		return;
	free(t->slots);
	g_free(t->pend);
	g_free(t->pend_keys);
	g_ptr_array_free(t->blocks, TRUE);
	g_ptr_array_free(t->chunks, TRUE);
	g_array_free(t->runs, TRUE);
	g_free(t);
}

static char *arena_copy(struct fold_table *t, const char *s, size_t len)
{
	char *p;

	if (len + 1 > t->arena_left) {
		size_t sz = ARENA_CHUNK;

		if (len + 1 > ARENA_CHUNK / 4) {	/* a big key gets a chunk of its own */
			p = g_malloc(len + 1);
			g_ptr_array_add(t->chunks, p);
			memcpy(p, s, len);
			p[len] = '\0';
			return p;
		}
		if (t->chunks->len >= HUGE_AFTER &&
		    posix_memalign((void **)&p, HUGE_CHUNK, HUGE_CHUNK) == 0) {
			sz = HUGE_CHUNK;
			(void)madvise(p, sz, MADV_HUGEPAGE);	/* a hint only */
		} else {
			p = g_malloc(sz);
		}
		g_ptr_array_add(t->chunks, p);
		t->arena = p;
		t->arena_left = sz;
	}
	p = t->arena;
	memcpy(p, s, len);
	p[len] = '\0';
	t->arena += len + 1;
	t->arena_left -= len + 1;
	return p;
}

/*
 * Memory for a big array touched all over (slots): past BIG_MIN bytes it
 * is rounded up to whole 2 MiB pages and hinted as huge, as faulting its
 * pages in 4 KiB at a time cost more than filling them.  Freed with
 * free().
 */
#define BIG_MIN (HUGE_CHUNK / 4)
static void *big_alloc(size_t bytes)
{
	size_t round = (bytes + HUGE_CHUNK - 1) & ~(size_t)(HUGE_CHUNK - 1);
	void *p;

	if (bytes < BIG_MIN || posix_memalign(&p, HUGE_CHUNK, round) != 0)
		return g_malloc(bytes);
	(void)madvise(p, round, MADV_HUGEPAGE);	/* a hint only */
	return p;
}

/*
 * Slots are zeroed here rather than by calloc(), whose fresh pages were
 * faulted twice (read as the zero page by the first probe, then copied
 * on the first write).
 */
static struct slot *slots_new(size_t cap)
{
	struct slot *p = big_alloc(cap * sizeof(struct slot));

	memset(p, 0, cap * sizeof(struct slot));
	return p;
}

static void grow(struct fold_table *t)
{
	size_t cap = (t->mask + 1) * 2;
	struct slot *ns = slots_new(cap);

	for (size_t i = 0; i <= t->mask; i++) {
		struct slot *s = &t->slots[i];
		size_t j;
		if (!s->e)
			continue;
		for (j = s->hash & (cap - 1); ns[j].e; j = (j + 1) & (cap - 1))
			;
		ns[j] = *s;
	}
	free(t->slots);
	t->slots = ns;
	t->mask = cap - 1;
}

static struct slot *lookup(const struct fold_table *t, uint64_t h,
			   const char *stack, size_t len)
{
	size_t i;

	for (i = h & t->mask;; i = (i + 1) & t->mask) {
		struct slot *s = &t->slots[i];
		if (!s->e || (s->hash == h && s->e->len == len &&
			      memcmp(s->e->stack, stack, len) == 0))
			return s;
	}
}

/* Merging runs beats sorting while they are this long on average. */
#define MERGE_MIN_RUN 16

/*
 * Notes that the entry being made (the t->n-th) breaks the ascending
 * order of insertion, for fold_table_sorted().  Past one break per
 * MERGE_MIN_RUN entries (and a few), the table will be sorted: no more
 * are kept.
 */
static void note_run_start(struct fold_table *t)
{
	if (t->runs->len > t->n / MERGE_MIN_RUN + 64) {
		t->unsorted = true;
		g_array_set_size(t->runs, 0);
		return;
	}
	g_array_append_val(t->runs, t->n);	/* e's index: t->n counts the others */
}

/* Whether e breaks the order: compared now, while both stacks are in the
 * cache, not when the table is written. */
static void note_order(struct fold_table *t, const struct fold_entry *e)
{
	const struct fold_entry *p = t->newest;

	t->newest = (struct fold_entry *)e;
	if (!p || t->unsorted || stack_cmp(p->stack, p->len, e->stack, e->len) < 0)
		return;
	note_run_start(t);
}

static inline void bump(struct fold_table *t, struct fold_entry *e,
			fk_count c0, fk_count c1)
{
	e->count[0] += c0;
	e->count[1] += c1;
	t->total[0] += c0;
	t->total[1] += c1;
}

/* A new entry at the end of the blocks, its counts 0. */
static struct fold_entry *new_entry(struct fold_table *t, const char *stack, size_t len,
				    bool copy)
{
	struct fold_entry *e;

	if (t->block_used == t->block_end) {
		g_ptr_array_add(t->blocks, block_new(t->blocks->len));
		t->block_end = block_cap(t->blocks->len - 1);
		t->block_used = 0;
	}
	e = (struct fold_entry *)g_ptr_array_index(t->blocks, t->blocks->len - 1)
	    + t->block_used++;
	e->stack = copy ? arena_copy(t, stack, len) : stack;
	e->len = len;
	e->count[0] = e->count[1] = 0;
	return e;
}

/*
 * Indexes a table that had no index: every entry hashed into new slots,
 * in insertion order; an entry whose stack an earlier one holds (the same
 * stack in two runs) adds its counts to that one and is dropped, the
 * entries after it moving down (nothing outside the table points at them
 * yet: only fold_table_add2_soon() has added), and the runs' starts move
 * with them.
 */
static void to_hashed(struct fold_table *t)
{
	size_t cap = 1024, live = 0, idx = 0, ri = 0, kept = 0, wi = 0;
	size_t *runs = (size_t *)(void *)t->runs->data, nruns = t->runs->len;
	struct fold_entry *newest = NULL;
	guint wb = 0;

	t->hashed = true;
	while (cap < 2 * t->n + 2)
		cap *= 2;
	free(t->slots);
	t->slots = slots_new(cap);
	t->mask = cap - 1;
	for (guint b = 0; b < t->blocks->len; b++) {
		struct fold_entry *blk = g_ptr_array_index(t->blocks, b);
		size_t used = b + 1 == t->blocks->len ? t->block_used : block_cap(b);

		for (size_t i = 0; i < used; i++, idx++) {
			struct fold_entry *e = &blk[i], *w;
			uint64_t h = fk_hash_bytes(e->stack, e->len);
			struct slot *sl = lookup(t, h, e->stack, e->len);

			/* a run starting here starts at the next entry kept */
			for (; ri < nruns && runs[ri] == idx; ri++)
				if (live && (!kept || runs[kept - 1] != live))
					runs[kept++] = live;
			if (sl->e) {
				sl->e->count[0] += e->count[0];
				sl->e->count[1] += e->count[1];
				continue;
			}
			w = (struct fold_entry *)g_ptr_array_index(t->blocks, wb) + wi;
			if (w != e)
				*w = *e;
			sl->hash = h;
			sl->e = newest = w;
			live++;
			if (++wi == block_cap(wb))
				wb++, wi = 0;
		}
	}
	while (kept && runs[kept - 1] >= live)
		kept--;
	g_array_set_size(t->runs, (guint)kept);
	/* the blocks the entries left */
	if (wi == 0 && wb > 0) {
		g_ptr_array_set_size(t->blocks, wb);
		t->block_used = block_cap(wb - 1);
	} else if (t->blocks->len) {
		g_ptr_array_set_size(t->blocks, wb + 1);
		t->block_used = wi;
	}
	if (t->blocks->len)
		t->block_end = block_cap(t->blocks->len - 1);
	t->n = live;
	t->newest = t->last = newest;
}

/*
 * fold_table_add2_soon() on a table without an index: the stack is
 * compared with the newest entry's (one pass over their common start):
 * the same stack adds to it, a later one is the run's next entry, an
 * earlier one starts a run.  Too many runs (the input is not made of
 * sorted runs) or too many entries (memory must follow the distinct
 * stacks, not the runs that repeat them) index the table.
 */
static void add_run(struct fold_table *t, const char *stack, size_t len, fk_count c0,
		    fk_count c1, bool copy)
{
	struct fold_entry *p = t->newest, *e;
	int c = p ? stack_cmp(p->stack, p->len, stack, len) : -1;

	if (c == 0) {
		bump(t, p, c0, c1);
		t->last = p;
		return;
	}
	e = new_entry(t, stack, len, copy);
	if (copy)
		t->copied += len + 1;
	if (c > 0)
		note_run_start(t);
	t->newest = t->last = e;
	t->n++;
	bump(t, e, c0, c1);
	if (t->unsorted) {
		to_hashed(t);
	} else if (t->n >= t->next_check || t->copied >= t->next_bytes) {
		size_t before = t->n;

		to_hashed(t);
		/* under a tenth duplicates: runs again, checked at twice as
		 * much (the bytes wasted stay under a tenth of those kept) */
		if ((before - t->n) * 10 < before)
			t->hashed = false;
		t->next_check = 2 * t->n > RUNS_CHECK_FIRST ? 2 * t->n : RUNS_CHECK_FIRST;
		t->next_bytes = 2 * t->copied > RUNS_CHECK_BYTES ? 2 * t->copied : RUNS_CHECK_BYTES;
	}
}

static struct fold_entry *add_hashed(struct fold_table *t, uint64_t h,
				     const char *stack, size_t len, fk_count c0,
				     fk_count c1, bool copy)
{
	struct slot *s = lookup(t, h, stack, len);
	struct fold_entry *e;

	e = s->e;
	if (!e) {
		e = new_entry(t, stack, len, copy);
		s->hash = h;
		s->e = e;
		note_order(t, e);
		/*
		 * At most half full: most additions of distinct stacks are
		 * new ones, whose probe runs to the end of its cluster; at
		 * three quarters full those runs were long enough to make the
		 * probes cross cache lines, 5% of kfold --kernel's time.
		 */
		if (++t->n * 2 > t->mask + 1)
			grow(t);
	}
	t->last = e;
	bump(t, e, c0, c1);
	return e;
}

static struct fold_entry *add(struct fold_table *t, const char *stack,
			      size_t len, fk_count c0, fk_count c1, bool copy)
{
	struct fold_entry *e = t->last;

	if (!t->hashed)		/* the caller gets an entry: no duplicates */
		to_hashed(t);
	if (t->pend_n)
		fold_table_settle(t);
	/*
	 * Sorted input that a filter changes (kfold folding kernel frames,
	 * fgrep-stacks removing them) makes the same stack of lines in a
	 * row: the entry added to last needs no hash and no probe.
	 */
	if (e && e->len == len && memcmp(e->stack, stack, len) == 0) {
		bump(t, e, c0, c1);
		return e;
	}
	return add_hashed(t, fk_hash_bytes(stack, len), stack, len, c0, c1, copy);
}

/* Makes the oldest queued addition. */
static void add_oldest(struct fold_table *t)
{
	struct pending *p = &t->pend[t->pend_head];

	add_hashed(t, p->h, p->stack, p->len, p->c0, p->c1, p->copy);
	t->pend_head = (t->pend_head + 1) % PENDING;
	t->pend_n--;
}

void fold_table_settle(struct fold_table *t)
{
	while (t->pend_n)
		add_oldest(t);
}

void fold_table_add2_soon(struct fold_table *t, const char *stack, size_t len,
			  fk_count c0, fk_count c1, bool ref)
{
	struct pending *p;
	unsigned i;

	if (!t->hashed) {
		add_run(t, stack, len, c0, c1, !ref);
		return;
	}
	if (t->pend_n) {	/* the same stack as the newest queued one */
		p = &t->pend[(t->pend_head + t->pend_n - 1) % PENDING];
		if (p->len == len && memcmp(p->stack, stack, len) == 0) {
			p->c0 += c0;
			p->c1 += c1;
			return;
		}
	} else if (t->last && t->last->len == len &&
		   memcmp(t->last->stack, stack, len) == 0) {
		bump(t, t->last, c0, c1);
		return;
	}
	if (!ref && len > PENDING_KEY) {	/* too long to queue a copy */
		add(t, stack, len, c0, c1, true);
		return;
	}
	if (!t->pend) {
		t->pend = g_new(struct pending, PENDING);
		t->pend_keys = g_malloc((size_t)PENDING * PENDING_KEY);
	}
	if (t->pend_n == PENDING)
		add_oldest(t);
	i = (t->pend_head + t->pend_n++) % PENDING;
	p = &t->pend[i];
	if (!ref) {
		char *k = t->pend_keys + (size_t)i * PENDING_KEY;

		memcpy(k, stack, len);
		stack = k;
	}
	*p = (struct pending){ .stack = stack, .len = len, .c0 = c0, .c1 = c1, .copy = !ref,
			       .h = fk_hash_bytes(stack, len) };
	__builtin_prefetch(&t->slots[p->h & t->mask]);
	/*
	 * A found stack costs two more misses, one after the other: its
	 * entry, then its bytes.  The additions queued before this one are
	 * stages further on: their slots (or entries) are in the cache now.
	 */
	if (t->pend_n > STAGE_ENTRY) {
		const struct slot *sl;

		p = &t->pend[(i + PENDING - STAGE_ENTRY) % PENDING];
		sl = &t->slots[p->h & t->mask];
		if (sl->hash == p->h)
			__builtin_prefetch(sl->e);
	}
	if (t->pend_n > STAGE_STACK) {
		const struct slot *sl;

		p = &t->pend[(i + PENDING - STAGE_STACK) % PENDING];
		sl = &t->slots[p->h & t->mask];
		if (sl->hash == p->h)
			__builtin_prefetch(sl->e->stack);
	}
}

struct fold_entry *fold_table_add2(struct fold_table *t, const char *stack,
				   size_t len, fk_count c0, fk_count c1)
{
	return add(t, stack, len, c0, c1, true);
}

struct fold_entry *fold_table_add2_ref(struct fold_table *t, const char *stack,
				       size_t len, fk_count c0, fk_count c1)
{
	return add(t, stack, len, c0, c1, false);
}

void fold_table_bump(struct fold_table *t, struct fold_entry *e, fk_count c0,
		     fk_count c1)
{
	bump(t, e, c0, c1);
}

/*
 * Queued additions are made before the table is read: they are part of
 * its state, which the reading functions take as const.
 */
static inline void settled(const struct fold_table *t)
{
	if (!t->hashed)
		to_hashed((struct fold_table *)t);
	if (t->pend_n)
		fold_table_settle((struct fold_table *)t);
}

struct fold_entry *fold_table_find(const struct fold_table *t,
				   const char *stack, size_t len)
{
	settled(t);
	return lookup(t, fk_hash_bytes(stack, len), stack, len)->e;
}

size_t fold_table_size(const struct fold_table *t)
{
	settled(t);
	return t->n;
}

fk_count fold_table_total(const struct fold_table *t, int col)
{
	/* exact without an index too: a stack in two runs counts once each */
	if (t->pend_n)
		fold_table_settle((struct fold_table *)t);
	return t->total[col ? 1 : 0];
}

/* Calls fn on t's entries in insertion order, as they are. */
static void each_entry(const struct fold_table *t,
		       void (*fn)(struct fold_entry *e, void *data), void *data)
{
	for (guint b = 0; b < t->blocks->len; b++) {
		struct fold_entry *blk = g_ptr_array_index(t->blocks, b);
		size_t used = b + 1 == t->blocks->len ? t->block_used : block_cap(b);
		for (size_t i = 0; i < used; i++)
			fn(&blk[i], data);
	}
}

void fold_table_foreach(const struct fold_table *t,
			void (*fn)(struct fold_entry *e, void *data), void *data)
{
	settled(t);
	each_entry(t, fn, data);
}

static void collect(struct fold_entry *e, void *data)
{
	struct fold_entry ***p = data;
	*(*p)++ = e;
}

/* The sort is stack_sort() (stacksort.h), the one every tool shares;
 * its keys are in bigmem.h's memory, as they may be megabytes. */
static void sort_entries(struct fold_entry **v, size_t n)
{
	struct stack_key *a = big_resize(NULL, 0, n * sizeof(*a));

	for (size_t i = 0; i < n; i++)
		a[i] = (struct stack_key){ .p = v[i]->stack, .len = v[i]->len,
					   .e = v[i] };
	stack_sort(a, n, NULL, 0);
	for (size_t i = 0; i < n; i++)
		v[i] = a[i].e;
	big_free(a, n * sizeof(*a));
}

/*
 * How many of the ascending a[0..n) sort before the stack x (none equals it: the
 * table's stacks are distinct).  Past the first four, a galloping search,
 * 1, 2, 4 ... ahead and then halving: about 2 log2 k comparisons for a
 * block of k, so two runs that interleave in long blocks merge in few
 * comparisons.
 */
static size_t count_before(struct fold_entry *const *a, size_t n,
			   const char *x, size_t xlen)
{
	size_t lo = 0, step = 1, hi;

	/* most blocks are short, and a run's stacks lie in memory in its
	 * order: the first few are tested one by one, reading them as the
	 * write will, before galloping jumps */
	for (; lo < 4; lo++)
		if (lo == n || stack_cmp(a[lo]->stack, a[lo]->len, x, xlen) >= 0)
			return lo;
	while (lo + step - 1 < n &&
	       stack_cmp(a[lo + step - 1]->stack, a[lo + step - 1]->len, x, xlen) < 0) {
		lo += step;
		step *= 2;
	}
	hi = lo + step - 1 < n ? lo + step - 1 : n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (stack_cmp(a[mid]->stack, a[mid]->len, x, xlen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The heads' first RUN_KEY * 8 bytes are kept in the heap, as numbers
 * that compare as the bytes do: the heap's comparisons read a thousand
 * runs' heads, long gone from the cache by the time each is read again,
 * and stacks of different runs (processes, files) mostly differ within
 * their first frame.
 */
#define RUN_KEY 4
struct run {
	struct fold_entry **p, **end;	/* what is left of a run */
	const char *s;			/* p[0]'s stack, at hand */
	size_t len;
	uint64_t key[RUN_KEY];		/* stack_key_at() of s at 0, 8, 16, 24 */
};

/* The heads' keys first (stack_key_at()); equal keys leave it to stack_cmp(). */
static inline bool run_less(const struct run *a, const struct run *b)
{
	for (int i = 0; i < RUN_KEY; i++)
		if (a->key[i] != b->key[i])
			return a->key[i] < b->key[i];
	return stack_cmp(a->s, a->len, b->s, b->len) < 0;
}

static inline void run_head(struct run *r)
{
	r->s = r->p[0]->stack;
	r->len = r->p[0]->len;
	for (int i = 0; i < RUN_KEY; i++)
		r->key[i] = stack_key_at(r->s, r->len, 8 * (size_t)i);
}

/*
 * Restores the heap order of h[0..n) (least head first) below h[i].  The
 * run whose block was just taken usually has a new head that sorts after
 * most others (runs give their blocks one after another), so the hole
 * goes down to a leaf along the lesser children, one comparison a level,
 * and x climbs back from there: about half the comparisons of testing x
 * against the lesser child at every level (Floyd's bottom-up sift).
 */
static void sift_down(struct run *h, size_t n, size_t i)
{
	struct run x = h[i];
	size_t top = i, c;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && run_less(&h[c + 1], &h[c]))
			c++;
		h[i] = h[c];
		i = c;
	}
	while (i > top) {
		size_t parent = (i - 1) / 2;

		if (!run_less(&x, &h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = x;
}

/*
 * Entries made for a write, each the sum of one stack's entries in
 * several runs (a table without an index): in chunks, so that the
 * pointers to them stay put.
 */
struct sums {
	GPtrArray *chunks;
	size_t used;		/* in the last chunk */
};
#define SUMS_CHUNK 1024

/*
 * Where the block of runs that starts with e follows *last in the merged
 * output: e's stack in two runs is one line.  Returns true when e was
 * added to *last (which becomes an entry of sums, the table's own
 * entries left as they are).
 */
static bool fold_into(struct fold_entry **last, const struct fold_entry *e,
		      struct sums *sums, struct fold_entry **made)
{
	struct fold_entry *d = *last;

	if (d->len != e->len || memcmp(d->stack, e->stack, e->len) != 0)
		return false;
	if (d != *made) {
		if (!sums->chunks || sums->used == SUMS_CHUNK) {
			if (!sums->chunks)
				sums->chunks = g_ptr_array_new_with_free_func(g_free);
			g_ptr_array_add(sums->chunks, g_new(struct fold_entry, SUMS_CHUNK));
			sums->used = 0;
		}
		d = (struct fold_entry *)g_ptr_array_index(sums->chunks, sums->chunks->len - 1)
		    + sums->used++;
		*d = **last;
		*last = *made = d;
	}
	d->count[0] += e->count[0];
	d->count[1] += e->count[1];
	return true;
}

/*
 * Merges the ascending runs of v[0..n) that start at run[0..nrun) into
 * out[0..n).  A heap holds the runs by their first stack: the least run
 * gives every stack that sorts before the least of the others' first
 * stacks at once (found by galloping), so runs that interleave in blocks
 * cost a few comparisons per block rather than per stack.
 *
 * With sums (a table without an index, whose runs may share stacks), a
 * stack that ends one block and starts the next (only there can two runs'
 * equal stacks meet: a run ascends, and the least head goes first) is
 * written once, with both counts.  Returns how many entries went to out.
 */
static size_t merge_all(struct fold_entry **v, size_t n, const size_t *run, size_t nrun,
			struct fold_entry **out, struct sums *sums)
{
	struct run *h = g_new(struct run, nrun);
	struct fold_entry **out0 = out, *made = NULL;

	for (size_t r = 0; r < nrun; r++) {
		h[r] = (struct run){ .p = v + run[r], .end = v + (r + 1 < nrun ? run[r + 1] : n) };
		run_head(&h[r]);
	}
	for (size_t i = nrun / 2; i-- > 0;)
		sift_down(h, nrun, i);
	while (nrun > 1) {
		const struct run *next = nrun > 2 && run_less(&h[2], &h[1]) ? &h[2] : &h[1];
		size_t k;

		/*
		 * count_before() reads the stacks after a run's head, not
		 * read since the run's last block (a thousand blocks ago on
		 * folded-kernel.txt): their entries are fetched when the run
		 * gets its head, their bytes when it is next, a block before
		 * they are read.
		 */
		if (next->end - next->p > 2) {
			__builtin_prefetch(next->p[1]->stack);
			__builtin_prefetch(next->p[2]->stack);
		}
		k = 1 + count_before(h[0].p + 1, (size_t)(h[0].end - h[0].p) - 1,
					    next->s, next->len);

		if (sums && out > out0 && fold_into(&out[-1], h[0].p[0], sums, &made)) {
			memcpy(out, h[0].p + 1, (k - 1) * sizeof(*out));
			out += k - 1;
		} else {
			memcpy(out, h[0].p, k * sizeof(*out));
			out += k;
		}
		h[0].p += k;
		if (h[0].p == h[0].end)
			h[0] = h[--nrun];
		else {
			run_head(&h[0]);
			if (h[0].end - h[0].p > 2) {
				__builtin_prefetch(h[0].p[1]);
				__builtin_prefetch(h[0].p[2]);
			}
		}
		sift_down(h, nrun, 0);
	}
	if (sums && out > out0 && fold_into(&out[-1], h[0].p[0], sums, &made))
		h[0].p++;
	memcpy(out, h[0].p, (size_t)(h[0].end - h[0].p) * sizeof(*out));
	out += h[0].end - h[0].p;
	g_free(h);
	return (size_t)(out - out0);
}

/* Whether sort_into() merges runs, into its spare array. */
static bool merges(const struct fold_table *t)
{
	size_t nrun = t->runs->len + 1;

	return !t->unsorted && nrun * MERGE_MIN_RUN <= t->n && nrun > 1;
}

/*
 * Puts the table's entries in order, NULL-terminated, in v[0..n] or (when
 * merges()) spare[0..n]; returns which.
 */
static struct fold_entry **sort_into(const struct fold_table *t, struct fold_entry **v,
				     struct fold_entry **spare, struct sums *sums, size_t *m)
{
	struct fold_entry **p = v;

	each_entry(t, collect, &p);
	*p = NULL;
	*m = t->n;
	/*
	 * Entries come in insertion order, which is already sorted when the
	 * input is another tool's output (kfold, fgrep-stacks after
	 * fp-collapse), or made of a few long sorted runs when it is such
	 * outputs put together: add() noted where the runs start, and
	 * merging them costs far fewer comparisons than sorting.  Short runs
	 * are sorted.
	 */
	if (merges(t)) {
		size_t nrun = t->runs->len + 1, *run = g_new(size_t, nrun);

		run[0] = 0;
		memcpy(run + 1, t->runs->data, (nrun - 1) * sizeof(*run));
		*m = merge_all(v, t->n, run, nrun, spare, sums);
		spare[*m] = NULL;
		g_free(run);
		return spare;
	}
	if (t->runs->len || t->unsorted)
		sort_entries(v, t->n);
	return v;
}

struct fold_entry **fold_table_sorted(const struct fold_table *t, size_t *n)
{
	struct fold_entry **v, **spare, **r;
	size_t m;

	settled(t);
	v = g_new(struct fold_entry *, t->n + 1);
	spare = merges(t) ? g_new(struct fold_entry *, t->n + 1) : NULL;
	r = sort_into(t, v, spare, NULL, &m);
	g_free(r == v ? spare : v);
	if (n)
		*n = t->n;
	return r;
}

#ifndef PREFETCH_STACK
#define PREFETCH_STACK 16
#endif
#define PREFETCH_ENTRY (2 * PREFETCH_STACK)

/*
 * Writes p[0..n) to out, or straight to its descriptor fd when fd >= 0
 * (stdio would copy every block once more into its own buffer).  Returns
 * 0 or an errno value.
 */
static int put_block(FILE *out, int fd, const char *p, size_t n)
{
	if (fd < 0)
		return fwrite_unlocked(p, 1, n, out) == n ? 0 : errno ? errno : EIO;
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int fold_table_write(const struct fold_table *t, FILE *out, int ncounts,
		     GError **err)
{
	struct fold_table *tw = (struct fold_table *)t;	/* settled first */
	struct sums sums = { NULL, 0 };
	size_t n, m;
	struct fold_entry **all, **v;

	/*
	 * A table without an index is written as it is when its runs merge
	 * (a stack in two runs becoming one line on the way), else indexed
	 * first; an indexed one has its queued additions made.
	 */
	if (!t->hashed && (t->unsorted || (t->runs->len && !merges(t))))
		to_hashed(tw);
	if (t->pend_n)
		fold_table_settle(tw);
	n = t->n;
	/* both arrays in one allocation, as one huge page: 4 KiB page
	 * faults for each cost more than the merge's writes */
	all = big_resize(NULL, 0, 2 * (n + 1) * sizeof(*all));
	v = sort_into(t, all, all + n + 1, t->hashed ? NULL : &sums, &m);
	n = m;
	/* Lines are put together here and written in blocks: four stdio
	 * calls per line cost more than the copying. */
	enum { BLOCK = 1 << 16, LINE_MAX_EXTRA = 2 * FK_COUNT_BUFSZ + 3 };
	char *buf = g_malloc(BLOCK), *p = buf;
	int werr = 0, fd = -1;

	/* what out holds goes first; a stream without a descriptor (a
	 * memory stream) is written through stdio */
	if (fflush(out) == 0 && !ferror(out))
		fd = fileno(out);
	for (struct fold_entry **e = v; *e && !werr; e++) {
		size_t len = (*e)->len;

		/* the entries and their stacks are all over memory (a mapped
		 * input, in the order of its lines): fetch ahead */
		if ((size_t)(e - v) + PREFETCH_STACK < n) {
			if ((size_t)(e - v) + PREFETCH_ENTRY < n)
				__builtin_prefetch(e[PREFETCH_ENTRY]);
			__builtin_prefetch(e[PREFETCH_STACK]->stack);
			__builtin_prefetch(e[PREFETCH_STACK]->stack + 64);
		}

		if ((size_t)(buf + BLOCK - p) < len + LINE_MAX_EXTRA) {
			if (p > buf)
				werr = put_block(out, fd, buf, (size_t)(p - buf));
			p = buf;
			if (len + LINE_MAX_EXTRA > BLOCK) {	/* a huge stack: as it is */
				if (!werr)
					werr = put_block(out, fd, (*e)->stack, len);
				len = 0;
			}
		}
		memcpy(p, (*e)->stack, len);
		p += len;
		*p++ = ' ';
		p += fk_count_format((*e)->count[0], p);
		if (ncounts == 2) {
			*p++ = ' ';
			p += fk_count_format((*e)->count[1], p);
		}
		*p++ = '\n';
	}
	if (!werr && p > buf)
		werr = put_block(out, fd, buf, (size_t)(p - buf));
	g_free(buf);
	big_free(all, 2 * (t->n + 1) * sizeof(*all));
	if (sums.chunks)
		g_ptr_array_free(sums.chunks, TRUE);
	if (!werr && (fflush(out) != 0 || ferror(out)))
		werr = errno ? errno : EIO;
	if (werr) {
		fk_error_at(err, FK_ERROR_IO, "<stdout>", 0, "write error: %s",
			    g_strerror(werr));
		return -1;
	}
	return 0;
}
