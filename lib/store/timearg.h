/*
 * timearg.h - the times --from and --until take:
 *
 *	1733467200                 seconds since 1970-01-01 UTC
 *	2024-12-06                 midnight UTC of that day
 *	2024-12-06T07:30:00Z       ISO 8601 with Z or an offset (+01:00);
 *	2024-12-06T07:30:00        without one: UTC, so that a command means
 *	                           the same on every machine of a fleet
 *	now, now-90s, now-15m, now-2h, now-7d
 *
 *	int64_t t;
 *	if (fk_time_parse("now-1h", time(NULL), &t, &err) < 0) ...
 *
 * Times are whole seconds from 1970 to 2105 (what a ClickHouse DateTime
 * holds); fractions of a second are dropped.
 */
#ifndef FOLDKIT_STORE_TIMEARG_H
#define FOLDKIT_STORE_TIMEARG_H

#include <glib.h>
#include <stdint.h>

#define FK_TIME_MAX 4294967295LL	/* 2106-02-07T06:28:15Z */

/* Returns 0 with *out, or -1 with *err set ("bad time 'S': ..."). */
int fk_time_parse(const char *s, int64_t now, int64_t *out, GError **err);

/* "2024-12-06T07:30:00Z" for t; free with g_free(). */
char *fk_time_format(int64_t t);

#endif
