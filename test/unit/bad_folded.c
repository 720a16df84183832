/*
 * bad_folded.c - the malformed-input catalogue (docs/bad-input.md) for
 * folded-stack input, through lib/ (folded_reader into a fold_table), as
 * every folded-reading tool uses it.  Each case states the documented
 * outcome: the stacks read, the skips counted by reason, or the error.
 */
#include "bad_check.h"

#include "core/error.h"
#include "core/folded.h"
#include "core/foldtable.h"

#include <string.h>

struct result {
	struct fold_table *t;
	struct skip_log *skips;
	GError *err;		/* the open or read error, or NULL */
	char *path;
};

static void load(struct result *res, const char *path)
{
	struct folded_reader *fr;
	struct folded_line fl;
	int rc;

	res->t = fold_table_new();
	res->skips = skip_log_new();
	res->err = NULL;
	fr = folded_reader_open(path, res->skips, &res->err);
	if (!fr)
		return;
	while ((rc = folded_reader_next(fr, &fl, &res->err)) > 0)
		fold_table_add2(res->t, fl.stack, fl.len, fl.count[0], fl.count[1]);
	folded_reader_free(fr);
}

static void run(struct result *res, const char *data, size_t len)
{
	res->path = bad_tmpfile(data, len);
	load(res, res->path);
}

static void done(struct result *res)
{
	if (res->path) {
		unlink(res->path);
		g_free(res->path);
	}
	fold_table_free(res->t);
	skip_log_free(res->skips);
	g_clear_error(&res->err);
	memset(res, 0, sizeof(*res));
}

#define RUN(res, lit) run(res, lit, sizeof(lit) - 1)

static fk_count count_of(struct result *res, const char *stack, int col)
{
	struct fold_entry *e = fold_table_find(res->t, stack, strlen(stack));
	return e ? e->count[col] : -1;
}

/* The skip summary, "" when nothing was skipped (a static buffer). */
static const char *skips(struct result *res)
{
	static char buf[512];
	char *s = skip_log_summary(res->skips, NULL);

	g_strlcpy(buf, s ? s : "", sizeof(buf));
	g_free(s);
	return buf;
}

/* err's message with the temporary path replaced by "F". */
static const char *errmsg(struct result *res)
{
	static char buf[512];
	const char *m = res->err ? res->err->message : "(no error)";
	size_t pl = res->path ? strlen(res->path) : 0;

	if (pl && strncmp(m, res->path, pl) == 0)
		snprintf(buf, sizeof(buf), "F%s", m + pl);
	else
		g_strlcpy(buf, m, sizeof(buf));
	return buf;
}

#define N(x) fk_count_from_u64(x)

static void test_empty_and_comments(void)
{
	struct result r;

	RUN(&r, "");
	CHECK(!r.err && fold_table_size(r.t) == 0 && !*skips(&r), "empty: %s", skips(&r));
	done(&r);

	RUN(&r, "\n\n  \t\n");
	CHECK(!r.err && fold_table_size(r.t) == 0 && !*skips(&r), "blank lines: %s", skips(&r));
	done(&r);

	RUN(&r, "# a comment\n#another\n# a;b 5\n");
	CHECK(!r.err && fold_table_size(r.t) == 0, "comments gave stacks");
	CHECK(strcmp(skips(&r), "3 lines skipped: 3 comment") == 0, "comments: %s", skips(&r));
	done(&r);
}

static void test_binary(void)
{
	struct result r;
	static const char garbage[] = "\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0";
	static const char nul[] = "a;b 1\na;\0c 2\na;d 3\n";

	run(&r, garbage, sizeof(garbage) - 1);
	CHECK(r.err && r.err->code == FK_ERROR_BINARY, "garbage: %s", errmsg(&r));
	CHECK(strcmp(errmsg(&r), "F:1: NUL byte in line: binary input?") == 0,
	      "garbage: %s", errmsg(&r));
	done(&r);

	run(&r, nul, sizeof(nul) - 1);
	CHECK(strcmp(errmsg(&r), "F:2: NUL byte in line: binary input?") == 0,
	      "NUL in line 2: %s", errmsg(&r));
	CHECK(count_of(&r, "a;b", 0) == N(1) && fold_table_size(r.t) == 1,
	      "the line before the NUL is read, nothing after it");
	done(&r);

	/* garbage without NUL bytes: every line is a counted skip */
	RUN(&r, "\x01\x02\x03\xff\xfe\n\x1b[2J\x1b[H\n\xc3\xa9\xc3\n");
	CHECK(!r.err && fold_table_size(r.t) == 0, "text garbage gave stacks");
	CHECK(strcmp(skips(&r), "3 lines skipped: 3 missing count") == 0,
	      "text garbage: %s", skips(&r));
	done(&r);
}

static void test_big(void)
{
	struct result r;
	GString *s = g_string_new("prog;main;");
	struct fold_entry **v;
	size_t n, semis = 0;

	/* a 1 MiB frame name */
	for (int i = 0; i < 1 << 20; i++)
		g_string_append_c(s, 'x');
	g_string_append(s, " 7\n");
	run(&r, s->str, s->len);
	v = fold_table_sorted(r.t, &n);
	CHECK(!r.err && n == 1 && v[0]->len == 10 + (1u << 20) && v[0]->count[0] == N(7),
	      "1 MiB name: %zu stacks, err %s", n, errmsg(&r));
	g_free(v);
	done(&r);

	/* a 100,000-frame stack */
	g_string_assign(s, "root");
	for (int i = 1; i < 100000; i++)
		g_string_append_printf(s, ";f%d", i);
	g_string_append(s, " 3\n");
	run(&r, s->str, s->len);
	v = fold_table_sorted(r.t, &n);
	if (n == 1)
		for (size_t i = 0; i < v[0]->len; i++)
			semis += v[0]->stack[i] == ';';
	CHECK(!r.err && n == 1 && semis == 99999 && v[0]->count[0] == N(3),
	      "100,000 frames: %zu stacks, %zu separators", n, semis);
	g_free(v);
	done(&r);
	g_string_free(s, TRUE);
}

static void test_bytes(void)
{
	struct result r;

	/* CRLF line ends read as LF ones */
	RUN(&r, "a;b 1\r\na;c 2\r\n\r\na;b 4\r\n");
	CHECK(!r.err && !*skips(&r) && fold_table_size(r.t) == 2, "CRLF: %s", skips(&r));
	CHECK(count_of(&r, "a;b", 0) == N(5) && count_of(&r, "a;c", 0) == N(2), "CRLF counts");
	done(&r);
	RUN(&r, "a;c 2 3\r\na;c 1 1\r\n");
	CHECK(!r.err && !*skips(&r) && count_of(&r, "a;c", 1) == N(4), "CRLF differential");
	done(&r);

	/* invalid UTF-8 and control characters are kept byte for byte */
	RUN(&r, "pr\xff" "og;\xc0\xaf;\xed\xa0\x80 1\n"
		"a;\x1b[31mred\x1b[0m;\x01\x07\x7f\x0b\x0c;cr\rmid 2\n");
	CHECK(!r.err && !*skips(&r) && fold_table_size(r.t) == 2, "bytes: %s", skips(&r));
	CHECK(count_of(&r, "pr\xff" "og;\xc0\xaf;\xed\xa0\x80", 0) == N(1), "invalid UTF-8 kept");
	CHECK(count_of(&r, "a;\x1b[31mred\x1b[0m;\x01\x07\x7f\x0b\x0c;cr\rmid", 0) == N(2),
	      "control characters kept");
	done(&r);
}

static void test_counts(void)
{
	struct result r;

	RUN(&r, "max 18446744073709551615\nover 18446744073709551616\n"
		"far 99999999999999999999999\nneg -1\ndiffneg 1 -2\n"
		"missing\nonly  \n   42\nx 12x\ny 12 x\nz 1e3\nw 0x10\n"
		"fine 0.000000001\ntoo 0.0000000001\nplus +5\ndot .\n");
	CHECK(!r.err, "counts: %s", errmsg(&r));
	CHECK(count_of(&r, "max", 0) == N(UINT64_MAX), "2^64-1 is read");
	CHECK(count_of(&r, "fine", 0) == 1, "1e-9 is read");
	CHECK(count_of(&r, "plus", 0) == N(5), "+5 is read");
	CHECK(count_of(&r, "too", 0) == 0, "1e-10 rounds to 0");
	CHECK(fold_table_size(r.t) == 4, "%zu stacks", fold_table_size(r.t));
	CHECK(strcmp(skips(&r), "12 lines skipped: 2 count above 2^64-1, 2 negative count, "
			 "2 missing count, 1 missing stack, 5 count is not a number") == 0,
	      "counts: %s", skips(&r));
	done(&r);

	/* two counts: differential; a negative first one is part of the stack */
	RUN(&r, "a;b 1 2\na;b 3 4\n");
	CHECK(count_of(&r, "a;b", 0) == N(4) && count_of(&r, "a;b", 1) == N(6), "differential sums");
	done(&r);
	RUN(&r, "c;d -1 2\n");
	CHECK(count_of(&r, "c;d -1", 0) == N(2), "'c;d -1 2' is stack 'c;d -1', as flamegraph.pl reads it");
	done(&r);

	/* no line switches a profile's shape: the first line decides, lines
	 * of the other shape are counted skips */
	RUN(&r, "p;main;a 5\np;main;evil 1 16016016\np;main;b 7\n");
	CHECK(fold_table_size(r.t) == 2 && count_of(&r, "p;main;b", 0) == N(7) &&
	      count_of(&r, "p;main;b", 1) == 0, "plain profile: %zu stacks", fold_table_size(r.t));
	CHECK(strcmp(skips(&r), "1 line skipped: 1 two counts in a profile of one-count lines") == 0,
	      "mixed: %s", skips(&r));
	done(&r);
	RUN(&r, "a;b 1 2\nc 3\nd 4\na;b 5 6\n");
	CHECK(fold_table_size(r.t) == 1 && count_of(&r, "a;b", 1) == N(8), "differential profile");
	CHECK(strcmp(skips(&r), "2 lines skipped: 2 one count in a differential profile") == 0,
	      "mixed: %s", skips(&r));
	done(&r);
}

static void test_truncated(void)
{
	struct result r;

	/* cut inside the stack: the last line has no count, a counted skip */
	RUN(&r, "a;b 1\na;c;d");
	CHECK(!r.err && fold_table_size(r.t) == 1, "cut in the stack");
	CHECK(strcmp(skips(&r), "1 line skipped: 1 missing count") == 0, "cut: %s", skips(&r));
	done(&r);

	/*
	 * cut inside the count: indistinguishable from a file without a final
	 * newline, so the line is read (docs/bad-input.md says so)
	 */
	RUN(&r, "a;b 1\na;c 12");
	CHECK(!r.err && count_of(&r, "a;c", 0) == N(12) && !*skips(&r), "cut in the count");
	done(&r);
}

static void test_files(void)
{
	struct result r = { 0 };

	load(&r, "/");
	CHECK(r.err && strcmp(r.err->message, "/: is a directory") == 0, "dir: %s", errmsg(&r));
	done(&r);

	load(&r, "/nonexistent/foldkit-bad-input");
	CHECK(r.err && strcmp(r.err->message, "/nonexistent/foldkit-bad-input: cannot open: "
			      "No such file or directory") == 0, "missing: %s", errmsg(&r));
	done(&r);

	/* opens, then every read fails: address 0 is not mapped */
	load(&r, "/proc/self/mem");
	CHECK(r.err && r.err->code == FK_ERROR_IO &&
	      strcmp(r.err->message, "/proc/self/mem: read error: Input/output error") == 0,
	      "unreadable: %s", errmsg(&r));
	done(&r);
}

/* folded_parse() on its own, for callers that split lines themselves. */
static void test_parse(void)
{
	struct folded_line fl;
	const char buf[] = "   ";

	/* found by fuzz/folded.c: len 0 read s[0] */
	CHECK(strcmp(folded_parse(buf, 0, &fl), "blank line") == 0, "len 0");
	CHECK(strcmp(folded_parse(buf, 3, &fl), "blank line") == 0, "blanks");
	CHECK(strcmp(folded_parse("  5", 3, &fl), "missing stack") == 0, "indented count");
	CHECK(strcmp(folded_parse("5", 1, &fl), "missing stack") == 0, "count alone");
	CHECK(strcmp(folded_parse("a;b", 3, &fl), "missing count") == 0, "stack alone");
	CHECK(folded_parse("a;b\t2", 5, &fl) == NULL && fl.len == 3, "tab separator");
}

/*
 * folded_parse() reads the usual line ("STACK COUNT") by a shortcut; a
 * blank after the count sends the same line down the general path.  On
 * random lines (counts of 1 to 20 digits, leading zeros, digits, dots and
 * blanks before them, a second count) both must give the same stack,
 * counts or reason.
 */
static void test_parse_fast(void)
{
	static const char alpha[] = "ab;;  \t..0123456789x[k]_";
	GRand *rnd = g_rand_new_with_seed(16);
	char line[80];
	int bad = 0, fast = 0;

	for (int i = 0; i < 200000; i++) {
		struct folded_line a, b;
		size_t n = 0, stack = (size_t)g_rand_int_range(rnd, 0, 30);
		int digits = g_rand_int_range(rnd, 1, 21);
		const char *wa, *wb;

		for (size_t j = 0; j < stack; j++)
			line[n++] = alpha[g_rand_int_range(rnd, 0, (int)sizeof(alpha) - 1)];
		if (g_rand_int_range(rnd, 0, 8))
			line[n++] = g_rand_int_range(rnd, 0, 4) ? ' ' : '\t';
		for (int j = 0; j < digits; j++)
			line[n++] = (char)('0' + (g_rand_int_range(rnd, 0, 3) ? g_rand_int_range(rnd, 0, 10) : 0));
		line[n] = ' ';
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		wa = folded_parse(line, n, &a);
		wb = folded_parse(line, n + 1, &b);
		fast += !wa;
		if ((wa == NULL) != (wb == NULL) || (wa && strcmp(wa, wb) != 0) ||
		    (!wa && (a.len != b.len || a.ncounts != b.ncounts || a.count[0] != b.count[0] ||
			     a.count[1] != b.count[1]))) {
			if (bad++ < 5)
				fprintf(stderr, "'%.*s': %s len %zu, with a blank after it: %s len %zu\n",
					(int)n, line, wa ? wa : "ok", a.len, wb ? wb : "ok", b.len);
		}
	}
	CHECK(bad == 0, "%d lines parsed differently", bad);
	CHECK(fast > 50000, "only %d lines parsed", fast);
	g_rand_free(rnd);
}

/* Reads each file in turn through one shared shape; returns the lines read. */
static int read_shared(struct folded_shape *sh, char **paths, int n)
{
	int lines = 0;

	for (int i = 0; i < n; i++) {
		struct folded_reader *fr = folded_reader_open(paths[i], NULL, NULL);
		struct folded_line fl;

		folded_reader_set_shape(fr, sh);
		while (folded_reader_next(fr, &fl, NULL) > 0)
			lines++;
		folded_reader_free(fr);
	}
	return lines;
}

/* The files of one profile share a shape; the note names both places. */
static void test_shape(void)
{
	char *p[2] = { bad_tmpfile("a 1\nb 2\n", 8), bad_tmpfile("c 3\nevil 1 4\nd 1 2\n", 19) };
	struct folded_shape sh = FOLDED_SHAPE_INIT, plain = { .ncounts = 1 };
	char *note, *want;

	CHECK(read_shared(&sh, p, 2) == 3 && sh.ncounts == 1 && sh.odd == 2, "shared: %d odd",
	      (int)sh.odd);
	note = folded_shape_note(&sh);
	want = g_strdup_printf("%s:2: two counts, but %s:1 has one: one-count and two-count "
			       "(differential) lines do not mix; 2 such lines skipped", p[1], p[0]);
	CHECK(note && strcmp(note, want) == 0, "note: %s", note ? note : "(none)");
	g_free(note);
	g_free(want);
	folded_shape_release(&sh);
	CHECK(folded_shape_note(&sh) == NULL, "released");

	/* preset, as fold-diff reads: the first file's lines all fit */
	CHECK(read_shared(&plain, p, 1) == 2 && folded_shape_note(&plain) == NULL, "preset");
	CHECK(read_shared(&plain, p + 1, 1) == 1 && plain.odd == 2, "preset odd");
	note = folded_shape_note(&plain);
	CHECK(note && strstr(note, ":2: two counts where only lines of one count are read; "
			     "2 such lines skipped"), "preset note: %s", note ? note : "(none)");
	g_free(note);
	folded_shape_release(&plain);
	for (int i = 0; i < 2; i++) {
		unlink(p[i]);
		g_free(p[i]);
	}
}

int main(void)
{
	test_empty_and_comments();
	test_binary();
	test_big();
	test_bytes();
	test_counts();
	test_truncated();
	test_files();
	test_parse();
	test_parse_fast();
	test_shape();
	return bad_done();
}
