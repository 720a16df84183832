/*
 * linesource.h - lines from a file mapped into memory when it is a regular
 * file, else read as a stream: maplines.h's speed where it can be had,
 * linereader.h's reach (pipes, standard input) where it cannot, behind one
 * interface, for readers that keep a run of lines as one block.
 *
 *	struct line_source *ls = line_source_open(path, &err);   // "-": stdin
 *	while ((rc = line_source_next(ls, &line, &err)) > 0) {
 *		if (starts_a_record(&line))
 *			line_source_pin(ls, line.s);
 *		...
 *		block = line_source_pinned(ls);   // the run of lines so far,
 *		len = line.s - block;             // contiguous, until unpinned
 *	}
 *	line_source_free(ls);
 *
 * Lines keep every invariant of linereader.h (no '\n' or NUL in a line,
 * CRLF accepted, a last line without '\n' flagged, the same messages for
 * the same errors).  A pinned block stays valid and unchanged until the
 * next line_source_next() after line_source_unpin(); its address may change
 * from one line_source_next() to the next (a stream's buffer moves), which
 * is why line_source_pinned() is asked again, never kept.
 */
#ifndef FOLDKIT_LINESOURCE_H
#define FOLDKIT_LINESOURCE_H

#include "core/linereader.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct line_source;

/*
 * Opens path (NULL or "-": standard input).  NULL with *err set ("FILE:
 * cannot open: ...", "FILE: is a directory") on failure.
 */
struct line_source *line_source_open(const char *path, GError **err);

/* Returns 1 and fills *line, 0 at the end, or -1 with *err set. */
int line_source_next(struct line_source *ls, struct line *line, GError **err);

/* Keeps the bytes from p (in the last line returned) on; see above. */
void line_source_pin(struct line_source *ls, const char *p);
const char *line_source_pinned(const struct line_source *ls);
void line_source_unpin(struct line_source *ls);

/*
 * Skips the complete lines from here on that begin with a space or a tab
 * (linereader.h, line_reader_skip_indented()), returning how many: a
 * reader that needs only the line after them goes 16 bytes at a time.  A
 * pinned block keeps them.
 */
size_t line_source_skip_indented(struct line_source *ls);

/* Where the next line starts (valid as the last line returned is). */
const char *line_source_cursor(const struct line_source *ls);

/*
 * The bytes from the cursor on that can be looked at now without reading
 * (the rest of a mapped file; a stream's buffered bytes up to a NUL): a
 * reader that recognises text it has seen before compares it there, and
 * moves over it with line_source_advance(), without finding its lines.
 */
size_t line_source_avail(const struct line_source *ls);

/*
 * Moves the cursor over the next n bytes (n <= line_source_avail()), which
 * the caller knows to be `lines` complete lines, each ending in '\n'; a
 * pinned block keeps them.  Returns the number of the last of them.
 */
uint64_t line_source_advance(struct line_source *ls, size_t n, size_t lines);

/*
 * Whether lines stay valid until line_source_free() (a mapped file), so
 * that a reader may keep pointers to a line without copying it; else a
 * line is valid only until the next line_source_next().
 */
bool line_source_lines_stay(const struct line_source *ls);

/* Bytes consumed (mapped) or read (stream) so far. */
uint64_t line_source_bytes(const struct line_source *ls);

/* The name used in messages: the path, or "<stdin>". */
const char *line_source_name(const struct line_source *ls);

void line_source_free(struct line_source *ls);

#endif
