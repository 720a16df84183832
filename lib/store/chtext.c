/*
 * chtext.c - ClickHouse's text formats, both ways.  The answer reader
 * keeps only a partial line between chunks, so memory follows the
 * longest row, not the answer.
 */
#include "store/chtext.h"

#include "core/error.h"
#include "core/textesc.h"

#include <string.h>

void fk_sql_quote(GString *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	g_string_append_c(out, '\'');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
			g_string_append_c(out, (char)c);
		} else {
			char e[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };

			g_string_append_len(out, e, 4);
		}
	}
	g_string_append_c(out, '\'');
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool fk_ch_tsv_unescape(const char *s, size_t len, GString *out)
{
	const char *end = s + len;

	while (s < end) {
		const char *bs = memchr(s, '\\', (size_t)(end - s));
		char c;

		if (!bs) {
			g_string_append_len(out, s, end - s);
			return true;
		}
		g_string_append_len(out, s, bs - s);
		if (bs + 1 == end)
			return false;
		switch (bs[1]) {
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'n': c = '\n'; break;
		case 'r': c = '\r'; break;
		case 't': c = '\t'; break;
		case '0': c = '\0'; break;
		case 'a': c = '\a'; break;
		case 'v': c = '\v'; break;
		case '\\': case '\'': case '"': case '/': c = bs[1]; break;
		case 'x': {
			int hi = bs + 3 < end ? hexval(bs[2]) : -1;
			int lo = bs + 3 < end ? hexval(bs[3]) : -1;

			if (hi < 0 || lo < 0)
				return false;
			g_string_append_c(out, (char)(hi * 16 + lo));
			s = bs + 4;
			continue;
		}
		default:
			return false;
		}
		g_string_append_c(out, c);
		s = bs + 2;
	}
	return true;
}

char *fk_ch_exception(const char *text, size_t len, int *code)
{
	const char *p = g_strstr_len(text, (gssize)len, "Code: ");
	const char *end = text + len, *msg, *what;
	GString *out;
	int c = 0;

	if (code)
		*code = 0;
	if (!p)
		return NULL;
	p += 6;
	if (p >= end || !g_ascii_isdigit(*p))
		return NULL;
	for (; p < end && g_ascii_isdigit(*p) && c < 100000; p++)
		c = c * 10 + (*p - '0');
	msg = g_strstr_len(p, end - p, "DB::Exception: ");
	msg = msg ? msg + 15 : p;
	while (msg < end && (*msg == ',' || *msg == ' '))
		msg++;
	what = g_strstr_len(msg, end - msg, ", e.what() = ");
	if (what)
		end = what;
	while (end > msg && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '.'))
		end--;
	if (end - msg > 1000)
		end = msg + 1000;
	out = g_string_new(NULL);
	fk_text_escape(out, msg, (size_t)(end - msg), 0);
	g_string_append_printf(out, " (code %d)", c);
	if (code)
		*code = c;
	return g_string_free(out, FALSE);
}

enum rows_state { ROWS_DATA, ROWS_BLANK, ROWS_DONE };

struct fk_ch_rows {
	int ncols;
	fk_ch_row_fn fn;
	void *data;
	GString *partial;	/* a line not yet ended */
	GString *fields;	/* the unescaped fields, NUL-separated */
	char **fv;
	size_t *lens;
	size_t rows;
	enum rows_state state;
	bool failed;
};

struct fk_ch_rows *fk_ch_rows_new(int ncols, fk_ch_row_fn fn, void *data)
{
	struct fk_ch_rows *r = g_new0(struct fk_ch_rows, 1);

	r->ncols = ncols;
	r->fn = fn;
	r->data = data;
	r->partial = g_string_new(NULL);
	r->fields = g_string_new(NULL);
	r->fv = g_new0(char *, (size_t)ncols + 1);
	r->lens = g_new0(size_t, (size_t)ncols);
	return r;
}

void fk_ch_rows_free(struct fk_ch_rows *r)
{
	if (!r)
		return;
	g_string_free(r->partial, TRUE);
	g_string_free(r->fields, TRUE);
	g_free(r->fv);
	g_free(r->lens);
	g_free(r);
}

size_t fk_ch_rows_count(const struct fk_ch_rows *r)
{
	return r->rows;
}

/* An error for a line that is not a row: the server's own message if the
 * line (or what follows it in this chunk) is an exception. */
static int not_a_row(const char *line, size_t len, const char *why, GError **err)
{
	char *msg = fk_ch_exception(line, len, NULL);

	if (msg)
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "the server failed: %s", msg);
	else
		g_set_error(err, FK_ERROR, FK_ERROR_PARSE, "unexpected answer: %s", why);
	g_free(msg);
	return -1;
}

static int take_line(struct fk_ch_rows *r, const char *line, size_t len, GError **err)
{
	const char *p = line, *end = line + len;
	size_t offs[64];
	int n = 0;

	if (r->state == ROWS_DONE)
		return not_a_row(line, len, "text after the totals row", err);
	if (len == 0) {
		if (r->state == ROWS_BLANK)
			return not_a_row(line, len, "two empty lines", err);
		r->state = ROWS_BLANK;
		return 0;
	}
	if (!g_ascii_isdigit(line[0]) && line[0] != '-')
		return not_a_row(line, len, "a row that does not start with a number", err);
	g_string_truncate(r->fields, 0);
	for (;;) {
		const char *tab = memchr(p, '\t', (size_t)(end - p));
		const char *fe = tab ? tab : end;

		if (n == r->ncols || n == (int)G_N_ELEMENTS(offs))
			return not_a_row(line, len, "a row with too many fields", err);
		offs[n] = r->fields->len;
		if (!fk_ch_tsv_unescape(p, (size_t)(fe - p), r->fields))
			return not_a_row(line, len, "a bad escape in a field", err);
		r->lens[n] = r->fields->len - offs[n];
		g_string_append_c(r->fields, '\0');
		n++;
		if (!tab)
			break;
		p = tab + 1;
	}
	if (n != r->ncols)
		return not_a_row(line, len, "a row with too few fields", err);
	for (int i = 0; i < n; i++)
		r->fv[i] = r->fields->str + offs[i];
	if (r->state == ROWS_BLANK) {
		r->state = ROWS_DONE;
		return r->fn(r->fv, r->lens, true, r->data, err);
	}
	r->rows++;
	return r->fn(r->fv, r->lens, false, r->data, err);
}

int fk_ch_rows_feed(struct fk_ch_rows *r, const char *buf, size_t len, GError **err)
{
	const char *p = buf, *end = buf + len;

	if (r->failed)
		return -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t piece = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int rc;

		if (r->partial->len + piece > FK_CH_LINE_MAX) {
			g_set_error(err, FK_ERROR, FK_ERROR_RANGE, "unexpected answer: a line longer than %u bytes", FK_CH_LINE_MAX);
			r->failed = true;
			return -1;
		}
		if (!nl) {
			g_string_append_len(r->partial, p, (gssize)piece);
			break;
		}
		if (r->partial->len) {
			g_string_append_len(r->partial, p, (gssize)piece);
			rc = take_line(r, r->partial->str, r->partial->len, err);
			g_string_truncate(r->partial, 0);
		} else {
			rc = take_line(r, p, piece, err);
		}
		if (rc < 0) {
			r->failed = true;
			return -1;
		}
		p = nl + 1;
	}
	return 0;
}

int fk_ch_rows_finish(struct fk_ch_rows *r, GError **err)
{
	if (r->failed)
		return -1;
	if (r->partial->len) {
		r->failed = true;
		return not_a_row(r->partial->str, r->partial->len, "the last line has no end", err);
	}
	if (r->state != ROWS_DONE) {
		g_set_error(err, FK_ERROR, FK_ERROR_TRUNCATED, "the answer ended before its totals row: it is not whole");
		r->failed = true;
		return -1;
	}
	return 0;
}
