/*
 * fuzz/html.c - folded stacks and option text through fold2html's page
 * writer (lib/render/htmlwriter.c, flamepack.c); the page must be
 * well-formed, hold the input only inside well-escaped strings, and carry
 * every frame exactly.
 *
 * Input: one option byte, then a first line used as the title, subtitle,
 * notes, name type, count name and font, then folded text.  Bits:
 * 1 inverted, 2 flamechart, 4 negate, 8 reverse, 16 hashed colours,
 * 32 --factor 0.5 and, for differential input, --diff=total --normalize
 * --mark-new, 64 --total 1e6, 128 the java palette (else hot).
 *
 * Checked with libxml2 (strict, no network): the page parses as XML;
 * every element is one the writer writes; exactly one <script>, whose
 * text is "//<![CDATA[", the configuration (JSON: the input only inside
 * strings escaped so that no "<", ">", "&", quote or line separator is
 * left), the frames as one base64 string and the script given; no
 * "</script", "<script" or "<!--" inside it, in any case, so an HTML
 * parser ends it where an XML parser does; no attribute is an event
 * handler, a link or a source.  The base64 string, decoded here by a
 * decoder of its own (flamepack.h's format), gives back every frame of
 * the graph: its depth, its name as shown, its place and width, its
 * change; and the names are valid UTF-8 without control characters.
 */
#include "fuzz.h"

#include "render/flamegraph.h"
#include "render/flamepack.h"
#include "render/htmlwriter.h"
#include "render/xmlesc.h"
#include "core/folded.h"

#include <inttypes.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

static const char SCRIPT[] = "var fuzz_script_marker = 1;";

static const char *const ELEMENTS[] = {
	"html", "head", "meta", "title", "style", "body", "header", "div",
	"button", "h1", "input", "main", "canvas", "footer", "span", "script",
};

#define JS_STR "\"(?:[^\"\\\\\\x00-\\x1f<>&'\\x{2028}\\x{2029}]++|\\\\(?:[\"\\\\/bfnrt]|u[0-9a-fA-F]{4}))*+\""
#define NUM "-?[0-9][0-9.e+-]*"
#define BOOL "(?:true|false)"
static const char SCRIPT_RE[] =
	"\\A\n//<!\\[CDATA\\[\n"
	"var fg_config = \\{\"nametype\": " JS_STR ", \"countname\": " JS_STR
	", \"fonttype\": " JS_STR ", \"fontsize\": " NUM ", \"fontwidth\": " NUM
	", \"frameheight\": " NUM ", \"minwidth\": " NUM ", \"minwidthPct\": " BOOL
	", \"inverted\": " BOOL ", \"flamechart\": " BOOL ", \"negate\": " BOOL
	", \"differential\": " BOOL ", \"diffTotal\": " BOOL ", \"markNew\": " BOOL
	", \"maxdelta\": " NUM ", \"scale\": [0-9]"
	", \"total\": \"[0-9]+\", \"factor\": \"[0-9.]+\", \"grey\": \\[(?:[0-9]+(?:, [0-9]+)*)?\\]"
	", \"svg\": \\{\"wpt\": " NUM ", \"minCount\": " NUM ", \"yBase\": " NUM "\\}\\};\n"
	"var fg_data = \"([A-Za-z0-9+/]*={0,2})\";\n"
	"var fuzz_script_marker = 1;\n//\\]\\]>\n\\z";
static GRegex *script_re;

static int scripts;
static char *script_text;

static void check_node(xmlNode *n)
{
	for (; n; n = n->next) {
		bool known = false;

		if (n->type != XML_ELEMENT_NODE)
			continue;
		for (size_t i = 0; i < G_N_ELEMENTS(ELEMENTS); i++)
			known |= strcmp((const char *)n->name, ELEMENTS[i]) == 0;
		FUZZ_CHECK(known, "element <%s> from the input", (const char *)n->name);
		if (strcmp((const char *)n->name, "script") == 0) {
			xmlChar *text = xmlNodeGetContent(n);

			scripts++;
			g_free(script_text);
			script_text = g_strdup(text ? (const char *)text : "");
			xmlFree(text);
		}
		for (xmlAttr *a = n->properties; a; a = a->next) {
			const char *name = (const char *)a->name;

			FUZZ_CHECK(g_ascii_strncasecmp(name, "on", 2) != 0,
				   "event handler attribute %s", name);
			FUZZ_CHECK(strcmp(name, "href") && strcmp(name, "src") &&
				   strcmp(name, "style"), "attribute %s", name);
		}
		check_node(n->children);
	}
}

/* flamepack.h's format, read again */
struct reader {
	const uint8_t *p, *end;
};

static unsigned __int128 uv(struct reader *r)
{
	unsigned __int128 v = 0;

	for (int shift = 0;; shift += 7) {
		FUZZ_CHECK(r->p < r->end, "the pack ends inside a number");
		FUZZ_CHECK(shift < 133, "a number of more than 19 bytes");
		v |= (unsigned __int128)(*r->p & 127) << shift;
		if (!(*r->p++ & 128))
			return v;
	}
}

static fk_count sv(struct reader *r)
{
	unsigned __int128 z = uv(r);

	return (fk_count)(z >> 1) ^ -(fk_count)(z & 1);
}

static uint8_t *base64_decode(const char *s, size_t n, size_t *len)
{
	gsize out;
	char *copy = g_strndup(s, n);
	uint8_t *p = g_base64_decode(copy, &out);

	g_free(copy);
	*len = out;
	return p;
}

/* The name as fold2html shows it: no annotation, xmlesc.h's cleaning. */
static char *shown(const char *s, size_t n)
{
	GString *g = g_string_new(NULL);
	size_t i = 0;

	if (n >= 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' &&
	    s[n - 2] && strchr("kwij", s[n - 2]))
		n -= 4;
	while (i < n) {
		uint32_t c = utf8_next(s, n, &i);
		char buf[4];

		g_string_append_len(g, buf, (gssize)utf8_put(buf, xml_char_ok(c) ? c : UTF8_REPLACEMENT));
	}
	return g_string_free(g, FALSE);
}

static void check_pack(const struct flamegraph *fg, const uint8_t *data, size_t len,
		       unsigned scale)
{
	struct reader r = { data, data + len };
	size_t nnames = (size_t)uv(&r), nframes = (size_t)uv(&r), nb = (size_t)uv(&r);
	size_t n = fg_nframes(fg);

	FUZZ_CHECK(nframes == n, "%zu frames packed, the graph has %zu", nframes, n);
	FUZZ_CHECK(nb <= (size_t)(r.end - r.p) && 3 * nnames <= (size_t)(r.end - r.p - nb),
		   "names past the end");
	FUZZ_CHECK(g_utf8_validate((const char *)r.p, (gssize)nb, NULL), "names not UTF-8");
	char *joined = g_strndup((const char *)r.p, nb);
	/* (one empty name: g_strsplit() gives none) */
	char **names = nb ? g_strsplit(joined, "\n", -1) : g_strsplit("", "\n", 1);

	if (!names[0]) {
		g_free(names);
		names = g_new0(char *, 2);
		names[0] = g_strdup("");
	}
	g_free(joined);
	FUZZ_CHECK(g_strv_length(names) == nnames, "%u names, %zu said", g_strv_length(names), nnames);
	for (size_t k = 0; k < nb; k++) {
		unsigned char c = r.p[k];

		FUZZ_CHECK(c == '\n' || (c >= 0x20 && c != 0x7f), "control byte %u in the names", c);
	}
	r.p += nb + 3 * nnames;

	fk_count *self = g_new0(fk_count, n + 1), *width = g_new0(fk_count, n + 1);
	fk_count *start = g_new0(fk_count, n + 1), *delta = g_new0(fk_count, n + 1);
	fk_count *total = g_new0(fk_count, n + 1);
	bool *fresh = g_new0(bool, n + 1);
	uint32_t *depth = g_new0(uint32_t, n + 1), *name = g_new0(uint32_t, n + 1);
	int64_t *parent = g_new0(int64_t, n + 1);
	int64_t *open = g_new0(int64_t, fg_depthmax(fg) + 2);
	fk_count *cursor = g_new0(fk_count, fg_depthmax(fg) + 2);
	fk_count unit = 1;
	int64_t prev = -1;

	for (unsigned k = scale; k < 9; k++)
		unit *= 10;
	for (size_t i = 0; i < n; i++) {
		uint64_t h = (uint64_t)uv(&r);
		int64_t d = prev + 1 - (int64_t)(h >> 3);

		FUZZ_CHECK(d >= 0 && d <= (int64_t)fg_depthmax(fg), "frame %zu at depth %" PRId64, i, d);
		FUZZ_CHECK((d == 0) == (i == 0), "frame %zu at depth %" PRId64, i, d);
		depth[i] = (uint32_t)d;
		name[i] = (uint32_t)uv(&r);
		FUZZ_CHECK(name[i] < nnames, "frame %zu: name %u of %zu", i, name[i], nnames);
		parent[i] = d ? open[d - 1] : -1;
		open[d] = (int64_t)i;
		if (h & 1)
			self[i] = sv(&r) * unit;
		if (h & 2)
			start[i] = sv(&r) * unit;	/* the gap, for now */
		if (h & 4) {
			FUZZ_CHECK(r.p < r.end, "the pack ends inside a record");
			unsigned kind = *r.p++;

			FUZZ_CHECK(kind && kind < 8 && fg_differential(fg), "frame %zu: kind %u", i, kind);
			if (kind & 1)
				delta[i] = sv(&r) * unit;
			if (kind & 2)
				total[i] = sv(&r) * unit;
			fresh[i] = kind & 4;
		}
		prev = d;
	}
	FUZZ_CHECK(r.p == r.end, "%zu bytes after the frames", (size_t)(r.end - r.p));
	for (size_t i = n; i-- > 0;) {
		width[i] += self[i];
		if (parent[i] >= 0)
			width[parent[i]] += width[i];
	}
	for (size_t i = 0; i < n; i++) {
		const struct fg_frame *f = fg_frame(fg, i);
		char *want = shown(f->name, f->len);

		start[i] = i ? cursor[depth[i]] + start[i] : 0;
		cursor[depth[i]] = start[i] + width[i];
		cursor[depth[i] + 1] = start[i] + self[i];
		FUZZ_CHECK(depth[i] == f->depth && start[i] == f->start &&
			   start[i] + width[i] == f->end && delta[i] == f->delta,
			   "frame %zu is not the graph's", i);
		FUZZ_CHECK(!fg_differential(fg) ||
			   (fresh[i] == fg_frame_is_new(f) &&
			    total[i] == (fg_diff_mode(fg) == FG_DIFF_TOTAL
					 ? fg_frame_total_change(fg, f) : 0)),
			   "frame %zu: not the graph's change", i);
		FUZZ_CHECK(strcmp(names[name[i]], want) == 0, "frame %zu is named '%s', not '%s'",
			   i, names[name[i]], want);
		g_free(want);
	}
	g_free(self);
	g_free(width);
	g_free(start);
	g_free(delta);
	g_free(total);
	g_free(fresh);
	g_free(depth);
	g_free(name);
	g_free(parent);
	g_free(open);
	g_free(cursor);
	g_strfreev(names);
}

static void quiet(void *ctx, const char *msg, ...)
{
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data + 1, *end = (const char *)data + size;
	struct fg_opts fo = FG_OPTS_INIT;
	struct html_opts ho = HTML_OPTS_INIT;
	struct flamegraph *fg;
	struct folded_reader *fr;
	struct folded_line fl;
	GError *err = NULL;
	char *text, *buf = NULL;
	size_t buflen = 0;
	FILE *out;
	uint8_t opt;

	if (size < 1)
		return 0;
	if (!script_re) {
		script_re = g_regex_new(SCRIPT_RE, G_REGEX_OPTIMIZE, 0, &err);
		FUZZ_CHECK(script_re, "bad pattern: %s", err ? err->message : "");
	}
	opt = data[0];
	{
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		text = g_strndup(p, (size_t)((nl ? nl : end) - p));
		p = nl ? nl + 1 : end;
	}
	ho.title = *text ? text : NULL;
	ho.subtitle = ho.notes = ho.nametype = ho.countname = ho.fonttype = text;
	ho.inverted = opt & 1;
	ho.flamechart = fo.flamechart = opt & 2;
	ho.negate = opt & 4;
	fo.reverse = opt & 8;
	ho.color_mode = opt & 16 ? COLOR_HASH : COLOR_BY_NAME;
	if (opt & 32) {
		ho.factor = FK_COUNT_ONE / 2;
		fo.diff = FG_DIFF_TOTAL;
		fo.normalize = ho.mark_new = true;
	}
	if (opt & 64)
		fo.total = fk_count_from_u64(1000000);
	ho.palette = opt & 128 ? PAL_JAVA : PAL_HOT;
	ho.script = SCRIPT;
	fo.minwidth = 0;	/* as fold2html builds it */

	fg = fg_new(&fo);
	fr = folded_reader_open(fuzz_file(p, (size_t)(end - p)), NULL, &err);
	FUZZ_CHECK(fr, "cannot open the memfd");
	while (folded_reader_next(fr, &fl, &err) > 0)
		fg_add(fg, fl.stack, fl.len, fl.count[0], fl.count[1], fl.ncounts);
	g_clear_error(&err);
	folded_reader_free(fr);

	if (fg_build(fg, &err) == 0) {
		out = open_memstream(&buf, &buflen);
		FUZZ_CHECK(html_write(fg, &ho, out, NULL, &err) == 0, "write failed");
		fclose(out);

		/* the raw bytes: the script element ends where XML ends it */
		const char *open_tag = memmem(buf, buflen, "<script>", 8);
		FUZZ_CHECK(open_tag, "no <script>");
		const char *body = open_tag + 8;
		const char *close = memmem(body, buflen - (size_t)(body - buf), "</script>", 9);
		FUZZ_CHECK(close, "no </script>");
		for (const char *q = body; q < close; q++) {
			FUZZ_CHECK(g_ascii_strncasecmp(q, "</script", 8) != 0 &&
				   g_ascii_strncasecmp(q, "<script", 7) != 0 &&
				   strncmp(q, "<!--", 4) != 0,
				   "markup inside the script at byte %zu", (size_t)(q - buf));
		}
		FUZZ_CHECK(strcmp(close, "</script>\n</body>\n</html>\n") == 0,
			   "something after the script");

		xmlSetGenericErrorFunc(NULL, quiet);
		xmlDoc *doc = xmlReadMemory(buf, (int)buflen, "fuzz.html", NULL,
					    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
		FUZZ_CHECK(doc, "the page is not well-formed XML (%zu bytes)", buflen);
		scripts = 0;
		check_node(xmlDocGetRootElement(doc));
		FUZZ_CHECK(scripts == 1, "%d <script> elements", scripts);
		/* as an XML parser reads it: the CDATA section's markers gone */
		{
			GString *x = g_string_new_len(body, close - body);
			char *o = strstr(x->str, "<![CDATA[");

			FUZZ_CHECK(o, "no CDATA section");
			g_string_erase(x, o - x->str, 9);
			o = g_strrstr(x->str, "]]>");
			FUZZ_CHECK(o, "no end of the CDATA section");
			g_string_erase(x, o - x->str, 3);
			FUZZ_CHECK(strcmp(script_text, x->str) == 0,
				   "the XML parser reads another script");
			g_string_free(x, TRUE);
			g_free(script_text);
			script_text = g_strndup(body, (size_t)(close - body));
		}

		GMatchInfo *mi = NULL;
		GError *rerr = NULL;
		FUZZ_CHECK(g_regex_match_full(script_re, script_text, -1, 0, 0, &mi, &rerr),
			   "the script is not the writer's (%s): %.400s",
			   rerr ? rerr->message : "no match", script_text);
		{
			int s, e;
			size_t len;

			g_match_info_fetch_pos(mi, 1, &s, &e);
			uint8_t *pack = base64_decode(script_text + s, (size_t)(e - s), &len);
			const char *sc = strstr(script_text, "\"scale\": ");

			check_pack(fg, pack, len, (unsigned)(sc[9] - '0'));
			g_free(pack);
		}
		g_match_info_free(mi);
		xmlFreeDoc(doc);
		free(buf);
	}
	g_clear_error(&err);
	fg_free(fg);
	g_free(text);
	return 0;
}
