/*
 * fold-report's findings: what to look at first, each with the evidence
 * seed 000 asks for, "`function → child` (N samples, P%)".
 *
 * A rule is a row of report_rules[]: a name (printed with each finding),
 * a threshold (the share below which it stays quiet) and a function that
 * reads the report and appends findings.  To add one, write the function
 * and add its row; docs/fold-report.1 lists the rules.  Findings are
 * ranked by their count (the share of the profile they stand for), then
 * by the table's order, then by frame name.
 */
#include "report/model.h"

#include <string.h>

#define PCT(n) ((fk_count)(n) * FK_COUNT_ONE / 100)

static const struct fk_str no_frame = { "", 0 };

/* At most this many findings of one rule about different frames. */
#define PER_RULE 3

static void add(GPtrArray *out, struct finding *f, const char *text)
{
	finding_text(f, ": %s", text);
	g_ptr_array_add(out, f);
}

/* A rule's threshold: --threshold's, or its own. */
static fk_count threshold(const struct report_rule *rule, const struct report *r)
{
	fk_count t = r->o->thresholds[rule - report_rules];

	return t >= 0 ? t : rule->min_share;
}

static struct frame_stat *frame_of(const struct profile *q, uint32_t id)
{
	return g_ptr_array_index(q->frames, id);
}

/*
 * Stacks summed by the edge a finding names: the program's frame (the
 * tail's site) and what it called (TAIL_NONE: nothing, it is the leaf).
 */
struct edge_sum {
	uint32_t site, callee;
	fk_count count, kernel;	/* kernel: of stacks that enter the kernel */
};

struct edges {
	const struct profile *q;
	GHashTable *index;	/* uint64 key -> struct edge_sum * */
	GPtrArray *v;		/* struct edge_sum *, heaviest first once sorted */
};

static void edges_init(struct edges *e, const struct profile *q)
{
	e->q = q;
	e->index = g_hash_table_new(g_int64_hash, g_int64_equal);
	e->v = g_ptr_array_new_with_free_func(g_free);
}

static void edges_free(struct edges *e)
{
	g_hash_table_destroy(e->index);
	g_ptr_array_free(e->v, TRUE);
}

/* site and callee as a key: the struct's first 8 bytes */
static void edges_add(struct edges *e, uint32_t site, uint32_t callee, fk_count c, bool kernel)
{
	struct edge_sum k = { site, callee, 0, 0 }, *x;

	if (!(x = g_hash_table_lookup(e->index, &k))) {
		x = g_new0(struct edge_sum, 1);
		*x = k;
		g_ptr_array_add(e->v, x);
		g_hash_table_insert(e->index, x, x);
	}
	x->count += c;
	if (kernel)
		x->kernel += c;
}

/* A system call's entry: the kernel's part of a stack that the program
 * asked for (an interrupt's or a fault's it did not). */
static bool is_syscall(const struct frame_stat *f)
{
	static const char *const entries[] = { "entry_SYSCALL", "entry_SYSENTER",
					       "entry_INT80", "do_syscall_64", "el0_svc" };

	for (size_t i = 0; i < G_N_ELEMENTS(entries); i++)
		if (f->name.len >= strlen(entries[i]) &&
		    memcmp(f->name.s, entries[i], strlen(entries[i])) == 0)
			return true;
	return false;
}

/* Adds t by its site -> callee (the leaf alone without a site). */
static void edges_add_tail(struct edges *e, const struct profile_tail *t)
{
	uint32_t site = t->site, callee;

	if (site == TAIL_NONE) {
		edges_add(e, profile_tail_frame(e->q, t, t->n - 1)->id, TAIL_NONE, t->count,
			  t->kernel < t->n);
		return;
	}
	callee = site + 1 < t->n ? profile_tail_frame(e->q, t, site + 1)->id : TAIL_NONE;
	/* an interrupt or a fault taken in the function's code is its own
	 * time, not a call it made */
	if (callee != TAIL_NONE && site + 1 == t->kernel && !is_syscall(frame_of(e->q, callee)))
		callee = TAIL_NONE;
	edges_add(e, profile_tail_frame(e->q, t, site)->id, callee, t->count, t->kernel < t->n);
}

static const struct profile *sort_q;

static int cmp_edge(const void *a, const void *b)
{
	const struct edge_sum *x = *(struct edge_sum *const *)a, *y = *(struct edge_sum *const *)b;
	int c;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if ((c = fk_str_cmp(frame_of(sort_q, x->site)->name, frame_of(sort_q, y->site)->name)))
		return c;
	if (x->callee == y->callee)
		return 0;
	if (x->callee == TAIL_NONE || y->callee == TAIL_NONE)
		return x->callee == TAIL_NONE ? -1 : 1;
	return fk_str_cmp(frame_of(sort_q, x->callee)->name, frame_of(sort_q, y->callee)->name);
}

static void edges_sort(struct edges *e)
{
	sort_q = e->q;
	if (e->v->len > 1)
		qsort(e->v->pdata, e->v->len, sizeof(void *), cmp_edge);
}

/* A finding about an edge of q. */
static struct finding *edge_finding(const struct report_rule *rule, const struct report *r,
				    const struct profile *q, const struct edge_sum *x, bool off)
{
	const struct frame_stat *site = frame_of(q, x->site);
	struct finding *f = finding_new(rule, site->name, x->count);

	f->off = off;
	if (x->callee == TAIL_NONE)
		finding_edge(f, NULL, site);
	else
		finding_edge(f, site, frame_of(q, x->callee));
	finding_amount(f, r, x->count, q->total);
	return f;
}

/*
 * Off-CPU waits for a lock, by the program's frame that took it: seed
 * 000's contended lock, from lock waits only (waitkind.h), never from a
 * condition variable's or an idle pool's.  The evidence is the time spent
 * waiting at that call, and with an on-CPU profile, the on-CPU time in
 * the lock functions it called.
 */
static void find_contended(const struct report_rule *rule, const struct report *r,
			   GPtrArray *out)
{
	const struct profile *q = r->off;
	struct edges e;
	guint n = 0;

	if (!q)
		return;
	edges_init(&e, q);
	for (guint i = 0; i < q->tails->len; i++) {
		const struct profile_tail *t = &g_array_index(q->tails, struct profile_tail, i);

		if (t->kind == WAIT_LOCK && t->site != TAIL_NONE)
			edges_add_tail(&e, t);
	}
	edges_sort(&e);
	for (guint i = 0; i < e.v->len && n < PER_RULE; i++) {
		const struct edge_sum *x = g_ptr_array_index(e.v, i);
		const struct frame_stat *site = frame_of(q, x->site), *on_site;
		struct finding *f;

		if (!share_at_least(x->count, q->total, threshold(rule, r)))
			break;
		f = edge_finding(rule, r, q, x, true);
		f->cls = wait_kind_name(WAIT_LOCK);
		finding_text(f, " waiting for the lock");
		if (r->p != q && (on_site = profile_frame(r->p, site->name.s, site->name.len))) {
			fk_count on = 0;
			char buf[FK_COUNT_BUFSZ * 2];

			for (guint k = 0; k < r->p->tails->len; k++) {
				const struct profile_tail *t = &g_array_index(r->p->tails,
									      struct profile_tail, k);

				if (t->kind == WAIT_LOCK && t->site != TAIL_NONE &&
				    profile_tail_frame(r->p, t, t->site) == on_site)
					on += t->count;
			}
			if (on > 0)
				finding_text(f, ", and %s %s on-CPU in the lock functions it calls",
					     count_grouped(on, buf), r->o->unit);
		}
		add(out, f, "a contended lock; hold it for less time, or split what it guards");
		n++;
	}
	edges_free(&e);
}

/* A group of threads (names differing in digits): its time and waits. */
struct idle_group {
	char *name;
	GHashTable *members;		/* root names (struct fold_entry *) */
	fk_count off, on;		/* all its off-CPU, on-CPU time */
	fk_count wait[WAIT_NKINDS];
	struct edges sites[WAIT_NKINDS];	/* lazily: .v NULL until used */
};

static void idle_group_free(gpointer p)
{
	struct idle_group *g = p;

	for (int k = 0; k < WAIT_NKINDS; k++)
		if (g->sites[k].v)
			edges_free(&g->sites[k]);
	g_hash_table_destroy(g->members);
	g_free(g->name);
	g_free(g);
}

struct idle_scan {
	const struct profile *q;
	GHashTable *groups;	/* name -> struct idle_group * */
	GString *key;
	bool on;		/* adding the on-CPU profile's */
};

static struct idle_group *group_of(struct idle_scan *s, const struct fold_entry *root, bool make)
{
	struct idle_group *g;

	thread_group_name(s->key, root->stack, root->len);
	if (!(g = g_hash_table_lookup(s->groups, s->key->str)) && make) {
		g = g_new0(struct idle_group, 1);
		g->name = g_strdup(s->key->str);
		g->members = g_hash_table_new(NULL, NULL);
		g_hash_table_insert(s->groups, g->name, g);
	}
	return g;
}

static void idle_stack(struct fold_entry *e, void *data)
{
	struct idle_scan *s = data;
	struct stack_key k = profile_stack_key(e);
	const struct profile_tail *t;
	struct idle_group *g = group_of(s, k.root, !s->on);

	if (!g)
		return;
	if (s->on) {
		g->on += e->count[0];
		return;
	}
	g_hash_table_add(g->members, (gpointer)k.root);
	g->off += e->count[0];
	if (!(t = profile_tail_of(s->q, k)))
		return;
	g->wait[t->kind] += e->count[0];
	if (t->site != TAIL_NONE) {
		uint32_t callee = t->site + 1 < t->n ?
			profile_tail_frame(s->q, t, t->site + 1)->id : TAIL_NONE;

		if (!g->sites[t->kind].v)
			edges_init(&g->sites[t->kind], s->q);
		edges_add(&g->sites[t->kind], profile_tail_frame(s->q, t, t->site)->id, callee,
			  e->count[0], false);
	}
}

static int cmp_idle(const void *a, const void *b)
{
	const struct idle_group *x = *(struct idle_group *const *)a;
	const struct idle_group *y = *(struct idle_group *const *)b;

	return strcmp(x->name, y->name);
}

/*
 * Threads that spent most of their time waiting on a condition, for an
 * event or asleep: an idle pool, a timer thread.  What they are, said so
 * that their waits are not mistaken for contention; nothing to fix, so
 * ranked after every other finding.  A thread's time is its off-CPU time
 * and, with an on-CPU profile of a time unit, its on-CPU time.
 */
static void find_idle(const struct report_rule *rule, const struct report *r,
		      GPtrArray *out)
{
	static const enum wait_kind kinds[] = { WAIT_COND, WAIT_IO, WAIT_SLEEP };
	const struct profile *q = r->off;
	struct idle_scan s = { q, NULL, NULL, false };
	GPtrArray *v;
	fk_count off_ns1, on_ns1;
	guint n = 0;

	if (!q || (off_ns1 = count_ns(1, r->o->offcpu_unit)) < 0)
		return;
	if (q == r->p)
		off_ns1 = count_ns(1, r->o->unit);
	if (off_ns1 < 0)
		return;
	s.groups = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, idle_group_free);
	s.key = g_string_new(NULL);
	fold_table_foreach(q->stacks, idle_stack, &s);
	on_ns1 = r->p != q ? count_ns(1, r->o->unit) : -1;
	if (on_ns1 >= 0) {
		s.on = true;
		fold_table_foreach(r->p->stacks, idle_stack, &s);
	}
	{
		GHashTableIter it;
		gpointer val;

		v = g_ptr_array_new();
		g_hash_table_iter_init(&it, s.groups);
		while (g_hash_table_iter_next(&it, NULL, &val))
			g_ptr_array_add(v, val);
	}
	g_ptr_array_sort(v, cmp_idle);
	for (guint i = 0; i < v->len; i++) {
		struct idle_group *g = g_ptr_array_index(v, i);
		fk_count all = g->off * off_ns1 + (on_ns1 >= 0 ? g->on * on_ns1 : 0);

		for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++) {
			struct edges *e = &g->sites[kinds[k]];
			const struct edge_sum *x;
			struct finding *f;
			guint members = g_hash_table_size(g->members);
			uint64_t pm;

			if (!e->v || !share_at_least(g->wait[kinds[k]] * off_ns1, all,
						     threshold(rule, r)))
				continue;
			edges_sort(e);
			x = g_ptr_array_index(e->v, 0);
			f = finding_new(rule, frame_of(q, x->site)->name, g->wait[kinds[k]]);
			f->off = true;
			f->info = true;
			f->cls = wait_kind_name(kinds[k]);
			finding_text(f, "thread ");
			finding_code(f, (struct fk_str){ g->name, strlen(g->name) });
			if (members > 1)
				finding_text(f, " (%u threads)", members);
			pm = share_scaled(g->wait[kinds[k]] * off_ns1, all, 1000);
			finding_text(f, " was %s for %" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT
				     "%% of its time, most at ", wait_kind_text(kinds[k]),
				     pm / 10, pm % 10);
			if (x->callee == TAIL_NONE)
				finding_edge(f, NULL, frame_of(q, x->site));
			else
				finding_edge(f, frame_of(q, x->site), frame_of(q, x->callee));
			finding_amount(f, r, g->wait[kinds[k]], q->total);
			add(out, f, kinds[k] == WAIT_SLEEP ? "asleep, not contended"
				    : "idle, waiting for work: not contended");
			n++;
		}
	}
	g_ptr_array_free(v, TRUE);
	g_hash_table_destroy(s.groups);
	g_string_free(s.key, TRUE);
	(void)n;
}

/* The caller -> frame evidence, the caller being NULL for an outermost one. */
static struct finding *about(const struct report_rule *rule, const struct report *r,
			     const struct frame_stat *fs, fk_count c)
{
	struct finding *f = finding_new(rule, fs->name, c);

	finding_edge(f, profile_caller(r->p, fs, NULL), fs);
	finding_amount(f, r, c, r->p->total);
	return f;
}

/* Whether a tail passes through the vDSO. */
static bool tail_has(const struct profile *q, const struct profile_tail *t, unsigned cls)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (profile_tail_frame(q, t, i)->classes & cls)
			return true;
	return false;
}

/*
 * On-CPU time by the program's frame and what it called: its own code
 * (the leaf), a library's, or a system call and the kernel's work for it
 * (a kernel leaf, a sampling artefact such as _raw_spin_unlock_irqrestore
 * included, is charged to the call the program made).  Clock reads
 * (vdso-clock), logging writes (sync-logging) and stacks switched out in
 * a call aside.
 */
static void find_hot(const struct report_rule *rule, const struct report *r,
		     GPtrArray *out)
{
	const struct profile *q = r->p;
	struct edges e;
	int n = 0;

	if (q == r->off)
		return;
	edges_init(&e, q);
	for (guint i = 0; i < q->tails->len; i++) {
		const struct profile_tail *t = &g_array_index(q->tails, struct profile_tail, i);

		/* switched out in a call (off-CPU stacks, a wait in an
		   on-CPU one) is not time in it; an interrupt's is the
		   function's own */
		if (tail_has(q, t, FRAME_VDSO) ||
		    (tail_has(q, t, FRAME_SCHED) &&
		     (t->site == TAIL_NONE || t->site + 1 != t->kernel ||
		      is_syscall(profile_tail_frame(q, t, t->kernel)))))
			continue;
		edges_add_tail(&e, t);
	}
	edges_sort(&e);
	for (guint i = 0; i < e.v->len && n < PER_RULE; i++) {
		const struct edge_sum *x = g_ptr_array_index(e.v, i);

		if (!share_at_least(x->count, q->total, threshold(rule, r)))
			break;
		if (frame_of(q, x->site)->log_write > 0)
			continue;
		add(out, edge_finding(rule, r, q, x, false),
		    x->callee == TAIL_NONE ?
		    "time in the function's own code; make it cheaper or call it less" :
		    x->kernel > x->count - x->kernel ?
		    "time in a system call it makes and the kernel's work for it; "
		    "make fewer or cheaper calls" :
		    "time in library code it calls; call it less, or with less");
		n++;
	}
	edges_free(&e);
}

/* Clock reads through the vDSO, by the program's frame making them. */
static void find_vdso(const struct report_rule *rule, const struct report *r,
		      GPtrArray *out)
{
	const struct profile *q = r->p;
	struct edges e;
	int n = 0;

	if (q == r->off)
		return;
	edges_init(&e, q);
	for (guint i = 0; i < q->tails->len; i++) {
		const struct profile_tail *t = &g_array_index(q->tails, struct profile_tail, i);

		if (tail_has(q, t, FRAME_VDSO))
			edges_add_tail(&e, t);
	}
	edges_sort(&e);
	for (guint i = 0; i < e.v->len && n < PER_RULE; i++) {
		const struct edge_sum *x = g_ptr_array_index(e.v, i);
		struct finding *f;

		if (!share_at_least(x->count, q->total, threshold(rule, r)))
			break;
		f = edge_finding(rule, r, q, x, false);
		finding_text(f, ", at ");
		finding_code(f, frame_of(q, x->site)->name);
		finding_text(f, " or in a function it calls (frame-pointer stacks lose the caller of "
			     "a library function without frame pointers)");
		add(out, f, "reading the clock through the vDSO: a clock read in a tight loop?");
		n++;
	}
	edges_free(&e);
}

/* The frames of class cls, heaviest by incl first, at least the rule's
 * share: up to PER_RULE of them. */
static guint heaviest(const struct report *r, unsigned cls, fk_count min,
		      const struct frame_stat **best)
{
	guint n = 0;

	for (guint i = 0; i < r->p->frames->len; i++) {
		const struct frame_stat *fs = g_ptr_array_index(r->p->frames, i);
		guint k;

		if (!(fs->classes & cls) || !share_at_least(fs->incl, r->p->total, min) ||
		    (cls == FRAME_CTOR && (fs->classes & FRAME_SYSTEM)))
			continue;
		for (k = n; k > 0 && (fs->incl > best[k - 1]->incl ||
				      (fs->incl == best[k - 1]->incl &&
				       fk_str_cmp(fs->name, best[k - 1]->name) < 0)); k--)
			if (k < PER_RULE)
				best[k] = best[k - 1];
		if (k < PER_RULE) {
			best[k] = fs;
			if (n < PER_RULE)
				n++;
		}
	}
	return n;
}

static void find_ctor(const struct report_rule *rule, const struct report *r,
		      GPtrArray *out)
{
	const struct frame_stat *best[PER_RULE];
	guint n = heaviest(r, FRAME_CTOR, threshold(rule, r), best);

	for (guint i = 0; i < n; i++)
		add(out, about(rule, r, best[i], best[i]->incl),
		    "objects built or destroyed on a hot path; hoist, reuse or pool them");
}

static void find_alloc(const struct report_rule *rule, const struct report *r,
		       GPtrArray *out)
{
	const struct frame_stat *best[PER_RULE];
	struct finding *f;

	if (!share_at_least(r->p->alloc, r->p->total, threshold(rule, r)) ||
	    !heaviest(r, FRAME_ALLOC, 0, best))
		return;
	f = finding_new(rule, best[0]->name, r->p->alloc);
	finding_edge(f, profile_caller(r->p, best[0], NULL), best[0]);
	finding_text(f, " and other allocation");
	finding_amount(f, r, r->p->alloc, r->p->total);
	add(out, f, "stacks allocating or freeing memory; reserve, reuse or pool");
}

static fk_count log_write_of(const struct frame_stat *f)
{
	return f->log_write;
}

/* The frame with the largest nonzero key(), ties to the smaller name. */
static const struct frame_stat *heaviest_by(const struct report *r,
					    fk_count (*key)(const struct frame_stat *))
{
	const struct frame_stat *best = NULL;

	for (guint i = 0; i < r->p->frames->len; i++) {
		const struct frame_stat *fs = g_ptr_array_index(r->p->frames, i);
		fk_count k = key(fs);

		if (k > 0 && (!best || k > key(best) ||
			      (k == key(best) && fk_str_cmp(fs->name, best->name) < 0)))
			best = fs;
	}
	return best;
}

static void find_logging(const struct report_rule *rule, const struct report *r,
			 GPtrArray *out)
{
	const struct frame_stat *best, *child;
	struct finding *f;

	if (!share_at_least(r->p->log_write, r->p->total, threshold(rule, r)))
		return;
	best = heaviest_by(r, log_write_of);
	child = profile_child(r->p, best, NULL);
	f = finding_new(rule, best->name, r->p->log_write);
	finding_edge(f, child ? best : NULL, child ? child : best);
	finding_amount(f, r, r->p->log_write, r->p->total);
	add(out, f, "logging that writes synchronously; use an asynchronous sink or log less");
}

/*
 * The frame of the most stacks with a property (the unresolved frame of
 * hidden tails, the outermost frame of lost ones), ties to the smaller
 * name.
 */
static const struct frame_stat *heaviest_in(const struct profile *q, bool lost)
{
	fk_count *sum = g_new0(fk_count, q->frames->len + 1);
	const struct frame_stat *best = NULL;

	for (guint i = 0; i < q->tails->len; i++) {
		const struct profile_tail *t = &g_array_index(q->tails, struct profile_tail, i);

		if (lost && t->lost) {
			sum[profile_tail_frame(q, t, 0)->id] += t->count;
		} else if (!lost && t->hidden) {
			for (uint32_t k = 0; k < t->n; k++)
				if (profile_tail_frame(q, t, k)->classes & FRAME_UNRESOLVED) {
					sum[profile_tail_frame(q, t, k)->id] += t->count;
					break;
				}
		}
	}
	for (guint i = 0; i < q->frames->len; i++) {
		const struct frame_stat *f = frame_of(q, i);

		if (sum[i] > 0 && (!best || sum[i] > sum[best->id] ||
				   (sum[i] == sum[best->id] && fk_str_cmp(f->name, best->name) < 0)))
			best = f;
	}
	g_free(sum);
	return best;
}

/* Stacks whose program frames an unresolved frame hides (a thread's start
 * routine in a library before them hides nothing of the program). */
static void find_unresolved(const struct report_rule *rule, const struct report *r,
			    GPtrArray *out)
{
	const struct frame_stat *best;
	struct finding *f;

	if (!share_at_least(r->p->hidden, r->p->total, threshold(rule, r)) ||
	    !(best = heaviest_in(r->p, false)))
		return;
	f = finding_new(rule, best->name, r->p->hidden);
	finding_code(f, best->name);
	finding_text(f, " and other unresolved frames among or beyond the program's");
	finding_amount(f, r, r->p->hidden, r->p->total);
	add(out, f, "stacks through code without symbols hide what it does; build with "
		    "-g -fno-omit-frame-pointer, or record with --call-graph dwarf");
}

/* Stacks that lost their callers, where the program's frames are lost. */
static void find_truncated(const struct report_rule *rule, const struct report *r,
			   GPtrArray *out)
{
	const struct frame_stat *best;
	struct finding *f;

	if (!share_at_least(r->p->lost, r->p->total, threshold(rule, r)))
		return;
	best = heaviest_in(r->p, true);
	f = finding_new(rule, best ? best->name : no_frame, r->p->lost);
	if (best) {
		finding_text(f, "stacks starting at ");
		finding_code(f, best->name);
	} else {
		finding_text(f, "stacks of a thread name alone");
	}
	finding_text(f, " and other stacks without their callers");
	finding_amount(f, r, r->p->lost, r->p->total);
	add(out, f, "stacks that do not reach a thread entry (_start, start_thread, clone) "
		    "lose their callers; build with -g -fno-omit-frame-pointer (libraries too), "
		    "or record with --call-graph dwarf");
}

/*
 * On-CPU samples whose innermost function kept no frame pointer where
 * sampled (a leaf of a library built without them, as Debian's libc is):
 * the kernel's frame-pointer walk goes from it to its caller's caller, so
 * its caller is missing and that time is charged a frame too high.  The
 * stacks cannot show it; the recording can (foldkit.so reads each sampled
 * function's unwind rule and fp-record keeps the count in on/index.tsv),
 * so this rule speaks only when the input says how much it is.
 */
static void find_caller_lost(const struct report_rule *rule, const struct report *r,
			     GPtrArray *out)
{
	const struct profile *q = r->p;
	struct fk_str in;
	struct finding *f;

	if (q == r->off || !q->has_caller_lost ||
	    !share_at_least(q->caller_lost, q->total, threshold(rule, r)))
		return;
	in.s = q->caller_lost_in ? q->caller_lost_in : "";
	in.len = strlen(in.s);
	f = finding_new(rule, in, q->caller_lost);
	finding_text(f, "stacks whose innermost function keeps no frame pointer where sampled");
	if (in.len) {
		finding_text(f, ", most in ");
		finding_code(f, in);
	}
	finding_amount(f, r, q->caller_lost, q->total);
	add(out, f, "the function that called each is missing from these frame-pointer "
		    "stacks, its time shown under the caller's caller; record with "
		    "--call-graph dwarf to see the callers");
}

static void find_dominant(const struct report_rule *rule, const struct report *r,
			  GPtrArray *out)
{
	const struct thread_row *t;
	struct finding *f;

	if (r->threads->len < 3)
		return;
	t = &g_array_index(r->threads, struct thread_row, 0);
	if (!share_at_least(t->count, r->p->total, threshold(rule, r)))
		return;
	f = finding_new(rule, t->name, t->count);
	finding_code(f, t->name);
	finding_amount(f, r, t->count, r->p->total);
	finding_text(f, ": one thread of %u has most of the total; the others may be "
		     "waiting for it", r->threads->len);
	g_ptr_array_add(out, f);
}

/*
 * Threads runnable, waiting for a CPU, for much of their window (the
 * run-queue profile, --runq): CPU-starved, which their off-CPU time does
 * not show, and which is not waiting for a lock or for work.  The whole
 * report names every process's threads, a process's report its own.
 */
static void find_starved(const struct report_rule *rule, const struct report *r,
			 GPtrArray *out)
{
	const struct runq *q = r->o->runq;
	bool whole = !r->in->process || strcmp(r->in->process, "whole") == 0;
	guint n = 0;

	for (size_t i = 0; q && i < runq_nthreads(q) && n < PER_RULE; i++) {
		const struct runq_thread *t = runq_thread_at(q, i);
		char buf[FK_COUNT_BUFSZ * 2];
		struct finding *f;

		if (t->window <= 0 || !share_at_least(t->count, t->window, threshold(rule, r)))
			continue;
		if (!whole && (!r->in->nfiles || !report_same_process(r->in->files[0], t->file)))
			continue;
		f = finding_new(rule, (struct fk_str){ t->thread, strlen(t->thread) }, t->count);
		f->profile = "runq";
		f->unit = r->o->runq_unit;
		f->cls = "runnable";
		finding_code(f, f->frame);
		if (t->process) {
			finding_text(f, " of ");
			finding_code(f, (struct fk_str){ t->process, strlen(t->process) });
		}
		finding_text(f, " runnable, waiting for a CPU");
		finding_amount(f, r, t->count, t->window);
		finding_text(f, " of its window");
		if (t->after_lock > 0)
			finding_text(f, ", %s %s of it once woken from a lock wait (not lock waiting)",
				     count_grouped(t->after_lock, buf), f->unit);
		add(out, f, "CPU-starved, not waiting: more threads ready to run than CPUs; "
		    "give it CPU time (fewer busy threads, priority, affinity) before "
		    "shortening its waits");
		n++;
	}
}

const struct report_rule report_rules[] = {
	{ "contended-lock", PCT(1) / 2, find_contended, "the off-CPU profile" },
	{ "hot-function", PCT(10), find_hot, "the profile" },
	{ "vdso-clock", PCT(1), find_vdso, "the profile" },
	{ "constructor", PCT(2), find_ctor, "the profile (inclusive)" },
	{ "allocation", PCT(10), find_alloc, "the profile" },
	{ "sync-logging", PCT(1), find_logging, "the profile" },
	{ "unresolved", PCT(5), find_unresolved, "the profile" },
	{ "truncated", PCT(5), find_truncated, "the profile" },
	{ "caller-lost", PCT(5), find_caller_lost, "the profile" },
	{ "dominant-thread", PCT(50), find_dominant, "the profile" },
	{ "idle-thread", PCT(50), find_idle, "the thread's time" },
	{ "cpu-starved", PCT(20), find_starved, "the thread's process's window (--runq)" },
};
const size_t report_nrules = G_N_ELEMENTS(report_rules);
G_STATIC_ASSERT(G_N_ELEMENTS(report_rules) <= REPORT_MAX_RULES);

static bool by_time;	/* rank by what fixing saves: every finding's a time */

static int rank_finding(gconstpointer a, gconstpointer b)
{
	const struct finding *x = *(const struct finding *const *)a;
	const struct finding *y = *(const struct finding *const *)b;
	int c;

	if (x->info != y->info)
		return x->info ? 1 : -1;
	if (by_time && !x->info) {
		if (x->save != y->save)
			return x->save > y->save ? -1 : 1;
	} else if ((c = share_cmp(y->count, y->total, x->count, x->total))) {
		return c;
	}
	if (x->rule != y->rule)
		return x->rule < y->rule ? -1 : 1;
	if ((c = fk_str_cmp(x->frame, y->frame)))
		return c;
	return fk_str_cmp(x->to, y->to);
}

void report_find(struct report *r)
{
	for (size_t i = 0; i < report_nrules; i++)
		report_rules[i].find(&report_rules[i], r, r->findings);
	by_time = true;
	for (guint i = 0; i < r->findings->len; i++) {
		const struct finding *f = g_ptr_array_index(r->findings, i);

		if (!f->info && f->save < 0)
			by_time = false;
	}
	g_ptr_array_sort(r->findings, rank_finding);
	if (r->findings->len > r->o->top)
		g_ptr_array_set_size(r->findings, (gint)r->o->top);
}
