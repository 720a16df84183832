#include "profiles.h"

#include "core/error.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

struct profiles {
	struct collapse_opts co;
	bool split;
	struct profile *all;		/* without split */
	GHashTable *by_pid;		/* with split: pid -> struct profile */
};

static struct profile *profile_new(const struct collapse_opts *co, int pid,
				   const char *comm)
{
	struct profile *pr = g_new0(struct profile, 1);

	pr->pid = pid;
	pr->comm = g_strdup(comm ? comm : "");
	pr->c = collapser_new(co);
	return pr;
}

static void profile_free(gpointer p)
{
	struct profile *pr = p;

	collapser_free(pr->c);
	g_free(pr->comm);
	g_free(pr);
}

struct profiles *profiles_new(const struct collapse_opts *co, bool split)
{
	struct profiles *p = g_new0(struct profiles, 1);

	p->co = *co;
	p->split = split;
	if (split)
		p->by_pid = g_hash_table_new_full(g_direct_hash, g_direct_equal,
						  NULL, profile_free);
	else
		p->all = profile_new(co, -1, "");
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

	if (!p->split)
		return p->all;
	pr = g_hash_table_lookup(p->by_pid, GINT_TO_POINTER(pid));
	if (!pr) {
		pr = profile_new(&p->co, pid, comm);
		g_hash_table_insert(p->by_pid, GINT_TO_POINTER(pid), pr);
	} else if (tid == pid && comm && strcmp(pr->comm, comm) != 0) {
		/* the main thread names the process, under its latest name */
		g_free(pr->comm);
		pr->comm = g_strdup(comm);
	}
	return pr;
}

static void round_entry(struct fold_entry *e, void *data)
{
	e->count[0] = (e->count[0] + FK_COUNT_ONE / 2) / FK_COUNT_ONE * FK_COUNT_ONE;
}

/*
 * Writes t to out; *total gets the sum of the counts written (the table's
 * own total predates the rounding).
 */
static int write_table(struct fold_table *t, FILE *out, const char *name,
		       bool round_us, uint64_t *dropped, fk_count *total,
		       GError **err)
{
	struct fold_entry **v;
	size_t n;
	char buf[FK_COUNT_BUFSZ];

	if (!round_us) {
		*total = fold_table_total(t, 0);
		/* The table calls every stream <stdout>; name the real one. */
		errno = 0;
		if (fold_table_write(t, out, 1, NULL) != 0) {
			fk_error_at(err, FK_ERROR_IO, name, 0, "write error: %s",
				    g_strerror(errno ? errno : EIO));
			return -1;
		}
		return 0;
	}
	*total = 0;
	fold_table_foreach(t, round_entry, NULL);
	v = fold_table_sorted(t, &n);
	for (size_t i = 0; i < n; i++) {
		if (v[i]->count[0] == 0) {
			(*dropped)++;
			continue;
		}
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

int profiles_write(struct profiles *p, FILE *out, const char *name,
		   bool round_us, uint64_t *dropped, GError **err)
{
	fk_count total;

	g_return_val_if_fail(!p->split, -1);
	return write_table(collapser_table(p->all->c), out, name,
			   round_us, dropped, &total, err);
}

char *profiles_file_name(const char *comm, int pid)
{
	GString *s = g_string_new(NULL);

	for (const char *c = comm; *c; c++)
		g_string_append_c(s, g_ascii_isalnum(*c) || *c == '.' ||
				     *c == '_' || *c == '-' ? *c : '_');
	/* no hidden files, no "." or ".." */
	if (s->len == 0 || s->str[0] == '.')
		g_string_prepend_c(s, '_');
	g_string_append_printf(s, "-%d.folded", pid);
	return g_string_free(s, FALSE);
}

/* Writes via a temporary file in dir renamed to dir/name on success. */
static FILE *open_temp(const char *dir, const char *name, char **tmp, GError **err)
{
	int fd;
	FILE *f;

	*tmp = g_strdup_printf("%s/.%s.XXXXXX", dir, name);
	fd = g_mkstemp(*tmp);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		fk_error_at(err, FK_ERROR_IO, *tmp, 0, "cannot create: %s", g_strerror(errno));
		if (fd >= 0)
			close(fd);
		g_free(*tmp);
		*tmp = NULL;
		return NULL;
	}
	return f;
}

static int close_temp(FILE *f, char *tmp, const char *dir, const char *name,
		      int rc, GError **err)
{
	char *final = g_strdup_printf("%s/%s", dir, name);

	if (fclose(f) != 0 && rc == 0) {
		fk_error_at(err, FK_ERROR_IO, final, 0, "write error: %s", g_strerror(errno));
		rc = -1;
	}
	if (rc == 0 && rename(tmp, final) != 0) {
		fk_error_at(err, FK_ERROR_IO, final, 0, "cannot rename '%s': %s", tmp,
			    g_strerror(errno));
		rc = -1;
	}
	if (rc != 0)
		unlink(tmp);
	g_free(final);
	g_free(tmp);
	return rc;
}

struct ranked {
	struct profile *pr;
	fk_count weight;
	char *file;
};

static int by_weight(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->pr->pid < y->pr->pid ? -1 : x->pr->pid > y->pr->pid;
}

/* comm in a TSV cell: tabs and line breaks would break the columns */
static void put_cell(FILE *f, const char *s)
{
	for (; *s; s++)
		putc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

int profiles_write_split(struct profiles *p, const char *dir, bool round_us,
			 uint64_t *dropped, size_t *nfiles, GError **err)
{
	GHashTableIter it;
	gpointer v;
	GArray *rank = g_array_new(FALSE, FALSE, sizeof(struct ranked));
	fk_count total = 0;
	int rc = 0;
	FILE *f;
	char *tmp;

	g_return_val_if_fail(p->split, -1);
	*nfiles = 0;
	if (g_mkdir_with_parents(dir, 0777) != 0) {
		fk_error_at(err, FK_ERROR_IO, dir, 0, "cannot create directory: %s",
			    g_strerror(errno));
		g_array_free(rank, TRUE);
		return -1;
	}
	g_hash_table_iter_init(&it, p->by_pid);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct ranked r = { .pr = v };
		struct fold_table *t = collapser_table(r.pr->c);

		if (!r.pr->samples || fold_table_size(t) == 0)
			continue;
		r.file = profiles_file_name(r.pr->comm, r.pr->pid);
		f = open_temp(dir, r.file, &tmp, err);
		if (!f) {
			g_free(r.file);
			rc = -1;
			break;
		}
		rc = write_table(t, f, r.file, round_us, dropped, &r.weight, err);
		if ((rc = close_temp(f, tmp, dir, r.file, rc, err)) != 0) {
			g_free(r.file);
			break;
		}
		total += r.weight;
		g_array_append_val(rank, r);
		(*nfiles)++;
	}
	if (rc == 0 && (f = open_temp(dir, "index.tsv", &tmp, err))) {
		g_array_sort(rank, by_weight);
		fputs("file\tcomm\tpid\tsamples\tshare\n", f);
		for (guint i = 0; i < rank->len; i++) {
			struct ranked *r = &g_array_index(rank, struct ranked, i);
			fprintf(f, "%s\t", r->file);
			put_cell(f, r->pr->comm);
			fprintf(f, "\t%d\t%" G_GUINT64_FORMAT "\t%.4f\n", r->pr->pid,
				r->pr->samples, total ? fk_count_to_double(r->weight) /
				fk_count_to_double(total) : 0.0);
		}
		rc = 0;
		if (fflush(f) != 0 || ferror(f)) {
			fk_error_at(err, FK_ERROR_IO, "index.tsv", 0, "write error: %s",
				    g_strerror(errno ? errno : EIO));
			rc = -1;
		}
		rc = close_temp(f, tmp, dir, "index.tsv", rc, err);
	} else if (rc == 0) {
		rc = -1;
	}
	for (guint i = 0; i < rank->len; i++)
		g_free(g_array_index(rank, struct ranked, i).file);
	g_array_free(rank, TRUE);
	return rc;
}
