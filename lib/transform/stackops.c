#include "transform/stackops.h"

#include "core/error.h"
#include "core/folded.h"
#include "core/simd.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#ifdef FK_AVX2_PATH
/*
 * find_bytes()'s blocks of 32 positions, for a haystack with room for at
 * least one (hl >= nl - 1 + 32); the same masking of the last block.
 */
__attribute__((target("avx2")))
static const char *find_bytes_avx2(const char *h, size_t hl, const char *n, size_t nl)
{
	const __m256i first = _mm256_set1_epi8(n[0]), last = _mm256_set1_epi8(n[nl - 1]);
	size_t i = 0;

	for (uint32_t keep = 0xffffffffu;; i += 32) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(h + i));
		__m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(h + i + nl - 1));
		uint32_t mask = (uint32_t)_mm256_movemask_epi8(
			_mm256_and_si256(_mm256_cmpeq_epi8(a, first), _mm256_cmpeq_epi8(b, last))) & keep;

		for (; mask; mask &= mask - 1) {
			size_t at = i + (size_t)__builtin_ctz(mask);
			if (nl == 2 || memcmp(h + at + 1, n + 1, nl - 2) == 0)
				return h + at;
		}
		if (i + nl - 1 + 32 == hl)
			return NULL;
		if (i + 32 + nl - 1 + 32 > hl) {	/* the last, overlapping block */
			size_t j = hl - (nl - 1) - 32;

			keep = 0xffffffffu << (i + 32 - j);
			i = j - 32;
		}
	}
}
#endif

/*
 * memmem() for the short needles of stack matching.  glibc's memmem sets
 * up a shift table on every call, which costs more than the search on a
 * line of a few hundred bytes; comparing the needle's first and last bytes
 * 16 positions at a time and confirming candidates with memcmp() needs no
 * set-up.
 */
static const char *find_bytes(const char *h, size_t hl, const char *n, size_t nl)
{
	size_t i = 0;

	if (nl == 0)
		return h;
	if (nl > hl)
		return NULL;
	if (nl == 1)
		return memchr(h, n[0], hl);
#ifdef FK_AVX2_PATH
	if (hl >= nl - 1 + 32 && fk_have_avx2())
		return find_bytes_avx2(h, hl, n, nl);
#endif
#ifdef __SSE2__
	{
		const __m128i first = _mm_set1_epi8(n[0]), last = _mm_set1_epi8(n[nl - 1]);

		/* the last block ends where the last candidate starts, its
		 * positions searched already masked off: no byte-at-a-time tail */
		for (unsigned keep = 0xffffu; i + nl - 1 + 16 <= hl; i += 16) {
			__m128i a = _mm_loadu_si128((const __m128i *)(const void *)(h + i));
			__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(h + i + nl - 1));
			unsigned mask = (unsigned)_mm_movemask_epi8(
				_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last))) & keep;

			for (; mask; mask &= mask - 1) {
				size_t at = i + (size_t)__builtin_ctz(mask);
				if (nl == 2 || memcmp(h + at + 1, n + 1, nl - 2) == 0)
					return h + at;
			}
			if (i + nl - 1 + 16 == hl)
				return NULL;
			if (i + 16 + nl - 1 + 16 > hl) {	/* the last, overlapping block */
				size_t j = hl - (nl - 1) - 16;

				keep = 0xffffu << (i + 16 - j) & 0xffffu;
				i = j - 16;
			}
		}
	}
#endif
	for (; i + nl <= hl; i++)
		if (h[i] == n[0] && memcmp(h + i + 1, n + 1, nl - 1) == 0)
			return h + i;
	return NULL;
}

static inline void frame_vec_push(struct frame_vec *fv, const char *s, size_t len)
{
	if (fv->n == fv->cap) {
		fv->cap = fv->cap ? fv->cap * 2 : 64;
		fv->v = g_renew(struct frame, fv->v, fv->cap);
	}
	fv->v[fv->n].s = s;
	fv->v[fv->n].len = len;
	fv->n++;
}

/* Frames are short (10-30 bytes), so one memchr() call per frame costs
 * more in calls than in scanning: find every ';' 16 bytes at a time. */
void frame_vec_split(struct frame_vec *fv, const char *stack, size_t len)
{
	size_t start = 0, i = 0;

	fv->n = 0;
#ifdef __SSE2__
	{
		const __m128i semi = _mm_set1_epi8(';');

		for (; i + 16 <= len; i += 16) {
			unsigned mask = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
				_mm_loadu_si128((const __m128i *)(const void *)(stack + i)), semi));

			for (; mask; mask &= mask - 1) {
				size_t at = i + (size_t)__builtin_ctz(mask);
				frame_vec_push(fv, stack + start, at - start);
				start = at + 1;
			}
		}
	}
#endif
	for (; i < len; i++)
		if (stack[i] == ';') {
			frame_vec_push(fv, stack + start, i - start);
			start = i + 1;
		}
	frame_vec_push(fv, stack + start, len - start);
}

void frame_vec_release(struct frame_vec *fv)
{
	g_free(fv->v);
	fv->v = NULL;
	fv->n = fv->cap = 0;
}

/*
 * The frames of a stack one at a time, found as frame_vec_split() finds
 * them but handed out as they are found: the loops over a changed stack's
 * frames need no array.
 */
struct frame_iter {
	const char *s;
	size_t len;
	size_t start;		/* where the next frame starts */
	size_t next;		/* the first byte not yet searched */
	size_t base;		/* where mask's 16 bytes start */
	unsigned mask;		/* the ';'s there not yet handed out */
	bool done;
};

static inline void frame_iter_init(struct frame_iter *it, const char *s, size_t len)
{
	*it = (struct frame_iter){ .s = s, .len = len };
}

static inline bool frame_iter_next(struct frame_iter *it, struct frame *f)
{
	size_t at;

	for (;;) {
		if (it->mask) {
			at = it->base + (size_t)__builtin_ctz(it->mask);
			it->mask &= it->mask - 1;
			break;
		}
#ifdef __SSE2__
		if (it->next < it->len && it->len >= 16) {
			/* the last block ends at len, its bytes searched already
			 * masked off: no byte-at-a-time tail */
			size_t at16 = it->next + 16 <= it->len ? it->next : it->len - 16;

			it->base = at16;
			it->mask = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
				_mm_loadu_si128((const __m128i *)(const void *)(it->s + at16)),
				_mm_set1_epi8(';'))) & (0xffffu << (it->next - at16));
			it->next = at16 + 16;
			continue;
		}
#endif
		while (it->next < it->len && it->s[it->next] != ';')
			it->next++;
		if (it->next < it->len) {
			at = it->next++;
			break;
		}
		if (it->done)
			return false;
		it->done = true;
		at = it->len;
		break;
	}
	f->s = it->s + it->start;
	f->len = at - it->start;
	it->start = at + 1;
	return true;
}

/* "__vdso_..." or "[[vdso...": a frame of the vDSO, whose "_[k]" marks
 * are not believed (see is_vdso_frame()); s has n bytes at hand. */
static inline bool vdso_start(const char *s, size_t n)
{
	return (s[0] == '_' && n >= 7 && memcmp(s, "__vdso_", 7) == 0) ||
	       (s[0] == '[' && n >= 6 && memcmp(s, "[[vdso", 6) == 0);
}

#ifdef __SSE2__
/*
 * Blocks of positions i..i+15, the last one ending at len (its positions
 * before i masked off), with no branch on what they hold, for len >= 20:
 * *bad collects the ';' without mark before them, *vd the "vd" pairs (a
 * vDSO frame holds "vdso"; other kernel frames hardly ever hold "vd"),
 * *first gets the first ';' (or stays len).
 */
static inline void ending_scan_sse2(const char *s, size_t len, const char mark[4],
				    uint32_t *bad_out, uint32_t *vd_out, size_t *first)
{
	const __m128i semi = _mm_set1_epi8(';'), m0 = _mm_set1_epi8(mark[0]),
		m1 = _mm_set1_epi8(mark[1]), m2 = _mm_set1_epi8(mark[2]),
		m3 = _mm_set1_epi8(mark[3]), cv = _mm_set1_epi8('v'),
		cd = _mm_set1_epi8('d');
	unsigned bad = 0, semis = 0, vd = 0;
	size_t i = 4;

	for (unsigned keep = 0xffffu;; i += 16) {
		if (i + 16 > len) {
			keep = 0xffffu << (i - (len - 16)) & 0xffffu;
			i = len - 16;
		}
#define LOADQ(k) _mm_loadu_si128((const __m128i *)(const void *)(s + i - 4 + (k)))
		__m128i v = LOADQ(4);
		unsigned sm = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, semi)) & keep;
		unsigned em = (unsigned)_mm_movemask_epi8(_mm_and_si128(
			_mm_and_si128(_mm_cmpeq_epi8(LOADQ(0), m0), _mm_cmpeq_epi8(LOADQ(1), m1)),
			_mm_and_si128(_mm_cmpeq_epi8(LOADQ(2), m2), _mm_cmpeq_epi8(LOADQ(3), m3))));

		vd |= (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(LOADQ(3), cv),
								 _mm_cmpeq_epi8(v, cd)));
#undef LOADQ
		bad |= sm & ~em;
		if (sm && !semis)	/* the blocks go forward */
			*first = i + (size_t)__builtin_ctz(sm);
		semis |= sm;
		if (i + 16 >= len)
			break;
	}
	*bad_out = bad;
	*vd_out = vd;
}
#endif

#ifdef FK_AVX2_PATH
/*
 * ending_scan_sse2()'s blocks 32 positions at a time, for len >= 36.
 */
__attribute__((target("avx2")))
static void ending_scan_avx2(const char *s, size_t len, const char mark[4],
			     uint32_t *bad_out, uint32_t *vd_out, size_t *first)
{
	const __m256i semi = _mm256_set1_epi8(';'), m0 = _mm256_set1_epi8(mark[0]),
		m1 = _mm256_set1_epi8(mark[1]), m2 = _mm256_set1_epi8(mark[2]),
		m3 = _mm256_set1_epi8(mark[3]), cv = _mm256_set1_epi8('v'),
		cd = _mm256_set1_epi8('d');
	uint32_t bad = 0, semis = 0, vd = 0;
	size_t i = 4;

	for (uint32_t keep = 0xffffffffu;; i += 32) {
		if (i + 32 > len) {
			keep = 0xffffffffu << (i - (len - 32));
			i = len - 32;
		}
#define LOADY(k) _mm256_loadu_si256((const __m256i *)(const void *)(s + i - 4 + (k)))
		__m256i v = LOADY(4);
		uint32_t sm = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, semi)) & keep;
		uint32_t em = (uint32_t)_mm256_movemask_epi8(_mm256_and_si256(
			_mm256_and_si256(_mm256_cmpeq_epi8(LOADY(0), m0), _mm256_cmpeq_epi8(LOADY(1), m1)),
			_mm256_and_si256(_mm256_cmpeq_epi8(LOADY(2), m2), _mm256_cmpeq_epi8(LOADY(3), m3))));

		vd |= (uint32_t)_mm256_movemask_epi8(_mm256_and_si256(_mm256_cmpeq_epi8(LOADY(3), cv),
								       _mm256_cmpeq_epi8(v, cd)));
#undef LOADY
		bad |= sm & ~em;
		if (sm && !semis)	/* the blocks go forward */
			*first = i + (size_t)__builtin_ctz(sm);
		semis |= sm;
		if (i + 32 >= len)
			break;
	}
	*bad_out = bad;
	*vd_out = vd;
}
#endif

/*
 * When every frame of s[0..len) ends in the 4 bytes mark (none of them
 * ';') and, with no_vdso, none is a vDSO frame: the length of the first
 * frame (len if it is the only one; never 0, the frame holds mark); else
 * 0.  A frame ends in mark where a ';' has mark just before it, and so 16
 * positions are tested at once, with no loop over the frames: this runs
 * for the kernel frames at the end of nearly every stack kfold --kernel
 * and fgrep-stacks --exclude '_\[k\]$' read.  The first ';' falls out of
 * the same test, so kfold --keep-entry needs no search of its own for the
 * entry frame's end.
 */
static size_t frames_ending_in(const char *s, size_t len, const char mark[4], bool no_vdso)
{
	size_t i = 4, first = len;	/* where the first ';' is */

	if (len < 4 || memcmp(s + len - 4, mark, 4) != 0 || (no_vdso && vdso_start(s, len)))
		return 0;
	/* a ';' in the last 4 bytes would be one in mark; one in the first
	 * 4 ends a frame too short to hold it (tested here, not by a
	 * memchr() call for 4 bytes on every stack) */
	for (size_t j = 0; j < (len < 8 ? len - 4 : 4); j++)
		if (s[j] == ';')
			return 0;
	if (len < 8)
		return len;
	{
		uint32_t bad = 0, vd = 0;
		bool scanned = false;

#ifdef FK_AVX2_PATH
		if (len >= 36 && fk_have_avx2()) {
			ending_scan_avx2(s, len, mark, &bad, &vd, &first);
			scanned = true;
		}
#endif
#ifdef __SSE2__
		if (!scanned && len >= 20) {
			ending_scan_sse2(s, len, mark, &bad, &vd, &first);
			scanned = true;
		}
#endif
		if (scanned) {
			if (bad)
				return 0;
			if (!(no_vdso && vd))
				return first;
			first = len;	/* perhaps a vDSO frame: the frames one by one */
		}
	}
	for (; i < len - 4; i++)
		if (s[i] == ';') {
			if (memcmp(s + i - 4, mark, 4) != 0 ||
			    (no_vdso && vdso_start(s + i + 1, len - i - 1)))
				return 0;
			if (first == len)
				first = i;
		}
	return first;
}

/* --- matching ------------------------------------------------------------ */

struct frame_matcher {
	unsigned flags;
	char *lit;		/* fixed-string needle (lowercased for ICASE) */
	size_t litlen;
	bool at_start, at_end;	/* lit must begin / end the frame */
	bool lit_semi;		/* lit holds a ';': it matches frame by frame */
	uint32_t head4, tail4;	/* lit's first and last 4 bytes, if 4 to 8 long */
	GRegex *re;		/* one frame is the whole subject */
	GRegex *re_lines;	/* the stack with ';' as '\n'; NULL if unsafe */
	char *req;		/* a string every match contains, or NULL */
	size_t reqlen;
	GString *scratch;
};

/*
 * A regex made only of ordinary characters and backslash-escaped
 * punctuation means a fixed string; returns it unescaped, or NULL.
 */
static char *regex_as_literal(const char *p)
{
	GString *s = g_string_new(NULL);

	for (; *p; p++) {
		if (*p == '\\') {
			if (!g_ascii_ispunct(p[1]))
				goto no;
			g_string_append_c(s, *++p);
		} else if (strchr(".^$|?*+()[]{}", *p)) {
			goto no;
		} else {
			g_string_append_c(s, *p);
		}
	}
	return g_string_free(s, FALSE);
no:
	g_string_free(s, TRUE);
	return NULL;
}

/*
 * Searching the whole stack at once, with frames turned into lines, finds
 * the same frames as testing each frame alone as long as the only
 * zero-width assertions are ^, $ and \b (which see '\n' as they see the
 * ends of a frame): a match that consumes a '\n' is detected and retested
 * frame by frame.  Lookaround, \A \z \Z \G \K, inline options and verbs
 * could see across frames, so such patterns go frame by frame.
 */
static bool lines_safe(const char *p)
{
	return !strstr(p, "(?") && !strstr(p, "(*") && !strstr(p, "\\A") &&
	       !strstr(p, "\\z") && !strstr(p, "\\Z") && !strstr(p, "\\G") &&
	       !strstr(p, "\\K");
}

/*
 * The longest string that every match of regex p must contain, found by a
 * conservative scan: only literal characters outside groups and classes
 * count, a quantifier takes back the character before it, and patterns
 * with alternation, inline options or escapes it does not know give NULL.
 * A search for it rules out most non-matching stacks and frames far
 * faster than running the regex.
 */
static char *required_literal(const char *p)
{
	GString *cur = g_string_new(NULL), *best = g_string_new(NULL);
	int depth = 0;

	if (strchr(p, '|') || strstr(p, "(?") || strstr(p, "(*"))
		goto none;
	for (; *p; p++) {
		char c = *p;

		if (c == '\\' && g_ascii_ispunct(p[1])) {
			p++;
			if (depth == 0) {
				g_string_append_c(cur, *p);
				continue;
			}
		} else if (c == '\\') {	/* \d \w \s \b are one atom; others vary */
			if (!p[1] || !strchr("dDwWsSbB", p[1]))
				goto none;
			p++;
		} else if (c == '[') {
			p++;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			for (; *p && *p != ']'; p++) {
				if (*p == '\\' && p[1])
					p++;
				else if (p[0] == '[' && p[1] == ':' && (p = strstr(p + 2, ":]")))
					p++;
				if (!p)
					goto none;
			}
			if (!*p)
				goto none;
		} else if (c == '(') {
			depth++;
		} else if (c == ')') {
			depth--;
		} else if (strchr("*?+{", c)) {
			if (cur->len)
				g_string_truncate(cur, cur->len - 1);
			if (c == '{' && strchr(p, '}'))	/* {n,m} is no literal */
				p = strchr(p, '}');
		} else if (!strchr(".^$", c) && depth == 0) {
			g_string_append_c(cur, c);
			continue;
		}
		if (cur->len > best->len)
			g_string_assign(best, cur->str);
		g_string_truncate(cur, 0);
	}
	if (cur->len > best->len)
		g_string_assign(best, cur->str);
	g_string_free(cur, TRUE);
	if (best->len)
		return g_string_free(best, FALSE);
	g_string_free(best, TRUE);
	return NULL;
none:
	g_string_free(cur, TRUE);
	g_string_free(best, TRUE);
	return NULL;
}

static GRegex *compile(const char *pattern, GRegexCompileFlags cf, GError **err)
{
	GError *e = NULL;
	GRegex *re = g_regex_new(pattern, cf, 0, &e);

	if (!re) {
		/* GLib repeats the pattern: keep only "at char N: REASON" */
		const char *why = strstr(e->message, " at char ");
		g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "bad regex '%s': %s",
			    pattern, why ? why + 1 : e->message);
		g_error_free(e);
	}
	return re;
}

struct frame_matcher *frame_matcher_new(const char *pattern, unsigned flags,
					GError **err)
{
	struct frame_matcher *m = g_new0(struct frame_matcher, 1);
	GRegexCompileFlags cf = G_REGEX_RAW | G_REGEX_OPTIMIZE | G_REGEX_NEWLINE_LF;
	char *lit = NULL;

	m->flags = flags;
	m->scratch = g_string_new(NULL);
	if (flags & FRAME_MATCH_FIXED) {
		lit = g_strdup(pattern);
	} else {
		/* "^lit", "lit$", "^lit$": a prefix, suffix or equality test */
		size_t n = strlen(pattern), bs = 0;
		char *mid;

		m->at_start = pattern[0] == '^';
		while (n >= 2 + bs + m->at_start && pattern[n - 2 - bs] == '\\')
			bs++;		/* backslashes before the last character */
		m->at_end = n > (size_t)m->at_start && pattern[n - 1] == '$' && bs % 2 == 0;
		mid = g_strndup(pattern + m->at_start, n - m->at_start - m->at_end);
		lit = regex_as_literal(mid);
		g_free(mid);
	}
	if (flags & FRAME_MATCH_WHOLE)
		m->at_start = m->at_end = true;
	if (lit) {
		m->litlen = strlen(lit);
		m->lit = flags & FRAME_MATCH_ICASE ? g_ascii_strdown(lit, -1) : g_strdup(lit);
		m->lit_semi = memchr(m->lit, ';', m->litlen) != NULL;
		g_free(lit);
		if (m->litlen >= 4 && m->litlen <= 8) {
			memcpy(&m->head4, m->lit, 4);
			memcpy(&m->tail4, m->lit + m->litlen - 4, 4);
		}
		return m;
	}
	m->at_start = m->at_end = false;
	if (flags & FRAME_MATCH_ICASE)
		cf |= G_REGEX_CASELESS;
	/* the pattern alone first, so its errors name the user's pattern */
	if (!(m->re = compile(pattern, cf, err))) {
		frame_matcher_free(m);
		return NULL;
	}
	if (flags & FRAME_MATCH_WHOLE) {
		/* \E ends a \Q left open at the end of the pattern */
		char *w = g_strdup_printf("\\A(?:%s\\E)\\z", pattern);
		g_regex_unref(m->re);
		m->re = compile(w, cf, err);
		g_free(w);
		if (!m->re) {
			frame_matcher_free(m);
			return NULL;
		}
	}
	if (!(flags & FRAME_MATCH_ICASE) && (m->req = required_literal(pattern)))
		m->reqlen = strlen(m->req);
	if (lines_safe(pattern)) {
		char *w = g_strdup_printf(flags & FRAME_MATCH_WHOLE ? "^(?:%s\\E)$" : "%s",
					  pattern);
		m->re_lines = g_regex_new(w, cf | G_REGEX_MULTILINE, 0, NULL);
		g_free(w);
	}
	return m;
}

void frame_matcher_free(struct frame_matcher *m)
{
	if (!m)
		return;
	g_free(m->lit);
	g_free(m->req);
	if (m->re)
		g_regex_unref(m->re);
	if (m->re_lines)
		g_regex_unref(m->re_lines);
	g_string_free(m->scratch, TRUE);
	g_free(m);
}

static const char *lowered(struct frame_matcher *m, const char *s, size_t len)
{
	g_string_set_size(m->scratch, len);
	for (size_t i = 0; i < len; i++)
		m->scratch->str[i] = g_ascii_tolower(s[i]);
	return m->scratch->str;
}

static inline bool lit_equal(const struct frame_matcher *m, const char *s)
{
	if (m->flags & FRAME_MATCH_ICASE)
		return g_ascii_strncasecmp(s, m->lit, m->litlen) == 0;
	/* an anchored needle is short ("_[k]"): no call per frame, and
	 * from 4 to 8 bytes two overlapping 4-byte comparisons */
	if (m->litlen >= 4 && m->litlen <= 8) {
		uint32_t a, b;

		memcpy(&a, s, 4);
		memcpy(&b, s + m->litlen - 4, 4);
		return a == m->head4 && b == m->tail4;
	}
	if (m->litlen <= 16) {
		for (size_t i = 0; i < m->litlen; i++)
			if (s[i] != m->lit[i])
				return false;
		return true;
	}
	return memcmp(s, m->lit, m->litlen) == 0;
}

static bool matcher_test_any(struct frame_matcher *m, const char *s, size_t len)
{
	if (m->lit) {
		if (m->at_start && m->at_end)
			return len == m->litlen && lit_equal(m, s);
		if (m->at_start || m->at_end)
			return len >= m->litlen &&
			       lit_equal(m, m->at_start ? s : s + len - m->litlen);
		if (m->flags & FRAME_MATCH_ICASE)
			s = lowered(m, s, len);
		return find_bytes(s, len, m->lit, m->litlen) != NULL;
	}
	if (m->req && !find_bytes(s, len, m->req, m->reqlen))
		return false;
	return g_regex_match_full(m->re, s, (gssize)len, 0, 0, NULL, NULL);
}

/* An anchored literal (--exclude '_\[k\]$'), tested inline: it
 * runs for every frame of a changed stack; anything else is a call. */
static inline __attribute__((always_inline)) bool
matcher_test(struct frame_matcher *m, const char *s, size_t len)
{
	if (m->lit && (m->at_start || m->at_end) && !(m->flags & FRAME_MATCH_ICASE)) {
		if (m->at_start && m->at_end ? len != m->litlen : len < m->litlen)
			return false;
		return lit_equal(m, m->at_start ? s : s + len - m->litlen);
	}
	return matcher_test_any(m, s, len);
}

bool frame_matcher_test(struct frame_matcher *m, const char *s, size_t len)
{
	return matcher_test(m, s, len);
}

/* The frame of stack[0..len) that contains offset pos (a frame's end
 * counts as inside it, for empty matches). */
static void frame_at(const char *stack, size_t len, size_t pos, char sep,
		     struct frame *f)
{
	const char *a = pos ? memrchr(stack, sep, pos) : NULL;
	const char *b = memchr(stack + pos, sep, len - pos);
	size_t start = a ? (size_t)(a - stack) + 1 : 0;

	f->s = stack + start;
	f->len = (b ? (size_t)(b - stack) : len) - start;
}

static bool find_by_frame(struct frame_matcher *m, const char *stack, size_t len,
			  struct frame *hit)
{
	const char *p = stack, *end = stack + len, *semi;

	for (;;) {
		semi = memchr(p, ';', (size_t)(end - p));
		size_t flen = (size_t)((semi ? semi : end) - p);
		if (frame_matcher_test(m, p, flen)) {
			hit->s = p;
			hit->len = flen;
			return true;
		}
		if (!semi)
			return false;
		p = semi + 1;
	}
}

static bool find_literal(struct frame_matcher *m, const char *stack, size_t len,
			 struct frame *hit)
{
	const char *hay = stack, *p;
	size_t pos = 0;

	if (m->litlen == 0 || m->lit_semi)
		return m->litlen == 0 && find_by_frame(m, stack, len, hit);
	if (m->flags & FRAME_MATCH_ICASE)
		hay = lowered(m, stack, len);
	while (pos < len && (p = find_bytes(hay + pos, len - pos, m->lit, m->litlen))) {
		size_t off = (size_t)(p - hay), start;

		if (m->at_end) {
			/* the frame must end with the needle: seen without
			 * searching for the frame's end (--exclude '_\[k\]$') */
			size_t end = off + m->litlen;
			const char *semi;

			if (end < len && hay[end] != ';') {
				pos = off + 1;
				continue;
			}
			semi = off ? memrchr(hay, ';', off) : NULL;
			start = semi ? (size_t)(semi - hay) + 1 : 0;
			if (m->at_start && off != start) {
				pos = off + 1;
				continue;
			}
			hit->s = stack + start;
			hit->len = end - start;
			return true;
		}
		frame_at(hay, len, off, ';', hit);
		start = (size_t)(hit->s - hay);
		if ((!m->at_start || off == start) &&
		    (!m->at_end || off + m->litlen == start + hit->len)) {
			hit->s = stack + start;
			return true;
		}
		pos = off + 1;
	}
	return false;
}

bool frame_matcher_find(struct frame_matcher *m, const char *stack, size_t len,
			struct frame *hit)
{
	GMatchInfo *mi = NULL;
	gint st, en;
	bool found;
	char *buf;

	if (m->lit)
		return find_literal(m, stack, len, hit);
	if (m->req && !find_bytes(stack, len, m->req, m->reqlen))
		return false;
	/* PCRE's multiline ^ does not match after a '\n' that ends the
	 * subject, so an empty last frame is tested on its own */
	if (!m->re_lines || (len && stack[len - 1] == ';'))
		return find_by_frame(m, stack, len, hit);

	g_string_set_size(m->scratch, len);
	buf = m->scratch->str;
	for (size_t i = 0; i < len; i++)
		buf[i] = stack[i] == ';' ? '\n' : stack[i];
	found = g_regex_match_full(m->re_lines, buf, (gssize)len, 0, 0, &mi, NULL) &&
		g_match_info_fetch_pos(mi, 0, &st, &en);
	g_match_info_free(mi);
	if (!found)
		return false;
	if (memchr(buf + st, '\n', (size_t)(en - st)))
		return find_by_frame(m, stack, len, hit);	/* spans frames */
	frame_at(buf, len, (size_t)st, '\n', hit);
	hit->s = stack + (hit->s - buf);
	return true;
}

/* --- kfold --------------------------------------------------------------- */

static bool ends_with(const char *s, size_t len, const char *suf, size_t n)
{
	return len >= n && memcmp(s + len - n, suf, n) == 0;
}

static bool equals(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

/* "[DSO <ADDRESS>]", as fp-collapse --addrs names an unknown symbol */
static bool is_addr_placeholder(const char *s, size_t len, const char *prefix,
				size_t n)
{
	return len > n + 2 && memcmp(s, prefix, n) == 0 && ends_with(s, len, ">]", 2);
}

static inline bool is_kernel_placeholder(const char *s, size_t len)
{
	if (len < 8 || s[0] != '[')	/* most frames: a name */
		return false;
	if (ends_with(s, len, "_[k]", 4))
		len -= 4;
	return equals(s, len, "[[kernel.kallsyms]]") ||
	       equals(s, len, "[kernel.kallsyms]") || equals(s, len, "[kernel]") ||
	       is_addr_placeholder(s, len, "[[kernel.kallsyms] <", 20);
}

/*
 * The vDSO's code runs in user space, but stackcollapse-perf.pl --kernel
 * marks its frames "_[k]" ("__vdso_clock_gettime_[k]", "[[vdso]]_[k]"):
 * such a mark is not believed.
 */
static bool is_vdso_frame(const char *s, size_t len)
{
	return (len >= 7 && memcmp(s, "__vdso_", 7) == 0) ||
	       (len >= 6 && memcmp(s, "[[vdso", 6) == 0);
}

bool frame_is_kernel_placeholder(const char *s, size_t len)
{
	return is_kernel_placeholder(s, len);
}

/* A kernel frame that is not a placeholder: "NAME_[k]", not the vDSO's. */
static inline bool is_named_kernel(const char *s, size_t len)
{
	return len >= 4 && s[len - 1] == ']' && s[len - 2] == 'k' && s[len - 3] == '[' &&
	       s[len - 4] == '_' && !is_vdso_frame(s, len);
}

bool frame_is_kernel(const char *s, size_t len)
{
	return is_named_kernel(s, len) || is_kernel_placeholder(s, len);
}

enum kclass { K_KEEP, K_DROP, K_NAMED_KERNEL, K_NAME };

struct kfolder {
	struct kfold_opts o;
	bool fast_kernel;	/* --kernel and nothing that kernel_tail() ignores */
	struct frame_matcher **rm;
	char **rname;
	GString *out;
};

struct kfolder *kfolder_new(const struct kfold_opts *o, GError **err)
{
	struct kfolder *k = g_new0(struct kfolder, 1);

	k->o = *o;
	k->o.rules = NULL;
	k->fast_kernel = o->kernel && !o->drop_kernel && !o->unknown && o->nrules == 0;
	k->rm = g_new0(struct frame_matcher *, o->nrules + 1);
	k->rname = g_new0(char *, o->nrules + 1);
	k->out = g_string_new(NULL);
	for (size_t i = 0; i < o->nrules; i++) {
		const char *nm = o->rules[i].name;
		size_t nl = nm ? strlen(nm) : 0;

		/* a line break would split the output line; a trailing blank
		 * is dropped when the output is read back (found by fuzz/kfold);
		 * "x 1" as the leaf would read back as a differential line */
		if (nl == 0 || strpbrk(nm, ";\n") || nm[nl - 1] == ' ' || nm[nl - 1] == '\t' ||
		    folded_count_blank(nm, nl) < nl) {
			g_set_error(err, FK_ERROR, FK_ERROR_USAGE,
				    "bad name '%s' for '%s': it must be non-empty, without ';', "
				    "a line break, a trailing blank or a blank and a number at its end",
				    o->rules[i].name ? o->rules[i].name : "",
				    o->rules[i].regex);
			kfolder_free(k);
			return NULL;
		}
		k->rname[i] = g_strdup(o->rules[i].name);
		k->o.nrules = i + 1;
		if (!(k->rm[i] = frame_matcher_new(o->rules[i].regex, 0, err))) {
			kfolder_free(k);
			return NULL;
		}
	}
	return k;
}

void kfolder_free(struct kfolder *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->o.nrules; i++) {
		frame_matcher_free(k->rm[i]);
		g_free(k->rname[i]);
	}
	g_free(k->rm);
	g_free(k->rname);
	g_string_free(k->out, TRUE);
	g_free(k);
}

/* s[0..len) and the nl - 1 bytes after it, within the stack's end: a
 * search there finds every occurrence that starts before len. */
static const char *find_before(const char *s, size_t stacklen, size_t len,
			       const char *n, size_t nl)
{
	size_t span = len + nl - 1;

	return find_bytes(s, span < stacklen ? span : stacklen, n, nl);
}

/*
 * Where the first frame that could be folded or dropped starts, or
 * SIZE_MAX if there is none.  Cheap substring tests: every kernel frame
 * holds "_[k]" or "[kernel", every unknown one "[unknown", and none of
 * these strings holds a ';', so the frames before the first occurrence
 * are kept as they are (and the usual stack is passed through without
 * being split).
 */
static size_t kfold_first(struct kfolder *k, const char *s, size_t len)
{
	struct frame hit;
	const char *p;
	size_t first = len;	/* bytes before it hold no candidate's start */
	bool found = false, kern = k->o.kernel || k->o.drop_kernel;

	/* "_[k]" and "[kernel" both hold "[k": one search finds either */
	for (size_t pos = 0; (k->o.placeholders || kern) &&
	     (p = find_bytes(s + pos, len - pos, "[k", 2)); pos = (size_t)(p - s) + 1) {
		size_t at = (size_t)(p - s);

		if (kern && at > 0 && s[at - 1] == '_' && at + 2 < len && s[at + 2] == ']') {
			first = at - 1, found = true;
			break;
		}
		if (len - at >= 7 && memcmp(p + 2, "ernel", 5) == 0) {
			first = at, found = true;
			break;
		}
	}
	if (k->o.unknown && (p = find_before(s, len, first, "[unknown", 8)))
		first = (size_t)(p - s), found = true;
	/* a rule's hit may be an empty last frame, which starts at len */
	for (size_t i = 0; i < k->o.nrules; i++)
		if (frame_matcher_find(k->rm[i], s, len, &hit) &&
		    (size_t)(hit.s - s) <= first)
			first = (size_t)(hit.s - s), found = true;
	if (!found)
		return SIZE_MAX;
	p = first ? memrchr(s, ';', first) : NULL;
	return p ? (size_t)(p - s) + 1 : 0;
}

static enum kclass classify(struct kfolder *k, const struct frame *f,
			    const char **name)
{
	for (size_t i = 0; i < k->o.nrules; i++)
		if (matcher_test(k->rm[i], f->s, f->len)) {
			*name = k->rname[i];
			return K_NAME;
		}
	*name = "[kernel]";
	if (k->o.drop_kernel || k->o.kernel || k->o.placeholders) {
		bool ph = is_kernel_placeholder(f->s, f->len);
		bool kern = ph || is_named_kernel(f->s, f->len);

		if (k->o.drop_kernel && kern)
			return K_DROP;
		if (k->o.kernel && kern)
			return ph ? K_NAME : K_NAMED_KERNEL;
		if (k->o.placeholders && ph)
			return K_NAME;
	}
	*name = "[unknown]";
	if (k->o.unknown && (equals(f->s, f->len, "[unknown]") ||
			     is_addr_placeholder(f->s, f->len, "[unknown <", 10)))
		return K_NAME;
	return K_KEEP;
}

/* True if s[0..len) is only blanks: readers trim a stack's final blanks,
 * so such a result would be read as no stack at all (found by fuzz/kfold). */
static bool all_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

/*
 * Appends a frame; *n counts them, so that empty frames keep their place.
 * Writes into the GString's buffer directly: g_string_append_len() is a
 * general insertion, and this runs for every frame of a changed stack.
 */
static inline void put(GString *out, size_t *n, const char *s, size_t len)
{
	size_t at = out->len;
	char *p;

	if (at + len + 2 > out->allocated_len) {
		g_string_set_size(out, (at + len + 2) * 2);
		g_string_truncate(out, at);
	}
	p = out->str + at;
	if ((*n)++)
		*p++ = ';';
	memcpy(p, s, len);
	p += len;
	*p = '\0';
	out->len = (size_t)(p - out->str);
}

/*
 * kfold --kernel's usual stack: its first kernel frame starts a run of
 * "NAME_[k]" frames to the leaf.  Returns the length of the first frame
 * (len if it is the only one) when every frame of tail[0..len) is such a
 * named kernel frame (no vDSO frame, and with --keep-entry an entry that
 * is no placeholder), else 0: the frame-by-frame loop decides.  Nothing
 * copied.
 */
static size_t kernel_tail(const struct kfolder *k, const char *tail, size_t len)
{
	static const char mark[4] = { '_', '[', 'k', ']' };

	if (k->o.keep_entry && len && tail[0] == '[')
		return 0;
	return frames_ending_in(tail, len, mark, true);
}

const char *kfolder_apply(struct kfolder *k, const char *stack, size_t len,
			  size_t *outlen)
{
	const char *run = NULL;	/* the name of the run being folded */
	bool entry_only = false;	/* run printed as its entry frame so far */
	size_t n = 0, start = kfold_first(k, stack, len), entry;
	struct frame_iter it;
	struct frame fr;

	*outlen = len;
	if (start == SIZE_MAX)
		return stack;
	/* what the loop below makes of a kernel run to the leaf */
	if (k->fast_kernel && (entry = kernel_tail(k, stack + start, len - start))) {
		size_t keep = start;

		if (k->o.keep_entry) {
			if (entry == len - start)	/* the entry is the leaf */
				return stack;
			keep = start + entry + 1;
		}
		g_string_set_size(k->out, keep + 8);
		memcpy(k->out->str, stack, keep);
		memcpy(k->out->str + keep, "[kernel]", 8);
		*outlen = k->out->len;
		return k->out->str;
	}
	/* the frames before start are kept: copied at once, not split */
	g_string_truncate(k->out, 0);
	if (start)
		put(k->out, &n, stack, start - 1);	/* n becomes 1 */
	frame_iter_init(&it, stack + start, len - start);
	while (frame_iter_next(&it, &fr)) {
		const struct frame *f = &fr;
		const char *name;
		enum kclass c = classify(k, f, &name);

		if (c == K_DROP)
			continue;	/* runs join across dropped frames */
		if (c == K_KEEP) {
			put(k->out, &n, f->s, f->len);
			run = NULL;
			continue;
		}
		if (run && (run == name || strcmp(run, name) == 0)) {
			if (entry_only)
				put(k->out, &n, name, strlen(name));
			entry_only = false;
			continue;
		}
		run = name;
		entry_only = c == K_NAMED_KERNEL && k->o.keep_entry;
		if (entry_only)
			put(k->out, &n, f->s, f->len);
		else
			put(k->out, &n, name, strlen(name));
	}
	if (all_blank(k->out->str, k->out->len)) {
		g_string_assign(k->out, "[kernel]");
		start = 0;	/* no longer a copy of the stack's start */
	}
	/* out's first start bytes are the stack's */
	if (k->out->len == len && memcmp(k->out->str + start, stack + start, len - start) == 0)
		return stack;
	*outlen = k->out->len;
	return k->out->str;
}

/* --- fgrep-stacks -------------------------------------------------------- */

struct stack_filter {
	enum stack_where where;
	enum stack_view view;
	bool invert;
	bool every;		/* m matches every frame ('', '^', '$') */
	struct frame_matcher *m;
	struct frame_matcher **ex;
	size_t nex;
	GString *out;
};

struct stack_filter *stack_filter_new(const struct stack_filter_opts *o,
				      GError **err)
{
	struct stack_filter *f = g_new0(struct stack_filter, 1);

	f->where = o->where;
	f->view = o->view;
	f->invert = o->invert;
	f->out = g_string_new(NULL);
	f->ex = g_new0(struct frame_matcher *, o->nexclude + 1);
	if (o->pattern && !(f->m = frame_matcher_new(o->pattern, o->flags, err)))
		goto fail;
	f->every = f->m && f->m->lit && f->m->litlen == 0 && !(f->m->at_start && f->m->at_end);
	for (size_t i = 0; i < o->nexclude; i++, f->nex++)
		if (!(f->ex[i] = frame_matcher_new(o->exclude[i], 0, err)))
			goto fail;
	return f;
fail:
	stack_filter_free(f);
	return NULL;
}

void stack_filter_free(struct stack_filter *f)
{
	if (!f)
		return;
	frame_matcher_free(f->m);
	for (size_t i = 0; i < f->nex; i++)
		frame_matcher_free(f->ex[i]);
	g_free(f->ex);
	g_string_free(f->out, TRUE);
	g_free(f);
}

static bool excluded(struct stack_filter *f, const struct frame *fr)
{
	for (size_t i = 0; i < f->nex; i++)
		if (matcher_test(f->ex[i], fr->s, fr->len))
			return true;
	return false;
}

/*
 * Where the first frame that an exclude matches starts, or SIZE_MAX.  Once
 * one exclude has a hit, the others are searched for only in the frames
 * before it.
 */
static size_t exclude_first(struct stack_filter *f, const char *s, size_t len)
{
	struct frame hit;
	size_t first = SIZE_MAX;

	for (size_t i = 0; i < f->nex; i++) {
		size_t before = first == SIZE_MAX ? len : first ? first - 1 : 0;

		if ((first == SIZE_MAX || first > 0) &&
		    frame_matcher_find(f->ex[i], s, before, &hit))
			first = (size_t)(hit.s - s);
	}
	return first;
}

/*
 * True when every frame of tail[0..len) ends in m's needle and m is a plain
 * suffix test ('_\[k\]$'): the frames --exclude removes from a stack's
 * end, tested without the general per-frame loop.
 */
static bool all_end_with(const struct frame_matcher *m, const char *tail, size_t len)
{
	struct frame_iter it;
	struct frame fr;

	if (!m->lit || !m->at_end || m->at_start || (m->flags & FRAME_MATCH_ICASE))
		return false;
	if (m->litlen == 4)
		return frames_ending_in(tail, len, m->lit, false) != 0;
	frame_iter_init(&it, tail, len);
	while (frame_iter_next(&it, &fr))
		if (fr.len < m->litlen || !lit_equal(m, fr.s + fr.len - m->litlen))
			return false;
	return true;
}

/*
 * Adds the kept frames s[from..to) (whole frames) to the copy, which starts
 * with the frames before start, s[0..start - 1).
 */
static void keep_frames(struct stack_filter *f, const char *s, size_t start,
			size_t from, size_t to, bool *copied, size_t *n)
{
	if (!*copied) {
		g_string_truncate(f->out, 0);
		if (start)
			put(f->out, n, s, start - 1);	/* n becomes 1 */
		*copied = true;
	}
	put(f->out, n, s + from, to - from);
}

/* True when m's matches can be searched for in a whole stack at once: a
 * fixed needle without ';', of any anchoring, matched case-sensitively. */
static bool whole_stack_literal(const struct frame_matcher *m)
{
	return m->lit && m->litlen && !(m->flags & FRAME_MATCH_ICASE) &&
	       !m->lit_semi;
}

/*
 * Removes excluded frames; returns the stack to match against: s itself
 * (*len shortened) when only frames at its end go, as --exclude '_\[k\]$'
 * removes a stack's kernel frames, else a copy.  One fixed needle
 * (--exclude '\[unknown\]') is searched for in the rest of the stack, and
 * the frames between two matches are copied at once.
 */
static const char *exclude_frames(struct stack_filter *f, const char *s,
				  size_t *len)
{
	size_t n = 0, start = f->nex ? exclude_first(f, s, *len) : SIZE_MAX, pos;
	bool copied = false;
	struct frame_iter it;
	struct frame fr;

	if (start == SIZE_MAX)
		return s;
	if (all_end_with(f->ex[0], s + start, *len - start)) {
		/* every frame from start goes */
	} else if (f->nex == 1 && whole_stack_literal(f->ex[0])) {
		for (pos = start;;) {
			if (!frame_matcher_find(f->ex[0], s + pos, *len - pos, &fr)) {
				keep_frames(f, s, start, pos, *len, &copied, &n);
				break;
			}
			size_t at = (size_t)(fr.s - s), end = at + fr.len;

			if (at > pos)
				keep_frames(f, s, start, pos, at - 1, &copied, &n);
			if (end == *len)
				break;
			pos = end + 1;
		}
	} else {
		frame_iter_init(&it, s + start, *len - start);
		while (frame_iter_next(&it, &fr))
			if (!excluded(f, &fr))
				keep_frames(f, s, start, (size_t)(fr.s - s),
					    (size_t)(fr.s - s) + fr.len, &copied, &n);
	}
	if (!copied && start && !all_blank(s, start - 1)) {
		*len = start - 1;	/* the frames before start, as they are */
		return s;
	}
	if (!copied || all_blank(f->out->str, f->out->len))
		g_string_assign(f->out, "[excluded]");
	*len = f->out->len;
	return f->out->str;
}

bool stack_filter_apply(struct stack_filter *f, const char *stack, size_t len,
			const char **out, size_t *outlen)
{
	struct frame hit = { stack, len };
	const char *s = exclude_frames(f, stack, &len), *p;
	bool match = true;

	/* fgrep-stacks --exclude REGEX '': the stack is kept whole, no
	 * need to find the frame that matches */
	if (f->every && (f->invert || f->view == VIEW_WHOLE)) {
		*out = s;
		*outlen = len;
		if (f->invert)
			return false;
		if (all_blank(s, len)) {
			*out = "[empty]";
			*outlen = 7;
		}
		return true;
	}
	if (f->m) {
		switch (f->where) {
		case STACK_ANY:
			match = frame_matcher_find(f->m, s, len, &hit);
			break;
		case STACK_LEAF:
			p = memrchr(s, ';', len);
			hit.s = p ? p + 1 : s;
			hit.len = len - (size_t)(hit.s - s);
			match = frame_matcher_test(f->m, hit.s, hit.len);
			break;
		case STACK_ROOT:
			p = memchr(s, ';', len);
			hit.s = s;
			hit.len = p ? (size_t)(p - s) : len;
			match = frame_matcher_test(f->m, hit.s, hit.len);
			break;
		}
	}
	*out = s;
	*outlen = len;
	if (f->invert)
		return !match;
	if (!match || !f->m)
		return match;
	if (f->view == VIEW_FOCUS) {
		*out = hit.s;
		*outlen = len - (size_t)(hit.s - s);
	} else if (f->view == VIEW_CALLERS) {
		*outlen = (size_t)(hit.s - s) + hit.len;
	}
	if (all_blank(*out, *outlen)) {	/* cut at an empty frame: not a stack */
		*out = "[empty]";
		*outlen = 7;
	}
	return true;
}

/* --- fold-diff ----------------------------------------------------------- */

const char *stack_strip_hex(const char *stack, size_t len, GString *buf,
			    size_t *outlen)
{
	const char *p = find_bytes(stack, len, "0x", 2), *end = stack + len;

	*outlen = len;
	while (p && !(p + 2 < end && g_ascii_isxdigit(p[2])))
		p = find_bytes(p + 1, (size_t)(end - p - 1), "0x", 2);
	if (!p)
		return stack;
	g_string_truncate(buf, 0);
	g_string_append_len(buf, stack, p - stack);
	while (p < end) {
		if (p[0] == '0' && p + 2 < end && p[1] == 'x' && g_ascii_isxdigit(p[2])) {
			g_string_append_len(buf, "0x...", 5);
			for (p += 2; p < end && g_ascii_isxdigit(*p); p++)
				;
		} else {
			g_string_append_c(buf, *p++);
		}
	}
	*outlen = buf->len;
	return buf->str;
}
