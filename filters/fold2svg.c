/*
 * fold2svg - folded stacks to an interactive flame graph SVG; draws what
 * flamegraph.pl draws, escapes everything, and is much faster.  See
 * docs/fold2svg.1.
 */
#include "render/flamegraph.h"
#include "render/palette.h"
#include "render/svgargs.h"
#include "render/svgwriter.h"
#include "tool.h"

#include "fold2svg_js.h"

#include <stdio.h>
#include <unistd.h>

static struct svg_args opts = SVG_ARGS_INIT;

static const char description[] =
	"Reads folded stacks (\"root;caller;leaf COUNT\", or \"STACK COUNT1 COUNT2\"\n"
	"for a differential graph) from each FILE (or standard input, or '-') as\n"
	"one profile and writes an interactive flame graph SVG to standard output.\n"
	"\n"
	"Examples:\n"
	"  perf script | fp-collapse | fold2svg > cpu.svg\n"
	"  fold2svg --colors=java --title='Java CPU' java.folded > java.svg\n"
	"  fold-diff before.folded after.folded | fold2svg > diff.svg\n"
	"  fold-diff old.folded new.folded | fold2svg --diff=total --mark-new -n\n"
	"\n"
	"Exit status: 0 success, 1 bad or unreadable input or a write error,\n"
	"2 usage error.  See fold2svg(1).";

/* Loads --cp's palette.map and --nameattr's file into so. */
static int load_extras(struct svg_opts *so, struct palette_map **cp,
		       struct fg_nameattr **na)
{
	GError *err = NULL;
	uint64_t ignored = 0;

	if (opts.cp && !(so->cp = *cp = palette_map_load("palette.map", &err))) {
		tool_warn_error(err);
		return -1;
	}
	if (!opts.nameattr)
		return 0;
	if (!(so->nameattr = *na = fg_nameattr_load(opts.nameattr, &ignored, &err))) {
		tool_warn_error(err);
		return -1;
	}
	if (ignored)
		tool_warn("%s: ignored %" G_GUINT64_FORMAT " attributes that are not title, class, style, target or a web href",
			  opts.nameattr, ignored);
	return 0;
}

int main(int argc, char **argv)
{
	struct fg_opts fo = FG_OPTS_INIT;
	struct svg_opts so = SVG_OPTS_INIT;
	struct flamegraph *fg;
	struct skip_log *skips;
	struct rand48 rng;
	struct palette_map *cp = NULL;
	struct fg_nameattr *na = NULL;
	int status = FK_EXIT_OK;
	GError *err = NULL;

	tool_init("fold2svg");
	tool_parse(&argc, &argv, "[FILE…]",
		   "Draw folded stacks as an interactive flame graph SVG.",
		   description, svg_args_entries(&opts));
	if (svg_args_apply(&opts, &fo, &so, &err) < 0)
		tool_usage_error("%s", err->message);
	so.script = fold2svg_js;
	rand48_seed(&rng, (uint32_t)(g_get_real_time() ^ getpid()));
	so.rng = &rng;
	if (load_extras(&so, &cp, &na) < 0) {
		palette_map_free(cp);
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
		if (svg_write(fg, &so, stdout, &err) < 0) {
			tool_warn_error(err);
			err = NULL;
			status = FK_EXIT_FAILURE;
		}
		if (cp && palette_map_save(cp, "palette.map", &err) < 0) {
			tool_warn_error(err);
			status = FK_EXIT_FAILURE;
		}
	}
	skip_log_free(skips);
	fg_free(fg);
	palette_map_free(cp);
	fg_nameattr_free(na);
	return tool_finish(status);
}
