/*
 * exports-test - unit tests of the plugin's speedscope output without
 * perf: ":FILE:LINE" split off names, and off-CPU waits placed when they
 * began, weighed when counted, dropped when never counted, in threads
 * that rename themselves; samples given by stack number (stacks.h: no
 * text made) write what samples given by key write, whatever the names;
 * a file written on a second thread.  Built and
 * run by test/scripts/plugin-unit.sh.
 */
#include "../exports.c"
#include "../frames.c"
#include "../profiles.c"
#include "../stacks.c"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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

/*
 * Samples by stack number (stacks.h) against samples by key: stacks made
 * of name ids directly, as stacks_chain() makes them from a chain.  Each
 * is a thread, its process name, its frames' names root first (one name
 * may hold an inlined chain "a;b"; "" is an empty name) and, for two
 * processes of one name, its table.
 */
struct numbered {
	int pid, tid;
	const char *comm;
	const char *names[4];
	int table;
};

static const struct numbered numbered[] = {
	{ 10, 11, "app", { "main", "a" }, 0 },
	{ 10, 11, "app", { "main", "b" }, 0 },
	{ 10, 11, "app", { "main", "a" }, 0 },
	{ 10, 11, "app", { "main", "a" }, 0 },
	{ 10, 11, "app", { "main", "b" }, 0 },
	{ 10, 12, "app", { "main", "x;y", "z" }, 0 },	/* an inlined chain */
	{ 10, 12, "app", { "main", "x", "y;z" }, 0 },	/* the same text */
	{ 10, 12, "app", { "main", "", "z" }, 0 },	/* an empty name */
	{ 10, 12, "app", { "" }, 0 },			/* "app;": no frames */
	{ 10, 12, "app", { 0 }, 0 },			/* "app": none either */
	{ 20, 20, "app", { "main", "b" }, 1 },		/* another table's */
	{ 20, 20, "app", { "main", "c" }, 1 },
	{ 10, 11, "app", { "main", "d" }, 0 },
	{ 10, 11, "app2", { "main", "d" }, 0 },		/* renamed: merged */
	{ 10, 11, "app2", { "main", "x;y", "z" }, 0 },
	{ 20, 20, "app", { "main", "x", "y;z" }, 1 },
	{ 10, 11, "app", { "main", "e" }, 0 },
	{ 30, 30, "app", { "main", "b" }, 2 },		/* a text seen before */
	{ 10, 11, "app3", { "main", "e" }, 0 },		/* merged all the same */
};

/* The speedscope files of the samples above, by stack number or by key. */
static char *by_stack(const char *dir, bool by_number)
{
	char *path = g_build_filename(dir, "cpu.json", NULL), *split = g_build_filename(dir, "s", NULL);
	char *json = NULL;
	struct frame_name_opts names = { 0 };
	struct export_opts o = { .speedscope = path, .speedscope_split = true, .split = split,
				 .names = &names };
	struct exports *x = exports_new(&o);
	static const struct perf_dlfilter_fns fns = { 0 };
	struct frame_cache *fc = frame_cache_new(&fns, 127);
	struct stacks *sk = stacks_new(&names, fc, 127);
	struct fold_table *tables[3] = { fold_table_new(), fold_table_new(), fold_table_new() };
	GString *key = g_string_new(NULL), *all = g_string_new(NULL), *name = g_string_new(NULL);
	size_t nfiles;
	GError *err = NULL;
	const char *files[] = { "cpu.json", "s/app-10.speedscope.json", "s/app-20.speedscope.json",
				"s/app-30.speedscope.json" };

	mkdir(split, 0700);
	CHECK(exports_keys_only(x));
	for (size_t i = 0; i < G_N_ELEMENTS(numbered); i++) {
		const struct numbered *e = &numbered[i];
		struct perf_dlfilter_sample ds = { .pid = e->pid, .tid = e->tid, .event = "cpu-clock" };
		uint32_t nids[4], n = 0, proc, stack;

		proc = stacks_proc(sk, tables[e->table], e->comm, strlen(e->comm), false);
		while (n < 4 && e->names[n])
			n++;
		for (uint32_t k = 0; k < n; k++) {	/* leaf first */
			g_string_printf(name, ";%s", e->names[n - 1 - k]);
			nids[k] = fk_intern_id(sk->name_ids, name->str, name->len, NULL);
		}
		stack = stack_of(sk, proc, nids, n);
		stacks_key(sk, proc, stack, key);
		if (by_number)
			exports_sample_stack(x, &ds, NULL, e->comm, sk, stack, fk_count_from_u64(i + 1));
		else
			exports_sample(x, &ds, NULL, e->comm, NULL, key->str, key->len, NULL, 0,
				       fk_count_from_u64(i + 1));
	}
	CHECK(!exports_write_begin(x, NULL, NULL, NULL));	/* split= files: here */
	CHECK(exports_write(x, NULL, NULL, NULL, &nfiles, &err) == 0 && nfiles == 3);
	exports_free(x);
	for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
		char *f = g_build_filename(dir, files[i], NULL);

		CHECK(g_file_get_contents(f, &json, NULL, NULL));
		g_string_append_printf(all, "%s:\n%s", files[i], json ? json : "");
		g_free(json);
		unlink(f);
		g_free(f);
	}
	rmdir(split);
	stacks_free(sk);
	frame_cache_free(fc);
	fold_table_free(tables[0]);
	fold_table_free(tables[1]);
	fold_table_free(tables[2]);
	g_string_free(key, TRUE);
	g_string_free(name, TRUE);
	g_free(path);
	g_free(split);
	return g_string_free(all, FALSE);
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
	/* written on a second thread, the result waited for */
	CHECK(exports_write_begin(x, NULL, NULL, NULL));
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

		CHECK(want && got && strcmp(want, got) == 0);
		/* a stack's samples in a row are one, weighed together: 3 and
		 * 4; 13 and 14, 17 and 19, the renamed thread's frames made
		 * just before (18's known already) */
		CHECK(want && strstr(want, "\"weights\":[1,2,7,5,27,15,36]"));
		/* an inlined chain's frames are frames; one empty frame */
		CHECK(want && strstr(want, "{\"name\":\"x\"},\n{\"name\":\"y\"},\n{\"name\":\"z\"},\n{\"name\":\"\"}"));
		if (check_failures && want && got)
			fprintf(stderr, "by key:\n%s\nby number:\n%s\n", want, got);
		g_free(want);
		g_free(got);
	}
	rmdir(dir);
	g_free(path);
	g_free(dir);
	return CHECK_DONE();
}
