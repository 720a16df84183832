/*
 * fuzz/svg.c - folded stacks and option text through fold2svg's flame
 * graph model and SVG writer; the document must be well-formed XML that
 * the input cannot add markup or script to.
 *
 * Input: one option byte, then a first line used as the title, subtitle,
 * notes, name type and count name, then a name-attribute file up to a line
 * "%%", then folded text.  Bits: 1 inverted, 2 flamechart, 4 negate,
 * 8 reverse, 16 hashed colours, 32 an ISO-8859-1 encoding (all-ASCII
 * output), 64 minwidth 0 (draw every frame), 128 the java palette (else
 * hot).
 *
 * Checked with libxml2 (strict, no network): the output parses; every
 * element is one the writer draws; there is exactly one <script>, the
 * writer's own; no attribute is an event handler (on...); every link is
 * relative or http(s).  Without flamechart, the same lines added by
 * reference (sorted references) and in bytewise order of their stacks
 * (merged as they come, no sort) draw the same frames as copied in input
 * order (the table): both sorts stop at groups too narrow to draw.
 */
#include "fuzz.h"

#include "render/flamegraph.h"
#include "core/folded.h"
#include "render/svgwriter.h"

#include <libxml/parser.h>
#include <libxml/tree.h>

static const char SCRIPT[] = "var fuzz_script_marker = 1;";

struct line {
	char *stack;
	size_t len;
	fk_count c0, c1;
	int ncounts;
};

static int by_stack(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	int c = memcmp(x->stack, y->stack, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Builds g and checks it draws what fg draws. */
static void same_graph(struct flamegraph *g, const struct flamegraph *fg,
		       const char *what)
{
	GError *err = NULL;

	FUZZ_CHECK(fg_build(g, &err) == 0, "%s: no graph", what);
	FUZZ_CHECK(fg_nframes(g) == fg_nframes(fg), "%s: %zu frames, not %zu",
		   what, fg_nframes(g), fg_nframes(fg));
	FUZZ_CHECK(fg_maxdelta(g) == fg_maxdelta(fg) &&
		   fg_depthmax(g) == fg_depthmax(fg) &&
		   fg_cut_stacks(g) == fg_cut_stacks(fg), "%s: another scale", what);
	for (size_t i = 0; i < fg_nframes(g); i++) {
		const struct fg_frame *x = fg_frame(g, i), *y = fg_frame(fg, i);

		FUZZ_CHECK(x->len == y->len && memcmp(x->name, y->name, x->len) == 0 &&
			   x->depth == y->depth && x->start == y->start &&
			   x->end == y->end && x->delta == y->delta,
			   "%s: frame %zu differs", what, i);
	}
	g_clear_error(&err);
}

/*
 * The lines again, by reference in input order (as from a mapped file:
 * sorted references) and copied in bytewise order of their stacks (merged
 * as they come): the same frames as fg, from the table.
 */
static void check_paths(const struct fg_opts *fo, GArray *lines,
			const struct flamegraph *fg)
{
	struct flamegraph *ref = fg_new(fo), *sorted = fg_new(fo);

	for (guint i = 0; i < lines->len; i++) {
		struct line *l = &g_array_index(lines, struct line, i);

		fg_add_ref(ref, l->stack, l->len, l->c0, l->c1, l->ncounts);
	}
	same_graph(ref, fg, "by reference");
	qsort(lines->data, lines->len, sizeof(struct line), by_stack);
	for (guint i = 0; i < lines->len; i++) {
		struct line *l = &g_array_index(lines, struct line, i);

		fg_add(sorted, l->stack, l->len, l->c0, l->c1, l->ncounts);
	}
	same_graph(sorted, fg, "sorted");
	fg_free(ref);	/* before the lines it points into */
	fg_free(sorted);
}

static void line_clear(void *p)
{
	g_free(((struct line *)p)->stack);
}

static const char *const ELEMENTS[] = {
	"svg", "defs", "linearGradient", "stop", "style", "script", "rect",
	"text", "g", "title", "a",
};

static int scripts;

/*
 * The script element holds the writer's configuration, whose only input
 * text is the name and count types as JSON strings, then the script given:
 * nothing from the input may end a string or add code.
 */
/* possessive: a long string must not exhaust PCRE's backtracking limit */
#define JS_STR "\"(?:[^\"\\\\\\x00-\\x1f<>&\\x{2028}\\x{2029}]++|\\\\(?:[\"\\\\/bfnrt]|u[0-9a-fA-F]{4}))*+\""
#define NUM "[-+0-9.e]+"
static const char SCRIPT_RE[] =
	"\\A\nvar fg_config = \\{\"nametype\": " JS_STR ", \"countname\": " JS_STR
	", \"fontsize\": " NUM ", \"fontwidth\": " NUM ", \"frameheight\": " NUM
	", \"width\": " NUM ", \"xpad\": 10, \"inverted\": (?:true|false), "
	"\"total\": \"[-0-9,.]*\"\\};\nvar fuzz_script_marker = 1;\n\\z";
static GRegex *script_re;

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
			GError *rerr = NULL;
			FUZZ_CHECK(text && g_regex_match_full(script_re, (const char *)text, -1,
							      0, 0, NULL, &rerr),
				   "the script is not the writer's (%s): %.400s",
				   rerr ? rerr->message : "no match", text ? (char *)text : "");
			xmlFree(text);
		}
		for (xmlAttr *a = n->properties; a; a = a->next) {
			const char *name = (const char *)a->name;
			FUZZ_CHECK(g_ascii_strncasecmp(name, "on", 2) != 0,
				   "event handler attribute %s", name);
			if (strcmp(name, "href") == 0) {
				xmlChar *v = xmlNodeListGetString(n->doc, a->children, 1);
				const char *s = v ? (const char *)v : "";
				size_t k = strcspn(s, ":/?#");
				FUZZ_CHECK(s[k] != ':' ||
					   (k == 4 && g_ascii_strncasecmp(s, "http", 4) == 0) ||
					   (k == 5 && g_ascii_strncasecmp(s, "https", 5) == 0),
					   "link '%s'", s);
				xmlFree(v);
			}
		}
		check_node(n->children);
	}
}

/* Splits off the text up to the next '\n' (or "\n%%\n"). */
static const char *cut(const char **p, const char *end, const char *sep, size_t *len)
{
	const char *s = *p, *e = memmem(s, (size_t)(end - s), sep, strlen(sep));

	if (!e)
		e = end;
	*len = (size_t)(e - s);
	*p = e < end ? e + strlen(sep) : end;
	return s;
}

static void quiet(void *ctx, const char *msg, ...)
{
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data + 1, *end = (const char *)data + size;
	const char *line, *attrs;
	size_t line_len, attrs_len;
	struct fg_opts fo = FG_OPTS_INIT;
	struct svg_opts so = SVG_OPTS_INIT;
	struct fg_nameattr *na;
	struct flamegraph *fg;
	struct folded_reader *fr;
	struct folded_line fl;
	GError *err = NULL;
	char *text, *buf = NULL;
	size_t buflen = 0;
	uint64_t ignored = 0;
	FILE *out;
	xmlDoc *doc;
	uint8_t opt;
	GArray *lines;

	if (size < 1)
		return 0;
	if (!script_re) {
		script_re = g_regex_new(SCRIPT_RE, G_REGEX_OPTIMIZE, 0, &err);
		FUZZ_CHECK(script_re, "bad pattern: %s", err ? err->message : "");
	}
	opt = data[0];
	line = cut(&p, end, "\n", &line_len);
	attrs = cut(&p, end, "\n%%\n", &attrs_len);
	text = g_strndup(line, line_len);	/* options are C strings */

	so.title = *text ? text : NULL;
	so.subtitle = so.notes = so.nametype = so.countname = text;
	so.inverted = opt & 1;
	so.flamechart = fo.flamechart = opt & 2;
	so.negate = opt & 4;
	fo.reverse = opt & 8;
	so.color_mode = opt & 16 ? COLOR_HASH : COLOR_BY_NAME;
	so.encoding = opt & 32 ? "ISO-8859-1" : NULL;
	fo.minwidth = so.minwidth = opt & 64 ? 0 : 0.1;
	so.palette = opt & 128 ? PAL_JAVA : PAL_HOT;
	so.script = SCRIPT;

	na = fg_nameattr_load(fuzz_file2(attrs, attrs_len), &ignored, &err);
	g_clear_error(&err);
	so.nameattr = na;

	fg = fg_new(&fo);
	lines = g_array_new(FALSE, FALSE, sizeof(struct line));
	g_array_set_clear_func(lines, line_clear);
	fr = folded_reader_open(fuzz_file(p, (size_t)(end - p)), NULL, &err);
	FUZZ_CHECK(fr, "cannot open the memfd");
	while (folded_reader_next(fr, &fl, &err) > 0) {
		struct line l = { g_memdup2(fl.stack, fl.len), fl.len,
				  fl.count[0], fl.count[1], fl.ncounts };

		g_array_append_val(lines, l);
		fg_add(fg, fl.stack, fl.len,
		       fl.count[0], fl.count[1], fl.ncounts);
	}
	g_clear_error(&err);
	folded_reader_free(fr);

	if (fg_build(fg, &err) == 0) {
		if (!fo.flamechart)
			check_paths(&fo, lines, fg);
		out = open_memstream(&buf, &buflen);
		FUZZ_CHECK(svg_write(fg, &so, out, &err) == 0, "write failed");
		fclose(out);
		if (so.encoding)
			for (size_t i = 0; i < buflen; i++)
				FUZZ_CHECK((unsigned char)buf[i] < 128,
					   "byte %zu not ASCII with an encoding", i);
		xmlSetGenericErrorFunc(NULL, quiet);
		doc = xmlReadMemory(buf, (int)buflen, "fuzz.svg", NULL,
				    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
		FUZZ_CHECK(doc, "the SVG is not well-formed XML (%zu bytes)", buflen);
		scripts = 0;
		check_node(xmlDocGetRootElement(doc));
		FUZZ_CHECK(scripts == 1, "%d <script> elements", scripts);
		xmlFreeDoc(doc);
		free(buf);
	}
	g_clear_error(&err);
	g_array_free(lines, TRUE);
	fg_free(fg);
	fg_nameattr_free(na);
	g_free(text);
	return 0;
}
