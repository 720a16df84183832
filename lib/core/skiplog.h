/*
 * skiplog.h - the record of input lines a tool skipped, so that nothing is
 * dropped silently.
 *
 *	struct skip_log *log = skip_log_new();
 *	skip_log_add(log, "in.folded", 12, "missing count");
 *	...
 *	if (skip_log_total(log)) {
 *		char *s = skip_log_summary(log);   // "2 lines skipped: 1 missing
 *		warn("%s", s);                     //  count, 1 negative count"
 *		g_free(s);
 *	}
 *	skip_log_free(log);
 *
 * Every skip is counted by reason.  The first SKIP_LOG_KEEP skips are also
 * kept with their file and line for `-v`; past that only the counts grow,
 * so memory stays bounded whatever the input.  Reasons must be string
 * literals (or otherwise outlive the log): they are stored by pointer and
 * grouped by pointer identity.
 */
#ifndef FOLDKIT_SKIPLOG_H
#define FOLDKIT_SKIPLOG_H

#include <glib.h>
#include <stdint.h>

#define SKIP_LOG_KEEP 10000

struct skip_log;

struct skip_log *skip_log_new(void);
void skip_log_free(struct skip_log *log);

/* Counts one skipped line; file is copied (once per distinct file). */
void skip_log_add(struct skip_log *log, const char *file, uint64_t line,
		  const char *reason);

uint64_t skip_log_total(const struct skip_log *log);

/*
 * "N lines skipped: A reason1, B reason2" (reasons in first-seen order), or
 * NULL when nothing was skipped.  Free with g_free().  what replaces "lines"
 * when not NULL (e.g. "samples").
 */
char *skip_log_summary(const struct skip_log *log, const char *what);

/*
 * Calls fn for each kept skip in input order; returns how many skips were
 * not kept (beyond SKIP_LOG_KEEP).
 */
uint64_t skip_log_foreach(const struct skip_log *log,
			  void (*fn)(const char *file, uint64_t line,
				     const char *reason, void *data),
			  void *data);

#endif
