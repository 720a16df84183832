/*
 * fuzz/fgrep.c - folded stacks through fgrep-stacks' stack_filter and
 * frame_matcher (lib/transform/stackops.h), checked against GRegex (or memmem, for
 * a fixed string) applied frame by frame, as test/unit/stackops.c does on
 * random stacks.
 *
 * Input: one option byte, a first line "PATTERN[<TAB>EXCLUDE[<TAB>EXCLUDE]]",
 * then folded text.  Bits: 1 --fixed, 2 -i, 4 -x; 8|16 where the match may
 * be: 0 any frame, 8 --leaf, 16 --root (24: any); 32|64 the view: 0 whole,
 * 32 --focus, 64 --callers (96: whole); 128 -v.  A pattern or exclude the
 * matcher refuses ends the input (a usage error, not a bug).
 *
 * Checked for every stack: the stack with excludes applied is the input
 * less the frames GRegex says an exclude matches (or "[excluded]"), and
 * none of its frames matches an exclude; whether it matches, and at which
 * frame, is what GRegex/memmem frame by frame says; -v keeps exactly the
 * stacks the plain filter drops (so kept + dropped = total, in counts
 * too); --focus keeps a suffix and --callers a prefix of the stack at
 * frame boundaries, starting or ending at the matched frame.
 */
#include "fuzz.h"

#include "core/folded.h"
#include "transform/stackops.h"

static GRegex *truth_regex(const char *pattern, unsigned flags)
{
	char *w = g_strdup_printf(flags & FRAME_MATCH_WHOLE ? "\\A(?:%s)\\z" : "%s", pattern);
	GRegex *re = g_regex_new(w, G_REGEX_RAW | G_REGEX_NEWLINE_LF |
				 (flags & FRAME_MATCH_ICASE ? G_REGEX_CASELESS : 0), 0, NULL);
	g_free(w);
	return re;
}

/* The truth for one frame: -1 when it cannot be told (GRegex refused). */
static int truth_test(const char *pattern, unsigned flags, GRegex *re,
		      const struct frame *f)
{
	if (flags & FRAME_MATCH_FIXED) {
		size_t pl = strlen(pattern);
		char *h = g_strndup(f->s, f->len), *p = g_strdup(pattern);
		bool hit;

		if (flags & FRAME_MATCH_ICASE) {
			for (char *c = h; c < h + f->len; c++)
				*c = g_ascii_tolower(*c);
			for (char *c = p; *c; c++)
				*c = g_ascii_tolower(*c);
		}
		if (flags & FRAME_MATCH_WHOLE)
			hit = pl == f->len && memcmp(h, p, pl) == 0;
		else
			hit = memmem(h, f->len, p, pl) != NULL;
		g_free(h);
		g_free(p);
		return hit;
	}
	if (!re)
		return -1;
	GError *err = NULL;
	bool hit = g_regex_match_full(re, f->s, (gssize)f->len, 0, 0, NULL, &err);
	if (err) {	/* PCRE's match limit: the truth is not known */
		g_error_free(err);
		return -1;
	}
	return hit;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

static bool placeholder(const char *s, size_t n)
{
	return (n == 10 && memcmp(s, "[excluded]", 10) == 0) ||
	       (n == 7 && memcmp(s, "[empty]", 7) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_filter_opts so = { 0 }, sx = { 0 }, sv;
	struct stack_filter *f = NULL, *fv = NULL, *fx = NULL;
	struct folded_reader *fr;
	struct folded_line fl;
	struct frame_vec frames = { 0 }, ofr = { 0 };
	GRegex *re = NULL, *exre[2] = { NULL, NULL };
	GString *want = g_string_new(NULL);
	GError *err = NULL;
	const char *nl, *rest;
	char *line, **parts;
	size_t restlen, linelen;
	fk_count total = 0, kept = 0, dropped = 0;
	uint8_t opt;
	int rc;

	if (size < 1)
		goto out;
	opt = data[0];
	data++, size--;
	nl = memchr(data, '\n', size);
	linelen = nl ? (size_t)(nl - (const char *)data) : size;
	line = g_strndup((const char *)data, linelen);
	rest = nl ? nl + 1 : (const char *)data + size;
	restlen = size - (size_t)(rest - (const char *)data);
	if (strlen(line) != linelen) {
		g_free(line);	/* a NUL in the arguments: argv cannot hold one */
		goto out;
	}
	parts = g_strsplit(line, "\t", 3);	/* "" gives no parts at all */
	g_free(line);

	so.pattern = parts[0] ? parts[0] : "";
	so.flags = (opt & 1 ? FRAME_MATCH_FIXED : 0) | (opt & 2 ? FRAME_MATCH_ICASE : 0) |
		   (opt & 4 ? FRAME_MATCH_WHOLE : 0);
	so.where = (opt >> 3 & 3) == 1 ? STACK_LEAF : (opt >> 3 & 3) == 2 ? STACK_ROOT : STACK_ANY;
	so.view = (opt >> 5 & 3) == 1 ? VIEW_FOCUS : (opt >> 5 & 3) == 2 ? VIEW_CALLERS : VIEW_WHOLE;
	so.invert = opt & 128;
	so.exclude = parts[0] ? (const char *const *)parts + 1 : NULL;
	so.nexclude = parts[0] && parts[1] ? (parts[2] ? 2 : 1) : 0;
	if (!(f = stack_filter_new(&so, &err))) {
		FUZZ_CHECK(err, "stack_filter_new failed without an error");
		g_clear_error(&err);
		goto free_parts;
	}
	sv = so;
	sv.invert = !so.invert;
	fv = stack_filter_new(&sv, &err);
	FUZZ_CHECK(fv, "the -v twin does not compile");
	sx.exclude = so.exclude;	/* excludes only: the stack matched against */
	sx.nexclude = so.nexclude;
	fx = stack_filter_new(&sx, &err);
	FUZZ_CHECK(fx, "the excludes alone do not compile");
	if (!(so.flags & FRAME_MATCH_FIXED))
		re = truth_regex(so.pattern, so.flags);
	for (size_t i = 0; i < so.nexclude; i++)
		exre[i] = truth_regex(so.exclude[i], 0);

	fr = folded_reader_open(fuzz_file(rest, restlen), NULL, &err);
	FUZZ_CHECK(fr && !err, "cannot open the memfd");
	while ((rc = folded_reader_next(fr, &fl, &err)) > 0) {
		const char *s, *o, *o2;
		size_t n, on, on2, nf = 0;
		bool known = true, any = false, k1, k2;
		struct frame hit = { NULL, 0 };

		/* excludes: the stack matched against */
		FUZZ_CHECK(stack_filter_apply(fx, fl.stack, fl.len, &s, &n),
			   "a filter without a pattern dropped a stack");
		fuzz_touch(s, n);
		frame_vec_split(&frames, fl.stack, fl.len);
		g_string_truncate(want, 0);
		for (size_t i = 0; i < frames.n; i++) {
			bool ex = false;
			for (size_t j = 0; j < so.nexclude; j++) {
				int t = truth_test(so.exclude[j], 0, exre[j], &frames.v[i]);
				known &= t >= 0;
				ex |= t > 0;
			}
			if (!ex) {
				if (nf++)
					g_string_append_c(want, ';');
				g_string_append_len(want, frames.v[i].s, (gssize)frames.v[i].len);
			}
		}
		if (blank(want->str, want->len))	/* nothing, or only blanks, left */
			g_string_assign(want, "[excluded]");
		if (known)
			FUZZ_CHECK(n == want->len && memcmp(s, want->str, n) == 0,
				   "excluding from '%.*s' gave '%.*s', GRegex says '%s'",
				   (int)fl.len, fl.stack, (int)n, s, want->str);
		if (so.nexclude && !placeholder(s, n)) {
			frame_vec_split(&ofr, s, n);
			for (size_t i = 0; i < ofr.n; i++)
				for (size_t j = 0; j < so.nexclude; j++)
					FUZZ_CHECK(truth_test(so.exclude[j], 0, exre[j], &ofr.v[i]) != 1,
						   "excluded frame '%.*s' kept in '%.*s'",
						   (int)ofr.v[i].len, ofr.v[i].s, (int)n, s);
		}

		/* the match, frame by frame */
		frame_vec_split(&ofr, s, n);
		known = true;
		for (size_t i = 0; i < ofr.n; i++) {
			if (so.where == STACK_LEAF && i + 1 != ofr.n)
				continue;
			if (so.where == STACK_ROOT && i != 0)
				continue;
			int t = truth_test(so.pattern, so.flags, re, &ofr.v[i]);
			if (t < 0)
				known = false;
			if (t > 0 && !any) {
				any = true;
				hit = ofr.v[i];
			}
		}

		k1 = stack_filter_apply(f, fl.stack, fl.len, &o, &on);
		if (k1)
			fuzz_touch(o, on);
		k2 = stack_filter_apply(fv, fl.stack, fl.len, &o2, &on2);
		FUZZ_CHECK(k1 != k2, "'%.*s' is %s by both the filter and its -v twin",
			   (int)fl.len, fl.stack, k1 ? "kept" : "dropped");
		total += fl.count[0];
		if (k1)
			kept += fl.count[0];
		else
			dropped += fl.count[0];
		if (known)
			FUZZ_CHECK(k1 == (any != so.invert),
				   "'%.*s' (as '%.*s'): filter %s, GRegex frame by frame %s",
				   (int)fl.len, fl.stack, (int)n, s, k1 ? "keeps" : "drops",
				   any ? "matches" : "does not match");
		if (!k1)
			continue;
		if (so.invert || so.view == VIEW_WHOLE) {
			FUZZ_CHECK(on == n && memcmp(o, s, n) == 0, "the whole view changed '%.*s' to '%.*s'",
				   (int)n, s, (int)on, o);
			continue;
		}
		if (on == 7 && memcmp(o, "[empty]", 7) == 0 &&
		    (!known || (any && blank(hit.s, hit.len) &&
				 (so.view == VIEW_FOCUS ? hit.s + hit.len == s + n : hit.s == s))))
			continue;	/* cut at an empty frame */
		/* by content: with excludes, s is another filter's copy */
		FUZZ_CHECK(on > 0 && on <= n, "cut '%.*s' longer than '%.*s'",
			   (int)on, o, (int)n, s);
		if (so.view == VIEW_FOCUS) {
			size_t at = n - on;
			FUZZ_CHECK(memcmp(o, s + at, on) == 0 && (at == 0 || s[at - 1] == ';'),
				   "focus '%.*s' is not a suffix of '%.*s' at a frame",
				   (int)on, o, (int)n, s);
			if (known && any)
				FUZZ_CHECK(s + at == hit.s, "focus '%.*s' does not start at the match '%.*s'",
					   (int)on, o, (int)hit.len, hit.s);
		} else {
			FUZZ_CHECK(memcmp(o, s, on) == 0 && (on == n || s[on] == ';'),
				   "callers '%.*s' is not a prefix of '%.*s' at a frame",
				   (int)on, o, (int)n, s);
			if (known && any)
				FUZZ_CHECK(s + on == hit.s + hit.len,
					   "callers '%.*s' does not end at the match '%.*s'",
					   (int)on, o, (int)hit.len, hit.s);
		}
	}
	FUZZ_CHECK((rc < 0) == (err != NULL), "rc %d but err %p", rc, (void *)err);
	g_clear_error(&err);
	folded_reader_free(fr);
	FUZZ_CHECK(kept + dropped == total, "kept + dropped != total");

	if (re)
		g_regex_unref(re);
	for (size_t i = 0; i < 2; i++)
		if (exre[i])
			g_regex_unref(exre[i]);
	stack_filter_free(f);
	stack_filter_free(fv);
	stack_filter_free(fx);
free_parts:
	g_strfreev(parts);
out:
	frame_vec_release(&frames);
	frame_vec_release(&ofr);
	g_string_free(want, TRUE);
	return 0;
}
