/*
 * outfile.h - writing a result to a path the way a careful tool does: a
 * regular file is replaced whole or not at all, anything else is written
 * through, never replaced.
 *
 *	struct fk_outfile *o = fk_outfile_open("out.folded", &err);
 *	if (!o) ...report err...
 *	fputs("main;f 1\n", fk_outfile_stream(o));
 *	if (fk_outfile_commit(o, &err) != 0) ...report err...   // frees o
 *	// or, to give up: fk_outfile_abort(o);                // frees o
 *
 * What path names decides how it is written:
 *  - nothing: a new file, made under a temporary name next to it with the
 *    mode 0666 less the umask, renamed to path by fk_outfile_commit();
 *  - a regular file: the same, and the new file gets the old one's mode
 *    and owner; where it cannot (not root, or no temporary file can be
 *    made next to it) the file is truncated and written in place, as a
 *    shell's '>' would;
 *  - a symbolic link: followed (40 links at most), and the rules apply to
 *    what it names; the link itself is never replaced.  A link to a
 *    descriptor, /proc/self/fd/N or /dev/fd/N (/dev/stdout is one),
 *    writes to that open descriptor, at its offset and with its flags
 *    (O_APPEND kept), not to a file opened anew;
 *  - a character or block device, a FIFO or a socket: opened and written
 *    in place (a FIFO blocks until it has a reader, as with '>');
 *  - a directory: an error.
 * fk_outfile_abort() removes the temporary file, so an existing file is left
 * as it was; what was written in place cannot be taken back.
 */
#ifndef FOLDKIT_OUTFILE_H
#define FOLDKIT_OUTFILE_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

struct fk_outfile;

/* NULL with *err set ("PATH: cannot create: REASON") on failure. */
struct fk_outfile *fk_outfile_open(const char *path, GError **err);

/* The stream to write to; owned by o. */
FILE *fk_outfile_stream(struct fk_outfile *o);

/*
 * Flushes, closes, and puts the file in place; 0, or -1 with *err set
 * ("PATH: write error: REASON") after which nothing was replaced.  Frees o.
 */
int fk_outfile_commit(struct fk_outfile *o, GError **err);

/* Gives up: closes, removes the temporary file; frees o.  NULL is fine. */
void fk_outfile_abort(struct fk_outfile *o);

/*
 * fk_outfile_commit() when ok (the contents are whole), else
 * fk_outfile_abort() and -1 with *err left alone: for callers whose
 * writer reports its own errors.
 */
int fk_outfile_close(struct fk_outfile *o, bool ok, GError **err);

#endif
