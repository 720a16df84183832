/*
 * splitout.h - fold-query --by's output: one folded file per label value
 * in a directory, and an index.tsv with the perf plugin's columns
 * (core/splitindex.h), so that whatever reads a split= directory
 * (fold-report DIR, fold-push DIR, fold2speedscope) reads it:
 *
 *	struct fk_split_dir *s = fk_split_dir_new();
 *	fold_table_add(fk_split_dir_table(s, "web-1", 5), "main;f", 6, c);
 *	if (fk_split_dir_write(s, "by-host", "host", "ns", &n, &err) < 0) ...
 *	fk_split_dir_free(s);
 *
 * writes by-host/web-1.folded and by-host/index.tsv:
 *
 *	file	comm	pid	samples	share	total	unit
 *	web-1.folded	web-1	1	-	1.0000	5	ns
 *
 * comm is the label's value (escaped as core/textesc.h does with
 * FK_ESC_BACKSLASH; a value is cut at a NUL byte there, never in its
 * file), rows busiest first, then by value; a query knows no process ids
 * or sample counts, so pid is the value when splitting by pid (a number
 * from 1 to 999,999,999) and the row's number otherwise, and samples is
 * "-".  A file is named by its value, bytes other than [A-Za-z0-9._-] as
 * '_', at most 200 of them, never starting with '.' or '-' ("_" for the
 * empty value: profiles without the label), "-2", "-3"... added where two
 * values would share a name.
 *
 * The directory is made with core/outdir.h: a new one (its parents as
 * mkdir -p does), or an existing empty one of the caller's that no other
 * user may write to, never through a symbolic link; each file is a new
 * name made at the directory's descriptor, written under a temporary name
 * and renamed, no link followed, no file replaced.  index.tsv comes last:
 * a directory without one was not finished.
 */
#ifndef FOLDKIT_STORE_SPLITOUT_H
#define FOLDKIT_STORE_SPLITOUT_H

#include "core/foldtable.h"

#include <glib.h>
#include <stddef.h>

struct fk_split_dir;

struct fk_split_dir *fk_split_dir_new(void);
void fk_split_dir_free(struct fk_split_dir *s);

/* The table for value[0..len), made on first use; owned by s. */
struct fold_table *fk_split_dir_table(struct fk_split_dir *s, const char *value, size_t len);

/*
 * Writes every table into dir as above, key naming the label (for the
 * pid column) and unit its counts (NULL: "-").  *nfiles gets the number
 * of files written.  Returns 0, or -1 with *err set (naming dir, or the
 * file).
 */
int fk_split_dir_write(struct fk_split_dir *s, const char *dir, const char *key,
		       const char *unit, size_t *nfiles, GError **err);

#endif
