/*
 * svgwriter.h - writes a built flame graph as one self-contained,
 * interactive SVG document.
 *
 *	struct svg_opts so = SVG_OPTS_INIT;
 *	so.title = "CPU";
 *	so.script = fold2svg_js;          // the interactive script's source
 *	if (svg_write(fg, &so, stdout, &err) < 0)
 *		...                       // a write error, named in *err
 *
 * The markup keeps flamegraph.pl's shape where scripts depend on it: one
 * <g> per frame holding <title>NAME (N COUNTNAME, P%)</title> (with "; +D%"
 * for differential graphs), a <rect> and a <text> label.  Every piece of
 * user text (title, subtitle, notes, name and count types, frame names,
 * name attributes, the encoding name) is escaped for where it goes, and
 * invalid UTF-8 and control characters become U+FFFD (see xmlesc.h), so
 * the document is always well-formed and the input cannot add markup or
 * script.  Output is the same bytes for the same input and options, except
 * with COLOR_RANDOM.
 */
#ifndef FOLDKIT_SVGWRITER_H
#define FOLDKIT_SVGWRITER_H

#include "core/count.h"
#include "render/flamegraph.h"
#include "render/palette.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

/* Per-function attributes (--nameattr): NAME<TAB>key=value<TAB>... */
struct fg_nameattr;

/*
 * Loads a name-attribute file.  Only title, class, style, href and target
 * are kept (href only for http:, https: or relative links; style only
 * when it cannot load anything: no url(), strings or escapes); other keys,
 * such as event handlers that would run script, are dropped and counted in
 * *ignored.  A line without a tab is an error naming the file and line.
 */
struct fg_nameattr *fg_nameattr_load(const char *path, uint64_t *ignored,
				     GError **err);
void fg_nameattr_free(struct fg_nameattr *na);

struct svg_opts {
	const char *title;	/* NULL: "Flame Graph", "Icicle Graph" or "Flame Chart" */
	const char *subtitle;	/* NULL or "": none */
	const char *notes;
	const char *nametype;
	const char *countname;
	const char *fonttype;
	const char *encoding;	/* NULL: no encoding in the XML declaration;
				   other than UTF-8: the output is all ASCII,
				   so the name must be of an ASCII superset */
	double image_width, frameheight, fontsize, fontwidth, minwidth;
	bool inverted, flamechart, negate;
	bool mark_new;		/* differential: new frames in their own colour */
	enum fg_palette palette;
	enum fg_color_mode color_mode;
	struct rand48 *rng;		/* COLOR_RANDOM */
	char bg1[8], bg2[8];		/* see palette_background() */
	struct palette_map *cp;		/* --cp, or NULL */
	const struct fg_nameattr *nameattr;	/* or NULL */
	fk_count factor;		/* counts are shown multiplied by this */
	const char *script;		/* the interactive script, or NULL */
};

#define SVG_OPTS_INIT { .nametype = "Function:", .countname = "samples", \
	.fonttype = "Verdana", .image_width = 1200, .frameheight = 16, \
	.fontsize = 12, .fontwidth = 0.59, .minwidth = 0.1, \
	.bg1 = "#eeeeee", .bg2 = "#eeeeb0", .factor = FK_COUNT_ONE }

/* Writes the document; returns 0, or -1 with *err on a write error. */
int svg_write(const struct flamegraph *fg, const struct svg_opts *o,
	      FILE *out, GError **err);

/*
 * The title text of a frame count as flamegraph.pl shows it, but exact:
 * c * factor with thousands separators ("1,234", "0.5").  buf holds
 * FK_COUNT_BUFSZ * 2 bytes; returns the length.
 */
size_t svg_format_count(fk_count c, fk_count factor, char *buf);

/* 100 * part / whole rounded half-even to two decimals ("12.35"). */
size_t svg_format_pct(fk_count part, fk_count whole, char *buf);

#endif
