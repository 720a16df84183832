#include "options.h"

#include "core/error.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#define SCHED_SWITCH "sched:sched_switch"

const char plugin_help[] =
	"foldkit.so: fold perf.data stacks inside perf script\n"
	"usage: perf script --dlfilter foldkit.so [--dlarg OPTION ...]\n"
	"options (each with its own --dlarg):\n"
	"  pid           include the PID with process names (comm-PID)\n"
	"  tid           include the PID and TID (comm-PID/TID)\n"
	"  kernel        annotate kernel functions with _[k]\n"
	"  jit           annotate JIT functions with _[j]\n"
	"  all           all annotations (kernel, jit)\n"
	"  addrs         include raw addresses where symbols are unknown\n"
	"  inline        expand inlined functions from debug information\n"
	"  context       with inline, add FILE:LINE to each function\n"
	"  event=NAME    fold only samples of event NAME (default: the first seen)\n"
	"  split=DIR     one profile per process in DIR: NAME-PID.folded, index.tsv\n"
	"  pid=LIST      only the processes with these pids (comma-separated)\n"
	"  comm=REGEX    only the processes whose name matches REGEX\n"
	"  output=FILE   write the folded stacks to FILE instead of standard output\n"
	"  speedscope=FILE  also write a speedscope file: a profile per thread,\n"
	"                samples in time order weighted by their periods (with\n"
	"                split=DIR, 'speedscope' alone or =FILE also writes one per\n"
	"                process in DIR)\n"
	"  pprof=FILE    also write a pprof profile (gzip): addresses, mappings with\n"
	"                build ids, comm/pid/tid labels\n"
	"  offcpu        weight sched:sched_switch stacks by off-CPU time\n"
	"  state=LIST    with offcpu, the states counted: S, D, R, all (default S,D)\n"
	"  runq          weight sched:sched_switch stacks by the time runnable, in us:\n"
	"                preempted, or woken (sched:sched_waking) and not yet running\n"
	"  min=USEC      with offcpu, ignore waits shorter than USEC microseconds\n"
	"  format=FILE   with offcpu, the sched_switch format file to decode with\n"
	"  offwake       weight each sched:sched_switch stack by the time blocked\n"
	"                until a sched:sched_waking woke it, followed by '--' and\n"
	"                the waker's stack at the wake-up (leaf first) and name\n"
	"  waking-format=FILE  with offwake, the sched_waking format file\n"
	"  states        a TSV of each thread's time by state, in us: pid, tid, comm,\n"
	"                on_cpu_us, runnable_us, sleeping_us, blocked_us (record\n"
	"                sched:sched_switch, sched:sched_waking, sched:sched_wakeup_new)\n"
	"  max-stack=N   frames per stack, as perf script --max-stack (default: the\n"
	"                kernel.perf_event_max_stack sysctl, or 127)\n"
	"  threads=N     1: do the work at the end on perf's thread only; 2 (the\n"
	"                default): a second thread makes half of the folded text,\n"
	"                and writes speedscope= (alone) beside the folded output\n"
	"  help          print this help and stop\n"
	"Counts are in the event's unit: ns for cpu-clock, us with offcpu, switches\n"
	"for sched:sched_switch (index.tsv says which; see foldkit-dlfilter(1)).\n"
	"Frame-pointer call graphs only: for --call-graph dwarf use\n"
	"  perf script | fp-collapse\n";

void plugin_opts_init(struct opts *o)
{
	*o = (struct opts){ .states = OFFCPU_S | OFFCPU_D, .threads = 2 };
}

void plugin_opts_clear(struct opts *o)
{
	if (o->pids)
		g_hash_table_destroy(o->pids);
	if (o->comm_re)
		g_regex_unref(o->comm_re);
	o->pids = NULL;
	o->comm_re = NULL;
}

static void usage(GError **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void usage(GError **err, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error_literal(err, FK_ERROR, FK_ERROR_USAGE, msg);
	g_free(msg);
}

static bool parse_uint(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (!*s || !g_ascii_isdigit(*s))
		return false;
	errno = 0;
	*v = g_ascii_strtoull(s, &end, 10);
	return !errno && !*end && *v <= max;
}

/* "12,345": a set of pids; false on anything else */
static bool parse_pids(const char *s, GHashTable **pids)
{
	char **parts = g_strsplit(s, ",", -1);
	bool ok = parts[0] != NULL;
	uint64_t v;

	if (!*pids)
		*pids = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (char **p = parts; ok && *p; p++) {
		ok = parse_uint(*p, INT32_MAX, &v);
		if (ok)
			g_hash_table_add(*pids, GINT_TO_POINTER((int)v));
	}
	g_strfreev(parts);
	return ok;
}

static unsigned sysctl_max_stack(void)
{
	char *s = NULL;
	uint64_t v = 127;

	if (g_file_get_contents("/proc/sys/kernel/perf_event_max_stack", &s, NULL, NULL)) {
		g_strchomp(s);
		if (!parse_uint(s, 1 << 20, &v) || v == 0)
			v = 127;
	}
	g_free(s);
	return (unsigned)v;
}

int plugin_parse_args(struct opts *o, int argc, char **argv, GError **err)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *eq, *val;
		size_t n;
		uint64_t v;

		while (*a == '-')
			a++;
		eq = strchr(a, '=');
		n = eq ? (size_t)(eq - a) : strlen(a);
		val = eq ? eq + 1 : NULL;
#define IS(name) (n == strlen(name) && strncmp(a, name, n) == 0)
#define FLAG(name, field) if (IS(name) && !val) { o->field = true; continue; }
#define STR(name, field) if (IS(name) && val && *val) { o->field = val; continue; }
		FLAG("pid", pid);
		FLAG("tid", tid);
		FLAG("kernel", kernel);
		FLAG("jit", jit);
		FLAG("all", all);
		FLAG("addrs", addrs);
		FLAG("offcpu", offcpu);
		FLAG("offwake", offwake);
		FLAG("states", thread_states);
		FLAG("runq", runq);
		FLAG("inline", inline_);
		FLAG("context", context);
		STR("event", event);
		STR("split", split);
		STR("output", output);
		STR("format", format);
		STR("waking-format", waking_format);
		STR("speedscope", speedscope);
		STR("pprof", pprof);
		if (IS("speedscope") && !val) {
			o->speedscope_split = true;
			continue;
		}
		if (IS("help") && !val)
			return 1;
		if (IS("state") && val) {
			if (!offcpu_parse_states(val, &o->states)) {
				usage(err, "bad state list '%s': use S, D, R or all, e.g. state=S,D", val);
				return -1;
			}
			continue;
		}
		if (IS("pid") && val) {
			if (!parse_pids(val, &o->pids)) {
				usage(err, "bad pid list '%s': process ids separated by commas, "
				      "e.g. pid=4242,4250", val);
				return -1;
			}
			o->pid_list = val;
			continue;
		}
		if (IS("comm") && val && *val) {
			GError *e = NULL;

			if (o->comm_re)
				g_regex_unref(o->comm_re);
			o->comm_re = g_regex_new(val, G_REGEX_RAW | G_REGEX_OPTIMIZE, 0, &e);
			if (!o->comm_re) {
				usage(err, "bad comm regex '%s': %s", val, e->message);
				g_error_free(e);
				return -1;
			}
			o->comm_pattern = val;
			continue;
		}
		if (IS("min") && val) {
			if (!parse_uint(val, UINT64_MAX / 1000, &v)) {
				usage(err, "bad min '%s': a whole number of microseconds", val);
				return -1;
			}
			o->min_us = v;
			continue;
		}
		if (IS("threads") && val) {
			if (!parse_uint(val, 2, &v) || v == 0) {
				usage(err, "bad threads '%s': 1 or 2", val);
				return -1;
			}
			o->threads = (unsigned)v;
			continue;
		}
		if (IS("max-stack") && val) {
			if (!parse_uint(val, 1 << 20, &v) || v == 0) {
				usage(err, "bad max-stack '%s': a positive number", val);
				return -1;
			}
			o->max_stack = (unsigned)v;
			continue;
		}
#undef IS
#undef FLAG
#undef STR
		usage(err, "unknown or incomplete option '%s' (--dlarg help lists them)", argv[i]);
		return -1;
	}
	if (o->waking_format && !o->offwake) {
		usage(err, "waking-format= needs offwake");
		return -1;
	}
	if (o->offwake) {
		/* the off-CPU machinery, its waits ended by their wakings */
		if (o->states & (OFFCPU_R | OFFCPU_OTHER)) {
			usage(err, "offwake counts waits a wake-up ends: state=S, D or S,D");
			return -1;
		}
		if (o->speedscope || o->speedscope_split || o->pprof) {
			usage(err, "offwake writes folded stacks only (no speedscope or pprof)");
			return -1;
		}
		o->offcpu = true;
	}
	if (o->runq) {
		if (o->offcpu || o->states != (OFFCPU_S | OFFCPU_D)) {
			usage(err, "runq counts the time runnable of every wait: without offcpu "
			      "or state=");
			return -1;
		}
		o->offcpu = true;
		o->states = OFFCPU_ALL;
	}
	if (!o->offcpu && (o->min_us || o->format || o->states != (OFFCPU_S | OFFCPU_D))) {
		usage(err, "state=, min= and format= need offcpu");
		return -1;
	}
	if (o->offcpu && o->event && strcmp(o->event, SCHED_SWITCH) != 0) {
		usage(err, "offcpu folds only " SCHED_SWITCH " samples, not '%s'", o->event);
		return -1;
	}
	if (o->thread_states && (o->offcpu || o->offwake || o->runq || o->split || o->comm_re || o->event || o->speedscope ||
			  o->speedscope_split || o->pprof || o->inline_)) {
		usage(err, "states writes one table: it takes only pid=LIST and output=FILE");
		return -1;
	}
	if (o->context && !o->inline_) {
		usage(err, "context needs inline");
		return -1;
	}
	if (o->speedscope_split && !o->split) {
		usage(err, "speedscope without a file needs split=DIR (or use speedscope=FILE)");
		return -1;
	}
	if (o->speedscope && o->split)
		o->speedscope_split = true;
	if (o->split && o->output) {
		usage(err, "split= and output= cannot be combined");
		return -1;
	}
	if (!o->max_stack)
		o->max_stack = sysctl_max_stack();
	return 0;
}

