/*
 * outdir.h - a directory of results, made safely where other users can
 * write too (/tmp), and as root: no link in it is ever followed, no file in
 * it that this process did not make is trusted or replaced.  fp-record's
 * DIR (and its subdirectories) and the plugin's split=DIR are made with it;
 * one more result file is one call.
 *
 *	struct fk_outdir *d = fk_outdir_create("fp-record-1", 0, &err);
 *	if (!d) ...report err...      // "fp-record-1: not empty: ..."
 *
 *	// a result file: a new name, written whole or not at all
 *	struct fk_outfile *o = fk_outdir_file(d, "threads.tsv", &err);
 *	if (!o) ...report err...
 *	fprintf(fk_outfile_stream(o), "thread\ttid\n");
 *	if (fk_outfile_commit(o, &err) != 0)   // frees o
 *		...report err...              // "fp-record-1/threads.tsv: ..."
 *
 *	// a subdirectory of results, and a file in it
 *	struct fk_outdir *wake = fk_outdir_mkdir(d, "wake", &err);
 *	o = fk_outdir_file(wake, "server-42.folded", &err);
 *	...
 *	fk_outdir_free(wake);
 *	fk_outdir_free(d);
 *
 * The rules, which every function keeps:
 *  - fk_outdir_create() makes the directory (its missing parents as
 *    mkdir -p does), mode 0777 less the umask.  A directory that exists is
 *    taken only if it is one (not a link to one), belongs to the caller
 *    (the effective uid), no other user may write to it (no o+w), and it
 *    is empty (unless FK_OUTDIR_EXISTING: then the caller looks at what it
 *    holds, fk_outdir_list(), and decides).  Anything else is refused,
 *    with what to do.
 *  - Every name inside is made relative to the directory's descriptor:
 *    files with O_CREAT | O_EXCL | O_NOFOLLOW under a hidden temporary
 *    name, renamed to their name at the end only where no name is
 *    (RENAME_NOREPLACE); subdirectories with mkdirat(), then opened with
 *    O_NOFOLLOW and checked to be the caller's.  A name that exists already
 *    (planted, or written twice) is an error, never followed or replaced.
 *  - Paths are for messages and for children that need one (fk_outdir_path()).
 * New files get mode 0666 less the umask.
 */
#ifndef FOLDKIT_OUTDIR_H
#define FOLDKIT_OUTDIR_H

#include "core/outfile.h"

#include <glib.h>
#include <stdbool.h>

struct fk_outdir;

enum {
	FK_OUTDIR_EXISTING = 1,	/* an existing directory of the caller's may hold files */
};

/*
 * Makes (or takes, see above) the directory path.  NULL with *err set
 * ("PATH: not empty: ...", "PATH: belongs to another user ...").  Free
 * with fk_outdir_free(), which closes it and leaves it on disk.
 */
struct fk_outdir *fk_outdir_create(const char *path, unsigned flags, GError **err);

/* A new subdirectory name of d (it must not exist).  NULL with *err set. */
struct fk_outdir *fk_outdir_mkdir(struct fk_outdir *d, const char *name, GError **err);

/*
 * A new private subdirectory of d, mode 0700, named prefix and six random
 * characters (fk_outdir_name() says which), for work files.  NULL with
 * *err set.
 */
struct fk_outdir *fk_outdir_mkdtemp(struct fk_outdir *d, const char *prefix, GError **err);

/*
 * Opens the existing subdirectory name of d (made by this process or its
 * children): a directory, no link, the caller's.  NULL with *err set
 * (ENOENT: errno in the message, "No such file or directory").
 */
struct fk_outdir *fk_outdir_open(struct fk_outdir *d, const char *name, GError **err);

void fk_outdir_free(struct fk_outdir *d);

/* The directory's descriptor (owned by d), its path and its last name. */
int fk_outdir_fd(const struct fk_outdir *d);
const char *fk_outdir_path(const struct fk_outdir *d);
const char *fk_outdir_name(const struct fk_outdir *d);

/* Whether fk_outdir_create() made it (false: it existed). */
bool fk_outdir_made(const struct fk_outdir *d);

/* A new result file name in d, as fk_outfile_openat(). */
struct fk_outfile *fk_outdir_file(struct fk_outdir *d, const char *name, GError **err);

/*
 * A new file name in d for a log or a child's output, written as it goes
 * (no temporary name): a close-on-exec descriptor to close(), or -1 with
 * *err set.
 */
int fk_outdir_new_fd(struct fk_outdir *d, const char *name, GError **err);

/*
 * Moves the regular file from_name of from to the new name to_name of to
 * (it must not exist).  A link or anything else but a regular file is
 * refused.  0, or -1 with *err set.
 */
int fk_outdir_move(struct fk_outdir *from, const char *from_name, struct fk_outdir *to,
		   const char *to_name, GError **err);

/* Removes the file name of d (a link itself, never what it names); 0 or -1 with *err. */
int fk_outdir_unlink(struct fk_outdir *d, const char *name, GError **err);

/*
 * Removes the subdirectory name of d and everything in it, following no
 * link.  Best effort: what cannot be removed stays.
 */
void fk_outdir_remove_tree(struct fk_outdir *d, const char *name);

/*
 * The names in d but "." and "..", sorted bytewise: a NULL-terminated
 * array to g_strfreev(), or NULL with *err set.
 */
char **fk_outdir_list(struct fk_outdir *d, GError **err);

#endif
