/*
 * outputs.h - what fp-record writes, and the folded files it reads back:
 *
 *	DIR/on/<name>.folded, .svg, .html, .speedscope.json	on-CPU, counts in ns
 *	DIR/on/index.tsv			its files (core/splitindex.h),
 *						and each one's role
 *	DIR/off/<name>.folded, .svg, .html, .speedscope.json	off-CPU, counts in us
 *	DIR/off/index.tsv
 *	DIR/runq/<name>.folded, .svg		time runnable (waiting for a CPU), us,
 *						the stack at preemption or wake-up
 *	DIR/runq/index.tsv
 *	DIR/wake/<name>.folded, .svg		off-wake stacks (wakee, "--", waker),
 *						time blocked until woken, us
 *	DIR/wake/index.tsv
 *	DIR/index.tsv				one row per process
 *	DIR/threads.tsv				each thread by state (threads.h)
 *	DIR/report.md				the capture, and fold-report's findings
 *
 *	char *stem = fk_out_stem("tt_media_server", 4242);  // "tt_media_server-4242"
 *	struct fk_folded_sum s;
 *	fk_folded_sum("DIR/on/x-1.folded", NULL, &s, &err);  // the total
 *
 * <name> is the process's name and role, the same in every run of the
 * program ("server.main", "server.worker-1": capture/roles.h).
 * index.tsv has a header line, then one line per process, by pid:
 *
 *	process	pid	exe	on_cpu	on_unit	off_cpu	off_unit	on_folded	on_svg	off_folded	off_svg	on_html	off_html	role	ppid	args	on_speedscope	off_speedscope
 *	server	4242	/srv/server	1200000000	ns	5300000	us	on/server.main.folded	on/server.main.svg	off/server.main.folded	off/server.main.svg	on/server.main.html	off/server.main.html	main	1	/srv/server --port 8000	on/server.main.speedscope.json	off/server.main.speedscope.json
 *
 * A total is "-" when that side was not recorded, or its recording failed
 * (perf died, the fold failed: the total is unknown), 0 when it was
 * recorded and the process has no samples; a file is "-" when it was not
 * written; ppid and args are "-" when unknown.  The process, exe and args
 * cells have control characters, invalid UTF-8 and backslashes escaped as
 * "\xNN" and "\\" (core/textesc.h); args are the arguments joined by a
 * blank, a blank inside one written "\x20", so that they split back exactly.
 */
#ifndef FOLDKIT_CAPTURE_OUTPUTS_H
#define FOLDKIT_CAPTURE_OUTPUTS_H

#include "core/count.h"
#include "core/outdir.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

/*
 * The file name stem for a process: comm with bytes other than
 * [A-Za-z0-9._-] as '_', never starting with '.' or '-', then "-PID".
 * Free with g_free().
 */
char *fk_out_stem(const char *comm, int pid);

/*
 * Splits a folded profile whose root frames are "comm-PID" (fp-collapse
 * --pid) into dir/<comm>-<pid>.folded, one per pid, the root frame
 * becoming "comm" as in the plugin's split files, and writes
 * dir/index.tsv as the plugin does (core/splitindex.h; samples unknown,
 * counts in unit), every file new (core/outdir.h).  Blanks and a leading
 * '#' in comm become '_', as the collapser makes them.  A stack whose root
 * has no "-PID", and a differential line, are counted in *unsplit and left
 * out.
 */
int fk_split_by_pid(const char *in, struct fk_outdir *dir, const char *unit, uint64_t *unsplit,
		    GError **err);

struct fk_folded_sum {
	fk_count total;
	fk_count unresolved;	/* in stacks with an unresolved frame */
	size_t stacks;
	uint64_t skipped;	/* lines that were not folded stacks */
};

/*
 * Sums a folded file.  unresolved (NULL-terminated, may be NULL) lists
 * the frames that mean perf found no symbol, such as "[unknown]" and
 * "[server]" (perf's placeholder for an address in a stripped server).
 * -1 with *err set if the file cannot be read.
 */
int fk_folded_sum(const char *path, const char *const *unresolved,
		  struct fk_folded_sum *s, GError **err);

/* One process of a capture, for index.tsv and report.md. */
struct fk_out_row {
	int pid;
	char *comm;
	char *exe;			/* NULL: unknown */
	bool on, off;			/* recorded */
	struct fk_folded_sum on_sum, off_sum;
	bool on_has_samples, off_has_samples;	/* the plugin counted them */
	uint64_t on_samples, off_samples;
	char *on_folded, *off_folded;	/* relative to DIR; NULL: none */
	char *on_svg, *off_svg;
	char *on_html, *off_html;	/* fold2html's pages, beside the SVGs */
	/* off-CPU with stack dumps: the plugin's index.tsv's microseconds
	 * in stacks repaired through code without frame pointers, in those
	 * not, and why most of these were not */
	bool off_has_repair;
	uint64_t off_repaired_us, off_unrepaired_us;
	char *off_unrepaired_why;
	/* on-CPU: the plugin's index.tsv's samples (ns) whose innermost
	 * function keeps no frame pointer where sampled (its caller missing),
	 * and the function most of them are in */
	bool on_has_caller_lost;
	uint64_t on_caller_lost;
	char *on_caller_lost_in;
	char *on_speedscope, *off_speedscope;	/* NAME.speedscope.json */
	/* the off-CPU recording's run-queue and off-wake profiles (us),
	 * their files (NULL: none) and totals */
	char *runq_folded, *runq_svg, *wake_folded, *wake_svg;
	struct fk_folded_sum runq_sum, wake_sum;
	bool runq_has_samples, wake_has_samples;
	uint64_t runq_samples, wake_samples;
	double exited;			/* seconds into the window, or < 0 */
	bool selected;			/* chosen (not a child found later) */
	char *role;			/* "main", "worker"... (roles.h) */
	char *name;			/* the files' stem: "server.worker-1" */
	int ppid;			/* 0: unknown */
	char **argv;			/* NULL: unknown */
};

void fk_out_row_free(struct fk_out_row *r);

#define FK_ON_UNIT "ns"
#define FK_OFF_UNIT "us"

/* Writes index.tsv for rows (struct fk_out_row *, in order). */
int fk_index_write(FILE *f, GPtrArray *rows, const char *name, GError **err);

/* A count with its unit for people: "1.234 s", "56.7 ms", "0 us". */
char *fk_out_human(fk_count c, const char *unit);

#endif
