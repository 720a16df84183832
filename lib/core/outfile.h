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
 * In a directory anyone may write to that has the sticky bit (/tmp), a
 * link, file or FIFO that belongs to another user (neither the caller nor
 * the directory's owner) is refused ("refused: ... belongs to another
 * user"), whatever fs.protected_symlinks says: that user may have planted
 * it for root to follow.  A file that was no link when looked at is
 * opened with O_NOFOLLOW, in case it has become one since.
 * fk_outfile_abort() removes the temporary file, so an existing file is left
 * as it was; what was written in place cannot be taken back.
 *
 * In a directory of one's own (core/outdir.h), fk_outfile_openat() makes
 * a new file only: its temporary file is created with O_CREAT | O_EXCL |
 * O_NOFOLLOW relative to the directory's descriptor, and committing renames
 * it to its name only where no name is (RENAME_NOREPLACE): nothing is
 * followed, nothing replaced.
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

/*
 * A new file name in the directory dirfd (which the result does not take:
 * it keeps a copy of the descriptor), written under a hidden temporary
 * name and renamed to name by fk_outfile_commit() only if name does not
 * exist by then (an error otherwise).  path is what messages call it.
 * NULL with *err set on failure.
 */
struct fk_outfile *fk_outfile_openat(int dirfd, const char *name, const char *path,
				     GError **err);

/*
 * A new file name in dirfd for a log written as it goes: created with
 * O_CREAT | O_EXCL | O_NOFOLLOW and mode 0666 less the umask; a
 * close-on-exec descriptor to close(), or -1 with *err set (path names it).
 */
int fk_outfile_create_at(int dirfd, const char *name, const char *path, GError **err);

/*
 * Renames from (in from_dir) to to (in to_dir) only if to does not exist:
 * renameat2(RENAME_NOREPLACE), or where the file system lacks it a hard
 * link and an unlink.  0, or -1 with errno set (EEXIST: to exists).
 */
int fk_rename_new(int from_dir, const char *from, int to_dir, const char *to);

#endif
