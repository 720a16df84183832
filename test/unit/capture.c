/* Unit tests for lib/capture/, without perf: choosing processes from a
 * fake /proc tree, the perf command lines and filter, perf's errors, and
 * the outputs fp-record writes and reads back, the threads' states. */
#include "check.h"
#include "capture/child.h"
#include "capture/outputs.h"
#include "capture/perfcmd.h"
#include "capture/proc.h"
#include "capture/session.h"
#include "capture/threads.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char *root;	/* the temporary directory of a test */

static char *at(const char *rel)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", root, rel);
	return buf;
}

static void put(const char *rel, const char *text, size_t len)
{
	char *path = g_strdup(at(rel)), *dir = g_path_get_dirname(path);

	g_mkdir_with_parents(dir, 0755);
	CHECK(g_file_set_contents(path, text, (gssize)len, NULL));
	g_free(dir);
	g_free(path);
}

#define PUT(rel, lit) put(rel, lit, sizeof(lit) - 1)

static char *slurp(const char *rel)
{
	char *s = NULL;

	if (!g_file_get_contents(at(rel), &s, NULL, NULL))
		s = g_strdup("(unreadable)");
	return s;
}

static char *join(char **v)
{
	return g_strjoinv(" ", v);
}

/* a process in the fake tree: stat, exe link (NULL: none), cmdline */
static void fake(int pid, const char *stat, const char *exe, const char *cmdline, size_t n)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	put(rel, stat, strlen(stat));
	if (exe) {
		snprintf(rel, sizeof(rel), "proc/%d/exe", pid);
		CHECK(symlink(exe, at(rel)) == 0);
	}
	snprintf(rel, sizeof(rel), "proc/%d/cmdline", pid);
	put(rel, cmdline, n);
}

static bool near_has(const struct fk_match *m, const char *needle)
{
	for (guint i = 0; i < m->near->len; i++)
		if (strstr(g_ptr_array_index(m->near, i), needle))
			return true;
	return false;
}

static bool chose(const struct fk_match *m, int pid)
{
	for (guint i = 0; i < m->chosen->len; i++)
		if (((struct fk_proc *)g_ptr_array_index(m->chosen, i))->pid == pid)
			return true;
	return false;
}

static void test_proc(void)
{
	char *proc = g_strdup(at("proc"));
	GPtrArray *all;
	struct fk_match m;
	struct fk_select sel = { .by = FK_BY_EXE, .root = proc, .exe = "/opt/app/server" };
	GHashTable *family;
	GPtrArray *added;
	GArray *tids;
	char *s;
	int pids[] = { 100, 999, 102 };

	fake(100, "100 (server) S 1 100 100 0", "/opt/app/server", "server\0--port\0", 14);
	fake(101, "101 (server) S 100 100 100 0", "/opt/app/server", "server\0--worker\0", 16);
	fake(200, "200 (bash) S 1 200 200 0", "/usr/bin/bash", "bash\0-c\0run /opt/app/server\0", 29);
	fake(201, "201 (sleep) S 200 200 200 0", "/usr/bin/sleep", "/opt/app/server\0" "10\0", 19);
	fake(300, "300 (server) S 1 300 300 0", "/opt/app/server (deleted)", "server\0", 7);
	fake(301, "301 (server) S 1 301 301 0", "/home/u/build/server", "./server\0", 9);
	fake(400, "400 (we ird) x) R 1 400 400 0", "/usr/bin/x", "x\0", 2);
	fake(500, "500 (kworker/0:1) I 2 0 0 0", NULL, "", 0);
	fake(600, "600 (server) S 101 100 100 0", "/opt/app/server", "server\0", 7);
	PUT("proc/100/task/100/stat", "");
	PUT("proc/100/task/103/stat", "");
	PUT("proc/100/task/104/stat", "");
	/* a thread: reachable by its id, without a stat of its own here */
	PUT("proc/102/status", "Name:\tserver\nTgid:\t100\nPid:\t102\n");
	PUT("proc/sys/kernel/ns_last_pid", "600\n");
	PUT("proc/notapid/stat", "");

	all = fk_proc_scan(proc, FK_PROC_ALL, NULL);
	CHECK(all && all->len == 9);
	CHECK(fk_proc_find(all, 400) && strcmp(fk_proc_find(all, 400)->comm, "we ird) x") == 0);
	CHECK(fk_proc_find(all, 400)->state == 'R' && fk_proc_find(all, 400)->ppid == 1);
	CHECK(fk_proc_find(all, 201) && strcmp(fk_proc_find(all, 201)->cmdline, "/opt/app/server 10") == 0);
	CHECK(fk_proc_find(all, 500) && !fk_proc_find(all, 500)->exe &&
	      fk_proc_find(all, 500)->exe_errno == ENOENT);
	CHECK(!fk_proc_find(all, 102));

	/* stat lines: any name, and nothing else */
	{
		static const char *const bad[] = { "", "1 (x", "1 x) S 1 1", "1 (x) S", "1 (x) S 1",
						   "1 (x) S a 1", "1 (x)S 1 1", "1 (x) S 1 99999999999",
						   "1 (x) " };
		struct fk_proc q = { 0 };

		CHECK(fk_proc_parse_stat("7 ((a)) b)) Z -1 0 rest", &q));
		CHECK(strcmp(q.comm, "(a)) b)") == 0 && q.state == 'Z' && q.ppid == -1 && q.pgid == 0);
		for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
			CHECK(!fk_proc_parse_stat(bad[i], &q));
		g_free(q.comm);
	}

	/* by executable: the server and its workers, nothing whose text names it */
	fk_proc_select(all, &sel, &m);
	CHECK(m.chosen->len == 3 && chose(&m, 100) && chose(&m, 101) && chose(&m, 600));
	CHECK(near_has(&m, "200 bash: its command line names 'server', but it runs /usr/bin/bash"));
	CHECK(near_has(&m, "201 sleep: its command line names 'server', but it runs /usr/bin/sleep"));
	CHECK(near_has(&m, "300 server: runs the file /opt/app/server had before it was replaced"));
	CHECK(near_has(&m, "--pid 300"));
	CHECK(near_has(&m, "301 server: runs another file of that name, /home/u/build/server"));
	CHECK(!near_has(&m, "500 "));
	CHECK(m.near->len == 4);
	fk_match_clear(&m);

	/* the caller and a load generator's group are never chosen */
	sel.skip_pid = 600;
	sel.skip_pgid = 100;
	fk_proc_select(all, &sel, &m);
	CHECK(m.chosen->len == 0);
	fk_match_clear(&m);

	/* by name: the comm or the executable's file name, never the text */
	sel = (struct fk_select){ .by = FK_BY_NAME, .root = proc, .name = "server" };
	fk_proc_select(all, &sel, &m);
	CHECK(m.chosen->len == 5 && chose(&m, 300) && chose(&m, 301) && !chose(&m, 201));
	CHECK(near_has(&m, "201 sleep: its command line names 'server'"));
	fk_match_clear(&m);
	sel.name = "Server";
	fk_proc_select(all, &sel, &m);
	CHECK(m.chosen->len == 0 && near_has(&m, "differs from 'Server' only in case"));
	fk_match_clear(&m);
	sel.name = "we ird) x";
	fk_proc_select(all, &sel, &m);
	CHECK(m.chosen->len == 1 && chose(&m, 400));
	fk_match_clear(&m);
	sel.name = "serv";
	fk_proc_select(all, &sel, &m);
	CHECK(m.chosen->len == 0 && near_has(&m, "100 server: its name contains 'serv'"));
	fk_match_clear(&m);

	/* by pid: missing ones are listed, a thread points at its process */
	sel = (struct fk_select){ .by = FK_BY_PID, .root = proc, .pids = pids, .npids = 3 };
	fk_proc_select(all, &sel, &m);
	CHECK(m.chosen->len == 1 && chose(&m, 100));
	CHECK(m.missing->len == 1 && g_array_index(m.missing, int, 0) == 999);
	CHECK(near_has(&m, "100 server: 102 is one of its threads: use --pid 100"));
	fk_match_clear(&m);

	/* children started after pid 100 was given out */
	family = g_hash_table_new(g_direct_hash, g_direct_equal);
	added = g_ptr_array_new();
	g_hash_table_add(family, GINT_TO_POINTER(100));
	CHECK(fk_proc_descendants(all, family, 100, added) == 2);
	CHECK(added->len == 2 && g_hash_table_contains(family, GINT_TO_POINTER(600)));
	g_hash_table_remove_all(family);
	g_ptr_array_set_size(added, 0);
	g_hash_table_add(family, GINT_TO_POINTER(100));
	/* 101 predates the recording: neither it nor its child 600 is followed */
	CHECK(fk_proc_descendants(all, family, 101, added) == 0);
	g_hash_table_destroy(family);
	g_ptr_array_unref(added);

	tids = fk_proc_tids(proc, 100);
	CHECK(tids->len == 3 && g_array_index(tids, int, 0) == 100 &&
	      g_array_index(tids, int, 2) == 104);
	g_array_unref(tids);
	tids = fk_proc_tids(proc, 777);
	CHECK(tids->len == 0);
	g_array_unref(tids);
	CHECK(fk_proc_tgid(proc, 102) == 100 && fk_proc_tgid(proc, 103) == 0);
	CHECK(fk_proc_last_pid(proc) == 600);
	CHECK(fk_proc_last_pid(at("nothing")) == -1);
	CHECK(fk_proc_read(proc, 777, 0) == NULL && errno == ENOENT);
	CHECK_STR((s = fk_proc_exe_name("/a/b (deleted)")), "b");
	g_free(s);
	CHECK_STR((s = fk_proc_exe_name("/usr/bin/x")), "x");
	g_free(s);
	g_ptr_array_unref(all);
	CHECK(fk_proc_scan(at("nothing"), 0, NULL) == NULL);
	g_free(proc);
}

static void test_filter(void)
{
	int tids[] = { 12, 7, 9, 3, 10, 11, 45, 46 };
	char *f;

	f = fk_switch_filter(tids, G_N_ELEMENTS(tids), 40, FK_FILTER_MAX);
	CHECK_STR(f, "prev_pid==3||next_pid==3||prev_pid==7||next_pid==7||"
		  "(prev_pid>=9&&prev_pid<=12)||(next_pid>=9&&next_pid<=12)||"
		  "prev_pid>40||next_pid>40");
	g_free(f);
	f = fk_switch_filter(tids, 2, -1, FK_FILTER_MAX);
	CHECK_STR(f, "prev_pid==7||next_pid==7||prev_pid==12||next_pid==12");
	g_free(f);
	f = fk_switch_filter(NULL, 0, 5, FK_FILTER_MAX);
	CHECK_STR(f, "prev_pid>5||next_pid>5");
	g_free(f);
	CHECK(fk_switch_filter(NULL, 0, -1, FK_FILTER_MAX) == NULL);
	/* the switches out alone: the stack dumps' */
	f = fk_switch_out_filter(tids, G_N_ELEMENTS(tids), 40, FK_FILTER_MAX);
	CHECK_STR(f, "prev_pid==3||prev_pid==7||(prev_pid>=9&&prev_pid<=12)||prev_pid>40");
	g_free(f);
	f = fk_switch_out_filter(NULL, 0, 5, FK_FILTER_MAX);
	CHECK_STR(f, "prev_pid>5");
	g_free(f);
	CHECK(fk_switch_out_filter(NULL, 0, -1, FK_FILTER_MAX) == NULL);
	/* the wake-ups of the same threads: the wakee's pid */
	f = fk_wake_filter(tids, G_N_ELEMENTS(tids), 40, FK_FILTER_MAX);
	CHECK_STR(f, "pid==3||pid==7||(pid>=9&&pid<=12)||pid>40");
	g_free(f);
	/* too long for the kernel: none, and perf records every switch */
	CHECK(fk_switch_filter(tids, G_N_ELEMENTS(tids), 40, 60) == NULL);
	{
		int many[400];

		for (int i = 0; i < 400; i++)
			many[i] = 1000 + 2 * i;	/* no runs to merge */
		CHECK(fk_switch_filter(many, 400, 2000, FK_FILTER_MAX) == NULL);
		for (int i = 0; i < 400; i++)
			many[i] = 1000 + i;	/* one run */
		f = fk_switch_filter(many, 400, 2000, FK_FILTER_MAX);
		CHECK_STR(f, "(prev_pid>=1000&&prev_pid<=1399)||(next_pid>=1000&&"
			  "next_pid<=1399)||prev_pid>2000||next_pid>2000");
		g_free(f);
	}
}

static void test_commands(void)
{
	struct fk_record_cmd c = { .perf = "perf", .data = "d/on.data", .ctl_fd = 3,
				   .ack_fd = 4, .freq = 99 };
	int pids[] = { 12, 15 };
	char **v, *s, *want;
	unsigned mkb = 8192;

	v = fk_perf_record_on(&c, pids, 2);
	CHECK_STR((s = join(v)), "perf record -e cpu-clock -F 99 --call-graph fp -p 12,15 "
		  "-o d/on.data --delay=-1 --control fd:3,4 --no-buildid --no-buildid-cache");
	g_free(s);
	g_strfreev(v);
	c.cg = FK_CG_DWARF;
	c.freq = 999;
	v = fk_perf_record_on(&c, pids, 1);
	CHECK_STR((s = join(v)), "perf record -e cpu-clock -F 999 --call-graph dwarf -p 12 "
		  "-o d/on.data --delay=-1 --control fd:3,4 --no-buildid --no-buildid-cache");
	g_free(s);
	g_strfreev(v);
	/* off-CPU stacks are frame-pointer ones whatever on-CPU uses */
	c.data = "d/off.data";
	c.mmap_kb = mkb;
	v = fk_perf_record_off(&c, "prev_pid>5||next_pid>5");
	s = join(v);
	want = g_strdup_printf("perf record -e sched:sched_switch --filter prev_pid>5||next_pid>5 "
			       "-e sched:sched_waking -e sched:sched_wakeup_new "
			       "-m %uK -c 1 --call-graph fp -a --switch-events -o d/off.data --delay=-1 "
			       "--control fd:3,4 --no-buildid --no-buildid-cache", mkb);
	CHECK_STR(s, want);
	g_free(want);
	g_free(s);
	g_strfreev(v);
	/* with the stack dumps: a second event, each with its filter */
	c.stack_dump = 1024;
	c.dump_filter = "prev_pid>5";
	c.wake_filter = "pid>5";
	v = fk_perf_record_off(&c, "prev_pid>5||next_pid>5");
	s = join(v);
	want = g_strdup_printf("perf record -e sched:sched_switch --filter prev_pid>5||next_pid>5 "
			       "-e sched:sched_switch/call-graph=dwarf,stack-size=1024,max-stack=1/ "
			       "--filter prev_pid>5 --user-regs=bp -e sched:sched_waking --filter pid>5 "
			       "-e sched:sched_wakeup_new --filter pid>5 -m %uK -c 1 --call-graph fp -a "
			       "--switch-events -o d/off.data --delay=-1 --control fd:3,4 --no-buildid "
			       "--no-buildid-cache", mkb);
	CHECK_STR(s, want);
	g_free(want);
	g_free(s);
	g_strfreev(v);
	c.stack_dump = 0;
	c.wake_filter = NULL;
	CHECK(fk_offcpu_buffer_kb(1) == 8192 && fk_offcpu_buffer_kb(8) == 8192);
	CHECK(fk_offcpu_buffer_kb(16) == 4096 && fk_offcpu_buffer_kb(64) == 1024);
	CHECK(fk_offcpu_buffer_kb(1024) == 512);
	v = fk_perf_record_off(&c, NULL);
	s = join(v);
	want = g_strdup_printf("perf record -e sched:sched_switch -e sched:sched_waking "
			       "-e sched:sched_wakeup_new -m %uK -c 1 --call-graph fp -a "
			       "--switch-events -o d/off.data --delay=-1 --control fd:3,4 --no-buildid "
			       "--no-buildid-cache", mkb);
	CHECK_STR(s, want);
	g_free(want);
	g_free(s);
	g_strfreev(v);
	v = fk_perf_fold("/usr/bin/perf", "d/off.data", "/x/foldkit.so", "offcpu", "t/off");
	CHECK_STR((s = join(v)), "/usr/bin/perf script -i d/off.data --dlfilter /x/foldkit.so "
		  "--dlarg offcpu --dlarg split=t/off");
	g_free(s);
	g_strfreev(v);
	v = fk_perf_fold("perf", "d/on.data", "f.so", NULL, "t/on");
	CHECK_STR((s = join(v)), "perf script -i d/on.data --dlfilter f.so --dlarg split=t/on");
	g_free(s);
	g_strfreev(v);
	v = fk_perf_script("perf", "d/on.data");
	CHECK_STR((s = join(v)), "perf script -i d/on.data -F +pid");
	g_free(s);
	g_strfreev(v);

	CHECK_STR((s = fk_perf_version("perf version 6.1.187\n")), "6.1.187");
	g_free(s);
	CHECK_STR((s = fk_perf_version("perf version 5.10.0-rc3.g1234\n")), "5.10.0");
	g_free(s);
	CHECK(fk_perf_version("WARNING: perf not found for kernel 6.1\n") == NULL);
	CHECK(fk_perf_version(NULL) == NULL);
}

/* perf's own words, as perf 6.1 prints them */
static void test_failures(void)
{
	struct fk_perf_context ctx = { .offcpu = true, .paranoid = 2, .version = "6.1.187" };
	char *m;

	m = fk_perf_failure("event syntax error: 'sched:sched_switch'\n"
			    "                     \\___ can't access trace events\n\n"
			    "Error:\tNo permissions to read /sys/kernel/tracing/events/sched/sched_switch\n"
			    "Hint:\tTry 'sudo mount -o remount,mode=755 /sys/kernel/tracing/'\n", &ctx);
	CHECK(strstr(m, "tracefs is not readable by you") && strstr(m, "run fp-record as root"));
	CHECK(strstr(m, "--on"));
	g_free(m);
	m = fk_perf_failure("Error:\nAccess to performance monitoring and observability "
			    "operations is limited.\nConsider adjusting "
			    "/proc/sys/kernel/perf_event_paranoid setting\n", &ctx);
	CHECK(strstr(m, "kernel.perf_event_paranoid is 2 and fp-record is not root"));
	CHECK(strstr(m, "sudo sysctl -w kernel.perf_event_paranoid=-1"));
	g_free(m);
	ctx.offcpu = false;
	ctx.root = true;
	ctx.paranoid = INT_MIN;
	m = fk_perf_failure("Error: Permission denied\n", &ctx);
	CHECK(strstr(m, "on-CPU recording: kernel.perf_event_paranoid is unknown;"));
	CHECK(strstr(m, "kernel.perf_event_paranoid=1"));
	g_free(m);
	m = fk_perf_failure("Couldn't create thread/CPU maps: No such process\n", &ctx);
	CHECK_STR(m, "a selected process exited before the on-CPU recording began "
		  "(perf: no such process)");
	g_free(m);
	m = fk_perf_failure("  Error: unknown option `control'\n\n Usage: perf record\n", &ctx);
	CHECK(strstr(m, "perf 6.1.187 cannot start a recording disabled") &&
	      strstr(m, "perf 5.10 or later"));
	g_free(m);
	m = fk_perf_failure("event syntax error: 'sched:sched_switch'\n  unknown tracepoint\n", &ctx);
	CHECK(strstr(m, "sched:sched_switch tracepoint is not available"));
	g_free(m);
	m = fk_perf_failure("\nsomething odd\nError: it broke\n", &ctx);
	CHECK_STR(m, "perf record (on-CPU) failed: Error: it broke");
	g_free(m);
	m = fk_perf_failure("", &ctx);
	CHECK_STR(m, "perf record (on-CPU) failed without saying why (perf record -v tells more)");
	g_free(m);
}

static void test_stems(void)
{
	static const struct { const char *comm; int pid; const char *want; } cases[] = {
		{ "tt_media_server", 4242, "tt_media_server-4242" },
		{ "a b/c", 1, "a_b_c-1" },
		{ ".hidden", 2, "_.hidden-2" },
		{ "-rf", 3, "_-rf-3" },
		{ "", 5, "_-5" },
		{ NULL, 6, "_-6" },
		{ "caf\xc3\xa9", 7, "caf__-7" },
		{ "x\033[2J", 8, "x__2J-8" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char *s = fk_out_stem(cases[i].comm, cases[i].pid);

		CHECK_STR(s, cases[i].want);
		g_free(s);
	}
}

static void test_split_by_pid(void)
{
	GError *err = NULL;
	uint64_t unsplit = 0;
	char *s, *in;
	struct fk_outdir *dir;

	/* fp-collapse --pid: "comm-PID" roots; a comm may hold '-' */
	PUT("whole.folded", "main-thread-10;main;work 5\n"
	    "io-10;main;read 2\n"
	    "worker-11;loop 3\n"
	    "worker-11;loop 4\n"
	    "nopid;x 1\n"
	    "bad-12x;y 1\n"
	    "-13;z 1\n"
	    "a 1-14 5\n"
	    "worker-11;loop 1 2\n"
	    "not a line\n");
	in = g_strdup(at("whole.folded"));
	dir = fk_outdir_create(at("split"), 0, &err);
	CHECK(dir != NULL);
	CHECK(fk_split_by_pid(in, dir, "ns", &unsplit, &err) == 0);
	CHECK(!err);
	CHECK(unsplit == 5);
	CHECK_STR((s = slurp("split/main-thread-10.folded")), "io;main;read 2\nmain-thread;main;work 5\n");
	g_free(s);
	CHECK_STR((s = slurp("split/worker-11.folded")), "worker;loop 7\n");
	g_free(s);
	CHECK_STR((s = slurp("split/index.tsv")),
		  "file\tcomm\tpid\tsamples\tshare\ttotal\tunit\n"
		  "main-thread-10.folded\tmain-thread\t10\t-\t0.3684\t7\tns\n"
		  "worker-11.folded\tworker\t11\t-\t0.3684\t7\tns\n"
		  "a_1-14.folded\ta 1\t14\t-\t0.2632\t5\tns\n");
	g_free(s);
	/* the root alone cannot read back as a differential line */
	CHECK_STR((s = slurp("split/a_1-14.folded")), "a_1 5\n");
	g_free(s);
	/* every name is new: a second split into the directory is refused */
	CHECK(fk_split_by_pid(in, dir, "ns", &unsplit, &err) != 0 && err);
	g_clear_error(&err);
	g_free(in);
	in = g_strdup(at("nothing.folded"));
	CHECK(fk_split_by_pid(in, dir, "ns", &unsplit, &err) != 0 && err);
	g_clear_error(&err);
	g_free(in);
	fk_outdir_free(dir);
}

static void test_sums(void)
{
	struct fk_folded_sum s;
	GError *err = NULL;
	char *h;

	const char *unresolved[] = { "[unknown]", "[server]", NULL };

	PUT("sum.folded", "a;[unknown];b 5\n"
	    "a;b 3\n"
	    "[unknown] 2\n"
	    "a;x[unknown] 7\n"
	    "a;[unknown] 1.5\n"
	    "a;[server];[server] 4\n"
	    "a;[server]x 1\n"
	    "junk\n");
	CHECK(fk_folded_sum(at("sum.folded"), unresolved, &s, &err) == 0);
	CHECK(s.total == fk_count_from_u64(23) + FK_COUNT_ONE / 2);
	CHECK(s.unresolved == fk_count_from_u64(12) + FK_COUNT_ONE / 2);
	CHECK(s.stacks == 7 && s.skipped == 1);
	CHECK(fk_folded_sum(at("sum.folded"), NULL, &s, &err) == 0 && s.unresolved == 0);
	CHECK(fk_folded_sum(at("missing.folded"), NULL, &s, &err) != 0 && err);
	g_clear_error(&err);

	CHECK_STR((h = fk_out_human(fk_count_from_u64(1234567890), FK_ON_UNIT)), "1.235 s");
	g_free(h);
	CHECK_STR((h = fk_out_human(fk_count_from_u64(56700000), FK_ON_UNIT)), "56.7 ms");
	g_free(h);
	CHECK_STR((h = fk_out_human(fk_count_from_u64(4203312), FK_OFF_UNIT)), "4.203 s");
	g_free(h);
	CHECK_STR((h = fk_out_human(0, FK_OFF_UNIT)), "0 ns");
	g_free(h);
}

static void test_index(void)
{
	struct fk_out_row a = {
		.pid = 10, .comm = "server", .exe = "/srv/server", .on = true, .off = true,
		.on_sum = { .total = fk_count_from_u64(1200) },
		.off_sum = { .total = fk_count_from_u64(53) },
		.on_folded = "on/server-10.folded", .on_svg = "on/server-10.svg",
		.off_folded = "off/server-10.folded", .off_svg = "off/server-10.svg",
		.on_html = "on/server-10.html",
		.role = "main", .ppid = 1,
		/* a blank, a tab, a backslash and an empty argument, each
		 * written so that the cell splits back at blanks exactly */
		.argv = (char *[]){ "/srv/server", "--name", "a b\tc\\", "", "x", NULL },
	};
	struct fk_out_row b = { .pid = 11, .comm = "we\tird\033", .on = true };
	GPtrArray *rows = g_ptr_array_new();
	char *path = g_strdup(at("index.tsv")), *s;
	FILE *f = fopen(path, "w");
	GError *err = NULL;

	g_ptr_array_add(rows, &a);
	g_ptr_array_add(rows, &b);
	CHECK(f && fk_index_write(f, rows, path, &err) == 0);
	fclose(f);
	CHECK_STR((s = slurp("index.tsv")),
		  "process\tpid\texe\ton_cpu\ton_unit\toff_cpu\toff_unit\ton_folded\ton_svg\t"
		  "off_folded\toff_svg\ton_html\toff_html\trole\tppid\targs\t"
		  "on_speedscope\toff_speedscope\n"
		  "server\t10\t/srv/server\t1200\tns\t53\tus\ton/server-10.folded\t"
		  "on/server-10.svg\toff/server-10.folded\toff/server-10.svg\t"
		  "on/server-10.html\t-\tmain\t1\t/srv/server --name a\\x20b\\x09c\\\\  x\t-\t-\n"
		  "we\\x09ird\\x1b\t11\t-\t0\tns\t-\tus\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n");
	g_free(s);
	f = fopen("/dev/full", "w");
	if (f) {
		CHECK(fk_index_write(f, rows, "/dev/full", &err) != 0);
		CHECK(err && strstr(err->message, "/dev/full: write error"));
		g_clear_error(&err);
		fclose(f);
	}
	g_ptr_array_unref(rows);
	g_free(path);
}

static void test_args(void)
{
	static const char *const bad[] = { "", ",", "1,", "1,,2", "-3", "+3", "0", "12x",
					   "2147483648", " 5" };
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(int));
	char *bin = g_strdup(at("build/bin")), *inst = g_strdup(at("inst")), *p;

	CHECK(fk_proc_parse_pids("1234,1240,7", pids) && pids->len == 3 &&
	      g_array_index(pids, int, 1) == 1240);
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_array_set_size(pids, 0);
		CHECK(!fk_proc_parse_pids(bad[i], pids));
	}
	g_array_unref(pids);

	/* given first, then the build tree, then the installed one */
	CHECK(fk_capture_find_plugin(NULL, bin, inst) == NULL);
	PUT("inst/foldkit.so", "x");
	p = fk_capture_find_plugin(NULL, bin, inst);
	CHECK(p && g_str_has_suffix(p, "/inst/foldkit.so"));
	g_free(p);
	PUT("build/perf-plugin/foldkit.so", "x");
	g_mkdir_with_parents(bin, 0755);
	p = fk_capture_find_plugin(NULL, bin, inst);
	CHECK(p && g_str_has_suffix(p, "/build/perf-plugin/foldkit.so") && !strstr(p, ".."));
	g_free(p);
	CHECK_STR((p = fk_capture_find_plugin("/my/foldkit.so", bin, inst)), "/my/foldkit.so");
	g_free(p);
	g_free(bin);
	g_free(inst);
}

static void test_child(void)
{
	const char *ok[] = { "sh", "-c", "exit 3", NULL };
	const char *group[] = { "sh", "-c", "sleep 60 & sleep 60", NULL };
	struct fk_spawn how = { .argv = ok, .in_fd = -1, .out_fd = -1, .err_fd = -1 };
	struct fk_child *c;
	GError *err = NULL;
	char *t;
	int pid;

	c = fk_child_spawn(&how, &err);
	CHECK(c && fk_child_wait(c, 10000, NULL));
	CHECK(!fk_child_ok(c, 0));
	CHECK_STR((t = fk_child_exit_text(c)), "exited with status 3");
	g_free(t);
	fk_child_free(c);
	/* a group is ended whole: the leader and what it started */
	how.argv = group;
	how.own_group = true;
	c = fk_child_spawn(&how, &err);
	CHECK(c != NULL);
	pid = fk_child_pid(c);
	CHECK(!fk_child_wait(c, 200, NULL));
	CHECK(kill(-pid, 0) == 0);
	fk_child_end(c, SIGTERM, 2000);
	CHECK(fk_child_exited(c) && fk_child_ok(c, SIGTERM));
	CHECK(kill(-pid, 0) != 0);
	fk_child_free(c);
	how.argv = (const char *[]){ "/nonexistent/program", NULL };
	CHECK(fk_child_spawn(&how, &err) == NULL && err);
	g_clear_error(&err);
}

/* threads.h: a fake /proc's threads as the window opens, the plugin's
 * table read, the two merged into threads.tsv's rows */
static void test_threads(void)
{
	char *proc = g_strdup(at("tproc"));
	int pids[] = { 700, 800 };
	GPtrArray *start, *tsv, *rows;
	GError *err = NULL;
	GString *out = g_string_new(NULL);
	uint64_t us = 0;
	char *w;

	PUT("tproc/700/task/700/stat", "700 (master) S 1 700 700 0");
	PUT("tproc/700/task/700/syscall", "232 0x3 0x7ffd 0x200 0xffffffff 0x0 0x0 0x7ffd 0x7f\n");
	PUT("tproc/700/task/700/wchan", "do_epoll_wait");
	PUT("tproc/700/task/700/stack", "[<0>] ep_poll+0x4d3/0x5f0\n[<0>] do_epoll_wait+0x1/0x2\n");
	PUT("tproc/700/task/701/stat", "701 (disk io) D 1 700 700 0");
	PUT("tproc/700/task/701/wchan", "0");
	PUT("tproc/700/task/702/stat", "702 (spin\ter) R 1 700 700 0");
	PUT("tproc/700/task/702/syscall", "running\n");
	PUT("tproc/700/task/703/stat", "703 (gone) Z 1 700 700 0");
	PUT("tproc/700/task/704/stat", "704 (worker) S 1 700 700 0");
	PUT("tproc/800/task/800/stat", "800 (other) S 1 800 800 0");
	start = fk_threads_at_start(proc, pids, 1);
	CHECK(start->len == 4);	/* the zombie left out, 800 not asked for */
	w = ((struct fk_thread_start *)g_ptr_array_index(start, 0))->waiting;
	CHECK_STR(w, "S syscall=epoll_wait wchan=do_epoll_wait stack=ep_poll<-do_epoll_wait");
	CHECK_STR(((struct fk_thread_start *)g_ptr_array_index(start, 1))->waiting, "D unreadable");
	CHECK_STR(((struct fk_thread_start *)g_ptr_array_index(start, 2))->waiting,
		  "R syscall=running");
	CHECK_STR(((struct fk_thread_start *)g_ptr_array_index(start, 2))->comm, "spin\\x09er");
	w = fk_thread_wait_text('S', "x\ty", "-1 0x1 0x2\n", "[<0>] a+1/2\n\n[<0>] \n");
	CHECK_STR(w, "S syscall=none wchan=x stack=a");
	g_free(w);
	w = fk_thread_wait_text('\n', NULL, "99999 0 0", NULL);
	CHECK_STR(w, "? syscall=99999");
	g_free(w);

	/* the plugin's table: 704 switched (its own numbers), 705 was made in
	 * the window, 900 is another process's */
	{
		const char *text = FK_STATES_HEADER "\n700\t704\tworker\t10\t20\t60\t10\n"
				   "700\t705\tnew\t5\t5\t0\t0\n900\t900\tx\t1\t0\t0\t0\n";

		tsv = fk_states_parse(text, strlen(text), "s.tsv", &err);
	}
	CHECK(tsv && tsv->len == 3 && !err);
	rows = fk_threads_merge(tsv, start, pids, 1, 100, &err);
	CHECK(rows && rows->len == 5);
	fk_threads_format(out, rows);
	CHECK_STR(out->str, FK_THREADS_HEADER "\n"
		  "700\t700\tmaster\t0\t0\t100\t0\tS syscall=epoll_wait wchan=do_epoll_wait "
		  "stack=ep_poll<-do_epoll_wait\n"
		  "700\t701\tdisk io\t0\t0\t0\t100\tD unreadable\n"
		  "700\t702\tspin\\x09er\t100\t0\t0\t0\tR syscall=running\n"
		  "700\t704\tworker\t10\t20\t60\t10\t-\n"
		  "700\t705\tnew\t5\t5\t0\t0\t-\n");
	g_ptr_array_unref(rows);
	/* longer than the window: no rows */
	CHECK(!fk_threads_merge(tsv, start, pids, 1, 99, &err) && err);
	g_clear_error(&err);
	g_ptr_array_unref(tsv);
	/* bad tables, each naming the file and line */
	{
		static const char *const bad[] = {
			"pid\ttid\n",
			FK_STATES_HEADER "\n1\t2\tx\t1\t2\t3\n",
			FK_STATES_HEADER "\n1\t2\tx\t1\t2\t3\t4\t5\n",
			FK_STATES_HEADER "\nx\t2\tx\t1\t2\t3\t4\n",
			FK_STATES_HEADER "\n1\t0\tx\t1\t2\t3\t4\n",
			FK_STATES_HEADER "\n1\t2\tx\t1\t-2\t3\t4\n",
			FK_STATES_HEADER "\n1\t2\tx\t1\t2\t3\t18446744073709551616\n",
			FK_STATES_HEADER "\n1\t2\ta\033b\t1\t2\t3\t4\n",
			FK_STATES_HEADER "\n1\t2\tx\t1\t2\t3\t4",
		};

		for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
			tsv = fk_states_parse(bad[i], strlen(bad[i]), "s.tsv", &err);
			CHECK(!tsv && err && g_str_has_prefix(err->message, "s.tsv:"));
			g_clear_error(&err);
		}
	}
	/* tid -1 in a recorded process: no rows; in another, no matter */
	{
		const char *a = FK_STATES_HEADER "\n700\t-1\tx\t1\t0\t0\t0\n";
		const char *b = FK_STATES_HEADER "\n900\t-1\tx\t1\t0\t0\t0\n";

		tsv = fk_states_parse(a, strlen(a), "s.tsv", NULL);
		CHECK(tsv && !fk_threads_merge(tsv, start, pids, 1, 100, &err) && err);
		g_clear_error(&err);
		g_ptr_array_unref(tsv);
		tsv = fk_states_parse(b, strlen(b), "s.tsv", NULL);
		CHECK(tsv && (rows = fk_threads_merge(tsv, start, pids, 1, 100, NULL)) &&
		      rows->len == 4);
		g_ptr_array_unref(rows);
		g_ptr_array_unref(tsv);
	}
	CHECK(fk_states_window_us("x\nfoldkit: states of 3 threads over 0.001000 s, 1000 us "
				  "(times in us)\n", &us) && us == 1000);
	CHECK(!fk_states_window_us("foldkit: states of 3 threads over 0.001000 s\n, 1 us", &us));
	g_string_free(out, TRUE);
	g_ptr_array_unref(start);
	g_free(proc);
}

static int rm_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	return remove(path);
}

int main(void)
{
	char tmpl[] = "/tmp/capture-test-XXXXXX";

	root = g_mkdtemp(tmpl);
	CHECK(root != NULL);
	if (!root)
		return CHECK_DONE();
	test_proc();
	test_filter();
	test_commands();
	test_failures();
	test_stems();
	test_split_by_pid();
	test_sums();
	test_index();
	test_args();
	test_child();
	test_threads();
	CHECK(nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0);
	return CHECK_DONE();
}
