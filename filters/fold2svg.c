/*
 * fold2svg - folded stacks to an interactive flame graph SVG; draws what
 * flamegraph.pl draws, escapes everything, and is much faster.  See
 * docs/fold2svg.1.
 */
#include "flamegraph.h"
#include "folded.h"
#include "palette.h"
#include "svgwriter.h"
#include "tool.h"

#include "fold2svg_js.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct opts {
	char *title, *subtitle, *minwidth, *fonttype, *countname, *nametype;
	char *colors, *bgcolors, *notes, *total, *factor, *nameattr, *encoding;
	gint width, height;
	gdouble fontsize, fontwidth;
	gboolean hash, random, cp, reverse, inverted, flamechart, negate, verbose;
} opts = {
	.minwidth = "0.1", .fonttype = "Verdana", .countname = "samples",
	.nametype = "Function:", .colors = "hot", .width = 1200, .height = 16,
	.fontsize = 12, .fontwidth = 0.59,
};

/* The text options are FILENAME, not STRING: glib passes their bytes
 * through unchecked, so invalid UTF-8 reaches the escaper, which replaces
 * it, instead of failing the parse as a usage error. */
static const GOptionEntry entries[] = {
	{ "title", 0, 0, G_OPTION_ARG_FILENAME, &opts.title, "Title text (default \"Flame Graph\")", "TEXT" },
	{ "subtitle", 0, 0, G_OPTION_ARG_FILENAME, &opts.subtitle, "Second-level title", "TEXT" },
	{ "width", 0, 0, G_OPTION_ARG_INT, &opts.width, "Image width in pixels (default 1200)", "NUM" },
	{ "height", 0, 0, G_OPTION_ARG_INT, &opts.height, "Height of each frame (default 16)", "NUM" },
	{ "minwidth", 0, 0, G_OPTION_ARG_STRING, &opts.minwidth, "Omit frames narrower than NUM pixels, or NUM% of the total (default 0.1)", "NUM[%]" },
	{ "fonttype", 0, 0, G_OPTION_ARG_FILENAME, &opts.fonttype, "Font (default \"Verdana\")", "FONT" },
	{ "fontsize", 0, 0, G_OPTION_ARG_DOUBLE, &opts.fontsize, "Font size (default 12)", "NUM" },
	{ "fontwidth", 0, 0, G_OPTION_ARG_DOUBLE, &opts.fontwidth, "Average character width relative to the font size (default 0.59)", "NUM" },
	{ "countname", 0, 0, G_OPTION_ARG_FILENAME, &opts.countname, "Count type label (default \"samples\")", "TEXT" },
	{ "nametype", 0, 0, G_OPTION_ARG_FILENAME, &opts.nametype, "Name type label (default \"Function:\")", "TEXT" },
	{ "colors", 0, 0, G_OPTION_ARG_STRING, &opts.colors, "Palette: hot (default), mem, io, wakeup, chain, java, js, perl, red, green, blue, aqua, yellow, purple, orange", "PALETTE" },
	{ "bgcolors", 0, 0, G_OPTION_ARG_STRING, &opts.bgcolors, "Background: yellow, blue, green, grey or #rrggbb", "COLOR" },
	{ "hash", 0, 0, G_OPTION_ARG_NONE, &opts.hash, "Colours keyed by a hash of the function name", NULL },
	{ "random", 0, 0, G_OPTION_ARG_NONE, &opts.random, "Random colours (output then varies)", NULL },
	{ "cp", 0, 0, G_OPTION_ARG_NONE, &opts.cp, "Consistent palette, kept in palette.map", NULL },
	{ "reverse", 0, 0, G_OPTION_ARG_NONE, &opts.reverse, "Reverse each stack (merge from the leaves)", NULL },
	{ "inverted", 0, 0, G_OPTION_ARG_NONE, &opts.inverted, "Icicle graph (root at the top)", NULL },
	{ "flamechart", 0, 0, G_OPTION_ARG_NONE, &opts.flamechart, "Flame chart: input order, merge only neighbours", NULL },
	{ "negate", 0, 0, G_OPTION_ARG_NONE, &opts.negate, "Swap differential hues (blue<->red)", NULL },
	{ "notes", 0, 0, G_OPTION_ARG_FILENAME, &opts.notes, "Notes comment in the SVG", "TEXT" },
	{ "total", 0, 0, G_OPTION_ARG_STRING, &opts.total, "Width of the graph in counts, if above the sum", "NUM" },
	{ "factor", 0, 0, G_OPTION_ARG_STRING, &opts.factor, "Multiply counts shown by NUM (default 1)", "NUM" },
	{ "nameattr", 0, 0, G_OPTION_ARG_FILENAME, &opts.nameattr, "Per-function attributes: NAME<TAB>key=value...", "FILE" },
	{ "encoding", 0, 0, G_OPTION_ARG_STRING, &opts.encoding, "Encoding named in the XML declaration", "NAME" },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "List every skipped line with its line number", NULL },
	{ NULL },
};

static const char description[] =
	"Reads folded stacks (\"root;caller;leaf COUNT\", or \"STACK COUNT1 COUNT2\"\n"
	"for a differential graph) from each FILE (or standard input, or '-') as\n"
	"one profile and writes an interactive flame graph SVG to standard output.\n"
	"\n"
	"Examples:\n"
	"  perf script | fp-collapse | fold2svg > cpu.svg\n"
	"  fold2svg --colors=java --title='Java CPU' java.folded > java.svg\n"
	"  fold-diff before.folded after.folded | fold2svg > diff.svg\n"
	"\n"
	"Exit status: 0 success, 1 bad or unreadable input or a write error,\n"
	"2 usage error.  See fold2svg(1).";

static fk_count count_opt(const char *name, const char *v)
{
	fk_count c;

	if (fk_count_parse(v, strlen(v), &c) != FK_COUNT_OK)
		tool_usage_error("--%s: '%s' is not a non-negative number", name, v);
	return c;
}

static void setup(struct fg_opts *fo, struct svg_opts *so)
{
	size_t n = strlen(opts.minwidth);

	if (opts.width <= 20)
		tool_usage_error("--width must be more than 20 pixels");
	if (opts.height < 1)
		tool_usage_error("--height must be at least 1");
	if (!(opts.fontsize > 0) || !(opts.fontwidth > 0))
		tool_usage_error("--fontsize and --fontwidth must be positive");
	fo->reverse = opts.reverse;
	fo->flamechart = opts.flamechart;
	fo->image_width = opts.width;
	fo->minwidth_pct = n && opts.minwidth[n - 1] == '%';
	{
		char *m = g_strndup(opts.minwidth, n - fo->minwidth_pct);
		char *end;

		fo->minwidth = g_ascii_strtod(m, &end);
		if (!*m || *end || !(fo->minwidth >= 0))
			tool_usage_error("--minwidth: '%s' is not a width", opts.minwidth);
		g_free(m);
	}
	if (opts.total)
		fo->total = count_opt("total", opts.total);
	if (opts.factor && !(so->factor = count_opt("factor", opts.factor)))
		tool_usage_error("--factor must be positive");

	so->title = opts.title && *opts.title ? opts.title : NULL;
	so->subtitle = opts.subtitle;
	so->notes = opts.notes;
	so->nametype = opts.nametype;
	so->countname = opts.countname;
	so->fonttype = opts.fonttype;
	so->encoding = opts.encoding;
	so->image_width = opts.width;
	so->frameheight = opts.height;
	so->fontsize = opts.fontsize;
	so->fontwidth = opts.fontwidth;
	so->inverted = opts.inverted;
	so->flamechart = opts.flamechart;
	so->negate = opts.negate;
	if (palette_from_name(opts.colors, &so->palette) < 0)
		tool_usage_error("--colors: unknown palette '%s' (one of %s)",
				 opts.colors, palette_names());
	if (palette_background(opts.bgcolors, so->palette, so->bg1, so->bg2) < 0)
		tool_usage_error("--bgcolors: '%s' is not yellow, blue, green, grey or #rrggbb",
				 opts.bgcolors);
	/* as in flamegraph.pl, --hash wins over --random */
	so->color_mode = opts.hash ? COLOR_HASH : opts.random ? COLOR_RANDOM
			 : COLOR_BY_NAME;
	/* fold2svg writes UTF-8, or only ASCII when another encoding is
	 * named: that must be one ASCII text is valid in */
	if (opts.encoding && !g_regex_match_simple(
		    "^(utf-?8|(us-)?ascii|iso[-_]?8859-[0-9]+|latin-?[0-9]+|"
		    "(windows|cp)-?125[0-8]|koi8-[a-z]+|euc-[a-z]+|"
		    "gb2312|gbk|gb18030|big5)$", opts.encoding, G_REGEX_CASELESS, 0))
		tool_usage_error("--encoding: '%s' is not UTF-8 or an ASCII-compatible encoding",
				 opts.encoding);
	fo->chain = so->palette == PAL_CHAIN;
	so->script = fold2svg_js;
}

int main(int argc, char **argv)
{
	struct fg_opts fo = FG_OPTS_INIT;
	struct svg_opts so = SVG_OPTS_INIT;
	struct flamegraph *fg;
	struct skip_log *skips;
	GPtrArray *readers;
	struct rand48 rng;
	struct palette_map *cp = NULL;
	struct fg_nameattr *na = NULL;
	int status = FK_EXIT_OK;
	GError *err = NULL;

	tool_init("fold2svg");
	tool_parse(&argc, &argv, "[FILE…]",
		   "Draw folded stacks as an interactive flame graph SVG.",
		   description, entries);
	setup(&fo, &so);
	rand48_seed(&rng, (uint32_t)(g_get_real_time() ^ getpid()));
	so.rng = &rng;
	if (opts.cp && !(so.cp = cp = palette_map_load("palette.map", &err))) {
		tool_warn_error(err);
		return tool_finish(FK_EXIT_FAILURE);
	}
	if (opts.nameattr) {
		uint64_t ignored = 0;

		if (!(na = fg_nameattr_load(opts.nameattr, &ignored, &err))) {
			tool_warn_error(err);
			palette_map_free(cp);
			return tool_finish(FK_EXIT_FAILURE);
		}
		if (ignored)
			tool_warn("%s: ignored %" G_GUINT64_FORMAT " attributes that are not title, class, style, target or a web href",
				  opts.nameattr, ignored);
		so.nameattr = na;
	}

	fg = fg_new(&fo);
	skips = skip_log_new();
	/* mapped files hold the stacks the graph points to: free them last */
	readers = g_ptr_array_new_with_free_func((GDestroyNotify)folded_reader_free);
	for (int i = 1; i < argc || i == 1; i++) {
		const char *path = i < argc ? argv[i] : "-";
		struct folded_reader *r = folded_reader_open_mapped(path, skips, &err);
		struct folded_line fl;
		int rc;

		if (!r) {
			tool_warn_error(err);
			err = NULL;
			status = FK_EXIT_FAILURE;
			continue;
		}
		void (*add)(struct flamegraph *, const char *, size_t, fk_count,
			    fk_count, int) = folded_reader_stable(r) ? fg_add_ref : fg_add;

		while ((rc = folded_reader_next(r, &fl, &err)) > 0)
			/* flamegraph.pl leaves all but one blank before the
			 * count in the last frame's name */
			add(fg, fl.stack, fl.len + (fl.gap > 1 ? fl.gap - 1 : 0),
			    fl.count[0], fl.count[1], fl.ncounts);
		if (rc < 0) {
			tool_warn_error(err);
			err = NULL;
			status = FK_EXIT_FAILURE;
		}
		g_ptr_array_add(readers, r);
	}
	tool_report_skips(skips, opts.verbose);

	if (fg_build(fg, &err) < 0) {
		tool_warn_error(err);
		err = NULL;
		status = FK_EXIT_FAILURE;
	} else {
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
	g_ptr_array_free(readers, TRUE);
	palette_map_free(cp);
	fg_nameattr_free(na);
	return tool_finish(status);
}
