/*
 * report.h - fold-report: what a folded profile says, as a Markdown report
 * or JSON with the same numbers: summary, threads, hot paths, self and
 * inclusive functions, categories, symbol quality, contention between an
 * on-CPU and an off-CPU profile, and findings.
 *
 *	struct report_opts o = REPORT_OPTS_INIT;
 *	o.categories = category_list_new(true);
 *	struct report_source in = {
 *		.files = (char *[]){ "cpu.folded" }, .nfiles = 1,
 *		.whole = p,                            // profile_add() every line
 *	};
 *	if (report_write(stdout, &in, NULL, &o, &err) < 0)
 *		...                                    // a write error
 *
 * A split= directory (one profile per process, see foldkit-dlfilter(1)) is
 * written as its whole (every file's stacks in one table) followed by one
 * part per file, each a report of its own.
 *
 * Everything is deterministic: tables are ranked by count, ties broken by
 * name (bytewise), counts are exact (count.h) and shares are count / total
 * computed exactly and rounded half up.  Every name from the input is
 * escaped for its output (Markdown code spans, JSON strings), so no frame
 * can inject markup, script or terminal controls.  Nothing here prints to
 * anything but out.  The inputs' profiles are analysed on first use (and
 * keep the analysis); they must stay valid during the call.
 */
#ifndef FOLDKIT_REPORT_REPORT_H
#define FOLDKIT_REPORT_REPORT_H

#include "core/count.h"
#include "core/foldtable.h"
#include "report/categories.h"
#include "report/holders.h"
#include "report/runq.h"
#include "report/waitkind.h"

#define REPORT_MAX_RULES 16

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

enum report_format { REPORT_MARKDOWN, REPORT_JSON };

struct report_opts {
	unsigned top;			/* rows per table */
	bool group_threads;		/* merge thread names differing in digits */
	fk_count min_share;		/* contention: the least inclusive share in
					   both profiles (FK_COUNT_ONE is 100%) */
	const char *unit;		/* what a count is: "samples", "ns", "us" */
	const char *offcpu_unit;	/* the same for the off-CPU profile */
	const struct category_list *categories;
	const struct wait_kinds *wait_kinds;	/* NULL: the built-in table */
	enum report_format format;
	/* tables with every kernel frame, not the kernel's part of a stack
	   summarised by what it is (profile.h's kpart) */
	bool kernel_stacks;
	/* --offwake: who released the locks (report/holders.h), written
	 * after the whole profile's report; NULL: no such section */
	const struct holders *holders;
	const char *holders_source, *holders_unit;
	/* --runq: where threads waited for a CPU (report/runq.h), written
	 * after the lock holders, and the cpu-starved rule's; NULL: none */
	const struct runq *runq;
	const char *runq_source, *runq_unit;
	/* each rule's threshold (report_rule_index()), a fraction
	   (FK_COUNT_ONE is 100%); -1: the rule's default */
	fk_count thresholds[REPORT_MAX_RULES];
};

#define REPORT_OPTS_INIT { .top = 15, .min_share = FK_COUNT_ONE / 100, \
			   .unit = "samples", .offcpu_unit = "us", \
			   .format = REPORT_MARKDOWN, \
			   .thresholds = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, \
					   -1, -1, -1, -1, -1, -1 } }

/*
 * Sets a rule's threshold from "RULE=PERCENT" ("constructor=2"): 0, or -1
 * with *err set (an unknown rule, a bad percentage).
 */
int report_set_threshold(struct report_opts *o, const char *arg, GError **err);

/*
 * A profile as it is read: every folded line is added with its stack and
 * count.  stable says that the stack's bytes stay valid and unchanged until
 * profile_free() (a mapped file's, see folded_reader_stable()), so they
 * need not be copied.  profile_merge() adds every stack of from into into
 * (from must outlive into).  Free with profile_free().
 */
struct profile;
struct profile *profile_new(void);
void profile_add(struct profile *p, const char *stack, size_t len, fk_count count,
		 bool stable);
void profile_merge(struct profile *into, const struct profile *from);

/*
 * What the recording knew beside p's stacks (foldkit.so's on-CPU index.tsv
 * columns caller_lost and caller_lost_in): lost, in p's unit, is the count
 * of samples whose innermost function kept no frame pointer where sampled,
 * so that its caller is missing from their stacks; in names the function
 * most of them are in (NULL: none).  profile_merge() adds the counts up and
 * keeps the name of the part with the most.  The caller-lost rule reads it.
 */
void profile_set_caller_lost(struct profile *p, fk_count lost, const char *in);
void profile_free(struct profile *p);

/*
 * A profile as read: FILE... as one, or a split= directory's files, each a
 * process.  The caller keeps what it points to valid during report_write().
 */
struct report_source {
	const char *title;		/* shown: the directory, or NULL for the
					   files joined with ", " */
	char *const *files;		/* the files read */
	size_t nfiles;
	bool dir;			/* a split= directory: parts[i] is files[i] */
	struct profile *whole;		/* every file's stacks */
	struct profile *const *parts;	/* one profile per file */
};

/*
 * Fills src for files (a NULL-terminated array, which src takes and frees
 * with g_strfreev()): an empty profile per file, to profile_add() its
 * stacks to; then report_source_merge() makes the whole of them.  Free
 * with report_source_release().
 */
void report_source_init(struct report_source *src, char **files, bool dir,
			const char *title);
void report_source_merge(struct report_source *src);
void report_source_release(struct report_source *src);

/*
 * Writes the report of on, and for a split= directory then one of each of
 * its files.  With off (NULL: none), each gets a contention section: the
 * whole against off's whole, a file against the file of off (when off is
 * a directory too) of the same process (report_same_process()).  Returns
 * 0, or -1 with *err set on a write error (checked with ferror() and
 * fflush()).
 */
int report_write(FILE *out, const struct report_source *on,
		 const struct report_source *off, const struct report_opts *o,
		 GError **err);

/*
 * Parses a percentage, "1", "0.5" or "2.5%", from 0 to 100, into a
 * fraction (FK_COUNT_ONE is 100%).  Returns 0, or -1 if s is not one.
 */
int report_parse_percent(const char *s, fk_count *out);

/* True for a usable unit (it is printed unescaped): fk_unit_ok(), the
 * rule split directories' index.tsv keeps (core/splitindex.h). */
bool report_unit_ok(const char *unit);

/*
 * True if two split= files are the same process's: split= names them
 * COMM-PID.folded, and a process's COMM may differ between an on- and an
 * off-CPU profile (it is its busiest thread's name), so their "-PID.folded"
 * ends must match, or else their whole base names.
 */
bool report_same_process(const char *path1, const char *path2);

#endif
