#include "capture/perfcmd.h"

#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

const char fk_perf_install_hint[] =
	"install it: sudo apt-get install linux-perf (Debian), or "
	"sudo apt-get install linux-tools-$(uname -r) linux-tools-generic (Ubuntu)";

static void add(GPtrArray *v, const char *s)
{
	g_ptr_array_add(v, g_strdup(s));
}

static void add_control(GPtrArray *v, const struct fk_record_cmd *c)
{
	add(v, "-o");
	add(v, c->data);
	/* start disabled: the window opens with "enable" on the control fd */
	add(v, "--delay=-1");
	add(v, "--control");
	g_ptr_array_add(v, g_strdup_printf("fd:%d,%d", c->ctl_fd, c->ack_fd));
	/* no pass over the samples at the end to list the binaries' build
	 * ids, no copies of them in ~/.debug: perf script reads the files */
	add(v, "--no-buildid");
	add(v, "--no-buildid-cache");
}

static char **finish(GPtrArray *v)
{
	g_ptr_array_add(v, NULL);
	return (char **)g_ptr_array_free(v, FALSE);
}

char **fk_perf_record_on(const struct fk_record_cmd *c, const int *pids, size_t n)
{
	GPtrArray *v = g_ptr_array_new();
	GString *list = g_string_new(NULL);

	add(v, c->perf);
	add(v, "record");
	add(v, "-e");
	add(v, "cpu-clock");
	add(v, "-F");
	g_ptr_array_add(v, g_strdup_printf("%u", c->freq));
	add(v, "--call-graph");
	add(v, c->cg == FK_CG_DWARF ? "dwarf" : "fp");
	for (size_t i = 0; i < n; i++)
		g_string_append_printf(list, "%s%d", i ? "," : "", pids[i]);
	add(v, "-p");
	g_ptr_array_add(v, g_string_free(list, FALSE));
	add_control(v, c);
	return finish(v);
}

char **fk_perf_record_off(const struct fk_record_cmd *c, const char *filter)
{
	GPtrArray *v = g_ptr_array_new();

	add(v, c->perf);
	add(v, "record");
	add(v, "-e");
	add(v, "sched:sched_switch");
	if (filter) {
		add(v, "--filter");
		add(v, filter);
	}
	if (c->stack_dump) {
		/*
		 * The same tracepoint again, with the first stack_dump bytes
		 * of the user stack and the registers (rbp with --user-regs;
		 * perf adds rip and rsp): the plugin unwinds them through the
		 * code without frame pointers (libc) and splices the
		 * frame-pointer chain of the switch's other sample, whose
		 * kernel frames it has (so this one keeps one).  Listed
		 * second, the kernel emits it first; only the threads' own
		 * switches out have a stack of theirs to dump.
		 */
		add(v, "-e");
		g_ptr_array_add(v, g_strdup_printf("sched:sched_switch/call-graph=dwarf,"
						   "stack-size=%u,max-stack=1/", c->stack_dump));
		if (c->dump_filter) {
			add(v, "--filter");
			add(v, c->dump_filter);
		}
		add(v, "--user-regs=bp");
	}
	/*
	 * The wake-ups of the threads: the plugin cuts a sleep there (the
	 * time after it, runnable, goes to the run-queue profile, runq) and
	 * takes a thread's states from them (states); sched_waking fires
	 * in the waker's context, so its stack is the waker's.
	 */
	add(v, "-e");
	add(v, "sched:sched_waking");
	if (c->wake_filter) {
		add(v, "--filter");
		add(v, c->wake_filter);
	}
	add(v, "-e");
	add(v, "sched:sched_wakeup_new");
	if (c->wake_filter) {
		add(v, "--filter");
		add(v, c->wake_filter);
	}
	if (c->mmap_kb) {
		add(v, "-m");
		g_ptr_array_add(v, g_strdup_printf("%uK", c->mmap_kb));
	}
	/* every switch: a sampled one would leave waits without an end */
	add(v, "-c");
	add(v, "1");
	/* the plugin weighs the frame-pointer chains (the dumps repair them):
	 * perf gives a dlfilter only the kernel part of a DWARF one */
	add(v, "--call-graph");
	add(v, "fp");
	add(v, "-a");
	/*
	 * perf's records of every switch (PERF_RECORD_SWITCH_CPU_WIDE): the
	 * kernel does not emit the tracepoint for many switches from the
	 * idle task, and the plugin ends those waits at these (perf 4.3 and
	 * later: older than the --control fp-record needs)
	 */
	add(v, "--switch-events");
	add_control(v, c);
	return finish(v);
}

unsigned fk_offcpu_buffer_kb(long cpus)
{
	unsigned kb = 8192;

	/* 64 MiB in all, 512 KiB to 8 MiB a CPU, a power of two (perf's) */
	while (kb > 512 && cpus > 0 && (uint64_t)kb * (uint64_t)cpus > 65536)
		kb /= 2;
	return kb;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * fk_switch_filter(), or with out alone only one field: the switches out
 * (prev_pid), the wakees (pid)
 */
static char *switch_filter(const int *tids, size_t n, int newer_than, size_t max, bool out,
			   const char *field)
{
	int *v = g_memdup2(tids, n * sizeof(int));
	GString *f = g_string_new(NULL);

	if (n)
		qsort(v, n, sizeof(int), int_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && v[j + 1] <= v[j] + 1)
			j++;
		if (newer_than >= 0 && v[i] > newer_than)
			break;	/* the last term covers them */
		if (f->len)
			g_string_append(f, "||");
		if (v[i] == v[j] && out)
			g_string_append_printf(f, "%s==%d", field, v[i]);
		else if (v[i] == v[j])
			g_string_append_printf(f, "prev_pid==%d||next_pid==%d", v[i], v[i]);
		else if (out)
			g_string_append_printf(f, "(%s>=%d&&%s<=%d)", field, v[i], field, v[j]);
		else
			g_string_append_printf(f, "(prev_pid>=%d&&prev_pid<=%d)||"
					       "(next_pid>=%d&&next_pid<=%d)",
					       v[i], v[j], v[i], v[j]);
		i = j + 1;
	}
	if (newer_than >= 0 && out)
		g_string_append_printf(f, "%s%s>%d", f->len ? "||" : "", field, newer_than);
	else if (newer_than >= 0)
		g_string_append_printf(f, "%sprev_pid>%d||next_pid>%d",
				       f->len ? "||" : "", newer_than, newer_than);
	g_free(v);
	if (f->len == 0 || f->len > max) {
		g_string_free(f, TRUE);
		return NULL;
	}
	return g_string_free(f, FALSE);
}

char *fk_switch_filter(const int *tids, size_t n, int newer_than, size_t max)
{
	return switch_filter(tids, n, newer_than, max, false, NULL);
}

char *fk_switch_out_filter(const int *tids, size_t n, int newer_than, size_t max)
{
	return switch_filter(tids, n, newer_than, max, true, "prev_pid");
}

char *fk_wake_filter(const int *tids, size_t n, int newer_than, size_t max)
{
	return switch_filter(tids, n, newer_than, max, true, "pid");
}

char **fk_perf_fold(const char *perf, const char *data, const char *plugin,
		    const char *mode, const char *split_dir)
{
	GPtrArray *v = g_ptr_array_new();

	add(v, perf);
	add(v, "script");
	add(v, "-i");
	add(v, data);
	add(v, "--dlfilter");
	add(v, plugin);
	if (mode) {
		add(v, "--dlarg");
		add(v, mode);
	}
	add(v, "--dlarg");
	g_ptr_array_add(v, g_strconcat("split=", split_dir, NULL));
	return finish(v);
}

char **fk_perf_states(const char *perf, const char *data, const char *plugin,
		      const char *output)
{
	GPtrArray *v = g_ptr_array_new();

	add(v, perf);
	add(v, "script");
	add(v, "-i");
	add(v, data);
	add(v, "--dlfilter");
	add(v, plugin);
	add(v, "--dlarg");
	add(v, "states");
	add(v, "--dlarg");
	g_ptr_array_add(v, g_strconcat("output=", output, NULL));
	return finish(v);
}

char **fk_perf_script(const char *perf, const char *data)
{
	GPtrArray *v = g_ptr_array_new();

	add(v, perf);
	add(v, "script");
	add(v, "-i");
	add(v, data);
	/* perf prints no pid by default, and fp-collapse --pid would say "?" */
	add(v, "-F");
	add(v, "+pid");
	return finish(v);
}

char *fk_perf_version(const char *out)
{
	const char *s = out ? strstr(out, "perf version ") : NULL;
	size_t n = 0;

	if (!s)
		return NULL;
	s += strlen("perf version ");
	while (g_ascii_isdigit(s[n]) || s[n] == '.')
		n++;
	return n ? g_strndup(s, n) : NULL;
}

static bool has(const char *log, const char *what)
{
	return strstr(log, what) != NULL;
}

/* perf's first line that says what went wrong, or NULL */
static char *first_error(const char *log)
{
	char **lines = g_strsplit(log, "\n", -1);
	char *pick = NULL;

	for (char **l = lines; *l && !pick; l++)
		if (strstr(*l, "rror") || strstr(*l, "failed") || strstr(*l, "annot"))
			pick = g_strdup(g_strstrip(*l));
	for (char **l = lines; *l && !pick; l++)
		if (*g_strstrip(*l))
			pick = g_strdup(*l);
	g_strfreev(lines);
	return pick;
}

char *fk_perf_failure(const char *log, const struct fk_perf_context *ctx)
{
	const char *what = ctx->offcpu ? "off-CPU" : "on-CPU";
	char *line, *msg, paranoid[32];

	if (ctx->paranoid == INT_MIN)
		g_strlcpy(paranoid, "unknown", sizeof(paranoid));
	else
		g_snprintf(paranoid, sizeof(paranoid), "%d", ctx->paranoid);
	if (has(log, "No permissions to read") || has(log, "can't access trace events"))
		return g_strdup_printf(
			"perf may not read the sched:sched_switch tracepoint for the off-CPU "
			"recording (tracefs is not readable%s): run fp-record as root (sudo), "
			"as seed 000's scripts do; or let users read it: sudo mount -o "
			"remount,mode=755 /sys/kernel/tracing and sudo sysctl -w "
			"kernel.perf_event_paranoid=-1; or record on-CPU only (--on)",
			ctx->root ? " even for root" : " by you");
	if (has(log, "perf_event_paranoid") || has(log, "Access to performance monitoring") ||
	    has(log, "Permission denied") || has(log, "Operation not permitted") ||
	    has(log, "No permission"))
		return g_strdup_printf(
			"perf may not make the %s recording: kernel.perf_event_paranoid is %s%s; %s",
			what, paranoid, ctx->root ? "" : " and fp-record is not root",
			ctx->offcpu
			? "off-CPU recording reads a tracepoint machine-wide, which needs "
			  "root or perf_event_paranoid -1: run fp-record as root (sudo), or "
			  "sudo sysctl -w kernel.perf_event_paranoid=-1 (in a container, where "
			  "/proc/sys is read-only, run as root); or record on-CPU only (--on)"
			: "recording another user's process, or kernel stacks, needs root or a "
			  "lower setting: run fp-record as root (sudo), or sudo sysctl -w "
			  "kernel.perf_event_paranoid=1");
	if (has(log, "No such process") || has(log, "Problems finding threads"))
		return g_strdup_printf("a selected process exited before the %s recording "
				       "began (perf: no such process)", what);
	if ((has(log, "control") || has(log, "delay")) &&
	    (has(log, "unknown") || has(log, "expects") || has(log, "invalid") ||
	     has(log, "Usage:")))
		return g_strdup_printf("perf %s cannot start a recording disabled and "
				       "enable it on command (--delay=-1, --control): "
				       "fp-record needs perf 5.10 or later",
				       ctx->version ? ctx->version : "(version unknown)");
	if (has(log, "sched:sched_switch") || has(log, "tracepoint"))
		return g_strdup_printf(
			"the sched:sched_switch tracepoint is not available: mount tracefs "
			"(sudo mount -t tracefs nodev /sys/kernel/tracing) or run as root; "
			"or record on-CPU only (--on)");
	if (!(line = first_error(log)))
		return g_strdup_printf("perf record (%s) failed without saying why "
				       "(perf record -v tells more)", what);
	msg = g_strdup_printf("perf record (%s) failed: %s", what, line);
	g_free(line);
	return msg;
}
