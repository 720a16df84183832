/*
 * htmlargs.h - fold2html's command-line options: fold2svg's table
 * (svgargs.h) without the options that only mean something in an SVG
 * document, checked by the same code into the flame graph's options and
 * the page writer's, so that an option means the same in both tools.
 *
 *	struct svg_args a = SVG_ARGS_INIT;
 *	struct fg_opts fo = FG_OPTS_INIT;
 *	struct html_opts ho = HTML_OPTS_INIT;
 *	tool_parse(&argc, &argv, "[FILE…]", summary, description,
 *		   html_args_entries(&a));
 *	if (html_args_apply(&a, &fo, &ho, &err) < 0)
 *		tool_usage_error("%s", err->message);   // "--width must be ..."
 *
 * Left out: --nameattr (attributes of SVG elements) and --encoding (the
 * XML declaration; the page is UTF-8).  --minwidth is no longer a filter:
 * the page keeps every frame (fo->minwidth becomes 0) and draws those at
 * least that wide at the current zoom.  The strings stay a's (see
 * svgargs.h), so a must outlive ho.
 */
#ifndef FOLDKIT_HTMLARGS_H
#define FOLDKIT_HTMLARGS_H

#include "render/flamegraph.h"
#include "render/htmlwriter.h"
#include "render/svgargs.h"

#include <glib.h>

/*
 * The GOption table for a's fields, for tool_parse().  Returns a static
 * array bound to a: call it for one struct svg_args only.
 */
const GOptionEntry *html_args_entries(struct svg_args *a);

/*
 * Checks the values in a as svg_args_apply() does and sets fo's and ho's
 * fields.  Returns 0, or -1 with *err (FK_ERROR_USAGE) naming the option
 * and quoting the bad value.  Leaves ho->rng, ho->cp and ho->script to the
 * caller.
 */
int html_args_apply(const struct svg_args *a, struct fg_opts *fo,
		    struct html_opts *ho, GError **err);

#endif
