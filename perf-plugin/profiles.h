/*
 * profiles.h - the plugin's folded stacks: one table for the whole
 * recording, or with split one per process, and their output.
 *
 *	struct profiles *p = profiles_new(&collapse_opts, split);
 *	...per sample:
 *	struct profile *pr = profiles_get(p, pid, tid, comm);
 *	collapser_add(pr->c, &sample);
 *	pr->samples++;
 *	...at the end:
 *	profiles_write(p, stdout, "<stdout>", false, &err); // one table
 *	profiles_write_split(p, "out", false, &err);       // DIR/comm-pid.folded
 *	profiles_free(p);
 *
 * Without split every sample goes to the one profile (pid -1).  With
 * split a process is named after its main thread (tid == pid) as last
 * seen, or else the first thread seen.  Split files and the index are
 * written under a temporary name and renamed, so an interrupted run
 * never leaves a half-written profile behind.
 *
 * round_us: the counts are microseconds with fractions (off-CPU time);
 * each stack's total is rounded to a whole microsecond when written and
 * stacks that round to 0 are left out (counted in *dropped).
 */
#ifndef FOLDKIT_PLUGIN_PROFILES_H
#define FOLDKIT_PLUGIN_PROFILES_H

#include "collapse/collapse.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

struct profile {
	int pid;
	char *comm;
	struct collapser *c;
	uint64_t samples;
};

struct profiles;

/* co is copied by each collapser; its strings must outlive p. */
struct profiles *profiles_new(const struct collapse_opts *co, bool split);
void profiles_free(struct profiles *p);

/* The profile a sample of thread tid of process pid goes to; owned by p. */
struct profile *profiles_get(struct profiles *p, int pid, int tid,
			     const char *comm);

/*
 * Writes every stack of every profile, merged and sorted, to out; name
 * (e.g. "<stdout>") is what a write error calls out.
 */
int profiles_write(struct profiles *p, FILE *out, const char *name,
		   bool round_us, uint64_t *dropped, GError **err);

/*
 * Writes DIR/<comm>-<pid>.folded for every profile with samples, and
 * DIR/index.tsv ("file comm pid samples share", busiest first); creates
 * DIR if needed.  *nfiles gets the number of profiles written.
 */
int profiles_write_split(struct profiles *p, const char *dir, bool round_us,
			 uint64_t *dropped, size_t *nfiles, GError **err);

/* The file name part for comm: [A-Za-z0-9._-] kept, others '_'. */
char *profiles_file_name(const char *comm, int pid);

#endif
