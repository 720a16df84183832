/*
 * session.h - one fp-record capture: choose the processes, drive the load,
 * record on- and off-CPU for the same window, fold, draw and report.
 *
 *	struct fk_capture_cfg cfg = FK_CAPTURE_CFG_INIT;
 *	cfg.by = FK_BY_EXE;
 *	cfg.exe = "/srv/bin/server";          // a real path
 *	cfg.dir = "fp-record-20260101-120000";
 *	cfg.plugin = "/usr/local/.../foldkit.so";
 *	cfg.say = print_line;                  // progress and warnings, one line each
 *	struct fk_capture_result res;
 *	int rc = fk_capture_run(&cfg, &res, &err);
 *	// rc 0: res.paths lists the files written (index.tsv, report.md,
 *	// then each process's .folded and .svg); -1: *err says why
 *	fk_capture_result_clear(&res);
 *
 * The steps (each says what it does through say()):
 *  1. perf is there and runs; the plugin (and fp-collapse for DWARF) too.
 *  2. DIR is made (core/outdir.h: an existing one must be the caller's,
 *     writable by no other user, and empty), with a private directory
 *     inside it (mode 0700) where perf and the plugin run and write.
 *     Every file put in DIR is a new name made at DIR's descriptor.
 *  3. The processes are chosen (proc.h); none is an error that lists the
 *     near misses.  With a load command, it is started in its own process
 *     group (output to DIR/load.log), the warmup waited out, and the choice
 *     made again without it.  A command (cfg.cmd) is started stopped, in
 *     its own process group.
 *  4. perf record on-CPU (-p, following children) and off-CPU
 *     (sched_switch, filtered to the processes' threads and newer tasks)
 *     start disabled; both are enabled, and the window runs until
 *     cfg.seconds pass, SIGINT/SIGTERM/SIGHUP arrive, the command exits or
 *     every process has gone.  /proc is watched meanwhile: children
 *     started by the processes join the capture, exits are noted.
 *  5. Both are disabled and stopped; the load and the command are ended.
 *  6. Each recording is folded by the plugin into one profile per process
 *     (for DWARF stacks, perf script | fp-collapse --pid), moved to
 *     DIR/on and DIR/off (each with its index.tsv, core/splitindex.h),
 *     drawn with fold2svg, and summed into index.tsv and report.md (with fold-report's findings when it is installed).
 *     The off-CPU recording also gives each thread's states (threads.h:
 *     the plugin's, and those of the threads that never switched, read
 *     from /proc as the window opened) to threads.tsv and report.md.
 *     Idle processes, processes gone early and profiles made mostly of
 *     [unknown] frames are reported with what to do.
 *  7. With cfg.compare, the capture set against that earlier one:
 *     DIR/compare.md, compare.json and the differential graphs of
 *     DIR/compare/ (lib/capture/compare.c).
 *  8. With cfg.group_workers, the processes of one name and role merged
 *     into DIR/group/ with the spread of their work (capture/group.h,
 *     lib/capture/workers.c), in report.md too.
 * Whatever happens, no perf, load or command process and no temporary
 * file is left behind (the perf.data files stay with keep_data).  A
 * second interrupt during folding stops the capture there.
 *
 * The caller must ignore SIGPIPE (a perf that has exited closes its
 * control pipe).  The run uses the thread-default main context.
 */
#ifndef FOLDKIT_CAPTURE_SESSION_H
#define FOLDKIT_CAPTURE_SESSION_H

#include "capture/perfcmd.h"
#include "capture/proc.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct fk_capture_cfg {
	/* which processes: cmd set, or by (exe, name or pids) */
	enum fk_select_by by;
	const char *exe;		/* FK_BY_EXE: a real path */
	const char *name;		/* FK_BY_NAME */
	const int *pids;		/* FK_BY_PID */
	size_t npids;
	char **cmd;			/* a command to start and record, or NULL */
	/* how */
	double seconds;			/* the window */
	unsigned freq;			/* on-CPU samples per second */
	bool on, off;			/* what to record */
	enum fk_call_graph cg;		/* on-CPU stacks */
	unsigned stack_dump;		/* off-CPU: user stack bytes per switch out */
	const char *load;		/* a shell command, or NULL */
	double warmup;			/* seconds between load and window */
	const char *title;		/* a prefix for the graphs' titles, or NULL */
	bool keep_data;			/* keep DIR/on.data and DIR/off.data */
	const char *compare;		/* an earlier capture to compare with
					   (compare.c), or NULL */
	bool group_workers;		/* merge the processes of one role
					   (workers.c) */
	const char *dir;		/* the output directory */
	/* where things are */
	const char *perf;		/* the perf program */
	const char *plugin;		/* foldkit.so, or NULL if not found */
	const char *bindir;		/* fold2svg, fp-collapse, fold-report: here
					   first, then PATH */
	const char *proc_root;		/* "/proc" */
	/* one line of progress or warning, without a newline */
	void (*say)(void *data, const char *line);
	void *say_data;
};

#define FK_CAPTURE_CFG_INIT { .seconds = 30, .freq = 99, .on = true, .off = true, \
			      .stack_dump = FK_STACK_DUMP_DEFAULT, \
			      .warmup = 3, .perf = "perf", .proc_root = "/proc" }

struct fk_capture_result {
	GPtrArray *paths;		/* char *: every file written, for the user */
	unsigned processes;		/* rows in index.tsv */
	bool interrupted;		/* the window was ended by a signal */
	int64_t window_from, window_until;	/* the window in Unix seconds,
					   its start rounded down and its end
					   up (for a store: push.h) */
};

/* 0, or -1 with *err set (nothing captured, or a step failed). */
int fk_capture_run(const struct fk_capture_cfg *cfg, struct fk_capture_result *res,
		   GError **err);
void fk_capture_result_clear(struct fk_capture_result *res);

/*
 * Where fp-record finds a tool next to itself: bindir/name, else name in
 * PATH; NULL if neither.  Free with g_free().
 */
char *fk_capture_find_tool(const char *bindir, const char *name);

/*
 * The perf plugin: given (--plugin or $FOLDKIT_PLUGIN) if not NULL, else
 * the first regular file of bindir/../perf-plugin/foldkit.so (the build
 * tree), bindir/../libexec/perf-core/dlfilters/foldkit.so and
 * installed/foldkit.so (where make install puts it).  NULL if none.
 * Free with g_free().
 */
char *fk_capture_find_plugin(const char *given, const char *bindir, const char *installed);

#endif
