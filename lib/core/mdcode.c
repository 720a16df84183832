#include "core/mdcode.h"

#include "core/textesc.h"

void fk_md_code(GString *out, const char *s, size_t len, bool table)
{
	GString *t;
	size_t run = 0, longest = 0;
	bool pad;

	if (len == 0) {
		g_string_append(out, "*(empty)*");
		return;
	}
	t = g_string_new(NULL);
	fk_text_escape(t, s, len, 0);
	for (size_t i = 0; i < t->len; i++) {
		run = t->str[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	pad = t->str[0] == '`' || t->str[t->len - 1] == '`' ||
	      (t->str[0] == ' ' && t->str[t->len - 1] == ' ');
	for (size_t i = 0; i <= longest; i++)
		g_string_append_c(out, '`');
	if (pad)
		g_string_append_c(out, ' ');
	for (size_t i = 0; i < t->len; i++) {
		if (table && t->str[i] == '|')
			g_string_append_c(out, '\\');
		g_string_append_c(out, t->str[i]);
	}
	if (pad)
		g_string_append_c(out, ' ');
	for (size_t i = 0; i <= longest; i++)
		g_string_append_c(out, '`');
	g_string_free(t, TRUE);
}
