#include "render/svgargs.h"

#include "core/error.h"

#include <string.h>

const GOptionEntry *svg_args_entries(struct svg_args *a)
{
	/* The text options are FILENAME, not STRING: glib passes their
	 * bytes through unchecked, so invalid UTF-8 reaches the escaper,
	 * which replaces it, instead of failing the parse as a usage error. */
	static GOptionEntry e[] = {
		{ "title", 0, 0, G_OPTION_ARG_FILENAME, NULL, "Title text (default \"Flame Graph\")", "TEXT" },
		{ "subtitle", 0, 0, G_OPTION_ARG_FILENAME, NULL, "Second-level title", "TEXT" },
		{ "width", 0, 0, G_OPTION_ARG_INT, NULL, "Image width in pixels (default 1200)", "NUM" },
		{ "height", 0, 0, G_OPTION_ARG_INT, NULL, "Height of each frame (default 16)", "NUM" },
		{ "minwidth", 0, 0, G_OPTION_ARG_STRING, NULL, "Omit frames narrower than NUM pixels, or NUM% of the total (default 0.1)", "NUM[%]" },
		{ "fonttype", 0, 0, G_OPTION_ARG_FILENAME, NULL, "Font (default \"Verdana\")", "FONT" },
		{ "fontsize", 0, 0, G_OPTION_ARG_DOUBLE, NULL, "Font size (default 12)", "NUM" },
		{ "fontwidth", 0, 0, G_OPTION_ARG_DOUBLE, NULL, "Average character width relative to the font size (default 0.59)", "NUM" },
		{ "countname", 0, 0, G_OPTION_ARG_FILENAME, NULL, "Count type label (default \"samples\")", "TEXT" },
		{ "nametype", 0, 0, G_OPTION_ARG_FILENAME, NULL, "Name type label (default \"Function:\")", "TEXT" },
		{ "colors", 0, 0, G_OPTION_ARG_STRING, NULL, "Palette: hot (default), mem, io, wakeup, chain, java, js, perl, red, green, blue, aqua, yellow, purple, orange", "PALETTE" },
		{ "bgcolors", 0, 0, G_OPTION_ARG_STRING, NULL, "Background: yellow, blue, green, grey or #rrggbb", "COLOR" },
		{ "hash", 0, 0, G_OPTION_ARG_NONE, NULL, "Colours keyed by a hash of the function name", NULL },
		{ "random", 0, 0, G_OPTION_ARG_NONE, NULL, "Random colours (output then varies)", NULL },
		{ "cp", 0, 0, G_OPTION_ARG_NONE, NULL, "Consistent palette, kept in palette.map", NULL },
		{ "reverse", 0, 0, G_OPTION_ARG_NONE, NULL, "Reverse each stack (merge from the leaves)", NULL },
		{ "inverted", 0, 0, G_OPTION_ARG_NONE, NULL, "Icicle graph (root at the top)", NULL },
		{ "flamechart", 0, 0, G_OPTION_ARG_NONE, NULL, "Flame chart: input order, merge only neighbours", NULL },
		{ "negate", 0, 0, G_OPTION_ARG_NONE, NULL, "Swap differential hues (blue<->red)", NULL },
		{ "diff", 0, 0, G_OPTION_ARG_STRING, NULL, "Colour differential frames by their self change (default) or total (inclusive) change", "self|total" },
		{ "mark-new", 0, 0, G_OPTION_ARG_NONE, NULL, "Draw differential frames absent from the first profile in purple", NULL },
		{ "normalize", 'n', 0, G_OPTION_ARG_NONE, NULL, "Scale differential first counts to the second total before comparing", NULL },
		{ "notes", 0, 0, G_OPTION_ARG_FILENAME, NULL, "Notes comment in the SVG", "TEXT" },
		{ "total", 0, 0, G_OPTION_ARG_STRING, NULL, "Width of the graph in counts, if above the sum", "NUM" },
		{ "factor", 0, 0, G_OPTION_ARG_STRING, NULL, "Multiply counts shown by NUM (default 1)", "NUM" },
		{ "nameattr", 0, 0, G_OPTION_ARG_FILENAME, NULL, "Per-function attributes: NAME<TAB>key=value...", "FILE" },
		{ "encoding", 0, 0, G_OPTION_ARG_STRING, NULL, "Encoding named in the XML declaration", "NAME" },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, NULL, "List every skipped line with its line number", NULL },
		{ NULL },
	};
	/* in the table's order */
	void *data[] = {
		&a->title, &a->subtitle, &a->width, &a->height, &a->minwidth,
		&a->fonttype, &a->fontsize, &a->fontwidth, &a->countname,
		&a->nametype, &a->colors, &a->bgcolors, &a->hash, &a->random,
		&a->cp, &a->reverse, &a->inverted, &a->flamechart, &a->negate,
		&a->diff, &a->mark_new, &a->normalize,
		&a->notes, &a->total, &a->factor, &a->nameattr, &a->encoding,
		&a->verbose,
	};

	G_STATIC_ASSERT(G_N_ELEMENTS(data) + 1 == G_N_ELEMENTS(e));
	for (size_t i = 0; i < G_N_ELEMENTS(data); i++)
		e[i].arg_data = data[i];
	return e;
}

static int usage(GError **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static int usage(GError **err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	g_propagate_error(err, g_error_new_valist(FK_ERROR, FK_ERROR_USAGE, fmt, ap));
	va_end(ap);
	return -1;
}

static int count_arg(const char *name, const char *v, fk_count *c, GError **err)
{
	if (fk_count_parse(v, strlen(v), c) != FK_COUNT_OK)
		return usage(err, "--%s: '%s' is not a non-negative number", name, v);
	return 0;
}

/* --minwidth: pixels, or a percentage of the total with a trailing '%' */
static int minwidth_arg(const char *v, int width, struct fg_opts *fo, GError **err)
{
	size_t n = strlen(v);
	char *m, *end;
	bool bad;

	fo->minwidth_pct = n && v[n - 1] == '%';
	m = g_strndup(v, n - fo->minwidth_pct);
	fo->minwidth = g_ascii_strtod(m, &end);
	/* (written so that NaN fails too) */
	bad = !*m || *end || !(fo->minwidth >= 0 &&
			       fo->minwidth <= (fo->minwidth_pct ? 100 : width));
	g_free(m);
	if (bad)
		return usage(err, "--minwidth: '%s' is not a width from 0 to %d pixels "
			     "or from 0%% to 100%%", v, width);
	return 0;
}

/*
 * The sizes: beyond these bounds a graph is no longer a picture (a frame
 * a million pixels high, a label in 0.001-pixel letters) and the writer's
 * arithmetic would leave its ranges, so they are usage errors, as are
 * infinities and NaN.
 */
#define MAX_WIDTH 1000000
#define MAX_HEIGHT 10000

static int size_arg(const char *name, double v, double min, double max, GError **err)
{
	if (!(v >= min && v <= max))	/* NaN fails */
		return usage(err, "--%s must be a number from %g to %g, not %g", name, min, max, v);
	return 0;
}

int svg_args_apply(const struct svg_args *a, struct fg_opts *fo,
		   struct svg_opts *so, GError **err)
{
	if (a->width <= 20 || a->width > MAX_WIDTH)
		return usage(err, "--width must be more than 20 and at most %d pixels", MAX_WIDTH);
	if (a->height < 1 || a->height > MAX_HEIGHT)
		return usage(err, "--height must be from 1 to %d pixels", MAX_HEIGHT);
	if (size_arg("fontsize", a->fontsize, 0.1, 1000, err) < 0 ||
	    size_arg("fontwidth", a->fontwidth, 0.01, 10, err) < 0)
		return -1;
	fo->reverse = a->reverse;
	fo->flamechart = a->flamechart;
	fo->image_width = a->width;
	if (minwidth_arg(a->minwidth, a->width, fo, err) < 0)
		return -1;
	if (a->total && count_arg("total", a->total, &fo->total, err) < 0)
		return -1;
	if (a->factor) {
		if (count_arg("factor", a->factor, &so->factor, err) < 0)
			return -1;
		if (!so->factor)
			return usage(err, "--factor must be positive");
	}

	so->title = a->title && *a->title ? a->title : NULL;
	so->subtitle = a->subtitle;
	so->notes = a->notes;
	so->nametype = a->nametype;
	so->countname = a->countname;
	so->fonttype = a->fonttype;
	so->encoding = a->encoding;
	so->image_width = a->width;
	so->frameheight = a->height;
	so->fontsize = a->fontsize;
	so->fontwidth = a->fontwidth;
	so->inverted = a->inverted;
	so->flamechart = a->flamechart;
	so->negate = a->negate;
	so->mark_new = a->mark_new;
	fo->normalize = a->normalize;
	if (!a->diff || strcmp(a->diff, "self") == 0)
		fo->diff = FG_DIFF_SELF;
	else if (strcmp(a->diff, "total") == 0)
		fo->diff = FG_DIFF_TOTAL;
	else
		return usage(err, "--diff: '%s' is not self or total", a->diff);
	if (palette_from_name(a->colors, &so->palette) < 0)
		return usage(err, "--colors: unknown palette '%s' (one of %s)",
			     a->colors, palette_names());
	if (palette_background(a->bgcolors, so->palette, so->bg1, so->bg2) < 0)
		return usage(err, "--bgcolors: '%s' is not yellow, blue, green, grey or #rrggbb",
			     a->bgcolors);
	/* as in flamegraph.pl, --hash wins over --random */
	so->color_mode = a->hash ? COLOR_HASH : a->random ? COLOR_RANDOM
			 : COLOR_BY_NAME;
	/* fold2svg writes UTF-8, or only ASCII when another encoding is
	 * named: that must be one ASCII text is valid in */
	if (a->encoding && !g_regex_match_simple(
		    "^(utf-?8|(us-)?ascii|iso[-_]?8859-[0-9]+|latin-?[0-9]+|"
		    "(windows|cp)-?125[0-8]|koi8-[a-z]+|euc-[a-z]+|"
		    "gb2312|gbk|gb18030|big5)$", a->encoding, G_REGEX_CASELESS, 0))
		return usage(err, "--encoding: '%s' is not UTF-8 or an ASCII-compatible encoding",
			     a->encoding);
	fo->chain = so->palette == PAL_CHAIN;
	return 0;
}
