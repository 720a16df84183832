#include "report/profile.h"

#include <string.h>

int fk_str_cmp(struct fk_str a, struct fk_str b)
{
	int c = memcmp(a.s, b.s, a.len < b.len ? a.len : b.len);

	if (c)
		return c;
	return a.len < b.len ? -1 : a.len > b.len;
}

static guint name_hash(gconstpointer k)
{
	const struct fk_str *s = k;

	return (guint)fk_hash_bytes(s->s, s->len);
}

static gboolean name_equal(gconstpointer a, gconstpointer b)
{
	const struct fk_str *x = a, *y = b;

	return x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
}

struct build {
	struct profile *p;
	const struct category_list *cats;
	const struct frame_classifier *fc;
	const struct wait_kinds *wk;
	uint64_t *cat_mark;	/* per category: the last tail counted */
	uint64_t serial;	/* the tail being counted, from 1 */
};

static struct frame_stat *intern(struct build *b, const char *s, size_t len)
{
	struct profile *p = b->p;
	struct fk_str key = { s, len };
	struct frame_stat *f = g_hash_table_lookup(p->index, &key);

	if (f)
		return f;
	f = g_new0(struct frame_stat, 1);
	f->name = key;
	f->id = p->frames->len;
	f->classes = frame_classify(b->fc, s, len);
	f->wait = (uint8_t)wait_kinds_frame(b->wk, s, len);
	f->cats_at = p->frame_cats->len;
	for (size_t i = 0; i < p->ncats; i++)
		if (category_list_match(b->cats, i, s, len)) {
			uint32_t ci = (uint32_t)i;

			g_array_append_val(p->frame_cats, ci);
			f->ncats++;
		}
	g_ptr_array_add(p->frames, f);
	g_hash_table_insert(p->index, &f->name, f);
	return f;
}

static inline struct frame_stat *frame_at(const struct profile *p, uint32_t i)
{
	return g_ptr_array_index(p->frames, g_array_index(p->ids, uint32_t, i));
}

static bool is_program(const struct frame_stat *f)
{
	return !(f->classes & FRAME_SYSTEM) && f->wait == WAIT_NONE;
}

static bool has_prefix(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);

	return len >= n && memcmp(s, p, n) == 0;
}

/* How the kernel was entered at frame f (a FRAME_KENTRY one). */
static uint8_t entry_kpart(const struct frame_stat *f)
{
	static const struct { const char *prefix; uint8_t kpart; } entries[] = {
		{ "entry_SYSCALL", KPART_SYSCALL }, { "entry_SYSENTER", KPART_SYSCALL },
		{ "entry_INT80", KPART_SYSCALL }, { "do_syscall_64", KPART_SYSCALL },
		{ "el0_svc", KPART_SYSCALL }, { "asm_exc_page_fault", KPART_FAULT },
		{ "el0_da", KPART_FAULT }, { "el0_ia", KPART_FAULT },
		{ "asm_sysvec_", KPART_INTERRUPT }, { "asm_common_interrupt", KPART_INTERRUPT },
		{ "el0_interrupt", KPART_INTERRUPT }, { "el0_irq", KPART_INTERRUPT },
		{ "el1_interrupt", KPART_INTERRUPT }, { "el1_irq", KPART_INTERRUPT },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(entries); i++)
		if (has_prefix(f->name.s, f->name.len, entries[i].prefix))
			return entries[i].kpart;
	return KPART_ENTRY;
}

const char *profile_kpart_label(unsigned kpart)
{
	static const char *const labels[] = { NULL, "system call", "page fault", "interrupt",
					      "kernel" };

	if (kpart >= KPART_WAIT)
		return wait_kind_label((enum wait_kind)(kpart - KPART_WAIT));
	return labels[kpart];
}

/* Fills t's kernel, site, kind, hidden and lost (profile.h).  A library's
 * frame without a symbol at the leaf (the vDSO's, a libc function's)
 * hides the library's code, not the program's. */
static void where(const struct profile *p, struct profile_tail *t)
{
	uint32_t first_prog = TAIL_NONE, unresolved_last = TAIL_NONE;
	bool entry = false, unresolved_after = false, unresolved_any = false;

	t->kernel = t->n;
	t->site = TAIL_NONE;
	t->kind = WAIT_OTHER;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct frame_stat *f = profile_tail_frame(p, t, i);

		if (f->wait != WAIT_NONE)
			t->kind = f->wait;	/* the innermost decides */
		if (f->classes & FRAME_ENTRY)
			entry = true;
		if ((f->classes & FRAME_KENTRY) && t->kernel == t->n)
			t->kernel = i;
		if ((f->classes & FRAME_UNRESOLVED) && !(f->classes & FRAME_VDSO)) {
			unresolved_any = true;
			if (first_prog != TAIL_NONE && i < t->kernel)
				unresolved_last = i;
		}
		if (i < t->kernel && is_program(f)) {
			if (first_prog == TAIL_NONE)
				first_prog = i;
			t->site = i;
			/* an unresolved frame between two of the program's */
			if (unresolved_last != TAIL_NONE)
				unresolved_after = true;
		}
	}
	t->kpart = KPART_NONE;
	if (t->kernel > 0 && t->kernel < t->n) {
		t->kpart = entry_kpart(profile_tail_frame(p, t, t->kernel));
		for (uint32_t i = t->kernel; i < t->n; i++)
			if (profile_tail_frame(p, t, i)->classes & FRAME_SCHED) {
				t->kpart = (uint8_t)(KPART_WAIT + t->kind);
				break;
			}
	}
	t->hidden = unresolved_after || (first_prog == TAIL_NONE && unresolved_any);
	/* lost: no entry, unless only library frames (a start routine) come
	 * before the program's */
	t->lost = !entry && (first_prog == TAIL_NONE || first_prog == 0);
}

const struct profile_tail *profile_tail_of(const struct profile *p, struct stack_key k)
{
	if (!k.tail || k.tail->count[1] <= 0)
		return NULL;
	return &g_array_index(p->tails, struct profile_tail, (guint)(k.tail->count[1] - 1));
}

/* Counts one distinct tail (see profile.h). */
static void count_tail(struct fold_entry *e, void *data)
{
	struct build *b = data;
	struct profile *p = b->p;
	struct profile_tail t = { .count = e->count[0], .first = p->ids->len };
	fk_count c = t.count;
	const char *s = e->stack, *end = s + e->len;
	unsigned classes = 0;
	uint64_t serial = ++b->serial;
	uint32_t first_lock = UINT32_MAX, last_lock = 0, first_log = UINT32_MAX;
	bool log_write = false;

	for (;;) {
		const char *semi = memchr(s, ';', (size_t)(end - s));
		size_t len = semi ? (size_t)(semi - s) : (size_t)(end - s);
		struct frame_stat *f = intern(b, s, len);

		g_array_append_val(p->ids, f->id);
		if (f->mark != serial) {
			f->mark = serial;
			f->incl += c;
			for (uint32_t k = 0; k < f->ncats; k++) {
				uint32_t ci = g_array_index(p->frame_cats, uint32_t, f->cats_at + k);

				if (b->cat_mark[ci] != serial) {
					b->cat_mark[ci] = serial;
					p->cat_counts[ci] += c;
				}
			}
		}
		classes |= f->classes;
		if (f->classes & FRAME_LOCK_WAIT) {
			if (first_lock == UINT32_MAX)
				first_lock = t.n;
			last_lock = t.n;
		}
		if ((f->classes & FRAME_LOG) && first_log == UINT32_MAX)
			first_log = t.n;
		if ((f->classes & FRAME_WRITE) && first_log != UINT32_MAX)
			log_write = true;
		t.n++;
		if (!semi)
			break;
		s = semi + 1;
	}
	frame_at(p, t.first + t.n - 1)->self += c;
	if (classes & FRAME_UNRESOLVED)
		p->unresolved += c;
	if (!(classes & FRAME_ENTRY)) {
		p->truncated += c;
		frame_at(p, t.first)->trunc_head += c;
	}
	if (classes & FRAME_ALLOC)
		p->alloc += c;
	if (log_write) {
		p->log_write += c;
		frame_at(p, t.first + first_log)->log_write += c;
	}
	where(p, &t);
	{
		/* the program's side: every frame but a summarised kernel part */
		uint32_t end = t.kpart ? t.kernel : t.n;
		uint64_t s3 = ++b->serial;

		for (uint32_t i = 0; i < end; i++) {
			struct frame_stat *f = frame_at(p, t.first + i);

			if (f->mark != s3) {
				f->mark = s3;
				f->uincl += c;
			}
		}
	}
	if (t.hidden)
		p->hidden += c;
	if (t.lost)
		p->lost += c;
	e->count[1] = (fk_count)p->tails->len + 1;	/* profile_tail_of() */
	for (uint32_t i = 1; t.kind == WAIT_LOCK && i < t.n; i++) {
		struct frame_stat *f = frame_at(p, t.first + i), *prev = frame_at(p, t.first + i - 1);

		if ((f->classes & FRAME_LOCK_WAIT) && !(prev->classes & FRAME_LOCK_WAIT) &&
		    prev->mark2 != serial) {
			prev->mark2 = serial;
			prev->calls_lock += c;
		}
	}
	if (first_lock != UINT32_MAX && t.kind == WAIT_LOCK) {
		/* a second mark: frames up to the last lock wait, once each */
		uint64_t s2 = ++b->serial;

		for (uint32_t i = 0; i <= last_lock; i++) {
			struct frame_stat *f = frame_at(p, t.first + i);

			if (f->mark != s2) {
				f->mark = s2;
				f->lock_wait += c;
			}
		}
	}
	g_array_append_val(p->tails, t);
}

struct profile *profile_new(void)
{
	struct profile *p = g_new0(struct profile, 1);

	p->stacks = fold_table_new();
	p->roots = fold_table_new();
	p->tail_table = fold_table_new();
	return p;
}

static void add_split(struct profile *p, const char *root, size_t rlen,
		      const char *tail, size_t tlen, bool has_tail, fk_count c,
		      bool stable)
{
	struct stack_key k = { NULL, NULL };

	/* lines of one thread often come together: its root is the last one */
	if (p->last_root && p->last_root->len == rlen && memcmp(p->last_root->stack, root, rlen) == 0)
		fold_table_bump(p->roots, p->last_root, c, 0);
	else
		p->last_root = stable ? fold_table_add2_ref(p->roots, root, rlen, c, 0)
				      : fold_table_add2(p->roots, root, rlen, c, 0);
	k.root = p->last_root;
	if (has_tail)
		k.tail = stable ? fold_table_add2_ref(p->tail_table, tail, tlen, c, 0)
				: fold_table_add2(p->tail_table, tail, tlen, c, 0);
	else
		p->root_only += c;
	fold_table_add2(p->stacks, (const char *)&k, sizeof(k), c, 0);
	p->total += c;
}

void profile_add(struct profile *p, const char *stack, size_t len, fk_count c,
		 bool stable)
{
	const char *semi = memchr(stack, ';', len);
	size_t rlen = semi ? (size_t)(semi - stack) : len;

	add_split(p, stack, rlen, semi ? semi + 1 : NULL, semi ? len - rlen - 1 : 0,
		  semi != NULL, c, stable);
}

static void merge_one(struct fold_entry *e, void *data)
{
	struct stack_key k = profile_stack_key(e);

	/* from's tables hold the bytes, and outlive into */
	add_split(data, k.root->stack, k.root->len, k.tail ? k.tail->stack : NULL,
		  k.tail ? k.tail->len : 0, k.tail != NULL, e->count[0], true);
}

void profile_merge(struct profile *into, const struct profile *from)
{
	fold_table_foreach(from->stacks, merge_one, into);
	if (from->has_caller_lost) {
		into->has_caller_lost = true;
		into->caller_lost += from->caller_lost;
		/* the whole's function is its heaviest part's: the parts give
		   one name each, not their functions' counts */
		if (from->caller_lost_in && from->caller_lost > into->caller_lost_in_count) {
			g_free(into->caller_lost_in);
			into->caller_lost_in = g_strdup(from->caller_lost_in);
			into->caller_lost_in_count = from->caller_lost;
		}
	}
}

void profile_set_caller_lost(struct profile *p, fk_count lost, const char *in)
{
	p->has_caller_lost = true;
	p->caller_lost = lost;
	g_free(p->caller_lost_in);
	p->caller_lost_in = in ? g_strdup(in) : NULL;
	p->caller_lost_in_count = in ? lost : 0;
}

/*
 * Frame ids follow the order of the tables, which follows the input's;
 * nothing reported depends on them: every ranking breaks ties by name.
 */
void profile_analyse(struct profile *p, const struct category_list *cats,
		     const struct frame_classifier *fc, const struct wait_kinds *wk)
{
	struct build b = { .p = p, .cats = cats, .fc = fc, .wk = wk };
	struct wait_kinds *own = NULL;

	if (p->analysed)
		return;
	if (!wk)
		b.wk = own = wait_kinds_new(true);
	p->analysed = true;
	p->nstacks = fold_table_size(p->stacks);
	p->truncated = p->root_only;
	p->lost = p->root_only;
	p->tails = g_array_new(FALSE, FALSE, sizeof(struct profile_tail));
	p->ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	p->frames = g_ptr_array_new_with_free_func(g_free);
	p->frame_cats = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	p->ncats = category_list_size(cats);
	p->cat_counts = g_new0(fk_count, p->ncats + 1);
	p->index = g_hash_table_new(name_hash, name_equal);
	b.cat_mark = g_new0(uint64_t, p->ncats + 1);
	fold_table_foreach(p->tail_table, count_tail, &b);
	g_free(b.cat_mark);
	wait_kinds_free(own);
}

/* The pieces of a stack's text: root, ";", tail. */
static int pieces(struct stack_key k, struct fk_str *v)
{
	v[0] = (struct fk_str){ k.root->stack, k.root->len };
	if (!k.tail)
		return 1;
	v[1] = (struct fk_str){ ";", 1 };
	v[2] = (struct fk_str){ k.tail->stack, k.tail->len };
	return 3;
}

int profile_stack_cmp(struct stack_key a, struct stack_key b)
{
	struct fk_str x[3], y[3];
	int nx = pieces(a, x), ny = pieces(b, y), i = 0, j = 0;
	size_t oi = 0, oj = 0;

	/* memcmp over the concatenations, a piece at a time */
	while (i < nx && j < ny) {
		size_t n = MIN(x[i].len - oi, y[j].len - oj);
		int c = memcmp(x[i].s + oi, y[j].s + oj, n);

		if (c)
			return c;
		oi += n;
		oj += n;
		if (oi == x[i].len)
			i++, oi = 0;
		if (oj == y[j].len)
			j++, oj = 0;
	}
	return (i < nx) - (j < ny);
}

void profile_stack_text(struct stack_key k, GString *g)
{
	struct fk_str v[3];
	int n = pieces(k, v);

	for (int i = 0; i < n; i++)
		g_string_append_len(g, v[i].s, (gssize)v[i].len);
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	fold_table_free(p->stacks);
	fold_table_free(p->roots);
	fold_table_free(p->tail_table);
	if (p->analysed) {
		g_array_free(p->tails, TRUE);
		g_array_free(p->ids, TRUE);
		g_hash_table_destroy(p->index);
		g_ptr_array_free(p->frames, TRUE);
		g_array_free(p->frame_cats, TRUE);
	}
	g_free(p->cat_counts);
	g_free(p->caller_lost_in);
	g_free(p);
}

const struct frame_stat *profile_frame(const struct profile *p, const char *s,
				       size_t len)
{
	struct fk_str key = { s, len };

	return g_hash_table_lookup(p->index, &key);
}

/* The heaviest neighbour of f at offset dir (+1 child, -1 caller). */
static const struct frame_stat *neighbour(const struct profile *p,
					  const struct frame_stat *f, int dir,
					  unsigned cls, fk_count *count)
{
	size_t n = p->frames->len;
	fk_count *sum = g_new0(fk_count, n);
	uint32_t *seen = g_new0(uint32_t, n);	/* tail index + 1 */
	const struct frame_stat *best = NULL;

	for (guint ti = 0; ti < p->tails->len; ti++) {
		const struct profile_tail *t = &g_array_index(p->tails, struct profile_tail, ti);
		const uint32_t *ids = &g_array_index(p->ids, uint32_t, t->first);

		for (uint32_t i = 0; i < t->n; i++) {
			uint32_t nb;

			if (ids[i] != f->id || (dir < 0 && i == 0) || (dir > 0 && i + 1 == t->n))
				continue;
			nb = ids[dir > 0 ? i + 1 : i - 1];
			if (cls && !(((struct frame_stat *)g_ptr_array_index(p->frames, nb))->classes & cls))
				continue;
			if (seen[nb] != ti + 1) {
				seen[nb] = ti + 1;
				sum[nb] += t->count;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct frame_stat *c = g_ptr_array_index(p->frames, i);

		if (sum[i] > 0 && (!best || sum[i] > sum[best->id] ||
				   (sum[i] == sum[best->id] && fk_str_cmp(c->name, best->name) < 0)))
			best = c;
	}
	if (best && count)
		*count = sum[best->id];
	g_free(sum);
	g_free(seen);
	return best;
}

const struct frame_stat *profile_child(const struct profile *p,
				       const struct frame_stat *f, fk_count *count)
{
	return neighbour(p, f, 1, 0, count);
}

const struct frame_stat *profile_child_in(const struct profile *p,
					  const struct frame_stat *f, unsigned cls,
					  fk_count *count)
{
	return neighbour(p, f, 1, cls, count);
}

const struct frame_stat *profile_caller(const struct profile *p,
					const struct frame_stat *f, fk_count *count)
{
	return neighbour(p, f, -1, 0, count);
}
