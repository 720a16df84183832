/*
 * lib_svg - unit tests for fold2svg's library: UTF-8 decoding and the XML,
 * script and comment escapers, the drand48 generator (against libc's),
 * count and percentage formatting, and the flame graph model.
 */
#include "check.h"
#include "flamegraph.h"
#include "palette.h"
#include "svgwriter.h"
#include "xmlesc.h"

#include <stdlib.h>

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

int main(void)
{
	test_utf8();
	test_escape();
	test_rand48();
	test_numbers();
	test_model();
	return CHECK_DONE();
}
