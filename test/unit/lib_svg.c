/*
 * lib_svg - unit tests for fold2svg's library: UTF-8 decoding and the XML,
 * script and comment escapers, the drand48 generator (against libc's),
 * count and percentage formatting, the flame graph model (every path it
 * takes must draw the same frames), the mapped folded reader and the
 * table's by-reference keys it relies on, and the option checks.
 */
#include "check.h"
#include "render/flamegraph.h"
#include "core/folded.h"
#include "core/foldtable.h"
#include "render/palette.h"
#include "render/svgargs.h"
#include "render/svgwriter.h"
#include "render/xmlesc.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *esc(size_t (*f)(char *, const char *, size_t), const char *s)
{
	static char buf[256];

	buf[f(buf, s, strlen(s))] = 0;
	return buf;
}

static void test_utf8(void)
{
	static const struct { const char *s; uint32_t c; size_t adv; } cases[] = {
		{ "A", 'A', 1 },
		{ "\xc3\xa9", 0xe9, 2 },
		{ "\xe2\x82\xac", 0x20ac, 3 },
		{ "\xf0\x9f\x94\xa5", 0x1f525, 4 },
		{ "\xc0\x80", UTF8_REPLACEMENT, 1 },		/* overlong NUL */
		{ "\xe0\x80\xaf", UTF8_REPLACEMENT, 1 },	/* overlong '/' */
		{ "\xed\xa0\x80", UTF8_REPLACEMENT, 1 },	/* surrogate */
		{ "\xf4\x90\x80\x80", UTF8_REPLACEMENT, 1 },	/* past U+10FFFF */
		{ "\xe2\x82", UTF8_REPLACEMENT, 1 },		/* truncated */
		{ "\x80", UTF8_REPLACEMENT, 1 },		/* lone continuation */
		{ "\xff", UTF8_REPLACEMENT, 1 },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t i = 0;

		CHECK(utf8_next(cases[k].s, strlen(cases[k].s), &i) == cases[k].c);
		CHECK(i == cases[k].adv);
	}
	CHECK(utf8_length("a\xc3\xa9\xff" "b", 5) == 4);
	CHECK(utf8_offset("a\xc3\xa9" "b", 4, 2) == 3);
}

static void test_escape(void)
{
	CHECK_STR(esc(xml_escape, "<a href='x'>&\"</a>"),
		  "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
	/* controls, DEL and invalid bytes become U+FFFD; U+2028 stays */
	CHECK_STR(esc(xml_escape, "a\tb\x01\x7f\xff\xe2\x80\xa8"),
		  "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xe2\x80\xa8");
	CHECK_STR(esc(xml_escape, "]]>"), "]]&gt;");
	CHECK_STR(esc(js_escape, "</script>\"\\\n\xe2\x80\xa8\xff&'"),
		  "\\u003c/script\\u003e\\\"\\\\\\ufffd\\u2028\\ufffd\\u0026\\u0027");
	CHECK_STR(esc(xml_comment_escape, "a--b-"), "a- -b- ");
	CHECK_STR(esc(xml_comment_escape, "x-->"), "x- -&gt;");
	/* for documents declared in another encoding: ASCII only */
	CHECK_STR(esc(xml_escape_ascii, "caf\xc3\xa9 \xf0\x9f\x94\xa5\xff<"),
		  "caf&#xE9; &#x1F525;&#xFFFD;&lt;");
	CHECK_STR(esc(js_escape_ascii, "\xc3\xa9\xf0\x9f\x94\xa5"), "\\u00e9\\ud83d\\udd25");
	CHECK_STR(esc(xml_comment_escape_ascii, "\xc3\xa9--"), "?- - ");
}

static void test_rand48(void)
{
	static const uint32_t seeds[] = { 0, 1, 42, 5394, 65535, 4000000000u };

	for (size_t k = 0; k < sizeof(seeds) / sizeof(seeds[0]); k++) {
		struct rand48 r;

		rand48_seed(&r, seeds[k]);
		srand48((long)seeds[k]);
		for (int i = 0; i < 5; i++)
			CHECK(rand48_next(&r) == drand48());
	}
}

static const char *count(fk_count c, fk_count factor)
{
	static char buf[FK_COUNT_BUFSZ * 2];

	buf[svg_format_count(c, factor, buf)] = 0;
	return buf;
}

static const char *pct(uint64_t part, uint64_t whole)
{
	static char buf[64];

	buf[svg_format_pct(fk_count_from_u64(part), fk_count_from_u64(whole), buf)] = 0;
	return buf;
}

static void test_numbers(void)
{
	fk_count half;

	CHECK_STR(count(fk_count_from_u64(1234567), FK_COUNT_ONE), "1,234,567");
	CHECK_STR(count(fk_count_from_u64(999), FK_COUNT_ONE), "999");
	CHECK_STR(count(fk_count_from_u64(UINT64_MAX), FK_COUNT_ONE),
		  "18,446,744,073,709,551,615");
	CHECK(fk_count_parse("0.5", 3, &half) == FK_COUNT_OK);
	CHECK_STR(count(fk_count_from_u64(1234) + half, FK_COUNT_ONE), "1,234.5");
	CHECK_STR(count(fk_count_from_u64(3), half), "1.5");
	CHECK_STR(pct(1, 3), "33.33");
	CHECK_STR(pct(2, 3), "66.67");
	CHECK_STR(pct(1, 800), "0.12");		/* 0.125: ties to even */
	CHECK_STR(pct(3, 800), "0.38");		/* 0.375 */
	CHECK_STR(pct(5, 5), "100.00");
}

static void test_model(void)
{
	struct fg_opts o = FG_OPTS_INIT;
	struct flamegraph *fg = fg_new(&o);
	static const char *const want[] = { "", "main", "idle", "work", "inner" };
	static const uint32_t depth[] = { 0, 1, 2, 2, 3 };
	/* a frame's own samples come before its children's (shorter sorts first) */
	static const uint64_t start[] = { 0, 0, 0, 1, 4 }, end[] = { 6, 6, 1, 6, 6 };
	GError *err = NULL;

	/* out of order and repeated: aggregated, then walked sorted */
	fg_add(fg, "main;work;inner", 15, fk_count_from_u64(2), 0, 1);
	fg_add(fg, "main;work", 9, fk_count_from_u64(3), 0, 1);
	fg_add(fg, "main;idle", 9, fk_count_from_u64(1), 0, 1);
	CHECK(fg_build(fg, &err) == 0);
	CHECK(fg_nframes(fg) == 5);
	for (size_t i = 0; i < fg_nframes(fg) && i < 5; i++) {
		const struct fg_frame *f = fg_frame(fg, i);

		CHECK(f->len == strlen(want[i]) && memcmp(f->name, want[i], f->len) == 0);
		CHECK(f->depth == depth[i]);
		CHECK(f->start == fk_count_from_u64(start[i]));
		CHECK(f->end == fk_count_from_u64(end[i]));
	}
	CHECK(fg_depthmax(fg) == 3);
	fg_free(fg);

	fg = fg_new(&o);
	CHECK(fg_build(fg, &err) < 0 && err && strstr(err->message, "no stack counts"));
	g_clear_error(&err);
	fg_free(fg);
}

/* A deterministic generator, so failures reproduce. */
static uint32_t lcg(uint32_t *st)
{
	*st = *st * 1103515245u + 12345u;
	return *st >> 8;
}

/*
 * Stacks whose frames are prefixes of one another and hold bytes below
 * ';' ('0', ' ', '('), so bytewise order differs from frame-wise order,
 * and empty frames, which flamegraph.pl drops at the end of a stack.
 */
static GPtrArray *make_stacks(void)
{
	static const char *const fr[] = { "a", "a0", "a b", "ab", "", "(x)", "z" };
	GPtrArray *v = g_ptr_array_new_with_free_func(g_free);
	uint32_t st = 7;

	for (int i = 0; i < 400; i++) {
		GString *s = g_string_new(fr[lcg(&st) % 6 + (i & 1)]);
		int depth = (int)(lcg(&st) % 6);

		for (int d = 0; d < depth; d++) {
			g_string_append_c(s, ';');
			g_string_append(s, fr[lcg(&st) % 7]);
		}
		g_ptr_array_add(v, g_string_free(s, FALSE));
	}
	return v;
}

static int cmp_str(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Checks that a and b hold the same frames, deltas and scale. */
static void same_graph(struct flamegraph *a, struct flamegraph *b)
{
	CHECK(fg_nframes(a) == fg_nframes(b));
	CHECK(fg_sum(a) == fg_sum(b));
	CHECK(fg_maxdelta(a) == fg_maxdelta(b));
	CHECK(fg_depthmax(a) == fg_depthmax(b));
	for (size_t i = 0; i < fg_nframes(a) && i < fg_nframes(b); i++) {
		const struct fg_frame *x = fg_frame(a, i), *y = fg_frame(b, i);

		if (x->len != y->len || memcmp(x->name, y->name, x->len) != 0 ||
		    x->depth != y->depth || x->start != y->start ||
		    x->end != y->end || x->delta != y->delta) {
			CHECK(!"frames differ");
			fprintf(stderr, "  frame %zu: '%.*s' vs '%.*s'\n", i,
				(int)x->len, x->name, (int)y->len, y->name);
			break;
		}
	}
}

/*
 * The same lines in sorted order (merged as read), shuffled (the table
 * and the sort), shuffled by reference (sorted references), and repeated
 * past the point where references are compacted, draw the same graph.
 */
static void test_paths(void)
{
	GPtrArray *v = make_stacks();
	struct fg_opts o = FG_OPTS_INIT;
	GError *err = NULL;
	uint32_t st = 3;
	struct flamegraph *g[5];
	size_t n = v->len;
	char *s;

	o.minwidth = 0;
	for (int k = 0; k < 5; k++)
		g[k] = fg_new(&o);
	/* shuffled, with stack i counted (i % 5 + 1, i % 3) in all */
	for (size_t i = 0; i < n; i++) {
		s = g_ptr_array_index(v, i);
		fg_add(g[1], s, strlen(s), fk_count_from_u64(i % 5 + 1),
		       fk_count_from_u64(i % 3), 2);
		fg_add_ref(g[2], s, strlen(s), fk_count_from_u64(i % 5 + 1),
			   fk_count_from_u64(i % 3), 2);
	}
	/* 70000 lines, each count split in two: past the 64Ki compaction */
	for (size_t r = 0; r < 70000; r++) {
		size_t i = lcg(&st) % n;

		s = g_ptr_array_index(v, i);
		fg_add_ref(g[3], s, strlen(s), 0, 0, 2);
	}
	for (size_t i = 0; i < n; i++) {
		s = g_ptr_array_index(v, i);
		fg_add_ref(g[3], s, strlen(s), fk_count_from_u64(i % 5 + 1), 0, 2);
		fg_add_ref(g[3], s, strlen(s), 0, fk_count_from_u64(i % 3), 2);
	}
	/* sorted: the same stack (equal strings) sums as it comes */
	GPtrArray *sorted = g_ptr_array_sized_new((guint)n);
	for (size_t i = 0; i < n; i++)	/* not a copy: that frees twice */
		g_ptr_array_add(sorted, g_ptr_array_index(v, i));
	g_ptr_array_sort(sorted, cmp_str);
	for (size_t i = 0; i < n; i++) {
		s = g_ptr_array_index(sorted, i);
		for (size_t j = 0; j < n; j++)
			if (g_ptr_array_index(v, j) == s) {
				fg_add(g[0], s, strlen(s), fk_count_from_u64(j % 5 + 1),
				       fk_count_from_u64(j % 3), 2);
				/* mapped then streamed: references, then the table */
				if (i < n / 2)
					fg_add_ref(g[4], s, strlen(s),
						   fk_count_from_u64(j % 5 + 1),
						   fk_count_from_u64(j % 3), 2);
				else
					fg_add(g[4], s, strlen(s),
					       fk_count_from_u64(j % 5 + 1),
					       fk_count_from_u64(j % 3), 2);
			}
	}
	for (int k = 0; k < 5; k++) {
		CHECK(fg_build(g[k], &err) == 0);
		g_clear_error(&err);
	}
	CHECK(fg_nframes(g[0]) > 100);
	for (int k = 1; k < 5; k++)
		same_graph(g[0], g[k]);
	for (int k = 0; k < 5; k++)
		fg_free(g[k]);
	g_ptr_array_free(sorted, TRUE);
	g_ptr_array_free(v, TRUE);
}

/* Sorts stack indices by their stacks, for test_prune(). */
static int cmp_index(const void *a, const void *b, void *data)
{
	char **s = data;

	return strcmp(s[*(const size_t *)a], s[*(const size_t *)b]);
}

/*
 * Frames too narrow to draw are dropped, and the sort of unsorted input
 * skips ordering a group of stacks that shares a prefix and weighs less
 * than a frame drawn: the sorted input (no sort) and every unsorted path
 * must still draw the same frames, whatever the minimum width.
 */
static void test_prune(void)
{
	static const char *const fr[] = {
		"a", "a0", "", "(x)", "process_main_loop", "run_worker_thread",
		"run_worker_thread_inner", "zz;",
	};
	enum { N = 3000 };
	static const double minwidth[] = { 0.1, 0.5, 2, 7, 40, 0.3 };
	char **s = g_new(char *, N);
	uint64_t *c = g_new(uint64_t, N);
	size_t *ord = g_new(size_t, N);
	uint32_t st = 11;
	GError *err = NULL;

	for (size_t i = 0; i < N; i++) {
		GString *b = g_string_new(fr[4 + lcg(&st) % 2]);
		int depth = (int)(lcg(&st) % 12);

		for (int d = 0; d < depth; d++) {
			g_string_append_c(b, ';');
			g_string_append(b, fr[lcg(&st) % 8]);
		}
		s[i] = g_string_free(b, FALSE);
		/* mostly light stacks, a few heavy ones, some of nothing */
		c[i] = lcg(&st) % 50 == 0 ? 400 + lcg(&st) % 1000 : lcg(&st) % 4;
		ord[i] = i;
	}
	g_qsort_with_data(ord, N, sizeof(*ord), cmp_index, s);
	for (size_t m = 0; m < G_N_ELEMENTS(minwidth); m++) {
		struct fg_opts o = FG_OPTS_INIT;
		struct flamegraph *g[4];
		uint32_t r = 5;

		o.minwidth = minwidth[m];
		o.minwidth_pct = m == G_N_ELEMENTS(minwidth) - 1;
		for (int k = 0; k < 4; k++)
			g[k] = fg_new(&o);
		for (size_t i = 0; i < N; i++) {
			fg_add(g[0], s[ord[i]], strlen(s[ord[i]]),
			       fk_count_from_u64(c[ord[i]]), 0, 1);
			fg_add(g[1], s[i], strlen(s[i]), fk_count_from_u64(c[i]), 0, 1);
			fg_add_ref(g[2], s[i], strlen(s[i]), fk_count_from_u64(c[i]), 0, 1);
		}
		/* past the 64Ki compaction, then the counts */
		for (size_t i = 0; i < 70000; i++) {
			size_t j = lcg(&r) % N;

			fg_add_ref(g[3], s[j], strlen(s[j]), 0, 0, 1);
		}
		for (size_t i = 0; i < N; i++)
			fg_add_ref(g[3], s[i], strlen(s[i]), fk_count_from_u64(c[i]), 0, 1);
		for (int k = 0; k < 4; k++) {
			CHECK(fg_build(g[k], &err) == 0);
			g_clear_error(&err);
		}
		CHECK(fg_nframes(g[0]) > 10);
		for (int k = 1; k < 4; k++)
			same_graph(g[0], g[k]);
		for (int k = 0; k < 4; k++)
			fg_free(g[k]);
	}
	for (size_t i = 0; i < N; i++)
		g_free(s[i]);
	g_free(s);
	g_free(c);
	g_free(ord);
}

static char *write_temp(const char *data, size_t len)
{
	char *path = g_strdup("/tmp/lib_svg-XXXXXX");
	int fd = g_mkstemp(path);

	CHECK(fd >= 0 && write(fd, data, len) == (ssize_t)len);
	close(fd);
	return path;
}

/* Reads path both ways; returns the mapped reader's lines as "N:stack c\n". */
static char *read_both(const char *path, bool empty, char **error)
{
	GString *out[2] = { g_string_new(NULL), g_string_new(NULL) };
	char *errs[2] = { NULL, NULL };

	for (int k = 0; k < 2; k++) {
		struct skip_log *skips = skip_log_new();
		GError *err = NULL;
		struct folded_reader *r = k ? folded_reader_open(path, skips, &err)
					    : folded_reader_open_mapped(path, skips, &err);
		struct folded_line fl;
		char buf[FK_COUNT_BUFSZ];
		int rc;

		/* an empty file is read as a stream: /proc files say 0 bytes */
		CHECK(r && folded_reader_stable(r) == (!k && !empty));
		while ((rc = folded_reader_next(r, &fl, &err)) > 0) {
			buf[fk_count_format(fl.count[0], buf)] = 0;
			g_string_append_printf(out[k], "%" G_GUINT64_FORMAT ":%.*s %s\n",
					       fl.lineno, (int)fl.len, fl.stack, buf);
		}
		/* after an error the streaming reader has read a block */
		g_string_append_printf(out[k], "skips %" G_GUINT64_FORMAT " bytes %" G_GUINT64_FORMAT "\n",
				       skip_log_total(skips),
				       rc < 0 ? 0 : folded_reader_bytes(r));
		errs[k] = rc < 0 ? g_strdup(err->message) : g_strdup("");
		g_clear_error(&err);
		folded_reader_free(r);
		skip_log_free(skips);
	}
	CHECK_STR(out[0]->str, out[1]->str);
	CHECK_STR(errs[0], errs[1]);
	*error = errs[0];
	g_free(errs[1]);
	g_string_free(out[1], TRUE);
	return g_string_free(out[0], FALSE);
}

static gpointer fifo_writer(gpointer path)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs("a;b 5\n", f);
		fclose(f);
	}
	return NULL;
}

/* The mapped reader returns what the streaming one does, and keeps it. */
static void test_mapped(void)
{
	static const struct { const char *data, *want, *err; } cases[] = {
		{ "a;b 1\r\nnot folded\n\n  \nc 2", "1:a;b 1\n5:c 2\nskips 1 bytes 25\n", "" },
		{ "a 1\nb\0 2\nc 3\n", "1:a 1\nskips 0 bytes 0\n", "NUL byte in line" },
		{ "", "skips 0 bytes 0\n", "" },
	};
	struct skip_log *skips = skip_log_new();
	GError *err = NULL;
	char *e, *got, *path;

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		/* the NUL case is 14 bytes long */
		path = write_temp(cases[i].data, i == 1 ? 14 : strlen(cases[i].data));
		got = read_both(path, i == 2, &e);
		CHECK_STR(got, cases[i].want);
		CHECK(strstr(e, cases[i].err) != NULL);
		if (i == 1)
			CHECK(strstr(e, ":2:") != NULL);
		g_free(got);
		g_free(e);
		unlink(path);
		g_free(path);
	}

	/* a last line without '\n' ending exactly at a page end, and one
	 * whose '\n' is the page's last byte */
	for (int nl = 0; nl < 2; nl++) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		char *data = g_malloc(page);

		memset(data, 'x', page);
		memcpy(data, "a;b 1\n", 6);
		memcpy(data + page - 2 - nl, " 7\n", 2 + (size_t)nl);
		path = write_temp(data, page);
		got = read_both(path, false, &e);
		CHECK(g_str_has_prefix(got, "1:a;b 1\n2:xxx"));
		CHECK(strstr(got, "x 7\nskips 0") != NULL);
		CHECK_STR(e, "");
		g_free(got);
		g_free(e);
		g_free(data);
		unlink(path);
		g_free(path);
	}

	/* a FIFO is read as a stream, from the one open: its data would be
	 * lost if it were closed and opened again */
	path = g_strdup("/tmp/lib_svg-fifo-XXXXXX");
	CHECK(g_mkdtemp(path) != NULL);
	char *fifo = g_build_filename(path, "f", NULL);
	CHECK(mkfifo(fifo, 0600) == 0);
	GThread *th = g_thread_new("writer", fifo_writer, fifo);
	struct folded_reader *r = folded_reader_open_mapped(fifo, skips, &err);
	struct folded_line fl;

	CHECK(r && !folded_reader_stable(r));
	CHECK(r && folded_reader_next(r, &fl, &err) == 1 && fl.len == 3 &&
	      memcmp(fl.stack, "a;b", 3) == 0 && fl.count[0] == fk_count_from_u64(5));
	CHECK(r && folded_reader_next(r, &fl, &err) == 0);
	folded_reader_free(r);
	g_thread_join(th);
	unlink(fifo);
	rmdir(path);
	g_free(fifo);
	g_free(path);

	/* stdin cannot be mapped: read as a stream */
	r = folded_reader_open_mapped("-", skips, &err);
	CHECK(r && !folded_reader_stable(r));
	folded_reader_free(r);
	r = folded_reader_open_mapped("/nonexistent/x", skips, &err);
	CHECK(!r && err && strstr(err->message, "/nonexistent/x: cannot open"));
	g_clear_error(&err);
	r = folded_reader_open_mapped("/tmp", skips, &err);
	CHECK(!r && err && strstr(err->message, "/tmp: is a directory"));
	g_clear_error(&err);
	skip_log_free(skips);
}

/* Keys by reference: the entry points at the caller's bytes. */
static void test_table_ref(void)
{
	struct fold_table *t = fold_table_new();
	const char buf[] = "main;work main;idle";
	struct fold_entry *e = fold_table_add2_ref(t, buf, 9, fk_count_from_u64(2), 1);

	CHECK(e->stack == buf && e->len == 9);
	CHECK(fold_table_add2(t, "main;work", 9, fk_count_from_u64(3), 0) == e);
	CHECK(e->count[0] == fk_count_from_u64(5) && e->count[1] == 1);
	e = fold_table_add2(t, "main;idle", 9, 1, 0);
	CHECK(e->stack != buf + 10 && e->stack[9] == '\0');	/* a copy */
	CHECK(fold_table_add2_ref(t, buf + 10, 9, 1, 0) == e && e->count[0] == 2);
	CHECK(fold_table_size(t) == 2 && fold_table_total(t, 0) == fk_count_from_u64(5) + 2);
	fold_table_free(t);
}

/* Option values are checked with the messages main() prints. */
static void test_args(void)
{
	static const struct { const char *minwidth, *factor, *colors, *encoding, *err; } cases[] = {
		{ "0.1", NULL, "hot", NULL, NULL },
		{ "5%", "2", "java", "latin1", NULL },
		{ "x", NULL, "hot", NULL, "--minwidth: 'x' is not a width" },
		{ "1", "0", "hot", NULL, "--factor must be positive" },
		{ "1", NULL, "pink", NULL, "--colors: unknown palette 'pink'" },
		{ "1", NULL, "hot", "utf-16", "--encoding: 'utf-16' is not UTF-8" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct svg_args a = SVG_ARGS_INIT;
		struct fg_opts fo = FG_OPTS_INIT;
		struct svg_opts so = SVG_OPTS_INIT;
		GError *err = NULL;
		int rc;

		CHECK(svg_args_entries(&a)[2].arg_data == &a.width);
		a.minwidth = (char *)cases[i].minwidth;
		a.factor = (char *)cases[i].factor;
		a.colors = (char *)cases[i].colors;
		a.encoding = (char *)cases[i].encoding;
		rc = svg_args_apply(&a, &fo, &so, &err);
		if (!cases[i].err) {
			CHECK(rc == 0 && !err);
		} else {
			CHECK(rc < 0 && err && g_str_has_prefix(err->message, cases[i].err));
		}
		if (i == 1)
			CHECK(fo.minwidth_pct && fo.minwidth == 5 &&
			      so.factor == fk_count_from_u64(2) && so.palette == PAL_JAVA);
		g_clear_error(&err);
	}
}

int main(void)
{
	test_utf8();
	test_escape();
	test_rand48();
	test_numbers();
	test_model();
	test_paths();
	test_prune();
	test_mapped();
	test_table_ref();
	test_args();
	return CHECK_DONE();
}
