/*
 * pyroscope.c - Pyroscope's legacy ingest request, byte for byte the same
 * for the same profile (labels in key order, stacks sorted).
 */
#include "store/pyroscope.h"

#include "core/error.h"
#include "core/textesc.h"

#include <string.h>

static void name_part(GString *out, const char *s)
{
	for (; *s; s++)
		g_string_append_c(out, g_ascii_isalnum(*s) || strchr("_.-/", *s) ? *s : '_');
}

static void value_part(GString *out, const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		bool edge = (i == 0 || i == n - 1) && c == ' ';

		g_string_append_c(out, c < 0x20 || c == 0x7f || strchr(",{}=", c) || edge ? '_' : (char)c);
	}
}

static const char *kind_suffix(const char *profile)
{
	if (strcmp(profile, "on-cpu") == 0)
		return "cpu";
	if (strcmp(profile, "off-cpu") == 0)
		return "off_cpu";
	if (strcmp(profile, "off-wake") == 0)
		return "off_wake";
	return profile;
}

char *fk_pyroscope_path(const struct fk_store_url *u, const struct fk_labels *l, int64_t from,
			int64_t until, GError **err)
{
	const char *app = fk_labels_get(l, "service"), *unit = fk_labels_get(l, "unit");
	const char *kind = fk_labels_get(l, "profile");
	GString *name = g_string_new(NULL), *path;
	bool first = true;

	if (!*app)
		app = fk_labels_get(l, "process");
	if (!*app) {
		g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "Pyroscope needs an application name: give --label service=NAME");
		g_string_free(name, TRUE);
		return NULL;
	}
	name_part(name, app);
	if (*kind) {
		g_string_append_c(name, '.');
		name_part(name, kind_suffix(kind));
	}
	g_string_append_c(name, '{');
	for (size_t i = 0; i < fk_labels_size(l); i++) {
		const char *k = fk_labels_key(l, i), *v = fk_labels_value(l, i);

		if (!*v || strcmp(k, "service") == 0 || strcmp(k, "profile") == 0 ||
		    strcmp(k, "unit") == 0)
			continue;
		if (!first)
			g_string_append_c(name, ',');
		first = false;
		g_string_append_printf(name, "%s=", k);
		value_part(name, v);
	}
	g_string_append_c(name, '}');

	path = g_string_new(u->path);
	g_string_append(path, "/ingest?name=");
	fk_http_escape(path, name->str, name->len);
	g_string_append_printf(path, "&from=%" G_GINT64_FORMAT "&until=%" G_GINT64_FORMAT
			       "&format=folded", from, until);
	if (strcmp(unit, "ns") == 0)
		g_string_append(path, "&units=samples&sampleRate=1000000000");
	else if (strcmp(unit, "us") == 0 || strcmp(unit, "µs") == 0)
		g_string_append(path, "&units=samples&sampleRate=1000000");
	else if (strcmp(unit, "ms") == 0)
		g_string_append(path, "&units=samples&sampleRate=1000");
	else if (strcmp(unit, "s") == 0)
		g_string_append(path, "&units=samples&sampleRate=1");
	else if (strcmp(unit, "bytes") == 0)
		g_string_append(path, "&units=bytes&aggregationType=sum");
	else
		g_string_append(path, "&units=objects&aggregationType=sum");
	g_string_append(path, "&spyName=foldkit");
	g_string_free(name, TRUE);
	return g_string_free(path, FALSE);
}

int fk_pyroscope_body(const struct fk_profile *p, GString *body, GError **err)
{
	const fk_count max = fk_count_from_u64(INT64_MAX);

	for (size_t i = 0; i < p->n; i++) {
		const struct fold_entry *e = p->entries[i];
		char num[FK_COUNT_BUFSZ];
		size_t nlen = fk_count_format(e->count[0], num);

		if (!fk_count_is_integer(e->count[0]) || e->count[0] > max) {
			char *shown = fk_text_escape_dup(e->stack, MIN(e->len, 200), 0);

			fk_error_at(err, FK_ERROR_RANGE, p->path, 0,
				    "the stack '%s%s' has the count %.*s: Pyroscope takes whole counts "
				    "below 2^63 only; nothing sent", shown, e->len > 200 ? "..." : "",
				    (int)nlen, num);
			g_free(shown);
			return -1;
		}
		if (e->len + 1 + nlen > FK_PYROSCOPE_LINE_MAX) {
			fk_error_at(err, FK_ERROR_RANGE, p->path, 0,
				    "a stack of %zu bytes: Pyroscope reads lines of %d bytes at most; "
				    "nothing sent", e->len, FK_PYROSCOPE_LINE_MAX);
			return -1;
		}
		g_string_append_len(body, e->stack, (gssize)e->len);
		g_string_append_c(body, ' ');
		g_string_append_len(body, num, (gssize)nlen);
		g_string_append_c(body, '\n');
	}
	return 0;
}

int fk_pyroscope_push(struct fk_http *h, const struct fk_store_url *u, const struct fk_profile *p,
		      const struct fk_labels *l, int64_t from, int64_t until, GError **err)
{
	char *path = fk_pyroscope_path(u, l, from, until, err);
	GString *body;
	struct fk_http_reply rep;
	int rc = -1;

	if (!path)
		return -1;
	body = g_string_new(NULL);
	if (fk_pyroscope_body(p, body, err) == 0) {
		struct fk_http_request rq = { .path = path, .ctype = "text/plain",
					      .body = body->str, .len = body->len };

		if (fk_http_send(h, &rq, &rep, err) == 0) {
			if (rep.status == 200) {
				rc = 0;
			} else {
				GString *s = g_string_new(NULL);
				size_t n = rep.body ? MIN(rep.body->len, 300) : 0;

				while (n && g_ascii_isspace(rep.body->str[n - 1]))
					n--;
				if (n)
					fk_text_escape(s, rep.body->str, n, 0);
				g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s: %s HTTP status %ld%s%s",
					    u->display, rep.status == 401 || rep.status == 403
					    ? "authentication refused:" : "the profile was refused:",
					    rep.status, s->len ? ": " : "", s->str);
				g_string_free(s, TRUE);
			}
			fk_http_reply_release(&rep);
		}
	}
	g_string_free(body, TRUE);
	g_free(path);
	return rc;
}
