/*
 * tool.h - what every foldkit filter's main() shares: messages prefixed
 * with the tool's name, option parsing with GOptionContext, checked output.
 *
 *	int main(int argc, char **argv)
 *	{
 *		tool_init("kfold", argc, argv);
 *		...parse options with tool_parse()...
 *		...call lib/...
 *		return tool_finish(status);     // flushes and checks stdout
 *	}
 *
 * Messages go to stderr as "TOOL: message" (lowercase, no full stop).
 */
#ifndef FOLDKIT_TOOL_H
#define FOLDKIT_TOOL_H

#include "core/exitcode.h"
#include "core/folded.h"
#include "core/foldtable.h"
#include "core/skiplog.h"

#include <glib.h>
#include <stdbool.h>

#ifndef FOLDKIT_VERSION
#define FOLDKIT_VERSION "0.1.0"
#endif

/* Records the tool name and gives stdout a large buffer. */
void tool_init(const char *name);

const char *tool_name(void);

/* "TOOL: message" on stderr. */
void tool_warn(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

/* Prints err->message as a warning and frees it. */
void tool_warn_error(GError *err);

/*
 * Parses argv with entries; handles --version (prints "TOOL VERSION") and
 * usage errors (message, then exit FK_EXIT_USAGE); summary and description
 * go into --help.  Leaves the operands in argc and argv.
 */
void tool_parse(int *argc, char ***argv, const char *params,
		const char *summary, const char *description,
		const GOptionEntry *entries);

/* Exits with FK_EXIT_USAGE after "TOOL: message". */
void tool_usage_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2) G_GNUC_NORETURN;

/*
 * A size option's value: a number of bytes, with K, M, G or T for
 * 1024^1..4 ("512M"); 0 gives UINT64_MAX (no limit).  A usage error
 * naming option for anything else.
 */
uint64_t tool_size_arg(const char *option, const char *value);

/*
 * Reports skipped lines: one summary line, and with verbose every kept
 * skip as "TOOL: FILE:LINE: reason".
 */
void tool_report_skips(const struct skip_log *skips, bool verbose);

/* The same for records that are not lines: what is "samples", say. */
void tool_report_skipped(const struct skip_log *skips, bool verbose,
			 const char *what);

/*
 * Reports the lines skipped because their number of counts differs from
 * the profile's (folded_shape_note()); returns FK_EXIT_FAILURE if there
 * were any (samples are missing from the output), else FK_EXIT_OK.
 */
int tool_report_shape(const struct folded_shape *sh);

/*
 * The input loop of the folded-stack filters: reads paths[0..n) in order as
 * one profile (standard input when n is 0; "-" is standard input), calling
 * fn for every folded line.  A file that cannot be read, or that fails
 * part way, is reported and the others are still read; the result is then
 * FK_EXIT_FAILURE, else FK_EXIT_OK.  The files share one shape: lines whose
 * number of counts differs from the first line's are skipped and reported
 * (tool_report_shape()), and the result is FK_EXIT_FAILURE.  With sh not
 * NULL, the shape is the caller's (it may preset sh->ncounts), and the
 * caller reports its skipped lines.  Regular files are mapped: when fn's
 * stable is true, fl->stack stays valid until the readers, returned in
 * *inputs, are freed with g_ptr_array_free(*inputs, TRUE) — after the
 * output that refers to them is written.
 */
typedef void (*tool_folded_fn)(const struct folded_line *fl, bool stable,
			       void *data);
int tool_read_folded(char **paths, int n, struct skip_log *skips,
		     struct folded_shape *sh, tool_folded_fn fn, void *data,
		     GPtrArray **inputs);

/* The name of the file tool_read_folded() is reading, for fn's messages. */
const char *tool_folded_name(void);

/*
 * Reads paths[0..n) as tool_read_folded() does into the table t (stacks
 * by reference where the input is mapped, so t must be freed before
 * *inputs).  With single, the output has one count per stack: a
 * differential line ("STACK COUNT1 COUNT2") is an error, reported with
 * its file and line (the first one, and how many more), and the result
 * is FK_EXIT_FAILURE.
 */
int tool_read_table(char **paths, int n, struct skip_log *skips,
		    struct fold_table *t, bool single, GPtrArray **inputs);

/*
 * The input loop of the collapsers: calls fn for paths[0..n) in order
 * (standard input when n is 0; "-" is standard input).  fn returns 0, or
 * -1 with *err set; the error is reported and the other files are still
 * read.  Returns FK_EXIT_FAILURE if any failed, else FK_EXIT_OK.
 */
typedef int (*tool_input_fn)(const char *path, void *data, GError **err);
int tool_read_inputs(char **paths, int n, tool_input_fn fn, void *data);

/*
 * Adds stack s[0..n) with fl's counts to t: by reference when s is the
 * line's own text from a mapped file (no copy), else copied.
 */
static inline void tool_table_add(struct fold_table *t, const struct folded_line *fl,
				  bool stable, const char *s, size_t n)
{
	fold_table_add2_soon(t, s, n, fl->count[0], fl->count[1], stable && s == fl->stack);
}

/*
 * Whether a tool about to return from main() frees its big structures
 * (the stack table, the mapped inputs) first.  Not in a plain build: the
 * kernel takes back all of a process's memory and mappings at once when
 * it exits, and freeing them one by one before cost kfold --kernel ~3% of
 * its time.  Under AddressSanitizer, yes: its leak check wants them freed
 * (and so the sanitizer tests run the freeing code).
 */
static inline bool tool_frees_at_exit(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return true;
#else
	return false;
#endif
#else
	return false;
#endif
}

/*
 * Flushes stdout and returns status, or FK_EXIT_FAILURE after a message if
 * a write failed (a full disk, a closed pipe).
 */
int tool_finish(int status);

#endif
