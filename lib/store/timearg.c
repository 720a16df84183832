/*
 * timearg.c - times for --from and --until: numbers, ISO 8601 through
 * GLib's parser (a missing zone is UTC), and offsets from now.
 */
#include "store/timearg.h"

#include "core/error.h"
#include "core/textesc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int bad(GError **err, const char *s, const char *why)
{
	char *shown = fk_text_escape_dup(s, strlen(s), 0);

	g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "bad time '%s': %s", shown, why);
	g_free(shown);
	return -1;
}

static int in_range(GError **err, const char *s, int64_t t, int64_t *out)
{
	if (t < 0 || t > FK_TIME_MAX)
		return bad(err, s, "outside 1970-01-01 to 2106-02-07");
	*out = t;
	return 0;
}

int fk_time_parse(const char *s, int64_t now, int64_t *out, GError **err)
{
	size_t n = strlen(s);

	if (n == 0)
		return bad(err, s, "empty");
	if (strspn(s, "0123456789") == n) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(s, &end, 10);
		if (errno)
			return bad(err, s, "out of range");
		return in_range(err, s, v, out);
	}
	if (strncmp(s, "now", 3) == 0) {
		const char *p = s + 3;
		long long v, mult;
		char *end;

		if (!*p)
			return in_range(err, s, now, out);
		if (*p != '-' || !g_ascii_isdigit(p[1]))
			return bad(err, s, "expected now or now-N followed by s, m, h or d");
		errno = 0;
		v = strtoll(p + 1, &end, 10);
		switch (*end) {
		case 's': mult = 1; break;
		case 'm': mult = 60; break;
		case 'h': mult = 3600; break;
		case 'd': mult = 86400; break;
		default: mult = 0; break;
		}
		if (errno || !mult || end[1] || v > (long long)FK_TIME_MAX)
			return bad(err, s, "expected now or now-N followed by s, m, h or d");
		return in_range(err, s, now - v * mult, out);
	}
	{
		GTimeZone *utc = g_time_zone_new_utc();
		char *text = n == 10 ? g_strconcat(s, "T00:00:00", NULL) : g_strdup(s);
		GDateTime *dt = g_ascii_isdigit(s[0]) ? g_date_time_new_from_iso8601(text, utc) : NULL;
		int rc;

		g_free(text);
		g_time_zone_unref(utc);
		if (!dt)
			return bad(err, s, "not seconds since 1970, YYYY-MM-DD[THH:MM:SS[Z|+HH:MM]] or now-N[smhd]");
		rc = in_range(err, s, g_date_time_to_unix(dt), out);
		g_date_time_unref(dt);
		return rc;
	}
}

char *fk_time_format(int64_t t)
{
	GDateTime *dt = g_date_time_new_from_unix_utc(t);
	char *s = dt ? g_date_time_format(dt, "%Y-%m-%dT%H:%M:%SZ") : g_strdup("?");

	if (dt)
		g_date_time_unref(dt);
	return s;
}
