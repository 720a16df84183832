/*
 * compare.c - the pieces of fold-report --base that a golden case shows
 * only in part: Markdown code spans (core/mdcode.h) for every kind of
 * hostile name, and lib/report/compare.c's pairing of processes and its
 * refusals.
 */
#include "check.h"

#include "core/mdcode.h"
#include "report/compare.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>

static const char *md(const char *s, size_t len, bool table)
{
	static GString *g;

	if (!g)
		g = g_string_new(NULL);
	g_string_truncate(g, 0);
	fk_md_code(g, s, len, table);
	return g->str;
}

static void test_mdcode(void)
{
	CHECK_STR(md("main", 4, false), "`main`");
	CHECK_STR(md("", 0, false), "*(empty)*");
	CHECK_STR(md("a`b", 3, false), "``a`b``");
	CHECK_STR(md("a``b`", 5, false), "``` a``b` ```");	/* ends in one */
	CHECK_STR(md("`x", 2, true), "`` `x ``");
	CHECK_STR(md(" x ", 3, false), "`  x  `");	/* blanks both ends */
	CHECK_STR(md("a|b", 3, true), "`a\\|b`");
	CHECK_STR(md("a|b", 3, false), "`a|b`");
	CHECK_STR(md("a\033[2Jb", 6, false), "`a\\x1b[2Jb`");
	CHECK_STR(md("\xff<script>", 9, false), "`\\xff<script>`");
	CHECK_STR(md("x\ny", 3, false), "`x\\x0ay`");
}

/* A directory with index.tsv and files: rows "FILE COMM PID SAMPLES TOTAL STACKS" */
static char *split_dir(const char *unit, const char *const *rows)
{
	char *dir = g_dir_make_tmp("fkcmp-XXXXXX", NULL);
	GString *idx = g_string_new("file\tcomm\tpid\tsamples\tshare\ttotal\tunit\n");

	for (size_t i = 0; rows[i]; i += 6) {
		char *path = g_build_filename(dir, rows[i], NULL);

		g_string_append_printf(idx, "%s\t%s\t%s\t%s\t0.5\t%s\t%s\n", rows[i], rows[i + 1],
				       rows[i + 2], rows[i + 3], rows[i + 4], unit);
		CHECK(g_file_set_contents(path, rows[i + 5], -1, NULL));
		g_free(path);
	}
	{
		char *path = g_build_filename(dir, "index.tsv", NULL);

		CHECK(g_file_set_contents(path, idx->str, -1, NULL));
		g_free(path);
	}
	g_string_free(idx, TRUE);
	return dir;
}

static void rm_dir(char *dir)
{
	char *cmd = g_strdup_printf("rm -rf '%s'", dir);

	CHECK(system(cmd) == 0);
	g_free(cmd);
	g_free(dir);
}

/* The comparison as JSON, or NULL with the error's message in *msg. */
static char *compare_json(const char *a, const char *b, char **msg)
{
	struct cmp_opts o = CMP_OPTS_INIT;
	struct cmp_side *s[2];
	GError *err = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	o.format = REPORT_JSON;
	*msg = NULL;
	s[0] = cmp_side_read(a, 0, &o, NULL, &err);
	s[1] = s[0] ? cmp_side_read(b, 1, &o, NULL, &err) : NULL;
	if (s[1] && cmp_pair(s[0], s[1], &err) == 0) {
		out = open_memstream(&buf, &len);
		CHECK(cmp_write(out, s[0], s[1], &o, NULL) == 0);
		fclose(out);
	}
	if (err) {
		*msg = g_strdup(err->message);
		g_error_free(err);
	}
	cmp_side_free(s[0]);
	cmp_side_free(s[1]);
	return buf;
}

static void test_pairing(void)
{
	/* two processes of one name each side, pids in another order */
	char *a = split_dir("ns", (const char *const[]){
		"srv-30.folded", "srv", "30", "1", "10", "srv;main;x 10\n",
		"srv-9.folded", "srv", "9", "1", "10", "srv;main;y 10\n", NULL });
	char *b = split_dir("ns", (const char *const[]){
		"srv-5.folded", "srv", "5", "1", "10", "srv;main;x 10\n",
		"srv-7.folded", "srv", "7", "1", "10", "srv;main;y 10\n",
		"other-8.folded", "other", "8", "1", "10", "other;z 10\n", NULL });
	char *us = split_dir("us", (const char *const[]){
		"srv-5.folded", "srv", "5", "1", "10", "srv;main;x 10\n", NULL });
	char *msg, *json = compare_json(a, b, &msg);

	CHECK(json && !msg);
	/* srv#1 is pid 9 then 5: y became x there, so both changed */
	CHECK(json && strstr(json, "{\"process\": \"srv#1\", \"profile\": \"on-cpu\""));
	CHECK(json && strstr(json, "{\"side\": \"new\", \"process\": \"other\"}"));
	free(json);
	json = compare_json(a, us, &msg);
	CHECK(!json && msg && strstr(msg, "counts in us (off-CPU), but "));
	g_free(msg);
	rm_dir(a);
	rm_dir(b);
	rm_dir(us);
}

int main(void)
{
	test_mdcode();
	test_pairing();
	return CHECK_DONE();
}
