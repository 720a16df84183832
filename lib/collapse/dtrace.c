#include "collapse/dtrace.h"

#include "collapse/framename.h"

#include <string.h>

size_t dtrace_offset_start(const char *s, size_t n)
{
	bool sized;
	size_t i;

	/* "sym+0x10/0x20 [module]": the kernel's %pS, as ktap prints it */
	if (n && s[n - 1] == ']') {
		const char *b = memrchr(s, '[', n);
		if (b && b > s && b[-1] == ' ') {
			i = frame_text_offset(s, (size_t)(b - 1 - s), false, &sized);
			if (i != SIZE_MAX && sized)
				return i;
		}
	}
	i = frame_text_offset(s, n, false, &sized);
	return i != SIZE_MAX ? i : n;
}

static struct fk_str dtrace_key(const char *s, size_t n)
{
	return (struct fk_str){ s, dtrace_offset_start(s, n) };
}

static void dtrace_name(GString *out, const char *s, size_t n)
{
	frame_name_append_text(out, s, n, FRAME_TEXT_ARROWS | FRAME_TEXT_SCOPED_ARGS |
				     FRAME_TEXT_JAVA);
}

const struct stack_frame_rules dtrace_frames = { dtrace_key, dtrace_name };

void dtrace_frame_name(GString *out, const char *s, size_t n)
{
	struct fk_str k = dtrace_key(s, n);

	dtrace_name(out, k.s, k.len);
}
