/*
 * roles.c - lib/capture/roles.c: which recorded process is which, and the
 * names of their files, by each of its rules; and what proc.c reads for
 * it (stat's starttime, the arguments one by one).
 */
#include "check.h"

#include "capture/proc.h"
#include "capture/roles.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>

#define ARGS(...) ((char *[]){ __VA_ARGS__, NULL })

/* Assigns roles and returns "name/role name/role ..." in the input's order. */
static char *assign(const struct fk_role_in *in, size_t n)
{
	struct fk_role *out = g_new0(struct fk_role, n);
	GString *s = g_string_new(NULL);

	fk_roles_assign(in, n, out);
	for (size_t i = 0; i < n; i++)
		g_string_append_printf(s, "%s%s/%s", i ? " " : "", out[i].name, out[i].role);
	fk_roles_clear(out, n);
	g_free(out);
	return g_string_free(s, FALSE);
}

static void check_assign(const struct fk_role_in *in, size_t n, const char *want)
{
	char *got = assign(in, n);

	CHECK_STR(got, want);
	g_free(got);
}

static void test_rules(void)
{
	/* the tree: seed 000's server, its workers started at one tick
	 * (numbered by pid then), listed in any order */
	const struct fk_role_in tree[] = {
		{ 4251, 4242, "server", ARGS("server", "--worker", "2"), 905 },
		{ 4242, 1, "server", ARGS("server", "--port", "8000"), 900 },
		{ 4250, 4242, "server", ARGS("server", "--worker", "1"), 905 },
	};
	check_assign(tree, 3, "server.worker-2/worker server.main/main server.worker-1/worker");

	/* start order, not pids, numbers them (pids wrapped around) */
	const struct fk_role_in wrapped[] = {
		{ 90000, 1, "srv", NULL, 10 },
		{ 300, 90000, "srv", NULL, 30 },
		{ 99999, 90000, "srv", NULL, 20 },
	};
	check_assign(wrapped, 3, "srv.main/main srv.worker-2/worker srv.worker-1/worker");

	/* the arguments name it (Chromium's --type=renderer, --role NAME) */
	const struct fk_role_in typed[] = {
		{ 10, 1, "chrome", ARGS("chrome"), 1 },
		{ 11, 10, "chrome", ARGS("chrome", "--type=renderer"), 2 },
		{ 12, 10, "chrome", ARGS("chrome", "--type=gpu-process"), 3 },
		{ 13, 10, "chrome", ARGS("chrome", "--type=renderer"), 4 },
		{ 14, 1, "db", ARGS("db", "--role", "replica"), 5 },
	};
	check_assign(typed, 5, "chrome.main/main chrome.renderer-1/renderer "
		     "chrome.gpu-process/gpu-process chrome.renderer-2/renderer db.replica/replica");

	/* siblings under a supervisor not recorded: the option only some
	 * have names their role */
	const struct fk_role_in siblings[] = {
		{ 21, 20, "app", ARGS("app", "--worker", "--port=1"), 3 },
		{ 22, 20, "app", ARGS("app", "--port=1"), 1 },
		{ 23, 20, "app", ARGS("app", "-worker"), 2 },
	};
	check_assign(siblings, 3, "app.worker-2/worker app.main/main app.worker-1/worker");

	/* two unrelated servers alike: two mains; no arguments known */
	const struct fk_role_in two[] = {
		{ 31, 1, "nginx", NULL, 7 },
		{ 30, 1, "nginx", NULL, 7 },
	};
	check_assign(two, 2, "nginx.main-2/main nginx.main-1/main");

	/* roles the arguments give only if they are plain words; names made
	 * safe as file names; a process its own parent is not its worker */
	const struct fk_role_in hostile[] = {
		{ 40, 1, "../x y", ARGS("x", "--role=../../etc"), 1 },
		{ 41, 40, ".hid", ARGS("x", "--type", "a/b"), 2 },
		{ 42, 42, NULL, ARGS("x", "--role=123"), 3 },
		{ 43, 1, "-opt", ARGS("x", "--role=" "abcdefghijabcdefghijabcdefghijabc"), 4 },
	};
	check_assign(hostile, 4, "_.._x_y.main/main _.hid.worker/worker "
		     "_unknown_.main/main _-opt.main/main");
}

static void test_proc(void)
{
	char *root = g_dir_make_tmp("fkroles-XXXXXX", NULL), *d, *f;
	struct fk_proc *p;

	d = g_build_filename(root, "77", NULL);
	CHECK(g_mkdir(d, 0755) == 0);
	f = g_build_filename(d, "stat", NULL);
	CHECK(g_file_set_contents(f, "77 (a) b) (c) S 5 77 77 0 -1 4194560 100 0 0 0 1 2 0 0 "
				  "20 0 1 0 123456 1000 10\n", -1, NULL));
	g_free(f);
	f = g_build_filename(d, "cmdline", NULL);
	CHECK(g_file_set_contents(f, "srv\0--worker\0\0x y\0", 18, NULL));
	g_free(f);
	p = fk_proc_read(root, 77, FK_PROC_CMDLINE);
	CHECK(p != NULL);
	if (p) {
		CHECK_STR(p->comm, "a) b) (c");
		CHECK(p->ppid == 5 && p->start == 123456);
		CHECK(p->argv && g_strv_length(p->argv) == 4);
		if (p->argv && g_strv_length(p->argv) == 4) {
			CHECK_STR(p->argv[1], "--worker");
			CHECK_STR(p->argv[2], "");
			CHECK_STR(p->argv[3], "x y");
		}
		CHECK_STR(p->cmdline, "srv --worker  x y");
		fk_proc_free(p);
	}
	/* a short stat line (older kernels' tests): no start, still read */
	{
		struct fk_proc q = { 0 };

		CHECK(fk_proc_parse_stat("9 (x) R 1 9", &q));
		CHECK(q.start == 0 && q.ppid == 1);
		g_free(q.comm);
	}
	f = g_strdup_printf("rm -rf '%s'", root);
	CHECK(system(f) == 0);
	g_free(f);
	g_free(d);
	g_free(root);
}

int main(void)
{
	test_rules();
	test_proc();
	return CHECK_DONE();
}
