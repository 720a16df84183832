/*
 * stackrecords.h - a streaming reader for stacks printed one frame a line,
 * leaf first, each ended by a line holding only its count: DTrace's
 * aggregations (`@[ustack()] = count()`), SystemTap's print_stack() with a
 * printf of the count, ktap's backtraces.
 *
 *	struct stack_records_opts o = { .dtrace_header = true };
 *	struct stack_records *r = stack_records_open("out.stacks", &o, skips, &err);
 *	struct stack_record rec;
 *	while ((rc = stack_records_next(r, &rec, &err)) > 0)
 *		name_and_count(rec.raw, rec.len, rec.count);
 *	if (rc < 0)
 *		report(err);            // "out.stacks:12: ..."
 *	stack_records_free(r);
 *
 *	              libc.so.1`__priocntlset+0xa          <- rec.raw starts here
 *	              mysqld`handle_one_connection+0x1a6
 *	              libc.so.1`_lwp_start                 <- and ends after this
 *	             4884                                  <- rec.count
 *
 * A count line is blanks, digits and blanks ("\t5\t" from ktap is one,
 * which stackcollapse.pl needs sed(1) for); blank lines are ignored, also
 * inside a record, where DTrace separates stack() from ustack() with one.
 * Every other line is a frame, whatever it holds: the caller names them.
 *
 * With dtrace_header, the lines before the first blank line are DTrace's
 * header ("CPU     ID                    FUNCTION:NAME" and the probe that
 * ended the run), and are skipped, unless they end in a count line: then
 * the input has no header (dtrace -q, ktap) and they are the first record.
 * (stackcollapse.pl skips three lines, header or not.)
 *
 * Counted in the skip_log, never folded: a count line with no frames
 * before it ("count without a stack"), a negative count (DTrace's sum()
 * can print one) or one above 2^64-1, and frames the input ends before
 * counting.  Errors: a NUL byte, a record over 256 MiB (linereader.h), and
 * a last line without '\n' (FK_ERROR_TRUNCATED: "12" may be the start of
 * "123"); the records before an error are returned first.
 */
#ifndef FOLDKIT_STACKRECORDS_H
#define FOLDKIT_STACKRECORDS_H

#include "collapse/stackcache.h"
#include "core/count.h"
#include "core/skiplog.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct stack_records_opts {
	bool dtrace_header;	/* skip a leading DTrace header block */
};

struct stack_record {
	const char *raw;	/* the frame lines, first through last, each
				   with its '\n' (and '\r' if CRLF); blank
				   lines between them included */
	size_t len;
	fk_count count;
	const char *file;	/* the reader's name for the input */
	uint64_t lineno;	/* the first frame's line */
};

struct stack_records;

/*
 * Opens path ("-" or NULL: standard input); skips and opts must outlive
 * the reader.  NULL with *err set when it cannot be opened.
 */
struct stack_records *stack_records_open(const char *path,
					 const struct stack_records_opts *opts,
					 struct skip_log *skips, GError **err);

/*
 * Returns 1 and fills *rec (valid until the next call), 0 at the end, or
 * -1 with *err set.
 */
int stack_records_next(struct stack_records *r, struct stack_record *rec,
		       GError **err);

void stack_records_free(struct stack_records *r);

/*
 * Calls fn on each frame line of raw[0..len), last line first (root first
 * for these leaf-first records), with the line's leading and trailing
 * blanks removed; blank lines are left out.
 */
void stack_records_foreach_root_first(const char *raw, size_t len,
				      void (*fn)(const char *s, size_t n, void *data),
				      void *data);

/*
 * The whole collapse of one input: every record of path, its frame lines
 * (blanks trimmed) named by the profiler's rules (dtrace.h, stap.h)
 * through sc, root first and joined by ';', counted into sc's table.
 * Returns 0, or -1 with *err set (after folding the records before the
 * error).
 */
int stack_records_collapse(const char *path, const struct stack_records_opts *opts,
			   struct skip_log *skips, struct stack_cache *sc,
			   const struct stack_frame_rules *rules, GError **err);

#endif
