/*
 * profiles.h - the plugin's folded stacks: one table for the whole
 * recording, or one per process, named, selected and written.
 *
 *	struct profiles *p = profiles_new(&collapse_opts, true);
 *	...per sample:
 *	struct profile *pr = profiles_get(p, pid, tid, comm);
 *	collapser_add(pr->c, &sample);
 *	pr->samples++;
 *	...at the end:
 *	if (profiles_finish(p, name_of, data, comm_re, false, &dropped) == 0)
 *		...nothing to write...
 *	profiles_write(p, stdout, "<stdout>", &err);                 // merged
 *	profiles_write_split(p, "out", "ns", &nfiles, &err);        // per process
 *	profiles_free(p);
 *
 * Without per_process every sample goes to the one profile (pid -1).  With
 * it, each process has its own, named by profiles_finish(): after what
 * name_of() says (the plugin asks the perf.data file: the main thread's
 * last name, else the executable's), else after its main thread (tid ==
 * pid) as its samples last named it, else "[unknown]" - never after
 * whichever other thread happened to be sampled.
 *
 * Split files are DIR/NAME-PID.folded (profiles_file_name()) and
 * DIR/index.tsv, a header line and one line per process, busiest first:
 *
 *	file	comm	pid	samples	share	total	unit
 *	server-100.folded	server	100	3	0.9000	9	us
 *
 * comm with control characters, invalid UTF-8 and backslashes written as
 * "\xNN" and "\\" (core/textesc.h, FK_ESC_BACKSLASH); every line ends with
 * a newline.  samples counts samples (off-CPU: waits), total is the sum of
 * the counts written, in unit (core/splitindex.h writes and reads it).
 * DIR is a core/outdir.h directory: made here, or one of the caller's no
 * other user may write to that is empty or holds an earlier split= output
 * alone (its index.tsv, the files it lists, their .speedscope.json), which
 * is replaced whole; anything else is refused.  Every file is a new name
 * written under a temporary one first; the earlier output is removed
 * only once all are written, so a failure before leaves it as it was.
 *
 * round_us: the counts are microseconds with fractions (off-CPU time);
 * profiles_finish() rounds each stack's total to a whole microsecond, and
 * stacks that round to 0 are left out (counted in *dropped), and so is a
 * profile left with none.
 */
#ifndef FOLDKIT_PLUGIN_PROFILES_H
#define FOLDKIT_PLUGIN_PROFILES_H

#include "collapse/collapse.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

struct profile {
	int pid;
	char *comm;		/* the main thread's name from its samples, or NULL */
	char *name;		/* set by profiles_finish() */
	bool selected;		/* set by profiles_finish() */
	size_t stacks;		/* set by profiles_finish(): those to write */
	struct collapser *c;
	uint64_t samples;
};

struct profiles;

/* co is copied by each collapser; its strings must outlive p. */
struct profiles *profiles_new(const struct collapse_opts *co, bool per_process);
void profiles_free(struct profiles *p);

/* The profile a sample of thread tid of process pid goes to; owned by p. */
struct profile *profiles_get(struct profiles *p, int pid, int tid,
			     const char *comm);

/* A process's name from elsewhere, or NULL (data is name_of's). */
typedef const char *profiles_name_fn(void *data, int pid);

/*
 * Names every process (name_of may be NULL), selects those whose name
 * matches re (every one when re is NULL), and rounds their counts when
 * round_us (*dropped gets the stacks rounded to 0).  Returns how many
 * stacks there are to write.  Call it once, before writing.
 */
size_t profiles_finish(struct profiles *p, profiles_name_fn *name_of, void *data,
		       const GRegex *re, bool round_us, uint64_t *dropped);

/*
 * The name profiles_finish() gave process pid (what its split file is
 * named after), or NULL if it has none (no samples, or not per process).
 */
const char *profiles_name(struct profiles *p, int pid);

/*
 * Whether profiles_finish() selected process pid (always, when not per
 * process; never, for a process without samples).
 */
bool profiles_selected(struct profiles *p, int pid);

/*
 * "name (pid), ..." for the first max processes with stacks, by pid, and
 * ", ..." if there are more; for messages.  Free with g_free().
 */
char *profiles_describe(struct profiles *p, unsigned max);

/*
 * Writes the stacks of every selected profile, merged and sorted, to out;
 * name (e.g. "<stdout>") is what a write error calls out.
 */
int profiles_write(struct profiles *p, FILE *out, const char *name, GError **err);

/*
 * Writes DIR/NAME-PID.folded for every selected profile with stacks, and
 * DIR/index.tsv with unit (of the counts: "ns", "us", "switches"...) in
 * its last column; makes DIR, or takes it as above.  *nfiles gets the
 * number of profiles written.
 */
int profiles_write_split(struct profiles *p, const char *dir, const char *unit,
			 size_t *nfiles, GError **err);

/*
 * More columns for DIR/index.tsv, after unit: head is their header cells
 * ("a\tb"), and fn(data, pid, cells) appends each process's cells, each
 * after a tab ("\t12\t-"), with no tab or newline inside them.
 */
typedef void profiles_cells_fn(void *data, int pid, GString *cells);
void profiles_set_index_columns(struct profiles *p, const char *head, profiles_cells_fn *fn,
				void *data);

/*
 * The file name for a process: NAME-PID.folded, [A-Za-z0-9._-] kept and
 * other bytes '_', never starting with '.' or '-' (a '_' is put first);
 * "unknown-PID.folded" for a NULL name.  Free with g_free().
 */
char *profiles_file_name(const char *name, int pid);

#endif
