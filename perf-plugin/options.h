/*
 * options.h - the plugin's --dlarg options.
 *
 *	struct opts o;
 *	plugin_opts_init(&o);
 *	switch (plugin_parse_args(&o, argc, argv, &err)) {
 *	case 1:  fputs(plugin_help, stdout); ...stop...
 *	case -1: ...report err->message, stop...
 *	}
 *
 * Each option is one --dlarg: a word ("pid") or word=value ("split=out");
 * leading dashes are ignored ("--pid" works too).  The strings in *o point
 * into argv, which perf keeps for the whole run.
 */
#ifndef FOLDKIT_PLUGIN_OPTIONS_H
#define FOLDKIT_PLUGIN_OPTIONS_H

#include "offcpu.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct opts {
	bool pid, tid, kernel, jit, all, addrs, offcpu, inline_, context;
	bool offwake;		/* offcpu's waits by their wakers (offwake.h) */
	bool thread_states;	/* the states TSV (states.h), not stacks */
	bool runq;		/* offcpu's run-queue profile (offcpu_set_runq()) */
	const char *event, *split, *output, *format;
	const char *waking_format;	/* offwake: sched_waking's format FILE */
	const char *speedscope, *pprof;	/* FILE (see exports.h) */
	bool speedscope_split;		/* bare speedscope: a file per process */
	const char *pid_list, *comm_pattern;	/* pid=LIST, comm=REGEX as given */
	GHashTable *pids;	/* pid=: the pids selected, or NULL for all */
	GRegex *comm_re;	/* comm=: the names selected, or NULL for all */
	unsigned states;
	uint64_t min_us;
	unsigned max_stack;
	unsigned threads;	/* threads=N: 1 or 2 (the default) */
};

/* The help text ("--dlarg help", perf script --list-dlfilters -v). */
extern const char plugin_help[];

/* The defaults: states S and D, everything else off. */
void plugin_opts_init(struct opts *o);

/* Frees what parsing made (pids, comm_re). */
void plugin_opts_clear(struct opts *o);

/*
 * Parses the --dlarg values; returns 0, 1 when help was asked for, or -1
 * with *err set (FK_ERROR_USAGE, the message names the option).
 * max_stack is filled from kernel.perf_event_max_stack when not given.
 */
int plugin_parse_args(struct opts *o, int argc, char **argv, GError **err);

#endif
