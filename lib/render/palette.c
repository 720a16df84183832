#include "render/palette.h"

#include "core/error.h"
#include "render/xmlesc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const names[] = {
	[PAL_HOT] = "hot", [PAL_MEM] = "mem", [PAL_IO] = "io",
	[PAL_WAKEUP] = "wakeup", [PAL_CHAIN] = "chain", [PAL_JAVA] = "java",
	[PAL_JS] = "js", [PAL_PERL] = "perl", [PAL_RED] = "red",
	[PAL_GREEN] = "green", [PAL_BLUE] = "blue", [PAL_AQUA] = "aqua",
	[PAL_YELLOW] = "yellow", [PAL_PURPLE] = "purple", [PAL_ORANGE] = "orange",
};

int palette_from_name(const char *name, enum fg_palette *out)
{
	for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
		if (strcmp(name, names[i]) == 0) {
			*out = (enum fg_palette)i;
			return 0;
		}
	return -1;
}

const char *palette_names(void)
{
	return "hot, mem, io, wakeup, chain, java, js, perl, red, green, blue, "
	       "aqua, yellow, purple, orange";
}

/* Up to max code points of s, forwards or backwards, into cp[]. */
static int code_points(const char *s, size_t len, bool reversed,
		       uint32_t *cp, int max)
{
	int n = 0;

	if (!reversed) {
		size_t i = 0;

		while (i < len && n < max)
			cp[n++] = utf8_next(s, len, &i);
		return n;
	}
	/* Reversing a string reverses its characters; decode from the end
	 * by finding each character's start. */
	size_t end = len;
	while (end > 0 && n < max) {
		size_t start = end - 1, i;
		int back = 0;

		while (start > 0 && back < 3 &&
		       ((unsigned char)s[start] & 0xc0) == 0x80) {
			start--;
			back++;
		}
		i = start;
		uint32_t c = utf8_next(s, end, &i);
		if (i != end) {		/* not one well-formed character */
			start = end - 1;
			c = UTF8_REPLACEMENT;
		}
		cp[n++] = c;
		end = start;
	}
	return n;
}

double palette_namehash(const char *name, size_t len, bool reversed)
{
	double vector = 0, weight = 1, max = 1;
	uint32_t cp[3];
	int n, mod = 10;

	/*
	 * flamegraph.pl drops a leading "module`" (anything up to the first
	 * backquote after the first character), so frames of one function
	 * from different modules share a colour.  The reversed name is
	 * reversed first, then trimmed the same way.
	 */
	if (!reversed) {
		const char *bq = len > 1 ? memchr(name + 1, '`', len - 1) : NULL;

		if (bq) {
			len -= (size_t)(bq + 1 - name);
			name = bq + 1;
		}
		n = code_points(name, len, false, cp, 3);
	} else {
		/* in the reversed string, the prefix to drop ends at the
		 * last backquote of the original that has a character after
		 * it; the characters hashed are then the original's last
		 * ones before that backquote, read backwards */
		const char *bq = len > 1 ? memrchr(name, '`', len - 1) : NULL;

		if (bq)
			len = (size_t)(bq - name);
		n = code_points(name, len, true, cp, 3);
	}
	for (int i = 0; i < n; i++) {
		int v = (int)(cp[i] % (uint32_t)mod);

		vector += ((double)v / (mod++ - 1)) * weight;
		max += 1 * weight;
		weight *= 0.70;
	}
	return 1 - vector / max;
}

static double name_random(const char *name, size_t len)
{
	struct rand48 r;
	uint32_t sum = 0;
	size_t i = 0;

	while (i < len)
		sum += utf8_next(name, len, &i);
	rand48_seed(&r, sum);
	return rand48_next(&r);
}

static bool ends_with(const char *s, size_t len, const char *suf)
{
	size_t n = strlen(suf);

	return len >= n && memcmp(s + len - n, suf, n) == 0;
}

static bool contains(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle)) != NULL;
}

/* ^L?(java|javax|jdk|net|org|com|io|sun)/ */
static bool java_package(const char *s, size_t len)
{
	static const char *const pkgs[] = { "java/", "javax/", "jdk/", "net/",
					    "org/", "com/", "io/", "sun/" };

	if (len && s[0] == 'L') {
		s++;
		len--;
	}
	for (size_t i = 0; i < G_N_ELEMENTS(pkgs); i++) {
		size_t n = strlen(pkgs[i]);

		if (len >= n && memcmp(s, pkgs[i], n) == 0)
			return true;
	}
	return false;
}

/* /.*\.js/ after a '/': a path to a JavaScript file */
static bool js_path(const char *s, size_t len)
{
	const char *slash = memchr(s, '/', len);

	return slash && contains(slash, len - (size_t)(slash - s), ".js");
}

static enum fg_palette base_hue(enum fg_palette p, const char *s, size_t len)
{
	switch (p) {
	case PAL_JAVA:
		if (ends_with(s, len, "_[j]"))
			return PAL_GREEN;
		if (ends_with(s, len, "_[i]"))
			return PAL_AQUA;
		if (java_package(s, len))
			return PAL_GREEN;
		if (ends_with(s, len, "_[k]"))
			return PAL_ORANGE;
		if (contains(s, len, "::"))
			return PAL_YELLOW;
		return PAL_RED;
	case PAL_PERL:
		if (contains(s, len, "::"))
			return PAL_YELLOW;
		if (contains(s, len, "Perl") || contains(s, len, ".pl"))
			return PAL_GREEN;
		if (ends_with(s, len, "_[k]"))
			return PAL_ORANGE;
		return PAL_RED;
	case PAL_JS:
		if (ends_with(s, len, "_[j]"))
			return memchr(s, '/', len) ? PAL_GREEN : PAL_AQUA;
		if (contains(s, len, "::"))
			return PAL_YELLOW;
		if (js_path(s, len))
			return PAL_GREEN;
		if (memchr(s, ':', len))
			return PAL_AQUA;
		if (len == 1 && s[0] == ' ')
			return PAL_GREEN;
		if (contains(s, len, "_[k]"))
			return PAL_ORANGE;
		return PAL_RED;
	case PAL_WAKEUP:
		return PAL_AQUA;
	case PAL_CHAIN:
		return contains(s, len, "_[w]") ? PAL_AQUA : PAL_BLUE;
	default:
		return p;
	}
}

static struct rgb mk(int r, int g, int b)
{
	return (struct rgb){ (uint8_t)r, (uint8_t)g, (uint8_t)b };
}

struct rgb palette_color(enum fg_palette p, enum fg_color_mode mode,
			 const char *name, size_t len, struct rand48 *rng)
{
	double v1, v2, v3;

	switch (mode) {
	case COLOR_HASH:
		v1 = palette_namehash(name, len, false);
		v2 = v3 = palette_namehash(name, len, true);
		break;
	case COLOR_RANDOM:
		v1 = rand48_next(rng);
		v2 = rand48_next(rng);
		v3 = rand48_next(rng);
		break;
	default:
		v1 = v2 = v3 = name_random(name, len);
		break;
	}

	switch (base_hue(p, name, len)) {
	case PAL_HOT:
		return mk(205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2));
	case PAL_MEM:
		return mk(0, 190 + (int)(50 * v2), (int)(210 * v1));
	case PAL_IO: {
		int r = 80 + (int)(60 * v1);
		return mk(r, r, 190 + (int)(55 * v2));
	}
	case PAL_RED: {
		int x = 50 + (int)(80 * v1);
		return mk(200 + (int)(55 * v1), x, x);
	}
	case PAL_GREEN: {
		int x = 50 + (int)(60 * v1);
		return mk(x, 200 + (int)(55 * v1), x);
	}
	case PAL_BLUE: {
		int x = 80 + (int)(60 * v1);
		return mk(x, x, 205 + (int)(50 * v1));
	}
	case PAL_YELLOW: {
		int x = 175 + (int)(55 * v1);
		return mk(x, x, 50 + (int)(20 * v1));
	}
	case PAL_PURPLE: {
		int x = 190 + (int)(65 * v1);
		return mk(x, 80 + (int)(60 * v1), x);
	}
	case PAL_AQUA:
		return mk(50 + (int)(60 * v1), 165 + (int)(55 * v1),
			  165 + (int)(55 * v1));
	case PAL_ORANGE:
		return mk(190 + (int)(65 * v1), 90 + (int)(65 * v1), 0);
	default:
		return mk(0, 0, 0);
	}
}

struct rgb palette_delta(double delta, double maxdelta, bool negate)
{
	int r = 255, g = 255, b = 255;

	if (negate)
		delta = -delta;
	if (delta > 0)
		g = b = (int)(210 * (maxdelta - delta) / maxdelta);
	else if (delta < 0)
		r = g = (int)(210 * (maxdelta + delta) / maxdelta);
	return mk(r, g, b);
}

struct rgb palette_delta_new(void)
{
	return mk(190, 130, 240);
}

int palette_background(const char *spec, enum fg_palette p, char bg1[8],
		       char bg2[8])
{
	static const struct { const char *name, *c1, *c2; } bgs[] = {
		{ "yellow", "#eeeeee", "#eeeeb0" },
		{ "blue", "#eeeeee", "#e0e0ff" },
		{ "green", "#eef2ee", "#e0ffe0" },
		{ "grey", "#f8f8f8", "#e8e8e8" },
	};

	if (!spec) {
		switch (p) {
		case PAL_MEM: spec = "green"; break;
		case PAL_IO: case PAL_WAKEUP: case PAL_CHAIN: spec = "blue"; break;
		case PAL_RED: case PAL_GREEN: case PAL_BLUE: case PAL_AQUA:
		case PAL_YELLOW: case PAL_PURPLE: case PAL_ORANGE:
			spec = "grey"; break;
		default: spec = "yellow"; break;
		}
	}
	for (size_t i = 0; i < G_N_ELEMENTS(bgs); i++)
		if (strcmp(spec, bgs[i].name) == 0) {
			memcpy(bg1, bgs[i].c1, 8);
			memcpy(bg2, bgs[i].c2, 8);
			return 0;
		}
	if (strlen(spec) == 7 && spec[0] == '#') {
		for (int i = 1; i < 7; i++)
			if (!g_ascii_isxdigit(spec[i]))
				return -1;
		memcpy(bg1, spec, 8);
		memcpy(bg2, spec, 8);
		return 0;
	}
	return -1;
}

struct palette_map {
	GHashTable *h;		/* name (owned) -> struct rgb packed in a pointer */
};

static gpointer pack(struct rgb c)
{
	return GUINT_TO_POINTER(1u << 24 | (unsigned)c.r << 16 | (unsigned)c.g << 8 | c.b);
}

static struct rgb unpack(gpointer p)
{
	unsigned v = GPOINTER_TO_UINT(p);

	return mk(v >> 16 & 255, v >> 8 & 255, v & 255);
}

static bool parse_rgb(const char *s, struct rgb *out)
{
	unsigned r, g, b;
	int n = -1;

	if (sscanf(s, "rgb(%3u,%3u,%3u)%n", &r, &g, &b, &n) != 3 || n < 0 ||
	    s[n] || r > 255 || g > 255 || b > 255)
		return false;
	*out = mk((int)r, (int)g, (int)b);
	return true;
}

struct palette_map *palette_map_load(const char *path, GError **err)
{
	struct palette_map *m = g_new0(struct palette_map, 1);
	char *text = NULL, **lines;
	gsize len;
	GError *e = NULL;

	m->h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	if (!g_file_get_contents(path, &text, &len, &e)) {
		if (g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
			g_error_free(e);
			return m;
		}
		fk_error_at(err, FK_ERROR_IO, path, 0, "%s", e->message);
		g_error_free(e);
		palette_map_free(m);
		return NULL;
	}
	lines = g_strsplit(text, "\n", -1);
	for (size_t i = 0; lines[i]; i++) {
		char *arrow;
		struct rgb c;

		if (!lines[i][0] && !lines[i + 1])
			break;
		arrow = g_strrstr(lines[i], "->");
		if (!arrow || !parse_rgb(arrow + 2, &c)) {
			fk_error_at(err, FK_ERROR_PARSE, path, i + 1,
				    "expected \"NAME->rgb(R,G,B)\"");
			g_strfreev(lines);
			g_free(text);
			palette_map_free(m);
			return NULL;
		}
		g_hash_table_insert(m->h, g_strndup(lines[i], (gsize)(arrow - lines[i])),
				    pack(c));
	}
	g_strfreev(lines);
	g_free(text);
	return m;
}

struct rgb palette_map_get(struct palette_map *m, const char *name, size_t len,
			   struct rgb (*compute)(const char *, size_t, void *),
			   void *data)
{
	char *key = g_strndup(name, len);
	gpointer v = g_hash_table_lookup(m->h, key);
	struct rgb c;

	if (v) {
		g_free(key);
		return unpack(v);
	}
	c = compute(name, len, data);
	g_hash_table_insert(m->h, key, pack(c));
	return c;
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int palette_map_save(const struct palette_map *m, const char *path,
		     GError **err)
{
	guint n;
	gpointer *keys = g_hash_table_get_keys_as_array(m->h, &n);
	GString *s = g_string_new(NULL);
	GError *e = NULL;
	int rc = 0;

	qsort(keys, n, sizeof(*keys), cmp_str);
	for (guint i = 0; i < n; i++) {
		struct rgb c = unpack(g_hash_table_lookup(m->h, keys[i]));

		g_string_append_printf(s, "%s->rgb(%u,%u,%u)\n", (char *)keys[i],
				       c.r, c.g, c.b);
	}
	if (!g_file_set_contents(path, s->str, (gssize)s->len, &e)) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "%s", e->message);
		g_error_free(e);
		rc = -1;
	}
	g_free(keys);
	g_string_free(s, TRUE);
	return rc;
}

void palette_map_free(struct palette_map *m)
{
	if (!m)
		return;
	g_hash_table_destroy(m->h);
	g_free(m);
}
