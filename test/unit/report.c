/*
 * Unit tests for lib/report/: frame classes, categories files, exact
 * shares, the profile's counts, and the escaping of hostile names in both
 * outputs.  Exit 0 when all pass; each failure prints the expression.
 */
#include "report/classify.h"
#include "report/categories.h"
#include "report/model.h"
#include "report/profile.h"
#include "report/report.h"

#include "check.h"

#include <stdlib.h>
#include <unistd.h>

static fk_count n(uint64_t v)
{
	return fk_count_from_u64(v);
}

static void test_base(void)
{
	static const char *const cases[][2] = {
		{ "__GI___pthread_mutex_lock@GLIBC_2.2.5", "pthread_mutex_lock" },
		{ "finish_task_switch.isra.0", "finish_task_switch" },
		{ "do_syscall_64_[k]", "do_syscall_64" },
		{ "_start", "start" },
		{ "pthread_cond_broadcast@@GLIBC_2.3.2", "pthread_cond_broadcast" },
		{ "foo.constprop.0.cold", "foo" },
		{ "runtime.goexit.abi0", "runtime.goexit.abi0" },
		{ "___", "" },
		{ "", "" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		const char *b;
		size_t len;
		char buf[64];

		frame_name_base(cases[i][0], strlen(cases[i][0]), &b, &len);
		snprintf(buf, sizeof(buf), "%.*s", (int)len, b);
		CHECK_STR(buf, cases[i][1]);
	}
}

static void test_classify(void)
{
	struct frame_classifier *fc = frame_classifier_new();
	static const struct { const char *name; unsigned want, not; } cases[] = {
		{ "[unknown]", FRAME_UNRESOLVED, 0 },
		{ "[libstdc++.so.6.0.30]", FRAME_UNRESOLVED, 0 },
		{ "[[kernel.kallsyms]]", FRAME_UNRESOLVED, 0 },
		{ "[libc.so.6 <7f12ab>]", FRAME_UNRESOLVED, 0 },
		{ "[kernel]", 0, FRAME_UNRESOLVED },
		{ "[[vdso]]", FRAME_UNRESOLVED | FRAME_VDSO, 0 },
		{ "__vdso_clock_gettime", FRAME_VDSO, FRAME_UNRESOLVED },
		{ "main", 0, FRAME_ENTRY },
		{ "_start", FRAME_ENTRY, 0 },
		{ "__libc_start_call_main", FRAME_ENTRY, 0 },
		{ "start_thread", FRAME_ENTRY, 0 },
		{ "__GI___clone3", FRAME_ENTRY, 0 },
		{ "ret_from_fork_asm_[k]", FRAME_ENTRY, 0 },
		{ "__GI___lll_lock_wait", FRAME_LOCK_WAIT, 0 },
		{ "___pthread_mutex_lock", FRAME_LOCK_WAIT, 0 },
		{ "futex_wait", FRAME_LOCK_WAIT, 0 },
		{ "std::mutex::lock", FRAME_LOCK_WAIT, 0 },
		{ "std::condition_variable::wait", FRAME_LOCK_WAIT, 0 },
		{ "absl::Mutex::Lock", FRAME_LOCK_WAIT, 0 },
		{ "pthread_mutex_unlock", 0, FRAME_LOCK_WAIT },
		{ "finish_task_switch.isra.0", FRAME_SCHED, 0 },
		{ "srv::Request::Request", FRAME_CTOR, 0 },
		{ "ns::Foo<int>::~Foo", FRAME_CTOR, 0 },
		{ "std::vector<int, std::allocator<int> >::vector", FRAME_CTOR, 0 },
		{ "srv::Request::run", 0, FRAME_CTOR },
		{ "Request", 0, FRAME_CTOR },
		{ "malloc", FRAME_ALLOC, 0 },
		{ "operator new", FRAME_ALLOC, 0 },
		{ "_int_free", FRAME_ALLOC, 0 },
		{ "std::allocator<char>::allocate", FRAME_ALLOC, 0 },
		{ "mallocator", 0, FRAME_ALLOC },
		{ "srv::Logger::log", FRAME_LOG, 0 },
		{ "spdlog::sinks::ansicolor_sink<std::mutex>::log", FRAME_LOG, 0 },
		{ "catalog::lookup", 0, FRAME_LOG },
		{ "__GI___libc_write", FRAME_WRITE, 0 },
		{ "vfs_write_[k]", FRAME_WRITE, 0 },
		{ "writer", 0, FRAME_WRITE },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		unsigned c = frame_classify(fc, cases[i].name, strlen(cases[i].name));

		if ((c & cases[i].want) != cases[i].want || (c & cases[i].not)) {
			fprintf(stderr, "%s:%d: classify '%s' = %#x, want %#x and not %#x\n",
				__FILE__, __LINE__, cases[i].name, c, cases[i].want, cases[i].not);
			check_failures++;
		}
	}
	/* any bytes: a NUL, a lone bracket, an operator's '<' */
	CHECK(frame_classify(fc, "a\0b", 3) == 0);
	CHECK(frame_classify(fc, "[", 1) == 0);
	CHECK(!frame_is_ctor("operator<", 9));
	CHECK(!frame_is_ctor("a::operator<<::b", 16));
	CHECK(!frame_is_ctor("::", 2));
	frame_classifier_free(fc);
}

static void test_shares(void)
{
	fk_count big = (fk_count)1 << 126;	/* beyond 2^123: halved */

	CHECK(share_scaled(n(1), n(3), 1000) == 333);
	CHECK(share_scaled(n(2), n(3), 1000) == 667);
	CHECK(share_scaled(n(1), n(8), 1000) == 125);
	CHECK(share_scaled(n(1), n(16), 1000) == 63);	/* 62.5 rounds up */
	CHECK(share_scaled(n(1), n(1), 1000000) == 1000000);
	CHECK(share_scaled(n(5), n(0), 1000) == 0);
	CHECK(share_scaled(0, n(7), 1000) == 0);
	CHECK(share_scaled(big / 3, big, 1000000) == 333333);
	CHECK(share_scaled(big, big, 1000) == 1000);
	CHECK(share_cmp(n(1), n(3), n(2), n(6)) == 0);
	CHECK(share_cmp(n(1), n(3), n(1), n(2)) < 0);
	CHECK(share_cmp(big, big - 1, big - 1, big - 2) < 0);
	CHECK(share_cmp(n(1), 0, 0, n(1)) == 0);	/* an empty total: 0 */
	CHECK(share_at_least(n(1), n(100), FK_COUNT_ONE / 100));
	CHECK(!share_at_least(n(99), n(10000), FK_COUNT_ONE / 100));
}

static void test_options(void)
{
	fk_count f;

	CHECK(report_parse_percent("1", &f) == 0 && f == FK_COUNT_ONE / 100);
	CHECK(report_parse_percent("2.5%", &f) == 0 && f == FK_COUNT_ONE / 40);
	CHECK(report_parse_percent("100", &f) == 0 && f == FK_COUNT_ONE);
	CHECK(report_parse_percent("0", &f) == 0 && f == 0);
	CHECK(report_parse_percent("100.5", &f) < 0);
	CHECK(report_parse_percent("-1", &f) < 0);
	CHECK(report_parse_percent("x", &f) < 0);
	CHECK(report_parse_percent("", &f) < 0);
	CHECK(report_parse_percent("%", &f) < 0);
	CHECK(report_unit_ok("ns") && report_unit_ok("\u00b5s") && report_unit_ok("cpu-clock"));
	CHECK(!report_unit_ok("") && !report_unit_ok("a b") && !report_unit_ok("<b>"));
	CHECK(!report_unit_ok("a|b") && !report_unit_ok("\xc2"));
	CHECK(report_same_process("on/spin-1-12158.folded", "off/fkwork-12158.folded"));
	CHECK(!report_same_process("on/a-1.folded", "off/a-2.folded"));
	CHECK(report_same_process("x.folded", "y/x.folded"));
	CHECK(!report_same_process("x-1.folded", "x-11.folded"));
	CHECK(!report_same_process("x.folded", "y.folded"));
}

/* Writes text to a temporary file; returns its name (g_free). */
static char *tmpfile_with(const char *text, size_t len)
{
	char *name = g_strdup("/tmp/report-unit-XXXXXX");
	int fd = mkstemp(name);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		abort();
	close(fd);
	return name;
}

static const char *read_error(const char *text, size_t len)
{
	static char msg[256];
	struct category_list *l = category_list_new(true);
	char *f = tmpfile_with(text, len);
	GError *err = NULL;

	if (category_list_read(l, f, &err) < 0) {
		const char *m = strchr(err->message, ':');	/* after the file */

		snprintf(msg, sizeof(msg), "%s", m ? m + 1 : err->message);
		g_error_free(err);
	} else {
		snprintf(msg, sizeof(msg), "ok %zu", category_list_size(l));
	}
	unlink(f);
	g_free(f);
	category_list_free(l);
	return msg;
}

static void test_categories(void)
{
	struct category_list *l = category_list_new(true);
	size_t ndef = category_list_size(l);
	char *f;
	GError *err = NULL;
	GString *many = g_string_new(NULL);

	CHECK(ndef == 7);
	CHECK_STR(category_list_name(l, 0), "locks");
	CHECK(category_list_match(l, 0, "__GI___lll_lock_wait", 20));
	/* a default replaced in place, a new one added, comments skipped */
	f = tmpfile_with("# mine\n\nlocks\tmy_lock\n  # indented comment\nrpc\t^grpc::\n", 55);
	CHECK(category_list_read(l, f, &err) == 0);
	unlink(f);
	g_free(f);
	CHECK(category_list_size(l) == ndef + 1);
	CHECK_STR(category_list_regex(l, 0), "my_lock");
	CHECK(!category_list_match(l, 0, "pthread_mutex_lock", 18));
	CHECK_STR(category_list_name(l, ndef), "rpc");
	category_list_free(l);
	l = category_list_new(false);
	CHECK(category_list_size(l) == 0);
	category_list_free(l);

	CHECK_STR(read_error("a b\n", 4), "1: expected NAME<TAB>REGEX");
	CHECK_STR(read_error("ok\tx\n\tre\n", 9), "2: empty category name");
	CHECK_STR(read_error("name\t\n", 6), "1: empty regex for category 'name'");
	CHECK(strstr(read_error("x\t(\n", 4), "1: bad regex '('") != NULL);
	CHECK(strstr(read_error("x\ta\0b\n", 6), "1: NUL byte in line") != NULL);
	CHECK_STR(read_error("a\tb\r\nc\td\r\n", 10), "ok 9");
	for (int i = 0; i < CATEGORY_LIST_MAX; i++)
		g_string_append_printf(many, "c%d\tx\n", i);
	CHECK_STR(read_error(many->str, many->len), "994: more than 1000 categories");
	g_string_free(many, TRUE);
}

static struct profile *profile_of(const char *text)
{
	struct profile *p = profile_new();
	char **lines = g_strsplit(text, "\n", -1);

	for (char **l = lines; *l; l++) {
		char *sp = strrchr(*l, ' ');

		if (sp)
			profile_add(p, *l, (size_t)(sp - *l), n(strtoull(sp + 1, NULL, 10)), false);
	}
	g_strfreev(lines);
	return p;
}

static void test_profile(void)
{
	struct category_list *cats = category_list_new(true);
	struct frame_classifier *fc = frame_classifier_new();
	struct profile *p = profile_of(
		"t1;start_thread;work;work;leaf 5\n"	/* recursion: work once */
		"t2;start_thread;work;leaf 3\n"
		"t1;main 2\n"				/* truncated, no entry */
		"t3 4\n"				/* a root alone */
		"t1;start_thread;hold;pthread_mutex_lock;futex_wait;schedule 7\n"
		"t1;start_thread;work;leaf 1\n");	/* merges with t2's tail */
	const struct frame_stat *f;
	fk_count c;

	profile_analyse(p, cats, fc, NULL);
	CHECK(p->total == n(22));
	CHECK(p->nstacks == 6);
	CHECK(p->root_only == n(4));
	CHECK(p->truncated == n(6));
	CHECK(fold_table_size(p->roots) == 3);
	CHECK(p->tails->len == 4);	/* work;leaf is one tail for t1 and t2 */
	f = profile_frame(p, "work", 4);
	CHECK(f && f->incl == n(9) && f->self == 0);
	f = profile_frame(p, "leaf", 4);
	CHECK(f && f->self == n(9) && f->incl == n(9));
	CHECK(profile_frame(p, "t1", 2) == NULL);	/* roots are not functions */
	f = profile_frame(p, "hold", 4);
	CHECK(f && f->lock_wait == n(7) && f->calls_lock == n(7));
	f = profile_frame(p, "pthread_mutex_lock", 18);	/* a lock calling a lock */
	CHECK(f && f->calls_lock == 0);
	CHECK(profile_child_in(p, profile_frame(p, "hold", 4), FRAME_LOCK_WAIT, &c) ==
	      profile_frame(p, "pthread_mutex_lock", 18) && c == n(7));
	CHECK(profile_child_in(p, profile_frame(p, "work", 4), FRAME_LOCK_WAIT, NULL) == NULL);
	f = profile_frame(p, "schedule", 8);
	CHECK(f && f->lock_wait == 0 && f->incl == n(7));
	f = profile_frame(p, "main", 4);
	CHECK(f && f->trunc_head == n(2));
	/* self sums to total - root_only */
	c = 0;
	for (guint i = 0; i < p->frames->len; i++)
		c += ((struct frame_stat *)g_ptr_array_index(p->frames, i))->self;
	CHECK(c == p->total - p->root_only);
	f = profile_child(p, profile_frame(p, "work", 4), &c);
	CHECK(f && f->name.len == 4 && memcmp(f->name.s, "leaf", 4) == 0 && c == n(9));
	f = profile_caller(p, profile_frame(p, "work", 4), &c);
	/* "start_thread" (9) beats "work" (5, its own caller in recursion) */
	CHECK(f && f->name.len == 12 && c == n(9));
	CHECK(profile_caller(p, profile_frame(p, "start_thread", 12), NULL) == NULL);
	CHECK(p->cat_counts[0] == n(7));	/* locks: the mutex stack */
	profile_free(p);

	/* stack order is the order of the "ROOT;TAIL" texts */
	p = profile_of("a;x 1\na-b;y 1\na 1\nab 1\na;;z 1\n");
	{
		struct fold_entry **v = fold_table_sorted(p->stacks, NULL);
		GString *x = g_string_new(NULL), *y = g_string_new(NULL);

		for (size_t i = 0; v[i]; i++)
			for (size_t j = 0; v[j]; j++) {
				int want, got = profile_stack_cmp(profile_stack_key(v[i]),
								  profile_stack_key(v[j]));

				g_string_truncate(x, 0);
				g_string_truncate(y, 0);
				profile_stack_text(profile_stack_key(v[i]), x);
				profile_stack_text(profile_stack_key(v[j]), y);
				want = strcmp(x->str, y->str);
				CHECK((got < 0) == (want < 0) && (got > 0) == (want > 0));
			}
		g_string_free(x, TRUE);
		g_string_free(y, TRUE);
		g_free(v);
	}
	profile_free(p);
	frame_classifier_free(fc);
	category_list_free(cats);
}

/* The report of text as out (Markdown or JSON); g_free() it. */
static char *report_of(const char *text, enum report_format fmt)
{
	struct report_opts o = REPORT_OPTS_INIT;
	struct category_list *cats = category_list_new(true);
	struct profile *p = profile_of(text);
	struct report_source in = { .title = "t<b>", .files = (char *[]){ "t<b>" },
				    .nfiles = 1, .whole = p };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	o.categories = cats;
	o.format = fmt;
	CHECK(report_write(out, &in, NULL, &o, NULL) == 0);
	fclose(out);
	profile_free(p);
	category_list_free(cats);
	return buf;
}

static void test_escaping(void)
{
	const char *hostile = "t;<script>alert(1)</script>;a|b;x`y``z;\033[2J;\"q\\\xff;\xe2\x80\xa8 5";
	char *md = report_of(hostile, REPORT_MARKDOWN), *js = report_of(hostile, REPORT_JSON);

	CHECK(!strstr(md, "\033") && !strstr(js, "\033"));
	CHECK(!strstr(js, "<") && !strstr(js, ">") && !strstr(js, "\xe2\x80\xa8"));
	CHECK(g_utf8_validate(md, -1, NULL) && g_utf8_validate(js, -1, NULL));
	/* in a Markdown table, in a code span: '|' escaped, a longer fence */
	CHECK(strstr(md, "| `a\\|b` |") != NULL);
	CHECK(strstr(md, "| ```x`y``z``` |") != NULL);
	CHECK(strstr(md, "`<script>alert(1)</script>`") != NULL);
	CHECK(strstr(md, "`\\x1b[2J`") != NULL);
	CHECK(strstr(js, "\"frame\": \"\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\"") != NULL);
	/* invalid UTF-8 is U+FFFD, the one JSON escaper's rule (jsonesc.h) */
	CHECK(strstr(js, "\"frame\": \"\\\"q\\\\\xef\xbf\xbd\"") != NULL);
	CHECK(strstr(js, "\"frame\": \"\\u2028\"") != NULL);
	CHECK(strstr(md, "# fold-report: `t<b>`") != NULL);
	g_free(md);
	g_free(js);
}

int main(void)
{
	test_base();
	test_classify();
	test_shares();
	test_options();
	test_categories();
	test_profile();
	test_escaping();
	return CHECK_DONE();
}
