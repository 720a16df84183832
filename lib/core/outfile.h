/*
 * outfile.h - an output file written whole or not at all.
 *
 *	struct fk_outfile *f = fk_outfile_open("cpu.pb.gz", &err);
 *	if (!f)
 *		...                    // "cpu.pb.gz.XXXXXX: cannot create: ..."
 *	ok = write_everything(fk_outfile_stream(f));
 *	if (fk_outfile_close(f, ok, &err) < 0)
 *		...                    // a write, close or rename error
 *
 * The file is written under a temporary name beside path and renamed over
 * it only when fk_outfile_close() is told the contents are complete and
 * every write succeeded; otherwise the temporary file is removed, so an
 * interrupted or failed run never leaves half a file where a whole one
 * was (or was expected).  A path that exists and is not a regular file
 * (a device such as /dev/stdout or /dev/full, a FIFO) is written in
 * place: renaming over it would replace the device with a file.  The new
 * file gets the usual permissions (0666 less the umask).
 */
#ifndef FOLDKIT_OUTFILE_H
#define FOLDKIT_OUTFILE_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

struct fk_outfile;

/* NULL with *err set if the file cannot be created. */
struct fk_outfile *fk_outfile_open(const char *path, GError **err);

/* The stream to write to; owned by f. */
FILE *fk_outfile_stream(struct fk_outfile *f);

/*
 * Closes the stream; with ok, renames the file into place.  Returns 0, or
 * -1 with *err set (a failed write, close or rename: the file is then
 * removed, path left as it was).  Frees f either way.
 */
int fk_outfile_close(struct fk_outfile *f, bool ok, GError **err);

#endif
