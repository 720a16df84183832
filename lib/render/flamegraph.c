#include "render/flamegraph.h"

#include "core/bigmem.h"
#include "core/error.h"
#include "core/folded.h"
#include "core/foldtable.h"
#include "core/stacksort.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* One run of equal consecutive lines, for flame charts. */
struct run {
	struct fold_entry *e;
	fk_count c0, c1;
};

struct span {
	const char *p;
	uint32_t len;
};

struct open_frame {
	struct span name;
	size_t end;		/* where the name ends in the stack (';' or its end) */
	fk_count start, delta;
	fk_count base;		/* first counts through it, its children's
				   added as they close */
	uint64_t seq;
};

struct kept {
	struct fg_frame f;
	uint64_t seq;
};

/*
 * lcp[] of a stack that stack_sort() left in the group before it: the
 * group's stacks share so long a prefix and weigh so little together that
 * no frame past that prefix is wide enough to draw (see prune_limit()).
 */
#define FOLDED STACK_SORT_FOLDED

/*
 * A stack of sorted input (which then needs no table and no sort), or one
 * of a stable input out of order (lcp then waits for compact()).
 */
struct sorted {
	const char *p;
	size_t len;
	size_t lcp;		/* bytes in common with the previous stack */
	fk_count c0, c1;
};

struct flamegraph {
	struct fg_opts o;
	struct fold_table *t;
	GArray *runs;		/* struct run, flamechart only */
	GArray *order;		/* struct stack_key: stacks in first-seen order */
	struct sorted *sorted;	/* nref of them, room for refcap (big_resize()),
				   while the input is sorted or stable (then
				   unsorted past nsorted) */
	size_t nref, refcap;
	size_t nsorted, compact_at;
	GStringChunk *copies;	/* stacks of sorted input that are not stable */
	GPtrArray *readers;	/* mapped files the stacks point into */
	struct folded_shape shape;	/* of the files read, one profile */
	fk_count total1;
	fk_count total0;	/* the first counts of differential input */
	GString *scratch;	/* a stack being reversed */
	GString *chain;		/* a stack being rewritten for chain graphs */
	GStringChunk *names;	/* rewritten stacks: frames point into them */
	bool differential;
	bool negative;		/* a width below zero (fg_add() of a caller) */
	bool built;
	size_t maxlen;		/* the longest stack */
	uint64_t cut;		/* stacks cut at FG_MAX_DEPTH */

	GArray *frames;		/* struct fg_frame, after fg_build(); while
				   building, when keep_all, by sequence */
	bool keep_all;		/* no frame can be dropped: each is stored
				   where it opened, with no kept[] and no sort */
	fk_count sum, timemax;
	bool total_ignored;
	uint32_t depthmax;
	double maxdelta;	/* of a stack's self change */
	double maxtotal;	/* of a drawn frame's total change */

	/* walk state */
	GArray *open;		/* struct open_frame */
	struct open_frame *cur;	/* the new frames of the stack */
	size_t ncur, curcap;
	const char *prev;	/* the stack merged last */
	size_t prevlen;
	struct kept *kept;	/* plain arrays: a push is a store, not a call */
	size_t nkept, keptcap;
	double min_count;	/* frames narrower than this are dropped */
	uint64_t seq;
};

/* Appends x to fg->sorted. */
static void push_sorted(struct flamegraph *fg, const struct sorted *x)
{
	fg->sorted = big_reserve(fg->sorted, &fg->refcap, fg->nref + 1, sizeof(*x));
	fg->sorted[fg->nref++] = *x;
}

struct flamegraph *fg_new(const struct fg_opts *o)
{
	struct flamegraph *fg = g_new0(struct flamegraph, 1);

	fg->o = *o;
	fg->t = fold_table_new();
	fg->scratch = g_string_new(NULL);
	fg->chain = g_string_new(NULL);
	fg->names = g_string_chunk_new(1 << 16);
	if (o->flamechart)
		fg->runs = g_array_new(FALSE, FALSE, sizeof(struct run));
	else {
		fg->refcap = 1024;
		fg->sorted = big_resize(NULL, 0, fg->refcap * sizeof(struct sorted));
	}
	fg->compact_at = (size_t)1 << 16;
	fg->copies = g_string_chunk_new(1 << 20);
	fg->readers = g_ptr_array_new_with_free_func((GDestroyNotify)folded_reader_free);
	fg->maxdelta = fg->maxtotal = 1;
	return fg;
}

void fg_free(struct flamegraph *fg)
{
	if (!fg)
		return;
	fold_table_free(fg->t);
	if (fg->runs)
		g_array_free(fg->runs, TRUE);
	if (fg->order)
		g_array_free(fg->order, TRUE);
	big_free(fg->sorted, fg->refcap * sizeof(struct sorted));
	g_string_chunk_free(fg->copies);
	g_ptr_array_free(fg->readers, TRUE);
	folded_shape_release(&fg->shape);
	if (fg->frames)
		g_array_free(fg->frames, TRUE);
	g_string_free(fg->scratch, TRUE);
	g_string_free(fg->chain, TRUE);
	g_string_chunk_free(fg->names);
	g_free(fg);
}

/* Appends the ';'-separated fields of s in reverse order to out. */
static void append_reversed(GString *out, const char *s, size_t len)
{
	size_t end = len;

	for (;;) {
		const char *semi = end ? memrchr(s, ';', end) : NULL;
		size_t start = semi ? (size_t)(semi - s) + 1 : 0;

		g_string_append_len(out, s + start, (gssize)(end - start));
		if (!semi)
			break;
		g_string_append_c(out, ';');
		end = start - 1;
	}
}

static void compact(struct flamegraph *fg, uint64_t limit);

/* The table path: any order, equal stacks merged by the table. */
static void add_to_table(struct flamegraph *fg, const char *stack, size_t len,
			 fk_count c0, fk_count c1, bool stable)
{
	size_t known = fold_table_size(fg->t);
	struct fold_entry *e = stable
		? fold_table_add2_ref(fg->t, stack, len, c0, c1)
		: fold_table_add2(fg->t, stack, len, c0, c1);

	if (fg->order && fold_table_size(fg->t) != known) {
		struct stack_key k = { e->stack, e->len, { .e = e }, 0, 0 };

		g_array_append_val(fg->order, k);
	}
	if (fg->runs) {
		struct run *last = fg->runs->len
			? &g_array_index(fg->runs, struct run, fg->runs->len - 1) : NULL;

		if (last && last->e == e) {
			last->c0 += c0;
			last->c1 += c1;
		} else {
			struct run r = { e, c0, c1 };
			g_array_append_val(fg->runs, r);
		}
	}
}

/*
 * Sorted input (fp-collapse's) is merged as it comes: a stack equal to the
 * last one adds to it, a greater one is appended with the length of the
 * prefix they share, which the flow needs anyway.  From the first stack out
 * of order on, stable stacks are appended as they come and sorted by
 * compact(), and a stack to be copied moves everything into the table.
 */
static bool add_sorted(struct flamegraph *fg, const char *stack, size_t len,
		       fk_count c0, fk_count c1, bool stable)
{
	if (stable && fg->nsorted < fg->nref) {	/* unsorted already */
		struct sorted x = { stack, len, 0, c0, c1 };

		push_sorted(fg, &x);
		if (fg->nref >= fg->compact_at)
			compact(fg, 0);
		return true;
	}

	struct sorted *last = fg->nref ? &fg->sorted[fg->nref - 1] : NULL;
	const char *lp = last ? last->p : "";
	size_t llen = last ? last->len : 0;
	size_t l = stack_common_len(lp, llen, stack, len);

	if (last && l == len && l == llen) {
		last->c0 += c0;
		last->c1 += c1;
		return true;
	}
	if (fg->nsorted < fg->nref ||
	    (l < llen && (l == len || (unsigned char)stack[l] < (unsigned char)lp[l]))) {
		/* (an unstable stack after unsorted stable ones comes here) */
		if (stable) {
			/* out of order: keep the references, sort them */
			struct sorted x = { stack, len, 0, c0, c1 };

			push_sorted(fg, &x);
			if (fg->nref >= fg->compact_at)
				compact(fg, 0);
			return true;
		}
		/* out of order and to be copied: from now on, the table */
		fg->order = g_array_sized_new(FALSE, FALSE, sizeof(struct stack_key),
					      (guint)(fg->nref * 2 + 16));
		for (size_t i = 0; i < fg->nref; i++) {
			struct sorted *x = &fg->sorted[i];

			add_to_table(fg, x->p, x->len, x->c0, x->c1, true);
		}
		big_free(fg->sorted, fg->refcap * sizeof(struct sorted));
		fg->sorted = NULL;
		fg->nref = fg->refcap = 0;
		return false;
	}
	struct sorted x = {
		.p = stable ? stack
			    : g_string_chunk_insert_len(fg->copies, stack, (gssize)len),
		.len = len, .lcp = l, .c0 = c0, .c1 = c1,
	};
	push_sorted(fg, &x);
	fg->nsorted++;
	return true;
}

static void add(struct flamegraph *fg, const char *stack, size_t len,
		fk_count c0, fk_count c1, int ncounts, bool stable)
{
	/* A plain line counts the same in both columns: no change. */
	if (ncounts == 2)
		fg->differential = true;
	else
		c1 = c0;
	fg->total0 += c0;
	fg->total1 += c1;
	if (c1 < 0)
		fg->negative = true;
	if (len > fg->maxlen)
		fg->maxlen = len;
	if (fg->o.reverse) {
		GString *s = fg->scratch;

		g_string_truncate(s, 0);
		append_reversed(s, stack, len);
		stack = s->str;
		len = s->len;
		stable = false;
	}
	if (fg->sorted && add_sorted(fg, stack, len, c0, c1, stable))
		return;
	add_to_table(fg, stack, len, c0, c1, stable);
}

void fg_add(struct flamegraph *fg, const char *stack, size_t len,
	    fk_count c0, fk_count c1, int ncounts)
{
	add(fg, stack, len, c0, c1, ncounts, false);
}

void fg_add_ref(struct flamegraph *fg, const char *stack, size_t len,
		fk_count c0, fk_count c1, int ncounts)
{
	add(fg, stack, len, c0, c1, ncounts, true);
}

/*
 * fk_count_to_double() with 64-bit division when the count fits, as nearly
 * all do: the same two operands, so the same double, without the 128-bit
 * division helper called for every frame.
 */
static inline double count_to_double(fk_count c)
{
	if (c >= 0 && c <= INT64_MAX) {
		int64_t v = (int64_t)c, one = (int64_t)FK_COUNT_ONE;

		return (double)(v / one) + (double)(v % one) / (double)one;
	}
	return fk_count_to_double(c);
}

/* Doubles an array's capacity (at least 64 elements). */
static void *grow_array(void *p, size_t *cap, size_t size)
{
	*cap = *cap ? *cap * 2 : 64;
	return g_realloc_n(p, *cap, size);
}

static inline void push_frame(struct flamegraph *fg, const char *s, size_t i,
			      size_t end)
{
	if (fg->ncur == fg->curcap)
		fg->cur = grow_array(fg->cur, &fg->curcap, sizeof(*fg->cur));
	fg->cur[fg->ncur++] = (struct open_frame){
		.name = { s + i, (uint32_t)(end - i) }, .end = end };
}

/*
 * Splits s[i..len) at each ';' into fg->cur, at most max frames; returns
 * false when frames were left out.  Frames are short (tens of bytes), so
 * one pass sixteen bytes at a time beats a memchr() per frame.
 */
static bool split_frames(struct flamegraph *fg, const char *s, size_t i,
			 size_t len, size_t max)
{
	size_t j = i;

	fg->ncur = 0;
	if (max == 0)
		return false;
#ifdef __SSE2__
	const __m128i semi = _mm_set1_epi8(';');

	for (; j + 16 <= len; j += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + j));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, semi));

		while (m) {
			size_t at = j + (size_t)__builtin_ctz(m);

			push_frame(fg, s, i, at);
			if (fg->ncur == max)
				return false;
			i = at + 1;
			m &= m - 1;
		}
	}
#endif
	for (; j < len; j++)
		if (s[j] == ';') {
			push_frame(fg, s, i, j);
			if (fg->ncur == max)
				return false;
			i = j + 1;
		}
	push_frame(fg, s, i, len);
	return true;
}

int fg_add_file(struct flamegraph *fg, const char *path,
		struct skip_log *skips, GError **err)
{
	struct folded_reader *r = folded_reader_open_mapped(path, skips, err);
	void (*add)(struct flamegraph *, const char *, size_t, fk_count,
		    fk_count, int);
	struct folded_line fl;
	int rc;

	if (!r)
		return -1;
	add = folded_reader_stable(r) ? fg_add_ref : fg_add;
	folded_reader_set_shape(r, &fg->shape);
	while ((rc = folded_reader_next(r, &fl, err)) > 0)
		add(fg, fl.stack, fl.len, fl.count[0], fl.count[1], fl.ncounts);
	/* a mapped file holds stacks the graph points to: keep it */
	g_ptr_array_add(fg->readers, r);
	return rc < 0 ? -1 : 0;
}

static void close_frame(struct flamegraph *fg, uint32_t depth, fk_count end)
{
	struct open_frame *of = &g_array_index(fg->open, struct open_frame, depth);
	fk_count w = end - of->start;

	/* a frame too narrow to draw still holds its parent's first counts */
	if (depth > 0)
		of[-1].base += of->base;
	if (fg->keep_all) {
		if (of->seq >= fg->frames->len)
			g_array_set_size(fg->frames, MAX((guint)of->seq + 1, fg->frames->len * 2));
		g_array_index(fg->frames, struct fg_frame, of->seq) = (struct fg_frame){
			.name = of->name.p, .len = of->name.len, .depth = depth,
			.start = of->start, .end = end, .delta = of->delta,
			.base = of->base };
		fg->nkept++;
		if (depth > fg->depthmax)
			fg->depthmax = depth;
		return;
	}
	if (count_to_double(w) < fg->min_count)
		return;
	struct kept k = {
		.f = { .name = of->name.p, .len = of->name.len, .depth = depth,
		       .start = of->start, .end = end, .delta = of->delta,
		       .base = of->base },
		.seq = of->seq,
	};
	if (fg->nkept == fg->keptcap)
		fg->kept = grow_array(fg->kept, &fg->keptcap, sizeof(*fg->kept));
	fg->kept[fg->nkept++] = k;
	if (depth > fg->depthmax)
		fg->depthmax = depth;
}

/*
 * flamegraph.pl's chain-graph rewrite: split at ";--;" (left to right,
 * trailing empty parts dropped), then the first part, ";--;" even when it
 * is the only one (so every stack ends in a "--" frame or keeps its
 * waker), and the other parts joined by ";--;", each of their frames
 * marked a waker's with "_[w]" (the palette's cue, shown in the names as
 * flamegraph.pl shows it): "wakee;f;--;g;waker" becomes
 * "wakee;f;--;g_[w];waker_[w]".
 */
static void chain_rewrite(GString *out, const char *s, size_t len)
{
	static const char sep[] = ";--;", mark[] = "_[w]";
	const size_t seplen = sizeof(sep) - 1, marklen = sizeof(mark) - 1;
	size_t first_end, end = len, at;
	const char *p;

	/* trailing empty parts: the string ends with the separator */
	while (end >= seplen && memcmp(s + end - seplen, sep, seplen) == 0)
		end -= seplen;
	p = memmem(s, end, sep, seplen);
	first_end = p ? (size_t)(p - s) : end;
	g_string_truncate(out, 0);
	g_string_append_len(out, s, (gssize)first_end);
	g_string_append_len(out, sep, (gssize)seplen);
	if (!p)
		return;
	/* the waker parts: each ';' in them, and each part's end, marked */
	for (at = first_end + seplen; at <= end;) {
		const char *next = memmem(s + at, end - at, sep, seplen);
		size_t part_end = next ? (size_t)(next - s) : end;

		for (size_t i = at; i < part_end; i++) {
			if (s[i] == ';')
				g_string_append_len(out, mark, (gssize)marklen);
			g_string_append_c(out, s[i]);
		}
		g_string_append_len(out, mark, (gssize)marklen);
		if (!next)
			break;
		g_string_append_len(out, sep, (gssize)seplen);
		at = part_end + seplen;
	}
}

/*
 * A first count scaled to the second profile's total (normalize): c *
 * total1 / total0 rounded to the nearest unit, exact while the product
 * fits in 127 bits (both below 2^63 units, 9.2 billion counts), else in
 * double precision.
 */
static fk_count scale_first(const struct flamegraph *fg, fk_count c)
{
	fk_count t0 = fg->total0, t1 = fg->total1;
	bool neg = c < 0;
	double q;

	if (t0 <= 0 || t0 == t1 || t1 < 0)
		return c;
	if (neg)
		c = -c;
	if (c < ((fk_count)1 << 63) && t1 < ((fk_count)1 << 63) &&
	    t0 < ((fk_count)1 << 125)) {
		c = (c * t1 + t0 / 2) / t0;
		return neg ? -c : c;
	}
	q = fk_count_to_double(c) * fk_count_to_double(t1) /
	    fk_count_to_double(t0) * (double)FK_COUNT_ONE;
	c = q >= 0x1p126 ? ((fk_count)1 << 126) : (fk_count)(q + 0.5);
	return neg ? -c : c;
}

/* flamegraph.pl's flow(): close what differs from the last stack, open the
 * rest, at the current position. */
static void merge(struct flamegraph *fg, const char *s, size_t len, size_t l,
		  fk_count *pos, fk_count c0, fk_count c1)
{
	GArray *open = fg->open;
	uint32_t n, same = 1, nopen = open->len;
	fk_count d = c1 - (fg->o.normalize ? scale_first(fg, c0) : c0);
	size_t i;
	double ad;

	if (fg->o.chain) {
		chain_rewrite(fg->chain, s, len);
		len = fg->chain->len;
		s = g_string_chunk_insert_len(fg->names, fg->chain->str,
					      (gssize)len);
		l = SIZE_MAX;
	}

	/*
	 * Stacks come sorted, so most share a long prefix with the previous
	 * one: the open frames that end before the first differing byte stay
	 * open, and only the rest of the stack is split into frames.
	 */
	if (l == SIZE_MAX)	/* not known from add_sorted() */
		l = stack_common_len(fg->prev, fg->prevlen, s, len);
	if (l == len && l == fg->prevlen) {
		n = nopen;		/* the same stack again */
		goto leaf;
	}
	while (same < nopen &&
	       g_array_index(open, struct open_frame, same).end < l)
		same++;
	/* a frame ending where one stack ends and the other goes on */
	if (same < nopen && g_array_index(open, struct open_frame, same).end == l &&
	    ((l == fg->prevlen && s[l] == ';') || (l == len && fg->prev[l] == ';')))
		same++;
	n = same;
	i = same == 1 ? 0 : g_array_index(open, struct open_frame, same - 1).end + 1;
	fg->ncur = 0;
	if (i <= len) {		/* i > len: the stack ends with a shared frame */
		/* frames past FG_MAX_DEPTH are not drawn, nor held */
		if (!split_frames(fg, s, i, len, FG_MAX_DEPTH + 1 - same))
			fg->cut++;
		n += (uint32_t)fg->ncur;
	}
	/* like Perl's split, drop trailing empty frames (never the root) */
	while (n > 1) {
		const struct open_frame *last = n > same
			? &fg->cur[n - same - 1]
			: &g_array_index(open, struct open_frame, n - 1);

		if (last->name.len)
			break;
		n--;
	}
	if (n < same)
		same = n;

	for (uint32_t k = nopen; k-- > same;)
		close_frame(fg, k, *pos);
	g_array_set_size(open, n);
	for (uint32_t k = same; k < n; k++) {
		struct open_frame *of = &g_array_index(open, struct open_frame, k);

		*of = fg->cur[k - same];
		of->start = *pos;
		of->delta = 0;
		of->base = 0;
		of->seq = fg->seq++;
	}
leaf:
	fg->prev = s;
	fg->prevlen = len;
	g_array_index(open, struct open_frame, n - 1).delta += d;
	g_array_index(open, struct open_frame, n - 1).base += c0;
	ad = count_to_double(d < 0 ? -d : d);
	if (ad > fg->maxdelta)
		fg->maxdelta = ad;
	*pos += c1;
}

/* A width for light(): enough to tell whether a group is under limit. */
static inline uint64_t weight(fk_count c, uint64_t limit)
{
	return c < (fk_count)limit ? (uint64_t)c : limit;
}

/* Whether a sorted stack adds to the one before (of length lastlen). */
static inline bool joins(size_t lcp, size_t len, size_t lastlen)
{
	return lcp == FOLDED || (lcp == len && lastlen == len);
}

/*
 * Stable stacks that come out of order are kept as references, not in the
 * table: sorting them finds equal stacks anyway, so they are summed here,
 * which saves hashing every stack.  Sorting whenever the references double
 * keeps memory within twice the distinct stacks (or 64Ki references).
 * With a limit (the last time), light groups fold into one prefix each.
 */
static void compact(struct flamegraph *fg, uint64_t limit)
{
	struct sorted *x = fg->sorted;
	size_t n = fg->nref, w = 0;
	struct stack_key *k = big_resize(NULL, 0, n * sizeof(*k));
	size_t *lcp = big_resize(NULL, 0, n * sizeof(*lcp));

	for (size_t i = 0; i < n; i++)
		k[i] = (struct stack_key){ x[i].p, x[i].len, { .i = i }, 0,
				      weight(x[i].c1, limit) };
	stack_sort(k, n, lcp, limit);
	/*
	 * The last time (light groups folded), or with few stacks left,
	 * gather them in order into a new array rather than permute all in
	 * place (a cache miss per stack); k[j].len is the length to draw, a
	 * folded group's prefix.
	 */
	for (size_t j = 0, lastlen = 0; j < n; j++)
		if (!w || !joins(lcp[j], k[j].len, lastlen)) {
			w++;
			lastlen = k[j].len;
		}
	if (limit || w <= n / 4) {
		struct sorted *y = big_resize(NULL, 0, w * sizeof(*y));
		size_t cap = w;

		w = 0;
		for (size_t j = 0; j < n; j++) {
			const struct sorted *src = &x[k[j].i];

			if (j + 8 < n)
				__builtin_prefetch(&x[k[j + 8].i]);
			if (w && joins(lcp[j], k[j].len, y[w - 1].len)) {
				y[w - 1].c0 += src->c0;
				y[w - 1].c1 += src->c1;
				continue;
			}
			y[w++] = (struct sorted){ k[j].p, k[j].len, lcp[j],
						  src->c0, src->c1 };
		}
		big_free(x, fg->refcap * sizeof(*x));
		fg->sorted = y;
		fg->refcap = cap;
		goto done;
	}
	w = 0;
	/*
	 * Put x in sorted order in place, one cycle of the permutation at a
	 * time (a second array would cost as many fresh pages as x holds).
	 */
	for (size_t j = 0; j < n; j++) {
		struct sorted t;
		size_t cur = j;

		if (k[j].i == j)
			continue;
		t = x[j];
		for (;;) {
			size_t src = k[cur].i;

			k[cur].i = cur;		/* placed */
			if (src == j) {
				x[cur] = t;
				break;
			}
			x[cur] = x[src];
			cur = src;
		}
	}
	/* then sum equal neighbours and folded groups */
	for (size_t j = 0; j < n; j++) {
		if (w && joins(lcp[j], k[j].len, x[w - 1].len)) {
			x[w - 1].c0 += x[j].c0;
			x[w - 1].c1 += x[j].c1;
			continue;
		}
		x[w] = x[j];
		x[w].len = k[j].len;
		x[w++].lcp = lcp[j];
	}
done:
	big_free(k, n * sizeof(*k));
	big_free(lcp, n * sizeof(*lcp));
	fg->nref = fg->nsorted = w;
	fg->compact_at = MAX(2 * w, (size_t)1 << 16);
}

/*
 * A limit on widths (in count units) under which every frame is too narrow
 * to draw: the sort need not order the stacks of a group that weighs less
 * (stack_sort()).  0 (none) where the flow needs every stack: with
 * differential counts (deltas and maxdelta are per stack), chain graphs
 * (stacks rewritten), negative widths, and stacks that may be cut at
 * FG_MAX_DEPTH (counted per stack).
 */
static uint64_t prune_limit(const struct flamegraph *fg)
{
	fk_count c;

	if (fg->differential || fg->o.chain || fg->negative ||
	    fg->maxlen >= FG_MAX_DEPTH || !(fg->min_count > 0) ||
	    fg->min_count > 4e9)	/* keeps the limit below 2^62 units */
		return 0;
	/* the widest width drawn narrower than min_count, plus one */
	c = (fk_count)(fg->min_count * (double)FK_COUNT_ONE);
	while (c > 0 && count_to_double(c) >= fg->min_count)
		c -= 1 + c / 1000000;
	if (c < 0)
		c = 0;
	return (uint64_t)c + 1;
}

static int by_seq(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int fg_build(struct flamegraph *fg, GError **err)
{
	fk_count pos = 0;
	double timemax, widthpertime;
	uint64_t limit;

	g_return_val_if_fail(!fg->built, -1);
	fg->built = true;
	fg->sum = fg->total1;
	if (fg->sum <= 0) {
		g_set_error_literal(err, FK_ERROR, FK_ERROR_PARSE, "no stack counts found");
		return -1;
	}
	fg->timemax = fg->sum;
	if (fg->o.total) {
		if (fg->o.total < fg->sum)
			fg->total_ignored = true;
		else
			fg->timemax = fg->o.total;
	}
	timemax = fk_count_to_double(fg->timemax);
	widthpertime = (fg->o.image_width - 2 * fg->o.xpad) / timemax;
	fg->min_count = fg->o.minwidth_pct ? timemax * fg->o.minwidth / 100
					   : fg->o.minwidth / widthpertime;

	fg->open = g_array_new(FALSE, FALSE, sizeof(struct open_frame));
	limit = prune_limit(fg);
	/* with no minimum width (and no negative width), every frame stays */
	fg->keep_all = !(fg->min_count > 0) && !fg->negative;
	if (fg->keep_all)
		fg->frames = g_array_new(FALSE, FALSE, sizeof(struct fg_frame));

	{
		/* the root, "all", spans everything */
		struct span root = { "", 0 };
		struct open_frame of = { .name = root, .seq = fg->seq++ };

		g_array_append_val(fg->open, of);
		fg->prev = "";
		fg->prevlen = 0;
	}
	if (fg->runs) {
		for (guint i = 0; i < fg->runs->len; i++) {
			struct run *r = &g_array_index(fg->runs, struct run, i);

			merge(fg, r->e->stack, r->e->len, SIZE_MAX, &pos, r->c0,
			      r->c1);
		}
	} else if (fg->sorted) {
		if (fg->nsorted < fg->nref)
			compact(fg, limit);
		for (size_t i = 0; i < fg->nref; i++) {
			struct sorted *x = &fg->sorted[i];

			if (i + 4 < fg->nref)	/* where the flow will read */
				__builtin_prefetch(x[4].p + x[4].lcp);
			merge(fg, x->p, x->len, x->lcp, &pos, x->c0, x->c1);
		}
	} else {
		struct stack_key *v = (struct stack_key *)(void *)fg->order->data;
		size_t n = fg->order->len, i = 1;

		/* input that is sorted already (fp-collapse's is) needs no sort */
		while (i < n && stack_cmp(v[i - 1].p, v[i - 1].len, v[i].p, v[i].len) < 0)
			i++;
		/* the sort finds the prefix each stack shares with the one
		 * before it, which the flow needs */
		size_t *lcp = NULL;

		if (i < n) {
			lcp = g_new(size_t, n);
			for (size_t j = 0; j < n; j++)
				v[j].w = weight(v[j].e->count[1], limit);
			stack_sort(v, n, lcp, limit);
		}
		for (i = 0; i < n;) {
			fk_count c0 = v[i].e->count[0], c1 = v[i].e->count[1];
			size_t j = i + 1;

			if (lcp && i + 4 < n && lcp[i + 4] != FOLDED)	/* where the flow will read */
				__builtin_prefetch(v[i + 4].p + lcp[i + 4]);
			for (; lcp && j < n && lcp[j] == FOLDED; j++) {
				c0 += v[j].e->count[0];
				c1 += v[j].e->count[1];
			}
			merge(fg, v[i].p, v[i].len, lcp ? lcp[i] : SIZE_MAX, &pos,
			      c0, c1);
			i = j;
		}
		g_free(lcp);
	}
	for (uint32_t i = fg->open->len; i-- > 0;)
		close_frame(fg, i, pos);

	/*
	 * Frames close children first; the graph lists them in the order
	 * they opened: by their sequence numbers, sorted unless they were
	 * stored by them (keep_all).
	 */
	if (fg->keep_all) {
		g_array_set_size(fg->frames, (guint)fg->nkept);
	} else {
		fg->frames = g_array_sized_new(FALSE, FALSE, sizeof(struct fg_frame),
					       (guint)fg->nkept);
		if (fg->nkept > 1)
			qsort(fg->kept, fg->nkept, sizeof(struct kept), by_seq);
		for (size_t i = 0; i < fg->nkept; i++)
			g_array_append_val(fg->frames, fg->kept[i].f);
	}
	for (size_t i = 0; i < fg->nkept; i++) {
		struct fg_frame *f = &g_array_index(fg->frames, struct fg_frame, i);

		if (f->depth == 0)
			f->end = fg->timemax;	/* the root spans --total too */
		if (fg->differential && fg->o.diff == FG_DIFF_TOTAL) {
			fk_count d = fg_frame_total_change(fg, f);
			double ad = count_to_double(d < 0 ? -d : d);

			if (ad > fg->maxtotal)
				fg->maxtotal = ad;
		}
	}
	g_array_free(fg->open, TRUE);
	g_free(fg->cur);
	g_free(fg->kept);
	fg->open = NULL;
	fg->cur = NULL;
	fg->kept = NULL;
	return 0;
}

size_t fg_nframes(const struct flamegraph *fg)
{
	return fg->frames ? fg->frames->len : 0;
}

const struct fg_frame *fg_frame(const struct flamegraph *fg, size_t i)
{
	return &g_array_index(fg->frames, struct fg_frame, i);
}

fk_count fg_sum(const struct flamegraph *fg)
{
	return fg->sum;
}

fk_count fg_timemax(const struct flamegraph *fg)
{
	return fg->timemax;
}

bool fg_total_ignored(const struct flamegraph *fg)
{
	return fg->total_ignored;
}

uint32_t fg_depthmax(const struct flamegraph *fg)
{
	return fg->depthmax;
}

uint64_t fg_cut_stacks(const struct flamegraph *fg)
{
	return fg->cut;
}

const struct folded_shape *fg_shape(const struct flamegraph *fg)
{
	return &fg->shape;
}

bool fg_differential(const struct flamegraph *fg)
{
	return fg->differential;
}

double fg_maxdelta(const struct flamegraph *fg)
{
	return fg->o.diff == FG_DIFF_TOTAL ? fg->maxtotal : fg->maxdelta;
}

enum fg_diff fg_diff_mode(const struct flamegraph *fg)
{
	return fg->o.diff;
}

fk_count fg_frame_total_change(const struct flamegraph *fg,
			       const struct fg_frame *f)
{
	fk_count width = f->depth == 0 ? fg->sum : f->end - f->start;

	return width - (fg->o.normalize ? scale_first(fg, f->base) : f->base);
}

fk_count fg_frame_change(const struct flamegraph *fg, const struct fg_frame *f)
{
	return fg->o.diff == FG_DIFF_TOTAL ? fg_frame_total_change(fg, f)
					   : f->delta;
}
