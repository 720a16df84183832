/*
 * svgargs.h - fold2svg's command-line options: the option table, the
 * defaults, and their checking into the flame graph's and the SVG writer's
 * options, so that the tool's main() only parses and reports.
 *
 *	struct svg_args a = SVG_ARGS_INIT;
 *	struct fg_opts fo = FG_OPTS_INIT;
 *	struct svg_opts so = SVG_OPTS_INIT;
 *	tool_parse(&argc, &argv, "[FILE…]", summary, description,
 *		   svg_args_entries(&a));
 *	if (svg_args_apply(&a, &fo, &so, &err) < 0)
 *		tool_usage_error("%s", err->message);   // "--width must be ..."
 *
 * The strings in struct svg_args are the option values as given (GOption
 * allocates them; they are not freed, as they live as long as the tool).
 * svg_args_apply() points so's strings at them, so a must outlive so.
 */
#ifndef FOLDKIT_SVGARGS_H
#define FOLDKIT_SVGARGS_H

#include "render/flamegraph.h"
#include "render/svgwriter.h"

#include <glib.h>

struct svg_args {
	char *title, *subtitle, *minwidth, *fonttype, *countname, *nametype;
	char *colors, *bgcolors, *notes, *total, *factor, *nameattr, *encoding;
	char *diff;		/* --diff: self or total */
	gint width, height;
	gdouble fontsize, fontwidth;
	gboolean hash, random, cp, reverse, inverted, flamechart, negate, verbose;
	gboolean mark_new, normalize;
};

/* flamegraph.pl's defaults */
#define SVG_ARGS_INIT { \
	.minwidth = "0.1", .fonttype = "Verdana", .countname = "samples", \
	.nametype = "Function:", .colors = "hot", .width = 1200, .height = 16, \
	.fontsize = 12, .fontwidth = 0.59, \
}

/*
 * The GOption table for a's fields, for tool_parse().  Returns a static
 * array bound to a: call it for one struct svg_args only.
 */
const GOptionEntry *svg_args_entries(struct svg_args *a);

/*
 * Checks the values in a and sets fo's and so's fields from them (the
 * palette, colours, sizes, title, counts).  Returns 0, or -1 with *err
 * (FK_ERROR_USAGE) naming the option and quoting the bad value.  Leaves
 * so->rng, so->cp, so->nameattr and so->script to the caller.
 */
int svg_args_apply(const struct svg_args *a, struct fg_opts *fo,
		   struct svg_opts *so, GError **err);

#endif
