/*
 * splitout.c - a split directory made from a query's answer: names made
 * safe and distinct first, then the files, then the index that lists
 * them.
 */
#include "store/splitout.h"

#include "core/error.h"
#include "core/outfile.h"
#include "core/textesc.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

struct part {
	char *value;		/* the label's value, NUL-terminated */
	size_t len;
	struct fold_table *table;
	fk_count total;
	char *file;
};

struct fk_split_out {
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

struct fk_split_out *fk_split_out_new(void)
{
	struct fk_split_out *s = g_new0(struct fk_split_out, 1);

	s->by_value = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
					    (GDestroyNotify)g_bytes_unref, part_free);
	return s;
}

void fk_split_out_free(struct fk_split_out *s)
{
	if (!s)
		return;
	g_hash_table_destroy(s->by_value);
	g_free(s);
}

struct fold_table *fk_split_out_table(struct fk_split_out *s, const char *value, size_t len)
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

/* busiest first, then by value */
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

/* Makes dir, or takes an empty one; never through a link. */
static int prepare_dir(const char *dir, GError **err)
{
	struct stat st;
	DIR *d;
	struct dirent *de;

	if (mkdir(dir, 0777) == 0)
		return 0;
	if (errno != EEXIST) {
		fk_error_at(err, FK_ERROR_IO, dir, 0, "cannot create directory: %s", g_strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fk_error_at(err, FK_ERROR_IO, dir, 0, "exists and is not a directory");
		return -1;
	}
	if (!(d = opendir(dir))) {
		fk_error_at(err, FK_ERROR_IO, dir, 0, "cannot read: %s", g_strerror(errno));
		return -1;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			break;
	closedir(d);
	if (de) {
		fk_error_at(err, FK_ERROR_IO, dir, 0,
			    "not empty: the profiles of a query go into a new or empty directory");
		return -1;
	}
	return 0;
}

int fk_split_out_write(struct fk_split_out *s, const char *dir, const char *key,
		       const char *unit, size_t *nfiles, GError **err)
{
	GPtrArray *parts = g_ptr_array_new();
	GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
	GHashTableIter it;
	gpointer v;
	fk_count grand = 0;
	struct fk_outfile *index = NULL;
	char *path;
	int rc = 0;

	*nfiles = 0;
	g_hash_table_iter_init(&it, s->by_value);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct part *pt = v;

		pt->total = fold_table_total(pt->table, 0);
		grand += pt->total;
		g_ptr_array_add(parts, pt);
	}
	g_ptr_array_sort(parts, by_total);
	for (guint i = 0; i < parts->len; i++) {
		struct part *pt = parts->pdata[i];
		char *base = stem(pt);

		g_free(pt->file);
		pt->file = g_strconcat(base, ".folded", NULL);
		for (int n = 2; g_hash_table_contains(names, pt->file); n++) {
			g_free(pt->file);
			pt->file = g_strdup_printf("%s-%d.folded", base, n);
		}
		g_hash_table_add(names, pt->file);
		g_free(base);
	}
	if (prepare_dir(dir, err) < 0) {
		rc = -1;
		goto out;
	}
	for (guint i = 0; rc == 0 && i < parts->len; i++) {
		struct part *pt = parts->pdata[i];
		struct fk_outfile *o;

		path = g_build_filename(dir, pt->file, NULL);
		o = fk_outfile_open(path, err);
		g_free(path);
		if (!o) {
			rc = -1;
			break;
		}
		if (fold_table_write(pt->table, fk_outfile_stream(o), 1, err) < 0) {
			fk_outfile_abort(o);
			rc = -1;
			break;
		}
		if ((rc = fk_outfile_commit(o, err)) == 0)
			(*nfiles)++;
	}
	if (rc < 0)
		goto out;
	path = g_build_filename(dir, "index.tsv", NULL);
	index = fk_outfile_open(path, err);
	g_free(path);
	if (!index) {
		rc = -1;
		goto out;
	}
	{
		FILE *f = fk_outfile_stream(index);
		bool by_pid = strcmp(key, "pid") == 0;

		fputs("file\tcomm\tpid\tsamples\tshare\ttotal\tunit\n", f);
		for (guint i = 0; i < parts->len; i++) {
			struct part *pt = parts->pdata[i];
			char num[FK_COUNT_BUFSZ];
			size_t nlen = fk_count_format(pt->total, num);
			bool numeric = by_pid && pt->len && pt->len < 10 &&
				       strspn(pt->value, "0123456789") == pt->len && pt->value[0] != '0';
			GString *comm = g_string_new(NULL);

			fk_text_escape(comm, pt->value, pt->len, FK_ESC_BACKSLASH);
			/* a tab or line end inside a cell would shift the columns */
			fprintf(f, "%s\t%s\t", pt->file, comm->str);
			if (numeric)
				fputs(pt->value, f);
			else
				fprintf(f, "%u", i + 1);
			fprintf(f, "\t-\t%.4f\t%.*s\t%s\n",
				grand > 0 ? fk_count_to_double(pt->total) / fk_count_to_double(grand) : 0.0,
				(int)nlen, num, unit ? unit : "-");
			g_string_free(comm, TRUE);
		}
	}
	rc = fk_outfile_commit(index, err);
out:
	g_hash_table_destroy(names);
	g_ptr_array_free(parts, TRUE);
	return rc;
}
