#include "collapse/framename.h"

#include "core/folded.h"

#include <string.h>

static bool has(const char *s, size_t n, const char *needle)
{
	return g_strstr_len(s, (gssize)n, needle) != NULL;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t l = strlen(suffix);

	return n >= l && memcmp(s + n - l, suffix, l) == 0;
}

/*
 * perf's "[...]" names for mappings of the process itself: code there runs
 * in user space ("[vdso]" holds clock_gettime()), so it is not kernel code
 * although the Perl script's /^\[/ says so.
 */
static bool is_user_map(const char *dso, size_t len)
{
	static const char *const prefixes[] = {
		"[vdso", "[vsyscall]", "[vvar", "[heap]", "[stack", "[anon", "[uprobes]",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(prefixes); i++) {
		size_t l = strlen(prefixes[i]);
		if (len >= l && memcmp(dso, prefixes[i], l) == 0)
			return true;
	}
	return false;
}

/* "vmlinux", "/usr/lib/debug/boot/vmlinux-5.4.0-1.x86_64": the last
 * "vmlinux" followed by nothing but a version's letters, digits and ".-_" */
static bool is_vmlinux(const char *dso, size_t len)
{
	const char *p = NULL;

	for (const char *q = dso; (q = g_strstr_len(q, (gssize)(dso + len - q), "vmlinux")); q++)
		p = q;
	if (!p)
		return false;
	for (p += 7; p < dso + len; p++)
		if (!g_ascii_isalnum(*p) && *p != '.' && *p != '-' && *p != '_')
			return false;
	return true;
}

/* A kernel module's file, possibly compressed as modules are installed. */
static bool is_module(const char *dso, size_t len)
{
	return ends_with(dso, len, ".ko") || ends_with(dso, len, ".ko.xz") ||
	       ends_with(dso, len, ".ko.gz") || ends_with(dso, len, ".ko.zst");
}

bool frame_dso_is_kernel(const char *dso, size_t len, bool user_maps)
{
	if (len == 0 || has(dso, len, "unknown"))
		return false;
	if (dso[0] == '[')
		return user_maps || !is_user_map(dso, len);
	return is_vmlinux(dso, len) || is_module(dso, len);
}

/* Finds PREFIX DIGITS+ [ '-' DIGITS+ ] SUFFIX anywhere in s. */
static bool has_numbered(const char *s, size_t n, const char *prefix,
			 bool two_numbers, const char *suffix)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);

	for (const char *p = s; (p = g_strstr_len(p, (gssize)(s + n - p), prefix)); p++) {
		const char *q = p + pl, *end = s + n;
		const char *d = q;
		while (q < end && is_digit(*q))
			q++;
		if (q == d)
			continue;
		if (two_numbers) {
			if (q >= end || *q != '-')
				continue;
			d = ++q;
			while (q < end && is_digit(*q))
				q++;
			if (q == d)
				continue;
		}
		if ((size_t)(end - q) >= sl && memcmp(q, suffix, sl) == 0)
			return true;
	}
	return false;
}

bool frame_dso_is_jit(const char *dso, size_t len)
{
	return len && (has_numbered(dso, len, "/tmp/perf-", false, ".map") ||
		       has_numbered(dso, len, "/jitted-", true, ".so"));
}

/* "net/http.(*Client).Do": a ".(" with a ")." somewhere after it */
static bool looks_like_go_method(const char *s, size_t n)
{
	const char *p = g_strstr_len(s, (gssize)n, ".(");

	return p && g_strstr_len(p + 2, (gssize)(s + n - p - 2), ").") != NULL;
}

static const char ANON_NS[] = "(anonymous namespace)";

static bool at_anon_ns(const char *s, size_t i, size_t n)
{
	return n - i >= sizeof(ANON_NS) - 1 &&
	       memcmp(s + i, ANON_NS, sizeof(ANON_NS) - 1) == 0;
}

/* Length of the operator token after "operator" at s[i], e.g. "()", "<<=". */
static size_t operator_token(const char *s, size_t i, size_t n)
{
	static const char *const ops[] = {
		"()", "[]", "->*", "->", "<<=", ">>=", "<=>", "<<", ">>", "<=",
		">=", "<", ">", "==", "!=", "&&", "||", "++", "--", "+=", "-=",
		"*=", "/=", "%=", "&=", "|=", "^=", "+", "-", "*", "/", "%",
		"&", "|", "^", "~", "!", "=", ",",
	};
	while (i < n && s[i] == ' ')
		i++;
	for (size_t k = 0; k < G_N_ELEMENTS(ops); k++) {
		size_t l = strlen(ops[k]);
		if (n - i >= l && memcmp(s + i, ops[k], l) == 0)
			return l;
	}
	return 0;
}

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

size_t frame_name_cut_args(char *s, size_t n)
{
	int depth = 0;
	size_t first_paren = SIZE_MAX;

	if (looks_like_go_method(s, n))
		return n;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '(' && at_anon_ns(s, i, n)) {
			i += sizeof(ANON_NS) - 2;
			continue;
		}
		if (c == '(' && first_paren == SIZE_MAX)
			first_paren = i;
		if (c == 'o' && n - i > 8 && memcmp(s + i, "operator", 8) == 0 &&
		    (i == 0 || !word_char(s[i - 1])) && !word_char(s[i + 8])) {
			i += 7 + operator_token(s, i + 8, n);
			continue;
		}
		if (c == '<' || c == '{' || c == '[')
			depth++;
		else if ((c == '>' || c == '}' || c == ']') && depth > 0)
			depth--;
		else if (c == '(' && depth == 0)
			return i;
	}
	/*
	 * Unbalanced brackets: nesting cannot be trusted, so cut at the first
	 * parenthesis, as stackcollapse-perf.pl does.
	 */
	return depth != 0 && first_paren != SIZE_MAX ? first_paren : n;
}

static void tidy(GString *out, size_t from, bool java)
{
	char *s = out->str + from;
	size_t n = out->len - from, j = 0;

	/* a line break (a symbol or DSO path from perf.data can hold one)
	 * would split the folded line: found by fuzz/plugin.c */
	for (size_t i = 0; i < n; i++)
		if (s[i] == ';')
			s[i] = ':';
		else if (s[i] == '\n')
			s[i] = '_';
	n = frame_name_cut_args(s, n);
	for (size_t i = 0; i < n; i++)
		if (s[i] != '"' && s[i] != '\'')
			s[j++] = s[i];
	n = j;
	if (java && n && s[0] == 'L' && memchr(s, '/', n)) {
		memmove(s, s + 1, n - 1);
		n--;
	}
	g_string_truncate(out, from + n);
}

/* Appends "file.c:12" from a srcline line: "[..]" groups removed, trimmed. */
static void append_srcline(GString *out, struct fk_str src)
{
	size_t mark = out->len, i = 0;

	g_string_append_c(out, ':');
	while (i < src.len) {
		if (src.s[i] == '[') {
			const char *close = memchr(src.s + i, ']', src.len - i);
			if (close) {
				i = (size_t)(close - src.s) + 1;
				continue;
			}
		}
		g_string_append_c(out, src.s[i++]);
	}
	/* trim what the [..] removal left at either end */
	while (out->len > mark + 1 && g_ascii_isspace(out->str[out->len - 1]))
		g_string_truncate(out, out->len - 1);
	{
		size_t k = mark + 1;
		while (k < out->len && g_ascii_isspace(out->str[k]))
			k++;
		g_string_erase(out, (gssize)(mark + 1), (gssize)(k - mark - 1));
	}
	if (out->len == mark + 1)
		g_string_truncate(out, mark);
}

void frame_name_make_safe(GString *out, size_t from)
{
	char *s = out->str;
	size_t start = from;

	for (size_t i = from; i <= out->len; i++) {
		if (i < out->len && s[i] == '\n')
			s[i] = '_';
		if (i == out->len || s[i] == ';') {
			/* "evil 1" would end "p;evil 1 5", a differential line */
			size_t at = folded_count_blank(s + start, i - start);
			if (at < i - start)
				s[start + at] = '_';
			start = i + 1;
		}
	}
}

static void append_part(GString *out, const struct frame_name_opts *o,
			const struct perf_frame *f, const char *p, size_t n,
			bool inlined, bool java)
{
	size_t from = out->len;

	if (n == 9 && memcmp(p, "[unknown]", 9) == 0) {
		g_string_append_c(out, '[');
		if (f->dso.len == 9 && memcmp(f->dso.s, "[unknown]", 9) == 0) {
			g_string_append(out, "unknown");
		} else if (f->dso.len) {	/* bpftrace's frames have no DSO
						   (found by fuzz/bpftrace.c) */
			const char *slash = memrchr(f->dso.s, '/', f->dso.len);
			const char *b = slash ? slash + 1 : f->dso.s;
			g_string_append_len(out, b, (gssize)(f->dso.s + f->dso.len - b));
		}
		if (o->include_addrs) {
			g_string_append(out, " <");
			g_string_append_len(out, f->pc.s, (gssize)f->pc.len);
			g_string_append_c(out, '>');
		}
		g_string_append_c(out, ']');
	} else {
		g_string_append_len(out, p, (gssize)n);
	}
	tidy(out, from, java);
	/* the name itself, so that "evil 1" is "evil_1" with or without an
	 * annotation; then the whole frame, for what a srcline adds */
	frame_name_make_safe(out, from);
	if (inlined)
		g_string_append(out, "_[i]");
	else if (o->annotate_kernel &&
		 frame_dso_is_kernel(f->dso.s, f->dso.len, o->kernel_user_maps))
		g_string_append(out, "_[k]");
	else if (o->annotate_jit && frame_dso_is_jit(f->dso.s, f->dso.len))
		g_string_append(out, "_[j]");
	if (f->srcline.len)
		append_srcline(out, f->srcline);
	frame_name_make_safe(out, from);
}

/* Length of sym without a final "+0x<lowercase hex>" offset. */
static size_t strip_offset(const char *s, size_t n)
{
	size_t i = n;

	while (i > 0 && (is_digit(s[i - 1]) || (s[i - 1] >= 'a' && s[i - 1] <= 'f')))
		i--;
	if (i < n && i >= 3 && memcmp(s + i - 3, "+0x", 3) == 0)
		return i - 3;
	return n;
}

void frame_name_append(GString *out, const struct frame_name_opts *o,
		       const struct perf_frame *f, bool java)
{
	const char *s = f->sym.s, *end = s + strip_offset(s, f->sym.len);
	bool first = true;

	for (;;) {
		const char *arrow = s;
		const char *stop;

		/* "a->b" is an inline chain; "operator->" is one name */
		while ((arrow = g_strstr_len(arrow, (gssize)(end - arrow), "->")) &&
		       arrow - f->sym.s >= 8 && memcmp(arrow - 8, "operator", 8) == 0)
			arrow += 2;
		stop = arrow ? arrow : end;

		if (!first)
			g_string_append_c(out, ';');
		append_part(out, o, f, s, (size_t)(stop - s),
			    !first || (f->inlined && o->annotate_inlined), java);
		if (!arrow)
			break;
		s = arrow + 2;
		first = false;
	}
}

/* One part of a text frame; the rules of frame_name_append_text(). */
static void append_text_part(GString *out, const char *p, size_t n,
			     unsigned flags, bool inlined)
{
	size_t from = out->len, cut;
	char *s;

	g_string_append_len(out, p, (gssize)n);
	s = out->str + from;
	for (size_t i = 0; i < n; i++)
		if (s[i] == ';')
			s[i] = ':';
		else if (s[i] == '\n' || ((flags & FRAME_TEXT_PROCESS) &&
					  (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')))
			s[i] = '_';
	if (flags & (FRAME_TEXT_ARGS | FRAME_TEXT_SCOPED_ARGS)) {
		cut = frame_name_cut_args(s, n);
		/* stackcollapse.pl cuts only C++ names: "::" before the list */
		if (!(flags & FRAME_TEXT_ARGS) && !g_strstr_len(s, (gssize)cut, "::"))
			cut = n;
		n = cut;
	}
	if ((flags & FRAME_TEXT_JAVA) && n && s[0] == 'L' && memchr(s, '/', n)) {
		memmove(s, s + 1, n - 1);
		n--;
	}
	g_string_truncate(out, from + n);
	if (n == 0)
		g_string_append_c(out, '-');
	frame_name_make_safe(out, from);	/* rule 7 */
	if (inlined)
		g_string_append(out, "_[i]");
}

void frame_name_append_text(GString *out, const char *s, size_t n,
			    unsigned flags)
{
	const char *end = s + n, *p = s;
	bool first = true;

	for (;;) {
		const char *arrow = NULL;

		if (flags & FRAME_TEXT_ARROWS) {
			arrow = p;
			while ((arrow = g_strstr_len(arrow, (gssize)(end - arrow), "->")) &&
			       arrow - s >= 8 && memcmp(arrow - 8, "operator", 8) == 0)
				arrow += 2;
		}
		if (!first)
			g_string_append_c(out, ';');
		append_text_part(out, p, (size_t)((arrow ? arrow : end) - p), flags, !first);
		if (!arrow)
			return;
		p = arrow + 2;
		first = false;
	}
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Where a final "0x<hex>" in s[0..e) starts, or SIZE_MAX. */
static size_t hex_number_start(const char *s, size_t e)
{
	size_t i = e;

	while (i > 0 && is_hex(s[i - 1]))
		i--;
	if (i == e || i < 2 || s[i - 2] != '0' || (s[i - 1] != 'x' && s[i - 1] != 'X'))
		return SIZE_MAX;
	return i - 2;
}

size_t frame_text_offset(const char *s, size_t e, bool decimal, bool *sized)
{
	size_t i;

	*sized = false;
	if (decimal) {
		for (i = e; i > 0 && is_digit(s[i - 1]); i--)
			;
		return i < e && i > 0 && s[i - 1] == '+' ? i - 1 : SIZE_MAX;
	}
	if ((i = hex_number_start(s, e)) == SIZE_MAX)
		return SIZE_MAX;
	if (i > 0 && s[i - 1] == '/') {
		size_t j = hex_number_start(s, i - 1);
		if (j != SIZE_MAX) {
			*sized = true;
			i = j;
		}
	}
	return i > 0 && s[i - 1] == '+' ? i - 1 : SIZE_MAX;
}
