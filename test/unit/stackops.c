/*
 * Unit tests for lib/transform/stackops.h and lib/transform/folddiff.h.  Exit 0 when all pass;
 * each failure prints the expression, the expected and the actual value.
 */
#include "transform/folddiff.h"
#include "transform/stackops.h"

#include "check.h"

#include <stdlib.h>

static void check_slice(int line, const char *what, const char *got, size_t n,
			const char *want)
{
	if (strlen(want) != n || memcmp(got, want, n) != 0) {
		fprintf(stderr, "%s:%d: %s: got '%.*s', want '%s'\n", __FILE__, line,
			what, (int)n, got, want);
		check_failures++;
	}
}
#define CHECK_SLICE(what, got, n, want) check_slice(__LINE__, what, got, n, want)

static void test_split(void)
{
	struct frame_vec fv = { 0 };

	frame_vec_split(&fv, "a;bc;;d", 7);
	CHECK(fv.n == 4);
	CHECK_SLICE("frame 1", fv.v[1].s, fv.v[1].len, "bc");
	CHECK(fv.v[2].len == 0);
	frame_vec_split(&fv, "", 0);
	CHECK(fv.n == 1 && fv.v[0].len == 0);
	/* more frames than the first allocation */
	GString *s = g_string_new("f0");
	for (int i = 1; i < 300; i++)
		g_string_append_printf(s, ";f%d", i);
	frame_vec_split(&fv, s->str, s->len);
	CHECK(fv.n == 300);
	CHECK_SLICE("frame 299", fv.v[299].s, fv.v[299].len, "f299");
	g_string_free(s, TRUE);
	frame_vec_release(&fv);
}

/* The frame frame_matcher_find() reports, or "-" for none. */
static const char *find(const char *pattern, unsigned flags, const char *stack)
{
	static char out[256];
	GError *err = NULL;
	struct frame_matcher *m = frame_matcher_new(pattern, flags, &err);
	struct frame hit;

	if (!m) {
		snprintf(out, sizeof(out), "error: %s", err->message);
		g_error_free(err);
		return out;
	}
	if (frame_matcher_find(m, stack, strlen(stack), &hit))
		snprintf(out, sizeof(out), "%.*s@%d", (int)hit.len, hit.s, (int)(hit.s - stack));
	else
		strcpy(out, "-");
	frame_matcher_free(m);
	return out;
}

#define CHECK_FIND(pat, flags, stack, want) do { const char *g_ = find(pat, flags, stack); \
	if (strcmp(g_, want) != 0) { fprintf(stderr, "%s:%d: find('%s', %d, '%s'): got '%s', want '%s'\n", \
		__FILE__, __LINE__, pat, flags, stack, g_, want); check_failures++; } } while (0)

/* frame_matcher_test() with a matcher made for the one test */
static bool frame_test_once(const char *pattern, unsigned flags, const char *frame)
{
	struct frame_matcher *m = frame_matcher_new(pattern, flags, NULL);
	bool r = frame_matcher_test(m, frame, strlen(frame));

	frame_matcher_free(m);
	return r;
}

static void test_matcher(void)
{
	/* fixed strings: plain, escaped, -F, -i, -x */
	CHECK_FIND("lock", 0, "main;pthread_mutex_lock;futex", "pthread_mutex_lock@5");
	CHECK_FIND("\\[unknown\\]", 0, "a;[unknown];b", "[unknown]@2");
	CHECK_FIND("[unknown]", FRAME_MATCH_FIXED, "a;[unknown];b", "[unknown]@2");
	CHECK_FIND("LOCK", FRAME_MATCH_ICASE, "a;Mutex_Lock", "Mutex_Lock@2");
	CHECK_FIND("lock", FRAME_MATCH_WHOLE, "a;mutex_lock;lock;b", "lock@13");
	CHECK_FIND("LOCK", FRAME_MATCH_WHOLE | FRAME_MATCH_ICASE, "lock_a;Lock", "Lock@7");
	CHECK_FIND("a;b", FRAME_MATCH_FIXED, "a;b", "-");	/* no frame holds ';' */
	CHECK_FIND("", FRAME_MATCH_FIXED, "x;y", "x@0");
	CHECK_FIND("", FRAME_MATCH_FIXED | FRAME_MATCH_WHOLE, "x;;y", "@2");
	CHECK_FIND("zzz", 0, "a;b", "-");
	/* anchored needles of 5 to 8 bytes: both ends of the needle count */
	CHECK(frame_test_once("abcdefg$", 0, "xxabcdefg") && !frame_test_once("abcdefg$", 0, "xxabcdXfg") &&
	      !frame_test_once("abcdefg$", 0, "xxaXcdefg"));
	CHECK(frame_test_once("^abcdefgh", 0, "abcdefghij") && !frame_test_once("^abcdefgh", 0, "abcdXfghij") &&
	      !frame_test_once("^abcdefgh", 0, "Xbcdefghij"));
	CHECK(frame_test_once("^abcde$", 0, "abcde") && !frame_test_once("^abcde$", 0, "abcdX") &&
	      !frame_test_once("^abcde$", 0, "Xbcde") && !frame_test_once("^abcde$", 0, "abcdef"));
	CHECK(frame_test_once("abcde", FRAME_MATCH_WHOLE, "abcde") &&
	      !frame_test_once("abcde", FRAME_MATCH_WHOLE, "abXde"));
	/* regexes: anchors see frame boundaries, the first frame wins */
	CHECK_FIND("^b", 0, "ab;ba;b", "ba@3");
	CHECK_FIND("a$", 0, "ab;ba;b", "ba@3");
	CHECK_FIND("\\bmain\\b", 0, "domain;main", "main@7");
	CHECK_FIND("lock.*wait", 0, "lock;x;lock_wait", "lock_wait@7");
	CHECK_FIND("Sched.*::step", FRAME_MATCH_ICASE, "w;decodescheduler::step", "decodescheduler::step@2");
	CHECK_FIND("b|c", FRAME_MATCH_WHOLE, "bc;c", "c@3");
	CHECK_FIND("a+", FRAME_MATCH_WHOLE, "ab;aa", "aa@3");
	/* a match that would span frames must not count */
	CHECK_FIND("a[^x]b", 0, "xa;bx;ayb", "ayb@6");
	CHECK_FIND("a\\sb", 0, "a;b", "-");
	CHECK_FIND("a\\Wb", 0, "a;b;a-b", "a-b@4");
	/* patterns tested frame by frame: lookaround, \A, inline options */
	CHECK_FIND("(?<=a)b", 0, "a;b;ab", "ab@4");
	CHECK_FIND("a(?!\\n)", 0, "ba;ac", "ba@0");
	CHECK_FIND("\\Ab", 0, "ab;b", "b@3");
	CHECK_FIND("(?i)MAIN", 0, "x;main", "main@2");
	CHECK_FIND("x$(?-m)", 0, "ax;b", "ax@0");
	/* an empty match at the end of a frame belongs to that frame */
	CHECK_FIND("$", 0, "ab;c", "ab@0");
	CHECK_FIND("", 0, "ab;c", "ab@0");
	/* bytes that are not UTF-8, and \x85 which is a newline in Unicode */
	CHECK_FIND("^b", 0, "a\x85" "b;c", "-");
	CHECK_FIND("\xff", 0, "a;\xfe\xff", "\xfe\xff@2");
	/* errors name the pattern */
	CHECK(strncmp(find("a(", 0, "a"), "error: bad regex 'a('", 21) == 0);

	/* frame_matcher_test */
	{
		struct frame_matcher *m = frame_matcher_new("^do_sys", 0, NULL);
		CHECK(frame_matcher_test(m, "do_syscall_64", 13));
		CHECK(!frame_matcher_test(m, "x_do_sys", 8));
		CHECK(frame_matcher_test(m, "do_sys;zzz", 6));	/* length, not NUL */
		frame_matcher_free(m);
	}
}

/* Random stacks against the frame-by-frame definition of a match. */
static void test_matcher_random(void)
{
	static const char *pats[] = {
		"ab", "a.b", "^a", "b$", "^$", "a|b$", "[^a]b", "\\bab", "a\\Wb", "(a|;)b",
		"a\\s*b", "^.{2}$", "b\\n?a", "\\d", "(?<=a)b", "a(?=b)", "(?s)a.b", "\\Aa",
		/* with a required literal, checked with memmem first */
		"ab+a", "(ba)?ab", "[ab]ba", "[[:alpha:]]1", "a\\-b*", "b1{2}", "\\bab\\b",
		"(a)b1", "a b", "[^;]ab", "a\\]?b", "a{1,2}b", "b*ab", "[a-b]{2}1", "\\d+a",
		"(ab)+", "a(b)?1", "a{b",
		/* anchored literals: prefix, suffix and equality tests */
		"^ab", "ab$", "^a b$", "^$", "^", "$", "a\\$", "a\\\\$", "\\^a", "^\\]", "]$",
		NULL };
	static const char alphabet[] = "ab;;-1 ]$\\";
	GRand *rnd = g_rand_new_with_seed(42);
	char stack[24];

	for (int p = 0; pats[p]; p++)
		for (unsigned flags = 0; flags < 8; flags += 2) {	/* not FIXED */
			struct frame_matcher *m = frame_matcher_new(pats[p], flags, NULL);
			struct frame_vec fv = { 0 };
			/* the truth: GRegex alone on each frame */
			char *w = g_strdup_printf(flags & FRAME_MATCH_WHOLE ? "\\A(?:%s)\\z" : "%s", pats[p]);
			GRegex *re = g_regex_new(w, G_REGEX_RAW | G_REGEX_NEWLINE_LF |
						 (flags & FRAME_MATCH_ICASE ? G_REGEX_CASELESS : 0), 0, NULL);

			g_free(w);
			CHECK(m != NULL && re != NULL);
			for (int iter = 0; m && re && iter < 2000; iter++) {
				int n = g_rand_int_range(rnd, 0, (int)sizeof(stack));
				struct frame hit;
				const char *want = NULL;
				bool got;

				for (int i = 0; i < n; i++)
					stack[i] = alphabet[g_rand_int_range(rnd, 0, sizeof(alphabet) - 1)];
				if (flags & 2)
					for (int i = 0; i < n; i++)
						if (stack[i] == 'a' && g_rand_boolean(rnd))
							stack[i] = 'A';
				frame_vec_split(&fv, stack, (size_t)n);
				for (size_t i = 0; i < fv.n && !want; i++)
					if (g_regex_match_full(re, fv.v[i].s, (gssize)fv.v[i].len,
							       0, 0, NULL, NULL))
						want = fv.v[i].s;
				for (size_t i = 0; i < fv.n; i++)
					if (frame_matcher_test(m, fv.v[i].s, fv.v[i].len) !=
					    g_regex_match_full(re, fv.v[i].s, (gssize)fv.v[i].len,
							       0, 0, NULL, NULL)) {
						fprintf(stderr, "random: pattern '%s' flags %u: test differs on frame '%.*s'\n",
							pats[p], flags, (int)fv.v[i].len, fv.v[i].s);
						check_failures++;
					}
				got = frame_matcher_find(m, stack, (size_t)n, &hit);
				if (got != (want != NULL) || (got && hit.s != want)) {
					fprintf(stderr, "random: pattern '%s' flags %u stack '%.*s': "
						"find %s at %d, frame by frame %s at %d\n", pats[p], flags,
						n, stack, got ? "matches" : "fails", got ? (int)(hit.s - stack) : -1,
						want ? "matches" : "fails", want ? (int)(want - stack) : -1);
					check_failures++;
					break;
				}
			}
			frame_vec_release(&fv);
			frame_matcher_free(m);
			if (re)
				g_regex_unref(re);
		}
	g_rand_free(rnd);
}

/* Fixed strings of every length against glibc's memmem, frame by frame,
 * on stacks long enough to use the 16-byte search. */
static void test_fixed_random(void)
{
	static const char alphabet[] = "ab;-";
	GRand *rnd = g_rand_new_with_seed(7);
	char stack[80], needle[20];
	struct frame_vec fv = { 0 };

	for (int iter = 0; iter < 20000; iter++) {
		int n = g_rand_int_range(rnd, 0, (int)sizeof(stack));
		int nl = g_rand_int_range(rnd, 1, (int)sizeof(needle));
		unsigned flags = FRAME_MATCH_FIXED | (iter & 1 ? FRAME_MATCH_WHOLE : 0);
		const char *want = NULL;
		struct frame hit;
		bool got;

		for (int i = 0; i < n; i++)
			stack[i] = alphabet[g_rand_int_range(rnd, 0, 4)];
		for (int i = 0; i < nl; i++)	/* no ';': it could never match */
			needle[i] = alphabet[g_rand_int_range(rnd, 0, 2) * 3];
		needle[nl] = '\0';
		frame_vec_split(&fv, stack, (size_t)n);
		for (size_t i = 0; i < fv.n && !want; i++)
			if (flags & FRAME_MATCH_WHOLE ? fv.v[i].len == (size_t)nl &&
			    memcmp(fv.v[i].s, needle, (size_t)nl) == 0
			    : memmem(fv.v[i].s, fv.v[i].len, needle, (size_t)nl) != NULL)
				want = fv.v[i].s;
		struct frame_matcher *m = frame_matcher_new(needle, flags, NULL);
		got = frame_matcher_find(m, stack, (size_t)n, &hit);
		frame_matcher_free(m);
		if (got != (want != NULL) || (got && hit.s != want)) {
			fprintf(stderr, "fixed: '%s' in '%.*s': got %d, want %d\n", needle, n, stack,
				got ? (int)(hit.s - stack) : -1, want ? (int)(want - stack) : -1);
			check_failures++;
			break;
		}
	}
	frame_vec_release(&fv);
	g_rand_free(rnd);
}

static const char *kfold(const struct kfold_opts *o, const char *stack)
{
	static char out[512];
	struct kfolder *k = kfolder_new(o, NULL);
	size_t n;
	const char *s = kfolder_apply(k, stack, strlen(stack), &n);

	snprintf(out, sizeof(out), "%.*s%s", (int)n, s, s == stack ? " (same)" : "");
	kfolder_free(k);
	return out;
}

#define CHECK_KFOLD(o, in, want) do { const char *g_ = kfold(o, in); \
	if (strcmp(g_, want) != 0) { fprintf(stderr, "%s:%d: kfold('%s'): got '%s', want '%s'\n", \
		__FILE__, __LINE__, in, g_, want); check_failures++; } } while (0)

#define KK "[[kernel.kallsyms]]"

static void test_kfold(void)
{
	struct kfold_opts def = KFOLD_OPTS_INIT;
	struct kfold_opts kern = { .placeholders = true, .kernel = true };
	struct kfold_opts entry = { .placeholders = true, .kernel = true, .keep_entry = true };
	struct kfold_opts drop = { .placeholders = true, .drop_kernel = true };
	struct kfold_opts unk = { .placeholders = true, .unknown = true };
	struct kfold_rule rules[] = { { "^std::", "std" }, { "^boost::", "std" } };
	struct kfold_opts rl = { .placeholders = true, .rules = rules, .nrules = 2 };

	/* placeholder runs at the start, middle, end, and the whole stack */
	CHECK_KFOLD(&def, KK ";" KK ";a;b", "[kernel];a;b");
	CHECK_KFOLD(&def, "p;" KK ";" KK ";" KK ";b", "p;[kernel];b");
	CHECK_KFOLD(&def, "p;b;" KK, "p;b;[kernel]");
	CHECK_KFOLD(&def, KK ";" KK, "[kernel]");
	CHECK_KFOLD(&def, "p;" KK ";x;[kernel.kallsyms];" KK "_[k]", "p;[kernel];x;[kernel]");
	CHECK_KFOLD(&def, "p;a;b", "p;a;b (same)");
	CHECK_KFOLD(&def, "p;[kernel];x", "p;[kernel];x (same)");	/* idempotent */
	CHECK_KFOLD(&def, "p;[kernel];" KK, "p;[kernel]");
	CHECK_KFOLD(&def, "p;sys_read_[k];" KK, "p;sys_read_[k];[kernel]");
	CHECK_KFOLD(&def, "p;[[kernel.kallsyms]]x", "p;[[kernel.kallsyms]]x (same)");
	CHECK_KFOLD(&def, ";" KK ";;" KK, ";[kernel];;[kernel]");
	/* fp-collapse --addrs placeholders */
	CHECK_KFOLD(&def, "p;[[kernel.kallsyms] <ffffffff81000130>];" KK "_[k];"
		    "[[kernel.kallsyms] <ffffffff81000e06>]_[k];x", "p;[kernel];x");
	CHECK_KFOLD(&def, "p;[[kernel.kallsyms] <>];[[kernel.kallsyms] x]", "p;[[kernel.kallsyms] <>];[[kernel.kallsyms] x] (same)");
	CHECK_KFOLD(&unk, "p;[unknown <7ffc1>];[unknown];a", "p;[unknown];a");
	CHECK_KFOLD(&unk, "p;[unknown <7ffc1>];[unknown <7ffc2>];a", "p;[unknown];a");
	/* --kernel, --keep-entry */
	CHECK_KFOLD(&kern, "p;write;entry_SYSCALL_64_[k];do_syscall_64_[k];" KK "_[k]",
		    "p;write;[kernel]");
	CHECK_KFOLD(&kern, "p;a_[k];u;b_[k]", "p;[kernel];u;[kernel]");
	CHECK_KFOLD(&entry, "p;write;entry_SYSCALL_64_[k];do_syscall_64_[k];ksys_write_[k]",
		    "p;write;entry_SYSCALL_64_[k];[kernel]");
	CHECK_KFOLD(&entry, "p;write;entry_SYSCALL_64_[k]", "p;write;entry_SYSCALL_64_[k] (same)");
	CHECK_KFOLD(&entry, "p;" KK "_[k];do_syscall_64_[k]", "p;[kernel]");
	CHECK_KFOLD(&entry, "p;entry_SYSCALL_64_[k];[kernel]", "p;entry_SYSCALL_64_[k];[kernel] (same)");
	/* --drop-kernel: runs join across the dropped frames */
	CHECK_KFOLD(&drop, "p;a;x_[k];" KK ";b", "p;a;b");
	CHECK_KFOLD(&drop, "x_[k];" KK, "[kernel]");
	/* --unknown */
	CHECK_KFOLD(&unk, "p;[unknown];[unknown];a;[unknown]", "p;[unknown];a;[unknown]");
	CHECK_KFOLD(&unk, "p;[unknown];a", "p;[unknown];a (same)");
	/* -e REGEX --as NAME: first rule wins, runs merge by name */
	CHECK_KFOLD(&rl, "p;std::a;std::b;boost::c;main;std::d", "p;std;main;std");
	CHECK_KFOLD(&rl, "p;mystd::a", "p;mystd::a (same)");
	{
		struct kfold_rule bad[] = { { "(", "x" } }, noname[] = { { "a", "" } };
		struct kfold_opts o = { .rules = bad, .nrules = 1 };
		GError *err = NULL;
		CHECK(kfolder_new(&o, &err) == NULL && err && strstr(err->message, "bad regex '('"));
		g_clear_error(&err);
		o.rules = noname;
		CHECK(kfolder_new(&o, &err) == NULL && err);
		g_clear_error(&err);
	}
	CHECK(frame_is_kernel("x_[k]", 5) && !frame_is_kernel("x", 1));
	CHECK(frame_is_kernel_placeholder("[kernel.kallsyms]_[k]", 21));
	/* the vDSO runs in user space, whatever the Perl script marked it */
	CHECK(!frame_is_kernel("__vdso_clock_gettime_[k]", 24));
	CHECK(!frame_is_kernel("[[vdso]]_[k]", 12));
	CHECK(frame_is_kernel("vdso_fault_[k]", 14));
}

/*
 * kfold --kernel's shortcut for a run of named kernel frames to the leaf,
 * against the frame-by-frame loop (which a rule that matches nothing
 * forces) on random stacks of kernel, placeholder, vDSO, empty and
 * look-alike frames: the same bytes, and the input itself when unchanged.
 */
static void test_kfold_kernel_random(void)
{
	static const char *user[] = { "p", "main", "", " ", "[unknown]", "k]", "[k]",
				      "x_[k]y", "_[k]x", "__vdso", "[kernel]", "[kernel.kallsyms]",
				      KK, "a b", "f_[k ]" };
	static const char *kern[] = { "a_[k]", "_[k]", "do_syscall_64_[k]", "entry_SYSCALL_64_[k]",
				      "vdso_fault_[k]", "_[k]_[k]", "[kernel.kallsyms]_[k]", KK "_[k]",
				      "[[kernel.kallsyms] <ffff8100>]_[k]", "[x]_[k]",
				      "__vdso_clock_gettime_[k]", "[[vdso]]_[k]", "__v_[k]", "[[vds_[k]" };
	struct kfold_rule none[] = { { "(?!)", "X" } };
	GRand *rnd = g_rand_new_with_seed(21);
	GString *st = g_string_new(NULL);
	size_t changed = 0, bad = 0;

	for (int entry = 0; entry < 2; entry++) {
		struct kfold_opts o = { .placeholders = true, .kernel = true, .keep_entry = entry };
		struct kfold_opts r = o;
		struct kfolder *k, *ref;

		r.rules = none;
		r.nrules = 1;
		k = kfolder_new(&o, NULL);
		ref = kfolder_new(&r, NULL);
		for (int i = 0; i < 20000; i++) {
			int nu = g_rand_int_range(rnd, 0, 4), nk = g_rand_int_range(rnd, 0, 6);
			const char *a, *b;
			size_t na, nb;

			g_string_truncate(st, 0);
			for (int j = 0; j < nu + nk; j++) {
				/* user frames, then mostly kernel ones, now and then odd ones */
				bool odd = g_rand_int_range(rnd, 0, 12) == 0;
				const char **pool = (j < nu) != odd ? user : kern;
				int n = pool == user ? (int)G_N_ELEMENTS(user) : (int)G_N_ELEMENTS(kern);
				int pick = g_rand_int_range(rnd, 0, n);

				/* the ordinary named frames most of the time */
				if (pool == kern && g_rand_int_range(rnd, 0, 3))
					pick = g_rand_int_range(rnd, 0, 4);
				if (j)
					g_string_append_c(st, ';');
				g_string_append(st, pool[pick]);
			}
			a = kfolder_apply(k, st->str, st->len, &na);
			changed += a != st->str;
			b = kfolder_apply(ref, st->str, st->len, &nb);
			if (na != nb || memcmp(a, b, na) != 0 || (a == st->str) != (b == st->str)) {
				if (bad++ < 5)
					fprintf(stderr, "kfold --kernel%s '%s': got '%.*s'%s, want '%.*s'%s\n",
						entry ? " --keep-entry" : "", st->str, (int)na, a,
						a == st->str ? " (same)" : "", (int)nb, b,
						b == st->str ? " (same)" : "");
			}
		}
		kfolder_free(k);
		kfolder_free(ref);
	}
	CHECK(bad == 0);
	CHECK(changed > 10000);	/* most stacks end in a kernel run */
	g_string_free(st, TRUE);
	g_rand_free(rnd);
}

/*
 * --exclude with fixed needles ('_\[k\]$', a suffix, with its shortcut for
 * frames removed from the end; '\[unknown\]', searched for in the whole
 * stack; '^wrap$', '^x_') against the same excludes as regexes, tested
 * frame by frame by PCRE, on random stacks: the same bytes, one filter
 * reused across stacks, alone and with a second exclude.
 */
static void test_exclude_random(void)
{
	static const char *pool[] = { "p", "main", "", " ", "a_[k]", "_[k]", "[k]", "k]",
				      "x_[k]y", "b_[k]_[k]", "do_syscall_64_[k]", "\t", "[unknown]",
				      "a[unknown]b", "[unknown][unknown]", "[unknown", "wrap", "x_" };
	static const char *lit[] = { "_\\[k\\]$", "\\[unknown\\]", "^wrap$", "^x_" };
	static const char *re[] = { "(?:_\\[k\\])$", "(?:\\[unknown\\])", "^(?:wrap)$", "^(?:x_)" };
	GRand *rnd = g_rand_new_with_seed(22);
	GString *st = g_string_new(NULL);
	size_t bad = 0, prefix = 0;

	for (size_t k = 0; k < 2 * G_N_ELEMENTS(lit); k++) {
		size_t e = k / 2, nex = 1 + k % 2;
		const char *la[] = { lit[e], lit[(e + 1) % G_N_ELEMENTS(lit)] };
		const char *ra[] = { re[e], re[(e + 1) % G_N_ELEMENTS(re)] };
		struct stack_filter_opts a = { .pattern = "", .exclude = la, .nexclude = nex };
		struct stack_filter_opts b = { .pattern = "", .exclude = ra, .nexclude = nex };
		struct stack_filter *fa = stack_filter_new(&a, NULL), *fb = stack_filter_new(&b, NULL);

		for (int i = 0; i < 10000; i++) {
			int nf = g_rand_int_range(rnd, 1, 8);
			const char *oa, *ob;
			size_t na, nb;
			bool ka, kb;

			g_string_truncate(st, 0);
			for (int j = 0; j < nf; j++) {
				int pick = g_rand_int_range(rnd, 0, (int)G_N_ELEMENTS(pool));

				if (j >= nf / 2 && g_rand_int_range(rnd, 0, 3))	/* kernel leaves */
					pick = 4 + g_rand_int_range(rnd, 0, 2);
				if (j)
					g_string_append_c(st, ';');
				g_string_append(st, pool[pick]);
			}
			ka = stack_filter_apply(fa, st->str, st->len, &oa, &na);
			prefix += oa == st->str && na < st->len;
			kb = stack_filter_apply(fb, st->str, st->len, &ob, &nb);
			if (ka != kb || na != nb || memcmp(oa, ob, na) != 0) {
				if (bad++ < 5)
					fprintf(stderr, "--exclude '%s'%s: '%s' gave '%.*s', the regex '%.*s'\n",
						la[0], nex > 1 ? " and another" : "", st->str,
						(int)na, oa, (int)nb, ob);
			}
		}
		stack_filter_free(fa);
		stack_filter_free(fb);
	}
	CHECK(bad == 0);
	CHECK(prefix > 5000);	/* the stack's start, as it is, often */
	g_string_free(st, TRUE);
	g_rand_free(rnd);
}

static const char *filter(const struct stack_filter_opts *o, const char *stack)
{
	static char out[512];
	struct stack_filter *f = stack_filter_new(o, NULL);
	const char *s;
	size_t n;

	if (stack_filter_apply(f, stack, strlen(stack), &s, &n))
		snprintf(out, sizeof(out), "%.*s", (int)n, s);
	else
		strcpy(out, "(dropped)");
	stack_filter_free(f);
	return out;
}

#define CHECK_FILTER(o, in, want) do { const char *g_ = filter(o, in); \
	if (strcmp(g_, want) != 0) { fprintf(stderr, "%s:%d: filter('%s'): got '%s', want '%s'\n", \
		__FILE__, __LINE__, in, g_, want); check_failures++; } } while (0)

static void test_filter(void)
{
	const char *ex[] = { "\\[unknown\\]", "^wrap$" };
	struct stack_filter_opts any = { .pattern = "lock" };
	struct stack_filter_opts leaf = { .pattern = "lock", .where = STACK_LEAF };
	struct stack_filter_opts root = { .pattern = "^p", .where = STACK_ROOT };
	struct stack_filter_opts focus = { .pattern = "lock", .view = VIEW_FOCUS };
	struct stack_filter_opts callers = { .pattern = "lock", .view = VIEW_CALLERS };
	struct stack_filter_opts inv = { .pattern = "lock", .invert = true };
	struct stack_filter_opts exc = { .pattern = "b", .exclude = ex, .nexclude = 2 };
	struct stack_filter_opts exc_callers = { .pattern = "lock", .view = VIEW_CALLERS,
						 .exclude = ex, .nexclude = 2 };

	CHECK_FILTER(&any, "p;a;lock;b", "p;a;lock;b");
	CHECK_FILTER(&any, "p;a;b", "(dropped)");
	CHECK_FILTER(&leaf, "p;lock;b", "(dropped)");
	CHECK_FILTER(&leaf, "p;b;unlock", "p;b;unlock");
	CHECK_FILTER(&leaf, "lock", "lock");
	CHECK_FILTER(&root, "p;b", "p;b");
	CHECK_FILTER(&root, "q;p", "(dropped)");
	CHECK_FILTER(&focus, "p;a;lock;b;lock;c", "lock;b;lock;c");
	CHECK_FILTER(&callers, "p;a;lock;b;lock;c", "p;a;lock");
	CHECK_FILTER(&callers, "lock", "lock");
	CHECK_FILTER(&inv, "p;lock", "(dropped)");
	CHECK_FILTER(&inv, "p;a", "p;a");
	CHECK_FILTER(&exc, "p;[unknown];wrap;b", "p;b");
	CHECK_FILTER(&exc, "p;[unknown];wrapper;c", "(dropped)");
	CHECK_FILTER(&exc, "[unknown];wrap", "(dropped)");
	CHECK_FILTER(&exc_callers, "p;wrap;[unknown];lock;x", "p;lock");
	/* empty frames keep their place; a cut to nothing is no stack */
	CHECK_FILTER(&exc, ";[unknown];b", ";b");
	{
		struct stack_filter_opts empty = { .pattern = "^$", .view = VIEW_FOCUS };
		CHECK_FILTER(&empty, "a;", "[empty]");
		CHECK_FILTER(&empty, "a;;b", ";b");
	}
	{
		struct stack_filter_opts all = { .pattern = "excluded", .exclude = ex, .nexclude = 2 };
		CHECK_FILTER(&all, "[unknown];wrap", "[excluded]");
	}
	{
		/* frames removed from the end only: the stack's start, as it is */
		const char *kx[] = { "_\\[k\\]$" };
		struct stack_filter_opts k = { .pattern = "", .exclude = kx, .nexclude = 1 };
		const char *o;
		size_t n;
		struct stack_filter *f = stack_filter_new(&k, NULL);
		const char *st = "p;main;write;sys_write_[k];vfs_write_[k]";

		CHECK(stack_filter_apply(f, st, strlen(st), &o, &n) && o == st && n == 12);
		/* nothing of the last stack's copy stays */
		CHECK(stack_filter_apply(f, "p;a_[k];b", 9, &o, &n) && n == 3 && memcmp(o, "p;b", 3) == 0);
		CHECK(stack_filter_apply(f, "a_[k];b_[k]", 11, &o, &n) && n == 10 &&
		      memcmp(o, "[excluded]", 10) == 0);
		stack_filter_free(f);
		CHECK_FILTER(&k, "p;main;write;sys_write_[k];vfs_write_[k]", "p;main;write");
		CHECK_FILTER(&k, "p;a_[k]", "p");
		CHECK_FILTER(&k, "p;a_[k];b;c_[k]", "p;b");
		CHECK_FILTER(&k, "p;a_[k];b", "p;b");
		CHECK_FILTER(&k, "a_[k];b_[k]", "[excluded]");
		CHECK_FILTER(&k, ";a_[k]", "[excluded]");
		CHECK_FILTER(&k, " ;a_[k]", "[excluded]");
		CHECK_FILTER(&k, "p; ;a_[k]", "p; ");
		CHECK_FILTER(&k, "p;;a_[k]", "p;");
		CHECK_FILTER(&k, "p;a_[k];", "p;");
		CHECK_FILTER(&k, "p;a_[k];;b_[k]", "p;");
	}
}

static void test_hex(void)
{
	GString *buf = g_string_new(NULL);
	size_t n;
	const char *in = "a;[lib 0x7f12ab];0x;0xg;00x1F:0x0x12";
	const char *s = stack_strip_hex(in, strlen(in), buf, &n);

	CHECK_SLICE("strip", s, n, "a;[lib 0x...];0x;0xg;00x...:0x...x12");
	s = stack_strip_hex("a;0x", 4, buf, &n);
	CHECK_SLICE("strip none", s, n, "a;0x");
	g_string_free(buf, TRUE);
}

static void test_diff_math(void)
{
	fk_count one = FK_COUNT_ONE;

	/* int(c1 * total2 / total1), as Perl computes it */
	CHECK(fold_diff_scale(7 * one, 10 * one, 3 * one) == 2 * one);	/* 2.1 */
	CHECK(fold_diff_scale(7 * one, 10 * one, 10 * one) == 7 * one);
	CHECK(fold_diff_scale(7 * one, 0, 3 * one) == 7 * one);
	CHECK(fold_diff_scale(1 * one, 3 * one, 3000000000 * one) == 1000000000 * one);
	/* beyond 2^53 Perl divides exactly when it can (perl -e 'print
	 * int(9007199254740993*6/3)' gives 18014398509481986; doubles give
	 * ...988), and a product beyond 2^64 goes through doubles */
	CHECK(fold_diff_scale(9007199254740993 * one, 3 * one, 6 * one) ==
	      18014398509481986 * one);
	CHECK(fold_diff_scale(3000000000000 * one, 1000000000 * one, 3000000000000 * one) ==
	      9000000000000000 * one);
	CHECK(fold_diff_percent(1 * one, 3 * one) == one * 333333 / 10000);
	CHECK(fold_diff_percent(2 * one, 3 * one) == one * 666667 / 10000);
	CHECK(fold_diff_percent(0, 0) == 0);
}

/* fold_table_sorted() skips sorting input that is sorted already; both
 * paths must give bytewise order, shorter first on a common prefix. */
static void test_table_order(void)
{
	static const char *sorted[] = { "a", "a;b", "a;b;c", "a;c", "b", NULL };
	for (int late = 0; late < 2; late++) {
		struct fold_table *t = fold_table_new();
		struct fold_entry **v;
		size_t n;

		for (int i = 0; sorted[i]; i++)
			fold_table_add(t, sorted[i], strlen(sorted[i]), FK_COUNT_ONE);
		if (late)	/* one stack out of order, at the end */
			fold_table_add(t, "a;a", 3, FK_COUNT_ONE);
		v = fold_table_sorted(t, &n);
		CHECK(n == (size_t)(5 + late));
		for (size_t i = 1; i < n; i++) {
			size_t m = v[i - 1]->len < v[i]->len ? v[i - 1]->len : v[i]->len;
			int c = memcmp(v[i - 1]->stack, v[i]->stack, m);
			CHECK(c < 0 || (c == 0 && v[i - 1]->len < v[i]->len));
		}
		if (late)
			CHECK(strcmp(v[1]->stack, "a;a") == 0);
		g_free(v);
		fold_table_free(t);
	}
}

int main(void)
{
	test_split();
	test_matcher();
	test_matcher_random();
	test_fixed_random();
	test_kfold();
	test_kfold_kernel_random();
	test_filter();
	test_exclude_random();
	test_hex();
	test_diff_math();
	test_table_order();
	return CHECK_DONE();
}
