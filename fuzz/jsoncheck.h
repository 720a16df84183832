/*
 * jsoncheck.h - what the targets that write JSON and Markdown check: the
 * JSON parses (a strict RFC 8259 syntax check, enough to trust a writer:
 * fuzz_json_end() returns where the value ends, or NULL), and in Markdown
 * every '<' and '>' is inside a code span (fuzz_markdown_line()).
 * (fuzz/report.c has its own copies.)
 */
#ifndef FOLDKIT_FUZZ_JSONCHECK_H
#define FOLDKIT_FUZZ_JSONCHECK_H

#include "fuzz.h"

#include <glib.h>


static inline const char *fuzz_json_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static inline const char *fuzz_json_value(const char *p, int depth);

static inline const char *fuzz_json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (;;) {
		unsigned char c = (unsigned char)*p++;

		if (c == '"')
			return p;
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			c = (unsigned char)*p++;
			if (c == 'u') {
				for (int i = 0; i < 4; i++)
					if (!g_ascii_isxdigit(*p++))
						return NULL;
			} else if (!strchr("\"\\/bfnrt", c) || !c) {
				return NULL;
			}
		}
	}
}

static inline const char *fuzz_json_number(const char *p)
{
	const char *s = p;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (g_ascii_isdigit(*p))
			p++;
	else
		return NULL;
	if (*p == '.') {
		p++;
		if (!g_ascii_isdigit(*p))
			return NULL;
		while (g_ascii_isdigit(*p))
			p++;
	}
	return p > s ? p : NULL;
}

static inline const char *fuzz_json_value(const char *p, int depth)
{
	p = fuzz_json_ws(p);
	if (depth > 16)
		return NULL;
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p = fuzz_json_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				if (!(p = fuzz_json_string(fuzz_json_ws(p))) || *(p = fuzz_json_ws(p)) != ':')
					return NULL;
				p++;
			}
			if (!(p = fuzz_json_value(p, depth + 1)))
				return NULL;
			p = fuzz_json_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return fuzz_json_string(p);
	if (strncmp(p, "null", 4) == 0 || strncmp(p, "true", 4) == 0)
		return p + 4;
	if (strncmp(p, "false", 5) == 0)
		return p + 5;
	return fuzz_json_number(p);
}

/* Every '<' and '>' of a Markdown line is inside a code span. */
static inline void fuzz_markdown_line(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t run = 0, j;

		if (s[i] == '\\' && i + 1 < n && s[i + 1] == '<') {
			i += 2;		/* an escaped '<', as in "\<0.1%" */
			continue;
		}
		if (s[i] != '`') {
			FUZZ_CHECK(s[i] != '<' && s[i] != '>', "markup outside a code span: %.*s",
				   (int)MIN(n, 300), s);
			i++;
			continue;
		}
		while (i + run < n && s[i + run] == '`')
			run++;
		/* the closing fence: the next run of exactly as many backticks */
		for (j = i + run; j < n;) {
			size_t r = 0;

			while (j + r < n && s[j + r] == '`')
				r++;
			if (r == run)
				break;
			j += r ? r : 1;
		}
		FUZZ_CHECK(j < n, "an unclosed code span: %.*s", (int)MIN(n, 300), s);
		i = j + run;
	}
}

#endif
