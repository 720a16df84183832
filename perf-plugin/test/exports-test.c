/*
 * exports-test - unit tests of the plugin's speedscope output without
 * perf: ":FILE:LINE" split off names, and off-CPU waits placed when they
 * began, weighed when counted, dropped when never counted, in threads
 * that rename themselves; samples given by stack number ask for each
 * stack's key once and write what samples given by key write.  Built and
 * run by test/scripts/plugin-unit.sh.
 */
#include "../exports.c"
#include "../frames.c"
#include "../profiles.c"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>

static void check_split(const char *s, const char *name, const char *file, uint32_t line)
{
	const char *f = NULL;
	size_t flen = 0, n;
	uint32_t l = 0;

	n = split_srcline(s, strlen(s), &f, &flen, &l);
	CHECK(n == strlen(name) && strncmp(s, name, n) == 0);
	CHECK(file ? f && flen == strlen(file) && strncmp(f, file, flen) == 0 : !f);
	CHECK(l == line);
}

static void sample(struct exports *x, int pid, int tid, const char *comm,
		   const char *key, uint64_t weight)
{
	struct perf_dlfilter_sample ds = { .pid = pid, .tid = tid,
					   .event = "sched:sched_switch" };

	exports_sample(x, &ds, NULL, comm, NULL, key, strlen(key), NULL, 0, fk_count_from_u64(weight));
}

/* exports_key_fn: the key of stack number n, counting the calls */
static const char *const by_number[] = { "app;main;a", "app;main;b" };
static unsigned key_calls;

static void key_of(void *data, uint32_t stack, GString *key)
{
	(void)data;
	key_calls++;
	g_string_assign(key, by_number[stack == 1000]);
}

/* The speedscope file of one thread's samples, by stack number or by key. */
static char *by_stack(const char *dir, bool numbered)
{
	static const uint32_t stacks[] = { 1000, 7, 1000, 1000, 7 };
	char *path = g_build_filename(dir, "cpu.json", NULL), *json = NULL;
	struct frame_name_opts names = { 0 };
	struct export_opts o = { .speedscope = path, .names = &names };
	struct exports *x = exports_new(&o);
	struct perf_dlfilter_sample ds = { .pid = 10, .tid = 11, .event = "cpu-clock" };
	size_t nfiles;
	GError *err = NULL;

	CHECK(exports_keys_only(x));
	for (size_t i = 0; i < G_N_ELEMENTS(stacks); i++) {
		const char *key = by_number[stacks[i] == 1000];

		if (numbered)
			exports_sample_stack(x, &ds, NULL, "app", stacks[i], key_of, NULL,
					     fk_count_from_u64(i + 1));
		else
			exports_sample(x, &ds, NULL, "app", NULL, key, strlen(key), NULL, 0,
				       fk_count_from_u64(i + 1));
	}
	CHECK(exports_write(x, NULL, NULL, NULL, &nfiles, &err) == 0);
	exports_free(x);
	CHECK(g_file_get_contents(path, &json, NULL, NULL));
	unlink(path);
	g_free(path);
	return json;
}

int main(void)
{
	char *dir = g_dir_make_tmp("exports-test-XXXXXX", NULL);
	char *path = g_build_filename(dir, "off.json", NULL), *json = NULL;
	struct frame_name_opts names = { 0 };
	struct export_opts o = { .speedscope = path, .offcpu = true, .names = &names };
	struct exports *x;
	size_t nfiles;
	GError *err = NULL;

	check_split("work:prog.c:11", "work", "prog.c", 11);
	check_split("ns::f:src/a.cc:7", "ns::f", "src/a.cc", 7);
	check_split("plain", "plain", NULL, 0);
	check_split("std::map", "std::map", NULL, 0);
	check_split("x:12", "x:12", NULL, 0);		/* no file */
	check_split("f::9", "f::9", NULL, 0);		/* an empty file */

	x = exports_new(&o);
	CHECK(x != NULL);
	/* thread 11 waits in wait (2.5 us), in idle (never counted), in wait
	 * again (4 us); thread 12 once (1 us), counted before 11's second */
	sample(x, 10, 11, "app", "app;main;wait", 0);
	exports_credit(x, 11, 100, 2500);
	sample(x, 10, 11, "app", "app;main;idle", 0);
	sample(x, 10, 12, "app", "app;worker", 0);
	exports_credit(x, 12, 200, 1000);
	sample(x, 10, 11, "app2", "app2;main;wait", 0);	/* renamed */
	exports_credit(x, 11, 300, 4000);
	exports_credit(x, 11, 400, 9999);		/* nothing pending: ignored */
	exports_credit(x, 99, 400, 9999);		/* an unknown thread */
	CHECK(exports_write(x, NULL, NULL, NULL, &nfiles, &err) == 0 && nfiles == 0);
	exports_free(x);
	CHECK(g_file_get_contents(path, &json, NULL, NULL));
	if (json) {
		CHECK(strstr(json, "\"name\":\"off.json\""));
		CHECK(strstr(json, "\"name\":\"app2 10/11\",\"unit\":\"microseconds\",\"startValue\":0,\"endValue\":6.5,"));
		CHECK(strstr(json, "\"samples\":[\n[0,1],\n[0,1]],\n\"weights\":[2.5,4]}"));
		CHECK(strstr(json, "\"name\":\"app 10/12\""));
		CHECK(strstr(json, "\"name\":\"app2 10/11\"") < strstr(json, "\"name\":\"app 10/12\""));
		CHECK(strstr(json, "\"activeProfileIndex\":0,"));
		if (check_failures)
			fputs(json, stderr);
	}
	g_free(json);
	unlink(path);
	{
		char *want = by_stack(dir, false), *got = by_stack(dir, true);

		CHECK(key_calls == 2);	/* once per stack */
		CHECK(want && got && strcmp(want, got) == 0);
		/* a stack's samples in a row are one, weighed together */
		CHECK(want && strstr(want, "\"weights\":[1,2,7,5]"));
		if (check_failures && want)
			fputs(want, stderr);
		g_free(want);
		g_free(got);
	}
	rmdir(dir);
	g_free(path);
	g_free(dir);
	return CHECK_DONE();
}
