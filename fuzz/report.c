/*
 * fuzz/report.c - fold-report's library (lib/report/): a --categories
 * file, folded stacks, and both reports written from them.
 *
 * Input: one option byte, a categories file up to a line "%%", then folded
 * text (also read, reversed line by line, as the off-CPU profile when bit
 * 4 is set).  Bits: 1 JSON (else Markdown), 2 --group-threads, 4
 * --offcpu, 8 --no-default-categories, 16 --top 1 (else 1000), 32
 * --min-share 0, 64: the file before "%%" is a --wait-kinds file
 * (waitkind.h) instead, 128 --kernel-stacks.  A categories or wait kinds file the list refuses
 * ends the input: that is a usage error, not a bug; one that is read must
 * leave the list at most CATEGORY_LIST_MAX long.
 *
 * Checked, beyond memory safety and UB: the profile's counts (self sums to
 * the total less the stacks of a root alone; every inclusive, category,
 * unresolved and truncated count is at most the total, a frame's count on
 * the program's side (uincl) at most its inclusive one; the total is the
 * sum of the counts read); the output is valid UTF-8 holding no control
 * character but the line end; JSON parses (a small strict parser below)
 * and has no '<' or '>' at all; in Markdown every '<' and '>' is inside a
 * code span (or a '<' escaped, "\<0.1%"), so no name can inject markup.
 */
#include "fuzz.h"

#include "core/folded.h"
#include "report/model.h"
#include "report/profile.h"
#include "report/report.h"

/* --- a strict JSON syntax check (RFC 8259), enough to trust the writer -- */

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *value(const char *p, int depth);

static const char *string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (;;) {
		unsigned char c = (unsigned char)*p++;

		if (c == '"')
			return p;
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			c = (unsigned char)*p++;
			if (c == 'u') {
				for (int i = 0; i < 4; i++)
					if (!g_ascii_isxdigit(*p++))
						return NULL;
			} else if (!strchr("\"\\/bfnrt", c) || !c) {
				return NULL;
			}
		}
	}
}

static const char *number(const char *p)
{
	const char *s = p;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (g_ascii_isdigit(*p))
			p++;
	else
		return NULL;
	if (*p == '.') {
		p++;
		if (!g_ascii_isdigit(*p))
			return NULL;
		while (g_ascii_isdigit(*p))
			p++;
	}
	return p > s ? p : NULL;
}

static const char *value(const char *p, int depth)
{
	p = ws(p);
	if (depth > 16)
		return NULL;
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p = ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				if (!(p = string(ws(p))) || *(p = ws(p)) != ':')
					return NULL;
				p++;
			}
			if (!(p = value(p, depth + 1)))
				return NULL;
			p = ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return string(p);
	if (strncmp(p, "null", 4) == 0 || strncmp(p, "true", 4) == 0)
		return p + 4;
	if (strncmp(p, "false", 5) == 0)
		return p + 5;
	return number(p);
}

/* Every '<' and '>' of a Markdown line is inside a code span. */
static void check_markdown_line(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t run = 0, j;

		if (s[i] == '\\' && i + 1 < n && s[i + 1] == '<') {
			i += 2;		/* an escaped '<', as in "\<0.1%" */
			continue;
		}
		if (s[i] != '`') {
			FUZZ_CHECK(s[i] != '<' && s[i] != '>', "markup outside a code span: %.*s",
				   (int)MIN(n, 300), s);
			i++;
			continue;
		}
		while (i + run < n && s[i + run] == '`')
			run++;
		/* the closing fence: the next run of exactly as many backticks */
		for (j = i + run; j < n;) {
			size_t r = 0;

			while (j + r < n && s[j + r] == '`')
				r++;
			if (r == run)
				break;
			j += r ? r : 1;
		}
		FUZZ_CHECK(j < n, "an unclosed code span: %.*s", (int)MIN(n, 300), s);
		i = j + run;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_opts o = REPORT_OPTS_INIT;
	struct category_list *cats;
	struct profile *p, *off = NULL;
	struct folded_reader *fr;
	struct folded_line fl;
	const char *sep, *text;
	size_t textlen;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;
	GError *err = NULL;
	GPtrArray *lines;
	fk_count sum = 0, self = 0;
	uint8_t opt;

	if (size < 1)
		return 0;
	opt = data[0];
	data++, size--;
	sep = memmem(data, size, "\n%%\n", 4);
	text = sep ? sep + 4 : (const char *)data;
	textlen = size - (size_t)(text - (const char *)data);

	/* compiling regexes is most of an input's time: the classifier and
	 * the built-in categories are made once */
	static struct frame_classifier *fc;
	static struct category_list *defaults;
	static struct wait_kinds *builtin;
	struct wait_kinds *wk = NULL;

	if (!fc) {
		fc = frame_classifier_new();
		defaults = category_list_new(true);
		builtin = wait_kinds_new(true);
	}
	if (sep && (opt & 64)) {
		wk = wait_kinds_new(true);
		if (wait_kinds_read(wk, fuzz_file(data, (size_t)(sep - (const char *)data) + 1),
				    &err) < 0) {
			g_error_free(err);
			wait_kinds_free(wk);
			return 0;
		}
	}
	cats = (sep && !(opt & 64)) || (opt & 8) ? category_list_new(!(opt & 8)) : defaults;
	if (sep && !(opt & 64) &&
	    category_list_read(cats, fuzz_file(data, (size_t)(sep - (const char *)data) + 1),
			       &err) < 0) {
		g_error_free(err);
		if (cats != defaults)
			category_list_free(cats);
		return 0;
	}
	FUZZ_CHECK(category_list_size(cats) <= CATEGORY_LIST_MAX, "%zu categories",
		   category_list_size(cats));

	/* the profile, as the tool reads it: lines kept for the reversed copy */
	p = profile_new();
	lines = g_ptr_array_new_with_free_func(g_free);
	fr = folded_reader_open(fuzz_file(text, textlen), NULL, NULL);
	FUZZ_CHECK(fr != NULL, "cannot open the input");
	while (folded_reader_next(fr, &fl, NULL) > 0) {
		if (fl.ncounts != 1)
			continue;	/* the tool refuses these */
		profile_add(p, fl.stack, fl.len, fl.count[0], false);
		sum += fl.count[0];
		g_ptr_array_add(lines, g_strdup_printf("%.*s %s", (int)fl.len, fl.stack,
						       count_str(fl.count[0], (char[FK_COUNT_BUFSZ]){ 0 })));
	}
	folded_reader_free(fr);
	if (opt & 4) {
		off = profile_new();
		for (guint i = lines->len; i > 0; i--) {
			const char *l = g_ptr_array_index(lines, i - 1);
			struct folded_line x;

			if (!folded_parse(l, strlen(l), &x) && x.ncounts == 1)
				profile_add(off, x.stack, x.len, x.count[0], false);
		}
	}

	o.categories = cats;
	o.wait_kinds = wk ? wk : builtin;
	o.format = opt & 1 ? REPORT_JSON : REPORT_MARKDOWN;
	o.group_threads = opt & 2;
	o.kernel_stacks = opt & 128;
	o.top = opt & 16 ? 1 : 1000;
	if (opt & 32)
		o.min_share = 0;
	out = open_memstream(&buf, &len);
	FUZZ_CHECK(report_write_fc(out, &(struct report_source){ .files = (char *[]){ "t", NULL },
								.nfiles = 1, .whole = p },
				   off ? &(struct report_source){ .files = (char *[]){ "o", NULL },
								  .nfiles = 1, .whole = off } : NULL,
				   &o, fc, NULL) == 0, "report_write failed");
	fclose(out);

	/* the profile's invariants (profile.h) */
	profile_analyse(p, cats, fc, o.wait_kinds);
	FUZZ_CHECK(p->total == sum, "total differs from the counts read");
	for (guint i = 0; i < p->frames->len; i++) {
		const struct frame_stat *f = g_ptr_array_index(p->frames, i);

		self += f->self;
		FUZZ_CHECK(f->incl <= p->total && f->self <= f->incl && f->lock_wait <= f->incl &&
			   f->calls_lock <= f->lock_wait && f->log_write <= f->incl &&
			   f->trunc_head <= f->incl && f->uincl <= f->incl,
			   "frame counts out of range");
	}
	FUZZ_CHECK(self + p->root_only == p->total, "self does not sum to the total");
	for (size_t i = 0; i < p->ncats; i++)
		FUZZ_CHECK(p->cat_counts[i] <= p->total, "category above the total");
	FUZZ_CHECK(p->unresolved <= p->total && p->truncated <= p->total &&
		   p->hidden <= p->unresolved && p->lost <= p->truncated, "quality");

	/* the output */
	FUZZ_CHECK(g_utf8_validate(buf, (gssize)len, NULL), "output is not UTF-8");
	for (size_t i = 0; i < len; i++)
		FUZZ_CHECK((unsigned char)buf[i] >= 0x20 || buf[i] == '\n',
			   "control character %#x at %zu", (unsigned char)buf[i], i);
	if (o.format == REPORT_JSON) {
		const char *end = value(buf, 0);

		FUZZ_CHECK(end && *ws(end) == '\0', "invalid JSON near byte %zu",
			   end ? (size_t)(end - buf) : 0);
		FUZZ_CHECK(!memchr(buf, '<', len) && !memchr(buf, '>', len), "raw < or > in JSON");
	} else {
		for (const char *l = buf, *e; l < buf + len; l = e + 1) {
			e = memchr(l, '\n', (size_t)(buf + len - l));
			if (!e)
				e = buf + len;
			check_markdown_line(l, (size_t)(e - l));
		}
	}
	free(buf);
	profile_free(p);
	profile_free(off);
	g_ptr_array_free(lines, TRUE);
	if (cats != defaults)
		category_list_free(cats);
	wait_kinds_free(wk);
	return 0;
}
