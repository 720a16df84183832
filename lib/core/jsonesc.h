/*
 * jsonesc.h - names from profiled programs as JSON strings.
 *
 *	GString *out = g_string_new(NULL);
 *	bool replaced = fk_json_string(out, name, len);
 *	// name "a\"b\x01\xff" is now "\"a\\\"b\\u0001\xef\xbf\xbd\"":
 *	// the quoted JSON string "a\"b\u0001" followed by U+FFFD
 *
 * The output is always a well-formed JSON string literal, quotes included,
 * in UTF-8, whatever the bytes: '"' and '\' are escaped, control
 * characters (U+0000-U+001F, U+007F-U+009F) become \u00XX escapes, as do
 * U+2028 and U+2029 (line breaks to JavaScript parsers older than ES2019),
 * so a name can neither end the string nor break a line.  JSON cannot hold
 * bytes that are not UTF-8: each byte of an invalid sequence (a stray
 * continuation byte, a truncated or overlong form, a surrogate, a code
 * point past U+10FFFF) becomes U+FFFD, and the function returns true so
 * the caller can say that names were changed.  Valid UTF-8 is copied as
 * it is.
 */
#ifndef FOLDKIT_JSONESC_H
#define FOLDKIT_JSONESC_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* Appends s[0..len) as a quoted JSON string; true if U+FFFD replaced bytes. */
bool fk_json_string(GString *out, const char *s, size_t len);

/*
 * Appends s[0..len) unescaped but as valid UTF-8 (for formats whose
 * strings must be UTF-8, such as protocol buffers): each byte of an
 * invalid sequence, and each NUL byte, becomes U+FFFD; returns true if
 * any did.
 */
bool fk_utf8_fix(GString *out, const char *s, size_t len);

/* True when s[0..len) is valid UTF-8 without NUL bytes. */
bool fk_utf8_ok(const char *s, size_t len);

#endif
