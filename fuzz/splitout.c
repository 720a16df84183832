/*
 * fuzz/splitout.c - fold-query --by's writer (store/splitout.h): label
 * values of any bytes become files of a split directory and its
 * index.tsv, which every reader of a split directory then trusts.
 *
 * Input: an option byte (bit 1: split by "pid", else by "host"), then
 * lines "VALUE\001STACK"; line N adds the count N to STACK under VALUE.
 * A line without \001 is a value with the stack "x".  Stacks are mapped
 * to bytes the folded format carries as they are ([A-Za-z0-9;_]), for
 * the files are checked by their sums, not their names.
 *
 * Written into a new directory, then read back with core/splitindex.h
 * (the reader of fold-report DIR and fold-push DIR), which must accept
 * it: a row per distinct value, busiest first, each file a new plain name
 * (no two alike), its comm the value (cut at a NUL byte, unescaped), its
 * pid the value when splitting by a pid that is one, its total the sum of
 * the value's counts, the unit as given; each file's counts add up to
 * that total.  Then the same directory, written again, is refused (it is
 * not empty) and left as it was.
 */
#include "fuzz.h"

#include "core/splitindex.h"
#include "store/splitout.h"

#include <dirent.h>
#include <glib/gstdio.h>

struct want {
	char *value;
	size_t len;
	uint64_t total;
	bool taken;		/* by a row of the index */
};

static void want_free(gpointer p)
{
	struct want *w = p;

	g_free(w->value);
	g_free(w);
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char *p;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		p = g_build_filename(dir, de->d_name, NULL);
		g_unlink(p);
		g_free(p);
	}
	if (d)
		closedir(d);
	g_rmdir(dir);
}

/* the sum of a written folded file's counts */
static uint64_t file_sum(const char *dir, const char *file)
{
	char *path = g_build_filename(dir, file, NULL), *text = NULL;
	gsize len = 0;
	uint64_t sum = 0;

	FUZZ_CHECK(g_file_get_contents(path, &text, &len, NULL), "cannot read %s", path);
	for (char *line = text; line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line)), *sp;

		FUZZ_CHECK(nl, "%s: a line without its end", path);
		*nl = '\0';
		sp = strrchr(line, ' ');
		FUZZ_CHECK(sp, "%s: a line without a count: '%s'", path, line);
		sum += g_ascii_strtoull(sp + 1, NULL, 10);
		line = nl + 1;
	}
	g_free(text);
	g_free(path);
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *base;
	bool by_pid;
	const char *p, *end;
	struct fk_split_dir *s;
	GHashTable *wants;	/* value (GBytes) -> struct want * */
	GPtrArray *order;
	GError *err = NULL;
	struct fk_split_index *x;
	char *dir;
	size_t n = 0;
	uint64_t line = 0;

	if (size < 1)
		return 0;
	if (!base)
		base = g_dir_make_tmp("fuzz-splitout-XXXXXX", NULL);
	FUZZ_CHECK(base, "no temporary directory");
	by_pid = data[0] & 1;
	s = fk_split_dir_new();
	wants = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref,
				      want_free);
	order = g_ptr_array_new();
	for (p = (const char *)data + 1, end = (const char *)data + size; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		const char *sep = memchr(p, '\001', (size_t)(e - p));
		const char *v_end = sep ? sep : e;
		GString *stack = g_string_new(NULL);
		GBytes *key = g_bytes_new(p, (gsize)(v_end - p));
		struct want *w = g_hash_table_lookup(wants, key);

		line++;
		for (const char *c = sep ? sep + 1 : "x"; sep ? c < e : *c; c++)
			g_string_append_c(stack, g_ascii_isalnum(*c) || *c == ';' ? *c : '_');
		if (!stack->len)
			g_string_append_c(stack, 'x');
		if (!w) {
			w = g_new0(struct want, 1);
			w->value = g_strndup(p, (gsize)(v_end - p));
			w->len = (size_t)(v_end - p);
			g_hash_table_insert(wants, key, w);
			g_ptr_array_add(order, w);
		} else {
			g_bytes_unref(key);
		}
		w->total += line;
		fold_table_add(fk_split_dir_table(s, p, (size_t)(v_end - p)), stack->str, stack->len,
			       fk_count_from_u64(line));
		g_string_free(stack, TRUE);
		p = nl ? nl + 1 : end;
	}
	dir = g_build_filename(base, "by", NULL);
	FUZZ_CHECK(fk_split_dir_write(s, dir, by_pid ? "pid" : "host", "ns", &n, &err) == 0,
		   "refused: %s", err->message);
	FUZZ_CHECK(n == order->len, "%zu files for %u values", n, order->len);

	x = fk_split_index_read(dir, FK_SPLIT_PROCESSES | FK_SPLIT_NEED_INDEX, &err);
	FUZZ_CHECK(x, "its index is refused: %s", err ? err->message : "(no error)");
	FUZZ_CHECK(x->rows->len == order->len, "%u rows for %u values", x->rows->len, order->len);
	FUZZ_CHECK(!x->unlisted[0], "a file not listed: %s", x->unlisted[0]);
	FUZZ_CHECK(order->len == 0 || (x->unit && strcmp(x->unit, "ns") == 0), "unit '%s'",
		   x->unit ? x->unit : "(none)");
	for (guint i = 0; i < x->rows->len; i++) {
		const struct fk_split_row *r = g_ptr_array_index(x->rows, i);
		struct want *w = NULL;
		GHashTableIter it;
		gpointer v;
		bool numeric;

		/* the value this row stands for: the one whose comm it is and
		 * whose total it has, busiest first */
		g_hash_table_iter_init(&it, wants);
		while (g_hash_table_iter_next(&it, NULL, &v)) {
			struct want *c = v;

			if (strcmp(c->value, r->comm) == 0 && r->has_total &&
			    r->total == fk_count_from_u64(c->total) && !c->taken) {
				w = c;
				break;
			}
		}
		FUZZ_CHECK(w, "row %u (comm '%s', file '%s'): no such value", i, r->comm, r->file);
		w->taken = true;
		if (i > 0) {
			const struct fk_split_row *q = g_ptr_array_index(x->rows, i - 1);

			FUZZ_CHECK(q->total >= r->total, "row %u busier than the one above", i);
		}
		numeric = w->len && w->len <= 9 && w->value[0] != '0' &&
			  strspn(w->value, "0123456789") == w->len;
		if (by_pid && numeric)
			FUZZ_CHECK(r->pid == atoi(w->value), "row %u: pid %d, value '%s'", i, r->pid,
				   w->value);
		else
			FUZZ_CHECK(r->pid == (int)i + 1, "row %u: pid %d", i, r->pid);
		FUZZ_CHECK(file_sum(dir, r->file) == w->total, "%s: not its total", r->file);
	}
	fk_split_index_free(x);

	/* a second write into it is refused, and changes nothing */
	FUZZ_CHECK(fk_split_dir_write(s, dir, "host", "ns", &n, &err) < 0, "a full directory taken");
	FUZZ_CHECK(err && g_str_has_prefix(err->message, dir), "error not naming it: %s",
		   err ? err->message : "(none)");
	g_clear_error(&err);

	remove_dir(dir);
	g_free(dir);
	g_ptr_array_unref(order);
	g_hash_table_destroy(wants);
	fk_split_dir_free(s);
	return 0;
}
