/*
 * splitout.h - fold-query --by's output: one folded file per label value
 * in a directory, and an index.tsv with the perf plugin's columns, so
 * that whatever reads a split= directory (fold-report DIR) reads it:
 *
 *	struct fk_split_out *s = fk_split_out_new();
 *	fold_table_add(fk_split_out_table(s, "web-1", 5), "main;f", 6, c);
 *	if (fk_split_out_write(s, "by-host", "host", "ns", &n, &err) < 0) ...
 *	fk_split_out_free(s);
 *
 * writes by-host/web-1.folded and by-host/index.tsv:
 *
 *	file	comm	pid	samples	share	total	unit
 *	web-1.folded	web-1	1	-	1.0000	5	ns
 *
 * comm is the label's value (escaped as core/textesc.h does with
 * FK_ESC_BACKSLASH), rows busiest first; a query knows no process ids or
 * sample counts, so pid is the value when splitting by pid and the row's
 * number otherwise, and samples is "-".  A file is named by its value,
 * bytes other than [A-Za-z0-9._-] as '_', never starting with '.' or '-'
 * ("_" for the empty value: profiles without the label), "-2", "-3"...
 * added where two values would share a name.  The directory is created;
 * an existing one must be empty (no old file can be taken for this
 * query's), and is never a symbolic link.  Every file is written under a
 * temporary name and renamed (core/outfile.h).
 */
#ifndef FOLDKIT_STORE_SPLITOUT_H
#define FOLDKIT_STORE_SPLITOUT_H

#include "core/foldtable.h"

#include <glib.h>
#include <stddef.h>

struct fk_split_out;

struct fk_split_out *fk_split_out_new(void);
void fk_split_out_free(struct fk_split_out *s);

/* The table for value[0..len), made on first use; owned by s. */
struct fold_table *fk_split_out_table(struct fk_split_out *s, const char *value, size_t len);

/*
 * Writes every table into dir as above, key naming the label (for the
 * pid column) and unit its counts (NULL: "-").  *nfiles gets the number
 * of files.  Returns 0, or -1 with *err set.
 */
int fk_split_out_write(struct fk_split_out *s, const char *dir, const char *key,
		       const char *unit, size_t *nfiles, GError **err);

#endif
