#include "core/folded.h"

#include "core/linereader.h"
#include "core/maplines.h"

#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

static inline bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Splits the last blank-separated token off s[0..*len): returns its start. */
static const char *last_token(const char *s, size_t *len, size_t *toklen)
{
	size_t end = *len, start;

	start = end;
	while (start > 0 && !is_blank(s[start - 1]))
		start--;
	*toklen = end - start;
	end = start;
	while (end > 0 && is_blank(s[end - 1]))
		end--;
	*len = end;
	return s + start;
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

#ifdef __SSE2__
/* The number that the 8 digit values (0-9) in x's bytes make, the first
 * (most significant) in its lowest byte: pairs of digits, then pairs of
 * pairs, then the two halves, each step in every lane at once. */
static inline uint64_t eight_digits(uint64_t x)
{
	x = (x & 0x00ff00ff00ff00ffULL) * 10 + (x >> 8 & 0x00ff00ff00ff00ffULL);
	x = (x & 0x0000ffff0000ffffULL) * 100 + (x >> 16 & 0x0000ffff0000ffffULL);
	return (x & 0xffffffffULL) * 10000 + (x >> 32);
}
#endif

/*
 * Where the digits that end s[0..len) start (s[len - 1] is one), looking
 * back over at most 19 of them, and in *v the number they make.  A line's
 * count is mostly 6 to 10 digits: the loops over them missed their exit
 * at every other line, so up to 15 are found and read without a loop in
 * the 16 bytes before the end.
 */
static inline size_t end_digits(const char *s, size_t len, uint64_t *v)
{
	size_t b = len - 1;
	uint64_t m = 1;

#ifdef __SSE2__
	if (len >= 16) {
		__m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)(s + len - 16)),
					 _mm_set1_epi8('0'));
		unsigned digit = (unsigned)_mm_movemask_epi8(
			_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d));
		/* the digits ending at the last byte, bit 15 */
		size_t n = (size_t)__builtin_clz(~(digit << 16));

		if (n < 16) {
			uint64_t hi = (uint64_t)_mm_cvtsi128_si64(d),
				 lo = (uint64_t)_mm_cvtsi128_si64(_mm_srli_si128(d, 8));

			/* bytes before the digits become leading zeros */
			lo &= n >= 8 ? ~(uint64_t)0 : ~(uint64_t)0 << (8 * (8 - n));
			hi &= n <= 8 ? 0 : ~(uint64_t)0 << (8 * (16 - n));
			*v = eight_digits(hi) * 100000000 + eight_digits(lo);
			return len - n;
		}
	}
#endif
	while (b > 0 && is_digit(s[b - 1]) && len - b < 19)
		b--;
	*v = 0;
	for (size_t i = len; i > b; i--, m *= 10)
		*v += (uint64_t)(s[i - 1] - '0') * m;
	return b;
}

const char *folded_parse(const char *s, size_t len, struct folded_line *out)
{
	size_t tlen, rest;
	const char *tok;
	enum fk_count_status st;
	fk_count c;

	/*
	 * The usual line first: "STACK COUNT", the count at most 19 digits
	 * after one blank, the stack ending in neither a blank, a digit nor a
	 * '.' (so it cannot end in a second count).  What the general path
	 * below would make of it, without its passes over the end.
	 */
	if (len > 2 && is_digit(s[len - 1]) && s[0] != '#') {
		uint64_t v;
		size_t b = end_digits(s, len, &v);

		if (b >= 2 && is_blank(s[b - 1]) && !is_blank(s[b - 2]) &&
		    !is_digit(s[b - 2]) && s[b - 2] != '.') {
			out->stack = s;
			out->len = b - 1;
			out->count[0] = (fk_count)v * FK_COUNT_ONE;
			out->count[1] = 0;
			out->ncounts = 1;
			return NULL;
		}
	}
	while (len && is_blank(s[len - 1]))
		len--;
	if (len == 0)		/* s[0] is not ours to read */
		return "blank line";
	if (s[0] == '#')
		return "comment";
	rest = len;
	tok = last_token(s, &rest, &tlen);
	if (rest == 0)		/* one token: a stack, or a count, alone */
		return fk_count_parse(tok, tlen, &c) == FK_COUNT_OK
		       ? "missing stack" : "missing count";
	st = fk_count_parse(tok, tlen, &c);
	if (st != FK_COUNT_OK)
		return st == FK_COUNT_INVALID ? "count is not a number" : fk_count_status_str(st);
	out->stack = s;
	/* the stack keeps all but one of the blanks before its count */
	out->len = (size_t)(tok - s) - 1;
	out->count[0] = c;
	out->count[1] = 0;
	out->ncounts = 1;

	/* A second number before the first makes a differential line.  Only
	 * a token of digits and dots can be one: look back no further. */
	size_t k = rest;
	while (k > 0 && ((s[k - 1] >= '0' && s[k - 1] <= '9') || s[k - 1] == '.'))
		k--;
	if (k > 0 && s[k - 1] == '+')
		k--;
	if (k < rest && k > 0 && is_blank(s[k - 1])) {
		size_t rest2 = rest, tlen2;
		const char *tok2 = last_token(s, &rest2, &tlen2);
		fk_count c2;

		if (rest2 != rest && rest2 > 0 &&
		    fk_count_parse(tok2, tlen2, &c2) == FK_COUNT_OK) {
			out->len = (size_t)(tok2 - s) - 1;
			out->count[0] = c2;
			out->count[1] = c;
			out->ncounts = 2;
		}
	}
	return NULL;
}

size_t folded_count_blank(const char *s, size_t n)
{
	size_t end = n, start;
	fk_count c;

	while (end > 0 && is_blank(s[end - 1]))
		end--;
	start = end;
	while (start > 0 && !is_blank(s[start - 1]))
		start--;
	if (start > 0 && start < end && fk_count_parse(s + start, end - start, &c) == FK_COUNT_OK)
		return start - 1;
	return n;
}

void folded_shape_release(struct folded_shape *sh)
{
	g_free(sh->file);
	g_free(sh->odd_file);
	*sh = (struct folded_shape)FOLDED_SHAPE_INIT;
}

static const char *counts_word(int n)
{
	return n == 1 ? "one count" : "two counts";
}

char *folded_shape_note(const struct folded_shape *sh)
{
	GString *s;
	int odd = 3 - sh->ncounts;

	if (!sh->odd)
		return NULL;
	s = g_string_new(NULL);
	g_string_printf(s, "%s:%" G_GUINT64_FORMAT ": %s", sh->odd_file, sh->odd_line,
			counts_word(odd));
	if (sh->file)
		g_string_append_printf(s, ", but %s:%" G_GUINT64_FORMAT " has %s: one-count and "
				       "two-count (differential) lines do not mix",
				       sh->file, sh->line, odd == 2 ? "one" : "two");
	else
		g_string_append_printf(s, " where only lines of %s are read", counts_word(sh->ncounts));
	g_string_append_printf(s, "; %" G_GUINT64_FORMAT " such line%s skipped",
			       sh->odd, sh->odd == 1 ? "" : "s");
	return g_string_free(s, FALSE);
}

struct folded_reader {
	struct line_reader *lr;	/* or, for a mapped file: */
	struct map_lines *map;
	int fd;			/* lr's, when this reader opened it; or -1 */
	struct skip_log *skips;
	struct folded_shape *shape;	/* &own, or the profile's */
	struct folded_shape own;
};

struct folded_reader *folded_reader_open(const char *path,
					 struct skip_log *skips, GError **err)
{
	struct line_reader *lr = line_reader_open(path, err);
	struct folded_reader *fr;

	if (!lr)
		return NULL;
	fr = g_new0(struct folded_reader, 1);
	fr->lr = lr;
	fr->fd = -1;
	fr->skips = skips;
	fr->shape = &fr->own;
	return fr;
}

struct folded_reader *folded_reader_open_mapped(const char *path,
						struct skip_log *skips,
						GError **err)
{
	struct map_lines *m;
	struct folded_reader *fr;
	int fd;

	if (!path || strcmp(path, "-") == 0)
		return folded_reader_open(path, skips, err);
	if (!(m = map_lines_open(path, &fd, err)) && fd < 0)
		return NULL;
	fr = g_new0(struct folded_reader, 1);
	fr->map = m;
	fr->fd = fd;
	if (!m)		/* not a regular file: a stream, read once */
		fr->lr = line_reader_from_fd(fd, path);
	fr->skips = skips;
	fr->shape = &fr->own;
	return fr;
}

void folded_reader_set_shape(struct folded_reader *fr, struct folded_shape *sh)
{
	fr->shape = sh;
}

/*
 * True when out has the profile's shape (the first line sets it); else
 * the line is counted as skipped.
 */
static bool shape_fits(struct folded_reader *fr, const struct folded_line *out)
{
	struct folded_shape *sh = fr->shape;

	if (!sh->ncounts) {
		sh->ncounts = out->ncounts;
		sh->file = g_strdup(folded_reader_name(fr));
		sh->line = out->lineno;
		return true;
	}
	if (out->ncounts == sh->ncounts)
		return true;
	if (!sh->odd++) {
		sh->odd_file = g_strdup(folded_reader_name(fr));
		sh->odd_line = out->lineno;
	}
	if (fr->skips)
		skip_log_add(fr->skips, folded_reader_name(fr), out->lineno,
			     out->ncounts == 2 ? "two counts in a profile of one-count lines"
					       : "one count in a differential profile");
	return false;
}

bool folded_reader_stable(const struct folded_reader *fr)
{
	return fr->map != NULL;
}

static inline int next_line(struct folded_reader *fr, struct line *line,
			    GError **err)
{
	return fr->map ? map_lines_next(fr->map, line, err)
		       : line_reader_next(fr->lr, line, err);
}

int folded_reader_next(struct folded_reader *fr, struct folded_line *out,
		       GError **err)
{
	struct line line;
	const char *why;
	int rc;

	while ((rc = next_line(fr, &line, err)) > 0) {
		size_t i = 0;

		while (i < line.len && is_blank(line.s[i]))
			i++;
		if (i == line.len)
			continue;
		why = folded_parse(line.s, line.len, out);
		if (!why) {
			out->lineno = line.no;
			if (!shape_fits(fr, out))
				continue;
			return 1;
		}
		if (fr->skips)
			skip_log_add(fr->skips, folded_reader_name(fr), line.no, why);
	}
	return rc;
}

const char *folded_reader_name(const struct folded_reader *fr)
{
	return fr->map ? map_lines_name(fr->map) : line_reader_name(fr->lr);
}

uint64_t folded_reader_bytes(const struct folded_reader *fr)
{
	return fr->map ? map_lines_bytes(fr->map) : line_reader_bytes(fr->lr);
}

void folded_reader_free(struct folded_reader *fr)
{
	if (!fr)
		return;
	line_reader_free(fr->lr);
	map_lines_free(fr->map);
	if (fr->fd >= 0)
		close(fr->fd);
	folded_shape_release(&fr->own);
	g_free(fr);
}
