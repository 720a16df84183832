/*
 * linereader.h - fast line-at-a-time input from a file or stdin.
 *
 *	GError *err = NULL;
 *	struct line_reader *r = line_reader_open(path, &err);   // "-": stdin
 *	struct line line;
 *	int rc;
 *	while ((rc = line_reader_next(r, &line, &err)) > 0)
 *		use(line.s, line.len);          // no '\n', no trailing '\r'
 *	if (rc < 0)
 *		report(err);                    // "FILE:LINE: ..." already
 *	line_reader_free(r);
 *
 * Lines are returned as pointers into the reader's buffer: they stay valid
 * until the next call to line_reader_next() or line_reader_free(), and are
 * not NUL-terminated.  The buffer holds one read block (1 MiB) and grows only
 * for a longer line, so memory does not grow with the input.
 *
 * Invariants the parsers rely on:
 *  - a returned line never contains '\n' or a NUL byte: a NUL makes
 *    line_reader_next() fail with FK_ERROR_BINARY naming that line;
 *  - CRLF line ends are accepted and the '\r' removed;
 *  - the last line is returned even without a final '\n'
 *    (line.newline is then false, which parsers use to detect truncation);
 *  - a line longer than LINE_READER_MAX_LINE fails with FK_ERROR_RANGE.
 */
#ifndef FOLDKIT_LINEREADER_H
#define FOLDKIT_LINEREADER_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LINE_READER_MAX_LINE (256u << 20)

struct line {
	const char *s;		/* the line's bytes, without the line end */
	size_t len;
	uint64_t no;		/* 1-based line number */
	bool newline;		/* false only for a last line without '\n' */
};

struct line_reader;

/*
 * Opens path for reading; NULL or "-" means standard input.  A directory is
 * refused here rather than at the first read.  Returns NULL and sets *err
 * ("FILE: cannot open: REASON") on failure.  Free with line_reader_free().
 */
struct line_reader *line_reader_open(const char *path, GError **err);

/*
 * Reads from an open descriptor; name is used in messages (copied).  The
 * reader does not close fd.
 */
struct line_reader *line_reader_from_fd(int fd, const char *name);

/* Returns 1 and fills *line, 0 at end of input, or -1 and sets *err. */
int line_reader_next(struct line_reader *r, struct line *line, GError **err);

/*
 * Pins the buffer from p (a pointer into a line returned by the last call)
 * onward: later reads keep those bytes in the buffer, so a run of lines can
 * be used as one contiguous block without copying.  The block may move when
 * the buffer is refilled: line_reader_pinned() gives its current address.
 * Unpin when done; the buffer grows to hold the pinned block.
 */
void line_reader_pin(struct line_reader *r, const char *p);
const char *line_reader_pinned(const struct line_reader *r);
void line_reader_unpin(struct line_reader *r);

/*
 * Skips the complete lines, from the current position on, that begin with
 * a space or a tab (perf script's frame lines), without returning them, and
 * returns how many were skipped (line numbers still count them).  Stops
 * before the first line that begins with anything else, before an
 * incomplete last line, and before a line holding a NUL byte, so that
 * line_reader_next() deals with those.  A pinned block keeps them.  This is
 * the hot loop of fp-collapse: it looks at 16 bytes at a time.
 */
size_t line_reader_skip_indented(struct line_reader *r);

/*
 * The scan behind line_reader_skip_indented(), on any bytes: the length of
 * the run of complete lines at the start of base[0..limit) that begin with
 * a space or a tab (up to and including the '\n' before the first line that
 * does not, or the last '\n' in base), and in *lines how many there are.
 * The run also ends before the line holding the first NUL, which the
 * caller then reads as an error: no separate search for NUL is needed.
 */
size_t fk_skip_indented(const char *base, size_t limit, size_t *lines);

/* Where the next line starts (valid until the next call on r). */
const char *line_reader_cursor(const struct line_reader *r);

/*
 * How many bytes from the cursor on are in the buffer now, up to the first
 * NUL: a caller may look at them (to recognise text it has seen before)
 * without reading lines.
 */
size_t line_reader_avail(const struct line_reader *r);

/*
 * Moves the cursor over the next n bytes (n <= line_reader_avail()), which
 * the caller knows to be `lines` complete lines, each ending in '\n';
 * returns the number of the last of them.
 */
uint64_t line_reader_advance(struct line_reader *r, size_t n, size_t lines);

/* The name used in messages: the path, or "<stdin>". */
const char *line_reader_name(const struct line_reader *r);

/* Bytes consumed so far (for throughput figures). */
uint64_t line_reader_bytes(const struct line_reader *r);

/* Closes the file (unless it is stdin or came from line_reader_from_fd). */
void line_reader_free(struct line_reader *r);

#endif
