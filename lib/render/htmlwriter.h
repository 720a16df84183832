/*
 * htmlwriter.h - writes a built flame graph as one self-contained HTML
 * page that draws every frame on a canvas (fold2html).
 *
 *	struct fg_opts fo = FG_OPTS_INIT;
 *	fo.minwidth = 0;                  // the page keeps every frame
 *	...fg_add_file(), fg_build()...
 *	struct html_opts ho = HTML_OPTS_INIT;
 *	ho.title = "CPU";
 *	ho.script = fold2html_js;         // the page's script (fold2html.js)
 *	if (html_write(fg, &ho, stdout, &err) < 0)
 *		...                       // a write error, named in *err
 *
 * The page needs nothing outside itself: the frames travel packed
 * (flamepack.h) in one base64 string inside the page's one script, which
 * decodes and draws them.  Everything from the input is escaped for where
 * it lands: names only inside that base64 string; the title, subtitle and
 * notes as HTML text (xml_escape(), xml_comment_escape()); the name type,
 * count name and font as JavaScript strings (js_escape(): no "<", so no
 * "</script>", and no U+2028).  The page is also well-formed XML (the
 * script sits in a commented CDATA section), so an XML parser can check
 * it.  A Content-Security-Policy allows only that script and style (by
 * their SHA-256) and loads nothing from anywhere (no network, no file),
 * except the search's worker, from a blob: of the script's own.
 * The same input and options give the same bytes, except with
 * COLOR_RANDOM.
 */
#ifndef FOLDKIT_HTMLWRITER_H
#define FOLDKIT_HTMLWRITER_H

#include "core/count.h"
#include "render/flamegraph.h"
#include "render/palette.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

struct html_opts {
	const char *title;	/* NULL: "Flame Graph", "Icicle Graph" or "Flame Chart" */
	const char *subtitle;	/* NULL or "": none */
	const char *notes;	/* an HTML comment, or NULL */
	const char *nametype;	/* "Function:" before a name in the status line */
	const char *countname;	/* the unit: "samples"; ns, us, ms, s are times */
	const char *fonttype;
	double frameheight, fontsize, fontwidth;
	double minwidth;	/* frames narrower are not drawn: pixels, */
	bool minwidth_pct;	/* or percent of the view's width */
	double image_width;	/* fold2svg's --width, for its ?x=&y= links */
	bool inverted, flamechart, negate;
	bool mark_new;		/* differential: new frames in their own colour */
	enum fg_palette palette;
	enum fg_color_mode color_mode;
	struct rand48 *rng;		/* COLOR_RANDOM */
	char bg1[8], bg2[8];		/* see palette_background() */
	struct palette_map *cp;		/* --cp, or NULL */
	fk_count factor;		/* counts are shown multiplied by this */
	const char *script;		/* the page's script, or NULL */
};

#define HTML_OPTS_INIT { .nametype = "Function:", .countname = "samples", \
	.fonttype = "Verdana", .image_width = 1200, .frameheight = 16, \
	.fontsize = 12, .fontwidth = 0.59, .minwidth = 0.1, \
	.bg1 = "#eeeeee", .bg2 = "#eeeeb0", .factor = FK_COUNT_ONE }

/* What went into a page. */
struct html_info {
	size_t frames, names;	/* packed (flamepack.h) */
	size_t bytes;		/* the page's */
	bool rounded;		/* counts of 2^53 units or more: JavaScript's
				   numbers show them rounded */
};

/*
 * Writes the page; returns 0, or -1 with *err on a write error.  fg must
 * keep every frame's parent (see flamepack.h).  info may be NULL.
 */
int html_write(const struct flamegraph *fg, const struct html_opts *o,
	       FILE *out, struct html_info *info, GError **err);

#endif
