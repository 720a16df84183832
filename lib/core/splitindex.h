/*
 * splitindex.h - a split directory: one profile per file (per process, as
 * the plugin's split=DIR and fp-record's DIR/on and DIR/off are made), and
 * its index.tsv, which says which files belong to it and what their counts
 * are.  Every reader of a split directory reads it with this module, and
 * takes the files the index lists, no others: a file left by an earlier
 * run is never summed.
 *
 *	struct fk_split_index *x = fk_split_index_read("on-cpu", 0, &err);
 *	if (!x) ...report err...          // "on-cpu/index.tsv:3: bad unit 'x y'"
 *	for (guint i = 0; i < x->rows->len; i++) {
 *		const struct fk_split_row *r = g_ptr_array_index(x->rows, i);
 *		// r->file "server-42.folded" (in on-cpu/), r->comm "server",
 *		// r->pid 42, r->total 1200000000 (in x->unit, "ns")
 *		const char *role = fk_split_index_cell(x, r, "role");  // any column, or NULL
 *	}
 *	for (char **f = x->unlisted; *f; f++)
 *		...say "on-cpu/%s: not listed in index.tsv: left out", *f
 *	fk_split_index_free(x);
 *
 * index.tsv is a header line naming the columns, then a line per file,
 * cells separated by tabs (a final "\r" is dropped, blank lines skipped):
 *
 *	file	comm	pid	samples	share	total	unit
 *	server-42.folded	server	42	12000	0.9000	1200000000	ns
 *
 * Only "file" is needed.  Where the header has them: "comm" is the
 * process's name, with "\xNN" and "\\" unescaped when there is a "unit"
 * column too (core/textesc.h, FK_ESC_BACKSLASH; an older plugin wrote
 * names raw and had no unit); "pid" a process id (1 to 2^31-1); "samples"
 * a number of samples, or "-" for unknown; "total" the sum of the file's
 * counts (core/count.h); "unit" what a count is, the same in every row (a
 * plain word, fk_unit_ok()): files of two units cannot be added.  Other
 * columns are kept as written (fk_split_index_cell()).  A file is a plain
 * name in the directory (no '/', not hidden) and is listed once.
 *
 * Every refusal is an error naming the file and line; nothing is guessed.
 */
#ifndef FOLDKIT_SPLITINDEX_H
#define FOLDKIT_SPLITINDEX_H

#include "core/count.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct fk_split_row {
	char *file;		/* a name in the directory */
	char *comm;		/* unescaped; NULL without a comm column */
	int pid;		/* 0 without a pid column */
	bool has_samples;	/* a samples column, and not "-" */
	uint64_t samples;
	bool has_total;		/* a total column */
	fk_count total;
	uint64_t line;		/* its line in index.tsv */
	char **cells;		/* the line's cells as written, one per column */
};

struct fk_split_index {
	char *path;		/* index.tsv's path, for messages */
	bool has_index;		/* false: there was none, and rows are every
				   "*.folded" file (fk_split_index_read()) */
	char **columns;		/* the header's names; NULL-terminated */
	char *unit;		/* every row's unit; NULL: no unit column, or no row */
	GPtrArray *rows;	/* struct fk_split_row *, in the index's order */
	char **unlisted;	/* "*.folded" files there that it does not list,
				   sorted bytewise; NULL-terminated */
};

enum {
	FK_SPLIT_PROCESSES = 1,	/* comm and pid columns are needed too */
	FK_SPLIT_NEED_INDEX = 2,	/* no index.tsv is an error */
};

/*
 * Reads dir/index.tsv, and checks that every file it lists is there and
 * is a regular file (a FIFO would hang its reader; a link to a regular file
 * is one).  Without an index.tsv (and without FK_SPLIT_NEED_INDEX), rows
 * are the directory's "*.folded" regular files, sorted bytewise, and none is
 * unlisted.  index.tsv itself must be a regular file, opened without
 * following a link.  NULL with *err set (naming index.tsv and the line, or
 * the file) on any refusal.  Free with fk_split_index_free().
 */
struct fk_split_index *fk_split_index_read(const char *dir, unsigned flags, GError **err);

/* The same, for the directory open as dirfd, whose path dir names it. */
struct fk_split_index *fk_split_index_readat(int dirfd, const char *dir, unsigned flags,
					     GError **err);

/*
 * The rules above on the text of an index.tsv alone (len bytes; path for
 * messages), without looking at any file.  NULL with *err set.
 */
struct fk_split_index *fk_split_index_parse(const char *text, size_t len, const char *path,
					    unsigned flags, GError **err);

/* r's cell of the column named column, as written; NULL if there is none. */
const char *fk_split_index_cell(const struct fk_split_index *x, const struct fk_split_row *r,
				const char *column);

void fk_split_index_free(struct fk_split_index *x);

/*
 * True for a unit a report may print as it is: one word of ASCII letters,
 * digits, '_', '-', '/', '.' or 'µ', at most 32 bytes.
 */
bool fk_unit_ok(const char *unit);

/* A line of an index to write. */
struct fk_split_out {
	const char *file;
	const char *comm;	/* escaped when written; NULL: "[unknown]" */
	int pid;
	bool has_samples;	/* else "-" */
	uint64_t samples;
	fk_count total;
	const char *more;	/* the cells of the columns after unit, each after
				   a tab ("\t12\t-"), or NULL */
};

/*
 * Appends the index of n files, in the order given, to out: the header
 * "file comm pid samples share total unit", then more_head ("a\tb", NULL
 * for none) after a tab, then one line per file, its share of the sum of
 * the totals with four decimals.  No cell of more holds a newline.
 */
void fk_split_index_format(GString *out, const struct fk_split_out *rows, size_t n,
			   const char *unit, const char *more_head);

#endif
