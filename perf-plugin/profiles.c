#include "profiles.h"

#include "core/error.h"
#include "core/outdir.h"
#include "core/splitindex.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#define UNKNOWN "[unknown]"

struct profiles {
	struct collapse_opts co;
	bool per_process;
	bool rounded;			/* zero counts may be left: skip them */
	struct profile *all;		/* without per_process */
	GHashTable *by_pid;		/* with it: pid -> struct profile */
	/* more columns of index.tsv (profiles_set_index_columns()) */
	const char *extra_head;
	profiles_cells_fn *extra;
	void *extra_data;
};

void profiles_set_index_columns(struct profiles *p, const char *head, profiles_cells_fn *fn,
				void *data)
{
	p->extra_head = head;
	p->extra = fn;
	p->extra_data = data;
}

static struct profile *profile_new(const struct collapse_opts *co, int pid)
{
	struct profile *pr = g_new0(struct profile, 1);

	pr->pid = pid;
	pr->selected = true;
	pr->c = collapser_new(co);
	return pr;
}

static void profile_free(gpointer p)
{
	struct profile *pr = p;

	collapser_free(pr->c);
	g_free(pr->comm);
	g_free(pr->name);
	g_free(pr);
}

struct profiles *profiles_new(const struct collapse_opts *co, bool per_process)
{
	struct profiles *p = g_new0(struct profiles, 1);

	p->co = *co;
	p->per_process = per_process;
	if (per_process)
		p->by_pid = g_hash_table_new_full(g_direct_hash, g_direct_equal,
						  NULL, profile_free);
	else
		p->all = profile_new(co, -1);
	return p;
}

void profiles_free(struct profiles *p)
{
	if (!p)
		return;
	if (p->by_pid)
		g_hash_table_destroy(p->by_pid);
	if (p->all)
		profile_free(p->all);
	g_free(p);
}

struct profile *profiles_get(struct profiles *p, int pid, int tid,
			     const char *comm)
{
	struct profile *pr;

	if (!p->per_process)
		return p->all;
	pr = g_hash_table_lookup(p->by_pid, GINT_TO_POINTER(pid));
	if (!pr) {
		pr = profile_new(&p->co, pid);
		g_hash_table_insert(p->by_pid, GINT_TO_POINTER(pid), pr);
	}
	if (tid == pid && comm && (!pr->comm || strcmp(pr->comm, comm) != 0)) {
		/* the main thread names the process, under its latest name */
		g_free(pr->comm);
		pr->comm = g_strdup(comm);
	}
	return pr;
}

const char *profiles_name(struct profiles *p, int pid)
{
	struct profile *pr;

	if (!p->per_process)
		return NULL;
	pr = g_hash_table_lookup(p->by_pid, GINT_TO_POINTER(pid));
	return pr ? pr->name : NULL;
}

bool profiles_selected(struct profiles *p, int pid)
{
	struct profile *pr;

	if (!p->per_process)
		return true;
	pr = g_hash_table_lookup(p->by_pid, GINT_TO_POINTER(pid));
	return pr && pr->selected;
}

static void round_entry(struct fold_entry *e, void *data)
{
	e->count[0] = (e->count[0] + FK_COUNT_ONE / 2) / FK_COUNT_ONE * FK_COUNT_ONE;
	*(size_t *)data += e->count[0] == 0;
}

/* Rounds pr's counts if asked; returns its stacks left, adds the others to *zero */
static size_t finish_one(struct profile *pr, bool round_us, uint64_t *zero)
{
	struct fold_table *t = collapser_table(pr->c);
	size_t zeros = 0;

	if (round_us)
		fold_table_foreach(t, round_entry, &zeros);
	*zero += zeros;
	return pr->stacks = fold_table_size(t) - zeros;
}

size_t profiles_finish(struct profiles *p, profiles_name_fn *name_of, void *data,
		       const GRegex *re, bool round_us, uint64_t *dropped)
{
	GHashTableIter it;
	gpointer v;
	size_t stacks = 0;

	*dropped = 0;
	p->rounded = round_us;
	if (!p->per_process)
		return finish_one(p->all, round_us, dropped);
	g_hash_table_iter_init(&it, p->by_pid);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct profile *pr = v;
		const char *name = name_of ? name_of(data, pr->pid) : NULL;

		g_free(pr->name);
		pr->name = g_strdup(name ? name : pr->comm);
		pr->selected = !re || (pr->name && g_regex_match(re, pr->name, 0, NULL));
		if (pr->selected)
			stacks += finish_one(pr, round_us, dropped);
	}
	return stacks;
}

static gint by_pid(gconstpointer a, gconstpointer b)
{
	const struct profile *x = *(const struct profile *const *)a;
	const struct profile *y = *(const struct profile *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

char *profiles_describe(struct profiles *p, unsigned max)
{
	GPtrArray *v = g_ptr_array_new();
	GString *s = g_string_new(NULL);
	GHashTableIter it;
	gpointer pr;

	if (p->per_process) {
		g_hash_table_iter_init(&it, p->by_pid);
		while (g_hash_table_iter_next(&it, NULL, &pr))
			if (fold_table_size(collapser_table(((struct profile *)pr)->c)))
				g_ptr_array_add(v, pr);
	}
	g_ptr_array_sort(v, by_pid);
	for (guint i = 0; i < v->len && i < max; i++) {
		const struct profile *x = v->pdata[i];
		g_string_append_printf(s, "%s%s (%d)", i ? ", " : "",
				       x->name ? x->name : UNKNOWN, x->pid);
	}
	if (v->len > max)
		g_string_append(s, ", ...");
	if (v->len == 0)
		g_string_append(s, "none");
	g_ptr_array_free(v, TRUE);
	return g_string_free(s, FALSE);
}

/*
 * Writes t to out, leaving out zero counts if rounded; *total gets the sum
 * of the counts written.
 */
static int write_table(struct fold_table *t, FILE *out, const char *name,
		       bool rounded, fk_count *total, GError **err)
{
	struct fold_entry **v;
	size_t n;
	char buf[FK_COUNT_BUFSZ];

	*total = fold_table_total(t, 0);
	errno = 0;
	if (!rounded) {
		/* The table calls every stream <stdout>; name the real one. */
		if (fold_table_write(t, out, 1, NULL) != 0) {
			fk_error_at(err, FK_ERROR_IO, name, 0, "write error: %s",
				    g_strerror(errno ? errno : EIO));
			return -1;
		}
		return 0;
	}
	/* the table's own total predates the rounding */
	*total = 0;
	v = fold_table_sorted(t, &n);
	for (size_t i = 0; i < n; i++) {
		if (v[i]->count[0] == 0)
			continue;
		*total += v[i]->count[0];
		fwrite(v[i]->stack, 1, v[i]->len, out);
		putc(' ', out);
		fwrite(buf, 1, fk_count_format(v[i]->count[0], buf), out);
		putc('\n', out);
	}
	g_free(v);
	if (fflush(out) != 0 || ferror(out)) {
		fk_error_at(err, FK_ERROR_IO, name, 0, "write error: %s",
			    g_strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

static void merge_entry(struct fold_entry *e, void *data)
{
	/* the entries' stacks live as long as the profiles */
	fold_table_add2_ref(data, e->stack, e->len, e->count[0], 0);
}

int profiles_write(struct profiles *p, FILE *out, const char *name, GError **err)
{
	struct fold_table *merged;
	GHashTableIter it;
	gpointer v;
	fk_count total;
	int rc;

	if (!p->per_process)
		return write_table(collapser_table(p->all->c), out, name, p->rounded,
				   &total, err);
	merged = fold_table_new();
	g_hash_table_iter_init(&it, p->by_pid);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct profile *pr = v;
		if (pr->selected)
			fold_table_foreach(collapser_table(pr->c), merge_entry, merged);
	}
	rc = write_table(merged, out, name, p->rounded, &total, err);
	fold_table_free(merged);
	return rc;
}

char *profiles_file_name(const char *name, int pid)
{
	GString *s = g_string_new(NULL);

	if (!name)
		name = "unknown";
	for (const char *c = name; *c; c++)
		g_string_append_c(s, g_ascii_isalnum(*c) || *c == '.' ||
				     *c == '_' || *c == '-' ? *c : '_');
	/* no hidden files, no "." or "..", nothing that reads as an option */
	if (s->len == 0 || s->str[0] == '.' || s->str[0] == '-')
		g_string_prepend_c(s, '_');
	g_string_append_printf(s, "-%d.folded", pid);
	return g_string_free(s, FALSE);
}

struct ranked {
	struct profile *pr;
	fk_count weight;
	char *file;
	struct fk_outfile *out;
};

static int by_weight(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->pr->pid < y->pr->pid ? -1 : x->pr->pid > y->pr->pid;
}

/* "NAME-PID.folded" -> "NAME-PID.speedscope.json", what split='s
 * speedscope files are named (exports.c) */
static char *speedscope_name(const char *folded)
{
	size_t n = strlen(folded);

	if (n < strlen(".folded") || strcmp(folded + n - strlen(".folded"), ".folded") != 0)
		return NULL;
	return g_strdup_printf("%.*s.speedscope.json", (int)(n - strlen(".folded")), folded);
}

/*
 * The names in d that an earlier split= run wrote (its index.tsv, the
 * files it lists, their speedscope files), to remove before this run's
 * go in; NULL with *err set when d holds anything else, or an index.tsv
 * that does not read: those files may be someone's, and are not touched.
 */
static GPtrArray *earlier_output(struct fk_outdir *d, GError **err)
{
	char **names = fk_outdir_list(d, err);
	GHashTable *own = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	struct fk_split_index *x = NULL;
	GPtrArray *old = NULL;
	GError *e = NULL;

	if (!names)
		goto out;
	if (names[0]) {
		if (!(x = fk_split_index_readat(fk_outdir_fd(d), fk_outdir_path(d),
						FK_SPLIT_NEED_INDEX, &e))) {
			fk_error_at(err, FK_ERROR_IO, fk_outdir_path(d), 0, "refused: not empty, "
				    "and not an earlier split= output (%s): name a new directory, "
				    "or empty it", e->message);
			g_error_free(e);
			goto out;
		}
		g_hash_table_add(own, g_strdup("index.tsv"));
		for (guint i = 0; i < x->rows->len; i++) {
			const struct fk_split_row *r = g_ptr_array_index(x->rows, i);
			char *ss = speedscope_name(r->file);

			g_hash_table_add(own, g_strdup(r->file));
			if (ss)
				g_hash_table_add(own, ss);
		}
	}
	old = g_ptr_array_new_with_free_func(g_free);
	for (char **n = names; *n; n++) {
		if (!g_hash_table_contains(own, *n)) {
			fk_error_at(err, FK_ERROR_IO, fk_outdir_path(d), 0, "refused: it holds '%s', "
				    "which is not part of an earlier split= output: name a new "
				    "directory, or empty it", *n);
			g_clear_pointer(&old, g_ptr_array_unref);
			break;
		}
		/* the index first: no index ever lists a file that is gone */
		if (strcmp(*n, "index.tsv") == 0)
			g_ptr_array_insert(old, 0, g_strdup(*n));
		else
			g_ptr_array_add(old, g_strdup(*n));
	}
out:
	fk_split_index_free(x);
	g_hash_table_destroy(own);
	g_strfreev(names);
	return old;
}

int profiles_write_split(struct profiles *p, const char *dir, const char *unit,
			 size_t *nfiles, GError **err)
{
	GHashTableIter it;
	gpointer v;
	GArray *rank = g_array_new(FALSE, TRUE, sizeof(struct ranked));
	struct fk_outfile *index = NULL;
	struct fk_outdir *d;
	GPtrArray *old = NULL;
	struct fk_split_out *rows;
	GPtrArray *more;
	GString *text;
	int rc = 0;

	g_return_val_if_fail(p->per_process, -1);
	*nfiles = 0;
	/* made here, or an own directory holding an earlier run's output
	 * (core/outdir.h): never one another user could plant links in */
	if (!(d = fk_outdir_create(dir, FK_OUTDIR_EXISTING, err)) ||
	    (!fk_outdir_made(d) && !(old = earlier_output(d, err)))) {
		fk_outdir_free(d);
		g_array_free(rank, TRUE);
		return -1;
	}
	/* every file under a temporary name first, so a failure changes nothing */
	g_hash_table_iter_init(&it, p->by_pid);
	while (rc == 0 && g_hash_table_iter_next(&it, NULL, &v)) {
		struct ranked r = { .pr = v };
		struct fold_table *t = collapser_table(r.pr->c);
		char *path;

		if (!r.pr->selected || !r.pr->samples || !r.pr->stacks)
			continue;
		r.file = profiles_file_name(r.pr->name, r.pr->pid);
		r.out = fk_outdir_file(d, r.file, err);
		path = g_build_filename(dir, r.file, NULL);
		if (!r.out || write_table(t, fk_outfile_stream(r.out), path, p->rounded,
					  &r.weight, err) != 0)
			rc = -1;
		g_free(path);
		g_array_append_val(rank, r);
	}
	g_array_sort(rank, by_weight);
	rows = g_new0(struct fk_split_out, rank->len + 1);
	more = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < rank->len; i++) {
		struct ranked *r = &g_array_index(rank, struct ranked, i);
		GString *cells = g_string_new(NULL);

		if (p->extra)
			p->extra(p->extra_data, r->pr->pid, cells);
		g_ptr_array_add(more, g_string_free(cells, FALSE));
		rows[i] = (struct fk_split_out){ .file = r->file,
			.comm = r->pr->name ? r->pr->name : UNKNOWN, .pid = r->pr->pid,
			.has_samples = true, .samples = r->pr->samples, .total = r->weight,
			.more = g_ptr_array_index(more, i) };
	}
	text = g_string_new(NULL);
	fk_split_index_format(text, rows, rank->len, unit, p->extra ? p->extra_head : NULL);
	if (rc == 0 && (index = fk_outdir_file(d, "index.tsv", err)))
		fwrite(text->str, 1, text->len, fk_outfile_stream(index));
	else
		rc = -1;
	/* the earlier output goes (its index first), then the profiles
	 * come, then the index that lists them */
	for (guint i = 0; rc == 0 && old && i < old->len; i++)
		rc = fk_outdir_unlink(d, g_ptr_array_index(old, i), err);
	for (guint i = 0; i < rank->len; i++) {
		struct ranked *r = &g_array_index(rank, struct ranked, i);

		if (rc == 0) {
			rc = fk_outfile_commit(r->out, err);
			(*nfiles) += rc == 0;
		} else {
			fk_outfile_abort(r->out);
		}
		g_free(r->file);
	}
	if (rc == 0)
		rc = fk_outfile_commit(index, err);
	else
		fk_outfile_abort(index);
	if (rc != 0 && fk_outdir_made(d) && *nfiles == 0)
		g_rmdir(dir);	/* (only if empty) */
	g_string_free(text, TRUE);
	g_ptr_array_unref(more);
	g_free(rows);
	if (old)
		g_ptr_array_unref(old);
	fk_outdir_free(d);
	g_array_free(rank, TRUE);
	return rc;
}
