#include "render/htmlargs.h"

#include <string.h>

/* fold2svg's options that have no meaning in the page */
static bool svg_only(const char *name)
{
	return !strcmp(name, "nameattr") || !strcmp(name, "encoding");
}

/* Where the page gives an option another sense, its own help text. */
static const char *page_help(const char *name)
{
	if (!strcmp(name, "width"))
		return "Width of the fold2svg graph whose zoom links (?x=&y=) the page shares (default 1200)";
	if (!strcmp(name, "minwidth"))
		return "Draw only frames at least NUM pixels, or NUM% of the view, wide (default 0.1)";
	if (!strcmp(name, "inverted"))
		return "Start as an icicle graph (root at the top)";
	if (!strcmp(name, "notes"))
		return "Notes comment in the page";
	return NULL;
}

const GOptionEntry *html_args_entries(struct svg_args *a)
{
	static GOptionEntry e[32];
	const GOptionEntry *svg = svg_args_entries(a);
	size_t n = 0;

	for (; svg->long_name; svg++) {
		if (svg_only(svg->long_name))
			continue;
		g_assert(n + 1 < G_N_ELEMENTS(e));
		e[n] = *svg;
		if (page_help(svg->long_name))
			e[n].description = page_help(svg->long_name);
		n++;
	}
	e[n] = (GOptionEntry){ NULL };
	return e;
}

int html_args_apply(const struct svg_args *a, struct fg_opts *fo,
		    struct html_opts *ho, GError **err)
{
	struct svg_opts so = SVG_OPTS_INIT;

	if (svg_args_apply(a, fo, &so, err) < 0)
		return -1;
	/* every frame is kept; the threshold is the page's, when drawing */
	ho->minwidth = fo->minwidth;
	ho->minwidth_pct = fo->minwidth_pct;
	fo->minwidth = 0;
	fo->minwidth_pct = false;

	ho->title = so.title;
	ho->subtitle = so.subtitle;
	ho->notes = so.notes;
	ho->nametype = so.nametype;
	ho->countname = so.countname;
	ho->fonttype = so.fonttype;
	ho->image_width = so.image_width;
	ho->frameheight = so.frameheight;
	ho->fontsize = so.fontsize;
	ho->fontwidth = so.fontwidth;
	ho->inverted = so.inverted;
	ho->flamechart = so.flamechart;
	ho->negate = so.negate;
	ho->mark_new = so.mark_new;
	ho->palette = so.palette;
	ho->color_mode = so.color_mode;
	memcpy(ho->bg1, so.bg1, sizeof(ho->bg1));
	memcpy(ho->bg2, so.bg2, sizeof(ho->bg2));
	ho->factor = so.factor;
	return 0;
}
