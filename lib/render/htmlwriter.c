#include "render/htmlwriter.h"

#include "core/error.h"
#include "render/flamepack.h"
#include "render/xmlesc.h"

#include <errno.h>
#include <string.h>

/*
 * The page's style.  It holds no '<' or '&' (the page is also XML) and no
 * input: the colours are checked "#rrggbb" values (palette_background()).
 * The frames' area scrolls under a sticky canvas as tall as the window:
 * the canvas draws the rows in view, so a graph of any depth costs one
 * window of pixels.
 */
static const char STYLE_HEAD[] =
	"\n:root { color-scheme: light dark; --bg1: ";
static const char STYLE_MID[] = "; --bg2: ";
static const char STYLE_TAIL[] =
	"; --text: #000000; --link: rgb(0,0,170); --hit: rgb(230,0,230);"
	" --dim: rgb(110,110,110); --panel: rgba(255,255,250,0.96); }\n"
	"@media (prefers-color-scheme: dark) { :root { --bg1: #1d1f21;"
	" --bg2: #26282b; --text: #e6e6e6; --link: #8ab4f8; --hit: #ff6bff;"
	" --dim: #9aa0a6; --panel: rgba(40,42,46,0.97); } }\n"
	"html, body { height: 100%; margin: 0; }\n"
	"body { display: flex; flex-direction: column; color: var(--text);"
	" background: linear-gradient(var(--bg1) 5%, var(--bg2) 95%) fixed;"
	" font-size: 12px; font-family: Verdana, sans-serif; }\n"
	"header { padding: 6px 10px 2px; }\n"
	"#bar { display: flex; align-items: center; gap: 10px; }\n"
	"#title { flex: 1; margin: 0; text-align: center; font-size: 1.4em;"
	" font-weight: normal; overflow: hidden; white-space: nowrap;"
	" text-overflow: ellipsis; }\n"
	"#subtitle { text-align: center; color: var(--dim); }\n"
	"#subtitle:empty { display: none; }\n"
	"button { font: inherit; color: var(--link); background: none;"
	" border: none; padding: 0 2px; cursor: pointer; text-decoration: underline; }\n"
	"button:hover, button.on { color: var(--hit); }\n"
	"button.on { font-weight: bold; }\n"
	"button:disabled { color: var(--dim); cursor: default; text-decoration: none; }\n"
	"#term { font: inherit; width: 16em; }\n"
	"#graph { flex: 1; min-height: 0; overflow-y: auto; overflow-x: hidden; }\n"
	"#canvas { position: sticky; top: 0; display: block; cursor: pointer; }\n"
	"footer { display: flex; gap: 20px; justify-content: space-between;"
	" padding: 3px 10px 6px; min-height: 1.3em; }\n"
	"#details { overflow: hidden; white-space: pre; text-overflow: ellipsis; }\n"
	"#matched { white-space: pre; }\n"
	"#tooltip { position: fixed; z-index: 2; pointer-events: none;"
	" max-width: 50em; padding: 4px 7px; background: var(--panel);"
	" border: 1px solid var(--dim); white-space: pre-wrap;"
	" overflow-wrap: anywhere; }\n";

struct page {
	const struct html_opts *o;
	const struct flamegraph *fg;
	GString *s;		/* the document so far */
};

static void put_esc(GString *s, const char *v, size_t len,
		    size_t (*esc)(char *, const char *, size_t))
{
	gsize at = s->len;

	g_string_set_size(s, at + XML_ESCAPE_MAX(len));
	g_string_set_size(s, at + esc(s->str + at, v, len));
}

static void put_text(GString *s, const char *v)
{
	put_esc(s, v, strlen(v), xml_escape);
}

static void put_js(GString *s, const char *v)
{
	g_string_append_c(s, '"');
	put_esc(s, v, strlen(v), js_escape);
	g_string_append_c(s, '"');
}

/* A double as JSON: "%.17g" (round trip), whatever the locale. */
static void put_double(GString *s, double v)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	g_string_append(s, g_ascii_formatd(buf, sizeof(buf), "%.17g", v));
}

static void put_count(GString *s, fk_count c)
{
	char buf[FK_COUNT_BUFSZ];

	g_string_append_len(s, buf, (gssize)fk_count_format(c, buf));
}

/* An integer (not a count of 10^-9 units) in decimal. */
static void put_int(GString *s, fk_count v)
{
	char buf[48], *p = buf + sizeof(buf);
	unsigned __int128 u = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;

	do {
		*--p = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	g_string_append_len(s, p, buf + sizeof(buf) - p);
}

static const char B64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void put_base64(GString *s, const uint8_t *p, size_t n)
{
	gsize at = s->len;
	char *d;
	size_t i = 0;

	g_string_set_size(s, at + (n + 2) / 3 * 4);
	d = s->str + at;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		d[0] = B64[v >> 18];
		d[1] = B64[v >> 12 & 63];
		d[2] = B64[v >> 6 & 63];
		d[3] = B64[v & 63];
		d += 4;
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);

		d[0] = B64[v >> 18];
		d[1] = B64[v >> 12 & 63];
		d[2] = i + 1 < n ? B64[v >> 6 & 63] : '=';
		d[3] = '=';
	}
}

/* "'sha256-BASE64'" of s[0..n), for the Content-Security-Policy. */
static void put_hash(GString *s, const char *p, size_t n)
{
	GChecksum *c = g_checksum_new(G_CHECKSUM_SHA256);
	guint8 digest[32];
	gsize len = sizeof(digest);

	g_checksum_update(c, (const guchar *)p, (gssize)n);
	g_checksum_get_digest(c, digest, &len);
	g_checksum_free(c);
	g_string_append(s, "'sha256-");
	put_base64(s, digest, len);
	g_string_append_c(s, '\'');
}

static struct rgb palette_of(const char *name, size_t len, void *data)
{
	const struct html_opts *o = data;

	return palette_color(o->palette, o->color_mode, name, len, o->rng);
}

struct colors {
	const struct html_opts *o;
	GString *grey;		/* the indexes of grey names, "1, 7" */
};

/*
 * A frame name's colour, as fold2svg's frame_color() gives it.  Its "--"
 * and "-" frames are grey even in a differential graph, where the page
 * colours the others by their change: their indexes go in the
 * configuration.
 */
static struct rgb name_color(const char *name, size_t len, size_t index,
			     void *data)
{
	struct colors *c = data;
	const struct html_opts *o = c->o;
	bool dashes = len == 2 && name[0] == '-' && name[1] == '-';

	if (dashes || (len == 1 && name[0] == '-')) {
		g_string_append_printf(c->grey, "%s%zu", c->grey->len ? ", " : "", index);
		return dashes ? (struct rgb){ 160, 160, 160 } : (struct rgb){ 200, 200, 200 };
	}
	if (o->cp)
		return palette_map_get(o->cp, name, len, palette_of, (void *)o);
	return palette_of(name, len, (void *)o);
}

/*
 * fold2svg's minimum width for the same options, in counts: the frames
 * narrower are those its SVG leaves out.
 */
static double svg_min_count(const struct page *pg)
{
	const struct html_opts *o = pg->o;
	double timemax = fk_count_to_double(fg_timemax(pg->fg));

	return o->minwidth_pct ? timemax * o->minwidth / 100
			       : o->minwidth / ((o->image_width - 2 * 10) / timemax);
}

/*
 * The largest change differential colours scale to, as fold2svg's SVG of
 * the same options has it: with FG_DIFF_TOTAL the graph's own
 * (fg_maxdelta()) covers every frame kept here, fold2svg's only the frames
 * it draws.
 */
static double svg_maxdelta(const struct page *pg)
{
	const struct flamegraph *fg = pg->fg;
	double min_count = svg_min_count(pg), max = 1;

	if (fg_diff_mode(fg) != FG_DIFF_TOTAL)
		return fg_maxdelta(fg);
	for (size_t i = 0; i < fg_nframes(fg); i++) {
		const struct fg_frame *f = fg_frame(fg, i);
		fk_count w = f->depth == 0 ? fg_sum(fg) : f->end - f->start;
		fk_count d = fg_frame_total_change(fg, f);
		double ad = fk_count_to_double(d < 0 ? -d : d);

		if (!(fk_count_to_double(w) < min_count) && ad > max)
			max = ad;
	}
	return max;
}

/*
 * What the script needs to read and write fold2svg's zoom links
 * (?x=&y=, the place of a frame's <rect> in the SVG fold2svg would draw
 * with the same options): its scale, its rows, and which frames it draws
 * (those at least min_count wide; the deepest of them sets its height).
 */
static void put_svg_geometry(GString *s, const struct page *pg)
{
	const struct html_opts *o = pg->o;
	const struct flamegraph *fg = pg->fg;
	double timemax = fk_count_to_double(fg_timemax(fg));
	double wpt = (o->image_width - 2 * 10) / timemax;
	double min_count = svg_min_count(pg);
	double ypad1 = o->fontsize * 3, ypad2 = o->fontsize * 2 + 10;
	double ypad3 = o->subtitle && *o->subtitle ? o->fontsize * 2 : 0;
	uint32_t depthmax = 0;

	for (size_t i = 0; i < fg_nframes(fg); i++) {
		const struct fg_frame *f = fg_frame(fg, i);

		if (f->depth > depthmax &&
		    !(fk_count_to_double(f->end - f->start) < min_count))
			depthmax = f->depth;
	}
	g_string_append(s, "{\"wpt\": ");
	put_double(s, wpt);
	g_string_append(s, ", \"minCount\": ");
	put_double(s, min_count);
	/* the first row's y: fold2svg's y1 = base - depth * height (flame)
	 * or base + depth * height (icicle), in its order of operations */
	g_string_append(s, ", \"yBase\": ");
	if (o->inverted) {
		put_double(s, ypad1 + ypad3);
	} else {
		double imageheight = (depthmax + 1) * o->frameheight + ypad1 +
				     ypad2 + ypad3;

		put_double(s, imageheight - ypad2);
	}
	g_string_append(s, "}");
}

static void put_config(GString *s, const struct page *pg,
		       const struct flame_pack *pack, const char *grey)
{
	const struct html_opts *o = pg->o;
	const struct flamegraph *fg = pg->fg;

	g_string_append(s, "var fg_config = {\"nametype\": ");
	put_js(s, o->nametype);
	g_string_append(s, ", \"countname\": ");
	put_js(s, o->countname);
	g_string_append(s, ", \"fonttype\": ");
	put_js(s, o->fonttype);
	g_string_append(s, ", \"fontsize\": ");
	put_double(s, o->fontsize);
	g_string_append(s, ", \"fontwidth\": ");
	put_double(s, o->fontwidth);
	g_string_append(s, ", \"frameheight\": ");
	put_double(s, o->frameheight);
	g_string_append(s, ", \"minwidth\": ");
	put_double(s, o->minwidth);
	g_string_append_printf(s, ", \"minwidthPct\": %s, \"inverted\": %s, "
			       "\"flamechart\": %s, \"negate\": %s, "
			       "\"differential\": %s, \"diffTotal\": %s, "
			       "\"markNew\": %s, \"maxdelta\": ",
			       o->minwidth_pct ? "true" : "false",
			       o->inverted ? "true" : "false",
			       o->flamechart ? "true" : "false",
			       o->negate ? "true" : "false",
			       fg_differential(fg) ? "true" : "false",
			       fg_differential(fg) && fg_diff_mode(fg) == FG_DIFF_TOTAL
			       ? "true" : "false",
			       o->mark_new ? "true" : "false");
	put_double(s, svg_maxdelta(pg));
	/* counts as decimal strings: they may pass 2^53 */
	g_string_append_printf(s, ", \"scale\": %u, \"total\": \"", pack->scale);
	put_int(s, flame_pack_units(fg_timemax(fg), pack->scale));
	g_string_append(s, "\", \"factor\": \"");
	put_count(s, o->factor);
	g_string_append_printf(s, "\", \"grey\": [%s], \"svg\": ", grey);
	put_svg_geometry(s, pg);
	g_string_append(s, "};\n");
}

/* The script element's text: configuration, data, code. */
static GString *script_text(const struct page *pg, struct html_info *info)
{
	const struct html_opts *o = pg->o;
	struct flame_pack pack;
	GString *s;
	char *grey;

	struct colors colors = { o, g_string_new(NULL) };

	flame_pack_build(pg->fg, name_color, &colors, &pack);
	s = g_string_sized_new(pack.len / 3 * 4 + 4096 + (o->script ? strlen(o->script) : 0));
	grey = g_string_free(colors.grey, FALSE);
	g_string_append(s, "\n//<![CDATA[\n");
	put_config(s, pg, &pack, grey);
	g_string_append(s, "var fg_data = \"");
	put_base64(s, pack.data, pack.len);
	g_string_append(s, "\";\n");
	if (o->script)
		g_string_append(s, o->script);
	g_string_append(s, "\n//]]>\n");
	info->frames = pack.nframes;
	info->names = pack.nnames;
	/* the total is the largest count: the root's width */
	info->rounded = flame_pack_units(fg_timemax(pg->fg), pack.scale) >=
			(fk_count)1 << 53;
	g_free(grey);
	flame_pack_clear(&pack);
	return s;
}

static GString *style_text(const struct html_opts *o)
{
	GString *s = g_string_new(STYLE_HEAD);

	put_text(s, o->bg1);
	g_string_append(s, STYLE_MID);
	put_text(s, o->bg2);
	g_string_append(s, STYLE_TAIL);
	return s;
}

/* The page up to its script's text. */
static void page_head(GString *d, const struct page *pg, const GString *style,
		      const GString *script)
{
	const struct html_opts *o = pg->o;
	const char *title = o->title ? o->title
			  : o->flamechart ? "Flame Chart"
			  : o->inverted ? "Icicle Graph" : "Flame Graph";

	g_string_append(d, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
			"<meta charset=\"utf-8\"/>\n"
			"<meta http-equiv=\"Content-Security-Policy\" content=\""
			"default-src 'none'; script-src ");
	put_hash(d, script->str, script->len);
	g_string_append(d, "; style-src ");
	put_hash(d, style->str, style->len);
	g_string_append(d, "; worker-src blob:; base-uri 'none'; form-action 'none'\"/>\n"
			"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
			"<meta name=\"generator\" content=\"fold2html (foldkit)\"/>\n"
			"<title>");
	put_text(d, title);
	g_string_append(d, "</title>\n<!-- NOTES: ");
	if (o->notes)
		put_esc(d, o->notes, strlen(o->notes), xml_comment_escape);
	g_string_append(d, " -->\n<style>");
	g_string_append_len(d, style->str, (gssize)style->len);
	g_string_append(d, "</style>\n</head>\n<body>\n<header>\n<div id=\"bar\">\n"
			"<button id=\"unzoom\" type=\"button\" disabled=\"disabled\" "
			"title=\"Back to the whole profile (Esc)\">Reset Zoom</button>\n"
			"<button id=\"sandwich\" type=\"button\" disabled=\"disabled\" "
			"title=\"The zoomed function's callers and callees (or Shift+click a frame)\">Sandwich</button>\n"
			"<button id=\"invert\" type=\"button\" "
			"title=\"Flip the graph (i)\">Icicle</button>\n"
			"<h1 id=\"title\">");
	put_text(d, title);
	g_string_append(d, "</h1>\n<input id=\"term\" type=\"search\" "
			"placeholder=\"Search (regex)\" aria-label=\"Search frames (a regular expression)\" "
			"spellcheck=\"false\" autocomplete=\"off\"/>\n"
			"<button id=\"ignorecase\" type=\"button\" "
			"title=\"Ignore case (Ctrl+I)\">ic</button>\n</div>\n<div id=\"subtitle\">");
	if (o->subtitle)
		put_text(d, o->subtitle);
	g_string_append(d, "</div>\n</header>\n<main id=\"graph\">"
			"<canvas id=\"canvas\" aria-label=\"the flame graph\"></canvas>"
			"<div id=\"spacer\"></div></main>\n"
			"<footer><span id=\"details\"> </span><span id=\"matched\"> </span></footer>\n"
			"<div id=\"tooltip\" hidden=\"hidden\"></div>\n<script>");
}

static const char PAGE_TAIL[] = "</script>\n</body>\n</html>\n";

int html_write(const struct flamegraph *fg, const struct html_opts *o,
	       FILE *out, struct html_info *info, GError **err)
{
	struct page pg = { .o = o, .fg = fg };
	struct html_info dummy;
	GString *script, *style = style_text(o);

	if (!info)
		info = &dummy;
	script = script_text(&pg, info);
	GString *head = g_string_sized_new(8192);
	int rc = 0;

	page_head(head, &pg, style, script);
	fwrite(head->str, 1, head->len, out);
	fwrite(script->str, 1, script->len, out);
	fwrite(PAGE_TAIL, 1, sizeof(PAGE_TAIL) - 1, out);
	info->bytes = head->len + script->len + sizeof(PAGE_TAIL) - 1;
	g_string_free(head, TRUE);
	g_string_free(script, TRUE);
	g_string_free(style, TRUE);
	if (ferror(out) || fflush(out) != 0) {
		fk_error_at(err, FK_ERROR_IO, "<stdout>", 0, "write error: %s",
			    g_strerror(errno));
		rc = -1;
	}
	return rc;
}
