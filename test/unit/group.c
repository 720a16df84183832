/*
 * group.c - lib/capture/group.c: two workers' profiles merged, and each
 * top function's lowest and highest share, on profiles small enough to
 * work out by hand (the expected values below are that arithmetic).
 */
#include "check.h"

#include "capture/group.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

static char *put(const char *dir, const char *name, const char *text)
{
	char *path = g_build_filename(dir, name, NULL);

	g_file_set_contents(path, text, -1, NULL);
	return path;
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

static void test_spread(const char *dir)
{
	/* worker-1: total 100; self decode 60, wait 40 (no checksum)
	 * worker-2: total 300; self decode 100, checksum 150, wait 40;
	 * a stack of the thread alone (10) has no function; a line
	 * that is no stack is skipped */
	char *a = put(dir, "w1.folded", "decode;run;decode_frame 60\ndecode;wait 40\n");
	char *b = put(dir, "w2.folded", "decode;run;decode_frame 100\n"
				      "decode;run;checksum_frame 150\n"
				      "decode;wait 40\ndecode 10\nnot a stack\n");
	struct fk_group_member m[] = { { "server.worker-1", a }, { "server.worker-2", b } };
	GError *err = NULL;
	struct fk_group *g = fk_group_read(m, 2, 2, &err);
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(g != NULL);
	if (!g)
		return;
	CHECK(fk_group_total(g) == fk_count_from_u64(400));
	CHECK(fk_group_member_total(g, 0) == fk_count_from_u64(100));
	CHECK(fk_group_member_total(g, 1) == fk_count_from_u64(300));
	CHECK(fk_group_skipped(g, 0) == 0);
	CHECK(fk_group_skipped(g, 1) == 1);
	CHECK(fk_group_sampled(g) == 2);
	CHECK(fk_group_least(g) == 0);
	CHECK(fk_group_most(g) == 1);
	/* the merged profile: each stack summed, bytewise order */
	f = open_memstream(&text, &len);
	CHECK(fold_table_write(fk_group_table(g), f, 1, &err) == 0);
	fclose(f);
	CHECK_STR(text, "decode 10\ndecode;run;checksum_frame 150\n"
			"decode;run;decode_frame 160\ndecode;wait 80\n");
	free(text);
	/* top 2 by self in the group: decode_frame 160, checksum_frame 150
	 * (wait 80 left out) */
	CHECK(fk_group_nfns(g) == 2);
	if (fk_group_nfns(g) == 2) {
		const struct fk_group_fn *d = fk_group_fn(g, 0), *c = fk_group_fn(g, 1);

		CHECK_STR(d->frame, "decode_frame");
		CHECK(d->self == fk_count_from_u64(160));
		CHECK(near(d->share, 160.0 / 400));
		/* 100/300 in worker-2, 60/100 in worker-1 */
		CHECK(near(d->low, 100.0 / 300) && d->low_at == 1);
		CHECK(near(d->high, 0.6) && d->high_at == 0);
		CHECK_STR(c->frame, "checksum_frame");
		CHECK(near(c->share, 150.0 / 400));
		CHECK(near(c->low, 0) && c->low_at == 0);
		CHECK(near(c->high, 0.5) && c->high_at == 1);
	}
	fk_group_free(g);
	g_remove(a);
	g_remove(b);
	g_free(a);
	g_free(b);
}

static void test_edges(const char *dir)
{
	/* a member with no samples is no evidence: left out of the spread;
	 * ties go to the first member */
	char *a = put(dir, "e1.folded", "");
	char *b = put(dir, "e2.folded", "t;f 5\nt;g 5\n");
	char *c = put(dir, "e3.folded", "t;g 3\nt;f 3\n");
	struct fk_group_member m[] = { { "w-1", a }, { "w-2", b }, { "w-3", c } };
	struct fk_group_member gone[] = { { "w-1", a }, { "w-9", "/nonexistent/w9.folded" } };
	GError *err = NULL;
	struct fk_group *g = fk_group_read(m, 3, 10, &err);

	CHECK(g != NULL);
	if (g) {
		CHECK(fk_group_sampled(g) == 2);
		CHECK(fk_group_least(g) == 2 && fk_group_most(g) == 1);
		CHECK(fk_group_nfns(g) == 2);
		/* f and g both 8: by name */
		CHECK_STR(fk_group_fn(g, 0)->frame, "f");
		CHECK_STR(fk_group_fn(g, 1)->frame, "g");
		CHECK(near(fk_group_fn(g, 0)->low, 0.5) && fk_group_fn(g, 0)->low_at == 1);
		CHECK(near(fk_group_fn(g, 0)->high, 0.5) && fk_group_fn(g, 0)->high_at == 1);
		fk_group_free(g);
	}
	/* a file that cannot be read: an error naming it */
	g = fk_group_read(gone, 2, 10, &err);
	CHECK(g == NULL && err && strstr(err->message, "w9.folded"));
	g_clear_error(&err);
	g_remove(a);
	g_remove(b);
	g_remove(c);
	g_free(a);
	g_free(b);
	g_free(c);
}

int main(void)
{
	char *dir = g_dir_make_tmp("group-XXXXXX", NULL);

	CHECK(dir != NULL);
	if (!dir)
		return CHECK_DONE();
	test_spread(dir);
	test_edges(dir);
	g_rmdir(dir);
	g_free(dir);
	return CHECK_DONE();
}
