/*
 * export.c - the exporters' building blocks through lib/: the interning
 * tables, JSON strings, frame paths and the speedscope writer.  Expected values come from the inputs
 * written here, not from the code under test.
 */
#include "check.h"

#include "core/intern.h"
#include "core/jsonesc.h"
#include "export/framepath.h"
#include "export/speedscope.h"

#include <glib.h>
#include <stdlib.h>

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
		CHECK(!ss_unit_parse("ns", &u));
		CHECK_STR(ss_unit_name(SS_UNIT_MILLISECONDS), "milliseconds");
	}
}

int main(void)
{
	test_intern();
	test_json();
	test_framepath();
	test_speedscope();
	return CHECK_DONE();
}
