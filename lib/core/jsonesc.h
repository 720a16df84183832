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
 * it is.  So two names stay two JSON strings unless they differ only in
 * invalid bytes: byte 0x7f is "\u007f", the four characters "\x7f" are
 * "\\x7f".  Every JSON writer in foldkit uses this one escaper.
 *
 * With FK_JSON_HTML, '<', '>' and '&' are \u escapes too, so that the
 * document can also sit inside an HTML <script> element ("</script>"
 * cannot appear in it).
 */
#ifndef FOLDKIT_JSONESC_H
#define FOLDKIT_JSONESC_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

enum {
	FK_JSON_HTML = 1 << 0,	/* also '<' '>' '&' as \u escapes */
};

/*
 * Appends s[0..len) as a quoted JSON string, escaped as above; true if
 * U+FFFD replaced bytes.
 */
bool fk_json_escape(GString *out, const char *s, size_t len, unsigned flags);

/* fk_json_escape() without flags. */
static inline bool fk_json_string(GString *out, const char *s, size_t len)
{
	return fk_json_escape(out, s, len, 0);
}

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
