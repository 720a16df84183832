#include "collapse/stap.h"

#include "collapse/framename.h"

#include <string.h>

/* The length of a leading "0x<hex>" in s[0..n), or 0. */
static size_t address_len(const char *s, size_t n)
{
	size_t i = 2;

	if (n < 3 || s[0] != '0' || s[1] != 'x')
		return 0;
	while (i < n && g_ascii_isxdigit(s[i]))
		i++;
	return i > 2 ? i : 0;
}

/*
 * Where the frame's offset starts: "+0xOFF[/0xSIZE]" at the end, before
 * " [module]", or inside the brackets of an address without a symbol
 * ("0x41e1a9 [perl+0x1e1a9/0x20000]"); all of them may be followed by
 * " (inexact)".  n when there is no offset.
 */
static size_t cut_at(const char *s, size_t n)
{
	size_t e = n, i;
	const char *b;
	bool sized;

	if (e >= 10 && memcmp(s + e - 10, " (inexact)", 10) == 0)
		e -= 10;
	if ((i = frame_text_offset(s, e, false, &sized)) != SIZE_MAX)
		return i;
	if (!e || s[e - 1] != ']')
		return n;
	if ((i = frame_text_offset(s, e - 1, false, &sized)) != SIZE_MAX)
		return i;	/* in the brackets: the module stays */
	b = memrchr(s, '[', e);
	if (b && b > s && b[-1] == ' ' &&
	    (i = frame_text_offset(s, (size_t)(b - 1 - s), false, &sized)) != SIZE_MAX)
		return i;
	return n;
}

/* The part that names the frame: the symbol, without the offset on. */
static struct fk_str stap_key(const char *s, size_t n)
{
	size_t a = address_len(s, n);

	n = cut_at(s, n);
	/* "0x3880ef2877 : socket": the symbol is the name */
	if (a && n >= a + 3 && memcmp(s + a, " : ", 3) == 0)
		return (struct fk_str){ s + a + 3, n - a - 3 };
	return (struct fk_str){ s, n };
}

static void stap_name(GString *out, const char *s, size_t n)
{
	frame_name_append_text(out, s, n, 0);
}

const struct stack_frame_rules stap_frames = { stap_key, stap_name };

void stap_frame_name(GString *out, const char *s, size_t n)
{
	struct fk_str k = stap_key(s, n);

	stap_name(out, k.s, k.len);
}
