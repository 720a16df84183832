#include "collapse/stackrecords.h"

#include "core/error.h"
#include "core/linesource.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct stack_records {
	struct line_source *ls;
	const struct stack_records_opts *opts;
	struct skip_log *skips;
	bool in_record;		/* frames pinned since first_line */
	bool header_pending;	/* still in the first block (dtrace_header) */
	uint64_t first_line;
	size_t pinned_len;	/* the pinned bytes through the last line */
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
/* The first byte of s[0..n) that is not a blank, or n: lines of DTrace
 * frames start with 14 spaces, so 16 bytes are looked at a time. */
static size_t skip_blanks(const char *s, size_t n)
{
	size_t i = 0;

#ifdef __SSE2__
	const __m128i sp = _mm_set1_epi8(' ');

	for (; i + 16 <= n; i += 16) {
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
			_mm_loadu_si128((const __m128i *)(const void *)(s + i)), sp));
		if (m != 0xffff) {
			i += (size_t)__builtin_ctz(~m);
			break;
		}
	}
#endif
	while (i < n && is_blank(s[i]))
		i++;
	return i;
}

static enum line_kind classify(const char *s, size_t n, const char **digits,
			       size_t *ndigits)
{
	size_t i = skip_blanks(s, n), d;

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
	struct line_source *ls = line_source_open(path, err);
	struct stack_records *r;

	if (!ls)
		return NULL;
	r = g_new0(struct stack_records, 1);
	r->ls = ls;
	r->opts = opts;
	r->skips = skips;
	r->header_pending = opts->dtrace_header;
	return r;
}

void stack_records_free(struct stack_records *r)
{
	if (!r)
		return;
	line_source_free(r->ls);
	g_free(r);
}

static void skip(struct stack_records *r, uint64_t line, const char *reason)
{
	if (r->skips)
		skip_log_add(r->skips, line_source_name(r->ls), line, reason);
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
	const char *p = line_source_pinned(r->ls);
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
	line_source_unpin(r->ls);
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
	while ((rc = line_source_next(r->ls, &line, err)) > 0) {
		enum line_kind k = classify(line.s, line.len, &digits, &nd);
		enum fk_count_status st;

		if (!line.newline) {
			fk_error_at(err, FK_ERROR_TRUNCATED, line_source_name(r->ls),
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
				line_source_pin(r->ls, line.s);
			}
			r->pinned_len = (size_t)(line.s + line.len - line_source_pinned(r->ls));
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
		rec->raw = line_source_pinned(r->ls);
		rec->len = (size_t)(line.s - rec->raw);
		rec->file = line_source_name(r->ls);
		rec->lineno = r->first_line;
		return 1;	/* stays pinned until the next call */
	}
	if (rc == 0 && r->in_record && r->header_pending)
		skip_header(r, line_source_pinned(r->ls) + r->pinned_len);
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
	struct stack_cache *sc;
	const struct stack_frame_rules *rules;
	GString *out;
};

static void name_one(const char *s, size_t n, void *data)
{
	struct naming *nm = data;

	if (nm->out->len)
		g_string_append_c(nm->out, ';');
	stack_cache_frame(nm->sc, nm->out, s, n, nm->rules);
}

/* stack_callers_fn: the callers' names, root first */
static void name_callers(void *ctx, const char *text, size_t len, GString *out)
{
	struct naming *nm = ctx;

	nm->out = out;
	stack_records_foreach_root_first(text, len, name_one, nm);
}

int stack_records_collapse(const char *path, const struct stack_records_opts *opts,
			   struct skip_log *skips, struct stack_cache *sc,
			   const struct stack_frame_rules *rules, GError **err)
{
	struct stack_records *r = stack_records_open(path, opts, skips, err);
	struct naming nm = { sc, rules, NULL };
	struct stack_record rec;
	GString *stack;
	int rc;

	if (!r)
		return -1;
	stack = g_string_sized_new(1024);
	while ((rc = stack_records_next(r, &rec, err)) > 0) {
		/* the first line is a frame, the leaf; the callers follow */
		const char *nl = memchr(rec.raw, '\n', rec.len);
		size_t leaf = (size_t)(nl - rec.raw), s = skip_blanks(rec.raw, leaf), e = leaf;

		while (e > s && is_blank(rec.raw[e - 1]))
			e--;
		stack_cache_add_record(sc, stack, nl + 1, rec.len - leaf - 1, name_callers,
				       &nm, rec.raw + s, e - s, rules, rec.count);
	}
	g_string_free(stack, TRUE);
	stack_records_free(r);
	return rc < 0 ? -1 : 0;
}
