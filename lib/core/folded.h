/*
 * folded.h - the folded-stack line format, read by every filter after
 * fp-collapse:
 *
 *	root;caller;leaf COUNT
 *	root;caller;leaf COUNT1 COUNT2       (differential, as fold-diff prints)
 *
 * Frames are separated by ';', the stack from its count(s) by spaces or
 * tabs.  Counts are fk_count values (integers or decimals, see count.h).
 * As flamegraph.pl reads it, only the last blank before the (first) count
 * separates: any others belong to the stack, whose leaf then ends in a
 * blank ("a;f(unsigned long  5": the leaf is "f(unsigned long ").  Tools
 * that pass stacks through write them back with one blank, so no frame is
 * renamed.
 *
 * One call reads one file as a stream:
 *
 *	struct folded_reader *fr = folded_reader_open(path, skips, &err);
 *	struct folded_line fl;
 *	while ((rc = folded_reader_next(fr, &fl, &err)) > 0)
 *		fold_table_add(t, fl.stack, fl.len, fl.count[0]);
 *	folded_reader_free(fr);
 *
 * Blank lines are ignored.  A line that is not a folded stack (no count, a
 * negative or malformed count, an empty stack, a '#' comment) is not
 * returned: it is counted in the caller's skip_log with its reason, file and
 * line, so the tool can report it.  Read errors, NUL bytes and over-long
 * lines end the read with an error (see linereader.h).
 *
 * A profile is plain (one count per line) or differential (two): no single
 * line switches it.  The first stack read decides its shape; a later line
 * of the other shape is not returned but counted, as a skip and in the
 * reader's folded_shape, which the tool reports with folded_shape_note()
 * (a frame "evil 1" ending a plain stack reads as two counts: that line
 * must not turn the whole profile into a differential one).  Readers of
 * one profile share a shape (folded_reader_set_shape()).
 */
#ifndef FOLDKIT_FOLDED_H
#define FOLDKIT_FOLDED_H

#include "core/count.h"
#include "core/skiplog.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct folded_line {
	const char *stack;	/* not NUL-terminated; valid until the next
				   read (see folded_reader_stable()) */
	size_t len;
	fk_count count[2];	/* count[1] is 0 unless ncounts == 2 */
	int ncounts;		/* 1, or 2 for a differential line */
	uint64_t lineno;
};

/*
 * Parses one line (without its line end).  Returns NULL and fills *out, or
 * returns the reason the line is not a folded stack (a string literal).
 * Two trailing numbers make a differential line, as in flamegraph.pl.
 */
const char *folded_parse(const char *s, size_t len, struct folded_line *out);

/*
 * A frame that ends in a blank and a number ("evil 1", "f 0.5 ") cannot be
 * the last of a stack: "p;evil 1 5" reads as the differential line "p;evil"
 * 1 5.  Returns the index of that blank in s[0..n), or n when the frame is
 * safe.  (Collapsers replace the blank; kfold refuses such a name.)
 */
size_t folded_count_blank(const char *s, size_t n);

/*
 * The shape of one profile, shared by the readers of its files:
 *
 *	struct folded_shape sh = FOLDED_SHAPE_INIT;   // or { .ncounts = 1 }
 *	folded_reader_set_shape(fr, &sh);              // for each reader
 *	...read...
 *	char *note = folded_shape_note(&sh);          // NULL: nothing skipped
 *	folded_shape_release(&sh);
 *
 * ncounts may be preset (fold-diff reads only plain profiles); otherwise
 * the first stack line sets it and file and line say where.
 */
struct folded_shape {
	int ncounts;		/* 1 or 2; 0 until decided */
	char *file;		/* where it was decided; NULL when preset */
	uint64_t line;
	char *odd_file;		/* the first line of the other shape */
	uint64_t odd_line;
	uint64_t odd;		/* lines of the other shape, skipped */
};

#define FOLDED_SHAPE_INIT { 0 }

/* Frees the file names and resets sh to FOLDED_SHAPE_INIT. */
void folded_shape_release(struct folded_shape *sh);

/*
 * NULL when no line was skipped for its shape, else one line for the user:
 * "b.folded:7: two counts, but a.folded:1 has one: one-count and two-count
 * (differential) lines do not mix; 3 such lines skipped".  Free with g_free().
 */
char *folded_shape_note(const struct folded_shape *sh);

struct folded_reader;

/* Opens path (NULL or "-": stdin); skips are counted into skips. */
struct folded_reader *folded_reader_open(const char *path,
					 struct skip_log *skips, GError **err);

/*
 * Like folded_reader_open(), but a regular file is mapped into memory (see
 * maplines.h: the kernel may drop its pages, but a file truncated while
 * mapped raises SIGBUS), so the stacks returned stay valid until
 * folded_reader_free() and need not be copied: folded_reader_stable() then
 * says so.  Anything else (stdin, a pipe, an empty or /proc file) is read
 * as a stream, as by folded_reader_open(), with the same lines, skips and
 * errors.
 */
struct folded_reader *folded_reader_open_mapped(const char *path,
						struct skip_log *skips,
						GError **err);

/* True when the stacks returned stay valid until folded_reader_free(). */
bool folded_reader_stable(const struct folded_reader *fr);

/*
 * Makes fr check its lines against sh, which must outlive fr, instead of a
 * shape of its own (which the first line of this file alone decides).
 */
void folded_reader_set_shape(struct folded_reader *fr, struct folded_shape *sh);

/* Returns 1 with the next stack, 0 at the end, -1 on error (*err set). */
int folded_reader_next(struct folded_reader *fr, struct folded_line *out,
		       GError **err);

const char *folded_reader_name(const struct folded_reader *fr);
uint64_t folded_reader_bytes(const struct folded_reader *fr);
void folded_reader_free(struct folded_reader *fr);

#endif
