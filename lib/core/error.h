/*
 * error.h - error values for lib/: a GError in the foldkit domain whose
 * message already names the place ("perf.txt:1234: unexpected frame line").
 *
 *	GError *err = NULL;
 *	if (line_reader_next(r, &line, &err) < 0) {
 *		tool_error("%s", err->message);   // fp-collapse: perf.txt:12: ...
 *		g_error_free(err);
 *	}
 *
 * lib/ never prints and never exits: a function that can fail takes a
 * trailing `GError **err` (which may be NULL), sets it on failure and
 * returns a negative value or NULL.  The caller owns the GError and frees it
 * with g_error_free().  Messages are lowercase, without a full stop, and
 * quote user-supplied strings.
 */
#ifndef FOLDKIT_ERROR_H
#define FOLDKIT_ERROR_H

#include <glib.h>
#include <stdint.h>

#define FK_ERROR (fk_error_quark())
GQuark fk_error_quark(void);

enum fk_error_code {
	FK_ERROR_IO,		/* open/read/write failed; errno is in the text */
	FK_ERROR_PARSE,		/* malformed input the tool cannot continue past */
	FK_ERROR_BINARY,	/* NUL bytes: not a text file */
	FK_ERROR_TRUNCATED,	/* input ends in the middle of a record */
	FK_ERROR_RANGE,		/* a number does not fit */
	FK_ERROR_USAGE,		/* a bad option value passed to lib/ */
};

/*
 * Sets *err (when err is not NULL) to "FILE:LINE: MESSAGE", or "FILE: MESSAGE"
 * when line is 0.  file may be NULL for "<stdin>".
 */
void fk_error_at(GError **err, enum fk_error_code code, const char *file,
		 uint64_t line, const char *fmt, ...) G_GNUC_PRINTF(5, 6);

#endif
