/*
 * fuzz/splitindex.c - a split directory's index.tsv (core/splitindex.h),
 * which every reader of a split directory trusts to say which files are
 * its profiles and what their counts are.
 *
 * Input: an option byte (bit 1: FK_SPLIT_PROCESSES), then any bytes as the
 * text of an index.tsv.
 *
 * Checked, beyond memory safety and UB, against a second reading done here
 * line by line with memchr(): the text is refused when it is empty, holds
 * a NUL, its header lacks a needed column, a non-blank row has another
 * number of cells than the header, a file is not a plain name or is
 * listed twice, or a unit is not a plain word or differs from the one
 * above; otherwise it is accepted but for a pid, samples or total cell
 * that is not one (each checked here on its own).  An accepted index has
 * a row per non-blank line, in order, each file as written, the unit of
 * every row; a refusal sets an error naming the file, and gives nothing.
 */
#include "fuzz.h"

#include "core/splitindex.h"

#include <limits.h>

/* the cells of [s, end) split at tabs */
static GPtrArray *cells(const char *s, const char *end)
{
	GPtrArray *v = g_ptr_array_new_with_free_func(g_free);

	for (;;) {
		const char *t = memchr(s, '\t', (size_t)(end - s));

		g_ptr_array_add(v, g_strndup(s, (gsize)((t ? t : end) - s)));
		if (!t)
			return v;
		s = t + 1;
	}
}

static int col(GPtrArray *head, const char *name)
{
	for (guint i = 0; i < head->len; i++)
		if (strcmp(g_ptr_array_index(head, i), name) == 0)
			return (int)i;
	return -1;
}

static bool is_pid(const char *s)
{
	char *end;
	long long v;

	if (!g_ascii_isdigit(*s))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	return !errno && !*end && v > 0 && v <= INT_MAX;
}

static bool is_samples(const char *s)
{
	return strcmp(s, "-") == 0 || g_ascii_string_to_unsigned(s, 10, 0, G_MAXUINT64, NULL, NULL);
}

static bool is_count(const char *s)
{
	fk_count c;

	return fk_count_parse(s, strlen(s), &c) == FK_COUNT_OK;
}

/*
 * 1: accepted, 0: refused, -1: accepted but for a cell checked on its
 * own.  *rows gets the files, *unit the unit (NULL: none).
 */
static int reference(const char *text, size_t len, bool procs, GPtrArray *files, char **unit)
{
	const char *p = text, *end = text + len;
	GPtrArray *head = NULL;
	GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
	int ok = 1;

	*unit = NULL;
	if (len == 0 || memchr(text, '\0', len))
		ok = 0;
	for (int line = 0; ok && p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		GPtrArray *c;

		if (e > p && e[-1] == '\r')
			e--;
		if (line > 0 && e == p) {
			p = nl ? nl + 1 : end;
			continue;
		}
		c = cells(p, e);
		p = nl ? nl + 1 : end;
		if (line == 0) {
			head = c;
			if (col(head, "file") < 0 ||
			    (procs && (col(head, "comm") < 0 || col(head, "pid") < 0)))
				ok = 0;
			continue;
		}
		if (c->len != head->len) {
			ok = 0;
		} else {
			const char *f = g_ptr_array_index(c, col(head, "file"));
			int cu = col(head, "unit"), cp = col(head, "pid");
			int cs = col(head, "samples"), ct = col(head, "total");

			if (!*f || *f == '.' || strchr(f, '/') || g_hash_table_contains(seen, f)) {
				ok = 0;
			} else if (ok == 1 && ((cp >= 0 && !is_pid(g_ptr_array_index(c, cp))) ||
					       (cs >= 0 && !is_samples(g_ptr_array_index(c, cs))) ||
					       (ct >= 0 && !is_count(g_ptr_array_index(c, ct))))) {
				/* refused, unless a structural refusal comes later */
				ok = -1;
			}
			if (ok && cu >= 0) {
				const char *u = g_ptr_array_index(c, cu);

				if (!fk_unit_ok(u) || (*unit && strcmp(*unit, u) != 0))
					ok = 0;
				else if (!*unit)
					*unit = g_strdup(u);
			}
			if (ok) {
				g_ptr_array_add(files, g_strdup(f));
				g_hash_table_add(seen, g_ptr_array_index(files, files->len - 1));
			}
		}
		g_ptr_array_unref(c);
	}
	if (head)
		g_ptr_array_unref(head);
	g_hash_table_destroy(seen);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data + 1;
	bool procs;
	size_t len;
	GError *err = NULL;
	struct fk_split_index *x;
	GPtrArray *files;
	char *unit;
	int want;

	if (size < 1)
		return 0;
	procs = data[0] & 1;
	len = size - 1;
	x = fk_split_index_parse(text, len, "dir/index.tsv", procs ? FK_SPLIT_PROCESSES : 0, &err);
	files = g_ptr_array_new_with_free_func(g_free);
	want = reference(text, len, procs, files, &unit);
	if (want == 0 || (want < 0 && !x)) {
		/* a cell checked on its own may be the first refusal, or a later
		 * structural one: either way, nothing */
		FUZZ_CHECK(!x, "accepted, the reference refuses");
		FUZZ_CHECK(err && g_str_has_prefix(err->message, "dir/index.tsv"),
			   "error not naming the file: %s", err ? err->message : "(none)");
	} else {
		FUZZ_CHECK(want == 1, "accepted an index with a bad pid, samples or total cell");
		FUZZ_CHECK(x && !err, "refused: %s", err ? err->message : "(no error)");
		FUZZ_CHECK(x->rows->len == files->len, "%u rows, the reference %u", x->rows->len,
			   files->len);
		for (guint i = 0; i < x->rows->len; i++) {
			const struct fk_split_row *r = g_ptr_array_index(x->rows, i);

			FUZZ_CHECK(strcmp(r->file, g_ptr_array_index(files, i)) == 0, "row %u: '%s'",
				   i, r->file);
			FUZZ_CHECK(!procs || (r->pid > 0 && r->comm), "row %u: no process", i);
		}
		FUZZ_CHECK((!unit && !x->unit) || (unit && x->unit && strcmp(unit, x->unit) == 0),
			   "unit '%s', the reference '%s'", x->unit ? x->unit : "(none)",
			   unit ? unit : "(none)");
		FUZZ_CHECK(x->has_index && !x->unlisted[0], "parse found files");
	}
	fk_split_index_free(x);
	g_clear_error(&err);
	g_ptr_array_unref(files);
	g_free(unit);
	return 0;
}
