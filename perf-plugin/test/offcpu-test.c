/*
 * offcpu-test - unit tests of the plugin's off-CPU accounting, without
 * perf: sched_switch records are built by hand for two tracepoint formats
 * (the kernel's, and one with the fields moved and resized) and decoded by
 * field name; waits, min=, states, missing switch-ins and the tail are
 * checked against hand-made timelines.  Built and run by
 * test/scripts/plugin-unit.sh.
 */
#include "../offcpu.c"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>


/* The 6.x kernel's layout. */
static const char kernel_format[] =
	"name: sched_switch\n"
	"ID: 372\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_pid=%d next_pid=%d\", REC->prev_pid, REC->next_pid\n";

/* The same fields elsewhere, prev_state as a 4-byte int. */
static const char moved_format[] =
	"name: sched_switch\n"
	"ID: 99\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:pid_t next_pid;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_state;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:char prev_comm[16];\toffset:16;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"%d\", REC->prev_pid\n";

static char *write_temp(const char *text)
{
	char *path = g_strdup("/tmp/offcpu-test-XXXXXX");
	int fd = g_mkstemp(path);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror("offcpu-test: temporary file");
		exit(1);
	}
	close(fd);
	return path;
}

static void put(unsigned char *raw, size_t off, size_t size, uint64_t v)
{
	memcpy(raw + off, &v, size);	/* little-endian host, as perf.data here */
}

struct layout {
	size_t prev_pid, prev_state, state_size, next_pid, size;
};

static void record(const struct layout *l, unsigned char *raw, int prev,
		   uint64_t state, int next)
{
	memset(raw, 0, l->size);
	put(raw, l->prev_pid, 4, (uint32_t)prev);
	put(raw, l->prev_state, l->state_size, state);
	put(raw, l->next_pid, 4, (uint32_t)next);
}

static void test_decode(const char *format, const struct layout *l)
{
	char *path = write_temp(format);
	GError *err = NULL;
	struct offcpu *o = offcpu_new(OFFCPU_S | OFFCPU_D, 0, path, &err);
	unsigned char raw[64];
	struct sched_switch sw;
	size_t need;

	CHECK(o != NULL);
	if (!o) {
		fprintf(stderr, "%s\n", err->message);
		g_error_free(err);
		g_free(path);
		return;
	}
	record(l, raw, 1234, 0x2, 5678);
	CHECK(offcpu_decode(o, raw, (uint32_t)l->size, &sw));
	CHECK(sw.prev_pid == 1234 && sw.next_pid == 5678 && sw.prev_state == 0x2);
	record(l, raw, 0, 0x100, 42);
	CHECK(offcpu_decode(o, raw, (uint32_t)l->size, &sw));
	CHECK(sw.prev_pid == 0 && sw.prev_state == 0x100 && sw.next_pid == 42);
	/* a record too short for a field read is refused, not read past */
	need = MAX(MAX(l->prev_pid + 4, l->prev_state + l->state_size), l->next_pid + 4);
	CHECK(offcpu_decode(o, raw, (uint32_t)need, &sw));
	CHECK(!offcpu_decode(o, raw, (uint32_t)need - 1, &sw));
	CHECK(!offcpu_decode(o, NULL, 0, &sw));
	offcpu_free(o);
	unlink(path);
	g_free(path);
}

static void test_states(void)
{
	unsigned st;
	struct offcpu o = { 0 };
	struct sched_switch sw = { .prev_pid = 7 };

	CHECK(offcpu_parse_states("S,D", &st) && st == (OFFCPU_S | OFFCPU_D));
	CHECK(offcpu_parse_states("R|S", &st) && st == (OFFCPU_R | OFFCPU_S));
	CHECK(offcpu_parse_states("all", &st) && st == OFFCPU_ALL);
	CHECK(!offcpu_parse_states("Q", &st));
	CHECK(!offcpu_parse_states("", &st));
	CHECK(!offcpu_parse_states("S,x", &st));

	o.states = OFFCPU_S | OFFCPU_D;
	sw.prev_state = 0x1;	CHECK(offcpu_wanted(&o, &sw));		/* S */
	sw.prev_state = 0x2;	CHECK(offcpu_wanted(&o, &sw));		/* D */
	sw.prev_state = 0x0;	CHECK(!offcpu_wanted(&o, &sw));		/* R */
	sw.prev_state = 0x100;	CHECK(!offcpu_wanted(&o, &sw));		/* R+ */
	sw.prev_state = 0x80;	CHECK(!offcpu_wanted(&o, &sw));		/* I */
	o.states = OFFCPU_R;
	sw.prev_state = 0x0;	CHECK(offcpu_wanted(&o, &sw));
	sw.prev_state = 0x100;	CHECK(offcpu_wanted(&o, &sw));
	sw.prev_state = 0x1;	CHECK(!offcpu_wanted(&o, &sw));
	o.states = OFFCPU_ALL;
	sw.prev_state = 0x80;	CHECK(offcpu_wanted(&o, &sw));
	sw.prev_state = 0x10;	CHECK(!offcpu_wanted(&o, &sw));		/* X: dead */
	sw.prev_state = 0x20;	CHECK(!offcpu_wanted(&o, &sw));		/* Z */
	sw.prev_pid = 0;
	sw.prev_state = 0x1;	CHECK(!offcpu_wanted(&o, &sw));		/* idle */
}

static fk_count total(struct fold_table *t, const char *stack)
{
	struct fold_entry *e = fold_table_find(t, stack, strlen(stack));

	return e ? e->count[0] : 0;
}

#define US(n) ((fk_count)(n) * FK_COUNT_ONE)
#define MS 1000000ULL	/* in ns */

static void test_waits(void)
{
	char *path = write_temp(kernel_format);
	GError *err = NULL;
	struct offcpu *o = offcpu_new(OFFCPU_S | OFFCPU_D, 1 * MS, path, &err);
	struct fold_table *t = fold_table_new();
	uint64_t n = 0, counted, short_waits, unseen, tail_ns;

	CHECK(o != NULL);
	if (!o)
		return;
	/* thread 10: off at 100 ms, back at 102.5 ms: 2500 us */
	offcpu_tick(o, 100 * MS);
	offcpu_switch_unseen(o, 10, 0, 100 * MS);
	offcpu_switch_out(o, 10, 10, 100 * MS, t, "a;lock", 6, &n);
	offcpu_tick(o, 102 * MS + MS / 2);
	offcpu_switch_in(o, 10, 102 * MS + MS / 2);
	offcpu_switch_unseen(o, 99, 0, 102 * MS + MS / 2);
	CHECK(total(t, "a;lock") == US(2500));
	CHECK(n == 1);
	/* a second wait of 10 ms on the same stack adds up */
	offcpu_switch_unseen(o, 10, 0, 110 * MS);
	offcpu_switch_out(o, 10, 10, 110 * MS, t, "a;lock", 6, &n);
	offcpu_switch_in(o, 10, 120 * MS);
	offcpu_switch_unseen(o, 98, 0, 120 * MS);
	CHECK(total(t, "a;lock") == US(12500));
	/* under min= (1 ms): left out, counted as short */
	offcpu_switch_unseen(o, 10, 0, 130 * MS);
	offcpu_switch_out(o, 10, 10, 130 * MS, t, "a;sleep", 7, &n);
	offcpu_switch_in(o, 10, 130 * MS + MS / 2);
	offcpu_switch_unseen(o, 97, 0, 130 * MS + MS / 2);
	CHECK(total(t, "a;sleep") == 0);
	/* nanoseconds are kept until the writer rounds: 1.0005 ms */
	offcpu_switch_unseen(o, 11, 1, 140 * MS);
	offcpu_switch_out(o, 11, 11, 140 * MS, t, "b;io", 4, &n);
	offcpu_switch_in(o, 11, 141 * MS + 500);
	offcpu_switch_unseen(o, 96, 1, 141 * MS + 500);
	CHECK(total(t, "b;io") == US(1000) + FK_COUNT_ONE / 2);
	/*
	 * switch-in not recorded: thread 12 leaves cpu 1 at 150 ms, cpu 1
	 * switches at 160 ms (unrecorded: to thread 12), and thread 12 leaves
	 * cpu 1 again at 161 ms: its wait ends at 160 ms
	 */
	offcpu_switch_unseen(o, 12, 1, 150 * MS);
	offcpu_switch_out(o, 12, 12, 150 * MS, t, "c;wait", 6, &n);
	offcpu_switch_unseen(o, 95, 1, 160 * MS);
	offcpu_switch_unseen(o, 12, 1, 161 * MS);
	offcpu_forget(o, 12);
	CHECK(total(t, "c;wait") == US(10000));
	/* a thread leaving again in a state not counted loses its wait */
	offcpu_switch_out(o, 13, 13, 170 * MS, t, "d;gone", 6, &n);
	offcpu_forget(o, 13);
	offcpu_switch_in(o, 13, 180 * MS);
	CHECK(total(t, "d;gone") == 0);
	/* still off at the end: counted up to the last time seen */
	offcpu_switch_out(o, 14, 14, 190 * MS, t, "e;tail", 6, &n);
	offcpu_tick(o, 195 * MS);
	CHECK(offcpu_finish(o, &tail_ns) == 1);
	CHECK(tail_ns == 5 * MS);
	CHECK(total(t, "e;tail") == US(5000));
	offcpu_stats(o, &counted, &short_waits, &unseen);
	CHECK(counted == 5 && short_waits == 1 && unseen == 1);
	CHECK(n == 5);
	fold_table_free(t);
	offcpu_free(o);
	unlink(path);
	g_free(path);
}

/* switch-ins from perf's switch records: perf tid 1012 at 155 and 205 ms */
static bool fake_switch_in(void *data, int tid, uint64_t from, uint64_t to, uint64_t *time)
{
	static const uint64_t ins[] = { 155 * MS, 205 * MS, 230 * MS };

	(*(int *)data)++;
	for (size_t i = 0; i < G_N_ELEMENTS(ins); i++)
		if (tid == 1012 && ins[i] >= from && ins[i] <= to) {
			*time = ins[i];
			return true;
		}
	return false;
}

static void test_switch_records(void)
{
	char *path = write_temp(kernel_format);
	GError *err = NULL;
	struct offcpu *o = offcpu_new(OFFCPU_S | OFFCPU_D, 0, path, &err);
	struct fold_table *t = fold_table_new();
	uint64_t n = 0, counted, short_waits, unseen, tail_ns;
	int asked = 0;

	CHECK(o != NULL);
	if (!o)
		return;
	offcpu_on_unseen(o, fake_switch_in, &asked);
	/*
	 * thread 12 (1012 to perf) leaves cpu 1 at 150 ms; its switch-in at
	 * 155 ms has no tracepoint; cpu 1 switches at 160 ms, and thread 12
	 * leaves it at 161 ms: the wait ends at 155 ms, not 160
	 */
	offcpu_switch_unseen(o, 12, 1, 150 * MS);
	offcpu_switch_out(o, 12, 1012, 150 * MS, t, "c;wait", 6, &n);
	offcpu_switch_unseen(o, 95, 1, 160 * MS);
	offcpu_switch_unseen(o, 12, 1, 161 * MS);
	CHECK(total(t, "c;wait") == US(5000));
	/* none in the records: the CPU's previous switch, as before */
	offcpu_switch_out(o, 12, 1012, 170 * MS, t, "c;io", 4, &n);
	offcpu_switch_unseen(o, 95, 1, 180 * MS);
	offcpu_switch_unseen(o, 12, 1, 181 * MS);
	CHECK(total(t, "c;io") == US(10000));
	/* a recorded switch-in, and an earlier one only the records have:
	 * the tracepoint missed the switch-out between */
	offcpu_switch_out(o, 12, 1012, 200 * MS, t, "c;lock", 6, &n);
	offcpu_switch_in(o, 12, 210 * MS);
	CHECK(total(t, "c;lock") == US(5000));
	/* back at 230 ms, never out again: ends there, not at the last time */
	offcpu_switch_out(o, 12, 1012, 220 * MS, t, "c;tail", 6, &n);
	offcpu_switch_out(o, 14, 1014, 220 * MS, t, "e;tail", 6, &n);
	offcpu_tick(o, 240 * MS);
	CHECK(offcpu_finish(o, &tail_ns) == 1 && tail_ns == 20 * MS);
	CHECK(total(t, "c;tail") == US(10000) && total(t, "e;tail") == US(20000));
	offcpu_stats(o, &counted, &short_waits, &unseen);
	CHECK(counted == 5 && short_waits == 0 && unseen == 1 && offcpu_recorded(o) == 3);
	CHECK(asked == 5);
	fold_table_free(t);
	offcpu_free(o);
	unlink(path);
	g_free(path);
}

/*
 * Records perf hands over late (a CPU's buffer drained after a round with
 * later times): a switch of a thread older than one already seen begins
 * and ends no wait, so no two waits overlap and no thread's waits add up
 * to more than the recording.  Thread 20 really was off 100-105, 110-120
 * and 150-200 ms; perf hands cpu 0's 105 and 110 ms switches over after
 * cpu 1's of 120 and 150 ms, and a switch-out at 20 ms after all of them.
 */
static void test_late(void)
{
	char *path = write_temp(kernel_format);
	GError *err = NULL;
	struct offcpu *o = offcpu_new(OFFCPU_S | OFFCPU_D, 0, path, &err);
	struct fold_table *t = fold_table_new();
	uint64_t n = 0, first, last, ns, tail_ns;
	int tid, perf_tid;

	CHECK(o != NULL);
	if (!o)
		return;
	offcpu_tick(o, 100 * MS);
	offcpu_switch_unseen(o, 20, 0, 100 * MS);
	offcpu_switch_out(o, 20, 2020, 100 * MS, t, "f;a", 3, &n);
	offcpu_tick(o, 120 * MS);
	offcpu_switch_in(o, 20, 120 * MS);		/* ends 100: 20 ms */
	offcpu_tick(o, 150 * MS);
	offcpu_switch_unseen(o, 20, 1, 150 * MS);
	offcpu_switch_out(o, 20, 2020, 150 * MS, t, "f;b", 3, &n);
	offcpu_switch_in(o, 20, 105 * MS);		/* late: not the end of 150 */
	offcpu_switch_unseen(o, 20, 0, 110 * MS);	/* late: no new wait */
	offcpu_switch_out(o, 20, 2020, 110 * MS, t, "f;c", 3, &n);
	offcpu_tick(o, 200 * MS);
	offcpu_switch_in(o, 20, 200 * MS);		/* ends 150: 50 ms */
	CHECK(total(t, "f;a") == US(20000));
	CHECK(total(t, "f;b") == US(50000));
	CHECK(total(t, "f;c") == 0);
	/* a switch-out long before anything seen of it: no wait from there */
	offcpu_tick(o, 20 * MS);
	offcpu_switch_unseen(o, 20, 1, 20 * MS);
	offcpu_switch_out(o, 20, 2020, 20 * MS, t, "f;d", 3, &n);
	offcpu_tick(o, 210 * MS);
	offcpu_switch_in(o, 20, 210 * MS);
	CHECK(total(t, "f;d") == 0);
	CHECK(offcpu_late(o) == 3);
	CHECK(offcpu_finish(o, &tail_ns) == 0);
	CHECK(offcpu_longest(o, &tid, &perf_tid, &ns));
	CHECK(tid == 20 && perf_tid == 2020 && ns == 70 * MS);
	CHECK(offcpu_span(o, &first, &last) && first == 20 * MS && last == 210 * MS);
	CHECK(n == 2);
	fold_table_free(t);
	offcpu_free(o);
	unlink(path);
	g_free(path);
}

static void test_bad_formats(void)
{
	char *no_state = g_strdup(kernel_format);
	char *p = strstr(no_state, "prev_state");
	char *path;
	GError *err = NULL;

	/* renamed everywhere, print format included */
	while (p) {
		memcpy(p, "prev_stite", 10);
		p = strstr(p, "prev_state");
	}
	path = write_temp(no_state);
	CHECK(offcpu_new(OFFCPU_S, 0, path, &err) == NULL);
	CHECK(err && strstr(err->message, "no numeric field 'prev_state'"));
	g_clear_error(&err);
	unlink(path);
	g_free(path);
	g_free(no_state);
	/* the print format naming a missing field must not matter */
	no_state = g_strdup(kernel_format);
	p = strstr(no_state, "REC->prev_pid");
	memcpy(p, "REC->prev_pud", 13);
	path = write_temp(no_state);
	{
		struct offcpu *o = offcpu_new(OFFCPU_S, 0, path, &err);
		CHECK(o != NULL);
		offcpu_free(o);
		g_clear_error(&err);
	}
	unlink(path);
	g_free(path);
	g_free(no_state);
	CHECK(offcpu_new(OFFCPU_S, 0, "/nonexistent/format", &err) == NULL);
	CHECK(err && strstr(err->message, "/nonexistent/format"));
	g_clear_error(&err);
}

/*
 * Wake-ups: a sleep's off-CPU time ends at its first wake-up; the run
 * queue profile (runq) counts the time after it, and all of a preemption.
 */
static void test_wakes(void)
{
	char *path = write_temp(kernel_format);
	GError *err = NULL;
	struct offcpu *off = offcpu_new(OFFCPU_S | OFFCPU_D, 0, path, &err);
	struct offcpu *rq = offcpu_new(OFFCPU_ALL, 0, path, &err);
	struct fold_table *t = fold_table_new(), *r = fold_table_new();
	uint64_t n = 0, m = 0, ns;

	CHECK(off != NULL && rq != NULL);
	if (!off || !rq)
		return;
	offcpu_set_runq(rq, true);
	for (int k = 0; k < 2; k++) {
		struct offcpu *o = k ? rq : off;
		struct fold_table *tt = k ? r : t;
		uint64_t *c = k ? &m : &n;

		offcpu_tick(o, 100 * MS);
		/* thread 20 sleeps at 100 ms, is woken at 103 (and again at
		 * 104: not its end), runs at 107 */
		offcpu_switch_unseen(o, 20, 0, 100 * MS);
		offcpu_switch_out(o, 20, 20, 100 * MS, tt, "s;sleep", 7, c);
		offcpu_wake(o, 20, 103 * MS);
		offcpu_wake(o, 20, 104 * MS);
		offcpu_switch_in(o, 20, 107 * MS);
		offcpu_switch_unseen(o, 90, 0, 107 * MS);
		/* thread 21 is preempted at 110 ms, runs at 112 */
		offcpu_switch_unseen(o, 21, 1, 110 * MS);
		if (k) {
			offcpu_switch_out(o, 21, 21, 110 * MS, tt, "p;spin", 6, c);
			offcpu_preempted(o, 21);
		}
		offcpu_switch_in(o, 21, 112 * MS);
		offcpu_switch_unseen(o, 91, 1, 112 * MS);
		/* thread 22 sleeps at 120 ms, runs at 125 without a wake-up */
		offcpu_switch_unseen(o, 22, 1, 120 * MS);
		offcpu_switch_out(o, 22, 22, 120 * MS, tt, "q;nowake", 8, c);
		offcpu_switch_in(o, 22, 125 * MS);
		offcpu_switch_unseen(o, 92, 1, 125 * MS);
		/* thread 23 runs from 126 ms; woken at 131 while still on its
		 * CPU (the waker's sched_waking before the wakee's switch),
		 * it switches out asleep at 132 and runs at 136: runnable
		 * all along.  Its wake-up at 127 ms, before it next ran at
		 * 129, woke a sleep of its own before: not this one's */
		offcpu_switch_in(o, 23, 126 * MS);
		offcpu_wake(o, 23, 127 * MS);
		offcpu_switch_unseen(o, 23, 1, 128 * MS);
		if (k) {
			offcpu_switch_out(o, 23, 23, 128 * MS, tt, "r;early", 7, c);
			offcpu_preempted(o, 23);
		}
		offcpu_switch_in(o, 23, 129 * MS);
		offcpu_wake(o, 23, 131 * MS);
		offcpu_switch_unseen(o, 23, 1, 132 * MS);
		offcpu_switch_out(o, 23, 23, 132 * MS, tt, "r;raced", 7, c);
		offcpu_switch_in(o, 23, 136 * MS);
		offcpu_tick(o, 140 * MS);
		offcpu_finish(o, &ns);
	}
	CHECK(total(t, "s;sleep") == US(3000));		/* asleep up to the wake-up */
	CHECK(total(t, "q;nowake") == US(5000));	/* up to the switch-in */
	CHECK(total(t, "r;raced") == 0);		/* woken before it slept */
	CHECK(n == 3 && offcpu_woken(off) == 2);
	CHECK(total(r, "s;sleep") == US(4000));		/* runnable from the wake-up */
	CHECK(total(r, "p;spin") == US(2000));		/* all of a preemption */
	CHECK(total(r, "q;nowake") == 0);		/* no wake-up: none runnable */
	CHECK(total(r, "r;raced") == US(4000));		/* runnable from its switch-out */
	CHECK(total(r, "r;early") == US(1000));		/* a preemption */
	CHECK(m == 4);
	offcpu_free(off);
	offcpu_free(rq);
	fold_table_free(t);
	fold_table_free(r);
	unlink(path);
	g_free(path);
}

int main(void)
{
	const struct layout kernel = { 24, 32, 8, 56, 64 };
	const struct layout moved = { 32, 12, 4, 8, 36 };

	test_decode(kernel_format, &kernel);
	test_decode(moved_format, &moved);
	test_states();
	test_waits();
	test_switch_records();
	test_late();
	test_wakes();
	test_bad_formats();
	return CHECK_DONE();
}
