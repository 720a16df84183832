/*
 * fold2html - folded stacks to one self-contained HTML page that draws
 * every frame on a canvas, with zoom, search, an icicle view and a
 * sandwich view.  See docs/fold2html.1.
 */
#include "render/flamegraph.h"
#include "render/htmlargs.h"
#include "render/htmlwriter.h"
#include "render/palette.h"
#include "tool.h"

#include "fold2html_js.h"

#include <stdio.h>
#include <unistd.h>

static struct svg_args opts = SVG_ARGS_INIT;

static const char description[] =
	"Reads folded stacks (\"root;caller;leaf COUNT\", or \"STACK COUNT1 COUNT2\"\n"
	"for a differential graph) from each FILE (or standard input, or '-') as\n"
	"one profile and writes one HTML page to standard output that needs\n"
	"nothing else: it keeps every frame and draws those wide enough at the\n"
	"current zoom on a canvas; click to zoom, search with a regex, flip to\n"
	"an icicle graph, or see a function's callers and callees (sandwich).\n"
	"\n"
	"Examples:\n"
	"  perf script | fp-collapse | fold2html > cpu.html\n"
	"  fold2html --countname=ns --title='Server CPU' server.folded > cpu.html\n"
	"  fold-diff before.folded after.folded | fold2html > diff.html\n"
	"  fold-diff old.folded new.folded | fold2html --diff=total --mark-new -n\n"
	"\n"
	"Exit status: 0 success, 1 bad or unreadable input or a write error,\n"
	"2 usage error.  See fold2html(1).";

int main(int argc, char **argv)
{
	struct fg_opts fo = FG_OPTS_INIT;
	struct html_opts ho = HTML_OPTS_INIT;
	struct flamegraph *fg;
	struct skip_log *skips;
	struct rand48 rng;
	struct html_info info;
	struct palette_map *cp = NULL;
	int status = FK_EXIT_OK;
	GError *err = NULL;

	tool_init("fold2html");
	tool_parse(&argc, &argv, "[FILE…]",
		   "Draw folded stacks as a flame graph in one HTML page.",
		   description, html_args_entries(&opts));
	if (html_args_apply(&opts, &fo, &ho, &err) < 0)
		tool_usage_error("%s", err->message);
	ho.script = fold2html_js;
	rand48_seed(&rng, (uint32_t)(g_get_real_time() ^ getpid()));
	ho.rng = &rng;
	if (opts.cp && !(ho.cp = cp = palette_map_load("palette.map", &err))) {
		tool_warn_error(err);
		return tool_finish(FK_EXIT_FAILURE);
	}

	fg = fg_new(&fo);
	skips = skip_log_new();
	for (int i = 1; i < argc || i == 1; i++)
		if (fg_add_file(fg, i < argc ? argv[i] : "-", skips, &err) < 0) {
			tool_warn_error(err);
			err = NULL;
			status = FK_EXIT_FAILURE;
		}
	if (tool_report_shape(fg_shape(fg)) != FK_EXIT_OK)
		status = FK_EXIT_FAILURE;
	tool_report_skips(skips, opts.verbose);

	if (fg_build(fg, &err) < 0) {
		tool_warn_error(err);
		err = NULL;
		status = FK_EXIT_FAILURE;
	} else {
		if (fg_cut_stacks(fg))
			tool_warn("%" G_GUINT64_FORMAT " stack%s deeper than %d frames: drawn to that depth",
				  fg_cut_stacks(fg), fg_cut_stacks(fg) == 1 ? "" : "s", FG_MAX_DEPTH);
		if (!fg_differential(fg) &&
		    (opts.diff || opts.mark_new || opts.normalize))
			tool_warn("--diff, --mark-new and --normalize draw differential input (STACK COUNT1 COUNT2): ignored for a profile of one count a line");
		if (fg_total_ignored(fg))
			tool_warn("--total %s is less than the sum of the counts, so ignored",
				  opts.total);
		if (html_write(fg, &ho, stdout, &info, &err) < 0) {
			tool_warn_error(err);
			err = NULL;
			status = FK_EXIT_FAILURE;
		} else if (info.rounded) {
			tool_warn("counts add up to 2^53 or more (in units of their smallest decimal): the page's JavaScript shows them rounded to about 16 digits");
		}
		if (cp && palette_map_save(cp, "palette.map", &err) < 0) {
			tool_warn_error(err);
			status = FK_EXIT_FAILURE;
		}
	}
	skip_log_free(skips);
	fg_free(fg);
	palette_map_free(cp);
	return tool_finish(status);
}
