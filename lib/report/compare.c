#include "report/compare.h"

#include "core/error.h"
#include "core/folded.h"
#include "core/intern.h"
#include "core/jsonesc.h"
#include "core/mdcode.h"
#include "core/splitindex.h"
#include "core/textesc.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { ON, OFF, NKINDS };

static const char *const kind_name[NKINDS] = { "on-CPU", "off-CPU" };
static const char *const kind_key[NKINDS] = { "on-cpu", "off-cpu" };

/* A function's counts in one profile. */
struct fn {
	fk_count self, incl;
	uint64_t last;		/* the last stack that added to incl */
};

/* One profile: a process's (or all processes') on- or off-CPU stacks. */
struct prof {
	bool sampled;		/* on-CPU: sampled; off-CPU: measured */
	GArray *fns;		/* struct fn, by the side's name id */
	fk_count total;
	uint64_t stacks;
	fk_count gcd;		/* of its lines' counts: the sample period */
	uint64_t samples;	/* from index.tsv, for every file ... */
	bool samples_known;	/* ... if each said */
	int files;
};

struct proc {
	char *key;		/* paired on: role, or name[#N] */
	char *comm;		/* NULL: unknown */
	int pid;		/* 0: unknown */
	char *stem;		/* its file's name without ".folded" */
	bool has_role;
	struct prof *prof[NKINDS];
	struct proc *peer;	/* after cmp_pair() */
};

struct cmp_side {
	char *path;
	const char *what;	/* "file", "split directory", "capture" */
	double window;		/* seconds; 0: unknown */
	bool window_given;	/* by --window, not the capture's index */
	char *unit[NKINDS];	/* the counts' units; NULL: no such profile */
	struct proc all;
	GPtrArray *procs;	/* struct proc *, in key order after cmp_pair() */
	GPtrArray *notes;	/* char *, NULL-terminated: what was left out */
	struct fk_intern *names;	/* the functions' names: ids */
	GString *prev;		/* the stack read last, and its frames' */
	GArray *ids;		/* name ids (below the root), and where */
	GArray *ends;		/* each ends in it (size_t) */
};

/* --- profiles ------------------------------------------------------------ */

static struct prof *prof_new(bool sampled)
{
	struct prof *p = g_new0(struct prof, 1);

	p->sampled = sampled;
	p->fns = g_array_new(FALSE, TRUE, sizeof(struct fn));
	p->samples_known = true;
	return p;
}

static void prof_free(struct prof *p)
{
	if (!p)
		return;
	g_array_free(p->fns, TRUE);
	g_free(p);
}

static fk_count gcd(fk_count a, fk_count b)
{
	while (b) {
		fk_count t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * The name ids of the frames of s[0..len) below the root, into s->ids:
 * sorted input repeats the frames of the stack before, whose ids are kept,
 * so only the frames past the bytes the two share are looked up.
 */
static void stack_ids(struct cmp_side *sd, const char *s, size_t len)
{
	const char *end = s + len, *semi = memchr(s, ';', len);
	size_t keep = 0, common = 0, n = MIN(len, sd->prev->len);
	const char *q;

	while (common < n && s[common] == sd->prev->str[common])
		common++;
	/* a frame is the same if it ends at a ';' both stacks share */
	while (keep < sd->ends->len && g_array_index(sd->ends, size_t, keep) < common &&
	       s[g_array_index(sd->ends, size_t, keep)] == ';')
		keep++;
	g_array_set_size(sd->ids, keep);
	g_array_set_size(sd->ends, keep);
	g_string_truncate(sd->prev, 0);
	g_string_append_len(sd->prev, s, (gssize)len);
	if (!semi)
		return;
	q = keep ? s + g_array_index(sd->ends, size_t, keep - 1) + 1 : semi + 1;
	for (;;) {
		const char *e = memchr(q, ';', (size_t)(end - q));
		uint32_t id;
		size_t at;

		if (!e)
			e = end;
		id = fk_intern_id(sd->names, q, (size_t)(e - q), NULL);
		at = (size_t)(e - s);
		g_array_append_val(sd->ids, id);
		g_array_append_val(sd->ends, at);
		if (e == end)
			break;
		q = e + 1;
	}
}

/*
 * Adds one stack, whose frames' ids are ids[0..n): the root frame (a
 * thread or process) is no function; the leaf gets the self count, every
 * distinct frame below the root the inclusive count once (a recursive
 * function is not counted twice).
 */
static void prof_add(struct prof *p, const uint32_t *ids, size_t n, fk_count count)
{
	struct fn *f = NULL;

	p->total += count;
	p->stacks++;
	p->gcd = gcd(p->gcd, count);
	for (size_t i = 0; i < n; i++) {
		if (ids[i] >= p->fns->len)
			g_array_set_size(p->fns, ids[i] + 1);
		f = &g_array_index(p->fns, struct fn, ids[i]);
		if (f->last != p->stacks) {
			f->last = p->stacks;
			f->incl += count;
		}
	}
	if (f)
		f->self += count;
}

static double unit_seconds(const char *u);

/*
 * The count one sample weighs (0: unknown, no stacks): from index.tsv's
 * samples; 1 when a count counts samples (or events); else, for a time,
 * the greatest common divisor of the counts of every process of the side
 * (all: one recording, one period; a process of few stacks alone may
 * share a larger factor by chance).
 */
static double sample_weight(const struct prof *p, const struct prof *all, const char *unit)
{
	if (p->samples_known && p->samples > 0 && p->files > 0)
		return fk_count_to_double(p->total) / (double)p->samples;
	if (unit_seconds(unit) == 0)
		return 1;
	return fk_count_to_double(all && all->gcd ? all->gcd : p->gcd);
}

/* --- reading -------------------------------------------------------------- */

static void proc_free(struct proc *x)
{
	g_free(x->key);
	g_free(x->comm);
	g_free(x->stem);
	for (int k = 0; k < NKINDS; k++)
		prof_free(x->prof[k]);
}

static void proc_free_ptr(gpointer p)
{
	proc_free(p);
	g_free(p);
}

const char *const *cmp_side_notes(const struct cmp_side *s)
{
	return (const char *const *)s->notes->pdata;
}

void cmp_side_free(struct cmp_side *s)
{
	if (!s)
		return;
	g_free(s->path);
	for (int k = 0; k < NKINDS; k++)
		g_free(s->unit[k]);
	proc_free(&s->all);
	g_ptr_array_unref(s->procs);
	g_ptr_array_unref(s->notes);
	fk_intern_free(s->names);
	g_string_free(s->prev, TRUE);
	g_array_free(s->ids, TRUE);
	g_array_free(s->ends, TRUE);
	g_free(s);
}

/* foldkit's off-CPU unit: time measured at every switch, not sampled */
static bool offcpu_unit(const char *unit)
{
	return strcmp(unit, "us") == 0 || strcmp(unit, "\u00b5s") == 0 ||
	       strcmp(unit, "usec") == 0;
}

/*
 * Reads one folded file into the profile of kind of x (may be NULL: only
 * all's) and of all.  -1 with *err on a read error or a differential line.
 */
static int read_file(struct cmp_side *s, const char *path, int kind, struct proc *x,
		     struct skip_log *skips, GError **err)
{
	struct folded_shape shape = { .ncounts = 1 };
	struct folded_reader *fr = folded_reader_open(path, skips, err);
	struct folded_line fl;
	int rc;

	if (!fr)
		return -1;
	folded_reader_set_shape(fr, &shape);
	g_string_truncate(s->prev, 0);		/* (ends index it) */
	g_array_set_size(s->ends, 0);
	while ((rc = folded_reader_next(fr, &fl, err)) > 0) {
		const uint32_t *ids;

		stack_ids(s, fl.stack, fl.len);
		ids = (const uint32_t *)(void *)s->ids->data;
		prof_add(s->all.prof[kind], ids, s->ids->len, fl.count[0]);
		if (x)
			prof_add(x->prof[kind], ids, s->ids->len, fl.count[0]);
	}
	folded_reader_free(fr);
	if (rc == 0 && shape.odd) {
		fk_error_at(err, FK_ERROR_PARSE, shape.odd_file, shape.odd_line,
			    "a differential line (two counts): compare two plain profiles");
		rc = -1;
	}
	folded_shape_release(&shape);
	return rc < 0 ? -1 : 0;
}

/* Sets the side's unit of kind, which must agree with one set before. */
static int set_unit(struct cmp_side *s, int kind, const char *unit, const char *where,
		    GError **err)
{
	if (s->unit[kind] && strcmp(s->unit[kind], unit) != 0) {
		fk_error_at(err, FK_ERROR_PARSE, where, 0,
			    "counts in %s, but %s gives %s", unit, s->path, s->unit[kind]);
		return -1;
	}
	if (!s->unit[kind])
		s->unit[kind] = g_strdup(unit);
	return 0;
}

/* The process of a row: a capture's on/ and off/ list the same one (by
 * pid, else by file name). */
static struct proc *proc_of_row(struct cmp_side *s, const struct fk_split_index *x,
				const struct fk_split_row *r)
{
	const char *role = fk_split_index_cell(x, r, "role");
	size_t n = strlen(r->file);
	char *stem = g_strndup(r->file, g_str_has_suffix(r->file, ".folded") ? n - 7 : n);
	struct proc *p;

	for (guint i = 0; i < s->procs->len; i++) {
		p = g_ptr_array_index(s->procs, i);
		if (r->pid ? p->pid == r->pid : strcmp(p->stem, stem) == 0) {
			g_free(stem);
			return p;
		}
	}
	p = g_new0(struct proc, 1);
	p->comm = r->comm ? g_strdup(r->comm) : NULL;
	p->pid = r->pid;
	p->stem = stem;
	if (!p->comm) {		/* split= names its files COMM-PID.folded */
		const char *dash = strrchr(stem, '-');
		char *end;
		long pid = dash ? strtol(dash + 1, &end, 10) : 0;

		if (dash && dash > stem && dash[1] && !*end && pid > 0 && pid < INT_MAX) {
			p->comm = g_strndup(stem, (size_t)(dash - stem));
			p->pid = r->pid ? r->pid : (int)pid;
		}
	}
	p->has_role = role && *role;
	g_ptr_array_add(s->procs, p);
	return p;
}

/*
 * fp-record's window, from the window column of its index (seconds, the
 * same on every line): the first that reads as one.  A cell that does
 * not, or a second that differs, is a note, never a wrong divisor.
 */
static void index_window(struct cmp_side *s, const struct fk_split_index *x)
{
	for (guint i = 0; i < x->rows->len; i++) {
		const char *cell = fk_split_index_cell(x, g_ptr_array_index(x->rows, i), "window");
		char *end;
		double v;

		if (!cell)
			return;
		errno = 0;
		v = g_ascii_strtod(cell, &end);
		if (errno || end == cell || *end || !(v > 0 && v < 1e9)) {
			char *esc = fk_text_escape_dup(cell, strlen(cell), FK_ESC_BACKSLASH);

			g_ptr_array_insert(s->notes, (gint)s->notes->len - 1,
					   g_strdup_printf("%s: line %u: window '%s' is not a number "
							   "of seconds: left out", x->path, i + 2,
							   esc));
			g_free(esc);
			continue;
		}
		if (s->window == 0) {
			s->window = v;
		} else if (v != s->window) {
			g_ptr_array_insert(s->notes, (gint)s->notes->len - 1,
					   g_strdup_printf("%s: line %u: window %g s, not %g s as "
							   "before: the first kept", x->path,
							   i + 2, v, s->window));
		}
	}
}

/* Reads a split directory's files as the profiles of kind (-1: by unit). */
static int read_split(struct cmp_side *s, const char *dir, int kind, const struct cmp_opts *o,
		      struct skip_log *skips, GError **err)
{
	struct fk_split_index *x = fk_split_index_read(dir, 0, err);
	const char *unit;
	int rc = 0;

	if (!x)
		return -1;
	/* fp-record's profiles are in ns on-CPU and us off-CPU */
	unit = x->unit ? x->unit : kind == OFF ? "us" : kind == ON ? "ns"
	       : o->unit ? o->unit : "samples";
	if (x->unit && o->unit && strcmp(x->unit, o->unit) != 0 && kind < 0) {
		fk_error_at(err, FK_ERROR_PARSE, x->path, 0,
			    "gives the counts in %s, not %s (--unit)", x->unit, o->unit);
		fk_split_index_free(x);
		return -1;
	}
	if (kind < 0)
		kind = offcpu_unit(unit) ? OFF : ON;
	if (set_unit(s, kind, unit, x->path, err) < 0) {
		fk_split_index_free(x);
		return -1;
	}
	if (!s->all.prof[kind])
		s->all.prof[kind] = prof_new(kind == ON);
	for (char **f = x->unlisted; *f; f++) {	/* an earlier run's, never summed */
		char *path = g_build_filename(dir, *f, NULL);

		g_ptr_array_insert(s->notes, (gint)s->notes->len - 1,
				   g_strdup_printf("%s: not listed in %s: left out", path, x->path));
		g_free(path);
	}
	if (!s->window_given && x->rows->len)
		index_window(s, x);
	for (guint i = 0; i < x->rows->len && rc == 0; i++) {
		const struct fk_split_row *r = g_ptr_array_index(x->rows, i);
		struct proc *p = proc_of_row(s, x, r);
		char *path = g_build_filename(dir, r->file, NULL);

		if (!p->prof[kind])
			p->prof[kind] = prof_new(kind == ON);
		rc = read_file(s, path, kind, p, skips, err);
		g_free(path);
		for (struct prof **q = (struct prof *[]){ p->prof[kind], s->all.prof[kind], NULL }; *q; q++) {
			(*q)->files++;
			(*q)->samples += r->samples;
			if (!r->has_samples)
				(*q)->samples_known = false;
		}
	}
	fk_split_index_free(x);
	return rc;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

struct cmp_side *cmp_side_read(const char *path, int which,
			       const struct cmp_opts *o, struct skip_log *skips,
			       GError **err)
{
	struct cmp_side *s = g_new0(struct cmp_side, 1);
	int rc = 0;

	s->path = g_strdup(path);
	s->procs = g_ptr_array_new_with_free_func(proc_free_ptr);
	s->notes = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(s->notes, NULL);
	s->names = fk_intern_new();
	s->prev = g_string_new(NULL);
	s->ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	s->ends = g_array_new(FALSE, FALSE, sizeof(size_t));
	s->all.key = g_strdup("all");
	s->window = o->window[which];
	s->window_given = s->window > 0;
	if (!is_dir(path)) {
		const char *unit = o->unit ? o->unit : "samples";
		int kind = offcpu_unit(unit) ? OFF : ON;

		s->what = "file";
		s->unit[kind] = g_strdup(unit);
		s->all.prof[kind] = prof_new(kind == ON);
		s->all.prof[kind]->samples_known = false;
		rc = read_file(s, path, kind, NULL, skips, err);
		s->all.prof[kind]->files = 1;
	} else {
		char *on = g_build_filename(path, "on", NULL);
		char *off = g_build_filename(path, "off", NULL);

		if (is_dir(on) || is_dir(off)) {
			s->what = "capture";
			if (is_dir(on))
				rc = read_split(s, on, ON, o, skips, err);
			if (rc == 0 && is_dir(off))
				rc = read_split(s, off, OFF, o, skips, err);
		} else {
			s->what = "split directory";
			rc = read_split(s, path, -1, o, skips, err);
		}
		g_free(on);
		g_free(off);
	}
	if (rc < 0) {
		cmp_side_free(s);
		return NULL;
	}
	return s;
}

/* --- pairing -------------------------------------------------------------- */

static int by_comm_pid(gconstpointer a, gconstpointer b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	int c = strcmp(x->comm ? x->comm : x->stem, y->comm ? y->comm : y->stem);

	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

static int by_key(gconstpointer a, gconstpointer b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;

	return strcmp(x->key, y->key);
}

/*
 * Keys: a process with a role (fp-record's index.tsv) is its file's stem,
 * the same in every run; else its name, and several of one name
 * "NAME#1", "NAME#2" in the order of their pids.
 */
static void make_keys(struct cmp_side *s)
{
	GPtrArray *v = s->procs;

	g_ptr_array_sort(v, by_comm_pid);
	for (guint i = 0; i < v->len;) {
		struct proc *p = g_ptr_array_index(v, i);
		const char *name = p->comm ? p->comm : p->stem;
		guint j = i + 1;

		while (j < v->len) {
			const struct proc *q = g_ptr_array_index(v, j);

			if (strcmp(q->comm ? q->comm : q->stem, name) != 0)
				break;
			j++;
		}
		for (guint k = i; k < j; k++) {
			struct proc *q = g_ptr_array_index(v, k);

			q->key = q->has_role ? g_strdup(q->stem)
				 : j - i == 1 ? g_strdup(name)
				 : g_strdup_printf("%s#%u", name, k - i + 1);
		}
		i = j;
	}
	g_ptr_array_sort(v, by_key);
}

/* The one kind of profile a side has, or -1 (none, or both). */
static int only_kind(const struct cmp_side *s)
{
	return s->unit[ON] && !s->unit[OFF] ? ON : s->unit[OFF] && !s->unit[ON] ? OFF : -1;
}

int cmp_pair(struct cmp_side *base, struct cmp_side *new, GError **err)
{
	int kb = only_kind(base), kn = only_kind(new);

	if (kb >= 0 && kn >= 0 && kb != kn) {
		fk_error_at(err, FK_ERROR_PARSE, new->path, 0,
			    "counts in %s (%s), but %s's in %s (%s): they cannot be compared",
			    new->unit[kn], kind_name[kn], base->path, base->unit[kb], kind_name[kb]);
		return -1;
	}
	for (int k = 0; k < NKINDS; k++)
		if (base->unit[k] && new->unit[k] && strcmp(base->unit[k], new->unit[k]) != 0) {
			fk_error_at(err, FK_ERROR_PARSE, new->path, 0,
				    "%s counts in %s, but %s's in %s: they cannot be compared",
				    kind_name[k], new->unit[k], base->path, base->unit[k]);
			return -1;
		}
	make_keys(base);
	make_keys(new);
	base->all.peer = &new->all;
	new->all.peer = &base->all;
	for (guint i = 0, j = 0; i < base->procs->len && j < new->procs->len;) {
		struct proc *a = g_ptr_array_index(base->procs, i);
		struct proc *b = g_ptr_array_index(new->procs, j);
		int c = strcmp(a->key, b->key);

		if (c == 0) {
			a->peer = b;
			b->peer = a;
		}
		i += c <= 0;
		j += c >= 0;
	}
	return 0;
}

/* --- the comparison of two profiles --------------------------------------- */

struct row {
	struct fk_str name;	/* the side's interned bytes */
	fk_count c[2];
	double r[2], delta, err;
};

struct table {
	GArray *rows;		/* struct row, changes outside the error, ranked */
	uint64_t within;	/* changes inside the error, left out */
	uint64_t unchanged;
};

struct pair {
	const struct cmp_side *side[2];
	const struct prof *p[2];
	const char *unit;
	double div[2];		/* what a count is divided by: the window, or 1 */
	double w[2];		/* the sample weights */
	bool sampled;
	struct table self, incl;
};

static int by_change(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double dx = fabs(x->delta), dy = fabs(y->delta);

	int c;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	c = memcmp(x->name.s, y->name.s, MIN(x->name.len, y->name.len));
	return c ? c : (x->name.len > y->name.len) - (x->name.len < y->name.len);
}

static void add_row(struct pair *pr, struct table *t, struct fk_str name, fk_count c0,
		    fk_count c1, double z)
{
	struct row r = { .name = name, .c = { c0, c1 } };

	for (int i = 0; i < 2; i++)
		r.r[i] = fk_count_to_double(r.c[i]) / pr->div[i];
	r.delta = r.r[1] - r.r[0];
	if (pr->sampled)
		r.err = sqrt(pr->w[0] * fk_count_to_double(c0) / (pr->div[0] * pr->div[0]) +
			     pr->w[1] * fk_count_to_double(c1) / (pr->div[1] * pr->div[1]));
	if (r.delta == 0) {
		t->unchanged++;
		return;
	}
	if (pr->sampled && fabs(r.delta) <= z * r.err) {
		t->within++;
		return;
	}
	g_array_append_val(t->rows, r);
}

static const struct fn no_fn;

/* The function id has in p (none: zero counts). */
static const struct fn *fn_at(const struct prof *p, uint32_t id)
{
	return p && id < p->fns->len ? &g_array_index(p->fns, struct fn, id) : &no_fn;
}

/*
 * The rows of every function of either profile: base's names first, then
 * the new side's that base's names lack (names are matched by their
 * bytes, ids being each side's own).
 */
static void compare(struct pair *pr, double z)
{
	const struct cmp_side *sa = pr->side[0], *sb = pr->side[1];

	pr->self.rows = g_array_new(FALSE, FALSE, sizeof(struct row));
	pr->incl.rows = g_array_new(FALSE, FALSE, sizeof(struct row));
	for (uint32_t id = 0; pr->p[0] && id < pr->p[0]->fns->len; id++) {
		struct fk_str name = fk_intern_str(sa->names, id);
		uint32_t other = fk_intern_find(sb->names, name.s, name.len);
		const struct fn *x = fn_at(pr->p[0], id);
		const struct fn *y = other == UINT32_MAX ? &no_fn : fn_at(pr->p[1], other);

		if (x->incl == 0)
			continue;	/* another process's function */
		add_row(pr, &pr->self, name, x->self, y->self, z);
		add_row(pr, &pr->incl, name, x->incl, y->incl, z);
	}
	for (uint32_t id = 0; pr->p[1] && id < pr->p[1]->fns->len; id++) {
		struct fk_str name = fk_intern_str(sb->names, id);
		uint32_t other = fk_intern_find(sa->names, name.s, name.len);
		const struct fn *y = fn_at(pr->p[1], id);

		if (y->incl == 0 || (other != UINT32_MAX && fn_at(pr->p[0], other)->incl != 0))
			continue;	/* none here, or a row already */
		add_row(pr, &pr->self, name, 0, y->self, z);
		add_row(pr, &pr->incl, name, 0, y->incl, z);
	}
	g_array_sort(pr->self.rows, by_change);
	g_array_sort(pr->incl.rows, by_change);
}

static void pair_free(struct pair *pr)
{
	g_array_free(pr->self.rows, TRUE);
	g_array_free(pr->incl.rows, TRUE);
}

/* --- writing -------------------------------------------------------------- */

struct cw {
	FILE *out;
	const struct cmp_side *side[2];
	const struct cmp_opts *o;
	bool per_second;
	GString *tmp;
	bool first;		/* JSON: no comparison written yet */
};

static double prof_total(const struct prof *p)
{
	return p ? fk_count_to_double(p->total) : 0;
}

/* Seconds per unit of a time unit, else 0 (a count of things). */
static double unit_seconds(const char *u)
{
	static const struct { const char *u; double s; } units[] = {
		{ "ns", 1e-9 }, { "us", 1e-6 }, { "\u00b5s", 1e-6 }, { "usec", 1e-6 },
		{ "ms", 1e-3 }, { "s", 1 },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(units); i++)
		if (strcmp(u, units[i].u) == 0)
			return units[i].s;
	return 0;
}

/* v (in unit, per second when per_second) for people: "27.30 ms/s" */
static void human(GString *g, double v, const char *unit, bool per_second, bool sign)
{
	double s = unit_seconds(unit), a;
	const char *suffix = per_second ? "/s" : "";

	if (v == 0) {
		g_string_append_c(g, '0');
		return;
	}
	if (sign && v > 0)
		g_string_append_c(g, '+');
	if (s == 0) {
		if (per_second) {
			g_string_append_printf(g, "%.2f %s%s", v, unit, suffix);
		} else {	/* 1,234,567 */
			char *d = g_strdup_printf("%.0f", fabs(v));
			size_t n = strlen(d);

			if (v < 0)
				g_string_append_c(g, '-');
			for (size_t i = 0; i < n; i++) {
				if (i && (n - i) % 3 == 0)
					g_string_append_c(g, ',');
				g_string_append_c(g, d[i]);
			}
			g_free(d);
			g_string_append_printf(g, " %s", unit);
		}
		return;
	}
	v *= s;
	a = fabs(v);
	if (a >= 1 || a == 0)
		g_string_append_printf(g, "%.2f s%s", v, suffix);
	else if (a >= 1e-3)
		g_string_append_printf(g, "%.2f ms%s", v * 1e3, suffix);
	else if (a >= 1e-6)
		g_string_append_printf(g, "%.2f \u00b5s%s", v * 1e6, suffix);
	else
		g_string_append_printf(g, "%.0f ns%s", v * 1e9, suffix);
}

/* a JSON number: exact counts, or a rate with three decimals */
static void json_num(struct cw *w, fk_count c, double r)
{
	char buf[FK_COUNT_BUFSZ];

	if (!w->per_second) {
		fwrite(buf, 1, fk_count_format(c, buf), w->out);
		return;
	}
	if (r == 0)
		r = 0;	/* no "-0.000" */
	fprintf(w->out, "%.3f", r);
}

static void json_strn(struct cw *w, const char *s, size_t len)
{
	g_string_truncate(w->tmp, 0);
	fk_json_escape(w->tmp, s, len, FK_JSON_HTML);	/* as fold-report's JSON */
	fputs(w->tmp->str, w->out);
}

static void json_str(struct cw *w, const char *s)
{
	json_strn(w, s, strlen(s));
}

static double share(fk_count c, const struct prof *p)
{
	return p && p->total > 0 ? fk_count_to_double(c) / fk_count_to_double(p->total) : 0;
}

static void json_table(struct cw *w, const struct pair *pr, const struct table *t,
		       const char *name)
{
	guint n = MIN(t->rows->len, w->o->top);

	fprintf(w->out, ",\n      \"%s\": [", name);
	for (guint i = 0; i < n; i++) {
		const struct row *r = &g_array_index(t->rows, struct row, i);

		fputs(i ? ",\n        {\"frame\": " : "\n        {\"frame\": ", w->out);
		json_strn(w, r->name.s, r->name.len);
		fputs(", \"base\": ", w->out);
		json_num(w, r->c[0], r->r[0]);
		fputs(", \"new\": ", w->out);
		json_num(w, r->c[1], r->r[1]);
		fputs(", \"delta\": ", w->out);
		json_num(w, r->c[1] - r->c[0], r->delta);
		fprintf(w->out, ", \"base_share\": %.6f, \"new_share\": %.6f",
			share(r->c[0], pr->p[0]), share(r->c[1], pr->p[1]));
		if (pr->sampled)
			fprintf(w->out, ", \"error\": %.3f", r->err);
		fputs("}", w->out);
	}
	fprintf(w->out, "%s],\n      \"%s_left_out\": %" G_GUINT64_FORMAT
		",\n      \"%s_more\": %u", n ? "\n      " : "", name, t->within, name,
		t->rows->len - n);
}

static void json_pair(struct cw *w, const struct proc *x, int kind, const struct pair *pr)
{
	fputs(w->first ? "\n    {\"process\": " : ",\n    {\"process\": ", w->out);
	w->first = false;
	json_str(w, x->key);
	fprintf(w->out, ", \"profile\": \"%s\", \"unit\": ", kind_key[kind]);
	json_str(w, pr->unit);
	fprintf(w->out, ", \"per_second\": %s, \"sampled\": %s",
		w->per_second ? "true" : "false", pr->sampled ? "true" : "false");
	if (pr->sampled)
		fprintf(w->out, ", \"sample_weight\": [%.3f, %.3f]", pr->w[0], pr->w[1]);
	fputs(",\n      \"base_total\": ", w->out);
	json_num(w, pr->p[0] ? pr->p[0]->total : 0, prof_total(pr->p[0]) / pr->div[0]);
	fputs(", \"new_total\": ", w->out);
	json_num(w, pr->p[1] ? pr->p[1]->total : 0, prof_total(pr->p[1]) / pr->div[1]);
	json_table(w, pr, &pr->self, "self");
	json_table(w, pr, &pr->incl, "inclusive");
	fputs("}", w->out);
}

static void md(struct cw *w, const char *s)
{
	fputs(s, w->out);
}

static void md_coden(struct cw *w, const char *s, size_t len, bool table)
{
	g_string_truncate(w->tmp, 0);
	fk_md_code(w->tmp, s, len, table);
	fputs(w->tmp->str, w->out);
}

static void md_code(struct cw *w, const char *s, bool table)
{
	md_coden(w, s, strlen(s), table);
}

static void md_amount(struct cw *w, double v, const char *unit, bool sign)
{
	g_string_truncate(w->tmp, 0);
	human(w->tmp, v, unit, w->per_second, sign);
	fputs(w->tmp->str, w->out);
}

/* a count not per second: a sample's weight */
static void md_weight(struct cw *w, double v, const char *unit)
{
	g_string_truncate(w->tmp, 0);
	human(w->tmp, v, unit, false, false);
	fputs(w->tmp->str, w->out);
}

static void md_table(struct cw *w, const struct pair *pr, const struct table *t,
		     const char *title)
{
	guint n = MIN(t->rows->len, w->o->top);

	fprintf(w->out, "\n### %s\n\n", title);
	if (n == 0) {
		fputs("No change outside the sampling error.\n", w->out);
	} else {
		md(w, "| Function | Base | New | Change | Base share | New share |\n"
		      "| --- | ---: | ---: | ---: | ---: | ---: |\n");
		for (guint i = 0; i < n; i++) {
			const struct row *r = &g_array_index(t->rows, struct row, i);

			md(w, "| ");
			md_coden(w, r->name.s, r->name.len, true);
			md(w, " | ");
			md_amount(w, r->r[0], pr->unit, false);
			md(w, " | ");
			md_amount(w, r->r[1], pr->unit, false);
			md(w, " | ");
			md_amount(w, r->delta, pr->unit, true);
			fprintf(w->out, " | %.1f%% | %.1f%% |\n", 100 * share(r->c[0], pr->p[0]),
				100 * share(r->c[1], pr->p[1]));
		}
	}
	if (t->rows->len > n)
		fprintf(w->out, "\n(%u more changes; --top N shows more.)\n", t->rows->len - n);
	if (t->within)
		fprintf(w->out, "\n(%" G_GUINT64_FORMAT " smaller change%s within the sampling error left out.)\n",
			t->within, t->within == 1 ? "" : "s");
}

static void md_pair(struct cw *w, const struct proc *x, int kind, const struct pair *pr)
{
	md(w, "\n## ");
	if (x == &w->side[0]->all)
		md(w, "All processes");
	else
		md_code(w, x->key, false);
	fprintf(w->out, ": %s (%s%s)\n\n", kind_name[kind], pr->unit,
		w->per_second ? " per second" : "");
	md(w, "Total: ");
	md_amount(w, prof_total(pr->p[0]) / pr->div[0], pr->unit, false);
	md(w, " \u2192 ");
	md_amount(w, prof_total(pr->p[1]) / pr->div[1], pr->unit, false);
	md(w, " (");
	md_amount(w, prof_total(pr->p[1]) / pr->div[1] - prof_total(pr->p[0]) / pr->div[0],
		  pr->unit, true);
	md(w, ")");
	if (pr->sampled && pr->w[0] > 0 && pr->w[1] > 0 && unit_seconds(pr->unit) > 0) {
		md(w, "; a sample weighs ");
		md_weight(w, pr->w[0], pr->unit);
		if (pr->w[1] != pr->w[0]) {
			md(w, " \u2192 ");
			md_weight(w, pr->w[1], pr->unit);
		}
	}
	md(w, "\n");
	md_table(w, pr, &pr->self, "Self time");
	md_table(w, pr, &pr->incl, "Inclusive time");
}

/* Compares x with its peer in each profile either has, and writes it. */
static void write_proc(struct cw *w, const struct proc *x)
{
	for (int k = 0; k < NKINDS; k++) {
		struct pair pr = { .side = { w->side[0], w->side[1] },
				   .p = { x->prof[k], x->peer->prof[k] } };

		if (!pr.p[0] && !pr.p[1])
			continue;
		pr.unit = w->side[0]->unit[k] ? w->side[0]->unit[k] : w->side[1]->unit[k];
		pr.sampled = k == ON;
		for (int i = 0; i < 2; i++) {
			pr.div[i] = w->per_second ? w->side[i]->window : 1;
			pr.w[i] = pr.p[i] ? sample_weight(pr.p[i], w->side[i]->all.prof[k], pr.unit) : 0;
		}
		compare(&pr, w->o->z);
		if (w->o->format == REPORT_JSON)
			json_pair(w, x, k, &pr);
		else
			md_pair(w, x, k, &pr);
		pair_free(&pr);
	}
}

static void md_head(struct cw *w)
{
	const struct cmp_side *a = w->side[0], *b = w->side[1];

	md(w, "# fold-report: ");
	md_code(w, a->path, false);
	md(w, " \u2192 ");
	md_code(w, b->path, false);
	md(w, "\n\n");
	for (int i = 0; i < 2; i++) {
		const struct cmp_side *s = w->side[i];

		md(w, i ? "- New: " : "- Base: ");
		md_code(w, s->path, false);
		fprintf(w->out, ", a %s", s->what);
		if (s->window > 0)
			fprintf(w->out, ", window %.3f s", s->window);
		if (s->procs->len)
			fprintf(w->out, ", %u process%s", s->procs->len, s->procs->len == 1 ? "" : "es");
		md(w, "\n");
	}
	for (int i = 0; i < 2; i++)
		for (const char *const *n = cmp_side_notes(w->side[i]); *n; n++) {
			md(w, "- Note: ");
			md_code(w, *n, false);
			md(w, "\n");
		}
	if (w->per_second)
		md(w, "- Normalised: every count is divided by its side's window, so both are "
		      "per second and captures of different lengths compare; shares are of "
		      "each profile's own total.\n");
	else
		md(w, "- Not normalised: the windows are not both known (--base-window and "
		      "--window give them), so counts are compared as they are; shares are "
		      "of each profile's own total.\n");
	fprintf(w->out, "- Left out: an on-CPU change within %g standard errors of sampling "
		"(a function in n samples of weight w has the count w\u00b7n \u00b1 w\u00b7\u221an; "
		"w is the profile's total over its samples from index.tsv, 1 for counts of "
		"samples, else the greatest common divisor of the side's counts); off-CPU time is measured at every context "
		"switch, not sampled, so only an unchanged function is left out.\n", w->o->z);
}

/* Processes only one side has */
static void write_unpaired(struct cw *w)
{
	for (int i = 0; i < 2; i++)
		for (guint j = 0; j < w->side[i]->procs->len; j++) {
			const struct proc *x = g_ptr_array_index(w->side[i]->procs, j);

			if (x->peer)
				continue;
			if (w->o->format == REPORT_JSON) {
				fputs(w->first ? "\n    {\"side\": " : ",\n    {\"side\": ", w->out);
				w->first = false;
				fputs(i ? "\"new\", \"process\": " : "\"base\", \"process\": ", w->out);
				json_str(w, x->key);
				fputs("}", w->out);
				continue;
			}
			md(w, i ? "- only in the new side: " : "- only in the base: ");
			md_code(w, x->key, false);
			md(w, "\n");
		}
}

static bool any_unpaired(const struct cw *w)
{
	for (int i = 0; i < 2; i++)
		for (guint j = 0; j < w->side[i]->procs->len; j++)
			if (!((const struct proc *)g_ptr_array_index(w->side[i]->procs, j))->peer)
				return true;
	return false;
}

int cmp_write(FILE *out, const struct cmp_side *base, const struct cmp_side *new,
	      const struct cmp_opts *o, GError **err)
{
	struct cw w = { .out = out, .side = { base, new }, .o = o, .first = true };

	w.per_second = base->window > 0 && new->window > 0;
	w.tmp = g_string_new(NULL);
	if (o->format == REPORT_JSON) {
		fputs("{\n  \"base\": ", out);
		json_str(&w, base->path);
		fputs(", \"new\": ", out);
		json_str(&w, new->path);
		fprintf(out, ",\n  \"base_window\": %.3f, \"new_window\": %.3f, "
			"\"per_second\": %s, \"z\": %g,\n  \"notes\": [",
			base->window, new->window, w.per_second ? "true" : "false", o->z);
		for (int i = 0, k = 0; i < 2; i++)
			for (const char *const *n = cmp_side_notes(w.side[i]); *n; n++) {
				fputs(k++ ? ", " : "", out);
				json_str(&w, *n);
			}
		fputs("],\n  \"comparisons\": [", out);
	} else {
		md_head(&w);
		if (any_unpaired(&w)) {
			md(&w, "\nProcesses without a counterpart (compared only in all processes):\n\n");
			write_unpaired(&w);
		}
	}
	write_proc(&w, &base->all);
	for (guint i = 0; i < base->procs->len; i++) {
		const struct proc *x = g_ptr_array_index(base->procs, i);

		if (x->peer)
			write_proc(&w, x);
	}
	if (o->format == REPORT_JSON) {
		fputs("\n  ],\n  \"unpaired\": [", out);
		w.first = true;
		write_unpaired(&w);
		fputs(w.first ? "]\n}\n" : "\n  ]\n}\n", out);
	}
	g_string_free(w.tmp, TRUE);
	if (ferror(out) || fflush(out) != 0) {
		fk_error_at(err, FK_ERROR_IO, "<stdout>", 0, "write error: %s",
			    g_strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}
