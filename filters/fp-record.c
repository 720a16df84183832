/*
 * fp-record - record every process of a program on- and off-CPU for the
 * same window, and leave per-process folded stacks, flame graphs, an index
 * and a report.  See docs/fp-record.1 and lib/capture/session.h.
 */
#include "capture/push.h"
#include "capture/schedule.h"
#include "capture/session.h"
#include "store/labels.h"
#include "store/url.h"
#include "tool.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef FK_PLUGINDIR
#define FK_PLUGINDIR "/usr/local/libexec/perf-core/dlfilters"
#endif

static struct opts {
	char *exe, *name, *pids, *dir, *cg, *load, *title, *plugin, *push, *compare;
	char **push_labels;
	double seconds, warmup, delay, every;
	int freq, stack_dump, count;
	gboolean on, off, keep_data, group_workers;
} opts = { .seconds = 30, .warmup = -1, .freq = 99, .stack_dump = -1, .count = 1 };

static const GOptionEntry entries[] = {
	{ "exe", 0, 0, G_OPTION_ARG_FILENAME, &opts.exe, "Every process whose /proc/PID/exe is FILE", "FILE" },
	{ "name", 0, 0, G_OPTION_ARG_STRING, &opts.name, "Every process whose comm or executable's file name is NAME", "NAME" },
	{ "pid", 0, 0, G_OPTION_ARG_STRING, &opts.pids, "The processes PID,PID,...", "LIST" },
	{ "duration", 'd', 0, G_OPTION_ARG_DOUBLE, &opts.seconds, "Record for SECONDS (default 30)", "SECONDS" },
	{ "freq", 'F', 0, G_OPTION_ARG_INT, &opts.freq, "On-CPU samples per second (default 99)", "HZ" },
	{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &opts.dir, "Write to DIR (default fp-record-DATE-TIME)", "DIR" },
	{ "on", 0, 0, G_OPTION_ARG_NONE, &opts.on, "Record on-CPU only", NULL },
	{ "off", 0, 0, G_OPTION_ARG_NONE, &opts.off, "Record off-CPU only", NULL },
	{ "call-graph", 0, 0, G_OPTION_ARG_STRING, &opts.cg, "On-CPU stacks: fp (default) or dwarf", "fp|dwarf" },
	{ "stack-dump", 0, 0, G_OPTION_ARG_INT, &opts.stack_dump, "Off-CPU: bytes of user stack per switch, to unwind through libc (default 1024, 0: none)", "BYTES" },
	{ "load", 0, 0, G_OPTION_ARG_STRING, &opts.load, "Run the shell command CMD as load for the window", "CMD" },
	{ "warmup", 0, 0, G_OPTION_ARG_DOUBLE, &opts.warmup, "Start the load SECONDS before the window (default 3)", "SECONDS" },
	{ "title", 0, 0, G_OPTION_ARG_STRING, &opts.title, "Put TEXT before each graph's title and the report's", "TEXT" },
	{ "keep-data", 0, 0, G_OPTION_ARG_NONE, &opts.keep_data, "Keep DIR/on.data and DIR/off.data", NULL },
	{ "delay", 0, 0, G_OPTION_ARG_DOUBLE, &opts.delay, "Open the window SECONDS from now", "SECONDS" },
	{ "every", 0, 0, G_OPTION_ARG_DOUBLE, &opts.every, "With --count: a window every SECONDS (start to start), each in DIR/1, DIR/2...", "SECONDS" },
	{ "count", 0, 0, G_OPTION_ARG_INT, &opts.count, "With --every: N windows (default 1)", "N" },
	{ "compare", 0, 0, G_OPTION_ARG_FILENAME, &opts.compare, "Compare with the earlier capture OLD: DIR/compare.md and differential graphs in DIR/compare/", "OLD" },
	{ "group-workers", 0, 0, G_OPTION_ARG_NONE, &opts.group_workers, "Also merge the processes of one role into DIR/group/, with how evenly their work is spread", NULL },
	{ "plugin", 0, 0, G_OPTION_ARG_FILENAME, &opts.plugin, "The perf plugin (default: next to fp-record, or $FOLDKIT_PLUGIN)", "FILE" },
	{ "push", 0, 0, G_OPTION_ARG_STRING, &opts.push, "Push the capture to a store once written (fold-push URL)", "URL" },
	{ "push-label", 0, 0, G_OPTION_ARG_STRING_ARRAY, &opts.push_labels, "With --push: label its profiles KEY=VALUE too", "K=V" },
	{ NULL },
};

static const char description[] =
	"Chooses processes by their executable (never by command-line text), by\n"
	"name, by pid, or starts COMMAND; records them on-CPU (perf record -F HZ\n"
	"-g) and off-CPU (sched_switch, weighted by time) for the same window;\n"
	"and writes DIR/on/<name>.folded, .svg and .html (<name>: the process and\n"
	"its role, server.main, server.worker-1...), DIR/off/..., DIR/index.tsv\n"
	"and DIR/report.md.  Ctrl-C ends the window early.  Needs perf, and root\n"
	"for off-CPU recording (or kernel.perf_event_paranoid=-1).\n"
	"\n"
	"Examples:\n"
	"  sudo fp-record --exe build/server -d 30\n"
	"  sudo fp-record --name server -d 30 --load 'python3 load.py'\n"
	"  sudo fp-record --pid 1234,1240 -d 10 --off\n"
	"  sudo fp-record -d 5 -- ./workload args\n"
	"  sudo fp-record --exe build/server -d 30 --push clickhouse://db1/prof --push-label release=v2\n"
	"  sudo fp-record --exe build/server -d 30 --compare before -o after\n"
	"  sudo fp-record --exe build/server -d 10 --every 60 --count 3 -o hourly\n"
	"\n"
	"Exit status: 0 profiles written (and pushed), 1 nothing captured, not pushed or an error,\n"
	"2 usage error.  See fp-record(1).";

/* an earlier capture, checked before anything is recorded: its real
 * path, or NULL */
static char *compare_dir(const char *path)
{
	char *real = realpath(path, NULL), *index, *on, *off;
	bool ok;

	if (!real)
		return NULL;
	index = g_build_filename(real, "index.tsv", NULL);
	on = g_build_filename(real, "on", NULL);
	off = g_build_filename(real, "off", NULL);
	ok = g_file_test(index, G_FILE_TEST_IS_REGULAR) &&
	     (g_file_test(on, G_FILE_TEST_IS_DIR) || g_file_test(off, G_FILE_TEST_IS_DIR));
	g_free(index);
	g_free(on);
	g_free(off);
	if (!ok) {
		free(real);
		return NULL;
	}
	return real;
}

/* fp-record --push of each window's capture, as it is written */
struct pusher {
	struct fk_capture_push p;
	unsigned failed;
};

static void push_one(void *data, const char *dir, const struct fk_capture_result *r)
{
	struct pusher *pu = data;
	GError *err = NULL;

	pu->p.from = r->window_from;
	pu->p.until = r->window_until;
	if (fk_capture_push(&pu->p, dir, &err) < 0) {
		tool_warn_error(err);
		pu->failed++;
	}
}

static void say(void *data, const char *line)
{
	tool_warn("%s", line);
}

/* --push's URL and labels as fold-push would take them, and fold-push itself */
static int push_check(const char *bindir, struct fk_store_url *store, char **fold_push)
{
	GError *err = NULL;

	if (fk_store_url_parse(opts.push, store, &err) < 0)
		tool_usage_error("--push: %s", err->message);
	for (char **l = opts.push_labels; l && *l; l++) {
		char *k, *v;

		if (fk_label_parse(*l, &k, &v, &err) < 0)
			tool_usage_error("--push-label: %s", err->message);
		g_free(k);
		g_free(v);
	}
	if (!(*fold_push = fk_capture_find_tool(bindir, "fold-push"))) {
		tool_warn("--push needs fold-push, which was not found next to fp-record or in PATH");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fk_capture_cfg cfg = FK_CAPTURE_CFG_INIT;
	struct fk_capture_result res = { 0 };
	struct fk_store_url store = { 0 };
	struct pusher pusher = { 0 };
	bool scheduled;
	char *fold_push = NULL;
	char *self = g_file_read_link("/proc/self/exe", NULL), *bindir, *real = NULL, *dir = NULL;
	char *cmp_old = NULL;
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(int));
	const char *env = g_getenv("FOLDKIT_PLUGIN");
	int selectors, rc;
	GError *err = NULL;

	tool_init("fp-record");
	tool_parse(&argc, &argv, "--exe FILE | --name NAME | --pid LIST | -- COMMAND [ARG…]",
		   "Record a program's processes on- and off-CPU into flame graphs.",
		   description, entries);
	selectors = !!opts.exe + !!opts.name + !!opts.pids + (argc > 1);
	if (selectors != 1)
		tool_usage_error("choose the processes with one of --exe, --name, --pid "
				 "or -- COMMAND");
	if (!(opts.seconds > 0 && opts.seconds <= 1e6) || isnan(opts.seconds))
		tool_usage_error("-d %g: a number of seconds above 0", opts.seconds);
	if (opts.freq < 1 || opts.freq > 100000)
		tool_usage_error("-F %d: samples per second, 1 to 100000", opts.freq);
	if (opts.warmup >= 0 && !opts.load)
		tool_usage_error("--warmup needs --load");
	if (opts.load && argc > 1)
		tool_usage_error("--load needs running processes (--exe, --name or --pid); "
				 "start the load from COMMAND instead");
	if (opts.cg && strcmp(opts.cg, "fp") != 0 && strcmp(opts.cg, "dwarf") != 0)
		tool_usage_error("--call-graph '%s': fp or dwarf", opts.cg);
	if (opts.stack_dump != -1 && (opts.stack_dump < 0 || opts.stack_dump > FK_STACK_DUMP_MAX))
		tool_usage_error("--stack-dump %d: bytes, 0 to %d", opts.stack_dump,
				 FK_STACK_DUMP_MAX);
	if (opts.exe && !(real = realpath(opts.exe, NULL)))
		tool_usage_error("--exe '%s': %s", opts.exe, g_strerror(errno));
	if (!(opts.delay >= 0 && opts.delay <= 1e6))
		tool_usage_error("--delay %g: a number of seconds, 0 or more", opts.delay);
	if (opts.count < 1 || opts.count > 10000)
		tool_usage_error("--count %d: windows, 1 to 10000", opts.count);
	if ((opts.count > 1) != (opts.every > 0))
		tool_usage_error("--every and --count go together (--every SECONDS --count N, "
				 "N at least 2)");
	if (opts.every > 0 && !(opts.every >= opts.seconds && opts.every <= 1e6))
		tool_usage_error("--every %g: at least the window's length (-d %g), in seconds",
				 opts.every, opts.seconds);
	if ((opts.delay > 0 || opts.count > 1) && argc > 1)
		tool_usage_error("--delay and --every need running processes (--exe, --name or "
				 "--pid): COMMAND would be started anew");
	if (opts.compare && !(cmp_old = compare_dir(opts.compare)))
		tool_usage_error("--compare '%s': not an fp-record capture (a directory with "
				 "index.tsv and on/ or off/)", opts.compare);
	if (opts.pids && !fk_proc_parse_pids(opts.pids, pids))
		tool_usage_error("--pid '%s': process ids separated by commas", opts.pids);
	if (opts.push_labels && !opts.push)
		tool_usage_error("--push-label goes with --push");
	if (!opts.dir) {
		char stamp[32];
		time_t t = time(NULL);

		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&t));
		opts.dir = dir = g_strconcat("fp-record-", stamp, NULL);
	}
	/* perf that has exited closes its control pipe: a write must not kill us */
	signal(SIGPIPE, SIG_IGN);
	bindir = self ? g_path_get_dirname(self) : g_strdup(".");
	cfg.by = opts.exe ? FK_BY_EXE : opts.name ? FK_BY_NAME : FK_BY_PID;
	cfg.exe = real;
	cfg.name = opts.name;
	cfg.pids = (int *)(void *)pids->data;
	cfg.npids = pids->len;
	cfg.cmd = argc > 1 ? argv + 1 : NULL;
	cfg.seconds = opts.seconds;
	cfg.freq = (unsigned)opts.freq;
	cfg.on = opts.on || !opts.off;
	cfg.off = opts.off || !opts.on;
	cfg.cg = opts.cg && strcmp(opts.cg, "dwarf") == 0 ? FK_CG_DWARF : FK_CG_FP;
	/* perf rounds a dump up to whole 8-byte words */
	if (opts.stack_dump >= 0)
		cfg.stack_dump = ((unsigned)opts.stack_dump + 7) / 8 * 8;
	cfg.load = opts.load;
	cfg.warmup = opts.warmup >= 0 ? opts.warmup : 3;
	cfg.title = opts.title;
	cfg.keep_data = opts.keep_data;
	cfg.compare = cmp_old;
	cfg.group_workers = opts.group_workers;
	cfg.dir = opts.dir;
	if (g_getenv("FOLDKIT_PERF") && *g_getenv("FOLDKIT_PERF"))
		cfg.perf = g_getenv("FOLDKIT_PERF");
	cfg.plugin = fk_capture_find_plugin(opts.plugin ? opts.plugin : env && *env ? env : NULL,
					    bindir, FK_PLUGINDIR);
	cfg.bindir = bindir;
	cfg.say = say;
	/* a URL, a label or a missing fold-push refused before, not after, the window */
	if (opts.push && push_check(bindir, &store, &fold_push) < 0) {
		rc = -1;
		goto out;
	}

	scheduled = opts.delay > 0 || opts.count > 1;
	pusher.p = (struct fk_capture_push){
		.fold_push = fold_push, .url = opts.push, .shown = store.display,
		.labels = (const char *const *)opts.push_labels,
	};
	if (scheduled) {
		struct fk_schedule sch = { .delay = opts.delay, .every = opts.every,
					   .count = (unsigned)opts.count };

		/* each window pushed once written, while the next waits */
		if (opts.push) {
			sch.written = push_one;
			sch.data = &pusher;
		}
		rc = fk_capture_schedule(&cfg, &sch, &res, &err);
	} else {
		rc = fk_capture_run(&cfg, &res, &err);
	}
	if (rc == 0) {
		tool_warn("wrote %u process%s to %s: open a .speedscope.json in "
			  "https://www.speedscope.app/, or a .svg or .html in a browser", res.processes, res.processes == 1 ? "" : "es",
			  cfg.dir);
		for (guint i = 0; i < res.paths->len; i++)
			printf("%s\n", (char *)g_ptr_array_index(res.paths, i));
	} else {
		tool_warn_error(err);
	}
	if (rc == 0 && opts.push && !scheduled)
		push_one(&pusher, cfg.dir, &res);
	/* the captures stay whatever the pushes did; a failed one is exit 1 */
	if (pusher.failed)
		rc = -1;
	fk_capture_result_clear(&res);
out:
	fk_store_url_release(&store);
	g_free(fold_push);
	g_strfreev(opts.push_labels);
	g_free((char *)cfg.plugin);
	g_free(bindir);
	g_free(self);
	g_free(real);
	g_free(cmp_old);
	g_free(dir);
	g_array_unref(pids);
	return tool_finish(rc == 0 ? FK_EXIT_OK : FK_EXIT_FAILURE);
}
