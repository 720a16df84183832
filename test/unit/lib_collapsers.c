/* Unit tests for the pieces of dtrace-, stap- and bpftrace-collapse: frame
 * names, offsets, the caches, the indented-line skip, the string map's
 * empty key. */
#include "check.h"
#include "collapse/dtrace.h"
#include "collapse/framename.h"
#include "collapse/stackcache.h"
#include "collapse/stap.h"
#include "core/linereader.h"
#include "core/strmap.h"

#include <glib.h>
#include <stdint.h>

static const char *dname(const char *s)
{
	static GString *out;

	if (!out)
		out = g_string_new(NULL);
	g_string_truncate(out, 0);
	dtrace_frame_name(out, s, strlen(s));
	return out->str;
}

static const char *sname(const char *s)
{
	static GString *out;

	if (!out)
		out = g_string_new(NULL);
	g_string_truncate(out, 0);
	stap_frame_name(out, s, strlen(s));
	return out->str;
}

static void test_names(void)
{
	CHECK_STR(dname("libc.so.1`__priocntlset+0xa"), "libc.so.1`__priocntlset");
	CHECK_STR(dname("libstdc++.so.6`0x7ff3a1b2c3d4"), "libstdc++.so.6`0x7ff3a1b2c3d4");
	CHECK_STR(dname("a`ns::f(std::map<int, int>&)+0x2a"), "a`ns::f");
	CHECK_STR(dname("java/lang/Thread.run()V"), "java/lang/Thread.run()V");
	CHECK_STR(dname("ftrace_call+0x5/0x2f [ktap]"), "ftrace_call");
	CHECK_STR(dname("test`foo->bar"), "test`foo;bar_[i]");
	CHECK_STR(dname("m`ns::Foo::operator->() const+0x8"), "m`ns::Foo::operator->");
	CHECK_STR(dname("Ljava/lang/Thread;::run+0x10"), "java/lang/Thread:::run");
	CHECK_STR(dname("LaunchServices`_LSOpen+0x14"), "LaunchServices`_LSOpen");
	CHECK_STR(dname("+0x10"), "-");
	CHECK_STR(sname("0x3880ef2877 : socket+0x7/0x30 [/usr/lib64/libc-2.15.so]"), "socket");
	CHECK_STR(sname("0x4d2490 : f+0x0/0x40 [/opt/perl] (inexact)"), "f");
	CHECK_STR(sname("0x41e1a9 [/opt/perl/bin/perl+0x1e1a9/0x20000]"), "0x41e1a9 [/opt/perl/bin/perl");
	CHECK_STR(sname("0x7f1c [/usr/lib/libstdc++.so.6]"), "0x7f1c [/usr/lib/libstdc++.so.6]");
	CHECK_STR(sname("0x1 : put(char)+0x1a/0x90 [/usr/lib/libstdc++.so.6]"), "put(char)");
	CHECK_STR(sname("0x1 : a;b+0x1/0x2 [m]"), "a:b");
	CHECK_STR(sname("Test::Nginx::Util::run_test"), "Test::Nginx::Util::run_test");
}

static void test_offsets(void)
{
	bool sized;

	CHECK(frame_text_offset("f+0x1a", 6, false, &sized) == 1 && !sized);
	CHECK(frame_text_offset("f+0x5/0x2f", 10, false, &sized) == 1 && sized);
	CHECK(frame_text_offset("f+142", 5, true, &sized) == 1);
	CHECK(frame_text_offset("f+142", 5, false, &sized) == SIZE_MAX);
	CHECK(frame_text_offset("f+0x", 4, false, &sized) == SIZE_MAX);
	CHECK(frame_text_offset("0x10", 4, false, &sized) == SIZE_MAX);
}

static void no_callers(void *ctx, const char *text, size_t len, GString *out)
{
	CHECK(len == 0);
}

static void test_cache(void)
{
	struct fold_table *t = fold_table_new();
	struct stack_cache *sc = stack_cache_new(t);
	GString *s = g_string_new(NULL);
	struct fold_entry *e;

	/* one frame: the callers are empty; the same leaf at another offset
	 * is the same frame; a second time goes through the cached pair */
	for (int i = 0; i < 3; i++)
		stack_cache_add_record(sc, s, "", 0, no_callers, NULL,
				       i ? "m`f+0x2" : "m`f+0x1", 7, &dtrace_frames,
				       fk_count_from_u64(1));
	CHECK(fold_table_size(t) == 1);
	e = fold_table_find(t, "m`f", 3);
	CHECK(e && e->count[0] == fk_count_from_u64(3));
	/* a stack starting with '#' would be a comment */
	g_string_assign(s, "#x;y");
	CHECK(stack_cache_add(sc, s, fk_count_from_u64(1)) == 0);
	CHECK(fold_table_find(t, "_x;y", 4) != NULL);
	g_string_truncate(s, 0);
	CHECK(stack_cache_add(sc, s, fk_count_from_u64(1)) < 0);
	g_string_free(s, TRUE);
	stack_cache_free(sc);
	fold_table_free(t);
}

static void test_strmap_empty(void)
{
	struct strmap *m = strmap_new(64);
	struct fk_str v;

	/* the first entry of a map, empty key and value: stored, found */
	CHECK(strmap_put(m, "", 0, "", 0));
	CHECK(strmap_get(m, "", 0, &v) && v.len == 0 && v.s != NULL);
	CHECK(!strmap_put(m, "", 0, "", 0));
	CHECK(strmap_size(m) == 1);
	strmap_free(m);
}

/* fk_skip_indented() a byte at a time, as its header describes it */
static size_t skip_indented_ref(const char *base, size_t limit, size_t *lines)
{
	size_t n = 0, last = SIZE_MAX;

	*lines = 0;
	if (!limit || (base[0] != ' ' && base[0] != '\t'))
		return 0;
	for (size_t i = 0; i < limit && base[i]; i++) {
		if (base[i] != '\n')
			continue;
		n++;
		last = i;
		if (i + 1 < limit && base[i + 1] != ' ' && base[i + 1] != '\t')
			break;
	}
	if (last == SIZE_MAX)
		return 0;
	*lines = n;
	return last + 1;
}

/*
 * The vector loops (16 and, with AVX2, 32 bytes) against the reference on
 * random runs of blanks, line ends, letters and NULs, at every offset and
 * length, so that every position of a stop or NUL in a block is met.
 */
static void test_skip_indented_random(void)
{
	static const char alphabet[] = { ' ', '\t', '\n', 'a', '\0', ' ', '\t', ' ' };
	char buf[160];
	guint32 seed = 12345;
	int bad = 0;

	for (int round = 0; round < 4000 && bad < 5; round++) {
		/* mostly indented lines: long runs reach the vector loops */
		int rare = round % 4 == 0 ? 8 : 64;
		for (size_t i = 0; i < sizeof(buf); i++) {
			seed = seed * 1103515245u + 12345u;
			unsigned r = (seed >> 16) % (unsigned)rare;
			buf[i] = r < 8 ? alphabet[r] : (r % 5 == 0 ? '\n' : (r % 5 == 1 ? '\t' : 'x'));
		}
		for (size_t off = 0; off < 40; off += 7) {
			size_t limit = sizeof(buf) - off - (size_t)(round % 50);
			size_t l1, l2, n1 = fk_skip_indented(buf + off, limit, &l1),
			       n2 = skip_indented_ref(buf + off, limit, &l2);
			if (n1 != n2 || l1 != l2) {
				fprintf(stderr, "skip_indented round %d off %zu limit %zu: "
					"%zu bytes %zu lines, want %zu %zu\n",
					round, off, limit, n1, l1, n2, l2);
				bad++;
			}
		}
	}
	CHECK(bad == 0);
}

static void test_skip_indented(void)
{
	size_t lines;
	const char *s = "  a\n\tb\n  c\nd\n  e\n";

	CHECK(fk_skip_indented(s, strlen(s), &lines) == 11 && lines == 3);
	CHECK(fk_skip_indented(s + 11, strlen(s) - 11, &lines) == 0 && lines == 0);
	CHECK(fk_skip_indented("  x", 3, &lines) == 0 && lines == 0);	/* no '\n' */
	/* more than 16 bytes: the vector loop */
	s = "                a\n                b\n                c\nd";
	CHECK(fk_skip_indented(s, strlen(s), &lines) == strlen(s) - 1 && lines == 3);
	test_skip_indented_random();
}

int main(void)
{
	test_names();
	test_offsets();
	test_cache();
	test_strmap_empty();
	test_skip_indented();
	return CHECK_DONE();
}
