/*
 * pyroscope.h - profiles pushed to Grafana Pyroscope through its ingest
 * API, which takes folded stacks as they are:
 *
 *	POST /ingest?name=APP{k=v,...}&from=T0&until=T1&format=folded
 *	     &units=samples&sampleRate=1000000000&spyName=foldkit
 *	main;work 1500000
 *	...
 *
 *	char *path = fk_pyroscope_path(&url, labels, from, until, &err);
 *	if (!path || fk_pyroscope_body(profile, body, &err) < 0) ...
 *	fk_pyroscope_push(http, &url, profile, labels, from, until, &err);
 *
 * APP is the service label (or, without one, the process label) and the
 * profile's kind (on-cpu: "server.cpu", off-cpu: "server.off_cpu",
 * off-wake: "server.off_wake"), with bytes Pyroscope does not take in a
 * name (all but letters, digits and "_.-/") as '_'.  The other labels go
 * in the braces; Pyroscope's key syntax has no escapes, so in a value a
 * ',', '{', '}', '=' or control character becomes '_' (a process named
 * "x,host=evil" cannot add a label), and the whole name is percent-
 * encoded in the URL.
 *
 * The unit sets units and sampleRate: Pyroscope reads a count as samples
 * taken sampleRate times a second, so nanoseconds are sampleRate
 * 1000000000, microseconds 1000000, milliseconds 1000, seconds 1; bytes
 * are units=bytes; any other unit (samples of unknown rate, switches) is
 * units=objects, a plain count.  Pyroscope reads whole counts below 2^63
 * and lines of at most 65,535 bytes: a profile with a fraction, a larger
 * count or a longer line is refused, not sent cut.
 */
#ifndef FOLDKIT_STORE_PYROSCOPE_H
#define FOLDKIT_STORE_PYROSCOPE_H

#include "store/http.h"
#include "store/labels.h"
#include "store/profile.h"
#include "store/url.h"

#include <glib.h>
#include <stdint.h>

#define FK_PYROSCOPE_LINE_MAX 65535

/* The request's path and query string; free with g_free().  NULL with
 * *err set when there is no name (no service or process label). */
char *fk_pyroscope_path(const struct fk_store_url *u, const struct fk_labels *l, int64_t from,
			int64_t until, GError **err);

/* Appends p's lines (sorted) to body; -1 with *err set when Pyroscope
 * cannot take them (see above). */
int fk_pyroscope_body(const struct fk_profile *p, GString *body, GError **err);

/* Sends p: 0 when Pyroscope answered 200, else -1 with *err set. */
int fk_pyroscope_push(struct fk_http *h, const struct fk_store_url *u, const struct fk_profile *p,
		      const struct fk_labels *l, int64_t from, int64_t until, GError **err);

#endif
