/*
 * export.c - the exporters' building blocks through lib/: the interning
 * tables, JSON strings, frame paths, the speedscope and pprof writers,
 * and the pprof reader's limits.  Expected values come from the inputs
 * written here, not from the code under test.
 */
#include "check.h"

#include "collapse/pprofread.h"
#include "core/intern.h"
#include "core/jsonesc.h"
#include "export/framepath.h"
#include "export/pprof.h"
#include "export/speedscope.h"
#include "gen/profile.pb-c.h"

#include <glib.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

static void test_intern(void)
{
	struct fk_intern *in = fk_intern_new();
	struct fk_idmap *m = fk_idmap_new();
	char key[16];
	bool added;

	CHECK(fk_intern_id(in, "main", 4, &added) == 0 && added);
	CHECK(fk_intern_id(in, "a\0b", 3, &added) == 1 && added);
	CHECK(fk_intern_id(in, "a", 1, &added) == 2 && added);
	CHECK(fk_intern_id(in, "main", 4, &added) == 0 && !added);
	CHECK(fk_intern_find(in, "a\0b", 3) == 1);
	CHECK(fk_intern_find(in, "nope", 4) == UINT32_MAX);
	CHECK(fk_intern_str(in, 1).len == 3 && memcmp(fk_intern_str(in, 1).s, "a\0b", 3) == 0);
	/* enough keys to grow the table several times; ids stay dense */
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(key, sizeof(key), "k%d", i);

		CHECK(fk_intern_id(in, key, (size_t)n, NULL) == (uint32_t)i + 3);
		CHECK(fk_idmap_id(m, (uint64_t)i << 32 | (uint64_t)(i % 7), NULL) == (uint32_t)i);
	}
	for (int i = 0; i < 100000; i += 997) {
		int n = snprintf(key, sizeof(key), "k%d", i);

		CHECK(fk_intern_find(in, key, (size_t)n) == (uint32_t)i + 3);
		CHECK(fk_idmap_id(m, (uint64_t)i << 32 | (uint64_t)(i % 7), &added) == (uint32_t)i && !added);
		CHECK(fk_idmap_key(m, (uint32_t)i) == ((uint64_t)i << 32 | (uint64_t)(i % 7)));
	}
	CHECK(fk_intern_size(in) == 100003 && fk_idmap_size(m) == 100000);
	fk_intern_free(in);
	fk_idmap_free(m);
	/* an empty key first, before the arena exists (found by
	 * fuzz/perfscript.c: an empty process name) */
	in = fk_intern_new();
	CHECK(fk_intern_id(in, "", 0, &added) == 0 && added);
	CHECK(fk_intern_id(in, "", 0, &added) == 0 && !added);
	CHECK(fk_intern_str(in, 0).len == 0);
	CHECK(fk_intern_id_ref(in, "x", 1, &added) == 1 && added);
	fk_intern_free(in);
}

static void json_is(const char *in, size_t len, const char *want, bool replaced)
{
	GString *s = g_string_new(NULL);

	CHECK(fk_json_string(s, in, len) == replaced);
	CHECK_STR(s->str, want);
	g_string_free(s, TRUE);
}

static void test_json(void)
{
	GString *s = g_string_new(NULL);

	json_is("plain", 5, "\"plain\"", false);
	json_is("a\"b\\c", 5, "\"a\\\"b\\\\c\"", false);
	json_is("\x01\t\n\x1f\x7f", 5, "\"\\u0001\\u0009\\u000a\\u001f\\u007f\"", false);
	json_is("\0x", 2, "\"\\u0000x\"", false);
	json_is("\xc2\x85", 2, "\"\\u0085\"", false);			/* C1 NEL */
	json_is("\xe2\x80\xa8\xe2\x80\xa9", 6, "\"\\u2028\\u2029\"", false);
	json_is("caf\xc3\xa9 \xf0\x9f\x94\xa5", 10, "\"caf\xc3\xa9 \xf0\x9f\x94\xa5\"", false);
	json_is("</script>", 9, "\"</script>\"", false);
	/* each byte of an invalid sequence is one U+FFFD */
	json_is("a\xff", 2, "\"a\xef\xbf\xbd\"", true);
	json_is("\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"", true);		/* overlong */
	json_is("\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"", true);	/* surrogate */
	json_is("\xe2\x82", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"", true);		/* cut */
	json_is("\xf4\x90\x80\x80", 4, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"", true);

	CHECK(fk_utf8_ok("caf\xc3\xa9", 5) && !fk_utf8_ok("a\0b", 3) && !fk_utf8_ok("\xff", 1));
	CHECK(fk_utf8_fix(s, "a\0b\xffz\xc3\xa9", 7));
	CHECK_STR(s->str, "a\xef\xbf\xbd" "b\xef\xbf\xbdz\xc3\xa9");
	g_string_truncate(s, 0);
	CHECK(!fk_utf8_fix(s, "ok", 2) && strcmp(s->str, "ok") == 0);
	g_string_free(s, TRUE);
}

/* frame_path's ids, against splitting every stack from scratch */
struct names {
	int calls;
	struct fk_intern *in;
};

static uint32_t name_id(void *ctx, uint32_t prev, const char *name, size_t len)
{
	struct names *nm = ctx;

	nm->calls++;
	return fk_intern_id(nm->in, name, len, NULL);
}

static void test_framepath(void)
{
	static const char *const stacks[] = {
		"a;b;c", "a;b;c", "a;b;d", "a;b", "a;b-1;x", "a;b;c;d", "a;bc;d",
		"a", "", "a;", "a;;b", "b;b;b", "b;b;bb", "zz;y",
		"a;b;c;d;e;f;g;h;i;j", "a;b;c;d;e;f;g;h;i;jj",
	};
	struct names ctx = { 0, fk_intern_new() };
	struct frame_path fp = FRAME_PATH_INIT;
	GPtrArray *keep = g_ptr_array_new_with_free_func(g_free);
	int calls_before;

	for (size_t i = 0; i < G_N_ELEMENTS(stacks); i++) {
		size_t n;
		const uint32_t *ids;
		char **want = stacks[i][0] ? g_strsplit(stacks[i], ";", -1) : g_new0(char *, 1);
		char *copy = g_strdup(stacks[i]);
		bool stable = i % 2;

		ids = frame_path_ids(&fp, copy, strlen(copy), stable, name_id, &ctx, &n);
		CHECK(n == g_strv_length(want));
		for (size_t k = 0; k < n && k < g_strv_length(want); k++) {
			struct fk_str s = fk_intern_str(ctx.in, ids[k]);

			CHECK(s.len == strlen(want[k]) && memcmp(s.s, want[k], s.len) == 0);
		}
		g_strfreev(want);
		if (stable) {
			g_ptr_array_add(keep, copy);
		} else {	/* the bytes may change once the call returns */
			memset(copy, '#', strlen(copy));
			g_free(copy);
		}
	}
	g_ptr_array_free(keep, TRUE);
	/* a repeated stack is not looked up again */
	calls_before = ctx.calls;
	frame_path_reset(&fp);
	{
		size_t n;
		frame_path_ids(&fp, "p;q;r", 5, true, name_id, &ctx, &n);
		frame_path_ids(&fp, "p;q;r", 5, true, name_id, &ctx, &n);
		frame_path_ids(&fp, "p;q;s", 5, true, name_id, &ctx, &n);
	}
	CHECK(ctx.calls - calls_before == 4);
	frame_path_release(&fp);
	fk_intern_free(ctx.in);
}

static char *write_doc(struct ss_doc *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	GError *err = NULL;

	CHECK(ss_doc_write(d, f, "mem", &err) == 0);
	fclose(f);
	return buf;
}

static void test_speedscope(void)
{
	struct ss_doc *d = ss_doc_new("doc");
	struct ss_profile *a = ss_profile_new(d, "app 1/1", SS_UNIT_NANOSECONDS);
	struct ss_profile *b = ss_profile_new(d, "app 1/2", SS_UNIT_MICROSECONDS);
	uint32_t f[3];
	char *json;

	f[0] = ss_frame(d, "main", 4);
	f[1] = ss_frame_at(d, "work", 4, "w.c", 3, 12);
	f[2] = ss_frame_at(d, "work", 4, "w.c", 3, 13);
	CHECK(f[0] == 0 && f[1] == 1 && f[2] == 2);
	CHECK(ss_frame_at(d, "work", 4, "w.c", 3, 12) == 1);
	CHECK(ss_frame(d, "main", 4) == 0 && ss_frame_at(d, "main", 4, NULL, 0, 0) == 0);
	/* time order kept; equal neighbours merged, as speedscope does */
	ss_profile_add(a, f, 2, fk_count_from_u64(5));
	ss_profile_add(a, f, 2, fk_count_from_u64(7));
	ss_profile_add(a, (uint32_t[]){ f[0], f[2] }, 2, fk_count_from_u64(1));
	ss_profile_add(a, f, 2, fk_count_from_u64(2));
	ss_profile_add(b, f, 0, FK_COUNT_ONE / 2);
	ss_profile_add_folded(b, "main;x", 6, fk_count_from_u64(3), false);
	ss_profile_add_stack(b, ss_doc_last_stack(d), fk_count_from_u64(1));
	CHECK(ss_profile_samples(a) == 3 && ss_profile_total(a) == fk_count_from_u64(15));
	CHECK(ss_profile_samples(b) == 2 && ss_profile_total(b) == fk_count_from_u64(4) + FK_COUNT_ONE / 2);
	CHECK(ss_doc_frames(d) == 4);
	json = write_doc(d);
	CHECK(strstr(json, "{\"name\":\"work\",\"file\":\"w.c\",\"line\":12}"));
	CHECK(strstr(json, "\"samples\":[\n[0,1],\n[0,2],\n[0,1]],\n\"weights\":[12,1,2]"));
	CHECK(strstr(json, "\"name\":\"app 1/2\",\"unit\":\"microseconds\",\"startValue\":0,\"endValue\":4.5,"));
	CHECK(strstr(json, "\"samples\":[\n[],\n[0,3]],\n\"weights\":[0.5,4]"));
	CHECK(ss_doc_replaced(d) == 0 && ss_doc_inexact(d) == 0);
	free(json);
	ss_doc_free(d);

	/* weights known later, zero weights left out, renaming, ordering,
	 * the active profile */
	d = ss_doc_new("later");
	a = ss_profile_new(d, "t 1/2", SS_UNIT_MICROSECONDS);
	b = ss_profile_new(d, "t 1/1", SS_UNIT_MICROSECONDS);
	ss_profile_set_order(a, 2);
	ss_profile_set_order(b, 1);
	{
		uint32_t st = ss_doc_stack_folded(d, "main;wait", 9, false);
		size_t i = ss_profile_add_stack(a, st, 0);

		CHECK(ss_profile_add_stack(a, ss_doc_stack_folded(d, "main", 4, false), 0) == 1);
		CHECK(ss_profile_add_stack(a, st, 0) == 2);
		ss_profile_add_weight(a, i, fk_count_from_u64(7));
		ss_profile_add_weight(a, 2, FK_COUNT_ONE / 4);
		CHECK(ss_profile_total(a) == fk_count_from_u64(7) + FK_COUNT_ONE / 4);
		ss_profile_add_stack(b, st, fk_count_from_u64(1));
	}
	ss_profile_set_name(a, "renamed 1/2");
	json = write_doc(d);
	/* b (order 1) is written first; a, the heaviest, is active */
	CHECK(strstr(json, "\"activeProfileIndex\":1,"));
	CHECK(strstr(json, "\"name\":\"t 1/1\"") < strstr(json, "\"name\":\"renamed 1/2\""));
	CHECK(strstr(json, "\"samples\":[\n[0,1],\n[0,1]],\n\"weights\":[7,0.25]"));
	ss_doc_set_active(d, b);
	free(json);
	json = write_doc(d);
	CHECK(strstr(json, "\"activeProfileIndex\":0,"));
	free(json);
	ss_doc_free(d);

	/* an empty document is still a valid file */
	d = ss_doc_new("\xff");
	json = write_doc(d);
	CHECK(strstr(json, "\"name\":\"\xef\xbf\xbd\"") && strstr(json, "\"profiles\":[]}"));
	CHECK(ss_doc_replaced(d) == 1);
	free(json);
	ss_doc_free(d);
	{
		enum ss_unit u;
		CHECK(ss_unit_parse("bytes", &u) && u == SS_UNIT_BYTES);
		CHECK(ss_unit_parse("ns", &u) && u == SS_UNIT_NANOSECONDS);
		CHECK(ss_unit_parse("\u00b5s", &u) && u == SS_UNIT_MICROSECONDS);
		CHECK(ss_unit_parse("us", &u) && u == SS_UNIT_MICROSECONDS);
		CHECK(ss_unit_parse("ms", &u) && u == SS_UNIT_MILLISECONDS);
		CHECK(ss_unit_parse("s", &u) && u == SS_UNIT_SECONDS);
		CHECK(ss_unit_parse("switches", &u) && u == SS_UNIT_NONE);
		CHECK(ss_unit_parse("samples", &u) && u == SS_UNIT_NONE);
		CHECK(!ss_unit_parse("NS", &u) && !ss_unit_parse("", &u) &&
		      !ss_unit_parse("n", &u) && !ss_unit_parse("nanosecond", &u));
		CHECK_STR(ss_unit_name(SS_UNIT_MILLISECONDS), "milliseconds");
	}
}

/* Unpacks a gzip-compressed profile with protobuf-c itself. */
static Perftools__Profiles__Profile *unpack(const char *gz, size_t len)
{
	unsigned char *raw = g_malloc(1 << 20);
	z_stream z = { .next_in = (Bytef *)gz, .avail_in = (uInt)len,
		       .next_out = raw, .avail_out = 1 << 20 };
	Perftools__Profiles__Profile *p;

	CHECK(inflateInit2(&z, 31) == Z_OK);
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	inflateEnd(&z);
	p = perftools__profiles__profile__unpack(NULL, (size_t)(z.next_out - raw), raw);
	g_free(raw);
	return p;
}

static void test_pprof(void)
{
	struct pprof_builder *b = pprof_new("cpu", "nanoseconds");
	struct pprof_line inl[2];
	struct pprof_label lab[] = {
		{ .key = "comm", .str = "app" }, { .key = "tid", .num = 42 },
		{ .key = "bytes", .num = 64, .unit = "bytes" },
	};
	uint64_t map, loc[2];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	GError *err = NULL;
	Perftools__Profiles__Profile *p;

	pprof_set_period(b, "cpu", "nanoseconds", 1000);
	pprof_add_comment(b, "made by a test");
	map = pprof_mapping(b, 0x400000, 0x500000, 0, "/bin/app", "abcdef");
	CHECK(map == 1 && pprof_mapping(b, 0x400000, 0x500000, 0, "/bin/app", "abcdef") == 1);
	inl[0].function = pprof_function(b, "inner", 5, "a.c", 3);
	inl[0].line = 7;
	inl[1].function = pprof_function(b, "outer", 5, "a.c", 3);
	inl[1].line = 20;
	CHECK(inl[0].function == 1 && inl[1].function == 2);
	loc[0] = pprof_location(b, map, 0x401234, inl, 2);
	loc[1] = pprof_location(b, map, 0x400100, &inl[1], 1);
	CHECK(loc[0] == 1 && loc[1] == 2 && pprof_location(b, map, 0x401234, inl, 2) == 1);
	CHECK(pprof_add(b, loc, 2, lab, 3, fk_count_from_u64(10), &err) == 0);
	CHECK(pprof_add(b, loc, 2, lab, 3, fk_count_from_u64(5), &err) == 0);
	CHECK(pprof_add(b, loc, 2, lab, 2, fk_count_from_u64(1), &err) == 0);
	CHECK(pprof_add(b, loc, 2, lab, 2, FK_COUNT_ONE / 2, &err) == -1 && err);
	g_clear_error(&err);
	CHECK(pprof_add(b, loc, 2, lab, 2, -FK_COUNT_ONE, &err) == -1 && err);
	g_clear_error(&err);
	CHECK(pprof_samples(b) == 2);
	f = open_memstream(&buf, &len);
	CHECK(pprof_write(b, f, "mem", &err) == 0);
	fclose(f);
	CHECK(len > 18 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b);
	CHECK(buf[4] == 0 && buf[5] == 0 && buf[6] == 0 && buf[7] == 0);	/* no time */
	p = unpack(buf, len);
	CHECK(p != NULL);
	if (p) {
		CHECK(p->n_sample == 2 && p->sample[0]->n_value == 1 && p->sample[0]->value[0] == 15);
		CHECK(p->sample[1]->value[0] == 1 && p->sample[1]->n_label == 2);
		CHECK(p->sample[0]->n_location_id == 2 && p->sample[0]->location_id[0] == 1);
		CHECK(p->sample[0]->n_label == 3);
		CHECK_STR(p->string_table[p->sample[0]->label[0]->key], "comm");
		CHECK_STR(p->string_table[p->sample[0]->label[0]->str], "app");
		CHECK(p->sample[0]->label[1]->num == 42);
		CHECK_STR(p->string_table[p->sample[0]->label[2]->num_unit], "bytes");
		CHECK(p->n_mapping == 1 && p->mapping[0]->memory_start == 0x400000);
		CHECK_STR(p->string_table[p->mapping[0]->build_id], "abcdef");
		CHECK(p->n_location == 2 && p->location[0]->n_line == 2 && p->location[0]->address == 0x401234);
		CHECK(p->location[0]->line[0]->function_id == 1 && p->location[0]->line[0]->line == 7);
		CHECK(p->n_function == 2);
		CHECK_STR(p->string_table[p->function[1]->name], "outer");
		CHECK_STR(p->string_table[p->function[1]->filename], "a.c");
		CHECK(p->period == 1000 && p->n_comment == 1);
		CHECK_STR(p->string_table[0], "");
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	/* and foldkit's own reader sees the same stacks */
	{
		struct pprof_profile *pr = pprof_profile_parse(buf, len, "mem", 0, &err);
		struct fold_table *t;
		struct pprof_collapse_opts o = PPROF_COLLAPSE_OPTS_INIT;
		const char *keys[] = { "tid", "bytes" };
		struct fold_entry **e;
		size_t n;

		CHECK(pr != NULL);
		o.tagroot = keys;
		o.ntagroot = 2;
		o.lines = true;
		t = pr ? pprof_collapse(pr, &o, NULL, &err) : fold_table_new();
		CHECK(t != NULL);
		if (!t)
			t = fold_table_new();
		e = fold_table_sorted(t, &n);
		CHECK(n == 2);
		if (n == 2) {
			CHECK_STR(e[0]->stack, "tid=42;bytes=64 bytes;outer:a.c:20;outer:a.c:20;inner:a.c:7");
			CHECK_STR(e[1]->stack, "tid=42;outer:a.c:20;outer:a.c:20;inner:a.c:7");
		}
		g_free(e);
		fold_table_free(t);
		pprof_profile_free(pr);
	}
	free(buf);
	pprof_free(b);
}

/* A profile over the size limit is refused, compressed or not. */
static void test_pprof_limits(void)
{
	size_t big = 3u << 20;
	unsigned char *zeros = g_malloc0(big), *gz = g_malloc(big);
	uLongf gzlen = big;
	z_stream z = { 0 };
	GError *err = NULL;

	deflateInit2(&z, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
	z.next_in = zeros;
	z.avail_in = (uInt)big;
	z.next_out = gz;
	z.avail_out = (uInt)gzlen;
	CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
	gzlen = z.total_out;
	deflateEnd(&z);
	CHECK(!pprof_profile_parse(gz, gzlen, "bomb", 1 << 20, &err));
	CHECK(err && strstr(err->message, "bomb: larger than 1 MiB once decompressed"));
	g_clear_error(&err);
	CHECK(!pprof_profile_parse(zeros, big, "raw", 1 << 20, &err));
	CHECK(err && strstr(err->message, "raw: larger than 1 MiB"));
	g_clear_error(&err);
	g_free(zeros);
	g_free(gz);
}

int main(void)
{
	test_intern();
	test_json();
	test_framepath();
	test_speedscope();
	test_pprof();
	test_pprof_limits();
	return CHECK_DONE();
}
