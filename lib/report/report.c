#include "report/report.h"

#include "core/error.h"
#include "core/splitindex.h"
#include "report/model.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

/* --- shares ------------------------------------------------------------ */

typedef unsigned __int128 u128;

/* a * b as 256 bits, hi:lo */
static void mul256(u128 a, u128 b, u128 *hi, u128 *lo)
{
	u128 a0 = (uint64_t)a, a1 = a >> 64, b0 = (uint64_t)b, b1 = b >> 64;
	u128 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	u128 mid = (p00 >> 64) + (uint64_t)p01 + (uint64_t)p10;

	*lo = (mid << 64) | (uint64_t)p00;
	*hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
}

int share_cmp(fk_count a, fk_count ta, fk_count b, fk_count tb)
{
	u128 h1, l1, h2, l2;

	if (ta <= 0 || a < 0)
		a = 0, ta = 1;
	if (tb <= 0 || b < 0)
		b = 0, tb = 1;
	mul256((u128)a, (u128)tb, &h1, &l1);
	mul256((u128)b, (u128)ta, &h2, &l2);
	if (h1 != h2)
		return h1 < h2 ? -1 : 1;
	return l1 < l2 ? -1 : l1 > l2;
}

bool share_at_least(fk_count c, fk_count total, fk_count frac)
{
	return share_cmp(c, total, frac, FK_COUNT_ONE) >= 0;
}

uint64_t share_scaled(fk_count c, fk_count total, uint64_t scale)
{
	u128 uc, ut, q, r, res;

	if (total <= 0 || c <= 0)
		return 0;
	uc = (u128)c;
	ut = (u128)total;
	while (ut >= (u128)1 << 123) {
		uc >>= 1;
		ut >>= 1;
	}
	q = uc / ut;
	r = uc % ut;
	res = q * scale;
	for (uint64_t s = scale; s > 1; s /= 10) {
		r *= 10;
		res += r / ut * (s / 10);
		r %= ut;
	}
	if (2 * r >= ut)
		res++;
	return (uint64_t)res;
}

const char *count_str(fk_count c, char *buf)
{
	buf[fk_count_format(c, buf)] = '\0';
	return buf;
}

const char *count_grouped(fk_count c, char *buf)
{
	char d[FK_COUNT_BUFSZ];
	size_t n = fk_count_format(c, d), ilen = 0, k = 0;

	while (ilen < n && d[ilen] != '.')
		ilen++;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && i < ilen && d[0] != '-' && (ilen - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = d[i];
	}
	buf[k] = '\0';
	return buf;
}

/* --- findings ---------------------------------------------------------- */

struct finding *finding_new(const struct report_rule *rule, struct fk_str frame,
			    fk_count count)
{
	struct finding *f = g_new0(struct finding, 1);

	f->rule = rule;
	f->buf = g_string_new(NULL);
	f->parts = g_array_new(FALSE, FALSE, sizeof(struct text_part));
	f->frame = frame;
	f->count = count;
	f->save = -1;
	f->cls = "on-cpu";
	return f;
}

void finding_free(struct finding *f)
{
	if (!f)
		return;
	g_string_free(f->buf, TRUE);
	g_array_free(f->parts, TRUE);
	g_free(f);
}

static void add_part(struct finding *f, const char *s, size_t len, bool code)
{
	struct text_part p = { (uint32_t)f->buf->len, (uint32_t)len, code };

	g_string_append_len(f->buf, s, (gssize)len);
	g_array_append_val(f->parts, p);
}

void finding_text(struct finding *f, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	add_part(f, s, strlen(s), false);
	g_free(s);
}

void finding_code(struct finding *f, struct fk_str s)
{
	add_part(f, s.s, s.len, true);
}

void finding_edge(struct finding *f, const struct frame_stat *a,
		  const struct frame_stat *b)
{
	/* one code span for the pair, as seed 000 writes "function → child" */
	GString *g = g_string_new(NULL);

	f->from = a ? a->name : (struct fk_str){ "", 0 };
	f->to = b->name;
	if (a) {
		g_string_append_len(g, a->name.s, (gssize)a->name.len);
		g_string_append(g, " \u2192 ");
	}
	g_string_append_len(g, b->name.s, (gssize)b->name.len);
	add_part(f, g->str, g->len, true);
	g_string_free(g, TRUE);
}

const char *finding_unit(const struct finding *f, const struct report *r)
{
	if (f->unit)
		return f->unit;
	return f->off && r->off != r->p ? r->o->offcpu_unit : r->o->unit;
}

fk_count count_ns(fk_count c, const char *unit)
{
	static const struct { const char *u; int64_t per; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "\u00b5s", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000 },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(units); i++)
		if (strcmp(unit, units[i].u) == 0)
			return c * units[i].per;
	return -1;
}

void finding_amount(struct finding *f, const struct report *r, fk_count c,
		    fk_count total)
{
	char buf[FK_COUNT_BUFSZ * 2];
	const char *unit = finding_unit(f, r);
	uint64_t pm = share_scaled(c, total, 1000);

	f->total = total;
	f->save = f->info ? 0 : count_ns(c, unit);
	finding_text(f, " (%s %s%s, %" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT "%%)",
		     count_grouped(c, buf), unit, !f->off ? "" : r->off == r->p ? "" : " off-CPU",
		     pm / 10, pm % 10);
}

/* --- building the model ------------------------------------------------ */

struct report_priv {
	struct report r;
	struct fold_table *groups;	/* --group-threads names */
};

/*
 * The k highest-ranked items of a stream, rank(a, b) negative when a ranks
 * before b: a heap whose root is the lowest-ranked item kept, so an item
 * costs O(log k); top_sorted() then orders what is kept.
 */
struct top {
	GPtrArray *v;
	size_t k;
	int (*rank)(const void *, const void *);
};

static void top_offer(struct top *t, void *item)
{
	void **h;
	size_t i, n;

	if (t->k == 0)
		return;
	if (t->v->len < t->k) {
		g_ptr_array_add(t->v, item);
		h = t->v->pdata;
		for (i = t->v->len - 1; i > 0 && t->rank(h[(i - 1) / 2], h[i]) < 0; i = (i - 1) / 2) {
			void *x = h[i];

			h[i] = h[(i - 1) / 2];
			h[(i - 1) / 2] = x;
		}
		return;
	}
	h = t->v->pdata;
	n = t->v->len;
	if (t->rank(item, h[0]) >= 0)
		return;
	h[0] = item;
	for (i = 0;;) {
		size_t c = 2 * i + 1, worst = i;

		if (c < n && t->rank(h[worst], h[c]) < 0)
			worst = c;
		if (c + 1 < n && t->rank(h[worst], h[c + 1]) < 0)
			worst = c + 1;
		if (worst == i)
			break;
		h[i] = h[worst];
		h[worst] = item;
		i = worst;
	}
}

static int (*sort_rank)(const void *, const void *);

static int cmp_ranked(const void *a, const void *b)
{
	return sort_rank(*(void *const *)a, *(void *const *)b);
}

static void top_sort(struct top *t)
{
	sort_rank = t->rank;
	if (t->v->len > 1)	/* an empty array's pdata may be NULL */
		qsort(t->v->pdata, t->v->len, sizeof(void *), cmp_ranked);
}

static int rank_count(fk_count a, fk_count b)
{
	return a > b ? -1 : a < b;
}

/* the text of a row's stack, "ROOT;TAIL", compared bytewise (a piece
 * at a time, as profile_stack_cmp() does) */
static int rank_path(const void *a, const void *b)
{
	const struct path_row *x = a, *y = b;
	struct fk_str px[3] = { x->root, { ";", 1 }, x->tail };
	struct fk_str py[3] = { y->root, { ";", 1 }, y->tail };
	int nx = x->tail.s ? 3 : 1, ny = y->tail.s ? 3 : 1, i = 0, j = 0;
	size_t oi = 0, oj = 0;
	int c = rank_count(x->count, y->count);

	if (c)
		return c;
	while (i < nx && j < ny) {
		size_t n = MIN(px[i].len - oi, py[j].len - oj);

		if (n && (c = memcmp(px[i].s + oi, py[j].s + oj, n)))
			return c;
		oi += n;
		oj += n;
		if (oi == px[i].len)
			i++, oi = 0;
		if (oj == py[j].len)
			j++, oj = 0;
	}
	return (i < nx) - (j < ny);
}

void frame_row_name(const struct frame_row *row, GString *g)
{
	if (row->f)
		g_string_append_len(g, row->f->name.s, (gssize)row->f->name.len);
	if (row->kpart)
		g_string_append_printf(g, "%s[kernel: %s]", row->f ? " -> " : "",
				       profile_kpart_label(row->kpart));
}

/* a row's name compared with another's, bytewise as frame_row_name()
 * writes them (only for rows of equal counts: it allocates) */
static int rank_row(const void *a, const void *b)
{
	const struct frame_row *x = a, *y = b;
	int c = rank_count(x->count, y->count);
	GString *gx, *gy;

	if (c)
		return c;
	if (!x->kpart && !y->kpart)
		return fk_str_cmp(x->f->name, y->f->name);
	gx = g_string_new(NULL);
	gy = g_string_new(NULL);
	frame_row_name(x, gx);
	frame_row_name(y, gy);
	c = fk_str_cmp((struct fk_str){ gx->str, gx->len }, (struct fk_str){ gy->str, gy->len });
	g_string_free(gx, TRUE);
	g_string_free(gy, TRUE);
	return c;
}

/* A tail's kernel part as the tables show it (KPART_NONE: in full). */
static uint8_t kpart_of(const struct report *r, const struct profile_tail *t)
{
	return !t || r->o->kernel_stacks ? KPART_NONE : t->kpart;
}

struct path_build {
	struct report *r;
	GString *g;
	struct top raw;		/* stacks kept whole, as path rows */
	size_t nraw;
};

/* top_offer() of an item the top owns: one pushed out, or not taken, is
 * freed with g_free(). */
static void top_offer_owned(struct top *t, void *item)
{
	void *out;

	if (t->v->len < t->k) {
		top_offer(t, item);
	} else if (t->k > 0 && t->rank(item, g_ptr_array_index(t->v, 0)) < 0) {
		out = g_ptr_array_index(t->v, 0);	/* the lowest kept */
		top_offer(t, item);
		g_free(out);
	} else {
		g_free(item);
	}
}

/* A stack as read, as a path row (g_free()). */
static struct path_row *raw_row(struct stack_key k, fk_count count)
{
	struct path_row *row = g_new0(struct path_row, 1);

	row->root = (struct fk_str){ k.root->stack, k.root->len };
	if (k.tail)
		row->tail = (struct fk_str){ k.tail->stack, k.tail->len };
	row->count = count;
	return row;
}

/*
 * A stack with a kernel part to summarise goes to r->paths by its text
 * with the part as a frame "[kernel: LABEL]"; one kept whole is offered
 * to the top as it is, without copying its text (most stacks, in a
 * profile without kernel frames).
 */
static void add_path(struct fold_entry *e, void *data)
{
	struct path_build *pb = data;
	const struct report *r = pb->r;
	struct stack_key k = profile_stack_key(e);
	const struct profile_tail *t = profile_tail_of(r->p, k);
	uint8_t kp = kpart_of(r, t);
	struct path_row probe;

	if (!kp) {
		/* a row only when it could be in the top (rows are few) */
		pb->nraw++;
		probe = (struct path_row){ { k.root->stack, k.root->len },
					   { k.tail ? k.tail->stack : NULL, k.tail ? k.tail->len : 0 },
					   e->count[0], 0 };
		if (pb->raw.k > 0 && (pb->raw.v->len < pb->raw.k ||
				      rank_path(&probe, g_ptr_array_index(pb->raw.v, 0)) < 0))
			top_offer_owned(&pb->raw, raw_row(k, e->count[0]));
		return;
	}
	g_string_truncate(pb->g, 0);
	g_string_append_len(pb->g, k.root->stack, (gssize)k.root->len);
	for (uint32_t i = 0; i < t->kernel; i++) {
		const struct frame_stat *f = profile_tail_frame(r->p, t, i);

		g_string_append_c(pb->g, ';');
		g_string_append_len(pb->g, f->name.s, (gssize)f->name.len);
	}
	g_string_append_printf(pb->g, ";[kernel: %s]", profile_kpart_label(kp));
	/* count[1]: the kernel part's kpart, for the JSON's "kernel" */
	e = fold_table_add2(r->paths, pb->g->str, pb->g->len, e->count[0], 0);
	e->count[1] = kp;
}

static void offer_summarised(struct fold_entry *e, void *data)
{
	struct top *t = data;
	struct path_row *row = g_new0(struct path_row, 1);
	const char *semi = memchr(e->stack, ';', e->len);	/* there is one */

	row->root = (struct fk_str){ e->stack, (size_t)(semi - e->stack) };
	row->tail = (struct fk_str){ semi + 1, e->len - (size_t)(semi - e->stack) - 1 };
	row->count = e->count[0];
	row->kpart = (uint8_t)e->count[1];
	top_offer_owned(t, row);
}

/* The hot paths: the top of both kinds of rows. */
static void hot_paths(struct report *r)
{
	struct path_build pb = { r, g_string_new(NULL), { g_ptr_array_new(), r->o->top, rank_path },
				 0 };
	struct top sum = { g_ptr_array_new(), r->o->top, rank_path };

	r->paths = fold_table_new();
	fold_table_foreach(r->p->stacks, add_path, &pb);
	fold_table_foreach(r->paths, offer_summarised, &sum);
	r->npaths = pb.nraw + fold_table_size(r->paths);
	r->top_paths = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < pb.raw.v->len; i++)
		g_ptr_array_add(r->top_paths, g_ptr_array_index(pb.raw.v, i));
	for (guint i = 0; i < sum.v->len; i++)
		g_ptr_array_add(r->top_paths, g_ptr_array_index(sum.v, i));
	sort_rank = rank_path;
	if (r->top_paths->len > 1)
		qsort(r->top_paths->pdata, r->top_paths->len, sizeof(void *), cmp_ranked);
	if (r->top_paths->len > r->o->top)
		g_ptr_array_set_size(r->top_paths, (gint)r->o->top);
	g_ptr_array_free(pb.raw.v, TRUE);
	g_ptr_array_free(sum.v, TRUE);
	g_string_free(pb.g, TRUE);
}

/* The top of rows (struct frame_row) by rank_row into a new array; with
 * positive, only rows with a count above 0. */
static GArray *top_rows(GArray *rows, unsigned k, bool positive)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(struct frame_row));
	struct top t = { g_ptr_array_new(), k, rank_row };

	for (guint i = 0; i < rows->len; i++)
		if (!positive || g_array_index(rows, struct frame_row, i).count > 0)
			top_offer(&t, &g_array_index(rows, struct frame_row, i));
	top_sort(&t);
	for (guint i = 0; i < t.v->len; i++)
		g_array_append_vals(out, g_ptr_array_index(t.v, i), 1);
	g_ptr_array_free(t.v, TRUE);
	return out;
}

/*
 * The self and inclusive tables: a stack's leaf, or with its kernel part
 * summarised the frame before it with the kernel's part (a kernel leaf is
 * charged to the call the program made); frames by their inclusive count
 * on the program's side (uincl) and each kind of kernel part as a row.
 */
static void function_tables(struct report *r)
{
	const struct profile *p = r->p;
	GArray *self = g_array_new(FALSE, FALSE, sizeof(struct frame_row));
	GArray *incl = g_array_new(FALSE, FALSE, sizeof(struct frame_row));
	GHashTable *at = g_hash_table_new(g_int64_hash, g_int64_equal);
	gint64 *keys = g_new(gint64, p->tails->len + 1);
	fk_count kparts[KPART_WAIT + WAIT_NKINDS] = { 0 };

	for (guint i = 0; i < p->tails->len; i++) {
		const struct profile_tail *t = &g_array_index(p->tails, struct profile_tail, i);
		uint8_t kp = kpart_of(r, t);
		const struct frame_stat *f = profile_tail_frame(p, t, kp ? t->kernel - 1 : t->n - 1);
		gpointer v;

		keys[i] = (gint64)f->id << 8 | kp;
		if ((v = g_hash_table_lookup(at, &keys[i]))) {
			g_array_index(self, struct frame_row, GPOINTER_TO_UINT(v) - 1).count += t->count;
		} else {
			struct frame_row row = { f, t->count, kp };

			g_array_append_val(self, row);
			g_hash_table_insert(at, &keys[i], GUINT_TO_POINTER(self->len));
		}
		kparts[kp] += t->count;
	}
	for (guint i = 0; i < p->frames->len; i++) {
		const struct frame_stat *f = g_ptr_array_index(p->frames, i);
		struct frame_row row = { f, r->o->kernel_stacks ? f->incl : f->uincl, KPART_NONE };

		/* a frame of summarised kernel parts only is in their rows */
		if (r->o->kernel_stacks || f->uincl > 0 || f->incl == 0)
			g_array_append_val(incl, row);
	}
	for (uint8_t kp = 1; kp < G_N_ELEMENTS(kparts); kp++)
		if (kparts[kp] > 0) {
			struct frame_row row = { NULL, kparts[kp], kp };

			g_array_append_val(incl, row);
		}
	r->self = top_rows(self, r->o->top, true);	/* leaves with a count */
	r->incl = top_rows(incl, r->o->top, false);
	g_array_free(self, TRUE);
	g_array_free(incl, TRUE);
	g_hash_table_destroy(at);
	g_free(keys);
}

static int rank_thread(const void *a, const void *b)
{
	const struct thread_row *x = a, *y = b;
	int c = rank_count(x->count, y->count);

	return c ? c : fk_str_cmp(x->name, y->name);
}

void thread_group_name(GString *g, const char *s, size_t len)
{
	g_string_truncate(g, 0);
	for (size_t i = 0; i < len; i++) {
		if (g_ascii_isdigit(s[i])) {
			while (i + 1 < len && g_ascii_isdigit(s[i + 1]))
				i++;
			g_string_append_c(g, '*');
		} else {
			g_string_append_c(g, s[i]);
		}
	}
}

struct thread_build {
	struct report_priv *rp;
	GString *key;
	GHashTable *emitted;	/* group entries already made a row */
	bool second;
};

static void add_thread(struct fold_entry *e, void *data)
{
	struct thread_build *tb = data;
	struct report *r = &tb->rp->r;
	struct thread_row row = { { e->stack, e->len }, e->count[0], 1 };
	struct fold_entry *g;

	if (!r->o->group_threads) {
		g_array_append_val(r->threads, row);
		return;
	}
	thread_group_name(tb->key, e->stack, e->len);
	if (!tb->second) {
		fold_table_add2(tb->rp->groups, tb->key->str, tb->key->len, e->count[0],
				fk_count_from_u64(1));
		return;
	}
	g = fold_table_find(tb->rp->groups, tb->key->str, tb->key->len);
	if (g->count[1] == fk_count_from_u64(1)) {
		g_array_append_val(r->threads, row);	/* alone: its own name */
	} else if (g_hash_table_add(tb->emitted, g)) {
		row.name = (struct fk_str){ g->stack, g->len };
		row.count = g->count[0];
		row.members = (uint32_t)fk_count_whole(g->count[1]);
		g_array_append_val(r->threads, row);
	}
}

static int cmp_thread_rows(const void *a, const void *b)
{
	return rank_thread(a, b);
}

struct cat_sort {
	const fk_count *counts;
};

static int cmp_cats(const void *a, const void *b, void *data)
{
	const struct cat_sort *cs = data;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = rank_count(cs->counts[x], cs->counts[y]);

	return c ? c : (x > y) - (x < y);
}

/* the smaller of a row's two shares, as a (count, total) pair */
static void smaller_share(const struct report *r, const struct contention_row *x,
			  fk_count *c, fk_count *t)
{
	if (share_cmp(x->on->incl, r->p->total, x->off->incl, r->off->total) <= 0) {
		*c = x->on->incl;
		*t = r->p->total;
	} else {
		*c = x->off->incl;
		*t = r->off->total;
	}
}

static int cmp_contention(const void *a, const void *b, void *data)
{
	const struct report *r = data;
	const struct contention_row *x = a, *y = b;
	fk_count cx, tx, cy, ty;
	int c;

	smaller_share(r, x, &cx, &tx);
	smaller_share(r, y, &cy, &ty);
	if ((c = share_cmp(cy, ty, cx, tx)))
		return c;
	return fk_str_cmp(x->on->name, y->on->name);
}

static void find_contention(struct report *r)
{
	const struct report_opts *o = r->o;

	for (guint i = 0; i < r->p->frames->len; i++) {
		const struct frame_stat *on = g_ptr_array_index(r->p->frames, i), *off;
		struct contention_row row;

		/* the program's frames: a table of the kernel's and libc's
		   (schedule, do_syscall_64, futex_wait) says nothing */
		if ((on->classes & (FRAME_ENTRY | FRAME_SYSTEM)) || on->wait != WAIT_NONE ||
		    on->uincl == 0 ||	/* the kernel's, whatever its name (do_futex) */
		    !share_at_least(on->incl, r->p->total, o->min_share) ||
		    !(off = profile_frame(r->off, on->name.s, on->name.len)) ||
		    off->uincl == 0 ||
		    !share_at_least(off->incl, r->off->total, o->min_share))
			continue;
		row.on = on;
		row.off = off;
		row.lock_wait = off->lock_wait > off->incl - off->lock_wait;
		g_array_append_val(r->contention, row);
	}
	g_array_sort_with_data(r->contention, cmp_contention, r);
}

static struct report_priv *model_new(const struct report_input *in,
				     const struct report_opts *o,
				     const struct frame_classifier *fc)
{
	struct report_priv *rp = g_new0(struct report_priv, 1);
	struct report *r = &rp->r;
	struct thread_build tb = { rp, g_string_new(NULL), NULL, false };
	struct cat_sort cs;

	r->in = in;
	r->o = o;
	r->p = in->profile;
	profile_analyse(r->p, o->categories, fc, o->wait_kinds);
	if ((r->off = in->offcpu))
		profile_analyse(r->off, o->categories, fc, o->wait_kinds);

	r->threads = g_array_new(FALSE, FALSE, sizeof(struct thread_row));
	if (o->group_threads) {
		rp->groups = fold_table_new();
		tb.emitted = g_hash_table_new(NULL, NULL);
		fold_table_foreach(r->p->roots, add_thread, &tb);
		tb.second = true;
	}
	fold_table_foreach(r->p->roots, add_thread, &tb);
	g_array_sort(r->threads, cmp_thread_rows);
	if (tb.emitted)
		g_hash_table_destroy(tb.emitted);
	g_string_free(tb.key, TRUE);

	hot_paths(r);
	function_tables(r);

	r->cats = g_array_new(FALSE, FALSE, sizeof(size_t));
	for (size_t i = 0; i < r->p->ncats; i++)
		g_array_append_val(r->cats, i);
	cs.counts = r->p->cat_counts;
	g_array_sort_with_data(r->cats, cmp_cats, &cs);

	r->contention = g_array_new(FALSE, FALSE, sizeof(struct contention_row));
	if (r->off && r->off != r->p)
		find_contention(r);
	r->findings = g_ptr_array_new_with_free_func((GDestroyNotify)finding_free);
	report_find(r);
	return rp;
}

static void model_free(struct report_priv *rp)
{
	struct report *r = &rp->r;

	g_array_free(r->threads, TRUE);
	g_ptr_array_free(r->top_paths, TRUE);	/* frees the rows */
	fold_table_free(r->paths);
	g_array_free(r->self, TRUE);
	g_array_free(r->incl, TRUE);
	g_array_free(r->cats, TRUE);
	g_array_free(r->contention, TRUE);
	g_ptr_array_free(r->findings, TRUE);
	fold_table_free(rp->groups);
	g_free(rp);
}

/* --- writing ----------------------------------------------------------- */

int report_write(FILE *out, const struct report_source *on,
		 const struct report_source *off, const struct report_opts *o,
		 GError **err)
{
	struct frame_classifier *fc = frame_classifier_new();
	int rc = report_write_fc(out, on, off, o, fc, err);

	frame_classifier_free(fc);
	return rc;
}

static void write_one(FILE *out, const struct report_input *in, const struct report_opts *o,
		      const struct frame_classifier *fc, int part)
{
	struct report_priv *rp = model_new(in, o, fc);

	if (o->format == REPORT_JSON) {
		if (part)
			fputs(part > 1 ? ",\n" : "\n", out);
		report_write_json(out, &rp->r, part ? 2 : 0, part);
	} else {
		report_write_markdown(out, &rp->r, part);
	}
	model_free(rp);
}

/* a split file's process: its base name without ".folded" */
static char *process_name(const char *path)
{
	char *b = g_path_get_basename(path);

	if (g_str_has_suffix(b, ".folded"))
		b[strlen(b) - 7] = '\0';
	return b;
}

int report_write_fc(FILE *out, const struct report_source *on,
		    const struct report_source *off, const struct report_opts *oo,
		    const struct frame_classifier *fc, GError **err)
{
	char *title = on->title ? g_strdup(on->title) : g_strjoinv(", ", (char **)on->files);
	struct report_input in = { title, (const char *const *)on->files, on->nfiles,
				   on->whole, NULL, 0, NULL, "whole", 0, 0 };
	struct report_opts ow = *oo;
	const struct report_opts *o = &ow;
	struct wait_kinds *wk = NULL;
	bool json = o->format == REPORT_JSON, parts = on->dir && on->nfiles;

	if (!ow.wait_kinds)
		ow.wait_kinds = wk = wait_kinds_new(true);
	if (on->dir) {
		in.nprocesses = on->nfiles;
		for (size_t i = 0; i < on->nfiles; i++)
			in.nthreads += fold_table_size(on->parts[i]->roots);
	} else {
		in.nthreads = fold_table_size(on->whole->roots);
	}
	if (off == on) {	/* an off-CPU capture alone: its own waits */
		in.off_files = in.files;
		in.noff_files = in.nfiles;
		in.offcpu = on->whole;
	} else if (off) {
		in.off_files = (const char *const *)off->files;
		in.noff_files = off->nfiles;
		in.offcpu = off->whole;
	}
	write_one(out, &in, o, fc, 0);
	if (o->holders && json)
		holders_write_json(out, o->holders, o->holders_source, o->holders_unit, o->top);
	else if (o->holders)
		holders_write_markdown(out, o->holders, o->holders_source, o->holders_unit, o->top);
	if (o->runq && json)
		runq_write_json(out, o->runq, o->runq_source, o->runq_unit, o->top);
	else if (o->runq)
		runq_write_markdown(out, o->runq, o->runq_source, o->runq_unit, o->top);
	if (json && parts)
		fputs(",\n  \"processes\": [", out);
	for (size_t i = 0; on->dir && i < on->nfiles; i++) {
		char *proc = process_name(on->files[i]);
		struct report_input p = { on->files[i], (const char *const *)&on->files[i], 1,
					  on->parts[i], NULL, 0, NULL, proc, 1,
					  fold_table_size(on->parts[i]->roots) };

		if (off == on) {
			p.off_files = p.files;
			p.noff_files = 1;
			p.offcpu = on->parts[i];
		}
		for (size_t j = 0; off && off != on && off->dir && j < off->nfiles; j++)
			if (report_same_process(on->files[i], off->files[j])) {
				p.off_files = (const char *const *)&off->files[j];
				p.noff_files = 1;
				p.offcpu = off->parts[j];
			}
		write_one(out, &p, o, fc, (int)i + 1);
		g_free(proc);
	}
	wait_kinds_free(wk);
	if (json)
		fputs(parts ? "\n  ]\n}\n" : "\n}\n", out);
	g_free(title);
	if (fflush(out) != 0 || ferror(out)) {
		fk_error_at(err, FK_ERROR_IO, "<stdout>", 0, "write error: %s",
			    g_strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

int report_parse_percent(const char *s, fk_count *out)
{
	size_t n = strlen(s);
	fk_count c;

	if (n && s[n - 1] == '%')
		n--;
	if (fk_count_parse(s, n, &c) != FK_COUNT_OK || c > fk_count_from_u64(100))
		return -1;
	/* c / 100, exactly: a percentage has at most 9 decimals, a fraction 11 */
	if (c % 100 != 0)
		return -1;
	*out = c / 100;
	return 0;
}

int report_set_threshold(struct report_opts *o, const char *arg, GError **err)
{
	const char *eq = strchr(arg, '=');
	fk_count v;

	for (size_t i = 0; eq && i < report_nrules; i++)
		if (strlen(report_rules[i].name) == (size_t)(eq - arg) &&
		    memcmp(report_rules[i].name, arg, (size_t)(eq - arg)) == 0) {
			if (report_parse_percent(eq + 1, &v) < 0) {
				g_set_error(err, FK_ERROR, FK_ERROR_USAGE,
					    "bad --threshold '%s': a percentage from 0 to 100", arg);
				return -1;
			}
			o->thresholds[i] = v;
			return 0;
		}
	g_set_error(err, FK_ERROR, FK_ERROR_USAGE,
		    "bad --threshold '%s': RULE=PERCENT, RULE one of fold-report(1)'s rules", arg);
	return -1;
}

bool report_unit_ok(const char *unit)
{
	return fk_unit_ok(unit);
}

void report_source_init(struct report_source *src, char **files, bool dir,
			const char *title)
{
	struct profile **parts;

	src->title = title;
	src->files = files;
	src->nfiles = g_strv_length(files);
	src->dir = dir;
	src->parts = parts = g_new0(struct profile *, src->nfiles + 1);
	for (size_t i = 0; i < src->nfiles; i++)
		parts[i] = profile_new();
	src->whole = NULL;
}

void report_source_merge(struct report_source *src)
{
	if (src->nfiles == 1 && !src->dir) {
		src->whole = src->parts[0];	/* the one file is the whole */
		return;
	}
	src->whole = profile_new();
	for (size_t i = 0; i < src->nfiles; i++)
		profile_merge(src->whole, src->parts[i]);
}

void report_source_release(struct report_source *src)
{
	if (src->whole && (!src->parts || src->whole != src->parts[0]))
		profile_free(src->whole);
	for (size_t i = 0; src->parts && i < src->nfiles; i++)
		profile_free(src->parts[i]);
	g_free((void *)src->parts);
	g_strfreev((char **)src->files);
	memset(src, 0, sizeof(*src));
}

/* "-PID.folded" at the end of path's base name, or the base name */
static const char *process_key(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(base);
	const char *end, *p;

	if (n < 7 || strcmp(base + n - 7, ".folded") != 0)
		return base;
	end = p = base + n - 7;
	while (p > base && g_ascii_isdigit(p[-1]))
		p--;
	return p < end && p > base && p[-1] == '-' ? p - 1 : base;
}

bool report_same_process(const char *path1, const char *path2)
{
	return strcmp(process_key(path1), process_key(path2)) == 0;
}
