#include "core/jsonesc.h"

#include <string.h>

/* printable ASCII but '"' and '\' (and for HTML '<' '>' '&'): copied as runs */
static inline bool plain(unsigned char c, unsigned flags)
{
	if ((flags & FK_JSON_HTML) && (c == '<' || c == '>' || c == '&'))
		return false;
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

static void put_u(GString *out, gunichar c)
{
	static const char hex[] = "0123456789abcdef";
	char b[6] = { '\\', 'u', hex[c >> 12 & 15], hex[c >> 8 & 15],
		      hex[c >> 4 & 15], hex[c & 15] };

	g_string_append_len(out, b, 6);
}

bool fk_json_escape(GString *out, const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	bool replaced = false;
	size_t i = 0;

	g_string_append_c(out, '"');
	while (i < len) {
		size_t run = i;
		gunichar c;

		while (run < len && plain(p[run], flags))
			run++;
		if (run > i) {
			g_string_append_len(out, s + i, (gssize)(run - i));
			i = run;
			continue;
		}
		if (p[i] == '"' || p[i] == '\\') {
			g_string_append_c(out, '\\');
			g_string_append_c(out, (char)p[i++]);
			continue;
		}
		if (p[i] < 0x80) {		/* C0 controls, DEL, HTML's < > & */
			put_u(out, p[i++]);
			continue;
		}
		/* g_utf8_get_char_validated rejects overlong forms, surrogates
		 * and code points past U+10FFFF */
		c = g_utf8_get_char_validated(s + i, (gssize)(len - i));
		if (c == (gunichar)-1 || c == (gunichar)-2) {
			g_string_append(out, "\xef\xbf\xbd");
			replaced = true;
			i++;
			continue;
		}
		if (c <= 0x9f || c == 0x2028 || c == 0x2029)
			put_u(out, c);
		else
			g_string_append_len(out, s + i,
					    g_utf8_next_char(s + i) - (s + i));
		i = (size_t)(g_utf8_next_char(s + i) - s);
	}
	g_string_append_c(out, '"');
	return replaced;
}

bool fk_utf8_ok(const char *s, size_t len)
{
	const char *end;

	return g_utf8_validate_len(s, len, &end) && !memchr(s, '\0', len);
}

bool fk_utf8_fix(GString *out, const char *s, size_t len)
{
	bool replaced = false;
	size_t i = 0;

	while (i < len) {
		const char *end;
		size_t run;

		/* the longest valid prefix, up to any NUL */
		g_utf8_validate_len(s + i, len - i, &end);
		run = (size_t)(end - (s + i));
		g_string_append_len(out, s + i, (gssize)run);
		i += run;
		if (i < len) {
			g_string_append(out, "\xef\xbf\xbd");
			replaced = true;
			i++;
		}
	}
	return replaced;
}
