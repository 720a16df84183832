/*
 * textesc.h - names made safe to show a human: on a terminal (stderr
 * notes) and in tab-separated files (the plugin's index.tsv).
 *
 *	GString *msg = g_string_new("no samples for ");
 *	fk_text_escape(msg, comm, strlen(comm), 0);
 *	// comm "a\033[2Jb" is now the 13 characters "a\x1b[2Jb"
 *
 * Process, thread, frame and event names come from the profiled programs,
 * which choose them: a name holding ESC sequences could clear the screen,
 * retitle the window or forge a line of output when printed raw.  So every
 * control character (bytes 0x00-0x1f and 0x7f, and the C1 controls
 * U+0080-U+009F written in UTF-8) and every byte that is not part of valid
 * UTF-8 becomes "\xNN", one per byte; printable text, multi-byte
 * characters included, is kept as it is.  With FK_ESC_BACKSLASH a
 * backslash becomes "\\" as well, so that the escaping can be undone
 * exactly (for files read by programs).
 */
#ifndef FOLDKIT_TEXTESC_H
#define FOLDKIT_TEXTESC_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

enum {
	FK_ESC_BACKSLASH = 1 << 0,	/* also '\' -> "\\" */
};

/* Appends s[0..len) to out, escaped as above. */
void fk_text_escape(GString *out, const char *s, size_t len, unsigned flags);

/* The same into a new string; free it with g_free(). */
char *fk_text_escape_dup(const char *s, size_t len, unsigned flags);

/* True if s[0..len) would be written unchanged (with the same flags). */
bool fk_text_is_safe(const char *s, size_t len, unsigned flags);

#endif
