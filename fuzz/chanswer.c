/*
 * fuzz/chanswer.c - ClickHouse's answers as fold-query and fold-push read
 * them (lib/store/chtext.h, fk_ch_parse_decimal()).
 *
 * Input: an option byte (bits 0-2: fields per row, 1 to 8; bits 3-7: the
 * size of the pieces the answer arrives in, 1 to 32 bytes), then the
 * answer.  Read in pieces, the rows (and whether the answer is whole, and
 * its error) are exactly those of the answer read at once; a whole answer
 * ends in an empty line and one totals row; every row has the fields
 * asked for.  An exception's message has no control character.  A field
 * that parses as a decimal formats (core/count.h) and parses back to the
 * same count; a field unescaped and escaped again as ClickHouse writes
 * TabSeparated unescapes to the same bytes.
 */
#include "fuzz.h"

#include "store/chtext.h"
#include "store/clickhouse.h"

#include <glib.h>

struct seen {
	GString *log;		/* every row: fields, lengths, totals */
	int ncols;
	int totals;
	size_t rows;
};

static void escape_tsv(GString *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '\t': g_string_append(out, "\\t"); break;
		case '\n': g_string_append(out, "\\n"); break;
		case '\\': g_string_append(out, "\\\\"); break;
		case '\0': g_string_append(out, "\\0"); break;
		default: g_string_append_c(out, s[i]);
		}
	}
}

static int on_row(char **f, const size_t *lens, bool totals, void *data, GError **err)
{
	struct seen *s = data;

	s->totals += totals;
	s->rows += !totals;
	g_string_append_printf(s->log, "%c", totals ? 'T' : 'R');
	for (int i = 0; i < s->ncols; i++) {
		GString *esc = g_string_new(NULL), *back = g_string_new(NULL);
		fk_count c;

		FUZZ_CHECK(f[i][lens[i]] == '\0', "field %d not terminated", i);
		fuzz_touch(f[i], lens[i]);
		g_string_append_printf(s->log, "|%zu:", lens[i]);
		g_string_append_len(s->log, f[i], (gssize)lens[i]);
		escape_tsv(esc, f[i], lens[i]);
		FUZZ_CHECK(fk_ch_tsv_unescape(esc->str, esc->len, back) && back->len == lens[i] &&
			   memcmp(back->str, f[i], lens[i]) == 0, "field %d does not escape back", i);
		if (fk_ch_parse_decimal(f[i], lens[i], &c)) {
			char buf[FK_COUNT_BUFSZ];
			size_t n = fk_count_format(c, buf);
			fk_count again;

			FUZZ_CHECK(c >= 0 && fk_ch_parse_decimal(buf, n, &again) && again == c,
				   "decimal '%.*s' does not read back", (int)n, buf);
		}
		g_string_free(esc, TRUE);
		g_string_free(back, TRUE);
	}
	g_string_append_c(s->log, '\n');
	return 0;
}

/* Reads the answer in pieces of step; the log and the error's text. */
static int read_answer(const char *a, size_t n, size_t step, int ncols, GString *log,
		       char **msg)
{
	struct seen s = { .log = log, .ncols = ncols };
	struct fk_ch_rows *r = fk_ch_rows_new(ncols, on_row, &s);
	GError *err = NULL;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < n; i += step)
		rc = fk_ch_rows_feed(r, a + i, MIN(step, n - i), &err);
	if (rc == 0)
		rc = fk_ch_rows_finish(r, &err);
	FUZZ_CHECK((rc < 0) == (err != NULL), "an error without a message, or the other way");
	if (rc == 0) {
		FUZZ_CHECK(s.totals == 1 && log->len && log->str[log->len - 1] == '\n',
			   "a whole answer with %d totals rows", s.totals);
		FUZZ_CHECK(n >= 2 && a[n - 1] == '\n', "a whole answer not ending in a line end");
		FUZZ_CHECK(fk_ch_rows_count(r) == s.rows, "%zu rows counted, %zu read",
			   fk_ch_rows_count(r), s.rows);
	}
	*msg = err ? g_strdup(err->message) : NULL;
	if (err)
		g_error_free(err);
	fk_ch_rows_free(r);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	GString *one = g_string_new(NULL), *pieces = g_string_new(NULL);
	const char *a = (const char *)data + 1;
	size_t n = size ? size - 1 : 0;
	int ncols, rc1, rc2;
	size_t step;
	char *m1, *m2, *ex;
	int code;

	if (size == 0)
		return 0;
	ncols = 1 + (data[0] & 7);
	step = 1 + (data[0] >> 3);
	rc1 = read_answer(a, n, n ? n : 1, ncols, one, &m1);
	rc2 = read_answer(a, n, step, ncols, pieces, &m2);
	FUZZ_CHECK(rc1 == rc2 && g_string_equal(one, pieces) && g_strcmp0(m1, m2) == 0,
		   "read at once and in pieces of %zu, the answer differs", step);
	ex = fk_ch_exception(a, n, &code);
	if (ex) {
		for (const char *p = ex; *p; p++)
			FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f, "a control character in '%s'", ex);
		FUZZ_CHECK(code >= 0, "code %d", code);
	}
	g_free(ex);
	g_free(m1);
	g_free(m2);
	g_string_free(one, TRUE);
	g_string_free(pieces, TRUE);
	return 0;
}
