/*
 * flamegraph.h - the flame graph model: folded stacks in, positioned frames
 * out, with flamegraph.pl's merging, ordering and pruning.
 *
 *	struct fg_opts o = FG_OPTS_INIT;
 *	struct flamegraph *fg = fg_new(&o);
 *	fg_add(fg, "main;work", 9, fk_count_from_u64(3), 0, 1);
 *	fg_add(fg, "main;idle", 9, fk_count_from_u64(1), 0, 1);
 *	if (fg_build(fg, &err) < 0) ...         // "no stack counts found"
 *	for (size_t i = 0; i < fg_nframes(fg); i++) {
 *		const struct fg_frame *f = fg_frame(fg, i);
 *		// all (4), main (4), idle (1), work (3): root first, then
 *		// each frame before its children, children left to right
 *	}
 *	fg_free(fg);
 *
 * Equal stacks are summed and walked in sorted order (the order `sort`
 * gives flamegraph.pl's input lines), so sibling frames are in name order;
 * with flamechart they are walked in input order and only neighbouring
 * equal frames merge.  Sorted input is merged as it comes, with no table
 * and no sort; once a stack comes out of order, stacks added by reference
 * (fg_add_ref()) are kept as references and sorted (summing equal ones)
 * whenever they double, and copied ones go to a fold_table, so memory stays
 * within about twice the distinct stacks either way.  Frame names are kept
 * as they come ('<' and '>' included): the writers escape them for where
 * they land (svgwriter.h, htmlwriter.h).
 *
 * Frames narrower than the minimum width are dropped while walking, so
 * memory grows with unique stacks and drawn frames, never with input size
 * (except with flamechart, which keeps one entry per run of equal lines).
 * Frames deeper than FG_MAX_DEPTH are not drawn either (a stack of ten
 * million frames would take gigabytes, and no viewer shows a graph
 * sixteen million pixels tall): such a stack's samples stay in its frames
 * up to that depth, and fg_cut_stacks() counts it.
 * Stacks passed by reference are not copied: frame names point into them.
 *
 * With chain, each stack is rewritten as flamegraph.pl does for chain
 * graphs: the part before the first ";--;" separator gets a "--" frame
 * after it, and an empty trailing part is dropped.
 *
 * Differential input (ncounts 2): frame widths come from the second count;
 * each frame's delta is the second minus the first count of the stacks that
 * end at it (flamegraph.pl's rule), and maxdelta the largest |delta| of a
 * stack (at least 1).  Each frame also keeps its base, the first counts of
 * every stack through it, so that its total (inclusive) change is known
 * (fg_frame_change() with FG_DIFF_TOTAL: what FlameGraph's and inferno's
 * users asked for, a parent whose children all grew grows too), and
 * whether the first profile has it at all (base 0: a frame only in the
 * second profile).  With normalize, first counts are scaled by the second
 * total over the first before they are subtracted (never the base, so a
 * frame's absence stays exact):
 *
 *	first: a;b 10, a;c 10     second: a;b 30, a;c 30, d 5
 *	self:  a +0, b +20, c +20, d +5      total: a +40, d +5 (d is new)
 */
#ifndef FOLDKIT_FLAMEGRAPH_H
#define FOLDKIT_FLAMEGRAPH_H

#include "core/count.h"
#include "core/folded.h"
#include "core/skiplog.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_opts {
	bool reverse;		/* reverse each stack's frames (leaf first) */
	bool flamechart;	/* keep input order, merge only neighbours */
	bool chain;		/* --colors=chain: add a "--" frame (see below) */
	double image_width;	/* pixels */
	double xpad;		/* left and right margin, pixels */
	double minwidth;	/* pixels, or percent of the total with _pct */
	bool minwidth_pct;
	fk_count total;		/* --total: used if above the sum (0: none) */
	enum fg_diff {		/* differential: the change fg_maxdelta() scales */
		FG_DIFF_SELF,	/* of the stacks ending at a frame (flamegraph.pl) */
		FG_DIFF_TOTAL,	/* of every stack through it (inclusive) */
	} diff;
	bool normalize;		/* differential: first counts scaled to the
				   second total before subtracting */
};

#define FG_OPTS_INIT { .image_width = 1200, .xpad = 10, .minwidth = 0.1 }

/* The deepest frame drawn (the root "all" is depth 0). */
#define FG_MAX_DEPTH 1000000

struct fg_frame {
	const char *name;	/* not NUL-terminated; owned by the graph */
	uint32_t len;
	uint32_t depth;		/* 0 for the root, "all" (name "") */
	fk_count start, end;	/* position on the count axis */
	fk_count delta;		/* differential only: the self change */
	fk_count base;		/* differential only: the first counts of the
				   stacks through it, unscaled (0: a new frame) */
};

struct flamegraph;

struct flamegraph *fg_new(const struct fg_opts *o);
void fg_free(struct flamegraph *fg);

/*
 * Adds one folded line's stack and counts (c1 is ignored unless ncounts is
 * 2).  The stack is copied.
 */
void fg_add(struct flamegraph *fg, const char *stack, size_t len,
	    fk_count c0, fk_count c1, int ncounts);

/*
 * Merges the stacks into frames and drops those narrower than the minimum
 * width.  Returns 0, or -1 with *err set when there are no samples (a
 * FK_ERROR_PARSE "no stack counts found").  Call once, after every fg_add().
 */
/*
 * Like fg_add(), but keeps stack itself instead of a copy: the caller
 * guarantees the bytes stay valid and unchanged until fg_free() (frame
 * names point into them), e.g. a mapped file's (folded_reader_stable()).
 */
void fg_add_ref(struct flamegraph *fg, const char *stack, size_t len,
		fk_count c0, fk_count c1, int ncounts);

/*
 * Adds every stack of a folded file (NULL or "-": stdin) with fg_add_ref()
 * when it can be mapped (see folded_reader_open_mapped()), else fg_add();
 * the graph keeps the mapping until fg_free().  As flamegraph.pl does, all
 * but one of the blanks before the count stay in the last frame's name
 * (folded.h).
 * Lines that are not folded stacks are counted in skips.  All files share
 * one shape (folded.h): lines whose number of counts differs from the
 * first's are skipped, see fg_shape().  Returns 0, or -1 with *err set
 * ("FILE:LINE: ..."); the stacks read before an error stay.
 */
int fg_add_file(struct flamegraph *fg, const char *path,
		struct skip_log *skips, GError **err);

int fg_build(struct flamegraph *fg, GError **err);

/* After fg_build(): the drawn frames, root first, parents before children. */
size_t fg_nframes(const struct flamegraph *fg);
const struct fg_frame *fg_frame(const struct flamegraph *fg, size_t i);

/* The sum of the counts drawn (the second counts for differential input). */
fk_count fg_sum(const struct flamegraph *fg);

/* The width of the count axis: max(sum, --total). */
fk_count fg_timemax(const struct flamegraph *fg);

/* True when --total was given but below the sum, so it was ignored. */
bool fg_total_ignored(const struct flamegraph *fg);

uint32_t fg_depthmax(const struct flamegraph *fg);
bool fg_differential(const struct flamegraph *fg);

/* After fg_build(): how many stacks were deeper than FG_MAX_DEPTH (merged
 * equal neighbours count once). */
uint64_t fg_cut_stacks(const struct flamegraph *fg);

/* The shape of the files fg_add_file() read, with the lines it skipped. */
const struct folded_shape *fg_shape(const struct flamegraph *fg);

/*
 * Differential graphs, after fg_build().  The largest |change| (at least 1)
 * that colours scale to: of a stack for FG_DIFF_SELF (flamegraph.pl's
 * rule), of a drawn frame's total change for FG_DIFF_TOTAL.
 */
double fg_maxdelta(const struct flamegraph *fg);

/*
 * The change of frame f (of this graph) in the graph's mode: its delta for
 * FG_DIFF_SELF, else its width (the root's: the sum) less its base, the
 * base scaled when normalizing.  fg_frame_total_change() is the latter in
 * either mode.
 */
enum fg_diff fg_diff_mode(const struct flamegraph *fg);
fk_count fg_frame_change(const struct flamegraph *fg, const struct fg_frame *f);
fk_count fg_frame_total_change(const struct flamegraph *fg,
			       const struct fg_frame *f);

/* Whether a differential frame is absent from the first profile. */
static inline bool fg_frame_is_new(const struct fg_frame *f)
{
	return f->base == 0;
}

#endif
