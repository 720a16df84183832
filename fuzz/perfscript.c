/*
 * fuzz/perfscript.c - perf script text through the streaming parser and
 * the collapser, as fp-collapse runs them.
 *
 * Input: one option byte, then the perf script text.  The byte's bits
 * choose every option combination: 1 --srcline, 2 --perl-last, 4 --pid,
 * 8 --tid, 16 --kernel, 32 --jit, 64 --addrs, 128 --event-filter=cycles.
 *
 * Checked besides memory safety and UB: every string a sample or a parsed
 * line points to lies inside what it was parsed from (or is the literal
 * " " perf gives an absent symbol); an error is set exactly when the reader
 * fails; the table's entries are distinct, sorted, free of '\n', and sum to
 * its total; writing the table succeeds; samples with one block number have
 * the same raw text, and samples with one layout number the same header
 * fields but the time.
 */
#include "fuzz.h"

#include "collapse/collapse.h"
#include "core/error.h"
#include "collapse/perfscript.h"

static void check_str(struct fk_str s, const void *base, size_t size, const char *what)
{
	if (s.len == 1 && s.s[0] == ' ' && !fuzz_within(s.s, 1, base, size))
		return;		/* the " " name for an absent symbol */
	FUZZ_CHECK(s.len == 0 || fuzz_within(s.s, s.len, base, size),
		   "%s points outside its line", what);
}

/* The single-line parsers on the whole input: pointers stay inside. */
static void parse_whole(const char *s, size_t n)
{
	struct perf_sample h;
	struct perf_frame f;
	struct fk_str rest;

	if (perf_script_parse_header(s, n, &h, &rest)) {
		check_str(h.comm, s, n, "comm");
		check_str(h.pid, s, n, "pid");
		FUZZ_CHECK(h.tid.len > 0, "a header without a tid");
		check_str(h.tid, s, n, "tid");
		check_str(h.event, s, n, "event");
		check_str(rest, s, n, "rest");
	}
	if (perf_script_parse_frame(s, n, &f)) {
		FUZZ_CHECK(f.pc.len > 0, "a frame without an address");
		check_str(f.pc, s, n, "pc");
		check_str(f.sym, s, n, "sym");
		check_str(f.dso, s, n, "dso");
	}
}

/* A frame's span lies in the sample's raw text or its header line's. */
static void check_frame_str(struct fk_str x, const struct perf_sample *s, const char *what)
{
	if (x.len == 0 || (x.len == 1 && x.s[0] == ' '))
		return;		/* empty, or the " " name for an absent symbol */
	FUZZ_CHECK(fuzz_within(x.s, x.len, s->raw.s, s->raw.len) ||
		   fuzz_within(x.s, x.len, s->inline_frame.s, s->inline_frame.len),
		   "frame %s outside the sample's text", what);
}

/*
 * The reader leaves frames unparsed (s->raw); parse them as the collapser
 * does and check every span, then touch the header's strings.
 */
static void touch_sample(const struct perf_sample *s, bool srcline, GArray *frames)
{
	unsigned h = fuzz_touch(s->comm.s, s->comm.len) +
		     fuzz_touch(s->pid.s, s->pid.len) +
		     fuzz_touch(s->tid.s, s->tid.len) +
		     fuzz_touch(s->event.s, s->event.len) +
		     fuzz_touch(s->raw.s, s->raw.len) +
		     fuzz_touch(s->inline_frame.s, s->inline_frame.len);

	FUZZ_CHECK(s->tid.len > 0, "sample at line %lu without a tid",
		   (unsigned long)s->lineno);
	FUZZ_CHECK(s->raw.len == 0 || s->raw.s[s->raw.len - 1] == '\n',
		   "raw text of the sample at line %lu does not end a line",
		   (unsigned long)s->lineno);
	perf_script_parse_frames(s, srcline, frames, NULL);
	for (guint i = 0; i < frames->len; i++) {
		const struct perf_frame *f = &g_array_index(frames, struct perf_frame, i);
		FUZZ_CHECK(f->pc.len > 0, "a frame without an address");
		check_frame_str(f->pc, s, "pc");
		check_frame_str(f->sym, s, "sym");
		check_frame_str(f->dso, s, "dso");
		check_frame_str(f->srcline, s, "srcline");
	}
	(void)h;
}

/* What a number must stand for: a copy of the text first seen with it. */
static void check_number(GHashTable *seen, uint64_t n, const GString *text,
			 const char *what, uint64_t lineno)
{
	GString *first = g_hash_table_lookup(seen, &n);

	if (!first) {
		uint64_t *k = g_new(uint64_t, 1);
		*k = n;
		g_hash_table_insert(seen, k, g_string_new_len(text->str, (gssize)text->len));
		return;
	}
	FUZZ_CHECK(first->len == text->len && memcmp(first->str, text->str, text->len) == 0,
		   "%s %lu stands for other text at line %lu", what, (unsigned long)n,
		   (unsigned long)lineno);
}

static void free_gstring(gpointer p)
{
	g_string_free(p, TRUE);
}

/* The fields a layout number stands for, one after another. */
static void layout_text(const struct perf_sample *s, GString *t)
{
	const struct fk_str *f[] = { &s->comm, &s->pid, &s->tid, &s->event };

	g_string_truncate(t, 0);
	for (size_t i = 0; i < G_N_ELEMENTS(f); i++) {
		g_string_append_printf(t, "%zu:", f[i]->len);
		g_string_append_len(t, f[i]->s, (gssize)f[i]->len);
	}
	g_string_append_printf(t, "%d:%lu", s->has_period, (unsigned long)s->period);
}

static void check_table(struct fold_table *t)
{
	size_t n;
	struct fold_entry **v = fold_table_sorted(t, &n);
	fk_count sum = 0;

	FUZZ_CHECK(n == fold_table_size(t), "sorted %zu of %zu", n, fold_table_size(t));
	for (size_t i = 0; i < n; i++) {
		struct fold_entry *e = v[i];
		FUZZ_CHECK(e->len > 0, "empty stack");
		FUZZ_CHECK(!memchr(e->stack, '\n', e->len), "newline in a stack");
		FUZZ_CHECK(!fuzz_folded_ambiguous(e->stack, e->len),
			   "a stack the folded format cannot carry: '%s'", e->stack);
		FUZZ_CHECK(e->stack[e->len] == '\0', "stack not NUL-terminated");
		FUZZ_CHECK(fold_table_find(t, e->stack, e->len) == e, "find misses an entry");
		if (i) {
			size_t m = v[i - 1]->len < e->len ? v[i - 1]->len : e->len;
			int c = memcmp(v[i - 1]->stack, e->stack, m);
			FUZZ_CHECK(c < 0 || (c == 0 && v[i - 1]->len < e->len),
				   "entries %zu and %zu out of order or equal", i - 1, i);
		}
		sum += e->count[0];
	}
	FUZZ_CHECK(v[n] == NULL, "sorted array not NULL-terminated");
	FUZZ_CHECK(sum == fold_table_total(t, 0), "entries do not sum to the total");
	g_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_script_opts po;
	struct collapse_opts co = { 0 };
	struct perf_script_reader *r;
	struct collapser *c;
	struct skip_log *skips;
	struct perf_sample s;
	GArray *frames;
	GHashTable *blocks, *layouts;
	GString *text;
	GError *err = NULL;
	char *note, *buf = NULL;
	size_t buflen = 0;
	FILE *out;
	int rc;

	if (size < 1)
		return 0;
	po = (struct perf_script_opts){ .srcline = data[0] & 1, .perl_last = data[0] & 2 };
	co.include_pid = data[0] & 4;
	co.include_tid = data[0] & 8;
	co.names.annotate_kernel = data[0] & 16;
	co.names.annotate_jit = data[0] & 32;
	co.names.include_addrs = data[0] & 64;
	co.event_filter = data[0] & 128 ? "cycles" : NULL;
	co.srcline = po.srcline;
	data++, size--;

	parse_whole((const char *)data, size);

	skips = skip_log_new();
	co.skips = skips;
	frames = g_array_new(FALSE, FALSE, sizeof(struct perf_frame));
	r = perf_script_reader_open(fuzz_file(data, size), &po, skips, &err);
	FUZZ_CHECK(r && !err, "cannot open the memfd");
	c = collapser_new(&co);
	blocks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, free_gstring);
	layouts = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, free_gstring);
	text = g_string_new(NULL);
	while ((rc = perf_script_reader_next(r, &s, &err)) > 0) {
		touch_sample(&s, po.srcline, frames);
		if (s.block) {
			g_string_truncate(text, 0);
			g_string_append_len(text, s.raw.s, (gssize)s.raw.len);
			check_number(blocks, s.block, text, "block", s.lineno);
		}
		if (s.layout) {
			layout_text(&s, text);
			check_number(layouts, s.layout, text, "layout", s.lineno);
		}
		collapser_add(c, &s);
	}
	g_hash_table_destroy(blocks);
	g_hash_table_destroy(layouts);
	g_string_free(text, TRUE);
	g_array_free(frames, TRUE);
	FUZZ_CHECK(rc == 0 || rc == -1, "next returned %d", rc);
	FUZZ_CHECK((rc < 0) == (err != NULL), "rc %d but err %p", rc, (void *)err);
	if (err) {
		FUZZ_CHECK(strncmp(err->message, "/proc/self/fd/", 14) == 0,
			   "error does not name the file: %s", err->message);
		g_clear_error(&err);
	} else {
		FUZZ_CHECK(perf_script_reader_next(r, &s, &err) == 0, "data after the end");
	}
	perf_script_reader_free(r);

	check_table(collapser_table(c));
	out = open_memstream(&buf, &buflen);
	FUZZ_CHECK(fold_table_write(collapser_table(c), out, 1, &err) == 0,
		   "write failed");
	fclose(out);
	{
		size_t lines = 0;
		for (size_t i = 0; i < buflen; i++)
			lines += buf[i] == '\n';
		FUZZ_CHECK(lines == fold_table_size(collapser_table(c)) &&
			   (buflen == 0 || buf[buflen - 1] == '\n'),
			   "%zu output lines for %zu stacks", lines,
			   fold_table_size(collapser_table(c)));
	}
	free(buf);

	if ((note = collapser_event_note(c)))
		g_free(note);
	if ((note = skip_log_summary(skips, NULL)))
		g_free(note);
	collapser_free(c);
	skip_log_free(skips);
	return 0;
}
