#include "render/svgwriter.h"

#include "core/error.h"
#include "render/xmlesc.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define WBUF_SIZE (1u << 20)

/* One big buffer in front of the FILE: the frame loop never calls stdio. */
struct wbuf {
	char *p;
	size_t len;
	FILE *f;
	bool ascii;	/* declared in another encoding: write only ASCII */
};

static void wb_flush(struct wbuf *w)
{
	if (w->len)
		fwrite(w->p, 1, w->len, w->f);
	w->len = 0;
}

static inline char *wb_room(struct wbuf *w, size_t n)
{
	if (w->len + n > WBUF_SIZE)
		wb_flush(w);
	return w->p + w->len;
}

static void wb_put(struct wbuf *w, const char *s, size_t n)
{
	if (n > WBUF_SIZE / 2) {
		wb_flush(w);
		fwrite(s, 1, n, w->f);
		return;
	}
	memcpy(wb_room(w, n), s, n);
	w->len += n;
}

#define WB_LIT(w, lit) wb_put((w), (lit), sizeof(lit) - 1)

static void wb_str(struct wbuf *w, const char *s)
{
	wb_put(w, s, strlen(s));
}

/* Writes s through one of the xmlesc.h escapers. */
static void wb_esc_with(struct wbuf *w, const char *s, size_t n,
			size_t (*esc)(char *, const char *, size_t))
{
	size_t max = XML_ESCAPE_MAX(n);

	if (max > WBUF_SIZE / 2) {
		char *tmp = g_malloc(max);

		wb_put(w, tmp, esc(tmp, s, n));
		g_free(tmp);
		return;
	}
	w->len += esc(wb_room(w, max), s, n);
}

static void wb_esc(struct wbuf *w, const char *s, size_t n)
{
	wb_esc_with(w, s, n, w->ascii ? xml_escape_ascii : xml_escape);
}

static void wb_printf(struct wbuf *w, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void wb_printf(struct wbuf *w, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	s = g_strdup_vprintf(fmt, ap);
	n = (int)strlen(s);
	va_end(ap);
	wb_put(w, s, (size_t)n);
	g_free(s);
}

static size_t put_uint(char *d, unsigned long long v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		d[i] = tmp[n - 1 - i];
	return n;
}

/*
 * v rounded to tenths exactly as printf("%.1f") rounds it (the decimal
 * value of the double, ties to even).  v * 10 is off by at most an ulp, so
 * it decides every case but a near-tie, which printf settles.
 */
static long long tenths(double v)
{
	double t = v * 10, fl;
	char buf[64];

	if (!(fabs(t) < 1e15)) {
		snprintf(buf, sizeof(buf), "%.0f", t);
		return strtoll(buf, NULL, 10);
	}
	fl = floor(t);
	if (fabs(t - fl - 0.5) > 1e-6)
		return (long long)fl + (t - fl > 0.5);
	snprintf(buf, sizeof(buf), "%.1f", v);
	{
		char *dot = strchr(buf, '.');
		long long ip = strtoll(buf, NULL, 10);
		int d = dot ? dot[1] - '0' : 0;

		return buf[0] == '-' ? ip * 10 - d : ip * 10 + d;
	}
}

static size_t put_tenths(char *d, long long t)
{
	size_t n = 0;

	if (t < 0) {
		d[n++] = '-';
		t = -t;
	}
	n += put_uint(d + n, (unsigned long long)(t / 10));
	d[n++] = '.';
	d[n++] = (char)('0' + t % 10);
	return n;
}

/* A number as Perl prints it: integers plainly, others with %.15g. */
static size_t put_num(char *d, double v)
{
	if (v == floor(v) && fabs(v) < 1e15) {
		if (v < 0) {
			d[0] = '-';
			return 1 + put_uint(d + 1, (unsigned long long)-v);
		}
		return put_uint(d, (unsigned long long)v);
	}
	return (size_t)snprintf(d, 32, "%.15g", v);
}

static void wb_num(struct wbuf *w, double v)
{
	char *d = wb_room(w, 32);

	w->len += put_num(d, v);
}

static size_t put_rgb(char *d, struct rgb c)
{
	size_t n = 4;

	memcpy(d, "rgb(", 4);
	n += put_uint(d + n, c.r);
	d[n++] = ',';
	n += put_uint(d + n, c.g);
	d[n++] = ',';
	n += put_uint(d + n, c.b);
	d[n++] = ')';
	return n;
}

static size_t add_commas(char *buf, size_t n)
{
	size_t ilen = 0, start = buf[0] == '-', groups;
	char tmp[FK_COUNT_BUFSZ * 2];

	while (start + ilen < n && buf[start + ilen] != '.')
		ilen++;
	if (ilen <= 3)
		return n;
	groups = (ilen - 1) / 3;
	memcpy(tmp, buf, n);
	{
		size_t o = 0, k;

		for (k = 0; k < start; k++)
			buf[o++] = tmp[k];
		for (k = 0; k < ilen; k++) {
			if (k && (ilen - k) % 3 == 0)
				buf[o++] = ',';
			buf[o++] = tmp[start + k];
		}
		for (k = start + ilen; k < n; k++)
			buf[o++] = tmp[k];
	}
	return n + groups;
}

size_t svg_format_count(fk_count c, fk_count factor, char *buf)
{
	size_t n;

	if (factor != FK_COUNT_ONE) {
		fk_count p;

		if (__builtin_mul_overflow(c, factor, &p)) {
			/* beyond 10^29: fall back to floating point */
			n = (size_t)snprintf(buf, FK_COUNT_BUFSZ * 2, "%.0f",
					     fk_count_to_double(c) *
					     fk_count_to_double(factor));
			return add_commas(buf, n);
		}
		/* round the 18 fractional digits back to 9, half up */
		c = (p + (p < 0 ? -FK_COUNT_ONE / 2 : FK_COUNT_ONE / 2)) / FK_COUNT_ONE;
	}
	n = fk_count_format(c, buf);
	return add_commas(buf, n);
}

size_t svg_format_pct(fk_count part, fk_count whole, char *buf)
{
	fk_count q, r, num;
	bool neg = part < 0;
	size_t n = 0;

	if (neg)
		part = -part;
	if (whole <= 0)
		whole = 1;
	/* part < 2^127 / 10^4 for any real input; clamp otherwise */
	if (__builtin_mul_overflow(part, (fk_count)10000, &num))
		return (size_t)sprintf(buf, "%s%.2f", neg ? "-" : "",
				       100 * fk_count_to_double(part) /
				       fk_count_to_double(whole));
	q = num / whole;
	r = num % whole;
	if (2 * r > whole || (2 * r == whole && (q & 1)))
		q++;
	if (neg && q)
		buf[n++] = '-';
	n += put_uint(buf + n, (unsigned long long)(q / 100));
	buf[n++] = '.';
	buf[n++] = (char)('0' + q / 10 % 10);
	buf[n++] = (char)('0' + q % 10);
	return n;
}

/* Name attributes */

struct attrs {
	char *title, *class_, *style, *href, *target;
};

struct fg_nameattr {
	GHashTable *h;		/* name -> struct attrs */
};

static void attrs_free(gpointer p)
{
	struct attrs *a = p;

	g_free(a->title);
	g_free(a->class_);
	g_free(a->style);
	g_free(a->href);
	g_free(a->target);
	g_free(a);
}

static bool safe_href(const char *v)
{
	size_t n = strcspn(v, ":/?#");

	if (v[n] != ':')
		return true;	/* relative */
	return (n == 4 && g_ascii_strncasecmp(v, "http", 4) == 0) ||
	       (n == 5 && g_ascii_strncasecmp(v, "https", 5) == 0);
}

/*
 * A style that cannot make the viewer load anything: no url(), image-set(),
 * image(), expression() or @import, no strings (which image-set() reads
 * as URLs) and no backslash escapes (which could spell the others).
 * Browsers refuse javascript: in url() but fetch http: ones, and the SVG
 * is meant to need nothing from outside.
 */
static bool safe_style(const char *v)
{
	static const char *const bad[] = { "url(", "image-set(", "image(",
		"expression(", "@import", "javascript:" };
	char *low;
	bool ok = true;

	if (strpbrk(v, "\\\"'"))
		return false;
	low = g_ascii_strdown(v, -1);
	for (size_t k = 0; ok && k < G_N_ELEMENTS(bad); k++)
		ok = !strstr(low, bad[k]);
	g_free(low);
	return ok;
}

struct fg_nameattr *fg_nameattr_load(const char *path, uint64_t *ignored,
				     GError **err)
{
	struct fg_nameattr *na;
	char *text, **lines;
	gsize len;
	GError *e = NULL;

	if (!g_file_get_contents(path, &text, &len, &e)) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "%s", e->message);
		g_error_free(e);
		return NULL;
	}
	na = g_new0(struct fg_nameattr, 1);
	na->h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, attrs_free);
	lines = g_strsplit(text, "\n", -1);
	for (size_t i = 0; lines[i]; i++) {
		char **f;
		struct attrs *a;

		if (!lines[i][0] && !lines[i + 1])
			break;
		if (!strchr(lines[i], '\t')) {
			fk_error_at(err, FK_ERROR_PARSE, path, i + 1,
				    "expected \"NAME<TAB>key=value...\"");
			g_strfreev(lines);
			g_free(text);
			fg_nameattr_free(na);
			return NULL;
		}
		f = g_strsplit(lines[i], "\t", -1);
		a = g_new0(struct attrs, 1);
		for (size_t k = 1; f[k]; k++) {
			char *eq = strchr(f[k], '='), **slot = NULL;

			if (!eq) {
				(*ignored)++;
				continue;
			}
			*eq = 0;
			if (!strcmp(f[k], "title"))
				slot = &a->title;
			else if (!strcmp(f[k], "class"))
				slot = &a->class_;
			else if (!strcmp(f[k], "style") && safe_style(eq + 1))
				slot = &a->style;
			else if (!strcmp(f[k], "href") && safe_href(eq + 1))
				slot = &a->href;
			else if (!strcmp(f[k], "target"))
				slot = &a->target;
			if (!slot) {
				(*ignored)++;
				continue;
			}
			g_free(*slot);
			*slot = g_strdup(eq + 1);
		}
		g_hash_table_replace(na->h, g_strdup(f[0]), a);
		g_strfreev(f);
	}
	g_strfreev(lines);
	g_free(text);
	return na;
}

void fg_nameattr_free(struct fg_nameattr *na)
{
	if (!na)
		return;
	g_hash_table_destroy(na->h);
	g_free(na);
}

/* The document */

struct ctx {
	const struct svg_opts *o;
	const struct flamegraph *fg;
	struct wbuf *w;
	double imageheight, ypad1, ypad2, ypad3, wpt;
	fk_count timemax;
	bool diff;
};

static void attr(struct wbuf *w, const char *name, const char *v)
{
	wb_put(w, " ", 1);
	wb_str(w, name);
	WB_LIT(w, "=\"");
	wb_esc(w, v, strlen(v));
	WB_LIT(w, "\"");
}

/* A CSS string for the font name: quotes and backslashes hex-escaped. */
static void css_font(struct wbuf *w, const char *font)
{
	GString *s = g_string_new("\"");

	for (const char *p = font; *p; p++) {
		if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
			g_string_append_printf(s, "\\%x ", (unsigned char)*p);
		else
			g_string_append_c(s, *p);
	}
	g_string_append_c(s, '"');
	wb_esc(w, s->str, s->len);
	g_string_free(s, TRUE);
}

static void js_string(struct wbuf *w, const char *s)
{
	WB_LIT(w, "\"");
	wb_esc_with(w, s, strlen(s), w->ascii ? js_escape_ascii : js_escape);
	WB_LIT(w, "\"");
}

static void write_head(struct ctx *c)
{
	const struct svg_opts *o = c->o;
	struct wbuf *w = c->w;
	double W = o->image_width, fs = o->fontsize;

	WB_LIT(w, "<?xml version=\"1.0\"");
	if (o->encoding)
		attr(w, "encoding", o->encoding);
	WB_LIT(w, " standalone=\"no\"?>\n"
	       "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
	       "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
	       "<svg version=\"1.1\" width=\"");
	wb_num(w, W);
	WB_LIT(w, "\" height=\"");
	wb_num(w, c->imageheight);
	WB_LIT(w, "\" viewBox=\"0 0 ");
	wb_num(w, W);
	WB_LIT(w, " ");
	wb_num(w, c->imageheight);
	WB_LIT(w, "\" xmlns=\"http://www.w3.org/2000/svg\" "
	       "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
	       "<!-- Flame graph drawn by fold2svg (foldkit) from folded stacks. -->\n"
	       "<!-- NOTES: ");
	if (o->notes)
		wb_esc_with(w, o->notes, strlen(o->notes),
			    w->ascii ? xml_comment_escape_ascii : xml_comment_escape);
	WB_LIT(w, " -->\n<defs>\n<linearGradient id=\"background\" y1=\"0\" "
	       "y2=\"1\" x1=\"0\" x2=\"0\">\n<stop stop-color=\"");
	wb_esc(w, o->bg1, strlen(o->bg1));
	WB_LIT(w, "\" offset=\"5%\"/>\n<stop stop-color=\"");
	wb_esc(w, o->bg2, strlen(o->bg2));
	WB_LIT(w, "\" offset=\"95%\"/>\n</linearGradient>\n</defs>\n"
	       "<style type=\"text/css\">\n\ttext { font-family:");
	css_font(w, o->fonttype);
	WB_LIT(w, "; font-size:");
	wb_num(w, fs);
	WB_LIT(w, "px; fill:rgb(0,0,0); }\n"
	       "\t#title { text-anchor:middle; font-size:");
	wb_num(w, fs + 5);
	WB_LIT(w, "px; }\n"
	       "\t#subtitle { text-anchor:middle; fill:rgb(160,160,160); }\n"
	       /* the controls look like links (flamegraph.pl's were at 10%
		* opacity until hovered, too faint to find); "ic" turned on
		* takes the search colour */
	       "\t#search, #ignorecase, #unzoom { cursor:pointer; fill:rgb(0,0,170);"
	       " text-decoration:underline; }\n"
	       "\t#search:hover, #ignorecase:hover, #unzoom:hover { fill:rgb(230,0,230); }\n"
	       "\t#ignorecase.show { fill:rgb(230,0,230); font-weight:bold; }\n"
	       "\t#frames > g { cursor:pointer; }\n"
	       "\t#frames > g:hover > rect, #frames > g:hover > a > rect { stroke:black; stroke-width:0.5; }\n"
	       "\t#frames text { pointer-events:none; }\n"
	       "\t.hide, #frames.zoomed > g { display:none; }\n"
	       "\t#frames.zoomed > g.in, #frames.zoomed > g.parent { display:inline; }\n"
	       "\t.parent { opacity:0.5; }\n"
	       "</style>\n");

	/* background and the fixed texts */
	WB_LIT(w, "<rect x=\"0\" y=\"0\" width=\"");
	wb_num(w, W);
	WB_LIT(w, "\" height=\"");
	wb_num(w, c->imageheight);
	WB_LIT(w, "\" fill=\"url(#background)\"/>\n<text id=\"title\" x=\"");
	wb_num(w, W / 2);
	WB_LIT(w, "\" y=\"");
	wb_num(w, fs * 2);
	WB_LIT(w, "\">");
	{
		const char *t = o->title ? o->title
			      : o->flamechart ? "Flame Chart"
			      : o->inverted ? "Icicle Graph" : "Flame Graph";
		wb_esc(w, t, strlen(t));
	}
	WB_LIT(w, "</text>\n");
	if (o->subtitle && *o->subtitle) {
		WB_LIT(w, "<text id=\"subtitle\" x=\"");
		wb_num(w, W / 2);
		WB_LIT(w, "\" y=\"");
		wb_num(w, fs * 4);
		WB_LIT(w, "\">");
		wb_esc(w, o->subtitle, strlen(o->subtitle));
		WB_LIT(w, "</text>\n");
	}
	WB_LIT(w, "<text id=\"details\" x=\"10\" y=\"");
	wb_num(w, c->imageheight - c->ypad2 / 2);
	WB_LIT(w, "\"> </text>\n<text id=\"unzoom\" class=\"hide\" x=\"10\" y=\"");
	wb_num(w, fs * 2);
	WB_LIT(w, "\">Reset Zoom</text>\n<text id=\"search\" x=\"");
	wb_num(w, W - 10 - 100);
	WB_LIT(w, "\" y=\"");
	wb_num(w, fs * 2);
	WB_LIT(w, "\">Search</text>\n<text id=\"ignorecase\" x=\"");
	wb_num(w, W - 10 - 16);
	WB_LIT(w, "\" y=\"");
	wb_num(w, fs * 2);
	WB_LIT(w, "\">ic</text>\n<text id=\"matched\" x=\"");
	wb_num(w, W - 10 - 100);
	WB_LIT(w, "\" y=\"");
	wb_num(w, c->imageheight - c->ypad2 / 2);
	WB_LIT(w, "\"> </text>\n");
}

static size_t strip_annotation(const char *s, size_t n)
{
	if (n >= 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' &&
	    strchr("kwij", s[n - 2]) && s[n - 2])
		return n - 4;
	return n;
}

struct color_ctx {
	const struct svg_opts *o;
};

static struct rgb compute_color(const char *name, size_t len, void *data)
{
	const struct svg_opts *o = ((struct color_ctx *)data)->o;

	return palette_color(o->palette, o->color_mode, name, len, o->rng);
}

static struct rgb frame_color(struct ctx *c, const struct fg_frame *f)
{
	const struct svg_opts *o = c->o;

	if (f->len == 2 && f->name[0] == '-' && f->name[1] == '-')
		return (struct rgb){ 160, 160, 160 };
	if (f->len == 1 && f->name[0] == '-')
		return (struct rgb){ 200, 200, 200 };
	if (c->diff && o->mark_new && fg_frame_is_new(f))
		return palette_delta_new();
	if (c->diff)
		return palette_delta(fk_count_to_double(fg_frame_change(c->fg, f)),
				     fg_maxdelta(c->fg), o->negate);
	if (o->cp) {
		struct color_ctx cc = { o };

		return palette_map_get(o->cp, f->name, f->len, compute_color, &cc);
	}
	return palette_color(o->palette, o->color_mode, f->name, f->len, o->rng);
}

/* "; +1.5%" as a share of the graph, its sign swapped by --negate */
static void write_pct_change(struct ctx *c, fk_count d)
{
	char buf[FK_COUNT_BUFSZ * 2];

	if (c->o->negate)
		d = -d;
	WB_LIT(c->w, "; ");
	if (d > 0)
		WB_LIT(c->w, "+");
	wb_put(c->w, buf, svg_format_pct(d, c->timemax, buf));
	WB_LIT(c->w, "%");
}

/*
 * A differential frame's change: the self change alone (flamegraph.pl's
 * title), or with --diff=total "; +T% total; +S% self"; then "; new" for a
 * frame only in the second profile with --mark-new ("; gone" with
 * --negate, whose second profile is the older).
 */
static void write_change(struct ctx *c, const struct fg_frame *f)
{
	if (fg_diff_mode(c->fg) == FG_DIFF_TOTAL) {
		write_pct_change(c, fg_frame_total_change(c->fg, f));
		WB_LIT(c->w, " total");
		write_pct_change(c, f->delta);
		WB_LIT(c->w, " self");
	} else {
		write_pct_change(c, f->delta);
	}
	if (c->o->mark_new && fg_frame_is_new(f)) {
		if (c->o->negate)
			WB_LIT(c->w, "; gone");
		else
			WB_LIT(c->w, "; new");
	}
}

static void write_title(struct ctx *c, const struct fg_frame *f, size_t nlen)
{
	struct wbuf *w = c->w;
	char buf[FK_COUNT_BUFSZ * 2];
	size_t n;

	if (f->depth == 0)
		WB_LIT(w, "all");
	else
		wb_esc(w, f->name, nlen);
	WB_LIT(w, " (");
	n = svg_format_count(f->end - f->start, c->o->factor, buf);
	wb_put(w, buf, n);
	WB_LIT(w, " ");
	wb_esc(w, c->o->countname, strlen(c->o->countname));
	WB_LIT(w, ", ");
	if (f->depth == 0 && !c->diff) {
		WB_LIT(w, "100%)");
		return;
	}
	wb_put(w, buf, svg_format_pct(f->end - f->start, c->timemax, buf));
	WB_LIT(w, "%");
	if (c->diff)
		write_change(c, f);
	WB_LIT(w, ")");
}

static void write_frame(struct ctx *c, const struct fg_frame *f,
			const char *height)
{
	const struct svg_opts *o = c->o;
	struct wbuf *w = c->w;
	double x1 = 10 + fk_count_to_double(f->start) * c->wpt;
	double x2 = 10 + fk_count_to_double(f->end) * c->wpt;
	double y1, y2;
	long long t1 = tenths(x1), t2 = tenths(x2);
	size_t nlen = strip_annotation(f->name, f->len);
	const struct attrs *a = NULL;
	char *d;
	int chars;

	if (o->inverted) {
		y1 = c->ypad1 + c->ypad3 + f->depth * o->frameheight;
		y2 = y1 + o->frameheight - 1;
	} else {
		y2 = c->imageheight - c->ypad2 - f->depth * o->frameheight;
		y1 = y2 - o->frameheight + 1;
	}
	if (o->nameattr) {
		char *key = g_strndup(f->name, f->len);

		a = g_hash_table_lookup(o->nameattr->h, key);
		g_free(key);
	}

	WB_LIT(w, "<g");
	if (a && a->class_)
		attr(w, "class", a->class_);
	if (a && a->style)
		attr(w, "style", a->style);
	WB_LIT(w, "><title>");
	if (a && a->title)
		wb_esc(w, a->title, strlen(a->title));
	else
		write_title(c, f, nlen);
	WB_LIT(w, "</title>");
	if (a && a->href) {
		WB_LIT(w, "<a");
		attr(w, "xlink:href", a->href);
		attr(w, "target", a->target ? a->target : "_top");
		WB_LIT(w, ">");
	}

	d = wb_room(w, 256);
	memcpy(d, "<rect x=\"", 9);
	d += 9;
	d += put_tenths(d, t1);
	memcpy(d, "\" y=\"", 5);
	d += 5;
	d += put_num(d, y1);
	memcpy(d, "\" width=\"", 9);
	d += 9;
	d += put_tenths(d, t2 - t1);
	memcpy(d, "\" height=\"", 10);
	d += 10;
	memcpy(d, height, strlen(height));
	d += strlen(height);
	memcpy(d, "\" fill=\"", 8);
	d += 8;
	d += put_rgb(d, frame_color(c, f));
	/* frames too narrow for a label get no <text>: on big graphs most
	 * are, and the script adds one if a zoom makes room */
	chars = (int)((x2 - x1) / (o->fontsize * o->fontwidth));
	if (chars < 3) {
		memcpy(d, "\" rx=\"2\" ry=\"2\"/>", 17);
		w->len = (size_t)(d + 17 - w->p);
	} else {
		const char *name = f->depth == 0 ? "all" : f->name;
		size_t len = f->depth == 0 ? 3 : nlen;
		size_t chlen = utf8_length(name, len);

		memcpy(d, "\" rx=\"2\" ry=\"2\"/><text x=\"", 26);
		d += 26;
		d += put_tenths(d, t1 + 30);
		memcpy(d, "\" y=\"", 5);
		d += 5;
		d += put_num(d, 3 + (y1 + y2) / 2);
		memcpy(d, "\">", 2);
		d += 2;
		w->len = (size_t)(d - w->p);
		if ((size_t)chars < chlen) {
			wb_esc(w, name, utf8_offset(name, len, (size_t)chars - 2));
			WB_LIT(w, "..");
		} else {
			wb_esc(w, name, len);
		}
		WB_LIT(w, "</text>");
	}
	if (a && a->href)
		WB_LIT(w, "</a>");
	WB_LIT(w, "</g>\n");
}

static void write_script(struct ctx *c)
{
	const struct svg_opts *o = c->o;
	struct wbuf *w = c->w;
	char buf[FK_COUNT_BUFSZ * 2];

	WB_LIT(w, "<script type=\"text/ecmascript\"><![CDATA[\n"
	       "var fg_config = {\"nametype\": ");
	js_string(w, o->nametype);
	WB_LIT(w, ", \"countname\": ");
	js_string(w, o->countname);
	WB_LIT(w, ", \"fontsize\": ");
	wb_num(w, o->fontsize);
	WB_LIT(w, ", \"fontwidth\": ");
	wb_printf(w, "%.15g", o->fontwidth);
	WB_LIT(w, ", \"frameheight\": ");
	wb_num(w, o->frameheight);
	WB_LIT(w, ", \"width\": ");
	wb_num(w, o->image_width);
	WB_LIT(w, ", \"xpad\": 10, \"inverted\": ");
	wb_str(w, o->inverted ? "true" : "false");
	WB_LIT(w, ", \"total\": \"");
	wb_put(w, buf, svg_format_count(c->timemax, o->factor, buf));
	WB_LIT(w, "\"};\n");
	if (o->script)
		wb_str(w, o->script);
	WB_LIT(w, "\n]]></script>\n");
}

int svg_write(const struct flamegraph *fg, const struct svg_opts *o,
	      FILE *out, GError **err)
{
	struct wbuf w = { .p = g_malloc(WBUF_SIZE), .f = out };

	w.ascii = o->encoding && g_ascii_strcasecmp(o->encoding, "UTF-8") != 0 &&
		  g_ascii_strcasecmp(o->encoding, "UTF8") != 0;
	struct ctx c = { .o = o, .fg = fg, .w = &w };
	char height[32];
	int rc = 0;

	c.ypad1 = o->fontsize * 3;
	c.ypad2 = o->fontsize * 2 + 10;
	c.ypad3 = o->subtitle && *o->subtitle ? o->fontsize * 2 : 0;
	c.imageheight = (fg_depthmax(fg) + 1) * o->frameheight + c.ypad1 +
			c.ypad2 + c.ypad3;
	c.timemax = fg_timemax(fg);
	c.wpt = (o->image_width - 2 * 10) / fk_count_to_double(c.timemax);
	c.diff = fg_differential(fg);
	height[put_tenths(height, tenths(o->frameheight - 1))] = 0;

	write_head(&c);
	WB_LIT(&w, "<g id=\"frames\">\n");
	for (size_t i = 0; i < fg_nframes(fg); i++)
		write_frame(&c, fg_frame(fg, i), height);
	WB_LIT(&w, "</g>\n");
	write_script(&c);
	WB_LIT(&w, "</svg>\n");
	wb_flush(&w);
	g_free(w.p);
	if (ferror(out) || fflush(out) != 0) {
		fk_error_at(err, FK_ERROR_IO, "<stdout>", 0, "write error: %s",
			    g_strerror(errno));
		rc = -1;
	}
	return rc;
}
