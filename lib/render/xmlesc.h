/*
 * xmlesc.h - text made safe for XML documents and the scripts inside them.
 *
 *	char buf[XML_ESCAPE_MAX(len)];
 *	size_t n = xml_escape(buf, name, len, XML_ESC_ATTR);
 *	fwrite(buf, 1, n, out);          // "a&lt;b&gt; &amp; &quot;c&quot;"
 *
 * Every function here accepts arbitrary bytes.  Invalid UTF-8 (bad lead
 * bytes, truncated or overlong sequences, surrogates, code points past
 * U+10FFFF) and characters XML 1.0 forbids or that would be invisible in a
 * label (C0 controls including tab and newline, DEL, C1 controls, U+FFFE,
 * U+FFFF) become U+FFFD, one per offending byte or character, so the output
 * is always well-formed and never contains markup the input supplied.
 * Nothing allocates: the caller provides room for the worst case.
 */
#ifndef FOLDKIT_XMLESC_H
#define FOLDKIT_XMLESC_H

#include <stddef.h>
#include <stdint.h>

/* Worst-case output size for n input bytes (an invalid byte as "&#xFFFD;"). */
#define XML_ESCAPE_MAX(n) ((n) * 8 + 1)

#define UTF8_REPLACEMENT 0xFFFDu

/*
 * Decodes the code point at s[*i] (i < len), advances *i past it and
 * returns it; an invalid sequence yields UTF8_REPLACEMENT and advances one
 * byte.  Forbidden characters (see above) are returned as themselves: use
 * xml_char_ok() to test them.
 */
uint32_t utf8_next(const char *s, size_t len, size_t *i);

/* True when c may appear in XML text as itself (not a control character). */
static inline int xml_char_ok(uint32_t c)
{
	if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
		return 0;
	return !(c >= 0xd800 && c <= 0xdfff) && c != 0xfffe && c != 0xffff &&
	       c <= 0x10ffff;
}

/* Writes c as UTF-8 to dst (at most 4 bytes); returns the length. */
size_t utf8_put(char *dst, uint32_t c);

/*
 * Escapes s[0..len) for element text and attribute values: & < > " ' as
 * entities, forbidden and invalid input as U+FFFD.  dst holds
 * XML_ESCAPE_MAX(len) bytes; returns the bytes written (no NUL).
 */
size_t xml_escape(char *dst, const char *s, size_t len);

/*
 * Escapes s[0..len) as the inside of a JavaScript/JSON string literal that
 * sits in a CDATA section: " \ and controls as \ escapes, < > & as \u003c
 * \u003e \u0026 (so neither "]]>" nor "</script" can appear), U+2028 and
 * U+2029 as \u escapes, invalid UTF-8 as \ufffd.  Same buffer rule.
 */
size_t js_escape(char *dst, const char *s, size_t len);

/*
 * Makes s[0..len) safe inside an XML comment: escaped as by xml_escape(),
 * then a space goes between two '-' and after a final one (so "--" cannot
 * end the comment early).  Same buffer rule.
 */
size_t xml_comment_escape(char *dst, const char *s, size_t len);

/*
 * The same three, writing only ASCII, for documents declared in another
 * encoding: other characters become "&#xHHHH;" references, \u escapes
 * (surrogate pairs past U+FFFF), and '?' in comments.
 */
size_t xml_escape_ascii(char *dst, const char *s, size_t len);
size_t js_escape_ascii(char *dst, const char *s, size_t len);
size_t xml_comment_escape_ascii(char *dst, const char *s, size_t len);

/* The number of characters (code points, invalid bytes counting one). */
size_t utf8_length(const char *s, size_t len);

/* The byte offset of the n-th character of s (len if there are fewer). */
size_t utf8_offset(const char *s, size_t len, size_t n);

#endif
