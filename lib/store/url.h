/*
 * url.h - where fold-push and fold-query find a profile store:
 *
 *	clickhouse://[USER[:PASSWORD]@]HOST[:PORT][/DB]    ClickHouse over HTTP
 *	clickhouses://...                                  the same over HTTPS
 *	pyroscope://[USER[:PASSWORD]@]HOST[:PORT][/PATH]    Grafana Pyroscope
 *	pyroscopes://...                                   the same over HTTPS
 *
 *	struct fk_store_url u;
 *	if (fk_store_url_parse("clickhouse://fk:pw@db1:8123/prof", &u, &err) < 0)
 *		...err names the URL (without its password)...
 *	// u.base "http://db1:8123", u.database "prof", u.display
 *	// "clickhouse://fk@db1:8123/prof" (what messages print)
 *	fk_store_url_release(&u);
 *
 * The ports default to ClickHouse's (8123, 8443 for HTTPS) and
 * Pyroscope's (4040, 443); DB to "default".  USER and PASSWORD may be
 * percent-encoded ("p%40ss" is "p@ss"); they go to libcurl apart from the
 * URL, never into it.  Everything else is checked strictly, so that no
 * part of the text can reach a request line or an SQL statement other than
 * where it belongs: HOST is a name of letters, digits, '-' and '.', an
 * IPv4 address or a bracketed IPv6 one; DB a ClickHouse identifier
 * ([A-Za-z_][A-Za-z0-9_]*, 64 bytes at most); a Pyroscope PATH (a prefix
 * the server is mounted under, behind a proxy) letters, digits and
 * "-._~/"; no query string or fragment.
 */
#ifndef FOLDKIT_STORE_URL_H
#define FOLDKIT_STORE_URL_H

#include <glib.h>
#include <stdbool.h>

enum fk_store_kind {
	FK_STORE_CLICKHOUSE,
	FK_STORE_PYROSCOPE,
};

struct fk_store_url {
	enum fk_store_kind kind;
	bool tls;		/* the "s" schemes: HTTPS */
	char *user;		/* decoded; NULL when the URL names none */
	char *password;		/* decoded; NULL when the URL gives none */
	char *host;		/* without an IPv6 address's brackets */
	unsigned port;
	char *database;		/* ClickHouse's DB ("default"); NULL for Pyroscope */
	char *path;		/* Pyroscope's PATH ("" or "/prefix"); NULL for ClickHouse */
	char *base;		/* "http://HOST:PORT" or "https://[::1]:PORT" */
	char *display;		/* the URL as messages show it: no password,
				   the user percent-encoded */
	char *ca_file;		/* the certificates HTTPS trusts (PEM), set by
				   the caller; NULL: the system's */
};

/*
 * Parses text into *u (every string owned by u).  Returns 0, or -1 with
 * *err set ("bad URL 'TEXT': REASON", the password left out) and *u
 * zeroed.
 */
int fk_store_url_parse(const char *text, struct fk_store_url *u, GError **err);

/*
 * *out becomes a copy of u (strings copied) naming host (a name or an
 * address, checked as in a URL) instead of u's host: the same scheme,
 * port, credentials and database.  Returns 0, or -1 with *err set.
 */
int fk_store_url_with_host(const struct fk_store_url *u, const char *host,
			   struct fk_store_url *out, GError **err);

/* *out becomes a copy of u; release both. */
void fk_store_url_copy(const struct fk_store_url *u, struct fk_store_url *out);

/*
 * Sets u's password (a copy) when u names a user without one: how a tool
 * takes it from the environment rather than its command line, which other
 * users can read.  Returns true when it was set.
 */
bool fk_store_url_take_password(struct fk_store_url *u, const char *password);

/* Frees u's strings (the password's bytes wiped first) and zeroes u. */
void fk_store_url_release(struct fk_store_url *u);

#endif
