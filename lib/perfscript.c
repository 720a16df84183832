#include "perfscript.h"

#include "error.h"
#include "linereader.h"

#include <string.h>

/*
 * A sample's text is copied out of the line reader's buffer (which the next
 * read overwrites) into one per-sample buffer; frames hold offsets into it
 * until the sample is complete, because the buffer may move as it grows.
 */
struct span {
	size_t off, len;
};

struct frame_spans {
	struct span pc, sym, dso, srcline;
	bool inlined;
};

struct perf_script_reader {
	struct line_reader *lr;
	const struct perf_script_opts *opts;
	struct skip_log *skips;
	GString *buf;
	GArray *spans;		/* struct frame_spans */
	GArray *frames;		/* struct perf_frame, rebuilt per sample */
	struct span comm, pid, tid, event;
	uint64_t period;
	bool has_period;
	uint64_t header_line;
	bool in_sample;		/* a header was read; frames may follow */
	bool lost_sample;	/* the header was unreadable: skip to blank */
	bool want_srcline;	/* --srcline: the next line belongs to a frame */
	bool done;
	bool pending;		/* line holds a header seen before its blank */
	struct line pending_line;
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

bool perf_script_parse_header(const char *line, size_t len,
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
			return false;
		for (i = j; i-- > 0;)
			if (pid_shaped(t[i].s, t[i].n)) {
				pid_at = i;
				break;
			}
		if (pid_at == SIZE_MAX)
			return false;
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
	if (j + 1 < n && all_digits(t[j].s, t[j].n) && t[j].n <= 19 &&
	    event_shaped(t[j + 1].s, t[j + 1].n)) {
		s->period = g_ascii_strtoull(t[j].s, NULL, 10);
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
	return true;
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

bool perf_script_parse_frame(const char *line, size_t len,
			     struct perf_frame *f)
{
	size_t i = 0, pc0, end = len;

	while (i < len && is_space(line[i]))
		i++;
	pc0 = i;
	while (i < len && is_word(line[i]))
		i++;
	if (i == pc0 || i == len || !is_space(line[i]))
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

struct perf_script_reader *perf_script_reader_open(const char *path,
	const struct perf_script_opts *opts, struct skip_log *skips,
	GError **err)
{
	struct line_reader *lr = line_reader_open(path, err);
	struct perf_script_reader *r;

	if (!lr)
		return NULL;
	r = g_new0(struct perf_script_reader, 1);
	r->lr = lr;
	r->opts = opts;
	r->skips = skips;
	r->buf = g_string_sized_new(4096);
	r->spans = g_array_new(FALSE, FALSE, sizeof(struct frame_spans));
	r->frames = g_array_new(FALSE, FALSE, sizeof(struct perf_frame));
	return r;
}

void perf_script_reader_free(struct perf_script_reader *r)
{
	if (!r)
		return;
	line_reader_free(r->lr);
	g_string_free(r->buf, TRUE);
	g_array_free(r->spans, TRUE);
	g_array_free(r->frames, TRUE);
	g_free(r);
}

uint64_t perf_script_reader_bytes(const struct perf_script_reader *r)
{
	return line_reader_bytes(r->lr);
}

static struct span keep(struct perf_script_reader *r, struct fk_str s)
{
	struct span sp = { r->buf->len, s.len };

	g_string_append_len(r->buf, s.s, (gssize)s.len);
	return sp;
}

static struct fk_str at(const struct perf_script_reader *r, struct span sp)
{
	struct fk_str s = { r->buf->str + sp.off, sp.len };
	return s;
}

static void skip(struct perf_script_reader *r, uint64_t line, const char *why)
{
	if (r->skips)
		skip_log_add(r->skips, line_reader_name(r->lr), line, why);
}

static void add_frame(struct perf_script_reader *r, const struct perf_frame *f)
{
	struct frame_spans fs = {
		.pc = keep(r, f->pc), .sym = keep(r, f->sym),
		.dso = keep(r, f->dso), .inlined = f->inlined,
	};

	g_array_append_val(r->spans, fs);
	/* stackcollapse-perf.pl reads no source line after an unknown frame */
	r->want_srcline = r->opts && r->opts->srcline &&
		!(f->sym.len == 9 && memcmp(f->sym.s, "[unknown]", 9) == 0 &&
		  f->dso.len == 9 && memcmp(f->dso.s, "[unknown]", 9) == 0);
}

static void begin_sample(struct perf_script_reader *r, const struct line *line)
{
	struct perf_sample h;
	struct fk_str rest;
	struct perf_frame f;

	g_string_truncate(r->buf, 0);
	g_array_set_size(r->spans, 0);
	r->want_srcline = false;
	r->header_line = line->no;
	if (!perf_script_parse_header(line->s, line->len, &h, &rest)) {
		r->in_sample = false;
		r->lost_sample = true;
		skip(r, line->no, "sample with unrecognised header");
		return;
	}
	r->in_sample = true;
	r->lost_sample = false;
	r->comm = keep(r, h.comm);
	r->pid = keep(r, h.pid);
	r->tid = keep(r, h.tid);
	r->event = keep(r, h.event);
	r->period = h.period;
	r->has_period = h.has_period;
	/* -F without a call chain prints the sample's one frame on this line */
	if (rest.len && perf_script_parse_frame(rest.s, rest.len, &f))
		add_frame(r, &f);
}

static void finish_sample(struct perf_script_reader *r, struct perf_sample *s)
{
	g_array_set_size(r->frames, r->spans->len);
	for (guint i = 0; i < r->spans->len; i++) {
		struct frame_spans *fs = &g_array_index(r->spans, struct frame_spans, i);
		struct perf_frame *f = &g_array_index(r->frames, struct perf_frame, i);
		f->pc = at(r, fs->pc);
		f->sym = at(r, fs->sym);
		f->dso = at(r, fs->dso);
		f->srcline = at(r, fs->srcline);
		f->inlined = fs->inlined;
	}
	memset(s, 0, sizeof(*s));
	s->comm = at(r, r->comm);
	s->pid = at(r, r->pid);
	s->tid = at(r, r->tid);
	s->event = at(r, r->event);
	s->period = r->period;
	s->has_period = r->has_period;
	s->frames = (struct perf_frame *)(void *)r->frames->data;
	s->nframes = r->frames->len;
	s->file = line_reader_name(r->lr);
	s->lineno = r->header_line;
	r->in_sample = false;
}

int perf_script_reader_next(struct perf_script_reader *r,
			    struct perf_sample *s, GError **err)
{
	struct line line;
	struct perf_frame f;
	struct perf_sample h;
	struct fk_str rest;
	int rc;

	if (r->done)
		return 0;
	if (r->pending) {	/* the line is still valid: no read since */
		r->pending = false;
		begin_sample(r, &r->pending_line);
	}
	while ((rc = line_reader_next(r->lr, &line, err)) > 0) {
		size_t i = 0;

		while (i < line.len && is_space(line.s[i]))
			i++;
		if (i == line.len) {		/* a blank line ends a sample */
			r->lost_sample = false;
			if (r->in_sample) {
				finish_sample(r, s);
				return 1;
			}
			continue;
		}
		if (!line.newline) {
			fk_error_at(err, FK_ERROR_TRUNCATED, line_reader_name(r->lr),
				    line.no, "input ends in the middle of a line: truncated?");
			return -1;
		}
		if (line.s[0] == '#')
			continue;
		if (r->lost_sample)
			continue;
		if (!r->in_sample) {
			begin_sample(r, &line);
			continue;
		}
		if (r->want_srcline) {
			struct frame_spans *fs = &g_array_index(r->spans,
				struct frame_spans, r->spans->len - 1);
			struct fk_str src = { line.s + i, line.len - i };
			fs->srcline = keep(r, src);
			r->want_srcline = false;
			continue;
		}
		/*
		 * Frames are indented in perf's output and headers are not,
		 * but old perf versions printed frames flush left, and -F
		 * without comm indents headers: try the likelier reading first.
		 */
		if (is_space(line.s[0]) && perf_script_parse_frame(line.s, line.len, &f)) {
			add_frame(r, &f);
			continue;
		}
		if (perf_script_parse_header(line.s, line.len, &h, &rest)) {
			/* a new header without a blank line between */
			finish_sample(r, s);
			r->pending = true;
			r->pending_line = line;
			return 1;
		}
		if (!is_space(line.s[0]) && perf_script_parse_frame(line.s, line.len, &f)) {
			add_frame(r, &f);
			continue;
		}
		skip(r, line.no, "unrecognised line");
	}
	if (rc < 0)
		return rc;
	r->done = true;
	if (r->in_sample) {
		if (r->opts && r->opts->keep_last) {
			finish_sample(r, s);
			return 1;
		}
		skip(r, r->header_line,
		     "last sample not ended by a blank line (--keep-last counts it)");
	}
	return 0;
}
