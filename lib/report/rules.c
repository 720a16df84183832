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

/*
 * A frame wide in both profiles whose off-CPU stacks wait on a lock: seed
 * 000's "on-CPU + off-CPU = contended lock".  Of the frames on such paths
 * (main, the worker loop, ...), the ones that call the lock wait directly
 * for most of their waits are the ones to name; if none is wide on-CPU,
 * the first such row.
 */
static void find_contended(const struct report_rule *rule, const struct report *r,
			   GPtrArray *out)
{
	const struct contention_row *fallback = NULL;
	int n = 0;

	if (!r->off)
		return;
	for (guint i = 0; i < r->contention->len && n < PER_RULE; i++) {
		const struct contention_row *c = &g_array_index(r->contention, struct contention_row, i);
		const struct frame_stat *lock;
		struct finding *f;
		uint64_t off, lw;

		if (!c->lock_wait)
			continue;
		if (!fallback)
			fallback = c;
		if ((c->off->classes & FRAME_LOCK_WAIT) ||
		    c->off->calls_lock <= c->off->lock_wait - c->off->calls_lock ||
		    !(lock = profile_child_in(r->off, c->off, FRAME_LOCK_WAIT, NULL)))
			continue;
		f = finding_new(rule, c->on->name, c->on->incl);
		finding_edge(f, c->on, lock);
		finding_amount(f, r, c->on->incl, r->p->total);
		off = share_scaled(c->off->incl, r->off->total, 1000);
		lw = share_scaled(c->off->lock_wait, c->off->incl, 1000);
		finding_text(f, ": on-CPU, and %" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT
			     "%% of the off-CPU profile, %" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT
			     "%% of it waiting on a lock", off / 10, off % 10, lw / 10, lw % 10);
		add(out, f, "a contended lock; hold it for less time, or split what it guards");
		n++;
	}
	if (n == 0 && fallback) {
		const struct frame_stat *child = profile_child(r->off, fallback->off, NULL);
		struct finding *f = finding_new(rule, fallback->on->name, fallback->on->incl);

		finding_edge(f, fallback->on, child ? child : fallback->on);
		finding_amount(f, r, fallback->on->incl, r->p->total);
		add(out, f, "on-CPU and off-CPU, waiting on a lock off-CPU: a contended lock beyond it");
	}
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

static void find_hot(const struct report_rule *rule, const struct report *r,
		     GPtrArray *out)
{
	int n = 0;

	for (guint i = 0; i < r->self->len && n < PER_RULE; i++) {
		const struct frame_stat *fs = g_ptr_array_index(r->self, i);

		if (!share_at_least(fs->self, r->p->total, rule->min_share))
			break;
		if (fs->classes & (FRAME_SCHED | FRAME_UNRESOLVED | FRAME_VDSO))
			continue;
		add(out, about(rule, r, fs, fs->self),
		    "time in the function's own code; make it cheaper or call it less");
		n++;
	}
}

static void find_vdso(const struct report_rule *rule, const struct report *r,
		      GPtrArray *out)
{
	for (guint i = 0; i < r->self->len; i++) {
		const struct frame_stat *fs = g_ptr_array_index(r->self, i);

		if ((fs->classes & FRAME_VDSO) &&
		    share_at_least(fs->self, r->p->total, rule->min_share))
			add(out, about(rule, r, fs, fs->self),
			    "the vDSO among the hottest leaves: a clock read in a tight loop?");
	}
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

		if (!(fs->classes & cls) || !share_at_least(fs->incl, r->p->total, min))
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
	guint n = heaviest(r, FRAME_CTOR, rule->min_share, best);

	for (guint i = 0; i < n; i++)
		add(out, about(rule, r, best[i], best[i]->incl),
		    "objects built or destroyed on a hot path; hoist, reuse or pool them");
}

static void find_alloc(const struct report_rule *rule, const struct report *r,
		       GPtrArray *out)
{
	const struct frame_stat *best[PER_RULE];
	struct finding *f;

	if (!share_at_least(r->p->alloc, r->p->total, rule->min_share) ||
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

static fk_count trunc_head_of(const struct frame_stat *f)
{
	return f->trunc_head;
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

	if (!share_at_least(r->p->log_write, r->p->total, rule->min_share))
		return;
	best = heaviest_by(r, log_write_of);
	child = profile_child(r->p, best, NULL);
	f = finding_new(rule, best->name, r->p->log_write);
	finding_edge(f, child ? best : NULL, child ? child : best);
	finding_amount(f, r, r->p->log_write, r->p->total);
	add(out, f, "logging that writes synchronously; use an asynchronous sink or log less");
}

static void find_unresolved(const struct report_rule *rule, const struct report *r,
			    GPtrArray *out)
{
	const struct frame_stat *best[PER_RULE];
	struct finding *f;

	if (!share_at_least(r->p->unresolved, r->p->total, rule->min_share) ||
	    !heaviest(r, FRAME_UNRESOLVED, 0, best))
		return;
	f = finding_new(rule, best[0]->name, r->p->unresolved);
	finding_code(f, best[0]->name);
	finding_text(f, " and other unresolved frames");
	finding_amount(f, r, r->p->unresolved, r->p->total);
	add(out, f, "stacks through code without symbols hide what it does; build with "
		    "-g -fno-omit-frame-pointer, or record with --call-graph dwarf");
}

static void find_truncated(const struct report_rule *rule, const struct report *r,
			   GPtrArray *out)
{
	const struct frame_stat *best;
	struct finding *f;

	if (!share_at_least(r->p->truncated, r->p->total, rule->min_share))
		return;
	best = heaviest_by(r, trunc_head_of);
	f = finding_new(rule, best ? best->name : no_frame, r->p->truncated);
	if (best && best->trunc_head >= r->p->root_only) {
		finding_text(f, "stacks starting at ");
		finding_code(f, best->name);
	} else {
		finding_text(f, "stacks of a thread name alone");
	}
	finding_text(f, " and other truncated stacks");
	finding_amount(f, r, r->p->truncated, r->p->total);
	add(out, f, "stacks that do not reach a thread entry (_start, start_thread, clone) "
		    "lose their callers; build with -g -fno-omit-frame-pointer (libraries too), "
		    "or record with --call-graph dwarf");
}

static void find_dominant(const struct report_rule *rule, const struct report *r,
			  GPtrArray *out)
{
	const struct thread_row *t;
	struct finding *f;

	if (r->threads->len < 3)
		return;
	t = &g_array_index(r->threads, struct thread_row, 0);
	if (!share_at_least(t->count, r->p->total, rule->min_share))
		return;
	f = finding_new(rule, t->name, t->count);
	finding_code(f, t->name);
	finding_amount(f, r, t->count, r->p->total);
	finding_text(f, ": one thread of %u has most of the total; the others may be "
		     "waiting for it", r->threads->len);
	g_ptr_array_add(out, f);
}

const struct report_rule report_rules[] = {
	{ "contended-lock", 0, find_contended },
	{ "hot-function", PCT(10), find_hot },
	{ "vdso-clock", PCT(1), find_vdso },
	{ "constructor", PCT(5), find_ctor },
	{ "allocation", PCT(10), find_alloc },
	{ "sync-logging", PCT(1), find_logging },
	{ "unresolved", PCT(5), find_unresolved },
	{ "truncated", PCT(5), find_truncated },
	{ "dominant-thread", PCT(50), find_dominant },
};
const size_t report_nrules = G_N_ELEMENTS(report_rules);

static int rank_finding(gconstpointer a, gconstpointer b)
{
	const struct finding *x = *(const struct finding *const *)a;
	const struct finding *y = *(const struct finding *const *)b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->rule != y->rule)
		return x->rule < y->rule ? -1 : 1;
	return fk_str_cmp(x->frame, y->frame);
}

void report_find(struct report *r)
{
	for (size_t i = 0; i < report_nrules; i++)
		report_rules[i].find(&report_rules[i], r, r->findings);
	g_ptr_array_sort(r->findings, rank_finding);
	if (r->findings->len > r->o->top)
		g_ptr_array_set_size(r->findings, (gint)r->o->top);
}
