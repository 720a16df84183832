/*
 * fuzz/folded.c - folded-stack text (plain and differential) through
 * folded_reader into a fold_table, written out and read back.
 *
 * Input: one option byte, then the folded text.  Bit 1 reads without a
 * skip_log (NULL is allowed); bit 2 feeds the text twice, so every stack
 * is summed.  folded_parse() is also called on the raw input, as one line.
 *
 * The round trip is the property every filter after fp-collapse relies
 * on: fold_table_write() output, read again, gives the same stacks with
 * the same counts, and no line of it is skipped.  It is checked when every
 * sum fits the parser's range (integer part up to 2^64-1); sums beyond it
 * are written exactly but cannot be read back, which docs/bad-input.md
 * documents.
 */
#include "fuzz.h"

#include "core/error.h"
#include "core/folded.h"
#include "core/foldtable.h"

#define MAX_READABLE (((fk_count)UINT64_MAX + 1) * FK_COUNT_ONE)

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A stack may end in blanks (they belong to its leaf), but is never only
 * blanks, and the blank that separates it from its count is not its own. */
static void check_stack(const char *s, size_t n, const char *line_end)
{
	size_t i = 0;

	FUZZ_CHECK(n > 0, "empty stack");
	while (i < n && is_blank(s[i]))
		i++;
	FUZZ_CHECK(i < n, "stack of blanks only");
	FUZZ_CHECK(s + n < line_end && is_blank(s[n]), "no separating blank after the stack");
}

/* Reads path into t; returns the number of differential lines. */
static size_t load(struct fold_table *t, const char *path, struct skip_log *skips,
		   bool *failed)
{
	struct folded_reader *fr;
	struct folded_line fl;
	GError *err = NULL;
	size_t ndiff = 0;
	int rc, shape = 0;

	fr = folded_reader_open(path, skips, &err);
	FUZZ_CHECK(fr && !err, "cannot open the memfd");
	while ((rc = folded_reader_next(fr, &fl, &err)) > 0) {
		FUZZ_CHECK(fl.len > 0, "empty stack at line %lu", (unsigned long)fl.lineno);
		check_stack(fl.stack, fl.len, fl.stack + fl.len + 1);
		FUZZ_CHECK(!memchr(fl.stack, '\n', fl.len), "newline in a stack");
		FUZZ_CHECK(fl.ncounts == 1 || fl.ncounts == 2, "ncounts %d", fl.ncounts);
		/* the first line decides: no line of the other shape comes back */
		FUZZ_CHECK(!shape || fl.ncounts == shape, "a %d-count line in a %d-count profile",
			   fl.ncounts, shape);
		shape = fl.ncounts;
		FUZZ_CHECK(fl.count[0] >= 0 && fl.count[1] >= 0, "negative count");
		FUZZ_CHECK(fl.ncounts == 2 || fl.count[1] == 0, "count[1] without ncounts 2");
		fold_table_add2(t, fl.stack, fl.len, fl.count[0], fl.count[1]);
		ndiff += fl.ncounts == 2;
	}
	FUZZ_CHECK((rc < 0) == (err != NULL), "rc %d but err %p", rc, (void *)err);
	*failed = rc < 0;
	if (err) {
		FUZZ_CHECK(strncmp(err->message, "/proc/self/fd/", 14) == 0,
			   "error does not name the file: %s", err->message);
		g_error_free(err);
	}
	folded_reader_free(fr);
	return ndiff;
}

static void check_raw(const char *s, size_t n)
{
	struct folded_line fl;
	const char *why = folded_parse(s, n, &fl);

	if (!why) {
		FUZZ_CHECK(fl.stack == s && fl.len > 0 && fl.len < n, "bad stack span");
		check_stack(fl.stack, fl.len, s + n);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fold_table *t, *t2;
	struct skip_log *skips, *skips2;
	struct fold_entry **v;
	char *buf = NULL;
	size_t buflen = 0, n, ndiff;
	bool failed, failed2, readable = true;
	GError *err = NULL;
	FILE *out;
	uint8_t opt;

	if (size < 1)
		return 0;
	opt = data[0];
	data++, size--;
	check_raw((const char *)data, size);

	t = fold_table_new();
	skips = opt & 1 ? NULL : skip_log_new();
	ndiff = load(t, fuzz_file(data, size), skips, &failed);
	if (opt & 2 && !failed)
		ndiff += load(t, fuzz_file(data, size), skips, &failed);

	v = fold_table_sorted(t, &n);
	for (size_t i = 0; i < n; i++)
		if (v[i]->count[0] >= MAX_READABLE || v[i]->count[1] >= MAX_READABLE)
			readable = false;

	out = open_memstream(&buf, &buflen);
	FUZZ_CHECK(fold_table_write(t, out, ndiff ? 2 : 1, &err) == 0, "write failed");
	fclose(out);

	if (readable) {
		t2 = fold_table_new();
		skips2 = skip_log_new();
		load(t2, fuzz_file2(buf, buflen), skips2, &failed2);
		FUZZ_CHECK(!failed2, "the written table does not read back");
		FUZZ_CHECK(skip_log_total(skips2) == 0, "%lu written lines skipped",
			   (unsigned long)skip_log_total(skips2));
		FUZZ_CHECK(fold_table_size(t2) == n, "%zu stacks written, %zu read back",
			   n, fold_table_size(t2));
		for (size_t i = 0; i < n; i++) {
			struct fold_entry *e = fold_table_find(t2, v[i]->stack, v[i]->len);
			FUZZ_CHECK(e, "stack '%s' lost in the round trip", v[i]->stack);
			FUZZ_CHECK(e->count[0] == v[i]->count[0] && e->count[1] == v[i]->count[1],
				   "stack '%s' changed its counts", v[i]->stack);
		}
		FUZZ_CHECK(fold_table_total(t2, 0) == fold_table_total(t, 0) &&
			   fold_table_total(t2, 1) == fold_table_total(t, 1), "totals differ");
		fold_table_free(t2);
		skip_log_free(skips2);
	}
	g_free(v);
	free(buf);
	if (skips) {
		char *s = skip_log_summary(skips, NULL);
		FUZZ_CHECK((s != NULL) == (skip_log_total(skips) > 0), "summary mismatch");
		g_free(s);
		skip_log_free(skips);
	}
	fold_table_free(t);
	return 0;
}
