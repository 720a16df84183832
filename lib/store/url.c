/*
 * url.c - store URLs, checked strictly: every part but the credentials
 * ends up in a request line or a statement, so only what cannot change
 * their meaning is let through.
 */
#include "store/url.h"

#include "core/error.h"
#include "core/textesc.h"

#include <string.h>

static const struct scheme {
	const char *name;
	enum fk_store_kind kind;
	bool tls;
	unsigned port;
} schemes[] = {
	{ "clickhouse", FK_STORE_CLICKHOUSE, false, 8123 },
	{ "clickhouses", FK_STORE_CLICKHOUSE, true, 8443 },
	{ "pyroscope", FK_STORE_PYROSCOPE, false, 4040 },
	{ "pyroscopes", FK_STORE_PYROSCOPE, true, 443 },
};

/* The text for messages: the password (between "USER:" and '@') left out,
 * control characters escaped. */
static char *redacted(const char *text)
{
	const char *sep = strstr(text, "://");
	GString *s = g_string_new(NULL);

	if (sep) {
		const char *auth = sep + 3;
		size_t alen = strcspn(auth, "/?#");
		const char *at = g_strrstr_len(auth, (gssize)alen, "@");
		const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;

		if (colon) {
			fk_text_escape(s, text, (size_t)(colon - text), 0);
			g_string_append(s, ":...");
			fk_text_escape(s, at, strlen(at), 0);
			return g_string_free(s, FALSE);
		}
	}
	fk_text_escape(s, text, strlen(text), 0);
	return g_string_free(s, FALSE);
}

static int fail(GError **err, const char *text, const char *why)
{
	char *shown = redacted(text);

	g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "bad URL '%s': %s", shown, why);
	g_free(shown);
	return -1;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)g_ascii_tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes s[0..n) into a new string, or NULL on a bad escape or a
 * NUL byte. */
static char *decode(const char *s, size_t n)
{
	GString *out = g_string_sized_new(n);

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '%') {
			int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
			int lo = i + 2 < n ? hexval(s[i + 2]) : -1;

			if (hi < 0 || lo < 0) {
				g_string_free(out, TRUE);
				return NULL;
			}
			c = (char)(hi * 16 + lo);
			i += 2;
		}
		if (c == '\0') {
			g_string_free(out, TRUE);
			return NULL;
		}
		g_string_append_c(out, c);
	}
	return g_string_free(out, FALSE);
}

static bool host_name_ok(const char *h, size_t n)
{
	if (n == 0 || n > 253 || h[0] == '-' || h[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isalnum(h[i]) && h[i] != '-' && h[i] != '.')
			return false;
	return true;
}

static bool ipv6_ok(const char *h, size_t n)
{
	if (n < 2 || n > 45)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isxdigit(h[i]) && h[i] != ':' && h[i] != '.')
			return false;
	return memchr(h, ':', n) != NULL;
}

static bool identifier_ok(const char *s, size_t n)
{
	if (n == 0 || n > 64 || g_ascii_isdigit(s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isalnum(s[i]) && s[i] != '_')
			return false;
	return true;
}

static bool path_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isalnum(s[i]) && !strchr("-._~/", s[i]))
			return false;
	/* no "." or ".." segment: the prefix is taken as it is written */
	return !strstr(s, "/./") && !strstr(s, "/../") && !g_str_has_suffix(s, "/.") &&
	       !g_str_has_suffix(s, "/..");
}

/* Sets u->base and u->display from the other fields. */
static void describe(struct fk_store_url *u)
{
	bool v6 = strchr(u->host, ':') != NULL;
	const char *name = "";
	GString *disp;

	for (size_t i = 0; i < G_N_ELEMENTS(schemes); i++)
		if (schemes[i].kind == u->kind && schemes[i].tls == u->tls)
			name = schemes[i].name;
	g_free(u->base);
	g_free(u->display);
	u->base = g_strdup_printf("%s://%s%s%s:%u", u->tls ? "https" : "http", v6 ? "[" : "",
				  u->host, v6 ? "]" : "", u->port);
	disp = g_string_new(name);
	g_string_append(disp, "://");
	if (u->user) {
		/* percent-encoded as in a URL: a user holding '@' or a control
		 * character shows as what it is */
		for (const char *p = u->user; *p; p++) {
			if (g_ascii_isalnum(*p) || strchr("-._~", *p))
				g_string_append_c(disp, *p);
			else
				g_string_append_printf(disp, "%%%02X", (unsigned char)*p);
		}
		g_string_append_c(disp, '@');
	}
	g_string_append_printf(disp, "%s%s%s:%u", v6 ? "[" : "", u->host, v6 ? "]" : "", u->port);
	if (u->database)
		g_string_append_printf(disp, "/%s", u->database);
	else
		g_string_append(disp, u->path);
	u->display = g_string_free(disp, FALSE);
}

int fk_store_url_parse(const char *text, struct fk_store_url *u, GError **err)
{
	const struct scheme *sc = NULL;
	const char *sep = strstr(text, "://"), *auth, *hp, *rest, *at;
	size_t alen;

	memset(u, 0, sizeof(*u));
	for (size_t i = 0; sep && i < G_N_ELEMENTS(schemes); i++)
		if (strlen(schemes[i].name) == (size_t)(sep - text) &&
		    strncmp(text, schemes[i].name, (size_t)(sep - text)) == 0)
			sc = &schemes[i];
	if (!sc)
		return fail(err, text, "not clickhouse://, clickhouses://, pyroscope:// or pyroscopes://");
	u->kind = sc->kind;
	u->tls = sc->tls;
	u->port = sc->port;
	auth = sep + 3;
	alen = strcspn(auth, "/?#");
	rest = auth + alen;
	if (strpbrk(rest, "?#"))
		return fail(err, text, "no query string or fragment is taken");

	at = g_strrstr_len(auth, (gssize)alen, "@");
	hp = auth;
	if (at) {
		const char *colon = memchr(auth, ':', (size_t)(at - auth));
		size_t ulen = colon ? (size_t)(colon - auth) : (size_t)(at - auth);

		u->user = decode(auth, ulen);
		if (colon)
			u->password = decode(colon + 1, (size_t)(at - colon - 1));
		if (!u->user || !*u->user || (colon && !u->password)) {
			fk_store_url_release(u);
			return fail(err, text, "bad user or password (a '%' not followed by two hex digits, or a NUL)");
		}
		for (const char *p = u->user; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f) {
				fk_store_url_release(u);
				return fail(err, text, "a control character in the user name");
			}
		hp = at + 1;
	}

	/* HOST[:PORT] */
	{
		size_t hlen = (size_t)(rest - hp);
		const char *host = hp, *port = NULL;
		size_t nlen;

		if (hlen && hp[0] == '[') {
			const char *close = memchr(hp, ']', hlen);

			if (!close || !ipv6_ok(hp + 1, (size_t)(close - hp - 1))) {
				fk_store_url_release(u);
				return fail(err, text, "bad IPv6 address");
			}
			host = hp + 1;
			nlen = (size_t)(close - hp - 1);
			if (close + 1 < rest) {
				if (close[1] != ':') {
					fk_store_url_release(u);
					return fail(err, text, "junk after the IPv6 address");
				}
				port = close + 2;
			}
		} else {
			const char *colon = memchr(hp, ':', hlen);

			nlen = colon ? (size_t)(colon - hp) : hlen;
			if (colon)
				port = colon + 1;
			if (!host_name_ok(hp, nlen)) {
				fk_store_url_release(u);
				return fail(err, text, nlen ? "bad host name (letters, digits, '-' and '.')"
							    : "no host");
			}
		}
		u->host = g_strndup(host, nlen);
		if (port) {
			unsigned long v = 0;
			const char *p = port;

			for (; p < rest && g_ascii_isdigit(*p) && v <= 65535; p++)
				v = v * 10 + (unsigned long)(*p - '0');
			if (p == port || p != rest || v == 0 || v > 65535) {
				fk_store_url_release(u);
				return fail(err, text, "bad port (1 to 65535)");
			}
			u->port = (unsigned)v;
		}
	}

	/* /DB or /PATH */
	if (u->kind == FK_STORE_CLICKHOUSE) {
		const char *db = *rest == '/' ? rest + 1 : rest;
		size_t dlen = strlen(db);

		if (dlen && db[dlen - 1] == '/')
			dlen--;
		if (dlen == 0) {
			u->database = g_strdup("default");
		} else if (!identifier_ok(db, dlen)) {
			fk_store_url_release(u);
			return fail(err, text, "bad database name (letters, digits and '_', not starting with a digit)");
		} else {
			u->database = g_strndup(db, dlen);
		}
	} else {
		size_t plen = strlen(rest);

		while (plen && rest[plen - 1] == '/')
			plen--;
		if (!path_ok(rest, plen)) {
			fk_store_url_release(u);
			return fail(err, text, "bad path (letters, digits and \"-._~/\")");
		}
		u->path = g_strndup(rest, plen);
	}

	describe(u);
	return 0;
}

void fk_store_url_release(struct fk_store_url *u)
{
	if (u->password)
		memset(u->password, 0, strlen(u->password));
	g_free(u->user);
	g_free(u->password);
	g_free(u->host);
	g_free(u->database);
	g_free(u->path);
	g_free(u->base);
	g_free(u->display);
	g_free(u->ca_file);
	memset(u, 0, sizeof(*u));
}

int fk_store_url_with_host(const struct fk_store_url *u, const char *host,
			   struct fk_store_url *out, GError **err)
{
	size_t n = strlen(host);

	memset(out, 0, sizeof(*out));
	if (!host_name_ok(host, n) && !ipv6_ok(host, n)) {
		char *shown = fk_text_escape_dup(host, n, 0);

		g_set_error(err, FK_ERROR, FK_ERROR_PARSE, "bad host name '%s'", shown);
		g_free(shown);
		return -1;
	}
	*out = *u;
	out->user = g_strdup(u->user);
	out->password = g_strdup(u->password);
	out->host = g_strdup(host);
	out->database = g_strdup(u->database);
	out->path = g_strdup(u->path);
	out->ca_file = g_strdup(u->ca_file);
	out->base = out->display = NULL;
	describe(out);
	return 0;
}

void fk_store_url_copy(const struct fk_store_url *u, struct fk_store_url *out)
{
	fk_store_url_with_host(u, u->host, out, NULL);
}

bool fk_store_url_take_password(struct fk_store_url *u, const char *password)
{
	if (!u->user || u->password || !password)
		return false;
	u->password = g_strdup(password);
	return true;
}
