#include "collapse/stackrecords.h"

#include "core/error.h"
#include "core/linereader.h"

#include <string.h>

struct stack_records {
	struct line_reader *lr;
	const struct stack_records_opts *opts;
	struct skip_log *skips;
	bool in_record;		/* frames pinned since first_line */
	bool header_pending;	/* still in the first block (dtrace_header) */
	uint64_t first_line;
};

/* Perl's \s, less the '\n' that never reaches a line */
static inline bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

enum line_kind { BLANK, COUNT, FRAME };

/*
 * A count line is blanks, an optional '-', digits, blanks.  On COUNT,
 * *digits is the number's text with its sign.
 */
static enum line_kind classify(const char *s, size_t n, const char **digits,
			       size_t *ndigits)
{
	size_t i = 0, d;

	while (i < n && is_blank(s[i]))
		i++;
	if (i == n)
		return BLANK;
	d = i;
	if (s[i] == '-')
		i++;
	if (i == n || s[i] < '0' || s[i] > '9')
		return FRAME;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	*digits = s + d;
	*ndigits = i - d;
	while (i < n && is_blank(s[i]))
		i++;
	return i == n ? COUNT : FRAME;
}

struct stack_records *stack_records_open(const char *path,
					 const struct stack_records_opts *opts,
					 struct skip_log *skips, GError **err)
{
	struct line_reader *lr = line_reader_open(path, err);
	struct stack_records *r;

	if (!lr)
		return NULL;
	r = g_new0(struct stack_records, 1);
	r->lr = lr;
	r->opts = opts;
	r->skips = skips;
	r->header_pending = opts->dtrace_header;
	return r;
}

void stack_records_free(struct stack_records *r)
{
	if (!r)
		return;
	line_reader_free(r->lr);
	g_free(r);
}

static void skip(struct stack_records *r, uint64_t line, const char *reason)
{
	if (r->skips)
		skip_log_add(r->skips, line_reader_name(r->lr), line, reason);
}

/*
 * DTrace's own header lines: "CPU     ID                    FUNCTION:NAME",
 * the probes that fired ("  0  64091                        :tick-60s "),
 * and its "dtrace: description ... matched 2 probes" when stderr was kept.
 */
static bool dtrace_header_line(const char *s, size_t n)
{
	size_t i = 0, k;

	while (n && is_blank(s[n - 1]))
		n--;
	if (n >= 8 && memcmp(s, "dtrace: ", 8) == 0)
		return true;
	if (n >= 16 && memcmp(s, "CPU", 3) == 0 && is_blank(s[3]) &&
	    memcmp(s + n - 13, "FUNCTION:NAME", 13) == 0)
		return true;
	for (int field = 0; field < 2; field++) {	/* CPU, then ID */
		while (i < n && is_blank(s[i]))
			i++;
		for (k = i; i < n && g_ascii_isdigit(s[i]); i++)
			;
		if (i == k || i == n || !is_blank(s[i]))
			return false;
	}
	while (i < n && is_blank(s[i]))
		i++;
	k = i;
	while (i < n && !is_blank(s[i]))
		i++;
	return i == n && memchr(s + k, ':', n - k) != NULL;
}

/*
 * The first block held no count: it was a header.  DTrace's header is
 * skipped silently (as stackcollapse.pl skips it); any other line is
 * counted, so that text mistaken for a header is not lost unseen.
 */
static void skip_header(struct stack_records *r, const char *end)
{
	const char *p = line_reader_pinned(r->lr);
	uint64_t no = r->first_line;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		size_t n = (size_t)(e - p);

		if (n && p[n - 1] == '\r')
			n--;
		if (!dtrace_header_line(p, n))
			skip(r, no, "line before the first stack");
		no++;
		p = nl ? nl + 1 : end;
	}
}

static void end_record(struct stack_records *r)
{
	r->in_record = false;
	line_reader_unpin(r->lr);
}

int stack_records_next(struct stack_records *r, struct stack_record *rec,
		       GError **err)
{
	struct line line;
	const char *digits = NULL;
	size_t nd = 0;
	int rc;

	if (r->in_record)	/* the record returned last time */
		end_record(r);
	while ((rc = line_reader_next(r->lr, &line, err)) > 0) {
		enum line_kind k = classify(line.s, line.len, &digits, &nd);
		enum fk_count_status st;

		if (!line.newline) {
			fk_error_at(err, FK_ERROR_TRUNCATED, line_reader_name(r->lr),
				    line.no, "input ends in the middle of a line: truncated?");
			return -1;
		}
		if (k == BLANK) {
			if (r->header_pending && r->in_record) {
				skip_header(r, line.s);
				end_record(r);
			}
			r->header_pending = false;
			continue;
		}
		if (k == FRAME) {
			if (!r->in_record) {
				r->in_record = true;
				r->first_line = line.no;
				line_reader_pin(r->lr, line.s);
			}
			continue;
		}
		r->header_pending = false;
		if (!r->in_record) {
			skip(r, line.no, "count without a stack");
			continue;
		}
		if (digits[0] == '-') {
			skip(r, line.no, "negative count");
			end_record(r);
			continue;
		}
		st = fk_count_parse(digits, nd, &rec->count);
		if (st != FK_COUNT_OK) {
			skip(r, line.no, st == FK_COUNT_TOO_LARGE ?
			     "count above 2^64-1" : "count is not a number");
			end_record(r);
			continue;
		}
		rec->raw = line_reader_pinned(r->lr);
		rec->len = (size_t)(line.s - rec->raw);
		rec->file = line_reader_name(r->lr);
		rec->lineno = r->first_line;
		return 1;	/* stays pinned until the next call */
	}
	if (rc == 0 && r->in_record && r->header_pending)
		skip_header(r, line_reader_cursor(r->lr));
	else if (rc == 0 && r->in_record)
		skip(r, r->first_line, "stack without a count at the end of the input");
	if (r->in_record)
		end_record(r);
	return rc;
}

void stack_records_foreach_root_first(const char *raw, size_t len,
				      void (*fn)(const char *s, size_t n, void *data),
				      void *data)
{
	const char *end = raw + len;

	while (end > raw) {
		const char *s, *e;

		/* the line before end: [s, e) without its line end */
		e = end;
		if (e > raw && e[-1] == '\n')
			e--;
		s = memrchr(raw, '\n', (size_t)(e - raw));
		s = s ? s + 1 : raw;
		end = s;
		while (s < e && is_blank(*s))
			s++;
		while (e > s && is_blank(e[-1]))
			e--;
		if (e > s)
			fn(s, (size_t)(e - s), data);
	}
}

struct naming {
	stack_frame_fn name_frame;
	GString *stack;
};

static void name_one(const char *s, size_t n, void *data)
{
	struct naming *nm = data;

	if (nm->stack->len)
		g_string_append_c(nm->stack, ';');
	nm->name_frame(nm->stack, s, n);
}

static enum stack_name_result name_record(void *ctx, const char *raw, size_t len,
					  GString *stack)
{
	struct naming *nm = ctx;

	nm->stack = stack;
	stack_records_foreach_root_first(raw, len, name_one, nm);
	return stack->len ? STACK_NAMED : STACK_EMPTY;
}

int stack_records_collapse(const char *path, const struct stack_records_opts *opts,
			   struct skip_log *skips, struct stack_cache *sc,
			   stack_frame_fn name_frame, GError **err)
{
	struct stack_records *r = stack_records_open(path, opts, skips, err);
	struct naming nm = { name_frame, NULL };
	struct stack_record rec;
	int rc;

	if (!r)
		return -1;
	while ((rc = stack_records_next(r, &rec, err)) > 0)
		stack_cache_add(sc, rec.raw, rec.len, rec.count, name_record, &nm);
	stack_records_free(r);
	return rc < 0 ? -1 : 0;
}
