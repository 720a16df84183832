/*
 * profiles-test - unit tests of the plugin's per-process profiles: file
 * names, which name a process gets, selection by name, microsecond
 * rounding, and the split files and index.tsv, checked byte for byte.
 * Built and run by test/scripts/plugin-unit.sh.
 */
#include "../profiles.c"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>


static void check_name(const char *comm, int pid, const char *want)
{
	char *got = profiles_file_name(comm, pid);

	if (strcmp(got, want) != 0) {
		fprintf(stderr, "profiles_file_name(\"%s\", %d) = \"%s\", want \"%s\"\n",
			comm, pid, got, want);
		check_failures++;
	}
	g_free(got);
}

static void check_file(const char *path, const char *want)
{
	char *got = NULL;

	if (!g_file_get_contents(path, &got, NULL, NULL) || strcmp(got, want) != 0) {
		fprintf(stderr, "%s:\n--- got\n%s--- want\n%s", path, got ? got : "(none)\n", want);
		check_failures++;
	}
	g_free(got);
}

static void add(struct profile *pr, const char *stack, fk_count c)
{
	fold_table_add(collapser_table(pr->c), stack, strlen(stack), c);
	pr->samples++;
}

/* the recording names process 200 only, with a tab and a backslash */
static const char *name_200(void *data, int pid)
{
	return pid == 200 ? "child\tproc\\" : NULL;
}

int main(void)
{
	struct collapse_opts co = { 0 };
	struct profiles *p = profiles_new(&co, true);
	struct profile *a, *b, *c;
	GRegex *re;
	FILE *f;
	char *desc;
	char dir[] = "/tmp/profiles-test-XXXXXX";
	char *sub, *path;
	uint64_t dropped = 0;
	size_t nfiles = 0;
	GError *err = NULL;
	GDir *d;
	const char *e;

	check_name("tt_media_server", 4242, "tt_media_server-4242.folded");
	check_name("my worker/1", 7, "my_worker_1-7.folded");
	check_name(".hidden", 1, "_.hidden-1.folded");
	check_name("..", 1, "_..-1.folded");
	check_name("", 3, "_-3.folded");
	check_name("a\tb\nc", 5, "a_b_c-5.folded");
	check_name("-rf", 6, "_-rf-6.folded");
	check_name("--help", 6, "_--help-6.folded");
	check_name(NULL, 8, "unknown-8.folded");

	/* a process is named by its main thread, never by another thread */
	a = profiles_get(p, 100, 101, "worker-1");
	CHECK(a->comm == NULL);
	CHECK(profiles_get(p, 100, 100, "server") == a);
	CHECK(strcmp(a->comm, "server") == 0);
	CHECK(profiles_get(p, 100, 102, "worker-2") == a);
	CHECK(strcmp(a->comm, "server") == 0);
	b = profiles_get(p, 200, 201, "child");
	CHECK(b != a);
	CHECK(b->comm == NULL);

	add(a, "server;main;wait", FK_COUNT_ONE * 2 + FK_COUNT_ONE / 2);
	add(a, "server;main;poll", FK_COUNT_ONE * 6);
	add(a, "server;main;tiny", FK_COUNT_ONE * 4 / 10);
	add(b, "child;run", FK_COUNT_ONE);

	/* the recording's name first; a process with no known name is [unknown] */
	CHECK(profiles_finish(p, name_200, NULL, NULL, false, &dropped) == 4);
	CHECK(strcmp(a->name, "server") == 0);
	CHECK(strcmp(b->name, "child\tproc\\") == 0);
	c = profiles_get(p, 300, 301, "helper");
	add(c, "helper;x", FK_COUNT_ONE / 10);
	CHECK(profiles_finish(p, name_200, NULL, NULL, false, &dropped) == 5);
	CHECK(dropped == 0);
	CHECK(c->name == NULL);
	desc = profiles_describe(p, 2);
	CHECK(strcmp(desc, "server (100), child\tproc\\ (200), ...") == 0);
	g_free(desc);

	/* comm= selects by that name: none named "helper" */
	re = g_regex_new("^(server|helper)$", G_REGEX_RAW, 0, NULL);
	CHECK(profiles_finish(p, name_200, NULL, re, false, &dropped) == 3);
	CHECK(a->selected && !b->selected && !c->selected);
	g_regex_unref(re);
	/* microseconds: 2.5 -> 3, 0.4 and 0.1 -> left out, and with them
	 * the process that had only 0.1 */
	CHECK(profiles_finish(p, name_200, NULL, NULL, true, &dropped) == 3);
	CHECK(dropped == 2);

	CHECK(g_mkdtemp(dir) != NULL);
	sub = g_strdup_printf("%s/out/deeper", dir);	/* created on demand */
	CHECK(profiles_write_split(p, sub, "us", &nfiles, &err) == 0);
	if (err) {
		fprintf(stderr, "%s\n", err->message);
		g_clear_error(&err);
		check_failures++;
	}
	CHECK(nfiles == 2);
	path = g_strdup_printf("%s/server-100.folded", sub);
	check_file(path, "server;main;poll 6\nserver;main;wait 3\n");
	g_free(path);
	path = g_strdup_printf("%s/child_proc_-200.folded", sub);
	check_file(path, "child;run 1\n");
	g_free(path);
	/* a control character and a backslash escaped; ends with a newline;
	 * unknown-300.folded rounded to nothing: not written, not listed */
	path = g_strdup_printf("%s/index.tsv", sub);
	check_file(path, "file\tcomm\tpid\tsamples\tshare\ttotal\tunit\n"
			 "server-100.folded\tserver\t100\t3\t0.9000\t9\tus\n"
			 "child_proc_-200.folded\tchild\\x09proc\\\\\t200\t1\t0.1000\t1\tus\n");
	g_free(path);
	/* nothing else: no temporary files left */
	d = g_dir_open(sub, 0, NULL);
	while (d && (e = g_dir_read_name(d)))
		CHECK(strcmp(e, "server-100.folded") == 0 || strcmp(e, "child_proc_-200.folded") == 0 ||
		      strcmp(e, "index.tsv") == 0);
	if (d)
		g_dir_close(d);
	/* merged, with comm= */
	re = g_regex_new("^serv", G_REGEX_RAW, 0, NULL);
	CHECK(profiles_finish(p, name_200, NULL, re, true, &dropped) == 2);
	g_regex_unref(re);
	path = g_strdup_printf("%s/merged", dir);
	f = fopen(path, "w");
	CHECK(f && profiles_write(p, f, path, &err) == 0);
	if (f)
		fclose(f);
	check_file(path, "server;main;poll 6\nserver;main;wait 3\n");
	g_free(path);
	profiles_free(p);

	/* an unwritable directory is an error naming it */
	p = profiles_new(&co, true);
	add(profiles_get(p, 1, 1, "x"), "x;y", FK_COUNT_ONE);
	profiles_finish(p, NULL, NULL, NULL, false, &dropped);
	path = g_strdup_printf("%s/server-100.folded/sub", sub);	/* under a file */
	CHECK(profiles_write_split(p, path, "ns", &nfiles, &err) < 0);
	CHECK(err && strstr(err->message, path));
	g_clear_error(&err);
	g_free(path);
	profiles_free(p);

	path = g_strdup_printf("rm -rf '%s'", dir);
	if (system(path) != 0)
		check_failures++;
	g_free(path);
	g_free(sub);
	return CHECK_DONE();
}
