/*
 * splitout.c - a split directory made from a query's answer: names made
 * safe and distinct first, then the files, then the index that lists
 * them, every one through core/outdir.h.
 */
#include "store/splitout.h"

#include "core/outdir.h"
#include "core/splitindex.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct part {
	char *value;		/* the label's value, NUL-terminated */
	size_t len;
	struct fold_table *table;
	fk_count total;
	char *file;
};

struct fk_split_dir {
	GHashTable *by_value;	/* value (GBytes) -> struct part * */
};

static void part_free(gpointer p)
{
	struct part *pt = p;

	g_free(pt->value);
	g_free(pt->file);
	fold_table_free(pt->table);
	g_free(pt);
}

struct fk_split_dir *fk_split_dir_new(void)
{
	struct fk_split_dir *s = g_new0(struct fk_split_dir, 1);

	s->by_value = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
					    (GDestroyNotify)g_bytes_unref, part_free);
	return s;
}

void fk_split_dir_free(struct fk_split_dir *s)
{
	if (!s)
		return;
	g_hash_table_destroy(s->by_value);
	g_free(s);
}

struct fold_table *fk_split_dir_table(struct fk_split_dir *s, const char *value, size_t len)
{
	GBytes *key = g_bytes_new(value, len);
	struct part *pt = g_hash_table_lookup(s->by_value, key);

	if (!pt) {
		pt = g_new0(struct part, 1);
		pt->value = g_strndup(value, len);
		pt->len = len;
		pt->table = fold_table_new();
		g_hash_table_insert(s->by_value, key, pt);
	} else {
		g_bytes_unref(key);
	}
	return pt->table;
}

/* busiest first, then by value: the same order whatever the hash's */
static int by_total(gconstpointer a, gconstpointer b)
{
	const struct part *x = *(struct part *const *)a, *y = *(struct part *const *)b;
	int c;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	c = memcmp(x->value, y->value, MIN(x->len, y->len));
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static char *stem(const struct part *pt)
{
	GString *s = g_string_new(NULL);

	for (size_t i = 0; i < pt->len && s->len < 200; i++) {
		char c = pt->value[i];

		g_string_append_c(s, g_ascii_isalnum(c) || c == '.' || c == '_' || c == '-' ? c : '_');
	}
	if (s->len == 0 || s->str[0] == '.' || s->str[0] == '-')
		g_string_prepend_c(s, '_');
	return g_string_free(s, FALSE);
}

/* the value as a pid, when it is one the index can hold; else 0 */
static int pid_of(const struct part *pt)
{
	if (!pt->len || pt->len > 9 || pt->value[0] == '0' ||
	    strspn(pt->value, "0123456789") != pt->len)
		return 0;
	return atoi(pt->value);
}

static int write_table(struct fk_outdir *d, const struct part *pt, GError **err)
{
	struct fk_outfile *o = fk_outdir_file(d, pt->file, err);

	if (!o)
		return -1;
	if (fold_table_write(pt->table, fk_outfile_stream(o), 1, err) < 0) {
		fk_outfile_abort(o);
		return -1;
	}
	return fk_outfile_commit(o, err);
}

int fk_split_dir_write(struct fk_split_dir *s, const char *dir, const char *key,
		       const char *unit, size_t *nfiles, GError **err)
{
	GPtrArray *parts = g_ptr_array_new();
	GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
	GArray *rows = g_array_new(FALSE, TRUE, sizeof(struct fk_split_out));
	GString *index = g_string_new(NULL);
	struct fk_outdir *d = NULL;
	struct fk_outfile *o;
	GHashTableIter it;
	gpointer v;
	bool by_pid = strcmp(key, "pid") == 0;
	int rc = -1;

	*nfiles = 0;
	g_hash_table_iter_init(&it, s->by_value);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct part *pt = v;

		pt->total = fold_table_total(pt->table, 0);
		g_ptr_array_add(parts, pt);
	}
	g_ptr_array_sort(parts, by_total);
	for (guint i = 0; i < parts->len; i++) {
		struct part *pt = parts->pdata[i];
		char *base = stem(pt);
		struct fk_split_out r = { .total = pt->total };

		g_free(pt->file);
		pt->file = g_strconcat(base, ".folded", NULL);
		for (int n = 2; g_hash_table_contains(names, pt->file); n++) {
			g_free(pt->file);
			pt->file = g_strdup_printf("%s-%d.folded", base, n);
		}
		g_hash_table_add(names, pt->file);
		g_free(base);
		r.file = pt->file;
		/* the index's cells are text: a value is cut at a NUL there */
		r.comm = pt->value;
		r.pid = by_pid && pid_of(pt) ? pid_of(pt) : (int)i + 1;
		g_array_append_val(rows, r);
	}
	if (!(d = fk_outdir_create(dir, 0, err)))
		goto out;
	for (guint i = 0; i < parts->len; i++) {
		if (write_table(d, parts->pdata[i], err) < 0)
			goto out;
		(*nfiles)++;
	}
	fk_split_index_format(index, (const struct fk_split_out *)(const void *)rows->data,
			      rows->len, unit ? unit : "-", NULL);
	if (!(o = fk_outdir_file(d, "index.tsv", err)))
		goto out;
	fwrite(index->str, 1, index->len, fk_outfile_stream(o));
	rc = fk_outfile_commit(o, err);
out:
	fk_outdir_free(d);
	g_string_free(index, TRUE);
	g_array_free(rows, TRUE);
	g_hash_table_destroy(names);
	g_ptr_array_free(parts, TRUE);
	return rc;
}
