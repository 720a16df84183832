/*
 * offwake-test - unit tests of the plugin's off-wake accounting, without
 * perf: sched_waking records built by hand for the kernel's format and one
 * with "pid" moved and resized, decoded by field name; hand-made
 * timelines of switch-outs, runs and wakings give offwaketime's layout
 * (the waker's stack reversed after "--") and the blocked times, and
 * leave out the waits no waking ended, late records and short waits.
 * Built and run by test/scripts/plugin-unit.sh.
 */
#include "../offwake.c"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>

static const char kernel_format[] =
	"name: sched_waking\nID: 375\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"comm=%s pid=%d\", REC->comm, REC->pid\n";

/* "pid" first, as 8 bytes */
static const char moved_format[] =
	"name: sched_waking\nID: 9\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
	"\tfield:long pid;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield:char comm[16];\toffset:16;\tsize:16;\tsigned:0;\n\n"
	"print fmt: \"pid=%ld\", REC->pid\n";

static const char no_pid_format[] =
	"name: sched_waking\nID: 9\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\n"
	"print fmt: \"comm=%s\", REC->comm\n";

static char *write_temp(const char *text)
{
	char *path = g_build_filename(g_get_tmp_dir(), "offwake-test-XXXXXX", NULL);
	int fd = g_mkstemp(path);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror("offwake-test: temporary file");
		exit(1);
	}
	close(fd);
	return path;
}

static struct offwake *make(const char *format, uint64_t min_ns)
{
	char *path = write_temp(format);
	GError *err = NULL;
	struct offwake *w = offwake_new(path, min_ns, &err);

	if (!w) {
		fprintf(stderr, "offwake-test: %s\n", err->message);
		g_error_free(err);
	}
	unlink(path);
	g_free(path);
	return w;
}

static void test_decode(void)
{
	struct offwake *w = make(kernel_format, 0), *m = make(moved_format, 0);
	unsigned char raw[40] = { 0 };
	int32_t pid = 4321;
	int64_t neg = -1;
	int tid = 0;

	CHECK(w && m);
	if (!w || !m)
		return;
	memcpy(raw + 24, &pid, 4);
	CHECK(offwake_decode(w, raw, 36, &tid) && tid == 4321);
	CHECK(offwake_decode(w, raw, 28, &tid));
	/* too short for the field: refused, not read past */
	CHECK(!offwake_decode(w, raw, 27, &tid));
	CHECK(!offwake_decode(w, NULL, 0, &tid));
	memcpy(raw + 8, &neg, 8);
	CHECK(offwake_decode(m, raw, 16, &tid) && tid == -1);
	CHECK(!offwake_decode(m, raw, 15, &tid));
	offwake_free(w);
	offwake_free(m);
}

static void test_bad_formats(void)
{
	char *path = write_temp(no_pid_format);
	GError *err = NULL;

	CHECK(offwake_new(path, 0, &err) == NULL);
	CHECK(err && strstr(err->message, "no numeric field 'pid'"));
	g_clear_error(&err);
	unlink(path);
	g_free(path);
	CHECK(offwake_new("/nonexistent/format", 0, &err) == NULL);
	CHECK(err && strstr(err->message, "/nonexistent/format"));
	g_clear_error(&err);
}

static fk_count total(struct fold_table *t, const char *stack)
{
	struct fold_entry *e = fold_table_find(t, stack, strlen(stack));

	return e ? e->count[0] : 0;
}

#define US(n) ((fk_count)(n) * FK_COUNT_ONE)

static void test_waits(void)
{
	struct offwake *w = make(kernel_format, 0);
	struct fold_table *t = fold_table_new();
	struct offwake_stats s;
	uint64_t counter = 0, ns = 0;
	int tid = 0;
	const char *waker = "app-1/3;main;release;futex_wake";

	if (!w)
		return;
	/* 10 blocked at 1000 us, woken by 3 at 5000 us: 4000 us */
	offwake_ran(w, 10, 1000000);
	offwake_sleep(w, 10, 1000000, t, "app;main;lock", 13, &counter);
	CHECK(!offwake_waiting(w, 11, 2000000));
	CHECK(!offwake_waiting(w, 10, 900000));		/* before the switch-out */
	CHECK(offwake_waiting(w, 10, 5000000));
	offwake_woken(w, 10, 5000000, waker, strlen(waker));
	CHECK(total(t, "app;main;lock;--;futex_wake;release;main;app-1/3") == US(4000));
	CHECK(counter == 1);
	/* a second waking of the same wait counts nothing */
	CHECK(!offwake_waiting(w, 10, 6000000));
	/* a waker without frames: its name alone after "--" */
	offwake_ran(w, 10, 7000000);
	offwake_sleep(w, 10, 7000000, t, "app;main;lock", 13, &counter);
	offwake_woken(w, 10, 7000500, "swapper", 7);
	CHECK(total(t, "app;main;lock;--;swapper") == FK_COUNT_ONE / 2);
	/* ran again with no waking: left out, counted */
	offwake_sleep(w, 10, 8000000, t, "app;main;lock", 13, &counter);
	offwake_ran(w, 10, 9000000);
	CHECK(!offwake_waiting(w, 10, 9500000));
	/* late records: a switch-out older than the thread's latest switch */
	offwake_sleep(w, 10, 8500000, t, "app;main;late", 13, &counter);
	CHECK(!offwake_waiting(w, 10, 9600000));
	offwake_ran(w, 10, 8600000);
	/* still blocked at the end */
	offwake_sleep(w, 20, 9000000, t, "b;x", 3, &counter);
	CHECK(offwake_finish(w) == 1);
	offwake_stats(w, &s);
	CHECK(s.counted == 2 && counter == 2);
	CHECK(s.unwoken == 1 && s.unwoken_ns == 1000000);
	CHECK(s.late == 1);
	CHECK(s.pending_end == 1);
	CHECK(offwake_longest(w, &tid, &ns) && tid == 10 && ns == 4000500);
	offwake_free(w);
	fold_table_free(t);
}

static void test_min(void)
{
	struct offwake *w = make(kernel_format, 2000);
	struct fold_table *t = fold_table_new();
	struct offwake_stats s;
	uint64_t counter = 0;

	if (!w)
		return;
	offwake_sleep(w, 5, 1000, t, "a;f", 3, &counter);
	offwake_woken(w, 5, 2999, "b;g", 3);	/* 1999 ns: too short */
	offwake_sleep(w, 5, 4000, t, "a;f", 3, &counter);
	offwake_woken(w, 5, 6000, "b;g", 3);	/* 2000 ns: counted */
	offwake_stats(w, &s);
	CHECK(s.short_waits == 1 && s.counted == 1 && counter == 1);
	CHECK(total(t, "a;f;--;g;b") == US(2));
	offwake_free(w);
	fold_table_free(t);
}

int main(void)
{
	test_decode();
	test_bad_formats();
	test_waits();
	test_min();
	return CHECK_DONE();
}
