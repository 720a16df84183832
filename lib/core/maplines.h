/*
 * maplines.h - the lines of a regular file mapped into memory, for readers
 * that want to keep pointers to lines instead of copying them.
 *
 *	GError *err = NULL;
 *	int fd;
 *	struct map_lines *m = map_lines_open(path, &fd, &err);
 *	if (!m && err)
 *		report(err);            // "FILE: cannot open: REASON"
 *	else if (!m)
 *		...                     // not a regular file: read fd, close it
 *	struct line line;
 *	while ((rc = map_lines_next(m, &line, &err)) > 0)
 *		keep(line.s, line.len); // valid until map_lines_free(m)
 *	map_lines_free(m);
 *
 * The lines keep every invariant of linereader.h (no '\n' or NUL in a
 * line, CRLF accepted, a last line without '\n', lines of
 * LINE_READER_MAX_LINE bytes or more refused with FK_ERROR_RANGE), with the
 * same messages, so a reader can use either source.  Unlike line_reader's,
 * the lines stay valid until map_lines_free().
 *
 * Memory: the mapping is of the page cache (read-only, shared), so its
 * pages are the kernel's to drop and re-read; the heap use is constant.
 * The size is taken when the file is opened: bytes appended later are not
 * read.  As with any mapped file, a file truncated by another process
 * while it is mapped makes a later access fail with SIGBUS.
 */
#ifndef FOLDKIT_MAPLINES_H
#define FOLDKIT_MAPLINES_H

#include "core/linereader.h"

#include <glib.h>
#include <stdint.h>

struct map_lines;

/*
 * Maps path (a file name; not "-") when it is a regular file.  Returns NULL
 * with *err set when it cannot be opened or is a directory
 * (line_reader_open()'s messages), and NULL with *fd set to the open file
 * when it is not a regular file (a FIFO, a device), says it is empty (as
 * /proc files do, whatever they hold) or cannot be mapped: the caller then
 * reads it as a stream and closes *fd.  Otherwise *fd is -1.
 */
struct map_lines *map_lines_open(const char *path, int *fd, GError **err);

/*
 * map_lines_open() for a reader that is done with each line soon after it
 * (the collapsers: one sample at a time): the file is mapped a window at a
 * time, and the pages the cursor has left MAP_LINES_WINDOW bytes behind are
 * released, so that the process's resident memory stays bounded however
 * large the file.  Lines stay valid as before (a released page is read
 * again from the page cache if touched), only slower.
 */
#define MAP_LINES_WINDOW ((size_t)8 << 20)
struct map_lines *map_lines_open_windowed(const char *path, int *fd, GError **err);

/* Returns 1 and fills *line, 0 at end of input, or -1 and sets *err. */
int map_lines_next(struct map_lines *m, struct line *line, GError **err);

/*
 * Skips the complete lines from the current position on that begin with a
 * space or a tab, as line_reader_skip_indented() does, and returns how
 * many (line numbers still count them).  Stops before a line holding a NUL.
 */
size_t map_lines_skip_indented(struct map_lines *m);

const char *map_lines_name(const struct map_lines *m);

/* Bytes consumed so far, line ends included. */
uint64_t map_lines_bytes(const struct map_lines *m);

/* Where the next line starts: the byte after the last line's end. */
const char *map_lines_cursor(const struct map_lines *m);

/* The bytes from the cursor to the end of the file. */
size_t map_lines_avail(const struct map_lines *m);

/*
 * Moves the cursor over the next n bytes (n <= map_lines_avail()), which
 * the caller knows to be `lines` complete lines, each ending in '\n';
 * returns the number of the last of them.
 */
uint64_t map_lines_advance(struct map_lines *m, size_t n, size_t lines);

/* Unmaps the file: every line returned becomes invalid. */
void map_lines_free(struct map_lines *m);

#endif
