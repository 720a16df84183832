/*
 * compare.h - fold-report --base: two profiles, split directories or
 * fp-record captures compared, before and after a change.
 *
 *	struct cmp_opts o = CMP_OPTS_INIT;
 *	struct cmp_side *old = cmp_side_read("cap-before", &o, skips, &err);
 *	struct cmp_side *new = cmp_side_read("cap-after", &o, skips, &err);
 *	if (!old || !new) ...report err...
 *	if (cmp_pair(old, new, &err) < 0) ...  // "ns, but ... us"; else
 *	                                // processes matched, or said unmatched
 *	if (cmp_write(stdout, old, new, &o, &err) < 0) ...a write error...
 *	cmp_side_free(old);
 *	cmp_side_free(new);
 *
 * A side is one folded file (a profile of the whole program), a split
 * directory (one file per process, its index.tsv giving the unit and each
 * file's samples), or an fp-record capture (its on/ and off/ split
 * directories).  Every side has the profile of all its processes; the
 * processes of two sides are matched by their role (index.tsv's role
 * column), else by name, several of one name in the order of their pids.
 *
 * For each matched process and profile (on-CPU, off-CPU), the functions
 * whose self and inclusive time changed most: each count divided by its
 * side's window in seconds (--window, else the window column of
 * fp-record's on/index.tsv and off/index.tsv), so that
 * captures of different lengths compare; without both windows, counts as
 * they are.  The root frame (the thread or process) is not a function.
 * A change inside the sampling error is left out:
 *
 *  - On-CPU counts are sampled: a function seen in n samples of weight w
 *    has the count w*n, with a standard error of w*sqrt(n) (Poisson).  w
 *    is the file's total over its samples from index.tsv; else 1 when
 *    the unit counts samples (or events, switches); else, for a time
 *    (ns), the greatest common divisor of the side's counts, the period
 *    of perf's fixed-rate cpu-clock.  A change smaller than z (3)
 *    standard errors of the difference, sqrt(w1*c1/W1^2 + w2*c2/W2^2),
 *    is left out.
 *  - Off-CPU time is not sampled: every context switch is recorded with
 *    its time, so there is no sampling error; a change is left out only
 *    when it is none.  (How much a wait varies from run to run is the
 *    program's, not the measurement's: compare two captures of one build
 *    to see it.)
 *
 * Shares are of each side's own profile total.  Everything is
 * deterministic: rows are ranked by the size of their change, ties by
 * name (bytewise).  Names are escaped for where they are written (JSON
 * strings, Markdown code spans).  Nothing here prints but to out.
 *
 * Memory grows with the distinct function names of each process, never
 * with the input's size.
 */
#ifndef FOLDKIT_REPORT_COMPARE_H
#define FOLDKIT_REPORT_COMPARE_H

#include "core/count.h"
#include "core/skiplog.h"
#include "report/report.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

struct cmp_opts {
	unsigned top;			/* rows per table */
	enum report_format format;
	const char *unit;		/* a plain file's unit (NULL: "samples") */
	double window[2];		/* base's and new's, seconds; 0: the
					   capture's, or none */
	double z;			/* standard errors a change must pass */
};

#define CMP_OPTS_INIT { .top = 15, .format = REPORT_MARKDOWN, .z = 3 }

struct cmp_side;

/*
 * Reads path (a file, "-" for standard input, a split directory or a
 * capture) as one side; which is is the base (0) or the new side (1), for
 * its window.  Lines that are not folded stacks are counted in skips.
 * NULL with *err set (naming the file, and the line) when it cannot be
 * read, holds a differential line, or its index.tsv is refused.
 */
struct cmp_side *cmp_side_read(const char *path, int which,
			       const struct cmp_opts *o, struct skip_log *skips,
			       GError **err);
void cmp_side_free(struct cmp_side *s);

/*
 * What reading s left out, one message a string ("DIR/old-1.folded: not
 * listed in DIR/index.tsv: left out": a file of an earlier run is never
 * summed), NULL-terminated; owned by s.  The tool says them, and the
 * Markdown lists them.
 */
const char *const *cmp_side_notes(const struct cmp_side *s);

/*
 * Matches the processes of base and new: after it, every process has its
 * counterpart or is listed as only in one side.  Call once, before
 * cmp_write().  -1 with *err set when a profile's counts are in other
 * units on the two sides.
 */
int cmp_pair(struct cmp_side *base, struct cmp_side *new, GError **err);

/*
 * Writes the comparison; 0, or -1 with *err set on a write error (checked
 * with ferror() and fflush()).
 */
int cmp_write(FILE *out, const struct cmp_side *base, const struct cmp_side *new,
	      const struct cmp_opts *o, GError **err);

#endif
