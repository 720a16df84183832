/*
 * model.h - fold-report's report of one profile, as the rules fill it in
 * and the writers print it.  Internal to lib/report/: report.c builds a
 * struct report per profile (report_model_new()), rules.c adds the
 * findings, markdown.c and json.c write it.
 *
 * Every number is a count (fk_count, exact) and its total; shares are
 * computed when written, exactly (share_scaled()), so the Markdown and
 * the JSON cannot disagree.  Names are slices of the profile's stacks,
 * never copied, and are escaped by the writers, never here.
 */
#ifndef FOLDKIT_REPORT_MODEL_H
#define FOLDKIT_REPORT_MODEL_H

#include "core/count.h"
#include "core/str.h"
#include "report/profile.h"
#include "report/report.h"

#include <glib.h>
#include <stdint.h>

/* One profile to report on: a whole, or a split= directory's file. */
struct report_input {
	const char *title;		/* "cpu.folded", "DIR", "DIR/x.folded" */
	const char *const *files;	/* the files read into it */
	size_t nfiles;
	struct profile *profile;
	const char *const *off_files;	/* the off-CPU profile's, if any */
	size_t noff_files;
	struct profile *offcpu;		/* NULL: no contention section; the
					   profile itself for an off-CPU
					   capture alone */
	const char *process;		/* "whole", or the part's process
					   (its file's name without .folded) */
	size_t nprocesses, nthreads;	/* threads: distinct roots of each
					   process (0 processes: one input) */
};

/* A thread row: a root frame, or with --group-threads the names that
 * differ only in digits, shown as "mt-worker-*" with members > 1. */
struct thread_row {
	struct fk_str name;	/* the root, or the group's name */
	fk_count count;
	uint32_t members;	/* root frames merged in it */
};

/*
 * A row of the self or inclusive table.  kpart (profile.h) set: the
 * kernel's part of stacks, summarised: in the self table the kernel's
 * part below f (the last frame before the kernel was entered), which a
 * kernel leaf is charged to; in the inclusive table every stack with such
 * a kernel part (f NULL).  Written "f -> [kernel: LABEL]", "[kernel: LABEL]".
 */
struct frame_row {
	const struct frame_stat *f;
	fk_count count;
	uint8_t kpart;
};

/*
 * A row of the hot paths: a stack as read, or its text with its kernel
 * part summarised as a last frame "[kernel: LABEL]" (kpart set), split
 * into its root and the rest (tail.s NULL: a root alone).
 */
struct path_row {
	struct fk_str root, tail;
	fk_count count;
	uint8_t kpart;
};

/* A frame wide in both profiles. */
struct contention_row {
	const struct frame_stat *on, *off;
	bool lock_wait;		/* most of off->incl waits on a lock (off->lock_wait) */
};

/*
 * A finding's text, in parts: literal text (ours, safe) and code spans
 * (frame and thread names, from the input: escaped by each writer).
 */
struct text_part {
	uint32_t off, len;	/* into finding.buf */
	bool code;
};

/*
 * A finding: about frame (the program's own frame where there is one),
 * citing the edge from -> to (finding_edge()), with count
 * its evidence in its profile's unit (off: the off-CPU profile's) out of
 * total.  cls is what it is ("on-cpu", or a wait kind's name for the
 * off-CPU profile's).  save is what fixing it could save, in ns of thread
 * time (-1: not a time unit; 0: nothing, a finding that only informs),
 * by which findings are ranked.
 */
struct finding {
	const struct report_rule *rule;
	GString *buf;
	GArray *parts;		/* struct text_part */
	struct fk_str frame;	/* the frame (or thread) it is about */
	struct fk_str from, to;	/* the edge named (from empty: to alone;
				   both empty: none) */
	fk_count count;		/* its evidence, in the profile's unit */
	fk_count total;		/* of its profile */
	fk_count save;
	const char *cls;
	bool off;		/* from the off-CPU profile */
	const char *profile;	/* from another ("runq"), NULL: on or off */
	const char *unit;	/* that one's unit, NULL: its profile's */
	bool info;		/* nothing to fix: ranked after the others */
};

struct report {
	const struct report_input *in;
	const struct report_opts *o;
	struct profile *p, *off;	/* the input's; off: NULL without --offcpu */
	GArray *threads;		/* struct thread_row, heaviest first */
	/* the heaviest stacks, their kernel parts summarised (the stacks
	   so made alike are one row), heaviest first; npaths: how many
	   rows there are in all */
	GPtrArray *top_paths;		/* struct path_row *, owned */
	size_t npaths;
	struct fold_table *paths;	/* private: the summarised stacks */
	GArray *self, *incl;		/* struct frame_row, heaviest first */
	GArray *cats;			/* size_t category indexes, heaviest first */
	GArray *contention;		/* struct contention_row, by the smaller share */
	GPtrArray *findings;		/* struct finding *, most important first */
};

/* --- shares: exact, whatever the counts ------------------------------- */

/*
 * c / total * scale, rounded half up (0 when total is 0): scale 1000 gives
 * tenths of a percent, 10^6 a share with six decimals.  Exact while total
 * is below 2^123 in fk_count units (10^28 counts); beyond, both are halved
 * until it is, which moves no printed digit.
 */
uint64_t share_scaled(fk_count c, fk_count total, uint64_t scale);

/* Compares a/ta with b/tb exactly (a share of an empty total is 0). */
int share_cmp(fk_count a, fk_count ta, fk_count b, fk_count tb);

/* True if c / total >= frac (frac in fk_count units: FK_COUNT_ONE is 1). */
bool share_at_least(fk_count c, fk_count total, fk_count frac);

/* --- findings ---------------------------------------------------------- */

struct finding *finding_new(const struct report_rule *rule, struct fk_str frame,
			    fk_count count);
void finding_free(struct finding *f);
void finding_text(struct finding *f, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void finding_code(struct finding *f, struct fk_str s);
/* "`a → b`", or "`b`" when a is NULL: the evidence seed 000 asks for;
 * sets f->from and f->to */
void finding_edge(struct finding *f, const struct frame_stat *a,
		  const struct frame_stat *b);
/* " (N UNIT, P%)", in f's profile's unit; sets f->total, and f->save
 * (from c) unless f->info */
void finding_amount(struct finding *f, const struct report *r, fk_count c,
		    fk_count total);
/* The unit of f's profile */
const char *finding_unit(const struct finding *f, const struct report *r);
/* c in UNIT as ns (-1 when UNIT is not a time) */
fk_count count_ns(fk_count c, const char *unit);

/* A rule: finds what it looks for in r and appends findings to out.
 * Its threshold is o->thresholds[its index] when that is set (>= 0). */
struct report_rule {
	const char *name;	/* "contended-lock" */
	fk_count min_share;	/* its threshold, as a fraction (0: none) */
	void (*find)(const struct report_rule *rule, const struct report *r,
		     GPtrArray *out);
	const char *what;	/* what the threshold is a share of */
};

/* The rules, in the order they rank equal findings (rules.c). */
extern const struct report_rule report_rules[];
extern const size_t report_nrules;

/* Runs every rule on r and keeps the o->top most important findings. */
void report_find(struct report *r);

/* report_write() with a classifier made once (the fuzzer's, for speed) */
int report_write_fc(FILE *out, const struct report_source *on,
		    const struct report_source *off, const struct report_opts *o,
		    const struct frame_classifier *fc, GError **err);

/* --- writers ----------------------------------------------------------- */

/*
 * Writes one profile's report.  part is true for a split= directory's
 * process sections (after the whole).  The JSON object is indented by
 * indent spaces and left open (without its last newline and '}') unless
 * close is true, so that the caller can add the "processes" array.
 */
void report_write_markdown(FILE *out, const struct report *r, bool part);
void report_write_json(FILE *out, const struct report *r, int indent, bool close);

/* The name of a table row: "f", "f -> [kernel: LABEL]" or
 * "[kernel: LABEL]", appended to g. */
void frame_row_name(const struct frame_row *row, GString *g);

/* A thread's group: its name with each run of digits made '*'
 * ("mt-worker-12" -> "mt-worker-*"), into g (replacing what it held);
 * the threads table and the idle-thread rule group threads so */
void thread_group_name(GString *g, const char *s, size_t len);
/* c formatted exactly (fk_count_format) into buf (FK_COUNT_BUFSZ bytes) */
const char *count_str(fk_count c, char *buf);
/* the same with thousands separators, "1,234,567.5" (2 * FK_COUNT_BUFSZ) */
const char *count_grouped(fk_count c, char *buf);

#endif
