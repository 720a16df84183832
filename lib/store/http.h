/*
 * http.h - one server's HTTP interface, through libcurl: POST a body,
 * stream the answer.
 *
 *	struct fk_http *h = fk_http_new(&url);          // store/url.h
 *	struct fk_http_reply rep;
 *	struct fk_http_request rq = { .path = "/?query=SELECT%201",
 *				       .sink = on_chunk, .sink_data = data };
 *	if (fk_http_send(h, &rq, &rep, &err) < 0)
 *		...err: "clickhouse://db1:8123/prof: cannot connect: ..."
 *	else if (rep.status != 200)
 *		...rep.body holds the server's error text (4 KiB at most)
 *	fk_http_reply_release(&rep);
 *	fk_http_free(h);
 *
 * The connection is kept between requests.  The URL's user and password
 * go to libcurl as HTTP basic authentication, never into the request
 * line; redirects are not followed; HTTPS certificates are checked
 * against the system's authorities (libcurl's default) or the URL's
 * ca_file.  Error messages
 * start with the server's display URL (store/url.h), never the password.
 */
#ifndef FOLDKIT_STORE_HTTP_H
#define FOLDKIT_STORE_HTTP_H

#include "store/url.h"

#include <glib.h>
#include <stddef.h>

struct fk_http;

/* A handle for u's server (u is copied).  Never NULL. */
struct fk_http *fk_http_new(const struct fk_store_url *u);
void fk_http_free(struct fk_http *h);

/* The server as messages name it: the URL without its password. */
const char *fk_http_server(const struct fk_http *h);

/*
 * Gets the answer's body, a chunk at a time, when the status is 200.
 * Returns 0, or -1 with *err set to abort the request (its message is
 * then the request's error, as it is).
 */
typedef int (*fk_http_sink)(const char *buf, size_t len, void *data, GError **err);

struct fk_http_reply {
	long status;		/* the HTTP status */
	GString *body;		/* when status is not 200: the start of the
				   body (4 KiB), else NULL */
};

void fk_http_reply_release(struct fk_http_reply *rep);

/*
 * A body is bytes in memory or made as it is sent (chunked): source
 * fills buf with at most cap bytes and returns how many, 0 at the end, or
 * -1 with *err set to abort the request.
 */
typedef long (*fk_http_source)(char *buf, size_t cap, void *data, GError **err);

struct fk_http_request {
	const char *path;		/* "/?query=...", escaped already
					   (fk_http_escape()) */
	const char *ctype;		/* the body's Content-Type, or NULL */
	const void *body;		/* body[0..len), or */
	size_t len;
	fk_http_source source;		/* when not NULL, the body */
	void *source_data;
	fk_http_sink sink;		/* the answer when its status is 200 */
	void *sink_data;
};

/*
 * POSTs rq.  Returns 0 when an answer came (any status: see rep), or -1
 * with *err set when none did (the connection failed or broke, or the
 * source or the sink stopped the request).
 */
int fk_http_send(struct fk_http *h, const struct fk_http_request *rq, struct fk_http_reply *rep,
		 GError **err);

/* Appends s percent-encoded for a query string (all but [A-Za-z0-9-._~]). */
void fk_http_escape(GString *out, const char *s, size_t len);

#endif
