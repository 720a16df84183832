/*
 * fuzz/storeurl.c - what fold-push and fold-query parse from their command
 * line: store URLs (lib/store/url.h), labels (store/labels.h) and times
 * (store/timearg.h).
 *
 * Input: text (up to the first NUL).  As a URL it is refused with a
 * message that never holds its password, or parsed into parts that cannot
 * change a request: a host of letters, digits, '-', '.' (or ':' in an
 * IPv6 address), a database identifier, a path of "-._~/" and letters;
 * base is exactly SCHEME://HOST:PORT; the display URL holds no password
 * and no byte outside printable ASCII, and parsing it again (with the
 * password put back, percent-encoded) gives the same parts.  As a label it is a key that fk_label_key_ok()
 * takes and a value no longer than the limit; as a time, a value from
 * 1970 to 2106.
 */
#include "fuzz.h"

#include "store/labels.h"
#include "store/timearg.h"
#include "store/url.h"

#include <glib.h>

static void check_chars(const char *s, const char *extra, const char *what)
{
	for (; *s; s++)
		FUZZ_CHECK(g_ascii_isalnum(*s) || strchr(extra, *s), "%s holds 0x%02x", what,
			   (unsigned char)*s);
}

static void check_url(const char *text)
{
	struct fk_store_url u, again;
	GError *err = NULL;
	GString *re;
	char *base;
	bool v6;

	if (fk_store_url_parse(text, &u, &err) < 0) {
		FUZZ_CHECK(err && strstr(err->message, "bad URL"), "no message for a bad URL");
		g_error_free(err);
		return;
	}
	FUZZ_CHECK(*u.host, "an empty host");
	v6 = strchr(u.host, ':') != NULL;
	check_chars(u.host, v6 ? ":." : "-.", "the host");
	FUZZ_CHECK(u.port >= 1 && u.port <= 65535, "port %u", u.port);
	FUZZ_CHECK((u.kind == FK_STORE_CLICKHOUSE) == (u.database != NULL) &&
		   (u.kind == FK_STORE_PYROSCOPE) == (u.path != NULL), "database and path");
	if (u.database) {
		check_chars(u.database, "_", "the database");
		FUZZ_CHECK(*u.database && !g_ascii_isdigit(*u.database), "database '%s'", u.database);
	}
	if (u.path)
		check_chars(u.path, "-._~/", "the path");
	base = g_strdup_printf("%s://%s%s%s:%u", u.tls ? "https" : "http", v6 ? "[" : "", u.host,
			       v6 ? "]" : "", u.port);
	FUZZ_CHECK(strcmp(base, u.base) == 0, "base %s, not %s", u.base, base);
	g_free(base);
	if (u.user) {
		/* user@ only: no ':' (a password) before the '@' */
		const char *auth = strstr(u.display, "://") + 3, *at = strrchr(auth, '@');

		FUZZ_CHECK(at && !memchr(auth, ':', (size_t)(at - auth)), "a password in %s", u.display);
	}
	for (const char *p = u.display; *p; p++)
		FUZZ_CHECK(*p > 0x20 && *p < 0x7f, "byte 0x%02x in the display URL", (unsigned char)*p);

	/* the display URL, with the password put back, parses the same */
	re = g_string_new(NULL);
	{
		const char *sep = strstr(u.display, "://"), *at = u.user ? strrchr(sep, '@') : NULL;

		FUZZ_CHECK(sep, "no scheme in %s", u.display);
		g_string_append_len(re, u.display, sep + 3 - u.display);
		if (u.user) {
			for (const char *p = u.user; *p; p++)
				g_string_append_printf(re, "%%%02x", (unsigned char)*p);
			if (u.password) {
				g_string_append_c(re, ':');
				for (const char *p = u.password; *p; p++)
					g_string_append_printf(re, "%%%02x", (unsigned char)*p);
			}
			FUZZ_CHECK(at, "no '@' in %s", u.display);
			g_string_append(re, at);
		} else {
			g_string_append(re, sep + 3);
		}
	}
	FUZZ_CHECK(fk_store_url_parse(re->str, &again, &err) == 0, "%s does not parse again", re->str);
	FUZZ_CHECK(strcmp(again.host, u.host) == 0 && again.port == u.port &&
		   again.tls == u.tls && again.kind == u.kind &&
		   g_strcmp0(again.user, u.user) == 0 && g_strcmp0(again.password, u.password) == 0 &&
		   g_strcmp0(again.database, u.database) == 0 && g_strcmp0(again.path, u.path) == 0 &&
		   strcmp(again.display, u.display) == 0, "%s parses to other parts", re->str);
	fk_store_url_release(&again);
	g_string_free(re, TRUE);
	fk_store_url_release(&u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = g_strndup((const char *)data, size);
	GError *err = NULL;
	char *k, *v;
	int64_t t;

	check_url(text);
	if (fk_label_parse(text, &k, &v, &err) == 0) {
		FUZZ_CHECK(fk_label_key_ok(k) && strlen(v) <= FK_LABEL_VALUE_MAX, "label %s", k);
		g_free(k);
		g_free(v);
	} else {
		FUZZ_CHECK(err && !k && !v, "a refused label without a message");
		g_clear_error(&err);
	}
	if (fk_time_parse(text, 1733400000, &t, &err) == 0)
		FUZZ_CHECK(t >= 0 && t <= FK_TIME_MAX, "time %lld", (long long)t);
	else
		g_clear_error(&err);
	g_free(text);
	return 0;
}
