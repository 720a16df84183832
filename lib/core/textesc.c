#include "core/textesc.h"

#include <string.h>

/*
 * Length of the valid, printable UTF-8 sequence at s (at most n bytes), or
 * 0 when s starts a control character or a byte that must be escaped.
 */
static size_t printable_run(const unsigned char *s, size_t n, unsigned flags)
{
	gunichar c;
	const gchar *end;

	if (s[0] < 0x80) {
		if (s[0] < 0x20 || s[0] == 0x7f)
			return 0;
		if (s[0] == '\\' && (flags & FK_ESC_BACKSLASH))
			return 0;
		return 1;
	}
	/* g_utf8_get_char_validated rejects overlong forms and surrogates */
	c = g_utf8_get_char_validated((const gchar *)s, (gssize)n);
	if (c == (gunichar)-1 || c == (gunichar)-2 || (c >= 0x80 && c <= 0x9f))
		return 0;
	end = g_utf8_next_char((const gchar *)s);
	return (size_t)(end - (const gchar *)s);
}

void fk_text_escape(GString *out, const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t run = printable_run(p + i, len - i, flags);

		if (run) {
			g_string_append_len(out, s + i, (gssize)run);
			i += run;
		} else if (p[i] == '\\') {
			g_string_append(out, "\\\\");
			i++;
		} else {
			/* one escape per byte of an invalid or control sequence */
			size_t n = p[i] < 0x80 ? 1 : 0;

			if (!n) {
				gunichar c = g_utf8_get_char_validated(s + i, (gssize)(len - i));

				n = (c >= 0x80 && c <= 0x9f) ? 2 : 1;
			}
			for (size_t k = 0; k < n; k++)
				g_string_append_printf(out, "\\x%02x", p[i + k]);
			i += n;
		}
	}
}

char *fk_text_escape_dup(const char *s, size_t len, unsigned flags)
{
	GString *out = g_string_sized_new(len + 1);

	fk_text_escape(out, s, len, flags);
	return g_string_free(out, FALSE);
}

bool fk_text_is_safe(const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t run = printable_run(p + i, len - i, flags);

		if (!run)
			return false;
		i += run;
	}
	return true;
}
