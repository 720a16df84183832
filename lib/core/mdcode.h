/*
 * mdcode.h - names from profiled programs as Markdown code spans.
 *
 *	GString *out = g_string_new(NULL);
 *	fk_md_code(out, "a|b`c", 5, true);
 *	// out is now "``a\|b`c``": a span fenced by one backtick more than
 *	// the longest run in the name, '|' escaped for a table cell
 *
 * Inside a code span Markdown interprets neither HTML nor emphasis, so no
 * frame or process name can inject markup or script.  Control characters
 * and invalid UTF-8 first become the text "\xNN" (core/textesc.h), so a
 * name can neither break its line nor a table; the fence is one backtick
 * longer than the longest run of backticks in the name, with a space
 * inside it where the name starts or ends with a backtick (or with a blank
 * at both ends, which CommonMark would strip); with table, '|' is written
 * "\|", as GitHub's tables require.  An empty name is "*(empty)*".
 */
#ifndef FOLDKIT_MDCODE_H
#define FOLDKIT_MDCODE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* Appends s[0..len) to out as a code span, escaped as above. */
void fk_md_code(GString *out, const char *s, size_t len, bool table);

#endif
