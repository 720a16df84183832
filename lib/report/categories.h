/*
 * categories.h - fold-report's categories: named regexes over frame names
 * ("locks", "allocation", ...), each reported as the share of the counts
 * in stacks that pass through a frame it matches.
 *
 *	GError *err = NULL;
 *	struct category_list *l = category_list_new(true);   // the defaults
 *	if (category_list_read(l, "my.categories", &err) < 0)
 *		...          // "my.categories:3: expected NAME<TAB>REGEX"
 *	for (size_t i = 0; i < category_list_size(l); i++)
 *		if (category_list_match(l, i, "pthread_mutex_lock", 18))
 *			...  // "locks" matches
 *	category_list_free(l);
 *
 * A categories file holds one category a line, "NAME<TAB>REGEX" (the
 * regex is PCRE, as in fgrep-stacks, matched against each frame name, and
 * runs to the end of the line); blank lines and lines starting with '#'
 * are ignored.  A NAME already in the list (a default, or an earlier line)
 * gets the new REGEX in its place; a new NAME is added at the end.  The
 * file is untrusted text: a line that is not "NAME<TAB>REGEX", an empty
 * name or regex, a bad regex or more than CATEGORY_LIST_MAX categories is
 * an error naming the file and line, and the list is left as it was
 * before that line.  Names and regexes are copied; the list owns them.
 */
#ifndef FOLDKIT_REPORT_CATEGORIES_H
#define FOLDKIT_REPORT_CATEGORIES_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CATEGORY_LIST_MAX 1000

/* The regex of the default "logging" category (and of FRAME_LOG). */
#define CATEGORY_LOGGING_RE \
	"spdlog::|google::LogMessage|google::LogDestination|log4cxx::|log4cplus::" \
	"|log4cpp::|quill::|boost::log::|plog::|el::base::|^g_log|syslog" \
	"|(^|::)[A-Za-z_0-9]*Logg(er|ing)[A-Za-z_0-9]*(<[^:]*>)?::" \
	"|(^|::)(log|logger|logging|Log)::"

struct category_list;

/* An empty list, or with defaults the built-in categories (listed in
 * categories.c and docs/fold-report.1).  Free with category_list_free(). */
struct category_list *category_list_new(bool defaults);
void category_list_free(struct category_list *l);

/*
 * Reads a categories file (path "-" is standard input) into l as above.
 * Returns 0, or -1 with *err set ("FILE:LINE: ...", or the file's own
 * open or read error).
 */
int category_list_read(struct category_list *l, const char *path, GError **err);

/*
 * Adds or replaces one category, as a file's line would; file and line
 * only name the place in an error.  Returns 0 or -1 with *err set.
 */
int category_list_set(struct category_list *l, const char *name, size_t namelen,
		      const char *regex, size_t regexlen, const char *file,
		      uint64_t line, GError **err);

size_t category_list_size(const struct category_list *l);

/* The i-th name and regex (NUL-terminated, owned by the list). */
const char *category_list_name(const struct category_list *l, size_t i);
const char *category_list_regex(const struct category_list *l, size_t i);

/* True if the i-th category's regex matches the frame s[0..len). */
bool category_list_match(const struct category_list *l, size_t i,
			 const char *s, size_t len);

#endif
