#include "render/xmlesc.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

uint32_t utf8_next(const char *str, size_t len, size_t *i)
{
	const unsigned char *s = (const unsigned char *)str + *i;
	size_t left = len - *i;
	uint32_t c = s[0], min;
	int n;

	if (c < 0x80) {
		*i += 1;
		return c;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 1; c &= 0x1f; min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 2; c &= 0x0f; min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 3; c &= 0x07; min = 0x10000;
	} else {
		*i += 1;
		return UTF8_REPLACEMENT;
	}
	if ((size_t)n >= left)
		goto bad;
	for (int k = 1; k <= n; k++) {
		if ((s[k] & 0xc0) != 0x80)
			goto bad;
		c = c << 6 | (s[k] & 0x3f);
	}
	/* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		goto bad;
	*i += (size_t)n + 1;
	return c;
bad:
	*i += 1;
	return UTF8_REPLACEMENT;
}

size_t utf8_put(char *dst, uint32_t c)
{
	unsigned char *d = (unsigned char *)dst;

	if (c < 0x80) {
		d[0] = (unsigned char)c;
		return 1;
	}
	if (c < 0x800) {
		d[0] = (unsigned char)(0xc0 | c >> 6);
		d[1] = (unsigned char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		d[0] = (unsigned char)(0xe0 | c >> 12);
		d[1] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
		d[2] = (unsigned char)(0x80 | (c & 0x3f));
		return 3;
	}
	d[0] = (unsigned char)(0xf0 | c >> 18);
	d[1] = (unsigned char)(0x80 | (c >> 12 & 0x3f));
	d[2] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
	d[3] = (unsigned char)(0x80 | (c & 0x3f));
	return 4;
}

/* Bytes that can be copied as they are: printable ASCII but the specials. */
static inline int plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '&' && c != '<' && c != '>' &&
	       c != '"' && c != '\'';
}

static char *put_ref(char *d, uint32_t c)
{
	return d + sprintf(d, "&#x%X;", (unsigned)c);
}

static size_t escape_xml(char *dst, const char *s, size_t len, bool ascii)
{
	char *d = dst;
	size_t i = 0;

	while (i < len) {
		unsigned char b = (unsigned char)s[i];
		uint32_t c;

		if (plain(b)) {
			*d++ = (char)b;
			i++;
			continue;
		}
		switch (b) {
		case '&': memcpy(d, "&amp;", 5); d += 5; i++; continue;
		case '<': memcpy(d, "&lt;", 4); d += 4; i++; continue;
		case '>': memcpy(d, "&gt;", 4); d += 4; i++; continue;
		case '"': memcpy(d, "&quot;", 6); d += 6; i++; continue;
		case '\'': memcpy(d, "&#39;", 5); d += 5; i++; continue;
		}
		c = utf8_next(s, len, &i);
		if (!xml_char_ok(c))
			c = UTF8_REPLACEMENT;
		if (ascii)
			d = put_ref(d, c);
		else
			d += utf8_put(d, c);
	}
	return (size_t)(d - dst);
}

size_t xml_escape(char *dst, const char *s, size_t len)
{
	return escape_xml(dst, s, len, false);
}

size_t xml_escape_ascii(char *dst, const char *s, size_t len)
{
	return escape_xml(dst, s, len, true);
}

static char *put_u(char *d, uint32_t c)
{
	static const char hex[] = "0123456789abcdef";

	*d++ = '\\';
	*d++ = 'u';
	*d++ = hex[c >> 12 & 15];
	*d++ = hex[c >> 8 & 15];
	*d++ = hex[c >> 4 & 15];
	*d++ = hex[c & 15];
	return d;
}

static size_t escape_js(char *dst, const char *s, size_t len, bool ascii)
{
	char *d = dst;
	size_t i = 0;

	while (i < len) {
		unsigned char b = (unsigned char)s[i];
		uint32_t c;

		if (b == '"' || b == '\\') {
			*d++ = '\\';
			*d++ = (char)b;
			i++;
			continue;
		}
		if (b == '<' || b == '>' || b == '&' || b == '\'') {
			d = put_u(d, b);
			i++;
			continue;
		}
		if (b >= 0x20 && b < 0x7f) {
			*d++ = (char)b;
			i++;
			continue;
		}
		c = utf8_next(s, len, &i);
		if (!xml_char_ok(c) || c == UTF8_REPLACEMENT) {
			d = put_u(d, UTF8_REPLACEMENT);
		} else if (c == 0x2028 || c == 0x2029 || (ascii && c < 0x10000)) {
			d = put_u(d, c);
		} else if (ascii) {	/* a UTF-16 surrogate pair */
			d = put_u(d, 0xd800 + ((c - 0x10000) >> 10));
			d = put_u(d, 0xdc00 + ((c - 0x10000) & 0x3ff));
		} else {
			d += utf8_put(d, c);
		}
	}
	return (size_t)(d - dst);
}

size_t js_escape(char *dst, const char *s, size_t len)
{
	return escape_js(dst, s, len, false);
}

size_t js_escape_ascii(char *dst, const char *s, size_t len)
{
	return escape_js(dst, s, len, true);
}

static size_t escape_comment(char *dst, const char *s, size_t len, bool ascii)
{
	char *tmp = g_malloc(XML_ESCAPE_MAX(len));
	size_t n = xml_escape(tmp, s, len), o = 0;

	for (size_t k = 0; k < n; k++) {
		if (tmp[k] == '-' && o && dst[o - 1] == '-') {
			dst[o++] = ' ';		/* "--" would end the comment */
			dst[o++] = '-';
		} else if (ascii && (unsigned char)tmp[k] >= 0x80) {
			/* no character references in comments */
			size_t i = k;

			utf8_next(tmp, n, &i);
			dst[o++] = '?';
			k = i - 1;
		} else {
			dst[o++] = tmp[k];
		}
	}
	/* a comment must not end in '-' either: "-->" would read "--" */
	if (o && dst[o - 1] == '-')
		dst[o++] = ' ';
	g_free(tmp);
	return o;
}

size_t xml_comment_escape(char *dst, const char *s, size_t len)
{
	return escape_comment(dst, s, len, false);
}

size_t xml_comment_escape_ascii(char *dst, const char *s, size_t len)
{
	return escape_comment(dst, s, len, true);
}

size_t utf8_length(const char *s, size_t len)
{
	size_t i = 0, n = 0;

	while (i < len) {
		if ((unsigned char)s[i] < 0x80)
			i++;
		else
			utf8_next(s, len, &i);
		n++;
	}
	return n;
}

size_t utf8_offset(const char *s, size_t len, size_t n)
{
	size_t i = 0;

	while (i < len && n--) {
		if ((unsigned char)s[i] < 0x80)
			i++;
		else
			utf8_next(s, len, &i);
	}
	return i;
}
