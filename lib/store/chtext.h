/*
 * chtext.h - ClickHouse's text: string literals for SQL, TabSeparated
 * rows back, and the exceptions it writes instead of (or after) them.
 *
 *	GString *sql = g_string_new("SELECT 1 WHERE host = ");
 *	fk_sql_quote(sql, host, strlen(host));     // 'web\x27s' for web's
 *
 *	struct fk_ch_rows *r = fk_ch_rows_new(3, on_row, data);
 *	while (...a chunk of the response arrives...)
 *		if (fk_ch_rows_feed(r, buf, len, &err) < 0) ...;
 *	if (fk_ch_rows_finish(r, &err) < 0) ...;     // the response was whole
 *	fk_ch_rows_free(r);
 *
 * ClickHouse 18.16 (Debian's) has no query parameters, so values go into
 * statements as literals: fk_sql_quote() writes every byte outside
 * printable ASCII, and the quote and the backslash, as \xNN, so a label
 * value (a process name chosen by the profiled program) is one literal
 * whatever it holds.
 *
 * A query's answer is read as TabSeparated with totals (GROUP BY ... WITH
 * TOTALS): rows of ncols fields, an empty line, one totals row, the end.
 * The HTTP status is sent before the rows, so an error met while rows
 * are being written arrives as text after them ("Code: 241,
 * e.displayText() = DB::Exception: Memory limit ...") with status 200:
 * the totals row is what says the answer is whole, and a row that is not
 * one (not ncols fields, or a first field that is not a number) ends the
 * read with the server's message when it is one.
 */
#ifndef FOLDKIT_STORE_CHTEXT_H
#define FOLDKIT_STORE_CHTEXT_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* Appends s[0..len) as a quoted SQL string literal. */
void fk_sql_quote(GString *out, const char *s, size_t len);

/*
 * Undoes TabSeparated's escapes in s[0..len) (\b \f \n \r \t \0 \a \v \\
 * \' \" \/ \xNN), appending the bytes to out.  Returns false on any other
 * escape or a lone backslash at the end.
 */
bool fk_ch_tsv_unescape(const char *s, size_t len, GString *out);

/*
 * The message of a ClickHouse exception text ("Code: 60, e.displayText()
 * = DB::Exception: Table x doesn't exist., e.what() = DB::Exception"):
 * "Table x doesn't exist (code 60)", control characters escaped, at most
 * 1,000 bytes of it.  NULL when text is not one.  Free with g_free();
 * *code (may be NULL) gets the code, or 0.
 */
char *fk_ch_exception(const char *text, size_t len, int *code);

/*
 * The reader of a TabSeparated answer with totals.  fn gets each row's
 * fields, unescaped and NUL-terminated (valid during the call), and
 * totals true for the totals row; it returns 0, or -1 with *err set to
 * stop the read.  A field count other than ncols, a bad escape, a first
 * field that is not a decimal number, or anything after the totals row
 * ends it with an error (the server's message when the line is one).
 * Lines are at most FK_CH_LINE_MAX bytes.
 */
#define FK_CH_LINE_MAX (256u << 20)

typedef int (*fk_ch_row_fn)(char **fields, const size_t *lens, bool totals, void *data,
			    GError **err);

struct fk_ch_rows;

struct fk_ch_rows *fk_ch_rows_new(int ncols, fk_ch_row_fn fn, void *data);

/* Reads buf[0..len); 0, or -1 with *err set (then stop feeding). */
int fk_ch_rows_feed(struct fk_ch_rows *r, const char *buf, size_t len, GError **err);

/* At the end of the answer: 0 when it was whole (its totals row came
 * last), else -1 with *err set. */
int fk_ch_rows_finish(struct fk_ch_rows *r, GError **err);

/* The number of data rows read (the totals row aside). */
size_t fk_ch_rows_count(const struct fk_ch_rows *r);

void fk_ch_rows_free(struct fk_ch_rows *r);

#endif
