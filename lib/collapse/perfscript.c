#include "collapse/perfscript.h"

#include "core/error.h"
#include "core/linesource.h"

#include <string.h>

/*
 * The reader only finds where samples begin and end: a sample's header line
 * is parsed (in place in a mapped file, else copied into hdr first), and the lines after it are left in the
 * line reader's buffer, pinned, and handed over as one block (raw).  Frames
 * are parsed only on demand (perf_script_parse_frames()), because most call
 * chains repeat and the collapser caches their names by raw text; so the
 * per-line work here is finding the line's end and looking at its first
 * byte.
 */
/*
 * A header parse_header_fast() read, to parse later ones by comparison: a
 * thread's samples have headers that differ only in the time column
 * ("COMM PID/TID [CPU] TIME: PERIOD EVENT: ..."), and a line with the same
 * bytes before and after its time parses the same way (see
 * header_memo_parse()).  The reader keeps the last MEMOS layouts: samples
 * of a few threads interleave.
 */
struct header_memo {
	GString *line;		/* a copy of the header; empty: none */
	size_t t_beg, colon;	/* where its time starts, its ':' after */
	struct perf_sample h;	/* its fields, pointers into line */
	struct fk_str rest;
};

#define MEMOS 4

/*
 * Blocks are found by a hash of their first BLOCK_PREFIX bytes (the leaf's
 * line, address included), then compared whole; a bucket holds the
 * blocks with those first bytes, most recently seen first, and only its
 * first BLOCK_TRIES are tried (past that, blocks are not kept).
 */
#define BLOCK_PREFIX 32
#define BLOCK_TRIES 8
#define BLOCKS_MAX_BYTES (64u << 20)
#define BLOCK_MAX_LEN (64u << 10)

struct known_block {
	const char *s;		/* the text, in the set's chunk */
	uint32_t len, lines;
	uint32_t next;		/* the next block in the bucket, or 0 */
	uint32_t hash;		/* of the first BLOCK_PREFIX bytes */
};

struct perf_blocks {
	unsigned refs;
	GArray *blocks;		/* struct known_block; number 0 unused */
	uint32_t *heads;	/* bucket -> its first block, or 0 */
	size_t mask;
	size_t bytes;
	GStringChunk *text;
	uint64_t layouts;	/* the last layout number given */
};

struct perf_script_reader {
	struct line_source *lr;
	const struct perf_script_opts *opts;
	struct skip_log *skips;
	GString *hdr;		/* a stream's header line; h points into it */
	size_t raw_len;		/* bytes of the block after the header */
	struct fk_str inline_frame;	/* a frame on the header line */
	bool header_frame;	/* inline_frame is set and no call chain has
				   followed (yet): the sample may be complete */
	struct perf_sample h;
	uint64_t header_line;
	bool in_sample;		/* a header was read; frames may follow */
	bool lost_sample;	/* the header was unreadable: skip to blank */
	bool done;
	bool pending;		/* line holds a header seen before its blank */
	struct line pending_line;
	struct header_memo memo[MEMOS];
	unsigned memo_last, memo_next;	/* the last hit; the next to replace */
	struct perf_blocks *blocks;
	bool at_block;		/* the sample's frame lines are next */
	uint32_t block;		/* the known block they were, or 0 */
	size_t run_len, run_lines;	/* the first run of indented lines */
	bool srcline_seen;	/* opts->srcline: a source line was found */
};

static inline bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_word(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_';
}

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return false;
	return true;
}

static bool int_shaped(const char *s, size_t n)
{
	if (n && s[0] == '-')
		s++, n--;
	return all_digits(s, n);
}

/* "1234", "12/34", "-1/-1" */
static bool pid_shaped(const char *s, size_t n)
{
	const char *slash = memchr(s, '/', n);

	if (!slash)
		return int_shaped(s, n);
	return int_shaped(s, (size_t)(slash - s)) &&
	       int_shaped(slash + 1, n - (size_t)(slash - s) - 1);
}

/* "[001]" */
static bool cpu_shaped(const char *s, size_t n)
{
	return n >= 3 && s[0] == '[' && s[n - 1] == ']' && all_digits(s + 1, n - 2);
}

/* "81.899266:" */
static bool time_shaped(const char *s, size_t n)
{
	const char *dot;

	if (n < 4 || s[n - 1] != ':')
		return false;
	dot = memchr(s, '.', n);
	return dot && all_digits(s, (size_t)(dot - s)) &&
	       all_digits(dot + 1, n - 1 - (size_t)(dot - s) - 1);
}

/* "cpu-clock:", "sched:sched_switch:": ends in ':' and is not a number */
static bool event_shaped(const char *s, size_t n)
{
	if (n < 2 || s[n - 1] != ':')
		return false;
	for (size_t i = 0; i + 1 < n; i++)
		if (!is_digit(s[i]) && s[i] != '.' && s[i] != ':')
			return true;
	return false;
}

#define MAX_TOKENS 24

struct token {
	const char *s;
	size_t n;
};

static size_t tokenize(const char *line, size_t len, struct token *t)
{
	size_t n = 0, i = 0;

	while (n < MAX_TOKENS) {
		while (i < len && is_space(line[i]))
			i++;
		if (i == len)
			break;
		t[n].s = line + i;
		while (i < len && !is_space(line[i]))
			i++;
		t[n].n = (size_t)(line + i - t[n].s);
		n++;
	}
	return n;
}

static const char *parse_header_general(const char *line, size_t len,
					struct perf_sample *s, struct fk_str *rest);
static bool frame_shaped(const char *line, size_t len);

static const char NOT_A_HEADER[] = "sample with unrecognised header";

/*
 * A token just before the event that starts like a number is the period
 * column: a period that is not a u64 makes the sample unreadable rather
 * than silently weighted 1.  Returns NULL and sets *v, or the reason.
 */
static const char *parse_period(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;

	if (n && s[0] == '-')
		return "sample with a negative period";
	if (!all_digits(s, n))
		return "sample period is not a number";
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return "sample period above 2^64-1";
		x = x * 10 + d;
	}
	*v = x;
	return NULL;
}

static bool period_shaped(const char *s, size_t n)
{
	return n && (is_digit(s[0]) || (n > 1 && (s[0] == '-' || s[0] == '+') &&
					 is_digit(s[1])));
}

/* Extends [*b, *e) over the token that ends just before position e. */
static bool token_before(const char *line, size_t at, size_t *b, size_t *e)
{
	size_t i = at;

	while (i > 0 && is_space(line[i - 1]))
		i--;
	*e = i;
	while (i > 0 && !is_space(line[i - 1]))
		i--;
	*b = i;
	return *e > *b;
}

/*
 * The layout perf script prints by default and with the usual -F lists:
 * "COMM PID/TID [CPU] TIME: PERIOD EVENT: ...", with [CPU], PID/ and PERIOD
 * optional.  Found from the time column, which is easy to spot; anything
 * else goes to the general parser.
 */
static const char *parse_header_fast(const char *line, size_t len,
				     struct perf_sample *s, struct fk_str *rest)
{
	const char *colon = memchr(line, ':', len);
	size_t t_end, t_beg, b, e, i, j;
	const char *slash;

	/* the time: DIGITS.DIGITS followed by ':' and a blank */
	if (!colon || (size_t)(colon - line) + 1 >= len || !is_space(colon[1]))
		return NOT_A_HEADER;
	t_end = (size_t)(colon - line);
	if (!token_before(line, t_end, &t_beg, &b) || b != t_end ||
	    !time_shaped(line + t_beg, t_end - t_beg + 1))
		return NOT_A_HEADER;
	/* an optional [CPU], then PID/TID or TID, then the comm */
	if (!token_before(line, t_beg, &b, &e))
		return NOT_A_HEADER;
	if (cpu_shaped(line + b, e - b) && !token_before(line, b, &b, &e))
		return NOT_A_HEADER;
	if (!pid_shaped(line + b, e - b) || b == 0)
		return NOT_A_HEADER;
	memset(s, 0, sizeof(*s));
	s->period = 1;
	i = b;
	while (i > 0 && is_space(line[i - 1]))
		i--;
	j = 0;
	while (j < i && is_space(line[j]))
		j++;
	s->comm.s = line + j;
	s->comm.len = i - j;
	slash = memchr(line + b, '/', e - b);
	if (slash) {
		s->pid.s = line + b;
		s->pid.len = (size_t)(slash - line) - b;
		s->tid.s = slash + 1;
		s->tid.len = e - b - s->pid.len - 1;
	} else {
		s->tid.s = line + b;
		s->tid.len = e - b;
	}
	/* after the time: an optional PERIOD, then EVENT: */
	i = t_end + 1;
	while (i < len && is_space(line[i]))
		i++;
	j = i;
	while (j < len && !is_space(line[j]))
		j++;
	if (j < len && period_shaped(line + i, j - i)) {
		size_t k = j;
		while (k < len && is_space(line[k]))
			k++;
		b = k;
		while (k < len && !is_space(line[k]))
			k++;
		if (event_shaped(line + b, k - b)) {
			const char *why = parse_period(line + i, j - i, &s->period);
			if (why)
				return why;
			s->has_period = true;
			i = b;
		}
	}
	j = i;
	while (j < len && !is_space(line[j]))
		j++;
	if (event_shaped(line + i, j - i)) {
		s->event.s = line + i;
		s->event.len = j - i - 1;
		i = j;
	}
	while (i < len && is_space(line[i]))
		i++;
	e = len;
	while (e > i && is_space(line[e - 1]))
		e--;
	rest->s = line + i;
	rest->len = e - i;
	return NULL;
}

/* perf_script_parse_header(), saying why a line is not a usable header. */
static const char *parse_header(const char *line, size_t len,
				struct perf_sample *s, struct fk_str *rest)
{
	const char *why = parse_header_fast(line, len, s, rest);

	if (why != NOT_A_HEADER)
		return why;
	return parse_header_general(line, len, s, rest);
}

/* A field of line (just parsed) moved into the memo's copy of it. */
static struct fk_str memo_field_to(const struct header_memo *m, struct fk_str f,
				   const char *line)
{
	if (f.s)
		f.s = m->line->str + (f.s - line);
	return f;
}

/* A field of the memo's line moved to the same place in line. */
static struct fk_str memo_field(const struct header_memo *m, struct fk_str f,
				const char *line, size_t colon)
{
	size_t off;

	if (!f.s)
		return f;
	off = (size_t)(f.s - m->line->str);
	f.s = off < m->t_beg ? line + off : line + colon + (off - m->colon);
	return f;
}

/*
 * Where the time ends in text[0..n) when text starts with the memo's bytes
 * before the time and then a time (DIGITS.DIGITS); else 0.
 */
static size_t memo_time_end(const struct header_memo *m, const char *text,
			    size_t n)
{
	size_t i = m->t_beg, dot;

	if (!m->line->len || n <= i || !fk_bytes_equal(text, m->line->str, i))
		return 0;
	while (i < n && is_digit(text[i]))
		i++;
	if (i == m->t_beg || i == n || text[i] != '.')
		return 0;
	dot = ++i;
	while (i < n && is_digit(text[i]))
		i++;
	return i == dot ? 0 : i;
}

/* The memo's fields moved over to text, whose time ends at i. */
static void memo_fill(const struct header_memo *m, const char *text, size_t i,
		      struct perf_sample *s, struct fk_str *rest)
{
	*s = m->h;
	s->comm = memo_field(m, m->h.comm, text, i);
	s->pid = memo_field(m, m->h.pid, text, i);
	s->tid = memo_field(m, m->h.tid, text, i);
	s->event = memo_field(m, m->h.event, text, i);
	*rest = memo_field(m, m->rest, text, i);
}

/*
 * parse_header() by comparison with the memo: when line has the memo's
 * bytes before the time, a time (DIGITS.DIGITS) and then the memo's bytes
 * from the time's ':' to the end, parse_header_fast() would find the same
 * first ':' (the bytes before it hold none), the same time token and so
 * the same columns before it, and the same period, event and rest after
 * it: the memo's fields are moved over to line.  Returns false when line
 * does not match.
 */
static bool header_memo_parse(const struct header_memo *m, const char *line,
			      size_t len, struct perf_sample *s,
			      struct fk_str *rest)
{
	size_t i = memo_time_end(m, line, len), tail = m->line->len - m->colon;

	if (!i || len - i != tail ||
	    !fk_bytes_equal(line + i, m->line->str + m->colon, tail))
		return false;
	memo_fill(m, line, i, s, rest);
	return true;
}

/*
 * header_memo_parse() on the line at p, before it is read as a line: the
 * same comparisons, with the line's end ('\n') expected where the memo's
 * tail ends; sets *len to the line's length.  Where it says yes, the line
 * reader would have returned that line and header_memo_parse() said yes.
 */
static bool header_memo_peek(const struct header_memo *m, const char *p,
			     size_t avail, struct perf_sample *s,
			     struct fk_str *rest, size_t *len)
{
	size_t i = memo_time_end(m, p, avail), tail = m->line->len - m->colon;

	if (!i || avail - i <= tail || p[i + tail] != '\n' ||
	    !fk_bytes_equal(p + i, m->line->str + m->colon, tail))
		return false;
	*len = i + tail;
	memo_fill(m, p, i, s, rest);
	return true;
}

/* parse_header(), through the memos; a new layout replaces the oldest. */
static const char *parse_header_memo(struct perf_script_reader *r,
				     const char *line, size_t len,
				     struct perf_sample *s, struct fk_str *rest)
{
	const char *why, *colon;
	struct header_memo *m;

	for (unsigned k = 0; k < MEMOS; k++) {
		unsigned at = (r->memo_last + k) % MEMOS;
		if (header_memo_parse(&r->memo[at], line, len, s, rest)) {
			r->memo_last = at;
			return NULL;
		}
	}
	why = parse_header_fast(line, len, s, rest);
	if (why == NOT_A_HEADER)
		return parse_header_general(line, len, s, rest);
	if (why)
		return why;
	r->memo_last = r->memo_next;
	r->memo_next = (r->memo_next + 1) % MEMOS;
	m = &r->memo[r->memo_last];
	g_string_truncate(m->line, 0);
	/* parse_header_fast() found the time before the first ':' */
	colon = memchr(line, ':', len);
	m->colon = (size_t)(colon - line);
	m->t_beg = m->colon;
	while (m->t_beg > 0 && !is_space(line[m->t_beg - 1]))
		m->t_beg--;
	g_string_append_len(m->line, line, (gssize)len);
	m->h = *s;
	m->rest = *rest;
	m->h.comm = memo_field_to(m, s->comm, line);
	m->h.pid = memo_field_to(m, s->pid, line);
	m->h.tid = memo_field_to(m, s->tid, line);
	m->h.event = memo_field_to(m, s->event, line);
	m->rest = memo_field_to(m, *rest, line);
	m->h.layout = s->layout = ++r->blocks->layouts;
	return NULL;
}

bool perf_script_parse_header(const char *line, size_t len,
			      struct perf_sample *s, struct fk_str *rest)
{
	return parse_header(line, len, s, rest) == NULL;
}

static const char *parse_header_general(const char *line, size_t len,
					struct perf_sample *s, struct fk_str *rest)
{
	struct token t[MAX_TOKENS];
	size_t n = tokenize(line, len, t), i, j, pid_at = SIZE_MAX;
	const char *slash, *end;

	/* The pid/tid column is anchored by the [cpu] or time column after it. */
	for (i = 0; i + 1 < n; i++)
		if (pid_shaped(t[i].s, t[i].n) &&
		    (cpu_shaped(t[i + 1].s, t[i + 1].n) ||
		     time_shaped(t[i + 1].s, t[i + 1].n))) {
			pid_at = i;
			break;
		}
	/* Without either, it is the last number before the event. */
	if (pid_at == SIZE_MAX) {
		for (j = 1; j < n && !event_shaped(t[j].s, t[j].n); j++)
			;
		if (j >= n)
			return NOT_A_HEADER;
		for (i = j; i-- > 0;)
			if (pid_shaped(t[i].s, t[i].n)) {
				pid_at = i;
				break;
			}
		if (pid_at == SIZE_MAX)
			return NOT_A_HEADER;
	}

	memset(s, 0, sizeof(*s));
	s->period = 1;
	if (pid_at > 0) {
		s->comm.s = t[0].s;
		s->comm.len = (size_t)(t[pid_at - 1].s + t[pid_at - 1].n - t[0].s);
	}
	slash = memchr(t[pid_at].s, '/', t[pid_at].n);
	if (slash) {
		s->pid.s = t[pid_at].s;
		s->pid.len = (size_t)(slash - t[pid_at].s);
		s->tid.s = slash + 1;
		s->tid.len = t[pid_at].n - s->pid.len - 1;
	} else {
		s->tid.s = t[pid_at].s;
		s->tid.len = t[pid_at].n;
	}
	j = pid_at + 1;
	if (j < n && cpu_shaped(t[j].s, t[j].n))
		j++;
	if (j < n && time_shaped(t[j].s, t[j].n))
		j++;
	if (j + 1 < n && period_shaped(t[j].s, t[j].n) &&
	    event_shaped(t[j + 1].s, t[j + 1].n)) {
		const char *why = parse_period(t[j].s, t[j].n, &s->period);
		if (why)
			return why;
		s->has_period = true;
		j++;
	}
	if (j < n && event_shaped(t[j].s, t[j].n)) {
		s->event.s = t[j].s;
		s->event.len = t[j].n - 1;
		j++;
	}
	end = line + len;
	rest->s = j < n ? t[j].s : end;
	while (end > rest->s && is_space(end[-1]))
		end--;
	rest->len = (size_t)(end - rest->s);
	return NULL;
}

/* Finds the '(' matching the ')' at s[close]; -1 if none. */
static ptrdiff_t match_open(const char *s, size_t close, size_t floor)
{
	int depth = 0;

	for (size_t i = close + 1; i-- > floor;) {
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(' && --depth == 0)
			return (ptrdiff_t)i;
	}
	return -1;
}

/* Splits "SYMBOL (DSO)" at its last parenthesised group; false if none. */
static bool split_dso(const char *line, size_t from, size_t end,
		      struct perf_frame *f)
{
	ptrdiff_t open;

	if (end <= from || line[end - 1] != ')')
		return false;
	open = match_open(line, end - 1, from);
	/* an unbalanced DSO name: fall back to the last " (" */
	if (open < 0 || (size_t)open == from || !is_space(line[open - 1])) {
		open = -1;
		for (size_t i = end - 1; i > from; i--)
			if (line[i] == '(' && is_space(line[i - 1])) {
				open = (ptrdiff_t)i;
				break;
			}
		if (open < 0)
			return false;
	}
	f->dso.s = line + open + 1;
	f->dso.len = end - 1 - (size_t)open - 1;
	f->sym.s = line + from;
	f->sym.len = (size_t)open - 1 - from;
	return true;
}

/*
 * A frame line starts with blanks and an address: returns the offset of the
 * blank after the address (setting *pc0 to where the address starts), or 0
 * when the line does not start that way.
 */
static size_t address_end(const char *line, size_t len, size_t *pc0)
{
	size_t i = 0;

	while (i < len && is_space(line[i]))
		i++;
	*pc0 = i;
	while (i < len && is_word(line[i]))
		i++;
	return i == *pc0 || i == len || !is_space(line[i]) ? 0 : i;
}

bool perf_script_parse_frame(const char *line, size_t len,
			     struct perf_frame *f)
{
	size_t pc0, end = len, i = address_end(line, len, &pc0);

	if (!i)
		return false;
	memset(f, 0, sizeof(*f));
	f->pc.s = line + pc0;
	f->pc.len = i - pc0;
	while (i < len && is_space(line[i]))
		i++;
	while (end > i && is_space(line[end - 1]))
		end--;
	/*
	 * The symbol runs from the first non-blank after the address to the
	 * blank before "(DSO)"; with no symbol at all stackcollapse-perf.pl
	 * names the frame " ", and so do we.
	 */
	if (end > i && line[i] == '(' && match_open(line, end - 1, i) == (ptrdiff_t)i) {
		f->sym.s = " ";
		f->sym.len = 1;
		f->dso.s = line + i + 1;
		f->dso.len = end - i - 2;
		return true;
	}
	if (!split_dso(line, i, end, f))
		return false;
	if (f->dso.len == 7 && memcmp(f->dso.s, "inlined", 7) == 0) {
		struct perf_frame inner = *f;
		f->inlined = true;
		/* "SYM (DSO) (inlined)" or "SYM (inlined)" */
		if (split_dso(line, i, (size_t)(f->sym.s + f->sym.len - line), &inner)) {
			f->sym = inner.sym;
			f->dso = inner.dso;
		} else {
			f->dso.len = 0;
		}
	}
	if (f->sym.len == 0) {
		f->sym.s = " ";
		f->sym.len = 1;
	}
	return true;
}

struct perf_blocks *perf_blocks_new(void)
{
	struct perf_blocks *b = g_new0(struct perf_blocks, 1);
	struct known_block none = { 0 };

	b->refs = 1;
	b->blocks = g_array_new(FALSE, FALSE, sizeof(struct known_block));
	g_array_append_val(b->blocks, none);
	b->mask = 1023;
	b->heads = g_new0(uint32_t, b->mask + 1);
	b->text = g_string_chunk_new(1 << 16);
	return b;
}

struct perf_blocks *perf_blocks_ref(struct perf_blocks *b)
{
	b->refs++;
	return b;
}

void perf_blocks_unref(struct perf_blocks *b)
{
	if (!b || --b->refs)
		return;
	g_array_free(b->blocks, TRUE);
	g_free(b->heads);
	g_string_chunk_free(b->text);
	g_free(b);
}

static inline uint32_t prefix_hash(const char *p)
{
	uint64_t w[4], h;

	memcpy(w, p, sizeof(w));
	h = (w[0] * 0x9e3779b97f4a7c15ULL) ^ (w[1] * 0xc2b2ae3d27d4eb4fULL) ^
	    (w[2] * 0x165667b19e3779f9ULL) ^ (w[3] * 0xd6e8feb86659fd93ULL);
	return (uint32_t)(h ^ (h >> 32));
}

/*
 * The known block that p[0..avail) starts with, where the indented lines
 * at p end (the byte after it is not a blank, so the reader's bulk skip
 * would stop there too), or 0; a hit moves to the front of its bucket.
 */
static uint32_t block_find(struct perf_blocks *b, const char *p, size_t avail)
{
	struct known_block *kb = (struct known_block *)(void *)b->blocks->data;
	uint32_t h, *link, id;

	if (avail <= BLOCK_PREFIX)
		return 0;
	h = prefix_hash(p);
	link = &b->heads[h & b->mask];
	for (unsigned t = 0; t < BLOCK_TRIES && (id = *link); t++) {
		struct known_block *k = &kb[id];

		if (k->hash == h && k->len < avail && !is_space(p[k->len]) &&
		    memcmp(p, k->s, k->len) == 0) {
			if (t) {	/* to the front */
				uint32_t *head = &b->heads[h & b->mask];
				*link = k->next;
				k->next = *head;
				*head = id;
			}
			return id;
		}
		link = &k->next;
	}
	return 0;
}

static void blocks_grow(struct perf_blocks *b)
{
	struct known_block *kb = (struct known_block *)(void *)b->blocks->data;
	size_t mask = b->mask * 2 + 1;
	uint32_t *heads = g_new0(uint32_t, mask + 1);

	/* oldest first, so that each bucket stays newest first */
	for (uint32_t id = 1; id < b->blocks->len; id++) {
		kb[id].next = heads[kb[id].hash & mask];
		heads[kb[id].hash & mask] = id;
	}
	g_free(b->heads);
	b->heads = heads;
	b->mask = mask;
}

/*
 * The number of the block s[0..len), a run of `lines` complete indented
 * lines: a known one's, or a new one's, or 0 when the set is full.
 */
static uint32_t block_add(struct perf_blocks *b, const char *s, size_t len,
			  size_t lines)
{
	struct known_block *kb = (struct known_block *)(void *)b->blocks->data;
	struct known_block k = { 0 };
	unsigned n = 0;
	uint32_t id;

	if (len < BLOCK_PREFIX || len > BLOCK_MAX_LEN ||
	    b->bytes + len > BLOCKS_MAX_BYTES)
		return 0;
	k.hash = prefix_hash(s);
	for (id = b->heads[k.hash & b->mask]; id; id = kb[id].next, n++)
		if (kb[id].len == len && memcmp(kb[id].s, s, len) == 0)
			return id;
	if (n >= BLOCK_TRIES)
		return 0;
	k.s = g_string_chunk_insert_len(b->text, s, (gssize)len);
	k.len = (uint32_t)len;
	k.lines = (uint32_t)lines;
	k.next = b->heads[k.hash & b->mask];
	id = b->blocks->len;
	g_array_append_val(b->blocks, k);
	b->heads[k.hash & b->mask] = id;
	b->bytes += len;
	if (b->blocks->len > b->mask + 1)
		blocks_grow(b);
	return id;
}

struct perf_script_reader *perf_script_reader_open(const char *path,
	const struct perf_script_opts *opts, struct skip_log *skips,
	GError **err)
{
	struct line_source *lr = line_source_open(path, err);
	struct perf_script_reader *r;

	if (!lr)
		return NULL;
	r = g_new0(struct perf_script_reader, 1);
	r->lr = lr;
	r->opts = opts;
	r->skips = skips;
	r->hdr = g_string_sized_new(256);
	r->blocks = opts && opts->blocks ? perf_blocks_ref(opts->blocks) : perf_blocks_new();
	for (unsigned k = 0; k < MEMOS; k++)
		r->memo[k].line = g_string_sized_new(256);
	return r;
}

void perf_script_reader_free(struct perf_script_reader *r)
{
	if (!r)
		return;
	line_source_free(r->lr);
	perf_blocks_unref(r->blocks);
	g_string_free(r->hdr, TRUE);
	for (unsigned k = 0; k < MEMOS; k++)
		g_string_free(r->memo[k].line, TRUE);
	g_free(r);
}

uint64_t perf_script_reader_bytes(const struct perf_script_reader *r)
{
	return line_source_bytes(r->lr);
}

static bool is_unknown(struct fk_str s)
{
	return s.len == 9 && memcmp(s.s, "[unknown]", 9) == 0;
}

size_t perf_script_parse_frames(const struct perf_sample *s, bool srcline,
				GArray *frames, struct skip_log *skips)
{
	const char *p = s->raw.s, *end = s->raw.s + s->raw.len;
	bool want_srcline = false;
	uint64_t lineno = s->lineno;
	size_t bad = 0;
	struct perf_frame f;

	g_array_set_size(frames, 0);
	/* a frame printed on the header line (-F without a call chain) */
	if (s->inline_frame.len && perf_script_parse_frame(s->inline_frame.s,
			s->inline_frame.len, &f))
		g_array_append_val(frames, f);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *next = p + len + 1;

		size_t blanks = 0;

		lineno++;
		if (len && p[len - 1] == '\r')
			len--;
		while (blanks < len && is_space(p[blanks]))
			blanks++;
		if (p[0] == '#') {
			/* a comment, as anywhere in perf script output */
		} else if (blanks == len && !want_srcline) {
			/*
			 * a line of blanks: it ends a sample, but the reader's
			 * bulk skip of indented lines may pass over it when a
			 * header follows, so it is not a bad frame line
			 */
		} else if (want_srcline) {
			struct perf_frame *last = &g_array_index(frames,
				struct perf_frame, frames->len - 1);
			size_t i = 0;
			while (i < len && is_space(p[i]))
				i++;
			last->srcline.s = p + i;
			last->srcline.len = len - i;
			want_srcline = false;
		} else if (perf_script_parse_frame(p, len, &f)) {
			g_array_append_val(frames, f);
			/* stackcollapse-perf.pl reads no source line after an
			 * unknown symbol in an unknown DSO */
			want_srcline = srcline && !(is_unknown(f.sym) && is_unknown(f.dso));
		} else {
			bad++;
			if (skips)
				skip_log_add(skips, s->file, lineno, "unrecognised line");
		}
		p = next;
	}
	return bad;
}

static void skip(struct perf_script_reader *r, uint64_t line, const char *why)
{
	if (r->skips)
		skip_log_add(r->skips, line_source_name(r->lr), line, why);
}

/*
 * Whether perf_script_parse_frame() will accept the line: an address, a
 * blank, and a final parenthesised group opened after a blank.  Cheaper
 * than parsing.
 */
static bool frame_shaped(const char *line, size_t len)
{
	const char *open;
	size_t i, pc0;

	while (len && is_space(line[len - 1]))
		len--;
	if (!len || line[len - 1] != ')' || !(i = address_end(line, len, &pc0)))
		return false;
	/* usually the last '(' opens the DSO; else look further back */
	open = memrchr(line + i, '(', len - i);
	if (open && is_space(open[-1]))
		return true;
	for (size_t k = len - 1; k > i; k--)
		if (line[k] == '(' && is_space(line[k - 1]))
			return true;
	return false;
}

/* The sample whose header (r->h, r->inline_frame) has just been read. */
static void begin_parsed(struct perf_script_reader *r)
{
	struct fk_str rest = r->inline_frame;

	r->in_sample = true;
	r->lost_sample = false;
	/*
	 * Without a call chain perf prints the sample's frame on this line
	 * and no blank line after it: the next line may be the next sample.
	 */
	r->header_frame = rest.len && frame_shaped(rest.s, rest.len);
	r->at_block = !r->header_frame;
	r->block = 0;
	r->run_len = 0;
	/*
	 * The block starts after the header line's end: the line reader's
	 * cursor, as nothing has been read since this line (line->len leaves
	 * out the '\r' of a CRLF end, so it cannot say where that is).
	 */
	line_source_pin(r->lr, line_source_cursor(r->lr));
}

static void begin_sample(struct perf_script_reader *r, const struct line *line)
{
	const char *why;

	const char *text = line->s;

	/* a stream's buffer may drop the line once the block is pinned past
	 * it: keep a copy; a mapped file's lines stay */
	if (!line_source_lines_stay(r->lr)) {
		g_string_truncate(r->hdr, 0);
		g_string_append_len(r->hdr, line->s, (gssize)line->len);
		text = r->hdr->str;
	}
	r->header_line = line->no;
	r->raw_len = 0;
	r->inline_frame.len = 0;
	r->at_block = false;
	r->run_len = 0;
	if ((why = parse_header_memo(r, text, line->len, &r->h, &r->inline_frame))) {
		r->in_sample = false;
		r->lost_sample = true;
		skip(r, line->no, why);
		return;
	}
	begin_parsed(r);
}

/*
 * The header line just read (at the line source's cursor's line end) at
 * the start of the next line, when a mapped file holds one of a memo's
 * layouts there: begins its sample without reading the line as a line.
 * Only where the loop in perf_script_reader_next() would call
 * begin_sample() on it: outside a sample, and on a line that is not a
 * comment.
 */
static bool peek_header(struct perf_script_reader *r)
{
	const char *p = line_source_cursor(r->lr);
	size_t avail = line_source_avail(r->lr), len;

	if (!avail || p[0] == '#' || is_space(p[0]) || p[0] == '\n')
		return false;
	for (unsigned k = 0; k < MEMOS; k++) {
		unsigned at = (r->memo_last + k) % MEMOS;

		if (header_memo_peek(&r->memo[at], p, avail, &r->h, &r->inline_frame,
				     &len)) {
			r->memo_last = at;
			r->header_line = line_source_advance(r->lr, len + 1, 1);
			r->raw_len = 0;
			r->lost_sample = false;
			begin_parsed(r);
			return true;
		}
	}
	return false;
}

static void finish_sample(struct perf_script_reader *r, struct perf_sample *s)
{
	*s = r->h;
	s->frames = NULL;
	s->nframes = 0;
	s->raw.s = line_source_pinned(r->lr);
	s->raw.len = r->raw_len;
	s->inline_frame = r->inline_frame;
	s->file = line_source_name(r->lr);
	s->lineno = r->header_line;
	s->blocks = r->blocks;
	s->block = 0;
	/* the raw text is one run of indented lines: a block to know */
	if (r->run_len && r->raw_len == r->run_len)
		s->block = r->block ? r->block :
			   block_add(r->blocks, s->raw.s, s->raw.len, r->run_lines);
	r->at_block = false;
	r->in_sample = false;
}

/*
 * The frame lines at the start of a sample: a known block's when the input
 * holds one there, else the run the bulk skip finds.
 */
static void frame_lines(struct perf_script_reader *r)
{
	const char *p = line_source_cursor(r->lr);
	size_t avail = line_source_avail(r->lr);
	uint32_t id = block_find(r->blocks, p, avail);

	r->at_block = false;
	if (id) {
		const struct known_block *k = &g_array_index(r->blocks->blocks,
							     struct known_block, id);
		line_source_advance(r->lr, k->len, k->lines);
		r->block = id;
		r->run_len = k->len;
		r->run_lines = k->lines;
	} else {
		r->run_lines = line_source_skip_indented(r->lr);
		r->run_len = (size_t)(line_source_cursor(r->lr) - p);
	}
	r->raw_len = r->run_len;
}

/*
 * The sample's raw text up to and including the line just read.  The line
 * reader's cursor is past the line's '\n'; line.len is not a measure of it,
 * as it leaves out the '\r' of a CRLF line end (found by fuzzing).
 */
static size_t raw_through_line(struct perf_script_reader *r)
{
	return (size_t)(line_source_cursor(r->lr) - line_source_pinned(r->lr));
}

/*
 * With opts->srcline each frame line but "[unknown] ([unknown])" is
 * followed by its source line.  Without them (perf script run without
 * -F +srcline), every second frame would be taken for the source line of
 * the frame before it, and the stacks would be nonsense: the first sample
 * with a named frame tells.  0 when it has a source line after that frame
 * (or no such frame: the next sample tells), -1 with *err when not.
 */
static int check_srcline(struct perf_script_reader *r, const struct perf_sample *s,
			 GError **err)
{
	const char *p = s->raw.s, *end = s->raw.s + s->raw.len;
	uint64_t lineno = s->lineno, frame_line = 0;
	struct perf_frame f;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p), blanks = 0;
		bool frame;

		lineno++;
		while (blanks < len && is_space(p[blanks]))
			blanks++;
		if (p[0] != '#' && blanks < len) {
			frame = perf_script_parse_frame(p, len, &f);
			if (frame_line) {
				if (frame)
					break;
				r->srcline_seen = true;
				return 0;
			}
			if (frame && !(is_unknown(f.sym) && is_unknown(f.dso)))
				frame_line = lineno;
		}
		p += len + 1;
	}
	if (!frame_line)
		return 0;
	fk_error_at(err, FK_ERROR_PARSE, line_source_name(r->lr), frame_line,
		    "--srcline, but no source line follows this frame: the input was "
		    "made without them (perf script -F +srcline prints them)");
	return -1;
}

static int reader_next(struct perf_script_reader *r, struct perf_sample *s,
		       GError **err);

int perf_script_reader_next(struct perf_script_reader *r,
			    struct perf_sample *s, GError **err)
{
	int rc = reader_next(r, s, err);

	if (rc > 0 && r->opts && r->opts->srcline && !r->srcline_seen &&
	    check_srcline(r, s, err) != 0) {
		r->done = true;
		return -1;
	}
	return rc;
}

static int reader_next(struct perf_script_reader *r, struct perf_sample *s,
		       GError **err)
{
	struct perf_sample h;
	struct fk_str rest;
	struct line line;
	int rc;

	if (r->done)
		return 0;
	line_source_unpin(r->lr);	/* the last sample has been used */
	if (r->pending) {	/* the line is still valid: no read since */
		r->pending = false;
		begin_sample(r, &r->pending_line);
	}
	for (;;) {
		char c;

		/* the hot path: a sample's indented frame lines, in bulk */
		if (r->in_sample && !r->header_frame) {
			if (r->at_block)
				frame_lines(r);
			else if (line_source_skip_indented(r->lr))
				r->raw_len = (size_t)(line_source_cursor(r->lr) -
						      line_source_pinned(r->lr));
			/* the blank line after them that ends the sample, as
			 * the loop below would read it, without a search */
			if (line_source_avail(r->lr) && *line_source_cursor(r->lr) == '\n') {
				line_source_advance(r->lr, 1, 1);
				r->lost_sample = false;
				finish_sample(r, s);
				return 1;
			}
		} else if (r->lost_sample) {
			line_source_skip_indented(r->lr);
		} else if (!r->in_sample && line_source_lines_stay(r->lr) &&
			   peek_header(r)) {
			continue;
		}
		if ((rc = line_source_next(r->lr, &line, err)) <= 0)
			break;
		c = line.len ? line.s[0] : '\0';

		if (!line.newline) {
			fk_error_at(err, FK_ERROR_TRUNCATED, line_source_name(r->lr),
				    line.no, "input ends in the middle of a line: truncated?");
			return -1;
		}
		if (r->in_sample && r->header_frame && line.len) {
			struct perf_sample h2;
			struct fk_str rest2;
			/* a header with a bad period is still a header */
			if (parse_header(line.s, line.len, &h2, &rest2) != NOT_A_HEADER) {
				finish_sample(r, s);
				r->pending = true;
				r->pending_line = line;
				return 1;
			}
			if (is_space(c) && frame_shaped(line.s, line.len)) {
				/* a call chain: the header's text was not a frame */
				r->header_frame = false;
				r->inline_frame.len = 0;
			}
		}
		/* the common case first: an indented frame line of a sample */
		if (r->in_sample && is_space(c)) {
			size_t i = 1;
			while (i < line.len && is_space(line.s[i]))
				i++;
			if (i < line.len) {
				r->raw_len = raw_through_line(r);
				continue;
			}
		}
		if (line.len == 0 || is_space(c)) {
			size_t i = 0;
			while (i < line.len && is_space(line.s[i]))
				i++;
			if (i == line.len) {	/* a blank line ends a sample */
				r->lost_sample = false;
				if (r->in_sample) {
					finish_sample(r, s);
					return 1;
				}
				continue;
			}
		}
		if (c == '#') {
			if (r->in_sample)
				r->raw_len = raw_through_line(r);
			continue;
		}
		if (r->lost_sample)
			continue;
		if (!r->in_sample) {
			begin_sample(r, &line);
			continue;
		}
		/*
		 * A line flush left inside a sample: a new header without a
		 * blank line before it (samples without call chains), or a
		 * frame as old perf versions printed them.
		 */
		if (!(r->opts && r->opts->srcline) &&
		    parse_header(line.s, line.len, &h, &rest) != NOT_A_HEADER) {
			finish_sample(r, s);
			r->pending = true;
			r->pending_line = line;
			return 1;
		}
		r->raw_len = raw_through_line(r);
	}
	if (rc < 0)
		return rc;
	r->done = true;
	if (r->in_sample) {
		if (!(r->opts && r->opts->perl_last) || r->header_frame) {
			finish_sample(r, s);
			return 1;
		}
		skip(r, r->header_line,
		     "last sample not ended by a blank line (dropped by --perl-last)");
	}
	return 0;
}
